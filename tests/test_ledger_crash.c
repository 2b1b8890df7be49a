/*
 * test_ledger_crash.c - the SQLite ledger: coverage gaps and expiry, a
 * crash between batches, failed commits, long binary producer names.
 * The fixture (ledger_fixture.h) is shared with test_ledger.c.
 */
#include "ledger_fixture.h"

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
            {1, 1, 1, P1, 0, 15}, /* gap 11..14 stays open */
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
    {1, 0, 2, P1, 0, 4}, /* gap 2..3 */
    {1, 0, 3, PQ, 0, 0},
    {1, 0, 4, P1, 0, 5},
    {1, 0, 5, P1, 0, 1},      /* duplicate */
    {1, 0, 6, PQ, -1, -1},    /* malformed */
    {1, 1, 10, PBIN, 1, 100}, /* baseline */
    {1, 1, 11, PBIN, 1, 101},
    {1, 1, 12, PBIN, 1, 103}, /* gap 102..102 */
    {1, 2, 0, NULL, -1, -1},  /* untracked */
    {1, 2, 1, PQ, 0, 0},
    {2, 0, 7, P1, 0, 2}, /* out of order; 3..3 confirmed */
    {2, 0, 8, P1, 0, 6},
    {2, 0, 9, PQ, 1, 0},      /* new session */
    {2, 0, 10, PQ, 0, 1},     /* fenced */
    {2, 0, 11, P1, 0, 6},     /* duplicate of offset 8 */
    {2, 1, 13, PBIN, 1, 102}, /* out of order, gap closed */
    {2, 1, 14, PBIN, 1, 104},
    {2, 2, 5, PQ, 0, 7}, /* offsets 2..4 deleted: baseline */
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

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_coverage_gap),          T(test_expired_pair_deleted),
            T(test_crash_between_batches), T(test_failed_commit_keeps_batch),
            T(test_long_binary_producer),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
