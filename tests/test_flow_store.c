/*
 * test_flow_store.c - the flow engine's entries packed in the ledger
 * (schema/0016_flow_store.sql, auditor/ledger/flow_store.c): batches
 * closed into files every few views, entries retired past a tiny
 * --flow-max-ids and revived from those files, restarts that restore the
 * live entries from files and batches, and a kill inside a commit that
 * closes a file.  Every verdict is checked against the engine alone, fed
 * the same records with no bound and no ledger.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "../auditor/ledger/ledger.h"
#include "../auditor/ledger/ledger_flow.h"

#define N_SRC 300 /* source records */
#define LAG 40    /* the sink's copies trail the source by that many */
#define MAX_IDS 6 /* the bounded runs' --flow-max-ids */
#define GEN_VIEWS 16
#define EVERY 10 /* events per commit */
#define CRASH_EXIT 42

struct ev {
        int sink;
        uint32_t part;
        int64_t off;
        char id[32];
};

static struct ev evs[3 * N_SRC];
static size_t nev;

/* Source i goes to part 1 + i % 2; its copies (none when i % 13 == 0, two
 * when i % 17 == 0, else one) come LAG steps later on part 0; every 19th
 * step a sink record with no source. */
static void events_make(void)
{
        int64_t soff[3] = {0, 0, 0};
        size_t t;
        int c;

        nev = 0;
        for (t = 0; t < N_SRC + LAG; t++) {
                if (t < N_SRC) {
                        struct ev *e = &evs[nev++];
                        e->sink = 0;
                        e->part = 1 + (uint32_t)(t % 2);
                        e->off = soff[e->part]++;
                        snprintf(e->id, sizeof(e->id), "s%zu", t);
                }
                if (t >= LAG) {
                        size_t i = t - LAG;
                        int copies = i % 13 == 0 ? 0 : i % 17 == 0 ? 2 : 1;
                        for (c = 0; c < copies; c++) {
                                struct ev *e = &evs[nev++];
                                e->sink = 1;
                                e->part = 0;
                                e->off = soff[0]++;
                                snprintf(e->id, sizeof(e->id), "s%zu", i);
                        }
                }
                if (t % 19 == 0) {
                        struct ev *e = &evs[nev++];
                        e->sink = 1;
                        e->part = 0;
                        e->off = soff[0]++;
                        snprintf(e->id, sizeof(e->id), "u%zu", t);
                }
        }
}

static void apply(struct dedup_flow *fl, const struct ev *e)
{
        int rc = e->sink
                     ? dedup_flow_sink(fl, 0, e->off, 2000 + e->off, e->id,
                                       strlen(e->id))
                     : dedup_flow_source(fl, e->part, e->off, 1000 + e->off,
                                         e->id, strlen(e->id));
        assert_int_equal(rc, 0);
}

static void finish(struct dedup_flow *fl)
{
        dedup_flow_frontier(fl, 1, INT64_MAX);
        dedup_flow_frontier(fl, 2, INT64_MAX);
        dedup_flow_finish(fl, 0);
}

/* The engine alone: no bound, no ledger. */
static void oracle(struct dedup_flow_stats *st)
{
        struct dedup_flow_config fc;
        struct dedup_flow *fl;
        size_t k;

        dedup_flow_config_defaults(&fc);
        fc.by_frontier = 1;
        fc.max_ids = 1u << 20;
        fl = dedup_flow_new(&fc);
        assert_non_null(fl);
        for (k = 0; k < nev; k++)
                apply(fl, &evs[k]);
        finish(fl);
        dedup_flow_stats_get(fl, st);
        dedup_flow_free(fl);
}

struct fx {
        char dir[64];
        char path[2][96];
        struct ledger_part parts[3];
};

static int fx_setup(void **state)
{
        struct fx *fx = calloc(1, sizeof(*fx));
        uint32_t i;

        if (!fx)
                return -1;
        snprintf(fx->dir, sizeof(fx->dir), "/tmp/eosaudit-fstore-XXXXXX");
        if (!mkdtemp(fx->dir))
                return -1;
        for (i = 0; i < 2; i++)
                snprintf(fx->path[i], sizeof(fx->path[i]), "%s/l%u.db",
                         fx->dir, i);
        for (i = 0; i < 3; i++) {
                fx->parts[i].topic = i ? "in" : "out";
                fx->parts[i].partition = i ? (int32_t)i - 1 : 0;
                fx->parts[i].part = i;
                fx->parts[i].coverage_lo = fx->parts[i].coverage_hi = -1;
        }
        events_make();
        *state = fx;
        return 0;
}

static int fx_teardown(void **state)
{
        struct fx *fx = *state;

        ledger_remove(fx->path[0]);
        ledger_remove(fx->path[1]);
        rmdir(fx->dir);
        free(fx);
        return 0;
}

struct run {
        struct ledger *lg;
        struct dedup_tracker *tr;
        struct dedup_flow *fl;
};

static int run_open(struct fx *fx, const char *path, struct run *r)
{
        struct dedup_config dc;
        struct dedup_flow_config fc;
        char err[256];
        uint32_t i;

        if (ledger_open(&r->lg, path, err, sizeof(err)))
                return -1;
        ledger_flow_gen_views_set(r->lg, GEN_VIEWS);
        dedup_config_defaults(&dc);
        r->tr = dedup_tracker_new(&dc);
        if (!r->tr)
                return -1;
        for (i = 0; i < 3; i++)
                if (dedup_tracker_part_add(r->tr, i, 0))
                        return -1;
        dedup_flow_config_defaults(&fc);
        fc.by_frontier = 1;
        fc.max_ids = MAX_IDS;
        r->fl = dedup_flow_new(&fc);
        if (!r->fl)
                return -1;
        return ledger_flow_load(r->lg, r->fl, fx->parts, 3, "exactly-one", err,
                                sizeof(err));
}

static void run_close(struct run *r)
{
        ledger_close(r->lg);
        dedup_tracker_free(r->tr);
        dedup_flow_free(r->fl);
}

static int commit(struct fx *fx, struct run *r)
{
        char err[256];

        fx->parts[0].dirty = 1;
        return ledger_commit(r->lg, r->tr, fx->parts, 3, NULL, err,
                             sizeof(err));
}

/* Events [from, to), committed every EVERY; a restart every restart
 * events (0: none). */
static void play(struct fx *fx, const char *path, struct run *r, size_t from,
                 size_t to, size_t restart)
{
        size_t k;

        for (k = from; k < to; k++) {
                apply(r->fl, &evs[k]);
                if ((k + 1) % EVERY == 0 || k + 1 == to)
                        assert_int_equal(commit(fx, r), 0);
                if (restart && (k + 1) % restart == 0) {
                        run_close(r);
                        assert_int_equal(run_open(fx, path, r), 0);
                }
        }
}

static void summary_eq(struct ledger *lg, const struct dedup_flow_stats *st)
{
        struct ledger_flow_summary s;
        char err[256];

        assert_int_equal(ledger_flow_summary(lg, &s, err, sizeof(err)), 0);
        assert_int_equal(s.source_records, st->source_records);
        assert_int_equal(s.delivered, st->c.outcome[DEDUP_FLOW_DELIVERED]);
        assert_int_equal(s.lost, st->c.outcome[DEDUP_FLOW_LOST]);
        assert_int_equal(s.duplicated, st->c.outcome[DEDUP_FLOW_DUPLICATED]);
        assert_int_equal(s.duplicate_copies, st->c.duplicate_copies);
        assert_int_equal(s.unexpected, st->c.outcome[DEDUP_FLOW_UNEXPECTED]);
        assert_int_equal(s.pending, st->c.outcome[DEDUP_FLOW_PENDING]);
        assert_int_equal(s.awaiting, st->c.outcome[DEDUP_FLOW_AWAITING]);
        assert_int_equal(s.sink_records, st->sink_records);
        assert_int_equal(s.lat_count, st->lat_count);
}

/* "<path>-ids/<n>SUFFIX" files. */
static int files_named(const char *path, const char *suffix)
{
        char dir[128];
        struct dirent *de;
        DIR *d;
        int n = 0;

        snprintf(dir, sizeof(dir), "%s-ids", path);
        d = opendir(dir);
        if (!d)
                return 0;
        while ((de = readdir(d))) {
                size_t len = strlen(de->d_name), sl = strlen(suffix);
                if (len > sl && !strcmp(de->d_name + len - sl, suffix))
                        n++;
        }
        closedir(d);
        return n;
}

static int flow_files(const char *path)
{
        return files_named(path, ".flow");
}

/* The batches' logs ("<n>.flowlog", schema/0018_flow_log.sql). */
static int log_files(const char *path)
{
        return files_named(path, ".flowlog");
}

/* The size of the log flow_log names, or -1. */
static int64_t log_size(const char *path, int64_t log)
{
        char f[160];
        struct stat sb;

        snprintf(f, sizeof(f), "%s-ids/%lld.flowlog", path, (long long)log);
        return stat(f, &sb) ? -1 : (int64_t)sb.st_size;
}

static int64_t db_int(const char *path, const char *sql)
{
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        int64_t v = -1;

        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) ==
                SQLITE_OK &&
            sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
                v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        sqlite3_close(db);
        return v;
}

static int evid_cb(void *opaque, const struct ledger_flow_row *row)
{
        (void)row;
        (*(uint64_t *)opaque)++;
        return 0;
}

/* Retired past a bound of 6 among 300 ids, revived from files and
 * batches, restarted every 70 events: the engine's own verdicts. */
static void test_store_bounded(void **state)
{
        struct fx *fx = *state;
        struct dedup_flow_stats want, got;
        uint64_t evid = 0, bad;
        struct run r;
        char err[256];

        oracle(&want);
        /* The oracle is what the script says, so the test tests something. */
        assert_int_equal(want.source_records, N_SRC);
        assert_true(want.c.outcome[DEDUP_FLOW_LOST] > 0);
        assert_true(want.c.outcome[DEDUP_FLOW_DUPLICATED] > 0);
        assert_true(want.c.outcome[DEDUP_FLOW_UNEXPECTED] > 0);

        assert_int_equal(run_open(fx, fx->path[0], &r), 0);
        play(fx, fx->path[0], &r, 0, nev, 70);
        finish(r.fl);
        assert_int_equal(commit(fx, &r), 0);
        dedup_flow_stats_get(r.fl, &got);
        assert_int_equal(got.c.outcome[DEDUP_FLOW_LOST],
                         want.c.outcome[DEDUP_FLOW_LOST]);
        summary_eq(r.lg, &want);
        /* Files were written, each named by a row, and nothing else. */
        assert_true(flow_files(fx->path[0]) > 3);
        assert_int_equal(flow_files(fx->path[0]),
                         db_int(fx->path[0], "SELECT count(*) FROM "
                                             "flow_gens"));
        /* One log, the one its row names, holding what the row says; the
         * batches are no longer blobs. */
        assert_int_equal(log_files(fx->path[0]), 1);
        assert_true(db_int(fx->path[0], "SELECT bytes FROM flow_log") > 0);
        assert_int_equal(log_size(fx->path[0],
                                  db_int(fx->path[0], "SELECT log FROM "
                                                      "flow_log")),
                         db_int(fx->path[0], "SELECT bytes FROM flow_log"));
        assert_int_equal(db_int(fx->path[0], "SELECT count(*) FROM "
                                             "flow_batches"),
                         0);
        /* One evidence row per bad entry: lost and duplicated source
         * ids, unexpected sink records (one each here), no other. */
        bad = want.c.outcome[DEDUP_FLOW_LOST] +
              want.c.outcome[DEDUP_FLOW_DUPLICATED] +
              want.c.outcome[DEDUP_FLOW_UNEXPECTED];
        assert_int_equal(ledger_flow_evidence_foreach(r.lg, NULL, 0, -1,
                                                      evid_cb, &evid, err,
                                                      sizeof(err)),
                         0);
        assert_int_equal(evid, bad);
        assert_int_equal(db_int(fx->path[0], "SELECT count(*) FROM "
                                             "flow_entries"),
                         (int64_t)bad);
        run_close(&r);

        /* A restart after the end restores the same figures. */
        assert_int_equal(run_open(fx, fx->path[0], &r), 0);
        dedup_flow_stats_get(r.fl, &got);
        assert_int_equal(got.c.outcome[DEDUP_FLOW_DELIVERED],
                         want.c.outcome[DEDUP_FLOW_DELIVERED]);
        assert_int_equal(got.c.outcome[DEDUP_FLOW_DUPLICATED],
                         want.c.outcome[DEDUP_FLOW_DUPLICATED]);
        run_close(&r);
}

/* Where the sink (part 0) and source part 1 are truncated, mid-run, in
 * test_store_truncated: a sink offset 25 events back, a source offset 10
 * back (records whose copies, LAG behind, are not read yet). */
static void trunc_points(size_t k, int64_t *dsink, int64_t *dsrc)
{
        size_t j;

        *dsink = *dsrc = -1;
        for (j = k - 25; j > 0 && *dsink < 0; j--)
                if (evs[j].sink)
                        *dsink = evs[j].off;
        for (j = k - 10; j > 0 && *dsrc < 0; j--)
                if (!evs[j].sink && evs[j].part == 1)
                        *dsrc = evs[j].off;
        assert_true(*dsink > 0 && *dsrc > 0);
}

static int gone_cb(void *opaque, const struct dedup_flow_view *v)
{
        if (v->gone)
                (*(uint64_t *)opaque)++;
        return 0;
}

static uint64_t gone_live(struct dedup_flow *fl)
{
        uint64_t n = 0;

        assert_int_equal(dedup_flow_foreach(fl, DEDUP_FLOW__OUTCOMES, gone_cb,
                                            &n),
                         0);
        return n;
}

/* The sink and a source truncated half way (issue 34): the bounded run
 * through the ledger, its retired entries corrected in the store, gives
 * the figures of the engine alone told the same, with restarts before
 * and after, and its evidence rows are exactly its bad verdicts. */
static void test_store_truncated(void **state)
{
        struct fx *fx = *state;
        struct dedup_flow_stats want, got, plain, mid;
        struct dedup_flow_config fc;
        struct dedup_flow *fl;
        uint64_t evid = 0, changed = 0, ch2, ngone;
        size_t k, half = nev / 2;
        int64_t dsink, dsrc;
        struct run r;
        char err[256];

        trunc_points(half, &dsink, &dsrc);
        oracle(&plain);
        dedup_flow_config_defaults(&fc);
        fc.by_frontier = 1;
        fc.max_ids = 1u << 20;
        fl = dedup_flow_new(&fc);
        assert_non_null(fl);
        for (k = 0; k < half; k++)
                apply(fl, &evs[k]);
        assert_int_equal(dedup_flow_truncated(fl, DEDUP_FLOW_SIDE_SINK, 0,
                                              dsink, &ch2),
                         0);
        assert_true(ch2 > 0);
        assert_int_equal(dedup_flow_truncated(fl, DEDUP_FLOW_SIDE_SOURCE, 1,
                                              dsrc, &ch2),
                         0);
        assert_true(ch2 > 0);
        for (; k < nev; k++)
                apply(fl, &evs[k]);
        finish(fl);
        dedup_flow_stats_get(fl, &want);
        dedup_flow_free(fl);
        /* The truncations changed something: more lost, fewer
         * delivered, gone sources pending for good... */
        assert_true(want.c.outcome[DEDUP_FLOW_LOST] >
                    plain.c.outcome[DEDUP_FLOW_LOST]);
        assert_true(want.c.outcome[DEDUP_FLOW_DELIVERED] <
                    plain.c.outcome[DEDUP_FLOW_DELIVERED]);
        /* ...but the copies of the gone ones, read later, delivered. */
        assert_int_equal(want.c.outcome[DEDUP_FLOW_PENDING], 0);

        assert_int_equal(run_open(fx, fx->path[1], &r), 0);
        play(fx, fx->path[1], &r, 0, half, 70);
        run_close(&r);
        assert_int_equal(run_open(fx, fx->path[1], &r), 0);
        assert_int_equal(ledger_flow_truncated(r.lg, DEDUP_FLOW_SIDE_SINK, 0,
                                               dsink, &changed, err,
                                               sizeof(err)),
                         0);
        assert_true(changed > 0);
        assert_int_equal(ledger_flow_truncated(r.lg, DEDUP_FLOW_SIDE_SOURCE, 1,
                                               dsrc, &changed, err,
                                               sizeof(err)),
                         0);
        assert_true(changed > 0);
        assert_int_equal(commit(fx, &r), 0);
        dedup_flow_stats_get(r.fl, &mid);
        ngone = gone_live(r.fl);
        assert_true(ngone > 0);
        run_close(&r);
        /* Restored as it was: its gone records too. */
        assert_int_equal(run_open(fx, fx->path[1], &r), 0);
        dedup_flow_stats_get(r.fl, &got);
        assert_memory_equal(&got.c, &mid.c, sizeof(got.c));
        assert_int_equal(gone_live(r.fl), ngone);
        play(fx, fx->path[1], &r, half, nev, 70);
        finish(r.fl);
        assert_int_equal(commit(fx, &r), 0);
        dedup_flow_stats_get(r.fl, &got);
        assert_memory_equal(&got.c, &want.c, sizeof(got.c));
        summary_eq(r.lg, &want);
        assert_int_equal(ledger_flow_evidence_foreach(r.lg, NULL, 0, -1,
                                                      evid_cb, &evid, err,
                                                      sizeof(err)),
                         0);
        assert_int_equal(evid, want.c.outcome[DEDUP_FLOW_LOST] +
                                   want.c.outcome[DEDUP_FLOW_DUPLICATED] +
                                   want.c.outcome[DEDUP_FLOW_UNEXPECTED]);
        run_close(&r);
        assert_int_equal(run_open(fx, fx->path[1], &r), 0);
        dedup_flow_stats_get(r.fl, &got);
        assert_memory_equal(&got.c, &want.c, sizeof(got.c));
        run_close(&r);
}

static void crash_hook(void *opaque)
{
        (void)opaque;
        _exit(CRASH_EXIT); /* as if killed just before COMMIT */
}

/* The child: commits up to k, then dies inside the next commit, which
 * closes the batches into a file (written, never named). */
static int crash_child(struct fx *fx, size_t k)
{
        struct run r;
        size_t i;

        if (run_open(fx, fx->path[1], &r))
                return 1;
        for (i = 0; i < k; i++) {
                apply(r.fl, &evs[i]);
                if ((i + 1) % EVERY == 0 && commit(fx, &r))
                        return 2;
        }
        for (; i < k + EVERY; i++)
                apply(r.fl, &evs[i]);
        ledger_commit_hook_set(r.lg, crash_hook, NULL);
        commit(fx, &r);
        return 3; /* the hook did not run */
}

/* A kill -9 inside a commit that closes a file: the restart has exactly
 * the last commit's state (the file no row names is removed), and
 * replaying from there gives the engine's own verdicts. */
static void test_store_crash(void **state)
{
        struct fx *fx = *state;
        struct dedup_flow_stats want, at_k;
        size_t k = 20 * EVERY;
        struct run r;
        int status, files;
        int64_t gens;
        pid_t pid;

        oracle(&want);
        /* The reference: the same events up to k, uninterrupted. */
        assert_int_equal(run_open(fx, fx->path[0], &r), 0);
        play(fx, fx->path[0], &r, 0, k, 0);
        dedup_flow_stats_get(r.fl, &at_k);
        run_close(&r);

        fflush(NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(crash_child(fx, k));
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), CRASH_EXIT);

        /* The dying commit wrote its file; no row names it. */
        gens = db_int(fx->path[1], "SELECT count(*) FROM flow_gens");
        files = flow_files(fx->path[1]);
        assert_true(gens > 0);
        assert_int_equal(files, gens + 1);
        /* ... and the next log, which no row names either. */
        assert_int_equal(log_files(fx->path[1]), 2);

        assert_int_equal(run_open(fx, fx->path[1], &r), 0);
        assert_int_equal(flow_files(fx->path[1]), gens);
        assert_int_equal(log_files(fx->path[1]), 1);
        summary_eq(r.lg, &at_k);
        play(fx, fx->path[1], &r, k, nev, 0);
        finish(r.fl);
        assert_int_equal(commit(fx, &r), 0);
        summary_eq(r.lg, &want);
        run_close(&r);
}

static void db_exec(const char *path, const char *sql)
{
        sqlite3 *db = NULL;

        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
}

/* The log flow_log names: its path into f, its number. */
static int64_t log_path(const char *path, char *f, size_t size)
{
        int64_t log = db_int(path, "SELECT log FROM flow_log");

        snprintf(f, size, "%s-ids/%lld.flowlog", path, (long long)log);
        return log;
}

/* Events [0, k) of the script into a fresh ledger at path, committed and
 * closed; their figures into at_k. */
static void run_to(struct fx *fx, const char *path, size_t k,
                   struct dedup_flow_stats *at_k)
{
        struct run r;

        assert_int_equal(run_open(fx, path, &r), 0);
        play(fx, path, &r, 0, k, 0);
        dedup_flow_stats_get(r.fl, at_k);
        run_close(&r);
}

/* Reopens the ledger at path, which must hold at_k, and plays the rest of
 * the script: the oracle's figures, before and after another restart. */
static void run_rest(struct fx *fx, const char *path, size_t k,
                     const struct dedup_flow_stats *at_k,
                     const struct dedup_flow_stats *want)
{
        struct run r;

        assert_int_equal(run_open(fx, path, &r), 0);
        summary_eq(r.lg, at_k);
        play(fx, path, &r, k, nev, 0);
        finish(r.fl);
        assert_int_equal(commit(fx, &r), 0);
        summary_eq(r.lg, want);
        run_close(&r);
        assert_int_equal(run_open(fx, path, &r), 0);
        summary_eq(r.lg, want);
        run_close(&r);
}

/* A commit that wrote its views to the log and died before its
 * transaction committed leaves bytes past the length flow_log says: a
 * restart reads none of them, and the next commit writes over them. */
static void test_store_log_tail(void **state)
{
        struct fx *fx = *state;
        const char *path = fx->path[0];
        struct dedup_flow_stats want, at_k;
        size_t k = 7 * EVERY + 3;
        unsigned char junk[3 * 128];
        char f[160];
        int64_t bytes;
        size_t i;
        FILE *fp;

        oracle(&want);
        run_to(fx, path, k, &at_k);
        bytes = db_int(path, "SELECT bytes FROM flow_log");
        assert_true(bytes > 0);
        assert_int_equal(log_size(path, log_path(path, f, sizeof(f))), bytes);
        /* Views that would count if read: the log's first three, made
         * held, lost (source seen, due, no copy) and later than all. */
        fp = fopen(f, "rb");
        assert_non_null(fp);
        assert_int_equal(fread(junk, 1, sizeof(junk), fp), sizeof(junk));
        fclose(fp);
        for (i = 0; i < 3; i++) {
                unsigned char *v = junk + i * 128;
                memset(v + 44, 0, 4);
                v[88] = 2 | 1 << 4 | 1 << 6 | 1 << 7;
                v[89] = 0;
        }
        fp = fopen(f, "ab");
        assert_non_null(fp);
        assert_int_equal(fwrite(junk, 1, sizeof(junk), fp), sizeof(junk));
        assert_int_equal(fclose(fp), 0);

        run_rest(fx, path, k, &at_k, &want);
        /* Whatever log is current holds exactly what its row says. */
        assert_int_equal(log_size(path, db_int(path, "SELECT log FROM "
                                                     "flow_log")),
                         db_int(path, "SELECT bytes FROM flow_log"));
}

/* A ledger from before the log (schema 0016 and 0017) kept its batches as
 * blobs in flow_batches: they are read, before the log's views, and
 * deleted when the batches close into a file. */
static void test_store_batches_blob(void **state)
{
        struct fx *fx = *state;
        const char *path = fx->path[0];
        struct dedup_flow_stats want, at_k;
        size_t k = 7 * EVERY + 3, len;
        sqlite3_stmt *st = NULL;
        sqlite3 *db = NULL;
        unsigned char *blob;
        char f[160];
        FILE *fp;

        oracle(&want);
        run_to(fx, path, k, &at_k);
        /* The log's views as one blob row, as 0016 wrote them. */
        log_path(path, f, sizeof(f));
        len = (size_t)db_int(path, "SELECT bytes FROM flow_log");
        assert_true(len > 0);
        blob = malloc(len);
        assert_non_null(blob);
        fp = fopen(f, "rb");
        assert_non_null(fp);
        assert_int_equal(fread(blob, 1, len, fp), len);
        fclose(fp);
        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(db,
                                            "INSERT INTO flow_batches (views) "
                                            "VALUES (?1)",
                                            -1, &st, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_bind_blob(st, 1, blob, (int)len,
                                           SQLITE_STATIC),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        sqlite3_finalize(st);
        assert_int_equal(sqlite3_exec(db, "DELETE FROM flow_log", NULL, NULL,
                                      NULL),
                         SQLITE_OK);
        sqlite3_close(db);
        free(blob);
        assert_int_equal(unlink(f), 0);

        run_rest(fx, path, k, &at_k, &want);
        /* Closed into files since: the blob is gone, a log took over. */
        assert_int_equal(db_int(path, "SELECT count(*) FROM flow_batches"), 0);
        assert_int_equal(log_files(path), 1);
}

/* A flow_entries row as a ledger from before the packed store wrote it. */
static void legacy_row(const char *path, int64_t seq, const char *id,
                       const char *outcome, int copies)
{
        struct dedup_id h;
        char sql[1024];

        dedup_id_hash(id, strlen(id), &h);
        snprintf(sql, sizeof(sql),
                 "INSERT INTO flow_entries (seq, id_lo, id_hi, outcome, "
                 "live, src_topic, src_partition, src_offset, src_ts, "
                 "copies, sink_topic, sink_partition, sink_offset, "
                 "sink_topic_last, sink_partition_last, sink_offset_last, "
                 "sink_ts, born, due, latency_done, id, id_len, prior) "
                 "VALUES (%lld, %lld, %lld, '%s', 1, 'in', 0, %lld, 1000, "
                 "%d, %s, %s, %s, %s, %s, %s, %s, 0, 0, %d, '%s', %zu, 0)",
                 (long long)seq, (long long)h.lo, (long long)h.hi, outcome,
                 (long long)seq - 1, copies, copies ? "'out'" : "NULL",
                 copies ? "0" : "NULL", copies ? "0" : "NULL",
                 copies ? "'out'" : "NULL", copies ? "0" : "NULL",
                 copies ? "0" : "NULL", copies ? "1040" : "NULL", copies, id,
                 strlen(id));
        db_exec(path, sql);
}

/* A ledger whose flow entries are rows (before schema 0016): its first
 * load converts them to packed views, keeps only evidence rows, and the
 * flow goes on from them. */
static void test_store_legacy(void **state)
{
        struct fx *fx = *state;
        const char *path = fx->path[0];
        struct ledger_flow_summary s;
        struct run r;
        char err[256];

        /* The state row as a run leaves it: a delivered, b pending. */
        assert_int_equal(run_open(fx, path, &r), 0);
        assert_int_equal(dedup_flow_source(r.fl, 1, 0, 1000, "a", 1), 0);
        assert_int_equal(dedup_flow_source(r.fl, 1, 1, 1000, "b", 1), 0);
        assert_int_equal(dedup_flow_sink(r.fl, 0, 0, 1040, "a", 1), 0);
        assert_int_equal(commit(fx, &r), 0);
        run_close(&r);
        /* ... with its entries as rows instead. */
        db_exec(path, "DELETE FROM flow_batches; DELETE FROM flow_gens; "
                      "DELETE FROM flow_log; DELETE FROM flow_entries");
        legacy_row(path, 1, "a", "delivered", 1);
        legacy_row(path, 2, "b", "pending", 0);

        assert_int_equal(run_open(fx, path, &r), 0);
        assert_int_equal(db_int(path, "SELECT count(*) FROM flow_entries"), 0);
        assert_true(db_int(path, "SELECT bytes FROM flow_log") > 0);
        /* b's copy, and a second copy of a: both entries came back. */
        assert_int_equal(dedup_flow_sink(r.fl, 0, 1, 1050, "b", 1), 0);
        assert_int_equal(dedup_flow_sink(r.fl, 0, 2, 1060, "a", 1), 0);
        assert_int_equal(commit(fx, &r), 0);
        assert_int_equal(ledger_flow_summary(r.lg, &s, err, sizeof(err)), 0);
        assert_int_equal(s.source_records, 2);
        assert_int_equal(s.delivered, 1);
        assert_int_equal(s.duplicated, 1);
        assert_int_equal(s.pending, 0);
        assert_int_equal(db_int(path, "SELECT count(*) FROM flow_entries "
                                      "WHERE outcome = 'duplicated'"),
                         1);
        run_close(&r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_store_bounded, fx_setup,
                                            fx_teardown),
            cmocka_unit_test_setup_teardown(test_store_truncated, fx_setup,
                                            fx_teardown),
            cmocka_unit_test_setup_teardown(test_store_crash, fx_setup,
                                            fx_teardown),
            cmocka_unit_test_setup_teardown(test_store_legacy, fx_setup,
                                            fx_teardown),
            cmocka_unit_test_setup_teardown(test_store_log_tail, fx_setup,
                                            fx_teardown),
            cmocka_unit_test_setup_teardown(test_store_batches_blob, fx_setup,
                                            fx_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
