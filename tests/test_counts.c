/*
 * test_counts.c - the summary's kept counts (schema/0005_counts.sql): after
 * every commit of a long mix of new pairs, gaps opened and confirmed,
 * expiries, coverage gaps and restarts, ledger_summary() says what a
 * recount of the tables says, per topic and for all topics; and a ledger
 * made before the migration gets its counts when it is opened.
 *
 * The recount runs on a separate SQLite connection, as a reader would.
 */
#include "ledger_fixture.h"

/* The fixture (ledger_fixture.h): fx->a is the ledger, NPARTS parts. */
#define NPRODUCERS 24

/* The embedded migrations (schema/embed.sh). */
extern const char *const ledger_migrations[];

/* One count of the ledger at path, for topic (NULL: all topics) bound as
 * ?1, through a connection of its own. */
static int64_t db_count(const char *path, const char *sql, const char *topic)
{
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        int64_t v;

        assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY,
                                         NULL),
                         SQLITE_OK);
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
                fail_msg("%s: %s", sql, sqlite3_errmsg(db));
        if (topic)
                sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        sqlite3_close(db);
        return v;
}

/* The counts of topic (NULL: all topics) recounted from the tables, and
 * as the summary gives them.  Returns how many pairs there are. */
static int64_t check_counts(struct ledger *lg, const char *path,
                            const char *topic)
{
        struct ledger_summary s;
        char err[256];
        int64_t pairs;

#define W " WHERE ?1 IS NULL OR topic = ?1"
        if (ledger_summary(lg, topic, &s, err, sizeof(err)))
                fail_msg("ledger_summary: %s", err);
        pairs = db_count(path, "SELECT COUNT(*) FROM pairs" W, topic);
        assert_int_equal(s.pairs, pairs);
        assert_int_equal(
            s.producers,
            db_count(path, "SELECT COUNT(DISTINCT producer) FROM pairs" W,
                     topic));
        assert_int_equal(s.open_gaps,
                         db_count(path, "SELECT COUNT(*) FROM open_gaps" W,
                                  topic));
        assert_int_equal(s.coverage_gaps,
                         db_count(path, "SELECT COUNT(*) FROM coverage_gaps" W,
                                  topic));
        assert_int_equal(
            s.coverage_records,
            db_count(path,
                     "SELECT coalesce(SUM(offset_hi - offset_lo + 1), 0) "
                     "FROM coverage_gaps" W,
                     topic));
#undef W
        return pairs;
}

static void check_all(struct ledger *lg, const char *path)
{
        int64_t n = check_counts(lg, path, "orders");

        n += check_counts(lg, path, "pay");
        assert_int_equal(check_counts(lg, path, NULL), n);
        check_counts(lg, path, "none");
}

static void counts_parts_init(struct ledger_part *parts)
{
        static const char *const topics[NPARTS] = {"orders", "orders", "pay"};
        static const int32_t partitions[NPARTS] = {0, 1, 0};
        uint32_t i;

        for (i = 0; i < NPARTS; i++) {
                memset(&parts[i], 0, sizeof(parts[i]));
                parts[i].topic = topics[i];
                parts[i].partition = partitions[i];
                parts[i].part = i;
                parts[i].next_offset = -1;
                parts[i].coverage_lo = parts[i].coverage_hi = -1;
        }
}

/* Opens the ledger and loads it into a new tracker, as at start-up. */
static struct dedup_tracker *start(const char *path, struct ledger **lgp,
                                   struct ledger_part *parts)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        char err[256];
        uint32_t i;

        dedup_config_defaults(&conf);
        conf.gap_grace_records = 0;
        conf.gap_grace_ms = 2500;
        conf.idle_ttl_ms = 6000;
        counts_parts_init(parts);
        tr = dedup_tracker_new(&conf);
        assert_non_null(tr);
        for (i = 0; i < NPARTS; i++)
                assert_int_equal(dedup_tracker_part_add(tr, i, 0), 0);
        *lgp = open_ok(path);
        if (ledger_load(*lgp, tr, parts, NPARTS, err, sizeof(err)))
                fail_msg("ledger_load: %s", err);
        return tr;
}

static void observe_seq(struct dedup_tracker *tr, uint32_t part,
                        int64_t offset, const char *producer, int64_t seq)
{
        struct dedup_hdrs h;
        char num[32];
        int n;

        dedup_hdrs_init(&h);
        dedup_hdrs_feed(&h, "eos.producer", 12, producer, strlen(producer));
        dedup_hdrs_feed(&h, "eos.epoch", 9, "0", 1);
        n = snprintf(num, sizeof(num), "%lld", (long long)seq);
        dedup_hdrs_feed(&h, "eos.seq", 7, num, (size_t)n);
        dedup_tracker_observe(tr, part, offset, &h);
}

/* A small deterministic generator (xorshift). */
static uint32_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return (uint32_t)(*s >> 32);
}

/*
 * 60 batches, a second apart, of 40 records each from a window of the
 * producers that slides (the ones left behind expire after 6 s); some
 * records skip seqs (gaps that stay open 2.5 s, or get filled by a late
 * record), some repeat one; now and then retention deletes offsets
 * (a coverage gap), and every 7th batch the process restarts.
 */
static void test_counts_follow_the_ledger(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        int64_t seq[NPARTS][NPRODUCERS];
        int64_t next[NPARTS] = {0, 0, 0};
        uint64_t s = 0x9e3779b97f4a7c15ull;
        struct dedup_tracker *tr;
        struct ledger *lg;
        char err[256], name[16];
        int64_t max_pairs = 0, now = 1000000, pairs;
        int b, i, deleted = 0;

        memset(seq, 0, sizeof(seq));
        tr = start(fx->a, &lg, parts);
        check_all(lg, fx->a);
        for (b = 0; b < 60; b++) {
                now += 1000;
                if (b && b % 7 == 0) {
                        dedup_tracker_free(tr);
                        ledger_close(lg);
                        tr = start(fx->a, &lg, parts);
                        for (i = 0; i < NPARTS; i++)
                                assert_int_equal(parts[i].next_offset,
                                                 next[i]);
                }
                dedup_tracker_begin(tr, now);
                for (i = 0; i < 40; i++) {
                        uint32_t part = rnd(&s) % NPARTS;
                        uint32_t p = (uint32_t)(b / 4 + rnd(&s) % 8) %
                                     NPRODUCERS;
                        uint32_t r = rnd(&s) % 16;
                        struct ledger_part *lp = &parts[part];

                        if (r == 0 && next[part] > 0) {
                                /* Retention: 3 offsets never audited. */
                                lp->coverage_lo = next[part];
                                lp->coverage_hi = next[part] + 2;
                                next[part] += 3;
                                dedup_tracker_part_rebaseline(tr, part);
                        }
                        snprintf(name, sizeof(name), "p%02u", p);
                        if (r == 1)
                                seq[part][p] += 2; /* a gap */
                        if (r == 2 && seq[part][p] > 0)
                                seq[part][p]--; /* a duplicate */
                        observe_seq(tr, part, next[part]++, name,
                                    seq[part][p]++);
                        lp->next_offset = next[part];
                        lp->dirty = 1;
                }
                dedup_tracker_tick(tr);
                if (ledger_commit(lg, tr, parts, NPARTS, NULL, err,
                                  sizeof(err)))
                        fail_msg("ledger_commit: %s", err);
                pairs = check_counts(lg, fx->a, NULL);
                if (pairs < max_pairs)
                        deleted = 1;
                max_pairs = pairs > max_pairs ? pairs : max_pairs;
                check_all(lg, fx->a);
        }
        /* The mix did what it says: pairs expired (deleted), gaps were
         * open at some point and coverage gaps were stored. */
        assert_true(deleted);
        assert_true(db_count(fx->a,
                             "SELECT COUNT(*) FROM anomalies "
                             "WHERE kind = 'gap'",
                             NULL) > 0);
        assert_true(
            db_count(fx->a, "SELECT COUNT(*) FROM coverage_gaps", NULL) > 0);
        dedup_tracker_free(tr);
        ledger_close(lg);

        /* A ledger from before the migration: its counts tables gone,
         * then the migration's own text run on it, which must count what
         * is there.  (Not by setting user_version back: migrations added
         * after this one would run twice.) */
        db_exec(
            fx->a,
            "BEGIN; DROP TABLE counts_topic; "
            "DROP TABLE counts_topic_producer; DROP TABLE counts_producer; "
            "DROP TABLE counts_all; COMMIT;");
        assert_int_equal(db_count(fx->a,
                                  "SELECT COUNT(*) FROM sqlite_schema "
                                  "WHERE name LIKE 'counts%'",
                                  NULL),
                         0);
        {
                const char *mig = NULL;
                size_t m;

                for (m = 0; m < ledger_migrations_cnt; m++)
                        if (strstr(ledger_migrations[m],
                                   "CREATE TABLE counts_topic "))
                                mig = ledger_migrations[m];
                assert_non_null(mig);
                db_exec(fx->a, mig);
        }
        tr = start(fx->a, &lg, parts);
        assert_true(check_counts(lg, fx->a, NULL) > 0);
        check_all(lg, fx->a);
        dedup_tracker_free(tr);
        ledger_close(lg);
}

/* A batch that fails to commit leaves no count behind. */
static void test_counts_rolled_back(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct dedup_tracker *tr;
        struct ledger *lg;
        char err[256];

        tr = start(fx->a, &lg, parts);
        dedup_tracker_begin(tr, 1000);
        observe_seq(tr, 0, 0, "a", 0);
        observe_seq(tr, 2, 0, "a", 0);
        parts[0].next_offset = parts[2].next_offset = 1;
        parts[0].dirty = parts[2].dirty = 1;
        if (ledger_commit(lg, tr, parts, NPARTS, NULL, err, sizeof(err)))
                fail_msg("ledger_commit: %s", err);
        assert_int_equal(check_counts(lg, fx->a, NULL), 2);

        dedup_tracker_begin(tr, 2000);
        observe_seq(tr, 1, 0, "b", 0);
        observe_seq(tr, 1, 1, "c", 5);
        parts[1].next_offset = 2;
        parts[1].dirty = 1;
        /* The commit fails on its last write (a partition row), after
         * its pairs and open gap are written: nothing of it may count. */
        db_exec(fx->a, "CREATE TRIGGER fail BEFORE INSERT ON partitions "
                       "BEGIN SELECT RAISE(ABORT, 'injected'); END");
        assert_int_equal(ledger_commit(lg, tr, parts, NPARTS, NULL, err,
                                       sizeof(err)),
                         -1);
        assert_int_equal(check_counts(lg, fx->a, NULL), 2);
        assert_int_equal(check_counts(lg, fx->a, "orders"), 1);
        db_exec(fx->a, "DROP TRIGGER fail");
        if (ledger_commit(lg, tr, parts, NPARTS, NULL, err, sizeof(err)))
                fail_msg("ledger_commit: %s", err);
        assert_int_equal(check_counts(lg, fx->a, "orders"), 3);
        assert_int_equal(check_counts(lg, fx->a, NULL), 4);
        check_all(lg, fx->a);
        dedup_tracker_free(tr);
        ledger_close(lg);
}

/* Commits tr into lg, its parts marked dirty up to next. */
static void commit_at(struct ledger *lg, struct dedup_tracker *tr,
                      struct ledger_part *parts, int64_t next)
{
        char err[256];
        uint32_t i;

        for (i = 0; i < NPARTS; i++) {
                parts[i].next_offset = next;
                parts[i].dirty = 1;
        }
        if (ledger_commit(lg, tr, parts, NPARTS, NULL, err, sizeof(err)))
                fail_msg("ledger_commit: %s", err);
}

/*
 * The tracker's "stored" hint only picks whether a pair is updated or
 * inserted first: when it is wrong either way the rows and the counts
 * are still exact.  Stored but missing: a tracker committed into one
 * ledger commits into another.  Present but not stored: a tracker that
 * did not load the ledger meets its rows, one with an open gap that must
 * go.
 */
static void test_counts_hint_wrong(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS], parts_n[NPARTS];
        struct dedup_tracker *tr, *trn;
        struct dedup_config conf;
        struct ledger *lg, *lgb;
        char pathb[160], err[256];
        uint32_t i;

        snprintf(pathb, sizeof(pathb), "%s/b.db", fx->dir);
        tr = start(fx->a, &lg, parts);
        dedup_tracker_begin(tr, 1000);
        observe_seq(tr, 0, 0, "a", 0);
        observe_seq(tr, 1, 0, "a", 0);
        observe_seq(tr, 2, 0, "b", 0);
        observe_seq(tr, 0, 1, "g", 0);
        observe_seq(tr, 0, 2, "g", 3); /* gap 1..2, open */
        commit_at(lg, tr, parts, 3);
        assert_int_equal(check_counts(lg, fx->a, NULL), 4);
        assert_int_equal(check_counts(lg, fx->a, "orders"), 3);
        assert_int_equal(db_count(fx->a, "SELECT COUNT(*) FROM open_gaps",
                                  NULL),
                         1);

        /* Stored (committed once) but not in ledger b. */
        if (ledger_open(&lgb, pathb, err, sizeof(err)))
                fail_msg("ledger_open: %s", err);
        observe_seq(tr, 0, 3, "a", 1);
        observe_seq(tr, 2, 3, "b", 1);
        observe_seq(tr, 1, 3, "c", 0);
        commit_at(lgb, tr, parts, 4);
        assert_int_equal(check_counts(lgb, pathb, NULL), 3);
        assert_int_equal(check_counts(lgb, pathb, "orders"), 2);
        assert_int_equal(check_counts(lgb, pathb, "pay"), 1);
        assert_int_equal(db_count(pathb,
                                  "SELECT last_seq FROM pairs WHERE "
                                  "producer = 'a'",
                                  NULL),
                         1);
        ledger_close(lgb);
        ledger_remove(pathb);

        /* In ledger a, but new to a tracker that did not load it. */
        dedup_config_defaults(&conf);
        trn = dedup_tracker_new(&conf);
        assert_non_null(trn);
        for (i = 0; i < NPARTS; i++)
                assert_int_equal(dedup_tracker_part_add(trn, i, 0), 0);
        parts_init(parts_n);
        dedup_tracker_begin(trn, 2000);
        observe_seq(trn, 0, 10, "a", 7);
        observe_seq(trn, 0, 11, "g", 9);
        commit_at(lg, trn, parts_n, 12);
        assert_int_equal(check_counts(lg, fx->a, NULL), 4);
        assert_int_equal(db_count(fx->a,
                                  "SELECT last_seq FROM pairs WHERE "
                                  "topic = 'orders' AND partition = 0 "
                                  "AND producer = 'a'",
                                  NULL),
                         7);
        /* g's stored gap went with the rewrite of its pair. */
        assert_int_equal(db_count(fx->a, "SELECT COUNT(*) FROM open_gaps",
                                  NULL),
                         0);
        check_all(lg, fx->a);
        dedup_tracker_free(trn);
        dedup_tracker_free(tr);
        ledger_close(lg);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_counts_follow_the_ledger),
            T(test_counts_rolled_back),
            T(test_counts_hint_wrong),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
