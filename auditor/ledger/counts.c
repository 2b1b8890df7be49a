/*
 * counts.c - the summary's counts (schema/0005_counts.sql: pairs, distinct
 * producers, open gaps, coverage gaps per topic; distinct producers in
 * all), kept by ledger_commit() in the batch's own transaction, so that
 * ledger_summary() reads them instead of counting a million rows.
 *
 * commit.c knows from sqlite3_changes() whether it inserted or deleted a
 * pair, open gap or coverage gap; it adds that to a per-part delta and
 * calls ledger_counts_pair() for a pair (whose producer may be new to the
 * topic, or leave it).  ledger_counts_flush() writes the deltas at the end
 * of the batch: one row per topic touched.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Runs st bound to the (topic?, producer) key and, when given, a step;
 * *changed receives sqlite3_changes(). */
static int ledger_counts_step(struct ledger *lg, enum ledger_stmt which,
                              const char *topic, const char *producer,
                              size_t producer_len, int64_t step, int *changed,
                              char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = lg->st[which];
        int i = 1, brc = SQLITE_OK;

        if (topic)
                brc |= sqlite3_bind_text(st, i++, topic, -1, SQLITE_STATIC);
        brc |= sqlite3_bind_text(st, i++, producer, (int)producer_len,
                                 SQLITE_STATIC);
        if (step)
                brc |= sqlite3_bind_int64(st, i, step);
        if (ledger_step_done(lg, st, brc, "cannot write ledger counts",
                             errstr, errstr_size))
                return -1;
        *changed = sqlite3_changes(lg->db);
        return 0;
}

/* One more (add) or one fewer pair of producer in topic (NULL: in any
 * topic, counts_producer): returns 1 when the producer's row appeared or
 * went, 0 when it only changed, -1 on error. */
static int ledger_counts_ref(struct ledger *lg, int add, const char *topic,
                             const char *producer, size_t producer_len,
                             char *errstr, size_t errstr_size)
{
        enum ledger_stmt ins = topic ? LEDGER_ST_CTP_ADD : LEDGER_ST_CP_ADD;
        enum ledger_stmt inc = topic ? LEDGER_ST_CTP_INC : LEDGER_ST_CP_INC;
        enum ledger_stmt del = topic ? LEDGER_ST_CTP_DEL : LEDGER_ST_CP_DEL;
        int changed;

        /* Adding, the producer is usually known already (it writes to
         * other partitions): the increment first, one statement. */
        if (add) {
                if (ledger_counts_step(lg, inc, topic, producer,
                                       producer_len, 1, &changed, errstr,
                                       errstr_size))
                        return -1;
                if (changed)
                        return 0;
        }
        if (ledger_counts_step(lg, add ? ins : del, topic, producer,
                               producer_len, 0, &changed, errstr,
                               errstr_size))
                return -1;
        if (changed)
                return 1;
        if (!add && ledger_counts_step(lg, inc, topic, producer,
                                       producer_len, -1, &changed, errstr,
                                       errstr_size))
                return -1;
        if (add || changed != 1) {
                snprintf(errstr, errstr_size,
                         "cannot write ledger counts: producer not counted "
                         "in %s",
                         topic ? topic : "any topic");
                return -1;
        }
        return 0;
}

int ledger_counts_pair(struct ledger *lg, const struct ledger_part *p,
                       const char *producer, size_t producer_len, int add,
                       struct ledger_counts_delta *d, int64_t *producers_all,
                       char *errstr, size_t errstr_size)
{
        int r;

        d->pairs += add ? 1 : -1;
        r = ledger_counts_ref(lg, add, p->topic, producer, producer_len,
                              errstr, errstr_size);
        if (r <= 0)
                return r;
        /* The producer's first pair in the topic, or its last. */
        d->producers += add ? 1 : -1;
        r = ledger_counts_ref(lg, add, NULL, producer, producer_len, errstr,
                              errstr_size);
        if (r > 0)
                *producers_all += add ? 1 : -1;
        return r < 0 ? -1 : 0;
}

int ledger_counts_flush(struct ledger *lg, const struct ledger_part *parts,
                        size_t nparts, const struct ledger_counts_delta *d,
                        int64_t producers_all, char *errstr,
                        size_t errstr_size)
{
        static const struct ledger_counts_delta zero;
        sqlite3_stmt *st = lg->st[LEDGER_ST_COUNTS_PUT];
        size_t i;
        int brc;

        for (i = 0; i < nparts; i++) {
                if (!memcmp(&d[i], &zero, sizeof(zero)))
                        continue;
                brc = sqlite3_bind_text(st, 1, parts[i].topic, -1,
                                        SQLITE_STATIC);
                brc |= sqlite3_bind_int64(st, 2, d[i].pairs);
                brc |= sqlite3_bind_int64(st, 3, d[i].producers);
                brc |= sqlite3_bind_int64(st, 4, d[i].open_gaps);
                brc |= sqlite3_bind_int64(st, 5, d[i].coverage_gaps);
                brc |= sqlite3_bind_int64(st, 6, d[i].coverage_records);
                if (ledger_step_done(lg, st, brc,
                                     "cannot write ledger counts", errstr,
                                     errstr_size))
                        return -1;
        }
        if (!producers_all)
                return 0;
        st = lg->st[LEDGER_ST_COUNTS_ALL];
        return ledger_step_done(lg, st,
                                sqlite3_bind_int64(st, 1, producers_all),
                                "cannot write ledger counts", errstr,
                                errstr_size);
}
