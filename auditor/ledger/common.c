/*
 * common.c - the helpers every file of the ledger uses: error text,
 * running statements, the counter columns and the check of the
 * caller's parts.
 */
#include <stdio.h>

#include "internal.h"

/* "what: sqlite's message" */
void ledger_err(struct ledger *lg, const char *what, char *errstr,
                size_t errstr_size)
{
        snprintf(errstr, errstr_size, "%s: %s", what, sqlite3_errmsg(lg->db));
}

int64_t ledger_u64_put(uint64_t v)
{
        return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

uint64_t ledger_u64_get(sqlite3_stmt *st, int col)
{
        int64_t v = sqlite3_column_int64(st, col);

        return v < 0 ? 0 : (uint64_t)v;
}

int64_t ledger_col_opt(sqlite3_stmt *st, int col)
{
        if (sqlite3_column_type(st, col) == SQLITE_NULL)
                return -1;
        return sqlite3_column_int64(st, col);
}

int ledger_bind_topic(sqlite3_stmt *st, const char *topic)
{
        return topic ? sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC)
                     : sqlite3_bind_null(st, 1);
}

/* Reads the counter columns records, untracked, one per anomaly kind (in
 * enum dedup_kind order) and missing, starting at column col. */
void ledger_counts_get(sqlite3_stmt *st, int col, struct dedup_counts *c)
{
        int k;

        c->records = ledger_u64_get(st, col);
        c->untracked = ledger_u64_get(st, col + 1);
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                c->anomalies[k] = ledger_u64_get(st, col + 2 + k);
        c->missing = ledger_u64_get(st, col + 2 + DEDUP_KIND__ANOMALY_CNT);
        c->ids = ledger_u64_get(st, col + 3 + DEDUP_KIND__ANOMALY_CNT);
        c->recovered = ledger_u64_get(st, col + 4 + DEDUP_KIND__ANOMALY_CNT);
        c->unknown = ledger_u64_get(st, col + 5 + DEDUP_KIND__ANOMALY_CNT);
}

/* Binds ?1 topic, ?2 partition and, when producer is non-NULL,
 * ?3 producer (bytes, not necessarily UTF-8). */
int ledger_bind_key(sqlite3_stmt *st, const struct ledger_part *p,
                    const char *producer, size_t producer_len)
{
        int rc;

        rc = sqlite3_bind_text(st, 1, p->topic, -1, SQLITE_STATIC);
        rc |= sqlite3_bind_int64(st, 2, p->partition);
        if (producer)
                rc |= sqlite3_bind_text(st, 3, producer, (int)producer_len,
                                        SQLITE_STATIC);
        return rc;
}

/*
 * Runs a bound write statement to completion and resets it.  brc is the
 * OR of the bind results (SQLITE_OK is 0).
 */
int ledger_step_done(struct ledger *lg, sqlite3_stmt *st, int brc,
                     const char *what, char *errstr, size_t errstr_size)
{
        int rc = -1;

        if (brc != SQLITE_OK) {
                ledger_err(lg, what, errstr, errstr_size);
                goto out;
        }
        if (sqlite3_step(st) != SQLITE_DONE) {
                ledger_err(lg, what, errstr, errstr_size);
                goto out;
        }
        rc = 0;
out:
        sqlite3_reset(st);
        return rc;
}

/* Runs SQL without results (possibly several statements). */
int ledger_exec(struct ledger *lg, const char *sql, const char *what,
                char *errstr, size_t errstr_size)
{
        if (sqlite3_exec(lg->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
                ledger_err(lg, what, errstr, errstr_size);
                return -1;
        }
        return 0;
}

int ledger_prepare(struct ledger *lg, const char *sql, sqlite3_stmt **st,
                   char *errstr, size_t errstr_size)
{
        if (sqlite3_prepare_v2(lg->db, sql, -1, st, NULL) != SQLITE_OK) {
                ledger_err(lg, "cannot prepare ledger query", errstr,
                           errstr_size);
                return -1;
        }
        return 0;
}

/* Prepares sql and steps to its first row; the caller finalizes *st. */
int ledger_query_row(struct ledger *lg, const char *sql, const char *what,
                     sqlite3_stmt **st, char *errstr, size_t errstr_size)
{
        if (sqlite3_prepare_v2(lg->db, sql, -1, st, NULL) != SQLITE_OK ||
            sqlite3_step(*st) != SQLITE_ROW) {
                ledger_err(lg, what, errstr, errstr_size);
                return -1;
        }
        return 0;
}

/* parts[i].part must be i: events and pairs name parts by that index. */
int ledger_parts_check(const struct ledger_part *parts, size_t nparts,
                       char *errstr, size_t errstr_size)
{
        size_t i;

        for (i = 0; i < nparts; i++) {
                if (parts[i].part != i || !parts[i].topic) {
                        snprintf(errstr, errstr_size,
                                 "bad ledger part %zu: part %u, topic %s", i,
                                 parts[i].part,
                                 parts[i].topic ? parts[i].topic : "(null)");
                        return -1;
                }
        }
        return 0;
}
