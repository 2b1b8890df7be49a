/*
 * test_ledger.c - the SQLite ledger: open, lock, migrations, commit and
 * load round trips, crash between batches, anomalies, coverage, expiry.
 *
 * Each test works in its own directory under /tmp, removed afterwards.
 * State is compared as text dumps (of the tracker, and of the ledger's
 * tables through a separate SQLite connection) so that a mismatch shows
 * exactly what differs.
 */
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

#include "../auditor/ledger.h"

extern const size_t ledger_migrations_cnt;

/* ------------------------------------------------------------------ */
/* Fixture: a temporary directory holding a.db and b.db                */
/* ------------------------------------------------------------------ */

struct fx {
        char dir[64];
        char a[128]; /* ledger paths */
        char b[128];
};

static int fx_setup(void **state)
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

static int fx_teardown(void **state)
{
        static const char *const sfx[] = {"", "-wal", "-shm", "-lock",
                                          "-journal"};
        struct fx *fx = *state;
        char p[160];
        size_t i;

        for (i = 0; i < 2 * sizeof(sfx) / sizeof(sfx[0]); i++) {
                snprintf(p, sizeof(p), "%s%s", i % 2 ? fx->b : fx->a,
                         sfx[i / 2]);
                unlink(p);
        }
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

__attribute__((format(printf, 2, 3))) static void sb_printf(struct sb *b,
                                                            const char *fmt,
                                                            ...)
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

static void sb_hex(struct sb *b, const char *p, size_t len)
{
        size_t i;

        for (i = 0; i < len; i++)
                sb_printf(b, "%02x", (unsigned char)p[i]);
}

static int str_cmp(const void *x, const void *y)
{
        return strcmp(*(char *const *)x, *(char *const *)y);
}

struct lines {
        char **v;
        size_t n;
};

static int dump_pair_cb(void *opaque, const struct dedup_pair_view *pv)
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
                  (long long)pv->retired_pids[1],
                  (long long)pv->session_ms);
        for (i = 0; i < DEDUP_HISTORY_RUNS; i++)
                sb_printf(&b, " run(%lld,%lld,%u)",
                          (long long)pv->runs[i].seq,
                          (long long)pv->runs[i].offset, pv->runs[i].len);
        for (i = 0; i < pv->ngaps; i++) {
                const struct dedup_gap *g = &pv->gaps[i];
                sb_printf(&b, " gap(e%d,%lld..%lld,@%lld,%lldms,#%llu)",
                          (int)g->epoch, (long long)g->lo, (long long)g->hi,
                          (long long)g->opened_offset,
                          (long long)g->opened_ms,
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
static char *tracker_dump(struct dedup_tracker *tr,
                          const struct ledger_part *parts, size_t nparts)
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
static char *db_dump(const char *path)
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
static void assert_dump(char *got, const char *want)
{
        assert_string_equal(got, want);
        free(got);
}

/* Runs SQL on the ledger through a connection of its own. */
static void db_exec(const char *path, const char *sql)
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

static int64_t db_int(const char *path, const char *sql)
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

static void parts_init(struct ledger_part *parts)
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

static void conf_init(struct dedup_config *conf)
{
        dedup_config_defaults(conf);
        conf->gap_grace_records = 0;
        conf->gap_grace_ms = 1500;
        conf->idle_ttl_ms = 0;
}

static struct dedup_tracker *tracker_new(const struct dedup_config *conf,
                                         const struct ledger_part *parts)
{
        struct dedup_tracker *tr = dedup_tracker_new(conf);
        uint32_t i;

        assert_non_null(tr);
        for (i = 0; i < NPARTS; i++)
                assert_int_equal(dedup_tracker_part_add(
                                         tr, i, parts[i].from_log_start),
                                 0);
        return tr;
}

static enum dedup_verdict observe(struct dedup_tracker *tr,
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
static void audit(struct dedup_tracker *tr, struct ledger_part *parts,
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

static void commit_ok(struct ledger *lg, struct dedup_tracker *tr,
                      struct ledger_part *parts)
{
        char err[256];
        int64_t us = -1;

        if (ledger_commit(lg, tr, parts, NPARTS, &us, err, sizeof(err)))
                fail_msg("ledger_commit: %s", err);
        assert_true(us >= 0);
}

static struct ledger *open_ok(const char *path)
{
        struct ledger *lg = NULL;
        char err[256];

        if (ledger_open(&lg, path, err, sizeof(err)))
                fail_msg("ledger_open: %s", err);
        assert_non_null(lg);
        return lg;
}

/* Opens path and loads it into a new tracker, as at start-up. */
static struct dedup_tracker *reload(const char *path, struct ledger **lgp,
                                    struct ledger_part *parts)
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
/* Open, lock, migrations                                              */
/* ------------------------------------------------------------------ */

static void test_open_reopen(void **state)
{
        struct fx *fx = *state;
        struct ledger *lg, *rd = NULL;
        char err[256];

        lg = open_ok(fx->a);
        assert_int_equal(db_int(fx->a, "PRAGMA user_version"),
                         (int64_t)ledger_migrations_cnt);
        assert_int_equal(db_int(fx->a, "SELECT journal_mode = 'wal' "
                                       "FROM pragma_journal_mode"),
                         1);
        ledger_close(lg);

        /* A second open applies nothing again (CREATE TABLE would fail). */
        lg = open_ok(fx->a);
        assert_int_equal(db_int(fx->a, "PRAGMA user_version"),
                         (int64_t)ledger_migrations_cnt);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM sqlite_master "
                                       "WHERE name = 'anomalies'"),
                         1);

        /* A reader works next to the writer, but cannot commit. */
        if (ledger_open_reader(&rd, fx->a, err, sizeof(err)))
                fail_msg("ledger_open_reader: %s", err);
        {
                struct ledger_part parts[NPARTS];
                struct dedup_config conf;
                struct dedup_tracker *tr;
                parts_init(parts);
                conf_init(&conf);
                tr = tracker_new(&conf, parts);
                assert_int_equal(ledger_commit(rd, tr, parts, NPARTS, NULL,
                                               err, sizeof(err)),
                                 -1);
                assert_non_null(strstr(err, "read-only"));
                dedup_tracker_free(tr);
        }
        ledger_close(rd);
        ledger_close(lg);
}

static void test_reader_needs_ledger(void **state)
{
        struct fx *fx = *state;
        struct ledger *rd = NULL;
        char err[256] = "";

        assert_int_equal(ledger_open_reader(&rd, fx->b, err, sizeof(err)),
                         -1);
        assert_null(rd);
        assert_non_null(strstr(err, "cannot open ledger"));
}

static void test_lock(void **state)
{
        struct fx *fx = *state;
        struct ledger *lg, *lg2 = NULL;
        char err[256], want[320];

        lg = open_ok(fx->a);
        assert_int_equal(ledger_open(&lg2, fx->a, err, sizeof(err)), -1);
        assert_null(lg2);
        snprintf(want, sizeof(want),
                 "ledger %s is in use by another eosaudit process (pid %ld)",
                 fx->a, (long)getpid());
        assert_string_equal(err, want);
        ledger_close(lg);

        lg2 = open_ok(fx->a);
        ledger_close(lg2);
}

/* Runs ledger_open(path) in a child process as an unprivileged user
 * (root may write anything) and returns what it said: "" on success. */
static void open_unprivileged(const char *path, char *out, size_t size)
{
        int pfd[2];
        pid_t pid;
        ssize_t n;

        assert_int_equal(pipe(pfd), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct ledger *lg = NULL;
                char err[512] = "";

                close(pfd[0]);
                if (getuid() == 0 && (setgid(65534) || setuid(65534)))
                        _exit(3);
                if (!ledger_open(&lg, path, err, sizeof(err)))
                        ledger_close(lg);
                n = write(pfd[1], err, strlen(err));
                _exit(n < 0 ? 4 : 0);
        }
        close(pfd[1]);
        n = read(pfd[0], out, size - 1);
        out[n > 0 ? n : 0] = '\0';
        close(pfd[0]);
        assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/* A ledger that cannot be written fails at open with one clear line, and
 * leaves no -wal or -shm file behind (SQLite would make them 0444 too). */
static void test_unwritable_refused(void **state)
{
        struct fx *fx = *state;
        char err[512], want[600], p[160];

        ledger_close(open_ok(fx->a));
        assert_int_equal(chmod(fx->dir, 0755), 0);
        assert_int_equal(chmod(fx->a, 0444), 0);
        snprintf(p, sizeof(p), "%s-lock", fx->a);
        assert_int_equal(chmod(p, 0666), 0);
        open_unprivileged(fx->a, err, sizeof(err));
        snprintf(want, sizeof(want), "ledger %s is not writable: %s", fx->a,
                 strerror(EACCES));
        assert_string_equal(err, want);
        snprintf(p, sizeof(p), "%s-wal", fx->a);
        assert_int_equal(access(p, F_OK), -1);
        snprintf(p, sizeof(p), "%s-shm", fx->a);
        assert_int_equal(access(p, F_OK), -1);

        /* A new ledger in a directory it may not write in. */
        assert_int_equal(chmod(fx->dir, 0555), 0);
        open_unprivileged(fx->b, err, sizeof(err));
        snprintf(want, sizeof(want),
                 "ledger %s: cannot write in its directory %s: %s", fx->b,
                 fx->dir, strerror(EACCES));
        assert_string_equal(err, want);
        assert_int_equal(chmod(fx->dir, 0700), 0);
        assert_int_equal(chmod(fx->a, 0644), 0);
        ledger_close(open_ok(fx->a));
}

static void test_newer_schema_refused(void **state)
{
        struct fx *fx = *state;
        struct ledger *lg = NULL;
        char err[256], sql[64], want[320];

        ledger_close(open_ok(fx->a));
        snprintf(sql, sizeof(sql), "PRAGMA user_version = %zu",
                 ledger_migrations_cnt + 1);
        db_exec(fx->a, sql);

        snprintf(want, sizeof(want),
                 "ledger %s: schema version %zu is newer than this eosaudit "
                 "(%zu)",
                 fx->a, ledger_migrations_cnt + 1, ledger_migrations_cnt);
        assert_int_equal(ledger_open(&lg, fx->a, err, sizeof(err)), -1);
        assert_string_equal(err, want);
        assert_int_equal(ledger_open_reader(&lg, fx->a, err, sizeof(err)),
                         -1);
        assert_string_equal(err, want);
        assert_null(lg);
        /* Refusing changed nothing. */
        assert_int_equal(db_int(fx->a, "PRAGMA user_version"),
                         (int64_t)ledger_migrations_cnt + 1);
}

/* ------------------------------------------------------------------ */
/* Commit and load                                                     */
/* ------------------------------------------------------------------ */

/* One of each verdict on three parts; gaps stay open (batch 1 only). */
static const struct rec mixed_log[] = {
        /* part 0 is audited from its log start */
        {1, 0, 0, P1, 0, 0},        /* ok */
        {1, 0, 1, P1, 0, 1},        /* ok */
        {1, 0, 2, P1, 0, 5},        /* gap 2..4 opened */
        {1, 0, 3, P1, 0, 3},        /* out of order: gaps 2..2, 4..4 */
        {1, 0, 4, P1, 0, 1},        /* duplicate of offset 1 */
        {1, 0, 5, PQ, 0, 0},        /* ok */
        {1, 0, 6, PQ, 1, 0},        /* new session */
        {1, 0, 7, PQ, 0, 1},        /* fenced */
        {1, 0, 8, P1, -1, -1},      /* malformed: no epoch, no seq */
        {1, 0, 9, NULL, -1, -1},    /* untracked */
        {1, 0, 10, PBIN, 3, 7},     /* from log start: gap 0..6 */
        /* part 1 */
        {1, 1, 100, P1, 2, 40},     /* baseline */
        {1, 1, 101, P1, 2, 41},     /* ok */
        {1, 1, 102, PBIN, 7, 9},    /* baseline */
        /* part 2 */
        {1, 2, 0, PQ, 0, 3},        /* baseline */
        {1, 2, 1, PQ, 0, 3},        /* duplicate */
        {1, 2, 2, PQ, 0, 4},        /* ok */
};
#define MIXED_N (sizeof(mixed_log) / sizeof(mixed_log[0]))

/* What happens next to a tracker; run on the original and the reloaded. */
static const struct rec mixed_next[] = {
        {2, 0, 11, P1, 0, 2},   /* fills gap 2..2 */
        {2, 0, 12, P1, 0, 1},   /* duplicate of offset 1 (history) */
        {2, 0, 13, PQ, 0, 9},   /* fenced */
        {2, 0, 14, PBIN, 3, 3}, /* fills the gap */
        {2, 1, 103, PBIN, 7, 9}, /* duplicate */
        {2, 2, 3, PQ, 0, 2},    /* duplicate */
};
#define NEXT_N (sizeof(mixed_next) / sizeof(mixed_next[0]))

static void test_commit_load_roundtrip(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS], parts2[NPARTS];
        struct dedup_tracker *tr, *tr2;
        struct dedup_config conf;
        struct ledger *lg;
        char *d1, *db1;
        size_t i, n;

        conf_init(&conf);
        conf.gap_grace_ms = 0; /* keep every gap open */
        parts_init(parts);
        tr = tracker_new(&conf, parts);
        lg = open_ok(fx->a);
        audit(tr, parts, mixed_log, MIXED_N, 1, 1000);
        assert_int_equal(dedup_tracker_open_gaps(tr), 3);
        commit_ok(lg, tr, parts);
        for (i = 0; i < NPARTS; i++)
                assert_int_equal(parts[i].dirty, 0);
        assert_int_equal(dedup_tracker_dirty_foreach(tr, dump_pair_cb, NULL),
                         0); /* nothing dirty: cb not called */
        dedup_tracker_events(tr, &n);
        assert_int_equal(n, 0);
        ledger_close(lg);

        db1 = db_dump(fx->a);
        d1 = tracker_dump(tr, parts, NPARTS);
        tr2 = reload(fx->a, &lg, parts2);
        assert_dump(tracker_dump(tr2, parts2, NPARTS), d1);

        /* The reloaded tracker behaves as the original from here on. */
        dedup_tracker_begin(tr, 2000);
        dedup_tracker_begin(tr2, 2000);
        for (i = 0; i < NEXT_N; i++)
                assert_int_equal(observe(tr, &mixed_next[i]),
                                 observe(tr2, &mixed_next[i]));
        {
                const struct dedup_event *e1, *e2;
                size_t n1, n2;
                e1 = dedup_tracker_events(tr, &n1);
                e2 = dedup_tracker_events(tr2, &n2);
                assert_int_equal(n1, n2);
                for (i = 0; i < n1; i++) {
                        assert_int_equal(e1[i].kind, e2[i].kind);
                        /* Where a session began is not stored (only
                         * when): a fenced write's evidence is lost. */
                        if (e1[i].kind != DEDUP_KIND_FENCED)
                                assert_int_equal(e1[i].first_offset,
                                                 e2[i].first_offset);
                        assert_int_equal(e1[i].seq_lo, e2[i].seq_lo);
                }
                /* the history of runs was restored: offset 1 is named */
                assert_int_equal(e1[1].kind, DEDUP_KIND_DUPLICATE);
                assert_int_equal(e1[1].first_offset, 1);
        }
        free(d1);
        d1 = tracker_dump(tr, parts, NPARTS);
        assert_dump(tracker_dump(tr2, parts2, NPARTS), d1);
        /* Loading changed nothing in the ledger. */
        assert_dump(db_dump(fx->a), db1);

        free(d1);
        free(db1);
        dedup_tracker_free(tr);
        dedup_tracker_free(tr2);
        ledger_close(lg);
}

/* A record of part with eos.pid, at time ts. */
static enum dedup_verdict observe_pid(struct dedup_tracker *tr, uint32_t part,
                                      int64_t offset,
                                      const char *producer, int64_t pid,
                                      int32_t epoch, int64_t seq, int64_t ts)
{
        struct dedup_hdrs h;
        char e[16], s[24], p[24];

        dedup_hdrs_init(&h);
        snprintf(e, sizeof(e), "%d", (int)epoch);
        snprintf(s, sizeof(s), "%lld", (long long)seq);
        snprintf(p, sizeof(p), "%lld", (long long)pid);
        dedup_hdrs_feed(&h, "eos.producer", 12, producer, strlen(producer));
        dedup_hdrs_feed(&h, "eos.epoch", 9, e, strlen(e));
        dedup_hdrs_feed(&h, "eos.seq", 7, s, strlen(s));
        dedup_hdrs_feed(&h, "eos.pid", 7, p, strlen(p));
        h.ts_ms = ts;
        return dedup_tracker_observe(tr, part, offset, &h);
}

/*
 * Issue 14 item 3 after a restart: the pair's producer id is stored, so a
 * new producer id at epoch 0 is still a new session once the auditor has
 * restarted (not fenced), and the id it replaced is fenced.
 */
static void test_pid_survives_restart(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct dedup_tracker *tr;
        struct dedup_config conf;
        struct ledger *lg;

        conf_init(&conf);
        parts_init(parts);
        tr = tracker_new(&conf, parts);
        lg = open_ok(fx->a);
        dedup_tracker_begin(tr, 5000);
        /* t1 used producer id 100 up to its last epoch, then got 200. */
        assert_int_equal(observe_pid(tr, 0, 0, "t1", 100, 32766, 0, 1000),
                         DEDUP_V_OK);
        assert_int_equal(observe_pid(tr, 0, 1, "t1", 200, 0, 0, 2000),
                         DEDUP_V_OK);
        /* t2 still writes with producer id 7. */
        assert_int_equal(observe_pid(tr, 0, 2, "t2", 7, 32766, 0, 2000),
                         DEDUP_V_OK);
        parts[0].next_offset = 3;
        parts[0].dirty = 1;
        commit_ok(lg, tr, parts);
        dedup_tracker_free(tr);
        ledger_close(lg);
        assert_int_equal(db_int(fx->a, "SELECT pid FROM pairs WHERE "
                                       "producer = 't1'"),
                         200);

        tr = reload(fx->a, &lg, parts);
        dedup_tracker_begin(tr, 6000);
        /* t2's epoch ran out after the restart: a new id at epoch 0. */
        assert_int_equal(observe_pid(tr, 0, 3, "t2", 8, 0, 0, 3000),
                         DEDUP_V_OK);
        assert_int_equal(observe_pid(tr, 0, 4, "t1", 200, 0, 1, 3001),
                         DEDUP_V_OK);
        /* Zombies of the replaced ids. */
        assert_int_equal(observe_pid(tr, 0, 5, "t2", 7, 32766, 1, 3002),
                         DEDUP_V_FENCED);
        assert_int_equal(observe_pid(tr, 0, 6, "t1", 100, 32766, 1, 3003),
                         DEDUP_V_FENCED);
        assert_int_equal(dedup_tracker_part_counts(tr, 0)
                                 ->anomalies[DEDUP_KIND_FENCED],
                         2);
        dedup_tracker_free(tr);
        ledger_close(lg);
}

/* A fenced write's evidence, the first record of the new session, is
 * stored with its partition (issue 14 item 8). */
static void test_fenced_evidence(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct dedup_tracker *tr;
        struct dedup_config conf;
        struct ledger *lg;

        conf_init(&conf);
        parts_init(parts);
        tr = tracker_new(&conf, parts);
        lg = open_ok(fx->a);
        dedup_tracker_begin(tr, 5000);
        assert_int_equal(observe_pid(tr, 0, 0, "z", 9, 0, 0, 1000),
                         DEDUP_V_OK);
        /* the new session begins at orders [1] offset 40 */
        assert_int_equal(observe_pid(tr, 1, 40, "z", 9, 1, 0, 2000),
                         DEDUP_V_BASELINE);
        assert_int_equal(observe_pid(tr, 0, 1, "z", 9, 0, 1, 3000),
                         DEDUP_V_FENCED);
        commit_ok(lg, tr, parts);
        assert_int_equal(db_int(fx->a, "SELECT first_partition FROM "
                                       "anomalies WHERE kind = 'fenced'"),
                         1);
        assert_int_equal(db_int(fx->a, "SELECT first_offset FROM "
                                       "anomalies WHERE kind = 'fenced'"),
                         40);
        dedup_tracker_free(tr);
        ledger_close(lg);

        /* After a restart the session's start time is known: the zombie's
         * next write is still fenced (where the session began is not). */
        tr = reload(fx->a, &lg, parts);
        dedup_tracker_begin(tr, 6000);
        assert_int_equal(observe_pid(tr, 0, 2, "z", 9, 0, 2, 4000),
                         DEDUP_V_FENCED);
        assert_int_equal(observe_pid(tr, 1, 41, "z", 9, 1, 1, 4001),
                         DEDUP_V_OK);
        dedup_tracker_free(tr);
        ledger_close(lg);
}

/*
 * Issue 14 item 4 after a restart: confirmed gaps are remembered in the
 * ledger, so a record that comes late, after a restart, is out_of_order
 * and no longer missing; the summary counts it as recovered.
 */
static const struct rec late_log[] = {
        {1, 0, 0, P1, 0, 0}, /* ok */
        {1, 0, 1, P1, 0, 4}, /* gap 1..3, confirmed at the scan's end */
        {2, 0, 2, P1, 0, 2}, /* after the restart: recovered */
        {2, 0, 3, P1, 0, 2}, /* a duplicate of it */
        {2, 0, 4, P1, 0, 5}, /* ok */
};

static void test_late_record_after_restart(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct ledger_summary s;
        struct dedup_tracker *tr;
        struct dedup_config conf;
        struct ledger *lg;
        char err[256];
        size_t n = sizeof(late_log) / sizeof(late_log[0]);

        conf_init(&conf);
        parts_init(parts);
        tr = tracker_new(&conf, parts);
        lg = open_ok(fx->a);
        audit(tr, parts, late_log, n, 1, 1000);
        dedup_tracker_confirm_all(tr);
        commit_ok(lg, tr, parts);
        dedup_tracker_free(tr);
        ledger_close(lg);
        assert_int_equal(db_int(fx->a, "SELECT missing FROM partitions "
                                       "WHERE topic = 'orders' AND "
                                       "partition = 0"),
                         3);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM confirmed_gaps"),
                         1);

        tr = reload(fx->a, &lg, parts);
        audit(tr, parts, late_log, n, 2, 2000);
        assert_int_equal(dedup_tracker_part_counts(tr, 0)
                                 ->anomalies[DEDUP_KIND_OUT_OF_ORDER],
                         1);
        assert_int_equal(dedup_tracker_part_counts(tr, 0)
                                 ->anomalies[DEDUP_KIND_DUPLICATE],
                         1);
        commit_ok(lg, tr, parts);
        if (ledger_summary(lg, "orders", &s, err, sizeof(err)))
                fail_msg("ledger_summary: %s", err);
        assert_int_equal(s.anomalies[DEDUP_KIND_GAP], 1);
        assert_int_equal(s.missing, 2);
        assert_int_equal(s.recovered, 1);
        /* What is still missing of the gap: 1 and 3. */
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM confirmed_gaps"),
                         2);
        assert_int_equal(db_int(fx->a, "SELECT first_offset FROM anomalies "
                                       "WHERE kind = 'out_of_order'"),
                         1);
        dedup_tracker_free(tr);
        ledger_close(lg);
}

/*
 * Issue 14 item 5: across a coverage gap the pair keeps what it knew, its
 * open gaps become unknown (stored as such), and after a restart a record
 * that fills one is out_of_order and no longer unknown.
 */
static const struct rec hole_log[] = {
        {1, 0, 0, P1, 0, 0},   /* ok */
        {1, 0, 1, P1, 0, 3},   /* gap 1..2 */
        {1, 0, 50, P1, 0, 20}, /* offsets 2..49 deleted: 1..2 unknown;
                                  no false gap 4..19 */
        {2, 0, 51, P1, 0, 1},  /* after the restart: found */
        {2, 0, 52, P1, 0, 20}, /* still a duplicate */
};

static void test_coverage_keeps_state(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct ledger_summary s;
        struct dedup_tracker *tr;
        struct dedup_config conf;
        struct ledger *lg;
        char err[256];
        size_t n = sizeof(hole_log) / sizeof(hole_log[0]);

        conf_init(&conf);
        parts_init(parts);
        tr = tracker_new(&conf, parts);
        lg = open_ok(fx->a);
        audit(tr, parts, hole_log, n, 1, 1000);
        commit_ok(lg, tr, parts);
        dedup_tracker_free(tr);
        ledger_close(lg);
        assert_int_equal(db_int(fx->a, "SELECT unknown FROM partitions "
                                       "WHERE topic = 'orders' AND "
                                       "partition = 0"),
                         2);
        assert_int_equal(db_int(fx->a, "SELECT count FROM anomalies "
                                       "WHERE kind = 'gap_unknown'"),
                         2);
        assert_int_equal(db_int(fx->a, "SELECT unknown FROM confirmed_gaps"),
                         1);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM open_gaps"), 0);

        tr = reload(fx->a, &lg, parts);
        audit(tr, parts, hole_log, n, 2, 2000);
        commit_ok(lg, tr, parts);
        if (ledger_summary(lg, "orders", &s, err, sizeof(err)))
                fail_msg("ledger_summary: %s", err);
        assert_int_equal(s.unknown, 1);
        assert_int_equal(s.missing, 0);
        assert_int_equal(s.recovered, 0);
        assert_int_equal(s.anomalies[DEDUP_KIND_GAP], 0);
        assert_int_equal(s.anomalies[DEDUP_KIND_OUT_OF_ORDER], 1);
        assert_int_equal(s.anomalies[DEDUP_KIND_DUPLICATE], 1);
        dedup_tracker_free(tr);
        ledger_close(lg);
}

static void test_unknown_parts_keep_minus_one(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct dedup_tracker *tr;
        struct ledger *lg;

        tr = reload(fx->a, &lg, parts);
        assert_int_equal(parts[0].next_offset, -1);
        assert_int_equal(parts[1].next_offset, -1);
        assert_int_equal(dedup_tracker_pairs(tr), 0);
        /* Only part 1 is audited and committed. */
        audit(tr, parts, mixed_log + 11, 3, 1, 1000);
        commit_ok(lg, tr, parts);
        dedup_tracker_free(tr);
        ledger_close(lg);

        tr = reload(fx->a, &lg, parts);
        assert_int_equal(parts[0].next_offset, -1);
        assert_int_equal(parts[1].next_offset, 103);
        assert_int_equal(parts[2].next_offset, -1);
        assert_int_equal(dedup_tracker_part_counts(tr, 1)->records, 3);
        assert_int_equal(dedup_tracker_part_counts(tr, 0)->records, 0);
        assert_int_equal(dedup_tracker_pairs(tr), 2);
        dedup_tracker_free(tr);
        ledger_close(lg);
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

static int seen_cb(void *opaque, const struct ledger_anomaly *a)
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

static void test_anomalies_and_summary(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct dedup_tracker *tr;
        struct dedup_config conf;
        struct ledger_summary sum;
        struct ledger *lg, *rd = NULL;
        struct seen s;
        char err[256];
        size_t i;

        conf_init(&conf);
        conf.gap_grace_ms = 0;
        parts_init(parts);
        tr = tracker_new(&conf, parts);
        lg = open_ok(fx->a);
        audit(tr, parts, mixed_log, MIXED_N, 1, 1000);
        commit_ok(lg, tr, parts);
        /* A later batch confirms the open gaps: newer rows. */
        dedup_tracker_begin(tr, 5000);
        dedup_tracker_confirm_all(tr);
        commit_ok(lg, tr, parts);

        if (ledger_open_reader(&rd, fx->a, err, sizeof(err)))
                fail_msg("ledger_open_reader: %s", err);

        memset(&s, 0, sizeof(s));
        assert_int_equal(ledger_anomalies_foreach(rd, "orders", -1, seen_cb,
                                                  &s, err, sizeof(err)),
                         0);
        /* Newest first; in a batch, events in the engine's order. */
        assert_int_equal(s.n, 7);
        for (i = 1; i < s.n; i++)
                assert_true(s.a[i - 1].id > s.a[i].id);
        {
                static const char *const kinds[] = {
                        "gap", "gap", "gap", "malformed", "fenced",
                        "duplicate", "out_of_order"};
                for (i = 0; i < s.n; i++)
                        assert_string_equal(s.kind[i], kinds[i]);
        }
        /* Evidence of the duplicate: seq 1 at offset 4, first seen at 1. */
        assert_string_equal(s.producer[5], P1);
        assert_int_equal(s.a[5].producer_len, strlen(P1));
        assert_int_equal(s.a[5].partition, 0);
        assert_int_equal(s.a[5].epoch, 0);
        assert_int_equal(s.a[5].seq_lo, 1);
        assert_int_equal(s.a[5].seq_hi, 1);
        assert_int_equal(s.a[5].offset_lo, 4);
        assert_int_equal(s.a[5].offset_hi, 4);
        assert_int_equal(s.a[5].first_offset, 1);
        assert_int_equal(s.a[5].count, 1);
        assert_int_equal(s.a[5].detected_ms, 1000);
        /* The fenced write names its (lower) epoch and a quoted producer. */
        assert_string_equal(s.producer[4], PQ);
        assert_int_equal(s.a[4].epoch, 0);
        /* ... and the first record of the new session, offset 6. */
        assert_int_equal(s.a[4].first_offset, 6);
        assert_int_equal(s.a[4].first_partition, 0);
        /* Malformed: no producer, no epoch, the missing headers. */
        assert_null(s.a[3].producer);
        assert_int_equal(s.a[3].epoch, -1);
        assert_int_equal(s.a[3].seq_lo, -1);
        assert_int_equal(s.a[3].offset_lo, 8);
        assert_int_equal(s.a[3].malformed_bits,
                         DEDUP_HDR_EPOCH | DEDUP_HDR_SEQ);
        /* The gaps, with their missing records; one of a binary name
         * (compared through the copy: a.producer was valid in cb only). */
        {
                uint64_t missing = 0;
                int bin = 0;
                for (i = 0; i < 3; i++) {
                        missing += s.a[i].count;
                        assert_int_equal(s.a[i].detected_ms, 5000);
                        assert_true(s.a[i].seq_hi >= s.a[i].seq_lo);
                        if (strcmp(s.producer[i], PBIN) != 0)
                                continue;
                        bin++;
                        assert_int_equal(s.a[i].producer_len, strlen(PBIN));
                        assert_int_equal(s.a[i].seq_lo, 0);
                        assert_int_equal(s.a[i].seq_hi, 6);
                        assert_int_equal(s.a[i].offset_lo, 10);
                        assert_int_equal(s.a[i].count, 7);
                }
                assert_int_equal(missing, 1 + 1 + 7);
                assert_int_equal(bin, 1);
        }

        /* Limit, topic filter, early stop. */
        memset(&s, 0, sizeof(s));
        assert_int_equal(ledger_anomalies_foreach(rd, "orders", 2, seen_cb,
                                                  &s, err, sizeof(err)),
                         0);
        assert_int_equal(s.n, 2);
        memset(&s, 0, sizeof(s));
        assert_int_equal(ledger_anomalies_foreach(rd, "pay\"ments", -1,
                                                  seen_cb, &s, err,
                                                  sizeof(err)),
                         0);
        assert_int_equal(s.n, 1);
        assert_string_equal(s.kind[0], "duplicate");
        assert_string_equal(s.topic[0], "pay\"ments");
        memset(&s, 0, sizeof(s));
        assert_int_equal(ledger_anomalies_foreach(rd, NULL, 100, seen_cb, &s,
                                                  err, sizeof(err)),
                         0);
        assert_int_equal(s.n, 8);
        assert_string_equal(s.kind[7], "out_of_order");
        memset(&s, 0, sizeof(s));
        s.stop_after = 3;
        assert_int_equal(ledger_anomalies_foreach(rd, NULL, -1, seen_cb, &s,
                                                  err, sizeof(err)),
                         0);
        assert_int_equal(s.n, 3);
        memset(&s, 0, sizeof(s));
        assert_int_equal(ledger_anomalies_foreach(rd, "none", -1, seen_cb,
                                                  &s, err, sizeof(err)),
                         0);
        assert_int_equal(s.n, 0);

        /* Summary of a topic from the reader handle. */
        assert_int_equal(ledger_summary(rd, "orders", &sum, err, sizeof(err)),
                         0);
        assert_int_equal(sum.partitions, 2);
        assert_int_equal(sum.records, 14);
        assert_int_equal(sum.untracked, 1);
        assert_int_equal(sum.anomalies[DEDUP_KIND_DUPLICATE], 1);
        assert_int_equal(sum.anomalies[DEDUP_KIND_GAP], 3);
        assert_int_equal(sum.anomalies[DEDUP_KIND_OUT_OF_ORDER], 1);
        assert_int_equal(sum.anomalies[DEDUP_KIND_FENCED], 1);
        assert_int_equal(sum.anomalies[DEDUP_KIND_MALFORMED], 1);
        assert_int_equal(sum.missing, 9);
        assert_int_equal(sum.producers, 3); /* p1, PQ, PBIN */
        assert_int_equal(sum.pairs, 5);
        assert_int_equal(sum.open_gaps, 0);
        assert_int_equal(sum.coverage_gaps, 0);
        assert_int_equal(sum.coverage_records, 0);
        assert_int_equal(ledger_summary(rd, "none", &sum, err, sizeof(err)),
                         0);
        assert_int_equal(sum.partitions, 0);
        assert_int_equal(sum.records, 0);
        assert_int_equal(ledger_summary(rd, NULL, &sum, err, sizeof(err)), 0);
        assert_int_equal(sum.partitions, 3);
        assert_int_equal(sum.records, 17);
        assert_int_equal(sum.pairs, 6);

        ledger_close(rd);
        dedup_tracker_free(tr);
        ledger_close(lg);
}

/* ------------------------------------------------------------------ */
/* Coverage gaps and expiry                                            */
/* ------------------------------------------------------------------ */

static void test_coverage_gap(void **state)
{
        static const struct rec log[] = {
                {1, 0, 0, P1, 0, 0},
                {1, 0, 1, P1, 0, 1},
                {2, 0, 50, P1, 0, 70}, /* offsets 2..49 deleted */
                {2, 0, 51, P1, 0, 71},
        };
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct dedup_tracker *tr;
        struct dedup_config conf;
        struct ledger_summary sum;
        struct ledger *lg;
        struct seen s;
        char err[256];

        conf_init(&conf);
        parts_init(parts);
        tr = tracker_new(&conf, parts);
        lg = open_ok(fx->a);
        audit(tr, parts, log, 2, 1, 1000);
        commit_ok(lg, tr, parts);
        assert_int_equal(db_int(fx->a, "SELECT from_log_start FROM "
                                       "partitions WHERE partition = 0 AND "
                                       "topic = 'orders'"),
                         1);

        audit(tr, parts, log, 4, 2, 2000);
        assert_int_equal(parts[0].coverage_lo, 2);
        assert_int_equal(parts[0].coverage_hi, 49);
        commit_ok(lg, tr, parts);
        assert_int_equal(parts[0].coverage_lo, -1);
        assert_int_equal(parts[0].coverage_hi, -1);

        assert_int_equal(ledger_summary(lg, "orders", &sum, err, sizeof(err)),
                         0);
        assert_int_equal(sum.coverage_gaps, 1);
        assert_int_equal(sum.coverage_records, 48);
        assert_int_equal(sum.anomalies[DEDUP_KIND_GAP], 0); /* baseline */
        memset(&s, 0, sizeof(s));
        assert_int_equal(ledger_anomalies_foreach(lg, "orders", -1, seen_cb,
                                                  &s, err, sizeof(err)),
                         0);
        assert_int_equal(s.n, 1);
        assert_string_equal(s.kind[0], "coverage");
        assert_null(s.a[0].producer);
        assert_int_equal(s.a[0].offset_lo, 2);
        assert_int_equal(s.a[0].offset_hi, 49);
        assert_int_equal(s.a[0].count, 48);
        assert_int_equal(s.a[0].epoch, -1);
        assert_true(s.a[0].detected_ms > 0);
        /* The part is no longer audited from its log start. */
        assert_int_equal(db_int(fx->a, "SELECT from_log_start FROM "
                                       "partitions WHERE partition = 0 AND "
                                       "topic = 'orders'"),
                         0);

        /* The same gap reported again (a replay) is stored once. */
        parts[0].coverage_lo = 2;
        parts[0].coverage_hi = 49;
        parts[0].dirty = 1;
        commit_ok(lg, tr, parts);
        assert_int_equal(ledger_summary(lg, "orders", &sum, err, sizeof(err)),
                         0);
        assert_int_equal(sum.coverage_gaps, 1);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM anomalies"), 1);

        /* A bad range fails the commit and is kept for the caller. */
        parts[0].coverage_lo = 9;
        parts[0].coverage_hi = 3;
        assert_int_equal(ledger_commit(lg, tr, parts, NPARTS, NULL, err,
                                       sizeof(err)),
                         -1);
        assert_non_null(strstr(err, "bad coverage gap"));
        assert_int_equal(parts[0].coverage_lo, 9);

        dedup_tracker_free(tr);
        ledger_close(lg);
}

static void test_expired_pair_deleted(void **state)
{
        static const struct rec log[] = {
                {1, 1, 0, P1, 0, 10},
                {1, 1, 1, P1, 0, 15},   /* gap 11..14 stays open */
                {1, 1, 2, PBIN, 0, 5},
                {3, 1, 3, PBIN, 0, 6},  /* after P1 expired */
                {4, 1, 4, PBIN, 0, 90}, /* expired and back in one batch */
                /* Idle expiry runs on the records' time: records of
                 * another topic move it. */
                {2, 2, 0, PQ, 0, 0},
                {5, 2, 1, PQ, 0, 1},
        };
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct dedup_tracker *tr;
        struct dedup_config conf;
        struct ledger_summary sum;
        struct ledger *lg;
        char err[256], *d1;

        conf_init(&conf);
        conf.gap_grace_ms = 0;
        conf.idle_ttl_ms = 500;
        parts_init(parts);
        tr = tracker_new(&conf, parts);
        lg = open_ok(fx->a);
        audit(tr, parts, log, 7, 1, 1000);
        commit_ok(lg, tr, parts);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM open_gaps"), 1);

        /* A tick after a record of another topic 1 s later (no record, no
         * dirty part here) expires P1 and PBIN: its open gap is confirmed
         * on the way, and counted. */
        audit(tr, parts, log, 7, 2, 2000);
        assert_int_equal(dedup_tracker_pairs(tr), 1);
        assert_int_equal(parts[1].dirty, 0);
        commit_ok(lg, tr, parts);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM pairs "
                                       "WHERE topic = 'orders'"),
                         0);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM open_gaps"), 0);
        assert_int_equal(db_int(fx->a, "SELECT gap FROM partitions "
                                       "WHERE partition = 1"),
                         1);
        assert_int_equal(db_int(fx->a, "SELECT missing FROM partitions "
                                       "WHERE partition = 1"),
                         4);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM anomalies "
                                       "WHERE kind = 'gap' AND seq_lo = 11 "
                                       "AND seq_hi = 14"),
                         1);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM anomalies "
                                       "WHERE kind = 'expired'"),
                         0);

        /* PBIN comes back; then, in one batch, it expires again and comes
         * back again: deleted, then written as it is now. */
        audit(tr, parts, log, 7, 3, 2100);
        commit_ok(lg, tr, parts);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM pairs "
                                       "WHERE topic = 'orders'"),
                         1);
        audit(tr, parts, log, 7, 5, 3000); /* PBIN expires */
        audit(tr, parts, log, 7, 4, 3000);
        assert_int_equal(dedup_tracker_pairs(tr), 2);
        commit_ok(lg, tr, parts);
        assert_int_equal(ledger_summary(lg, "orders", &sum, err, sizeof(err)),
                         0);
        assert_int_equal(sum.pairs, 1);
        assert_int_equal(sum.records, 5);

        d1 = tracker_dump(tr, parts, NPARTS);
        dedup_tracker_free(tr);
        ledger_close(lg);
        {
                struct ledger_part parts2[NPARTS];
                tr = reload(fx->a, &lg, parts2);
                assert_dump(tracker_dump(tr, parts2, NPARTS), d1);
        }
        free(d1);
        dedup_tracker_free(tr);
        ledger_close(lg);
}

/* ------------------------------------------------------------------ */
/* Crash between batches, failed commits                               */
/* ------------------------------------------------------------------ */

/* Two batches on three parts: batch 2 fills, confirms (grace 1500 ms,
 * batches 2000 ms apart), fences, duplicates, and finds a coverage gap. */
static const struct rec crash_log[] = {
        {1, 0, 0, P1, 0, 0},
        {1, 0, 1, P1, 0, 1},
        {1, 0, 2, P1, 0, 4},      /* gap 2..3 */
        {1, 0, 3, PQ, 0, 0},
        {1, 0, 4, P1, 0, 5},
        {1, 0, 5, P1, 0, 1},      /* duplicate */
        {1, 0, 6, PQ, -1, -1},    /* malformed */
        {1, 1, 10, PBIN, 1, 100}, /* baseline */
        {1, 1, 11, PBIN, 1, 101},
        {1, 1, 12, PBIN, 1, 103}, /* gap 102..102 */
        {1, 2, 0, NULL, -1, -1},  /* untracked */
        {1, 2, 1, PQ, 0, 0},
        {2, 0, 7, P1, 0, 2},      /* out of order; 3..3 confirmed */
        {2, 0, 8, P1, 0, 6},
        {2, 0, 9, PQ, 1, 0},      /* new session */
        {2, 0, 10, PQ, 0, 1},     /* fenced */
        {2, 0, 11, P1, 0, 6},     /* duplicate of offset 8 */
        {2, 1, 13, PBIN, 1, 102}, /* out of order, gap closed */
        {2, 1, 14, PBIN, 1, 104},
        {2, 2, 5, PQ, 0, 7},      /* offsets 2..4 deleted: baseline */
        {2, 2, 6, NULL, -1, -1},
};
#define CRASH_N (sizeof(crash_log) / sizeof(crash_log[0]))
#define CRASH_HOOK_EXIT 42

static void crash_hook(void *opaque)
{
        (void)opaque;
        _exit(CRASH_HOOK_EXIT); /* as if killed just before COMMIT */
}

/* The child's side: no cmocka here, only exit codes. */
static int crash_child(const char *path)
{
        struct ledger_part parts[NPARTS];
        struct dedup_tracker *tr;
        struct dedup_config conf;
        struct ledger *lg = NULL;
        char err[256];

        conf_init(&conf);
        parts_init(parts);
        tr = dedup_tracker_new(&conf);
        if (!tr || dedup_tracker_part_add(tr, 0, 1) ||
            dedup_tracker_part_add(tr, 1, 0) ||
            dedup_tracker_part_add(tr, 2, 0))
                return 1;
        if (ledger_open(&lg, path, err, sizeof(err)) ||
            ledger_load(lg, tr, parts, NPARTS, err, sizeof(err)))
                return 2;
        audit(tr, parts, crash_log, CRASH_N, 1, 1000);
        if (ledger_commit(lg, tr, parts, NPARTS, NULL, err, sizeof(err)))
                return 3;
        audit(tr, parts, crash_log, CRASH_N, 2, 3000);
        ledger_commit_hook_set(lg, crash_hook, NULL);
        ledger_commit(lg, tr, parts, NPARTS, NULL, err, sizeof(err));
        return 4; /* the hook did not run */
}

static void test_crash_between_batches(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct dedup_tracker *tr;
        struct dedup_config conf;
        struct ledger_summary sum;
        struct ledger *lg;
        char *tr1, *db1, *tr2, *db2, err[256];
        int status;
        pid_t pid;

        /* The reference: both batches without interruption, in a. */
        conf_init(&conf);
        parts_init(parts);
        tr = tracker_new(&conf, parts);
        lg = open_ok(fx->a);
        audit(tr, parts, crash_log, CRASH_N, 1, 1000);
        commit_ok(lg, tr, parts);
        tr1 = tracker_dump(tr, parts, NPARTS);
        db1 = db_dump(fx->a);
        audit(tr, parts, crash_log, CRASH_N, 2, 3000);
        commit_ok(lg, tr, parts);
        tr2 = tracker_dump(tr, parts, NPARTS);
        db2 = db_dump(fx->a);
        dedup_tracker_free(tr);
        ledger_close(lg);
        assert_string_not_equal(db1, db2);

        /* A process commits batch 1 and dies inside batch 2's commit. */
        fflush(NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(crash_child(fx->b));
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), CRASH_HOOK_EXIT);

        /* Restart: the lock is free, the state is exactly batch 1's. */
        tr = reload(fx->b, &lg, parts);
        assert_dump(tracker_dump(tr, parts, NPARTS), tr1);
        assert_dump(db_dump(fx->b), db1);

        /* Replaying batch 2 from the stored offsets gives the reference. */
        audit(tr, parts, crash_log, CRASH_N, 2, 3000);
        commit_ok(lg, tr, parts);
        assert_dump(tracker_dump(tr, parts, NPARTS), tr2);
        assert_dump(db_dump(fx->b), db2);

        /* Every record counted once. */
        assert_int_equal(ledger_summary(lg, NULL, &sum, err, sizeof(err)), 0);
        assert_int_equal(sum.records, CRASH_N);
        assert_int_equal(sum.anomalies[DEDUP_KIND_GAP], 1);
        assert_int_equal(sum.missing, 1);
        assert_int_equal(sum.anomalies[DEDUP_KIND_DUPLICATE], 2);
        assert_int_equal(sum.anomalies[DEDUP_KIND_OUT_OF_ORDER], 2);
        assert_int_equal(sum.anomalies[DEDUP_KIND_FENCED], 1);
        assert_int_equal(sum.anomalies[DEDUP_KIND_MALFORMED], 1);
        assert_int_equal(sum.untracked, 2);
        assert_int_equal(sum.coverage_gaps, 1);
        assert_int_equal(sum.coverage_records, 3);

        dedup_tracker_free(tr);
        ledger_close(lg);
        free(tr1);
        free(db1);
        free(tr2);
        free(db2);
}

static int count_cb(void *opaque, const struct dedup_pair_view *pv)
{
        (void)pv;
        ++*(size_t *)opaque;
        return 0;
}

/* A commit that fails half-way writes nothing and keeps the batch. */
static void test_failed_commit_keeps_batch(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct dedup_tracker *tr;
        struct dedup_config conf;
        struct ledger *lg;
        char *db1, *tr2, *db2, err[256];
        size_t nev, ndirty = 0;

        /* Reference run in a. */
        conf_init(&conf);
        parts_init(parts);
        tr = tracker_new(&conf, parts);
        lg = open_ok(fx->a);
        audit(tr, parts, crash_log, CRASH_N, 1, 1000);
        commit_ok(lg, tr, parts);
        audit(tr, parts, crash_log, CRASH_N, 2, 3000);
        commit_ok(lg, tr, parts);
        tr2 = tracker_dump(tr, parts, NPARTS);
        db2 = db_dump(fx->a);
        dedup_tracker_free(tr);
        ledger_close(lg);

        /* In b, batch 2's commit fails on its last write, a partition
         * row, after its anomalies and pairs are written. */
        parts_init(parts);
        tr = tracker_new(&conf, parts);
        lg = open_ok(fx->b);
        audit(tr, parts, crash_log, CRASH_N, 1, 1000);
        commit_ok(lg, tr, parts);
        db1 = db_dump(fx->b);
        audit(tr, parts, crash_log, CRASH_N, 2, 3000);
        db_exec(fx->b, "CREATE TRIGGER fail BEFORE INSERT ON partitions "
                       "WHEN NEW.topic = 'pay\"ments' "
                       "BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
        dedup_tracker_events(tr, &nev);
        assert_true(nev > 0);
        assert_int_equal(ledger_commit(lg, tr, parts, NPARTS, NULL, err,
                                       sizeof(err)),
                         -1);
        assert_string_equal(err,
                            "cannot write ledger partition: injected failure");
        /* Tracker and parts untouched, ledger as after batch 1. */
        dedup_tracker_events(tr, &nev);
        assert_true(nev > 0);
        assert_int_equal(dedup_tracker_dirty_foreach(tr, count_cb, &ndirty),
                         0);
        assert_true(ndirty > 0);
        assert_int_equal(parts[0].dirty, 1);
        assert_int_equal(parts[2].coverage_lo, 2);
        db_exec(fx->b, "DROP TRIGGER fail");
        assert_dump(db_dump(fx->b), db1);

        /* Retried, it gives the reference. */
        commit_ok(lg, tr, parts);
        assert_dump(tracker_dump(tr, parts, NPARTS), tr2);
        assert_dump(db_dump(fx->b), db2);

        /* Parts must be indexed by part. */
        parts[1].part = 2;
        assert_int_equal(ledger_commit(lg, tr, parts, NPARTS, NULL, err,
                                       sizeof(err)),
                         -1);
        assert_non_null(strstr(err, "bad ledger part 1"));

        dedup_tracker_free(tr);
        ledger_close(lg);
        free(db1);
        free(tr2);
        free(db2);
}

/* A producer name of 255 arbitrary bytes (no NUL) round-trips. */
static void test_long_binary_producer(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS], parts2[NPARTS];
        struct dedup_tracker *tr, *tr2;
        struct dedup_config conf;
        struct ledger *lg;
        char name[DEDUP_PRODUCER_MAX + 1], *d1;
        struct rec r = {1, 1, 0, name, 5, 0};
        size_t i;

        for (i = 0; i < DEDUP_PRODUCER_MAX; i++)
                name[i] = (char)(1 + (i * 37) % 255);
        name[DEDUP_PRODUCER_MAX] = '\0';
        conf_init(&conf);
        parts_init(parts);
        tr = tracker_new(&conf, parts);
        lg = open_ok(fx->a);
        dedup_tracker_begin(tr, 1000);
        assert_int_equal(observe(tr, &r), DEDUP_V_BASELINE);
        r.offset = 1;
        r.seq = 3;
        assert_int_equal(observe(tr, &r), DEDUP_V_GAP_OPENED);
        parts[1].next_offset = 2;
        parts[1].dirty = 1;
        commit_ok(lg, tr, parts);
        ledger_close(lg);
        assert_int_equal(db_int(fx->a, "SELECT length(CAST(producer AS "
                                       "BLOB)) FROM pairs"),
                         DEDUP_PRODUCER_MAX);

        tr2 = reload(fx->a, &lg, parts2);
        d1 = tracker_dump(tr, parts, NPARTS);
        assert_dump(tracker_dump(tr2, parts2, NPARTS), d1);
        free(d1);
        dedup_tracker_free(tr);
        dedup_tracker_free(tr2);
        ledger_close(lg);
}

/* ------------------------------------------------------------------ */
/* Id windows                                                          */
/* ------------------------------------------------------------------ */

/* One window per topic of parts_init(): 0 orders, 1 pay"ments. */
static void windows_ok(struct ledger *lg, struct dedup_tracker *tr,
                       const struct ledger_part *parts, const char *key)
{
        static const char *const topics[2] = {"orders", "pay\"ments"};
        uint32_t windows[2];
        char err[256];
        uint32_t i;

        for (i = 0; i < 2; i++)
                assert_int_equal(dedup_tracker_window_add(tr, &windows[i]), 0);
        for (i = 0; i < NPARTS; i++)
                dedup_tracker_part_set_window(tr, i, i < 2 ? 0 : 1);
        if (ledger_windows_load(lg, tr, topics, windows, 2, parts, NPARTS, key,
                                err, sizeof(err)))
                fail_msg("ledger_windows_load: %s", err);
}

static enum dedup_verdict observe_id(struct dedup_tracker *tr,
                                     struct ledger_part *parts, uint32_t part,
                                     int64_t offset, const char *id)
{
        struct dedup_hdrs h;

        dedup_hdrs_init(&h);
        h.id = id;
        h.id_len = strlen(id);
        parts[part].next_offset = offset + 1;
        parts[part].dirty = 1;
        return dedup_tracker_observe(tr, part, offset, &h);
}

static int redelivered_cb(void *opaque, const struct ledger_anomaly *a)
{
        struct ledger_anomaly *out = opaque;

        assert_string_equal(a->kind, "redelivered");
        *out = *a;
        out->topic = NULL;
        out->kind = NULL;
        out->producer = NULL;
        /* The evidence must be checked here: strings die with the row. */
        assert_int_equal(a->msgid_stored, 2);
        assert_memory_equal(a->msgid, "m1", 2);
        out->msgid = NULL;
        return 0;
}

/* Ids committed in one run are found by the next (through SQLite, the
 * filters rebuilt from the ledger), per topic; the evidence is stored; a
 * different --dedup-key drops the stored ids. */
static void test_id_windows(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct ledger_anomaly a;
        struct ledger_anomaly_filter f = {
                .kind = "redelivered", .since_ms = -1, .limit = -1};
        struct ledger_summary sum;
        struct dedup_tracker *tr;
        struct ledger *lg;
        char err[256];

        (void)state;
        tr = reload(fx->a, &lg, parts);
        windows_ok(lg, tr, parts, "msgid");
        dedup_tracker_begin(tr, 1000);
        assert_int_equal(observe_id(tr, parts, 0, 10, "m1"), DEDUP_V_UNTRACKED);
        assert_int_equal(observe_id(tr, parts, 1, 5, "m2"), DEDUP_V_UNTRACKED);
        /* Another topic: another window. */
        assert_int_equal(observe_id(tr, parts, 2, 3, "m1"), DEDUP_V_UNTRACKED);
        commit_ok(lg, tr, parts);
        /* Two open generations (one per topic), a batch each. */
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_batches"),
                         2);
        assert_int_equal(
                db_int(fx->a, "SELECT SUM(length(entries)) FROM msgid_batches"),
                3 * 32);
        dedup_tracker_free(tr);
        ledger_close(lg);

        tr = reload(fx->a, &lg, parts);
        windows_ok(lg, tr, parts, "msgid");
        dedup_tracker_begin(tr, 2000);
        assert_int_equal(observe_id(tr, parts, 1, 6, "m1"),
                         DEDUP_V_REDELIVERED);
        assert_int_equal(observe_id(tr, parts, 2, 4, "m3"), DEDUP_V_UNTRACKED);
        commit_ok(lg, tr, parts);
        memset(&a, 0, sizeof(a));
        if (ledger_anomalies_query(lg, &f, redelivered_cb, &a, err,
                                   sizeof(err)))
                fail_msg("ledger_anomalies_query: %s", err);
        assert_int_equal(a.partition, 1);
        assert_int_equal(a.offset_lo, 6);
        assert_int_equal(a.first_partition, 0);
        assert_int_equal(a.first_offset, 10);
        assert_int_equal(a.first_offset_hi, 10);
        assert_int_equal(a.msgid_len, 2);
        assert_int_equal(a.count, 1);
        if (ledger_summary(lg, NULL, &sum, err, sizeof(err)))
                fail_msg("ledger_summary: %s", err);
        assert_int_equal(sum.anomalies[DEDUP_KIND_REDELIVERED], 1);
        assert_int_equal(sum.ids_checked, 5);
        assert_int_equal(sum.window_ids, 4);
        assert_int_equal(sum.window_gens, 2);
        assert_int_equal(sum.window_oldest_ms, 1000);
        if (ledger_summary(lg, "orders", &sum, err, sizeof(err)))
                fail_msg("ledger_summary: %s", err);
        assert_int_equal(sum.window_ids, 2);
        dedup_tracker_free(tr);
        ledger_close(lg);

        /* Ids made from the record key are not msgids: all dropped. */
        tr = reload(fx->a, &lg, parts);
        windows_ok(lg, tr, parts, "key");
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_batches"),
                         0);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_gens"), 0);
        dedup_tracker_begin(tr, 3000);
        assert_int_equal(observe_id(tr, parts, 1, 7, "m1"), DEDUP_V_UNTRACKED);
        commit_ok(lg, tr, parts);
        assert_int_equal(
                db_int(fx->a, "SELECT COUNT(*) FROM msgid_gens WHERE "
                              "dedup_key = 'key' AND topic = 'orders'"),
                1);
        dedup_tracker_free(tr);
        ledger_close(lg);
}

/* Opens path into a tracker whose windows hold max_ids ids. */
static struct dedup_tracker *reload_window(const char *path,
                                           struct ledger **lgp,
                                           struct ledger_part *parts,
                                           uint64_t max_ids)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        char err[256];

        conf_init(&conf);
        conf.window.max_ids = max_ids;
        conf.window.max_age_ms = 0;
        parts_init(parts);
        tr = tracker_new(&conf, parts);
        *lgp = open_ok(path);
        if (ledger_load(*lgp, tr, parts, NPARTS, err, sizeof(err)))
                fail_msg("ledger_load: %s", err);
        windows_ok(*lgp, tr, parts, "msgid");
        return tr;
}

struct first_copy {
        int32_t partition;
        int64_t first_offset, offset;
        int found;
};

static int first_copy_cb(void *opaque, const struct ledger_anomaly *a)
{
        struct first_copy *fc = opaque;

        if (a->offset_lo == fc->offset) {
                fc->partition = a->first_partition;
                fc->first_offset = a->first_offset;
                fc->found++;
        }
        return 0;
}

struct id_copies {
        int n;
        struct ledger_id_copy last;
};

static int id_copy_cb(void *opaque, const struct ledger_id_copy *c)
{
        struct id_copies *ic = opaque;

        ic->n++;
        ic->last = *c;
        ic->last.producer = NULL; /* dies with the row */
        return 0;
}

/* ledger_id_find() on a reader, after test_id_windows_closed's runs:
 * first copies from closed generations (chunks) and the open one
 * (batches), the later copy from the anomalies, a coalesced run's middle
 * record, and ids nobody sent. */
static void ids_find_check(const char *path)
{
        struct ledger_id_seen seen;
        struct id_copies ic;
        struct ledger *rd = NULL;
        char id[16], err[256];
        int i;

        if (ledger_open_reader(&rd, path, err, sizeof(err)))
                fail_msg("ledger_open_reader: %s", err);
        for (i = 0; i < 1000; i += 37) {
                snprintf(id, sizeof(id), "i%d", i);
                memset(&ic, 0, sizeof(ic));
                assert_int_equal(ledger_id_find(rd, "orders", id, strlen(id),
                                                -1, &seen, id_copy_cb, &ic,
                                                err, sizeof(err)),
                                 1);
                assert_true(seen.in_window);
                assert_int_equal(seen.partition, i % 2);
                assert_int_equal(seen.offset, 10000 + i);
                assert_int_equal(seen.gen_closed, i < 900);
                assert_int_equal(seen.gens, 4);
                assert_string_equal(seen.dedup_key, "msgid");
                assert_int_equal(ic.n, 1);
                assert_int_equal(ic.last.partition, 0);
                assert_int_equal(ic.last.offset, 20000 + i);
                assert_int_equal(ic.last.first_partition, i % 2);
                assert_int_equal(ic.last.first_offset, 10000 + i);
        }
        assert_int_equal(db_int(path, "SELECT COUNT(*) FROM anomalies WHERE "
                                      "offset_lo = 21001 AND offset_hi = "
                                      "21005"),
                         1);
        memset(&ic, 0, sizeof(ic));
        assert_int_equal(ledger_id_find(rd, "orders", "run3", 4, -1, &seen,
                                        id_copy_cb, &ic, err, sizeof(err)),
                         1);
        assert_true(seen.in_window);
        assert_int_equal(seen.gen_closed, 0);
        assert_int_equal(seen.partition, 1);
        assert_int_equal(seen.offset, 30003);
        assert_int_equal(ic.last.partition, 0);
        assert_int_equal(ic.last.offset, 21004);
        assert_int_equal(ic.last.first_offset, 30003);
        /* Seen once: in the window, no copy. */
        assert_int_equal(ledger_id_find(rd, "orders", "new", 3, -1, &seen,
                                        id_copy_cb, &ic, err, sizeof(err)),
                         0);
        assert_true(seen.in_window);
        assert_int_equal(seen.offset, 21000);
        /* Never seen, or not in that topic's window. */
        assert_int_equal(ledger_id_find(rd, "orders", "i1000", 5, -1, &seen,
                                        id_copy_cb, &ic, err, sizeof(err)),
                         0);
        assert_false(seen.in_window);
        assert_int_equal(seen.offset, -1);
        assert_int_equal(ledger_id_find(rd, "pay\"ments", "i1", 2, -1, &seen,
                                        id_copy_cb, &ic, err, sizeof(err)),
                         0);
        assert_false(seen.in_window);
        assert_int_equal(seen.gens, 0);
        assert_string_equal(seen.dedup_key, "");
        ledger_close(rd);
}

/* Generations of 300 ids (4800 / 16): 1000 ids, some batches crossing a
 * generation's end, make three closed generations (sorted into chunks of
 * 120) and an open one (in batches).  After a restart every one of the
 * 1000 is found again - closed ones through a chunk lookup - with the
 * offset of its first copy. */
static void test_id_windows_closed(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct ledger_anomaly_filter f = {
                .kind = "redelivered", .since_ms = -1, .limit = -1};
        struct dedup_tracker *tr;
        struct ledger *lg;
        char id[16], err[256];
        int i;

        (void)state;
        tr = reload_window(fx->a, &lg, parts, 4800);
        dedup_tracker_begin(tr, 1000);
        for (i = 0; i < 1000; i++) {
                snprintf(id, sizeof(id), "i%d", i);
                assert_int_equal(observe_id(tr, parts, (uint32_t)(i % 2),
                                            10000 + i, id),
                                 DEDUP_V_UNTRACKED);
                if (i % 170 == 169)
                        commit_ok(lg, tr, parts);
        }
        commit_ok(lg, tr, parts);
        assert_int_equal(
                db_int(fx->a, "SELECT COUNT(*) FROM msgid_gens WHERE closed"),
                3);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_chunks"),
                         9);
        assert_int_equal(
                db_int(fx->a, "SELECT SUM(length(entries)) FROM msgid_chunks"),
                900 * 32);
        assert_int_equal(
                db_int(fx->a, "SELECT SUM(length(entries)) FROM msgid_batches"),
                100 * 32);
        assert_int_equal(
                db_int(fx->a, "SELECT COUNT(DISTINCT gen) FROM msgid_batches"),
                1);
        dedup_tracker_free(tr);
        ledger_close(lg);

        tr = reload_window(fx->a, &lg, parts, 4800);
        dedup_tracker_begin(tr, 2000);
        for (i = 0; i < 1000; i++) {
                snprintf(id, sizeof(id), "i%d", i);
                assert_int_equal(observe_id(tr, parts, 0, 20000 + i, id),
                                 DEDUP_V_REDELIVERED);
        }
        assert_int_equal(observe_id(tr, parts, 0, 21000, "new"),
                         DEDUP_V_UNTRACKED);
        commit_ok(lg, tr, parts);
        for (i = 0; i < 1000; i += 37) {
                struct first_copy fc = {.offset = 20000 + i};
                if (ledger_anomalies_query(lg, &f, first_copy_cb, &fc, err,
                                           sizeof(err)))
                        fail_msg("ledger_anomalies_query: %s", err);
                assert_int_equal(fc.found, 1);
                assert_int_equal(fc.partition, i % 2);
                assert_int_equal(fc.first_offset, 10000 + i);
        }
        /* A run of five redelivered in a row, whose first copies are in a
         * row too: one anomaly. */
        for (i = 0; i < 5; i++) {
                snprintf(id, sizeof(id), "run%d", i);
                assert_int_equal(observe_id(tr, parts, 1, 30000 + i, id),
                                 DEDUP_V_UNTRACKED);
        }
        for (i = 0; i < 5; i++) {
                snprintf(id, sizeof(id), "run%d", i);
                assert_int_equal(observe_id(tr, parts, 0, 21001 + i, id),
                                 DEDUP_V_REDELIVERED);
        }
        commit_ok(lg, tr, parts);
        dedup_tracker_free(tr);
        ledger_close(lg);
        ids_find_check(fx->a);
}

/* A topic recreated: its state is retired in one transaction, the
 * evidence kept and tagged, the other topic untouched; the fingerprint
 * goes round the ledger with the offsets. */
static void test_topic_incarnation(void **state)
{
        static const struct rec log[] = {
                {1, 0, 0, P1, 0, 0},
                {1, 0, 1, P1, 0, 1},
                {1, 0, 2, P1, 0, 1}, /* a duplicate: incarnation 0 */
                {1, 1, 0, P1, 0, 0},
                {1, 2, 0, P1, 0, 0},
        };
        const struct fingerprint fp = {2, 77, 0x8000000000000005ULL, 6};
        const struct ledger_incarnation_part why = {0, "recreated", 3, 2, 0};
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct ledger_summary sum;
        struct dedup_tracker *tr;
        struct ledger *lg, *rd = NULL;
        struct seen s;
        int64_t inc = -1;
        char err[256];

        tr = reload(fx->a, &lg, parts);
        windows_ok(lg, tr, parts, "msgid");
        audit(tr, parts, log, 5, 1, 1000);
        assert_int_equal(observe_id(tr, parts, 0, 3, "m1"), DEDUP_V_UNTRACKED);
        assert_int_equal(observe_id(tr, parts, 2, 1, "m1"), DEDUP_V_UNTRACKED);
        parts[0].fp = fp;
        parts[1].fp.offset = parts[1].fp.ts_ms = -1;
        parts[2].fp = fp;
        parts[2].fp.offset = 1;
        commit_ok(lg, tr, parts);
        dedup_tracker_free(tr);
        ledger_close(lg);

        /* The fingerprint comes back with the offsets. */
        tr = reload(fx->a, &lg, parts);
        assert_int_equal(parts[0].next_offset, 4);
        assert_int_equal(parts[0].fp.offset, 2);
        assert_int_equal(parts[0].fp.ts_ms, 77);
        assert_true(parts[0].fp.lo == fp.lo && parts[0].fp.hi == fp.hi);
        assert_int_equal(parts[1].fp.offset, -1);
        assert_int_equal(parts[2].fp.offset, 1);
        assert_int_equal(ledger_topic_incarnation(lg, "orders", &inc, err,
                                                  sizeof(err)),
                         0);
        assert_int_equal(inc, 0);

        assert_int_equal(ledger_topic_incarnate(lg, "orders", &why, 1, &inc,
                                                err, sizeof(err)),
                         0);
        assert_int_equal(inc, 1);
        /* State of orders gone, evidence kept, pay"ments untouched. */
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM partitions "
                                       "WHERE topic = 'orders'"),
                         0);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM pairs WHERE "
                                       "topic = 'orders'"),
                         0);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_gens "
                                       "WHERE topic = 'orders'"),
                         0);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_batches "
                                       "WHERE gen NOT IN (SELECT gen FROM "
                                       "msgid_gens)"),
                         0);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM partitions "
                                       "WHERE topic = 'pay\"ments'"),
                         1);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM pairs WHERE "
                                       "topic = 'pay\"ments'"),
                         1);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_gens "
                                       "WHERE topic = 'pay\"ments'"),
                         1);
        assert_int_equal(db_int(fx->a, "SELECT SUM(records) FROM "
                                       "retired_partitions WHERE topic = "
                                       "'orders' AND incarnation = 0"),
                         5);
        assert_int_equal(db_int(fx->a, "SELECT SUM(duplicate) FROM "
                                       "retired_partitions"),
                         1);
        memset(&s, 0, sizeof(s));
        assert_int_equal(ledger_anomalies_foreach(lg, "orders", -1, seen_cb,
                                                  &s, err, sizeof(err)),
                         0);
        assert_int_equal(s.n, 2);
        assert_string_equal(s.kind[0], "coverage"); /* newest first */
        assert_int_equal(s.a[0].incarnation, 1);
        assert_int_equal(s.a[0].offset_lo, 0);
        assert_int_equal(s.a[0].offset_hi, 2);
        assert_int_equal(s.a[0].first_offset, 2);
        assert_int_equal(s.a[0].count, 3);
        assert_null(s.a[0].producer);
        assert_string_equal(s.kind[1], "duplicate");
        assert_int_equal(s.a[1].incarnation, 0);
        assert_null(s.a[1].reason);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM anomalies WHERE "
                                       "reason = 'recreated'"),
                         1);
        assert_int_equal(ledger_summary(lg, "orders", &sum, err, sizeof(err)),
                         0);
        assert_int_equal(sum.records, 0);
        assert_int_equal(sum.anomalies[DEDUP_KIND_DUPLICATE], 0);
        assert_int_equal(sum.coverage_gaps, 1);
        assert_int_equal(sum.coverage_records, 0);
        assert_int_equal(sum.pairs, 0);
        assert_int_equal(ledger_summary(lg, "pay\"ments", &sum, err,
                                        sizeof(err)),
                         0);
        assert_int_equal(sum.records, 2); /* one with an id only */
        assert_int_equal(sum.coverage_gaps, 0);
        dedup_tracker_free(tr);
        ledger_close(lg);

        /* Loaded again: orders starts from nothing, its old ids unknown;
         * pay"ments keeps its own. */
        tr = reload(fx->a, &lg, parts);
        windows_ok(lg, tr, parts, "msgid");
        assert_int_equal(parts[0].next_offset, -1);
        assert_int_equal(parts[1].next_offset, -1);
        assert_int_equal(parts[2].next_offset, 2);
        dedup_tracker_begin(tr, 2000);
        /* seq 0 again: a first record, not a duplicate */
        assert_int_equal(observe(tr, &log[0]), DEDUP_V_OK);
        assert_int_equal(observe_id(tr, parts, 0, 1, "m1"), DEDUP_V_UNTRACKED);
        assert_int_equal(observe_id(tr, parts, 2, 2, "m1"),
                         DEDUP_V_REDELIVERED);
        commit_ok(lg, tr, parts);

        /* A second time: the count goes on, only the current
         * incarnation's opening rows count as coverage. */
        assert_int_equal(ledger_topic_incarnate(lg, "orders", &why, 1, &inc,
                                                err, sizeof(err)),
                         0);
        assert_int_equal(inc, 2);
        assert_int_equal(ledger_summary(lg, "orders", &sum, err, sizeof(err)),
                         0);
        assert_int_equal(sum.coverage_gaps, 1);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM anomalies WHERE "
                                       "kind = 'coverage'"),
                         2);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM "
                                       "retired_partitions WHERE incarnation "
                                       "= 1"),
                         1);
        dedup_tracker_free(tr);
        ledger_close(lg);

        /* A reader cannot. */
        if (ledger_open_reader(&rd, fx->a, err, sizeof(err)))
                fail_msg("ledger_open_reader: %s", err);
        assert_int_equal(ledger_topic_incarnate(rd, "orders", &why, 1, &inc,
                                                err, sizeof(err)),
                         -1);
        ledger_close(rd);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
        const struct CMUnitTest tests[] = {
                T(test_open_reopen),
                T(test_reader_needs_ledger),
                T(test_lock),
                T(test_unwritable_refused),
                T(test_newer_schema_refused),
                T(test_commit_load_roundtrip),
                T(test_pid_survives_restart),
                T(test_fenced_evidence),
                T(test_late_record_after_restart),
                T(test_coverage_keeps_state),
                T(test_unknown_parts_keep_minus_one),
                T(test_anomalies_and_summary),
                T(test_coverage_gap),
                T(test_expired_pair_deleted),
                T(test_crash_between_batches),
                T(test_failed_commit_keeps_batch),
                T(test_long_binary_producer),
                T(test_id_windows),
                T(test_id_windows_closed),
                T(test_topic_incarnation),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
