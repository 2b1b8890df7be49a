/*
 * incarnate.c - a topic deleted and recreated, or a log truncated: the
 * ledger's state of the topic is retired in one transaction and a new
 * incarnation begins (schema/0004_incarnations.sql).  Evidence stays:
 * anomalies rows keep their incarnation, the partition rows are copied to
 * retired_partitions; state goes: pairs, open gaps, coverage gaps, the
 * topic's id window and its outstanding flow entries (ledger_flow_
 * incarnate() in flow.c), so nothing of the old log is applied to the new
 * one.  The topic's id (schema/0017_topic_id.sql) is kept per
 * incarnation: ledger_topic_id_get() and ledger_topic_id_put().
 */
#include <stdio.h>
#include <string.h>

#include "../../base/clock.h"
#include "../../base/log.h"
#include "internal.h"

/* Statements run with ?1 = topic, ?2 = the new incarnation, ?3 = now. */
static const char *const ledger_retire_sql[] = {
    "INSERT INTO incarnations (topic, incarnation, started_ms, reason) "
    "VALUES (?1, ?2, ?3, ?4)",
    "INSERT INTO retired_partitions (topic, incarnation, partition, "
    "next_offset, from_log_start, " LEDGER_COUNT_COLS ", fp_offset, "
    "updated_ms, retired_ms) SELECT topic, ?2 - 1, partition, "
    "next_offset, from_log_start, " LEDGER_COUNT_COLS ", fp_offset, "
    "updated_ms, ?3 FROM partitions WHERE topic = ?1",
    "DELETE FROM partitions WHERE topic = ?1",
    "DELETE FROM pairs WHERE topic = ?1",
    "DELETE FROM open_gaps WHERE topic = ?1",
    "DELETE FROM confirmed_gaps WHERE topic = ?1",
    "DELETE FROM coverage_gaps WHERE topic = ?1",
    /* What a truncation of the old log would have taken back
         * (truncate.c); its truncations rows stay as evidence. */
    "DELETE FROM audited_runs WHERE topic = ?1",
    "DELETE FROM audited_batches WHERE topic = ?1",
    "DELETE FROM topic_streams WHERE topic = ?1",
    /* The summary's kept counts (schema/0005_counts.sql, counts.c)
         * lose the topic's pairs and gaps: a producer of this topic only
         * leaves counts_producer, the others count one topic less. */
    "DELETE FROM counts_producer WHERE topics = 1 AND producer IN "
    "(SELECT producer FROM counts_topic_producer WHERE topic = ?1)",
    "UPDATE counts_producer SET topics = topics - 1 WHERE producer IN "
    "(SELECT producer FROM counts_topic_producer WHERE topic = ?1)",
    "DELETE FROM counts_topic_producer WHERE topic = ?1",
    "UPDATE counts_all SET producers = (SELECT COUNT(*) FROM "
    "counts_producer) WHERE one = 1 AND ?1 IS NOT NULL",
    "DELETE FROM counts_topic WHERE topic = ?1",
};

#define LEDGER_RETIRE_CNT                                                     \
        (sizeof(ledger_retire_sql) / sizeof(*ledger_retire_sql))

/* The coverage row that opens the incarnation, one per partition that
 * showed it: offsets [offset_lo, offset_hi] were audited in the last
 * incarnation and now hold other records, or none. */
static const char ledger_reborn_sql[] =
    "INSERT INTO anomalies (topic, partition, kind, offset_lo, offset_hi, "
    "first_offset, count, detected_ms, incarnation, reason, detail) "
    "VALUES (?1, ?2, 'coverage', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";

static int ledger_incarnation_next(struct ledger *lg, const char *topic,
                                   int64_t *out, char *errstr,
                                   size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        int rc = -1;

        if (ledger_prepare(lg,
                           "SELECT COALESCE(MAX(incarnation), 0) + 1 FROM "
                           "incarnations WHERE topic = ?1",
                           &st, errstr, errstr_size))
                return -1;
        if (sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC) != SQLITE_OK ||
            sqlite3_step(st) != SQLITE_ROW) {
                ledger_err(lg, "cannot read ledger incarnations", errstr,
                           errstr_size);
                goto out;
        }
        *out = sqlite3_column_int64(st, 0);
        rc = 0;
out:
        sqlite3_finalize(st);
        return rc;
}

static int ledger_retire(struct ledger *lg, const char *topic, int64_t inc,
                         const char *reason, int64_t now_ms, char *errstr,
                         size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        size_t i;
        int brc;

        for (i = 0; i < LEDGER_RETIRE_CNT; i++) {
                if (ledger_prepare(lg, ledger_retire_sql[i], &st, errstr,
                                   errstr_size))
                        return -1;
                brc = sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC);
                if (sqlite3_bind_parameter_count(st) >= 2)
                        brc |= sqlite3_bind_int64(st, 2, inc);
                if (sqlite3_bind_parameter_count(st) >= 3)
                        brc |= sqlite3_bind_int64(st, 3, now_ms);
                if (sqlite3_bind_parameter_count(st) >= 4)
                        brc |= sqlite3_bind_text(st, 4, reason, -1,
                                                 SQLITE_STATIC);
                if (ledger_step_done(lg, st, brc,
                                     "cannot retire the ledger's state of "
                                     "a topic",
                                     errstr, errstr_size)) {
                        sqlite3_finalize(st);
                        return -1;
                }
                sqlite3_finalize(st);
                st = NULL;
        }
        return 0;
}

int ledger_topic_incarnate(struct ledger *lg, const char *topic,
                           const struct ledger_incarnation_part *why, size_t n,
                           int64_t *incarnation, char *errstr,
                           size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        int64_t inc = 0, now_ms = clock_wall_ms();
        const char *reason = "truncated";
        struct ledger_flow_reborn fr = {0, 0, 0};
        size_t i;
        int brc, rc = -1;

        if (lg->readonly) {
                snprintf(errstr, errstr_size,
                         "cannot start an incarnation on a read-only ledger "
                         "handle");
                return -1;
        }
        for (i = 0; i < n; i++)
                if (why[i].reason && !strcmp(why[i].reason, "recreated"))
                        reason = "recreated";
        if (ledger_txn(lg, LEDGER_ST_BEGIN, "cannot begin ledger transaction",
                       errstr, errstr_size))
                return -1;
        if (ledger_incarnation_next(lg, topic, &inc, errstr, errstr_size) ||
            /* The id window's generations: rows, ids and files. */
            ledger_topic_gens_del(lg, topic, NULL, errstr, errstr_size) ||
            ledger_retire(lg, topic, inc, reason, now_ms, errstr,
                          errstr_size) ||
            ledger_flow_incarnate(lg, topic, &fr, errstr, errstr_size) ||
            ledger_prepare(lg, ledger_reborn_sql, &st, errstr, errstr_size))
                goto out;
        for (i = 0; i < n; i++) {
                const struct ledger_incarnation_part *w = &why[i];
                int64_t hi = w->old_next - 1;
                uint64_t cnt = hi >= w->log_start
                                   ? (uint64_t)(hi - w->log_start) + 1
                                   : 0;
                brc = sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC);
                brc |= sqlite3_bind_int(st, 2, w->partition);
                brc |= sqlite3_bind_int64(st, 3, w->log_start);
                brc |= sqlite3_bind_int64(st, 4, hi);
                brc |= w->fp_offset >= 0
                           ? sqlite3_bind_int64(st, 5, w->fp_offset)
                           : sqlite3_bind_null(st, 5);
                brc |= sqlite3_bind_int64(st, 6,
                                          cnt > INT64_MAX ? INT64_MAX
                                                          : (int64_t)cnt);
                brc |= sqlite3_bind_int64(st, 7, now_ms);
                brc |= sqlite3_bind_int64(st, 8, inc);
                brc |= sqlite3_bind_text(st, 9,
                                         w->reason ? w->reason : "truncated",
                                         -1, SQLITE_STATIC);
                brc |= w->detail ? sqlite3_bind_text(st, 10, w->detail, -1,
                                                     SQLITE_STATIC)
                                 : sqlite3_bind_null(st, 10);
                if (ledger_step_done(lg, st, brc,
                                     "cannot write ledger coverage event",
                                     errstr, errstr_size))
                        goto out;
        }
        if (ledger_txn(lg, LEDGER_ST_COMMIT,
                       "cannot commit ledger transaction", errstr,
                       errstr_size))
                goto out;
        if (incarnation)
                *incarnation = inc;
        if (fr.unjudged || fr.judged || fr.prior)
                log_warn("flow: topic '%s' starts incarnation %lld: %llu "
                         "outstanding flow id(s) of the old log dropped "
                         "unjudged (its coverage gap), %llu judged one(s) "
                         "retired with their verdict, %llu delivered source "
                         "record(s) keep it with their sink copies "
                         "forgotten",
                         topic, (long long)inc,
                         (unsigned long long)fr.unjudged,
                         (unsigned long long)fr.judged,
                         (unsigned long long)fr.prior);
        rc = 0;
out:
        sqlite3_finalize(st);
        if (rc)
                ledger_rollback(lg);
        return rc;
}

int ledger_topic_incarnation(struct ledger *lg, const char *topic,
                             int64_t *incarnation, char *errstr,
                             size_t errstr_size)
{
        int64_t next;

        if (ledger_incarnation_next(lg, topic, &next, errstr, errstr_size))
                return -1;
        *incarnation = next - 1;
        return 0;
}

/* The current incarnation's row; ?1 = topic. */
#define LEDGER_TOPIC_INC                                                      \
        "(SELECT COALESCE(MAX(incarnation), 0) FROM incarnations WHERE "      \
        "topic = ?1)"

int ledger_topic_id_get(struct ledger *lg, const char *topic, char *out,
                        size_t out_size, char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        const unsigned char *id;
        int rc = -1, step;

        if (ledger_prepare(lg,
                           "SELECT topic_id FROM topic_ids WHERE topic = ?1 "
                           "AND incarnation = " LEDGER_TOPIC_INC,
                           &st, errstr, errstr_size))
                return -1;
        if (sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC) != SQLITE_OK) {
                ledger_err(lg, "cannot read the topic's id", errstr,
                           errstr_size);
                goto out;
        }
        step = sqlite3_step(st);
        if (step == SQLITE_DONE) {
                rc = 0;
                goto out;
        }
        id = step == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
        if (!id) {
                ledger_err(lg, "cannot read the topic's id", errstr,
                           errstr_size);
                goto out;
        }
        if (strlen((const char *)id) >= out_size) {
                snprintf(errstr, errstr_size,
                         "the ledger's id of topic '%s' is %zu bytes, more "
                         "than %zu",
                         topic, strlen((const char *)id), out_size - 1);
                goto out;
        }
        snprintf(out, out_size, "%s", (const char *)id);
        rc = 1;
out:
        sqlite3_finalize(st);
        return rc;
}

int ledger_topic_id_put(struct ledger *lg, const char *topic, const char *id,
                        int64_t now_ms, char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        int brc, rc;

        if (lg->readonly) {
                snprintf(errstr, errstr_size,
                         "cannot store a topic id on a read-only ledger "
                         "handle");
                return -1;
        }
        if (strlen(id) >= LEDGER_TOPIC_ID_MAX) {
                snprintf(errstr, errstr_size,
                         "topic id of '%s' too long (%zu bytes)", topic,
                         strlen(id));
                return -1;
        }
        if (ledger_prepare(lg,
                           "INSERT INTO topic_ids (topic, incarnation, "
                           "topic_id, seen_ms) VALUES (?1, " LEDGER_TOPIC_INC
                           ", ?2, ?3) ON CONFLICT (topic, incarnation) DO "
                           "UPDATE SET topic_id = excluded.topic_id, "
                           "seen_ms = excluded.seen_ms WHERE topic_id != "
                           "excluded.topic_id",
                           &st, errstr, errstr_size))
                return -1;
        brc = sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC);
        brc |= sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
        brc |= sqlite3_bind_int64(st, 3, now_ms);
        rc = ledger_step_done(lg, st, brc, "cannot store the topic's id",
                              errstr, errstr_size);
        sqlite3_finalize(st);
        return rc;
}
