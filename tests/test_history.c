/*
 * test_history.c - the ledger's per-minute history (schema/0003_history.sql,
 * auditor/ledger/history.c): commits add what they counted, once; a
 * rolled-back commit adds nothing; coverage gaps add their offsets; rows
 * older than LEDGER_HISTORY_MINUTES go; topics are summed or kept apart.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "../auditor/ledger/ledger.h"
#include "../base/clock.h"

#define NPARTS 2

struct fx {
        char dir[64];
        char db[128];
        struct ledger *lg;
        struct dedup_tracker *tr;
        struct ledger_part parts[NPARTS];
};

static int fx_setup(void **state)
{
        static const char *const topics[NPARTS] = {"orders", "payments"};
        struct dedup_config conf;
        struct fx *fx = calloc(1, sizeof(*fx));
        char err[256];
        uint32_t i;

        if (!fx)
                return -1;
        snprintf(fx->dir, sizeof(fx->dir), "/tmp/eosaudit-history-XXXXXX");
        if (!mkdtemp(fx->dir))
                return -1;
        snprintf(fx->db, sizeof(fx->db), "%s/h.db", fx->dir);
        if (ledger_open(&fx->lg, fx->db, err, sizeof(err)))
                return -1;
        dedup_config_defaults(&conf);
        conf.gap_grace_records = 1; /* the next record confirms a gap */
        conf.gap_grace_ms = 0;
        conf.idle_ttl_ms = 0;
        fx->tr = dedup_tracker_new(&conf);
        if (!fx->tr)
                return -1;
        for (i = 0; i < NPARTS; i++) {
                fx->parts[i].topic = topics[i];
                fx->parts[i].partition = 0;
                fx->parts[i].part = i;
                fx->parts[i].next_offset = -1;
                fx->parts[i].from_log_start = 1;
                fx->parts[i].coverage_lo = fx->parts[i].coverage_hi = -1;
                if (dedup_tracker_part_add(fx->tr, i, 1))
                        return -1;
        }
        *state = fx;
        return 0;
}

static int fx_teardown(void **state)
{
        struct fx *fx = *state;

        dedup_tracker_free(fx->tr);
        ledger_close(fx->lg);
        ledger_remove(fx->db);
        rmdir(fx->dir);
        free(fx);
        return 0;
}

/* One record of producer p1 on part (seq < 0: no eos.* header). */
static void observe(struct fx *fx, uint32_t part, int64_t seq)
{
        struct dedup_hdrs h;
        char num[32];
        int n;

        dedup_hdrs_init(&h);
        if (seq >= 0) {
                dedup_hdrs_feed(&h, "eos.producer", 12, "p1", 2);
                dedup_hdrs_feed(&h, "eos.epoch", 9, "0", 1);
                n = snprintf(num, sizeof(num), "%lld", (long long)seq);
                dedup_hdrs_feed(&h, "eos.seq", 7, num, (size_t)n);
        }
        dedup_tracker_observe(fx->tr, part,
                              fx->parts[part].next_offset < 0
                                  ? 0
                                  : fx->parts[part].next_offset,
                              &h);
        fx->parts[part].next_offset = (fx->parts[part].next_offset < 0
                                           ? 0
                                           : fx->parts[part].next_offset) +
                                      1;
        fx->parts[part].dirty = 1;
}

static void commit_ok(struct fx *fx)
{
        char err[256];

        dedup_tracker_tick(fx->tr);
        if (ledger_commit(fx->lg, fx->tr, fx->parts, NPARTS, NULL, err,
                          sizeof(err)))
                fail_msg("ledger_commit: %s", err);
}

struct walk {
        struct ledger_history_point sum;
        size_t n;
        int64_t first_ms, last_ms;
        int ordered;
};

static int walk_cb(void *opaque, const struct ledger_history_point *p)
{
        struct walk *w = opaque;

        if (w->n && p->minute_ms <= w->last_ms)
                w->ordered = 0;
        if (!w->n)
                w->first_ms = p->minute_ms;
        w->last_ms = p->minute_ms;
        assert_int_equal(p->minute_ms % LEDGER_HISTORY_MINUTE_MS, 0);
        w->sum.records += p->records;
        w->sum.untracked += p->untracked;
        w->sum.anomalous += p->anomalous;
        w->sum.gaps += p->gaps;
        w->sum.missing += p->missing;
        w->sum.unaudited += p->unaudited;
        w->n++;
        return 0;
}

static struct walk walk(struct fx *fx, const char *topic, int64_t since_ms)
{
        struct walk w;
        char err[256];

        memset(&w, 0, sizeof(w));
        w.ordered = 1;
        if (ledger_history_foreach(fx->lg, topic, since_ms, walk_cb, &w, err,
                                   sizeof(err)))
                fail_msg("ledger_history_foreach: %s", err);
        assert_true(w.ordered);
        return w;
}

static void db_exec(const char *path, const char *sql)
{
        sqlite3 *db;

        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        sqlite3_busy_timeout(db, 5000);
        if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
                fail_msg("%s: %s", sql, sqlite3_errmsg(db));
        sqlite3_close(db);
}

/* The history adds up to the counters, commit after commit, and a commit
 * that rewrites unchanged counters adds nothing. */
static void test_history_follows_commits(void **state)
{
        struct fx *fx = *state;
        struct ledger_summary s;
        struct walk w;
        char err[256];
        int i;

        for (i = 0; i < 10; i++)
                observe(fx, 0, i);
        observe(fx, 0, 9);  /* duplicate */
        observe(fx, 0, 9);  /* duplicate */
        observe(fx, 0, 14); /* gap 10..13 */
        observe(fx, 0, 15); /* confirms it */
        observe(fx, 1, -1); /* untracked */
        commit_ok(fx);
        w = walk(fx, NULL, 0);
        assert_true(w.n >= 1 && w.n <= 2); /* a minute may have turned */
        assert_int_equal(w.sum.records, 15);
        assert_int_equal(w.sum.untracked, 1);
        assert_int_equal(w.sum.anomalous, 2);
        assert_int_equal(ledger_summary(fx->lg, "orders", &s, err,
                                        sizeof(err)),
                         0);
        assert_int_equal(w.sum.gaps, s.anomalies[DEDUP_KIND_GAP]);
        assert_int_equal(w.sum.missing, s.missing);
        assert_int_equal(w.sum.gaps, 1);
        assert_int_equal(w.sum.missing, 4);
        assert_int_equal(w.sum.unaudited, 0);

        /* The same counters written again: no increment. */
        fx->parts[0].dirty = fx->parts[1].dirty = 1;
        commit_ok(fx);
        w = walk(fx, NULL, 0);
        assert_int_equal(w.sum.records, 15);
        assert_int_equal(w.sum.anomalous, 2);

        /* More records: only the increment is added. */
        observe(fx, 0, 16);
        observe(fx, 1, -1);
        commit_ok(fx);
        w = walk(fx, NULL, 0);
        assert_int_equal(w.sum.records, 17);
        assert_int_equal(w.sum.untracked, 2);

        /* Per topic. */
        w = walk(fx, "orders", 0);
        assert_int_equal(w.sum.records, 15);
        assert_int_equal(w.sum.untracked, 0);
        w = walk(fx, "payments", 0);
        assert_int_equal(w.sum.records, 2);
        assert_int_equal(w.sum.untracked, 2);
        w = walk(fx, "nope", 0);
        assert_int_equal(w.n, 0);
        /* since_ms past every row. */
        w = walk(fx, NULL, clock_wall_ms() + 2 * LEDGER_HISTORY_MINUTE_MS);
        assert_int_equal(w.n, 0);
}

/* A commit that fails writes no history; a coverage gap adds its offsets
 * once, even when the same gap is stored again. */
static void test_history_rollback_and_coverage(void **state)
{
        struct fx *fx = *state;
        struct walk w;
        char err[256];

        observe(fx, 0, 0);
        observe(fx, 0, 1);
        commit_ok(fx);
        observe(fx, 0, 2);
        fx->parts[0].coverage_lo = 9; /* a bad range fails the commit */
        fx->parts[0].coverage_hi = 3;
        assert_int_equal(ledger_commit(fx->lg, fx->tr, fx->parts, NPARTS, NULL,
                                       err, sizeof(err)),
                         -1);
        w = walk(fx, NULL, 0);
        assert_int_equal(w.sum.records, 2);

        fx->parts[0].coverage_lo = 3; /* offsets 3..99 deleted */
        fx->parts[0].coverage_hi = 99;
        fx->parts[0].next_offset = 100;
        commit_ok(fx);
        w = walk(fx, NULL, 0);
        assert_int_equal(w.sum.records, 3);
        assert_int_equal(w.sum.unaudited, 97);
        fx->parts[0].coverage_lo = 3; /* a replay stores it once */
        fx->parts[0].coverage_hi = 99;
        fx->parts[0].dirty = 1;
        commit_ok(fx);
        w = walk(fx, NULL, 0);
        assert_int_equal(w.sum.unaudited, 97);
}

/* Rows older than LEDGER_HISTORY_MINUTES before a commit go; younger ones
 * stay, and the table holds one row per topic and minute at most. */
static void test_history_bounded(void **state)
{
        struct fx *fx = *state;
        int64_t now = clock_wall_ms(), minute = now - now % 60000;
        char sql[512];
        struct walk w;

        snprintf(sql, sizeof(sql),
                 "INSERT INTO history (minute_ms, topic, records) VALUES "
                 "(%lld, 'orders', 1000), (%lld, 'orders', 100), "
                 "(%lld, 'payments', 10)",
                 (long long)(minute -
                             (LEDGER_HISTORY_MINUTES + 2) * (int64_t)60000),
                 (long long)(minute -
                             (LEDGER_HISTORY_MINUTES - 60) * (int64_t)60000),
                 (long long)(minute - 60000));
        db_exec(fx->db, sql);
        w = walk(fx, NULL, 0);
        assert_int_equal(w.n, 3);
        assert_int_equal(w.sum.records, 1110);

        observe(fx, 0, 0);
        commit_ok(fx);
        w = walk(fx, NULL, 0);
        assert_int_equal(w.n, 3); /* the 7-day-old row went */
        assert_int_equal(w.sum.records, 111);
        assert_int_equal(w.first_ms, minute - (LEDGER_HISTORY_MINUTES - 60) *
                                                  (int64_t)60000);
        /* since_ms cuts the walk. */
        w = walk(fx, "payments", minute - 60000);
        assert_int_equal(w.n, 1);
        assert_int_equal(w.sum.records, 10);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_history_follows_commits,
                                            fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_history_rollback_and_coverage,
                                            fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_history_bounded, fx_setup,
                                            fx_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
