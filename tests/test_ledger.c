/*
 * test_ledger.c - the SQLite ledger: open, lock, migrations, commit and
 * load round trips, anomalies and the summary.  Crash between batches,
 * coverage gaps and expiry are in test_ledger_crash.c; id windows and
 * topic incarnations in test_ledger_ids.c; the fixture in ledger_fixture.h.
 *
 * Each test works in its own directory under /tmp, removed afterwards.
 * State is compared as text dumps (of the tracker, and of the ledger's
 * tables through a separate SQLite connection) so that a mismatch shows
 * exactly what differs.
 */
#include "ledger_fixture.h"

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

        assert_int_equal(ledger_open_reader(&rd, fx->b, err, sizeof(err)), -1);
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
        assert_int_equal(ledger_open_reader(&lg, fx->a, err, sizeof(err)), -1);
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
    {1, 0, 0, P1, 0, 0},     /* ok */
    {1, 0, 1, P1, 0, 1},     /* ok */
    {1, 0, 2, P1, 0, 5},     /* gap 2..4 opened */
    {1, 0, 3, P1, 0, 3},     /* out of order: gaps 2..2, 4..4 */
    {1, 0, 4, P1, 0, 1},     /* duplicate of offset 1 */
    {1, 0, 5, PQ, 0, 0},     /* ok */
    {1, 0, 6, PQ, 1, 0},     /* new session */
    {1, 0, 7, PQ, 0, 1},     /* fenced */
    {1, 0, 8, P1, -1, -1},   /* malformed: no epoch, no seq */
    {1, 0, 9, NULL, -1, -1}, /* untracked */
    {1, 0, 10, PBIN, 3, 7},  /* from log start: gap 0..6 */
    /* part 1 */
    {1, 1, 100, P1, 2, 40},  /* baseline */
    {1, 1, 101, P1, 2, 41},  /* ok */
    {1, 1, 102, PBIN, 7, 9}, /* baseline */
    /* part 2 */
    {1, 2, 0, PQ, 0, 3}, /* baseline */
    {1, 2, 1, PQ, 0, 3}, /* duplicate */
    {1, 2, 2, PQ, 0, 4}, /* ok */
};
#define MIXED_N (sizeof(mixed_log) / sizeof(mixed_log[0]))

/* What happens next to a tracker; run on the original and the reloaded. */
static const struct rec mixed_next[] = {
    {2, 0, 11, P1, 0, 2},    /* fills gap 2..2 */
    {2, 0, 12, P1, 0, 1},    /* duplicate of offset 1 (history) */
    {2, 0, 13, PQ, 0, 9},    /* fenced */
    {2, 0, 14, PBIN, 3, 3},  /* fills the gap */
    {2, 1, 103, PBIN, 7, 9}, /* duplicate */
    {2, 2, 3, PQ, 0, 2},     /* duplicate */
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
                                      int64_t offset, const char *producer,
                                      int64_t pid, int32_t epoch, int64_t seq,
                                      int64_t ts)
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
        assert_int_equal(
            dedup_tracker_part_counts(tr, 0)->anomalies[DEDUP_KIND_FENCED], 2);
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
        assert_int_equal(
            dedup_tracker_part_counts(tr, 0)->anomalies[DEDUP_KIND_DUPLICATE],
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
                static const char *const kinds[] = {"gap",         "gap",
                                                    "gap",         "malformed",
                                                    "fenced",      "duplicate",
                                                    "out_of_order"};
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
        assert_int_equal(ledger_anomalies_foreach(rd, "orders", 2, seen_cb, &s,
                                                  err, sizeof(err)),
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
        assert_int_equal(ledger_anomalies_foreach(rd, "none", -1, seen_cb, &s,
                                                  err, sizeof(err)),
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
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
