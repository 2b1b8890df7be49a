/*
 * query.c - the read model: the summary and the walks over anomalies,
 * pairs and partitions that reports and HTTP threads run, usually on
 * read-only handles (ledger_open_reader()).  Nothing here writes.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Adds the counters of c to sum, saturating. */
static void ledger_counts_add(struct dedup_counts *sum,
                              const struct dedup_counts *c)
{
        int k;

        sum->records = dedup_sat_add(sum->records, c->records);
        sum->untracked = dedup_sat_add(sum->untracked, c->untracked);
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                sum->anomalies[k] = dedup_sat_add(sum->anomalies[k],
                                                  c->anomalies[k]);
        sum->missing = dedup_sat_add(sum->missing, c->missing);
        sum->ids = dedup_sat_add(sum->ids, c->ids);
        sum->recovered = dedup_sat_add(sum->recovered, c->recovered);
        sum->unknown = dedup_sat_add(sum->unknown, c->unknown);
}

int ledger_summary(struct ledger *lg, const char *topic,
                   struct ledger_summary *out, char *errstr,
                   size_t errstr_size)
{
        static const char *const what = "cannot read ledger summary";
        struct dedup_counts sum;
        struct ledger_summary s;
        sqlite3_stmt *part_st = NULL, *agg_st = NULL;
        int src, k, rc = -1;

        memset(&s, 0, sizeof(s));
        memset(&sum, 0, sizeof(sum));
        /* Counters are summed here, saturating, as SQL SUM() would fail
         * on overflow.  The counts of pairs, producers and gaps are kept
         * by the commit path (schema/0005_counts.sql, counts.c; one row
         * per topic), so that the summary costs the same at a million
         * pairs as at one; the partitions and the id generations are a
         * few rows per topic, and so are the topic-scoped streams (one
         * per producer and epoch): their producers that have no pair
         * are counted here, each looked up by key. */
        if (ledger_prepare(lg,
                           "SELECT " LEDGER_COUNT_COLS " "
                           "FROM partitions WHERE ?1 IS NULL OR topic = ?1",
                           &part_st, errstr, errstr_size) ||
            ledger_prepare(
                lg,
                "SELECT CASE WHEN ?1 IS NULL "
                "       THEN COALESCE((SELECT producers FROM "
                "             counts_all), 0) + "
                "            (SELECT COUNT(DISTINCT t.producer) FROM "
                "             topic_streams t WHERE NOT EXISTS (SELECT "
                "             1 FROM counts_producer c WHERE "
                "             c.producer = t.producer)) "
                "       ELSE COALESCE((SELECT producers FROM "
                "             counts_topic WHERE topic = ?1), 0) + "
                "            (SELECT COUNT(DISTINCT t.producer) FROM "
                "             topic_streams t WHERE t.topic = ?1 AND "
                "             NOT EXISTS (SELECT 1 FROM "
                "             counts_topic_producer c WHERE c.topic = "
                "             ?1 AND c.producer = t.producer)) END,"
                "       (SELECT SUM(pairs) FROM counts_topic "
                "        WHERE ?1 IS NULL OR topic = ?1),"
                "       (SELECT SUM(open_gaps) FROM counts_topic "
                "        WHERE ?1 IS NULL OR topic = ?1),"
                "       (SELECT COALESCE(SUM(coverage_gaps), 0) "
                "        FROM counts_topic "
                "        WHERE ?1 IS NULL OR topic = ?1) + "
                /* the rows that opened the current incarnations */
                "       (SELECT COUNT(*) FROM anomalies a "
                "        WHERE (?1 IS NULL OR a.topic = ?1) AND "
                "        a.kind = 'coverage' AND a.reason IS NOT NULL "
                "        AND a.incarnation = (SELECT "
                "        COALESCE(MAX(i.incarnation), 0) FROM "
                "        incarnations i WHERE i.topic = a.topic)),"
                "       (SELECT SUM(coverage_records) FROM counts_topic "
                "        WHERE ?1 IS NULL OR topic = ?1),"
                "       (SELECT SUM(ids) FROM msgid_gens "
                "        WHERE ?1 IS NULL OR topic = ?1),"
                "       (SELECT COUNT(*) FROM msgid_gens "
                "        WHERE ?1 IS NULL OR topic = ?1),"
                "       (SELECT MIN(first_ms) FROM msgid_gens "
                "        WHERE ?1 IS NULL OR topic = ?1),"
                "       (SELECT COUNT(*) FROM truncations "
                "        WHERE ?1 IS NULL OR topic = ?1),"
                "       (SELECT COALESCE(SUM(records), 0) FROM "
                "        truncations WHERE ?1 IS NULL OR topic = ?1),"
                "       (SELECT COUNT(*) FROM topic_streams "
                "        WHERE ?1 IS NULL OR topic = ?1)",
                &agg_st, errstr, errstr_size))
                goto out;
        if (ledger_bind_topic(part_st, topic) != SQLITE_OK ||
            ledger_bind_topic(agg_st, topic) != SQLITE_OK) {
                ledger_err(lg, what, errstr, errstr_size);
                goto out;
        }
        /* Both queries see the same snapshot. */
        if (ledger_exec(lg, "BEGIN", what, errstr, errstr_size))
                goto out;
        while ((src = sqlite3_step(part_st)) == SQLITE_ROW) {
                struct dedup_counts c;
                ledger_counts_get(part_st, 0, &c);
                ledger_counts_add(&sum, &c);
                s.partitions++;
        }
        if (src != SQLITE_DONE || sqlite3_step(agg_st) != SQLITE_ROW) {
                ledger_err(lg, what, errstr, errstr_size);
                goto out;
        }
        s.producers = ledger_u64_get(agg_st, 0);
        s.pairs = ledger_u64_get(agg_st, 1);
        s.open_gaps = ledger_u64_get(agg_st, 2);
        s.coverage_gaps = ledger_u64_get(agg_st, 3);
        s.coverage_records = ledger_u64_get(agg_st, 4);
        s.window_ids = ledger_u64_get(agg_st, 5);
        s.window_gens = (uint32_t)ledger_u64_get(agg_st, 6);
        s.window_oldest_ms = ledger_col_opt(agg_st, 7);
        s.truncations = ledger_u64_get(agg_st, 8);
        s.truncated_records = ledger_u64_get(agg_st, 9);
        s.topic_streams = ledger_u64_get(agg_st, 10);
        s.records = sum.records;
        s.untracked = sum.untracked;
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                s.anomalies[k] = sum.anomalies[k];
        s.missing = sum.missing;
        s.recovered = sum.recovered;
        s.unknown = sum.unknown;
        s.ids_checked = sum.ids;
        sqlite3_reset(part_st);
        sqlite3_reset(agg_st);
        if (ledger_exec(lg, "COMMIT", what, errstr, errstr_size))
                goto out;
        *out = s;
        rc = 0;
out:
        sqlite3_finalize(part_st);
        sqlite3_finalize(agg_st);
        ledger_rollback(lg);
        return rc;
}

/*
 * Report queries pick their WHERE clause from fixed conditions, by which
 * filters are set, so that SQLite can use the index that fits (a
 * "?1 IS NULL OR topic = ?1" would keep it from doing so).  Values are
 * always bound by name, never written into the text.
 */
#define LEDGER_SQL_MAX 1024
#define LEDGER_CONDS_MAX 8

struct ledger_sql {
        char text[LEDGER_SQL_MAX];
        const char *conds[LEDGER_CONDS_MAX];
        size_t nconds;
};

static void ledger_sql_cond(struct ledger_sql *q, int when, const char *cond)
{
        if (when && q->nconds < LEDGER_CONDS_MAX)
                q->conds[q->nconds++] = cond;
}

/* Prepares head, the conditions joined by AND, then tail. */
static int ledger_sql_prepare(struct ledger *lg, struct ledger_sql *q,
                              const char *head, const char *tail,
                              sqlite3_stmt **st, char *errstr,
                              size_t errstr_size)
{
        size_t len, i;
        int n;

        n = snprintf(q->text, sizeof(q->text), "%s", head);
        for (i = 0; n >= 0 && (size_t)n < sizeof(q->text) && i < q->nconds;
             i++) {
                len = (size_t)n;
                n = snprintf(q->text + len, sizeof(q->text) - len, "%s%s",
                             i ? " AND " : " WHERE ", q->conds[i]);
                n = n < 0 ? n : n + (int)len;
        }
        if (n >= 0 && (size_t)n < sizeof(q->text)) {
                len = (size_t)n;
                n = snprintf(q->text + len, sizeof(q->text) - len, " %s",
                             tail);
                n = n < 0 ? n : n + (int)len;
        }
        if (n < 0 || (size_t)n >= sizeof(q->text)) {
                snprintf(errstr, errstr_size,
                         "cannot prepare ledger query: text too long");
                return -1;
        }
        return ledger_prepare(lg, q->text, st, errstr, errstr_size);
}

/* Binding by name: a parameter the text does not hold is skipped. */
static int ledger_bind_named_text(sqlite3_stmt *st, const char *name,
                                  const char *p, size_t len)
{
        int i = sqlite3_bind_parameter_index(st, name);

        if (!i || !p)
                return SQLITE_OK;
        if (len > INT32_MAX)
                return SQLITE_TOOBIG;
        return sqlite3_bind_text(st, i, p, (int)len, SQLITE_STATIC);
}

static int ledger_bind_named_int(sqlite3_stmt *st, const char *name, int64_t v)
{
        int i = sqlite3_bind_parameter_index(st, name);

        return i ? sqlite3_bind_int64(st, i, v) : SQLITE_OK;
}

static int ledger_bind_named_str(sqlite3_stmt *st, const char *name,
                                 const char *s)
{
        return ledger_bind_named_text(st, name, s, s ? strlen(s) : 0);
}

int ledger_anomalies_foreach(struct ledger *lg, const char *topic,
                             int64_t limit, ledger_anomaly_cb *cb,
                             void *opaque, char *errstr, size_t errstr_size)
{
        struct ledger_anomaly_filter f = {
            .topic = topic,
            .since_ms = -1,
            .limit = limit,
        };

        return ledger_anomalies_query(lg, &f, cb, opaque, errstr, errstr_size);
}

/* The caller's callback of a walk, and its argument. */
struct ledger_walk {
        union {
                ledger_anomaly_cb *anomaly;
                ledger_pair_cb *pair;
                ledger_partition_cb *partition;
        } cb;
        void *opaque;
};

/* Decodes the current row of st and passes it on: < 0 a bad row, 0 go on,
 * > 0 the caller's callback said stop. */
typedef int(ledger_row_fn)(sqlite3_stmt *st, const struct ledger_walk *w);

/* Steps the bound statement st (brc: the OR of its bind results) through
 * its rows; the caller finalizes st. */
static int ledger_walk(struct ledger *lg, sqlite3_stmt *st, int brc,
                       const char *what, ledger_row_fn *row,
                       const struct ledger_walk *w, char *errstr,
                       size_t errstr_size)
{
        int src = SQLITE_DONE, r = 0;

        if (brc != SQLITE_OK) {
                ledger_err(lg, what, errstr, errstr_size);
                return -1;
        }
        while (!r && (src = sqlite3_step(st)) == SQLITE_ROW)
                r = row(st, w);
        if (r < 0 || (!r && src != SQLITE_DONE)) {
                ledger_err(lg, what, errstr, errstr_size);
                return -1;
        }
        return 0;
}

static int ledger_anomaly_row(sqlite3_stmt *st, const struct ledger_walk *w)
{
        struct ledger_anomaly a;

        memset(&a, 0, sizeof(a));
        a.id = sqlite3_column_int64(st, 0);
        a.topic = (const char *)sqlite3_column_text(st, 1);
        a.partition = (int32_t)sqlite3_column_int64(st, 2);
        a.kind = (const char *)sqlite3_column_text(st, 3);
        a.producer = (const char *)sqlite3_column_text(st, 4);
        a.producer_len = (size_t)sqlite3_column_bytes(st, 4);
        a.epoch = (int32_t)ledger_col_opt(st, 5);
        a.seq_lo = ledger_col_opt(st, 6);
        a.seq_hi = ledger_col_opt(st, 7);
        a.offset_lo = sqlite3_column_int64(st, 8);
        a.offset_hi = sqlite3_column_int64(st, 9);
        a.first_offset = ledger_col_opt(st, 10);
        a.count = ledger_u64_get(st, 11);
        a.detected_ms = sqlite3_column_int64(st, 12);
        a.malformed_bits = (unsigned)sqlite3_column_int64(st, 13);
        a.first_partition = (int32_t)ledger_col_opt(st, 14);
        a.first_offset_hi = ledger_col_opt(st, 15);
        if (sqlite3_column_type(st, 16) != SQLITE_NULL) {
                a.msgid = sqlite3_column_blob(st, 16);
                a.msgid_stored = (size_t)sqlite3_column_bytes(st, 16);
                a.msgid = a.msgid ? a.msgid : "";
        }
        a.msgid_len = ledger_col_opt(st, 17);
        a.incarnation = sqlite3_column_int64(st, 18);
        a.reason = (const char *)sqlite3_column_text(st, 19);
        a.detail = (const char *)sqlite3_column_text(st, 20);
        if (!a.topic || !a.kind)
                return -1;
        return w->cb.anomaly(w->opaque, &a) ? 1 : 0;
}

int ledger_anomalies_query(struct ledger *lg,
                           const struct ledger_anomaly_filter *f,
                           ledger_anomaly_cb *cb, void *opaque, char *errstr,
                           size_t errstr_size)
{
        const struct ledger_walk w = {.cb.anomaly = cb, .opaque = opaque};
        struct ledger_sql q = {0};
        sqlite3_stmt *st = NULL;
        int brc, rc = -1;

        ledger_sql_cond(&q, f->topic != NULL, "topic = :topic");
        ledger_sql_cond(&q, f->kind != NULL, "kind = :kind");
        ledger_sql_cond(&q, f->producer != NULL, "producer = :producer");
        ledger_sql_cond(&q, f->since_ms >= 0, "detected_ms >= :since");
        ledger_sql_cond(&q, f->before_id > 0, "id < :before");
        if (ledger_sql_prepare(lg, &q,
                               "SELECT id, topic, partition, kind, producer, "
                               "epoch, seq_lo, seq_hi, offset_lo, offset_hi, "
                               "first_offset, count, detected_ms, "
                               "malformed_bits, first_partition, "
                               "first_offset_hi, msgid, msgid_len, "
                               "incarnation, reason, detail FROM anomalies",
                               "ORDER BY id DESC LIMIT :limit", &st, errstr,
                               errstr_size))
                goto out;
        brc = ledger_bind_named_str(st, ":topic", f->topic);
        brc |= ledger_bind_named_str(st, ":kind", f->kind);
        brc |= ledger_bind_named_text(st, ":producer", f->producer,
                                      f->producer_len);
        brc |= ledger_bind_named_int(st, ":since", f->since_ms);
        brc |= ledger_bind_named_int(st, ":before", f->before_id);
        brc |= ledger_bind_named_int(st, ":limit",
                                     f->limit < 0 ? -1 : f->limit);
        rc = ledger_walk(lg, st, brc, "cannot read ledger anomalies",
                         ledger_anomaly_row, &w, errstr, errstr_size);
out:
        sqlite3_finalize(st);
        return rc;
}

static int ledger_pair_row(sqlite3_stmt *st, const struct ledger_walk *w)
{
        struct ledger_pair pr;

        memset(&pr, 0, sizeof(pr));
        pr.topic = (const char *)sqlite3_column_text(st, 0);
        pr.partition = (int32_t)sqlite3_column_int64(st, 1);
        pr.producer = (const char *)sqlite3_column_text(st, 2);
        pr.producer_len = (size_t)sqlite3_column_bytes(st, 2);
        pr.epoch = (int32_t)sqlite3_column_int64(st, 3);
        pr.last_seq = sqlite3_column_int64(st, 4);
        pr.last_offset = sqlite3_column_int64(st, 5);
        pr.last_ms = sqlite3_column_int64(st, 6);
        pr.records = ledger_u64_get(st, 7);
        pr.open_gaps = ledger_u64_get(st, 8);
        if (!pr.topic || !pr.producer)
                return -1;
        return w->cb.pair(w->opaque, &pr) ? 1 : 0;
}

int ledger_pairs_foreach(struct ledger *lg, const struct ledger_pair_filter *f,
                         ledger_pair_cb *cb, void *opaque, char *errstr,
                         size_t errstr_size)
{
        const struct ledger_walk w = {.cb.pair = cb, .opaque = opaque};
        const struct ledger_pair_key *k = f->after;
        int after = k && k->topic && k->producer;
        struct ledger_sql q = {0};
        sqlite3_stmt *st = NULL;
        int brc, rc = -1;

        ledger_sql_cond(&q, f->topic != NULL, "p.topic = :topic");
        ledger_sql_cond(&q, f->producer != NULL, "p.producer = :producer");
        /* No index by producer (schema/0011_pairs_producer.sql): one
         * primary-key lookup per audited partition instead. */
        ledger_sql_cond(&q, f->producer != NULL,
                        "(p.topic, p.partition) IN "
                        "(SELECT topic, partition FROM partitions)");
        ledger_sql_cond(&q, after,
                        "(p.topic, p.partition, p.producer) > "
                        "(:after_topic, :after_partition, :after_producer)");
        if (ledger_sql_prepare(
                lg, &q,
                "SELECT p.topic, p.partition, p.producer, p.epoch, "
                "p.last_seq, p.last_offset, p.last_ms, p.records, "
                "(SELECT COUNT(*) FROM open_gaps g WHERE g.topic = "
                "p.topic AND g.partition = p.partition AND g.producer = "
                "p.producer) FROM pairs p",
                "ORDER BY p.topic, p.partition, p.producer LIMIT :limit", &st,
                errstr, errstr_size))
                goto out;
        brc = ledger_bind_named_str(st, ":topic", f->topic);
        brc |= ledger_bind_named_text(st, ":producer", f->producer,
                                      f->producer_len);
        if (after) {
                brc |= ledger_bind_named_str(st, ":after_topic", k->topic);
                brc |= ledger_bind_named_int(st, ":after_partition",
                                             k->partition);
                brc |= ledger_bind_named_text(st, ":after_producer",
                                              k->producer, k->producer_len);
        }
        brc |= ledger_bind_named_int(st, ":limit",
                                     f->limit < 0 ? -1 : f->limit);
        rc = ledger_walk(lg, st, brc, "cannot read ledger pairs",
                         ledger_pair_row, &w, errstr, errstr_size);
out:
        sqlite3_finalize(st);
        return rc;
}

static int ledger_partition_row(sqlite3_stmt *st, const struct ledger_walk *w)
{
        struct ledger_partition pt;

        memset(&pt, 0, sizeof(pt));
        pt.topic = (const char *)sqlite3_column_text(st, 0);
        pt.partition = (int32_t)sqlite3_column_int64(st, 1);
        pt.next_offset = sqlite3_column_int64(st, 2);
        pt.from_log_start = sqlite3_column_int64(st, 3) != 0;
        ledger_counts_get(st, 4, &pt.counts);
        pt.updated_ms = sqlite3_column_int64(st, 4 + LEDGER_COUNT_NCOLS);
        pt.open_gaps = ledger_u64_get(st, 5 + LEDGER_COUNT_NCOLS);
        if (!pt.topic)
                return -1;
        return w->cb.partition(w->opaque, &pt) ? 1 : 0;
}

int ledger_partitions_foreach(struct ledger *lg, const char *topic,
                              ledger_partition_cb *cb, void *opaque,
                              char *errstr, size_t errstr_size)
{
        const struct ledger_walk w = {.cb.partition = cb, .opaque = opaque};
        struct ledger_sql q = {0};
        sqlite3_stmt *st = NULL;
        int rc = -1;

        ledger_sql_cond(&q, topic != NULL, "p.topic = :topic");
        /* The counter columns follow ledger_counts_get(). */
        if (ledger_sql_prepare(
                lg, &q,
                "SELECT p.topic, p.partition, p.next_offset, "
                "p.from_log_start, " LEDGER_COUNT_COLS ", "
                "p.updated_ms, (SELECT COUNT(*) FROM "
                "open_gaps g WHERE g.topic = p.topic AND g.partition = "
                "p.partition) FROM partitions p",
                "ORDER BY p.topic, p.partition", &st, errstr, errstr_size))
                goto out;
        rc = ledger_walk(lg, st, ledger_bind_named_str(st, ":topic", topic),
                         "cannot read ledger partitions", ledger_partition_row,
                         &w, errstr, errstr_size);
out:
        sqlite3_finalize(st);
        return rc;
}
