/*
 * ledger_fixture.h - what the ledger tests (test_ledger*.c, test_counts.c)
 * share: a temporary directory per test, text dumps of the tracker and of
 * the ledger's tables, records and parts, and the anomaly collector.
 *
 * Each test binary is one translation unit, so the helpers are static
 * (inline, so that a binary using only some of them compiles warning-free).
 */
#ifndef EOSAUDIT_TESTS_LEDGER_FIXTURE_H
#define EOSAUDIT_TESTS_LEDGER_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "../auditor/ledger/ledger.h"

extern const size_t ledger_migrations_cnt;

/* ------------------------------------------------------------------ */
/* Fixture: a temporary directory holding a.db and b.db                */
/* ------------------------------------------------------------------ */

struct fx {
        char dir[64];
        char a[128]; /* ledger paths */
        char b[128];
};

static inline int fx_setup(void **state)
{
        struct fx *fx = calloc(1, sizeof(*fx));

        if (!fx)
                return -1;
        snprintf(fx->dir, sizeof(fx->dir), "/tmp/eosaudit-ledger-XXXXXX");
        if (!mkdtemp(fx->dir)) {
                free(fx);
                return -1;
        }
        snprintf(fx->a, sizeof(fx->a), "%s/a.db", fx->dir);
        snprintf(fx->b, sizeof(fx->b), "%s/b.db", fx->dir);
        *state = fx;
        return 0;
}

static inline int fx_teardown(void **state)
{
        struct fx *fx = *state;

        ledger_remove(fx->a);
        ledger_remove(fx->b);
        rmdir(fx->dir);
        free(fx);
        return 0;
}

/* ------------------------------------------------------------------ */
/* Text dumps                                                          */
/* ------------------------------------------------------------------ */

struct sb {
        char *s;
        size_t len, cap;
};

__attribute__((format(printf, 2, 3))) static void
sb_printf(struct sb *b, const char *fmt, ...)
{
        va_list ap;
        int n;

        for (;;) {
                va_start(ap, fmt);
                n = vsnprintf(b->s ? b->s + b->len : NULL,
                              b->s ? b->cap - b->len : 0, fmt, ap);
                va_end(ap);
                assert_true(n >= 0);
                if (b->s && (size_t)n < b->cap - b->len)
                        break;
                b->cap = (b->cap + (size_t)n + 1) * 2;
                b->s = realloc(b->s, b->cap);
                assert_non_null(b->s);
        }
        b->len += (size_t)n;
}

static inline void sb_hex(struct sb *b, const char *p, size_t len)
{
        size_t i;

        for (i = 0; i < len; i++)
                sb_printf(b, "%02x", (unsigned char)p[i]);
}

static inline int str_cmp(const void *x, const void *y)
{
        return strcmp(*(char *const *)x, *(char *const *)y);
}

struct lines {
        char **v;
        size_t n;
};

static inline int dump_pair_cb(void *opaque, const struct dedup_pair_view *pv)
{
        struct lines *ls = opaque;
        struct sb b = {0};
        uint32_t i;

        sb_printf(&b, "pair part=%u producer=", pv->part);
        sb_hex(&b, pv->producer, pv->producer_len);
        sb_printf(&b,
                  " epoch=%d last_seq=%lld last_offset=%lld last_ms=%lld "
                  "records=%llu rebaseline=%d pid=%lld retired=%lld,%lld "
                  "session_ms=%lld",
                  (int)pv->epoch, (long long)pv->last_seq,
                  (long long)pv->last_offset, (long long)pv->last_ms,
                  (unsigned long long)pv->records, pv->rebaseline,
                  (long long)pv->pid, (long long)pv->retired_pids[0],
                  (long long)pv->retired_pids[1], (long long)pv->session_ms);
        for (i = 0; i < DEDUP_HISTORY_RUNS; i++)
                sb_printf(&b, " run(%lld,%lld,%u)", (long long)pv->runs[i].seq,
                          (long long)pv->runs[i].offset, pv->runs[i].len);
        for (i = 0; i < pv->ngaps; i++) {
                const struct dedup_gap *g = &pv->gaps[i];
                sb_printf(&b, " gap(e%d,%lld..%lld,@%lld,%lldms,#%llu)",
                          (int)g->epoch, (long long)g->lo, (long long)g->hi,
                          (long long)g->opened_offset, (long long)g->opened_ms,
                          (unsigned long long)g->opened_rec);
        }
        for (i = 0; i < pv->ndone; i++) {
                const struct dedup_gap *g = &pv->done_gaps[i];
                sb_printf(&b, " done(e%d,%lld..%lld,@%lld,%lldms)",
                          (int)g->epoch, (long long)g->lo, (long long)g->hi,
                          (long long)g->opened_offset,
                          (long long)g->opened_ms);
        }
        ls->v = realloc(ls->v, (ls->n + 1) * sizeof(*ls->v));
        assert_non_null(ls->v);
        ls->v[ls->n++] = b.s;
        return 0;
}

/* Everything the tracker and the parts hold, pairs sorted. */
static inline char *tracker_dump(struct dedup_tracker *tr,
                                 const struct ledger_part *parts,
                                 size_t nparts)
{
        struct lines ls = {0};
        struct sb b = {0};
        size_t i;
        int k;

        for (i = 0; i < nparts; i++) {
                const struct dedup_counts *c =
                    dedup_tracker_part_counts(tr, (uint32_t)i);
                assert_non_null(c);
                sb_printf(&b,
                          "part %zu next_offset=%lld from_log_start=%d/%d "
                          "records=%llu untracked=%llu missing=%llu "
                          "recovered=%llu",
                          i, (long long)parts[i].next_offset,
                          parts[i].from_log_start,
                          dedup_tracker_part_from_log_start(tr, (uint32_t)i),
                          (unsigned long long)c->records,
                          (unsigned long long)c->untracked,
                          (unsigned long long)c->missing,
                          (unsigned long long)c->recovered);
                for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                        sb_printf(&b, " %s=%llu",
                                  dedup_kind_name((enum dedup_kind)k),
                                  (unsigned long long)c->anomalies[k]);
                sb_printf(&b, "\n");
        }
        assert_int_equal(dedup_tracker_foreach(tr, dump_pair_cb, &ls), 0);
        if (ls.n)
                qsort(ls.v, ls.n, sizeof(*ls.v), str_cmp);
        for (i = 0; i < ls.n; i++) {
                sb_printf(&b, "%s\n", ls.v[i]);
                free(ls.v[i]);
        }
        free(ls.v);
        sb_printf(&b, "pairs=%zu open_gaps=%zu\n", dedup_tracker_pairs(tr),
                  dedup_tracker_open_gaps(tr));
        return b.s;
}

/*
 * Every table of the ledger at path, through a connection of its own.
 * Wall-clock columns (updated_ms, coverage detected_ms) are left out.
 */
static inline char *db_dump(const char *path)
{
        static const char *const queries[] = {
            "SELECT topic, partition, next_offset, from_log_start, "
            "records, untracked, duplicate, gap, out_of_order, fenced, "
            "malformed, missing, recovered FROM partitions "
            "ORDER BY 1, 2",
            "SELECT topic, partition, hex(producer), ord, epoch, lo, hi, "
            "opened_offset, opened_ms FROM confirmed_gaps "
            "ORDER BY topic, partition, producer, ord",
            "SELECT topic, partition, hex(producer), epoch, last_seq, "
            "last_offset, last_ms, records, rebaseline, run0_seq, "
            "run0_offset, run0_len, run1_seq, run1_offset, run1_len, pid, "
            "retired_pid0, retired_pid1, session_ms FROM pairs ORDER BY topic, partition, producer",
            "SELECT topic, partition, hex(producer), ord, epoch, lo, hi, "
            "opened_offset, opened_ms, opened_rec FROM open_gaps "
            "ORDER BY topic, partition, producer, ord",
            "SELECT id, topic, partition, kind, hex(producer), epoch, "
            "seq_lo, seq_hi, offset_lo, offset_hi, first_offset, count, "
            "CASE kind WHEN 'coverage' THEN 0 ELSE detected_ms END, "
            "malformed_bits FROM anomalies ORDER BY id",
            "SELECT topic, partition, offset_lo, offset_hi "
            "FROM coverage_gaps ORDER BY 1, 2, 3",
            "SELECT name, seq FROM sqlite_sequence ORDER BY name",
        };
        struct sb b = {0};
        sqlite3 *db = NULL;
        sqlite3_stmt *st;
        size_t q;
        int i, rc;

        assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY,
                                         NULL),
                         SQLITE_OK);
        for (q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
                sb_printf(&b, "-- %zu\n", q);
                if (sqlite3_prepare_v2(db, queries[q], -1, &st, NULL) !=
                    SQLITE_OK) {
                        /* sqlite_sequence appears with the first anomaly */
                        sb_printf(&b, "(%s)\n", sqlite3_errmsg(db));
                        continue;
                }
                while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                        for (i = 0; i < sqlite3_column_count(st); i++) {
                                const unsigned char *t =
                                    sqlite3_column_text(st, i);
                                sb_printf(&b, "%s%s", i ? "|" : "",
                                          t ? (const char *)t : "NULL");
                        }
                        sb_printf(&b, "\n");
                }
                assert_int_equal(rc, SQLITE_DONE);
                sqlite3_finalize(st);
        }
        sqlite3_close(db);
        return b.s;
}

/* Compares a dump with want, then frees the dump. */
static inline void assert_dump(char *got, const char *want)
{
        assert_string_equal(got, want);
        free(got);
}

/* Runs SQL on the ledger through a connection of its own. */
static inline void db_exec(const char *path, const char *sql)
{
        sqlite3 *db = NULL;

        assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE,
                                         NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_busy_timeout(db, 5000), SQLITE_OK);
        if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
                fail_msg("%s: %s", sql, sqlite3_errmsg(db));
        sqlite3_close(db);
}

static inline int64_t db_int(const char *path, const char *sql)
{
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        int64_t v;

        assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY,
                                         NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        sqlite3_close(db);
        return v;
}

/* ------------------------------------------------------------------ */
/* Records and parts                                                   */
/* ------------------------------------------------------------------ */

/* Producer names that must survive the round trip byte for byte. */
#define P1 "p1"
#define PQ "it's \"q\" \\ ;--"
#define PBIN "\xff\xfe\x80 bin\x01\xc3("

#define NPARTS 3

struct rec {
        int batch;
        uint32_t part;
        int64_t offset;
        const char *producer; /* NULL: no eos.producer */
        int32_t epoch;        /* -1: no eos.epoch */
        int64_t seq;          /* -1: no eos.seq */
};

static inline void parts_init(struct ledger_part *parts)
{
        static const char *const topics[NPARTS] = {"orders", "orders",
                                                   "pay\"ments"};
        static const int32_t partitions[NPARTS] = {0, 1, 0};
        uint32_t i;

        for (i = 0; i < NPARTS; i++) {
                memset(&parts[i], 0, sizeof(parts[i]));
                parts[i].topic = topics[i];
                parts[i].partition = partitions[i];
                parts[i].part = i;
                parts[i].next_offset = -1;
                parts[i].from_log_start = i == 0; /* only part 0 */
                parts[i].coverage_lo = parts[i].coverage_hi = -1;
        }
}

static inline void conf_init(struct dedup_config *conf)
{
        dedup_config_defaults(conf);
        conf->gap_grace_records = 0;
        conf->gap_grace_ms = 1500;
        conf->idle_ttl_ms = 0;
}

static inline struct dedup_tracker *
tracker_new(const struct dedup_config *conf, const struct ledger_part *parts)
{
        struct dedup_tracker *tr = dedup_tracker_new(conf);
        uint32_t i;

        assert_non_null(tr);
        for (i = 0; i < NPARTS; i++)
                assert_int_equal(
                    dedup_tracker_part_add(tr, i, parts[i].from_log_start), 0);
        return tr;
}

static inline enum dedup_verdict observe(struct dedup_tracker *tr,
                                         const struct rec *r)
{
        struct dedup_hdrs h;
        char num[32];
        int n;

        dedup_hdrs_init(&h);
        if (r->producer)
                dedup_hdrs_feed(&h, "eos.producer", 12, r->producer,
                                strlen(r->producer));
        if (r->epoch >= 0) {
                n = snprintf(num, sizeof(num), "%d", (int)r->epoch);
                dedup_hdrs_feed(&h, "eos.epoch", 9, num, (size_t)n);
        }
        if (r->seq >= 0) {
                n = snprintf(num, sizeof(num), "%lld", (long long)r->seq);
                dedup_hdrs_feed(&h, "eos.seq", 7, num, (size_t)n);
        }
        return dedup_tracker_observe(tr, r->part, r->offset, &h);
}

/*
 * Audits the records of batch that lie at or past each part's next
 * offset, as the consumer would after a restart, then ticks.
 */
static inline void audit(struct dedup_tracker *tr, struct ledger_part *parts,
                         const struct rec *log, size_t nlog, int batch,
                         int64_t now_ms)
{
        size_t i;

        dedup_tracker_begin(tr, now_ms);
        for (i = 0; i < nlog; i++) {
                const struct rec *r = &log[i];
                struct ledger_part *p = &parts[r->part];
                if (r->batch != batch || r->offset < p->next_offset)
                        continue;
                if (p->next_offset >= 0 && r->offset > p->next_offset) {
                        /* Retention deleted what lies in between. */
                        p->coverage_lo = p->next_offset;
                        p->coverage_hi = r->offset - 1;
                        dedup_tracker_part_rebaseline(tr, r->part);
                }
                observe(tr, r);
                p->next_offset = r->offset + 1;
                p->dirty = 1;
        }
        dedup_tracker_tick(tr);
}

static inline void commit_ok(struct ledger *lg, struct dedup_tracker *tr,
                             struct ledger_part *parts)
{
        char err[256];
        int64_t us = -1;

        if (ledger_commit(lg, tr, parts, NPARTS, &us, err, sizeof(err)))
                fail_msg("ledger_commit: %s", err);
        assert_true(us >= 0);
}

static inline struct ledger *open_ok(const char *path)
{
        struct ledger *lg = NULL;
        char err[256];

        if (ledger_open(&lg, path, err, sizeof(err)))
                fail_msg("ledger_open: %s", err);
        assert_non_null(lg);
        return lg;
}

/* Opens path and loads it into a new tracker, as at start-up. */
static inline struct dedup_tracker *
reload(const char *path, struct ledger **lgp, struct ledger_part *parts)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        char err[256];

        conf_init(&conf);
        parts_init(parts);
        tr = tracker_new(&conf, parts);
        *lgp = open_ok(path);
        if (ledger_load(*lgp, tr, parts, NPARTS, err, sizeof(err)))
                fail_msg("ledger_load: %s", err);
        return tr;
}

/* ------------------------------------------------------------------ */
/* Anomalies and summary                                               */
/* ------------------------------------------------------------------ */

struct seen {
        struct ledger_anomaly a[32];
        char producer[32][DEDUP_PRODUCER_MAX + 1];
        char topic[32][32];
        char kind[32][16];
        size_t n, stop_after;
};

static inline int seen_cb(void *opaque, const struct ledger_anomaly *a)
{
        struct seen *s = opaque;

        assert_true(s->n < 32);
        s->a[s->n] = *a;
        snprintf(s->topic[s->n], sizeof(s->topic[0]), "%s", a->topic);
        snprintf(s->kind[s->n], sizeof(s->kind[0]), "%s", a->kind);
        if (a->producer) {
                assert_true(a->producer_len <= DEDUP_PRODUCER_MAX);
                memcpy(s->producer[s->n], a->producer, a->producer_len);
                s->producer[s->n][a->producer_len] = '\0';
        }
        s->n++;
        return s->stop_after && s->n == s->stop_after;
}

#endif /* EOSAUDIT_TESTS_LEDGER_FIXTURE_H */
