/*
 * test_pipeline.c - the reference producer into librdkafka's mock
 * cluster, then the audit as a scan; exact counts asserted against what
 * the producer reports it wrote.
 *
 * The mock cluster in librdkafka 2.0.x neither hides aborted transactions
 * nor fences zombies, so transactions and fencing are tested against the
 * real broker (tests/integration), not here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "../auditor/audit/audit.h"
#include "../producer/producer.h"

struct mock {
        rd_kafka_t *rk;
        rd_kafka_mock_cluster_t *mc;
        const char *bootstraps;
        char dir[64];
        char db[96];
};

static int mock_setup(void **state)
{
        struct mock *m = calloc(1, sizeof(*m));
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char errstr[256];

        assert_non_null(m);
        rd_kafka_conf_set(conf, "log_level", "2", NULL, 0);
        m->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        assert_non_null(m->rk);
        m->mc = rd_kafka_mock_cluster_new(m->rk, 3);
        assert_non_null(m->mc);
        m->bootstraps = rd_kafka_mock_cluster_bootstraps(m->mc);
        snprintf(m->dir, sizeof(m->dir), "/tmp/eosaudit-pipeline-XXXXXX");
        assert_non_null(mkdtemp(m->dir));
        *state = m;
        return 0;
}

static int mock_teardown(void **state)
{
        struct mock *m = *state;
        char cmd[128];

        rd_kafka_mock_cluster_destroy(m->mc);
        rd_kafka_destroy(m->rk);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", m->dir);
        assert_int_equal(system(cmd), 0);
        free(m);
        return 0;
}

static void produce(struct mock *m, const char *topic, const char *name,
                    int64_t count, double dups, double gaps, int zombie,
                    int64_t epoch, struct producer_result *res)
{
        struct producer_opts o;
        char errstr[512];

        producer_opts_init(&o);
        o.brokers = m->bootstraps;
        o.topic = topic;
        o.name = name;
        o.count = count;
        o.rate = 0;
        o.dup_rate = dups;
        o.gap_rate = gaps;
        o.zombie = zombie;
        o.epoch = epoch;
        o.seed = 7;
        o.quiet = 1;
        memset(res, 0, sizeof(*res));
        if (producer_run(&o, res, errstr, sizeof(errstr)))
                fail_msg("producer: %s", errstr);
        assert_int_equal(res->failed, 0);
}

/* Scans topic into ledger db (resuming if it exists); fills *s. */
static void scan(struct mock *m, const char *topic, const char *db,
                 struct ledger_summary *s)
{
        const char *topics[] = {topic};
        struct audit_conf ac;
        struct audit *a;
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char errstr[512];

        audit_conf_defaults(&ac);
        ac.topics = topics;
        ac.topic_cnt = 1;
        ac.db_path = db;
        ac.stall_timeout_ms = 5000;
        ac.no_compaction_check = 1; /* the mock never answers */
        assert_int_equal(rd_kafka_conf_set(conf, "bootstrap.servers",
                                           m->bootstraps, errstr,
                                           sizeof(errstr)),
                         RD_KAFKA_CONF_OK);
        rd_kafka_conf_set(conf, "group.id", "test", NULL, 0);
        assert_int_equal(audit_kconf_defaults(conf, errstr, sizeof(errstr)),
                         0);
        rd_kafka_conf_set(conf, "log_level", "2", NULL, 0);
        assert_int_equal(audit_kconf_apply(conf, errstr, sizeof(errstr)), 0);
        if (audit_new(&a, &ac, conf, errstr, sizeof(errstr)))
                fail_msg("audit_new: %s", errstr);
        if (audit_run(a, errstr, sizeof(errstr)))
                fail_msg("audit_run: %s", errstr);
        if (ledger_summary(audit_ledger(a), topic, s, errstr, sizeof(errstr)))
                fail_msg("summary: %s", errstr);
        audit_free(a);
}

static void db_path(struct mock *m, const char *name, char *buf, size_t size)
{
        snprintf(buf, size, "%s/%s.db", m->dir, name);
}

static void test_clean_multi_partition(void **state)
{
        struct mock *m = *state;
        struct producer_result res;
        struct ledger_summary s;
        char db[128];

        assert_int_equal(rd_kafka_mock_topic_create(m->mc, "clean", 6, 1), 0);
        produce(m, "clean", "p1", 3000, 0, 0, 0, -1, &res);
        produce(m, "clean", "p2", 2000, 0, 0, 0, -1, &res);
        db_path(m, "clean", db, sizeof(db));
        scan(m, "clean", db, &s);
        assert_int_equal(s.records, 5000);
        assert_int_equal(s.partitions, 6);
        assert_int_equal(s.producers, 2);
        assert_int_equal(s.pairs, 12);
        assert_int_equal(s.untracked, 0);
        assert_int_equal(s.anomalies[DEDUP_KIND_DUPLICATE], 0);
        assert_int_equal(s.anomalies[DEDUP_KIND_GAP], 0);
        assert_int_equal(s.anomalies[DEDUP_KIND_OUT_OF_ORDER], 0);
        assert_int_equal(s.anomalies[DEDUP_KIND_FENCED], 0);
        assert_int_equal(s.anomalies[DEDUP_KIND_MALFORMED], 0);
        assert_int_equal(s.open_gaps, 0);
}

static void test_injected_faults(void **state)
{
        struct mock *m = *state;
        struct producer_result res;
        struct ledger_summary s;
        char db[128];

        assert_int_equal(rd_kafka_mock_topic_create(m->mc, "faults", 4, 1), 0);
        produce(m, "faults", "f1", 5000, 0.01, 0.005, 0, -1, &res);
        assert_true(res.duplicates_injected > 0);
        assert_true(res.gaps_injected > 0);
        db_path(m, "faults", db, sizeof(db));
        scan(m, "faults", db, &s);
        assert_int_equal(s.records, res.delivered);
        assert_int_equal(s.anomalies[DEDUP_KIND_DUPLICATE],
                         res.duplicates_injected);
        assert_int_equal(s.missing, res.gaps_injected);
        assert_int_equal(s.anomalies[DEDUP_KIND_FENCED], 0);
        assert_int_equal(s.anomalies[DEDUP_KIND_OUT_OF_ORDER], 0);
        assert_int_equal(s.open_gaps, 0);
}

/* Idempotent zombie: no broker fences it, so the audit must. */
static void test_zombie_idempotent(void **state)
{
        struct mock *m = *state;
        struct producer_result res;
        struct ledger_summary s;
        char db[128];

        assert_int_equal(rd_kafka_mock_topic_create(m->mc, "zombie", 3, 1), 0);
        produce(m, "zombie", "z1", 3000, 0, 0, 1, -1, &res);
        assert_true(res.zombie_records > 0);
        db_path(m, "zombie", db, sizeof(db));
        scan(m, "zombie", db, &s);
        assert_int_equal(s.records, res.delivered);
        assert_int_equal(s.anomalies[DEDUP_KIND_FENCED], res.zombie_records);
        assert_int_equal(s.anomalies[DEDUP_KIND_DUPLICATE], 0);
        assert_int_equal(s.missing, 0);
}

/* A second scan on the same ledger audits only what is new, and counts
 * nothing twice. */
static void test_incremental_scan(void **state)
{
        struct mock *m = *state;
        struct producer_result res;
        struct ledger_summary s;
        char db[128];

        assert_int_equal(rd_kafka_mock_topic_create(m->mc, "incr", 2, 1), 0);
        db_path(m, "incr", db, sizeof(db));
        produce(m, "incr", "i1", 1000, 0, 0, 0, -1, &res);
        scan(m, "incr", db, &s);
        assert_int_equal(s.records, 1000);
        scan(m, "incr", db, &s);
        assert_int_equal(s.records, 1000);
        /* A new session (epoch 1) of the same producer continues
         * cleanly. */
        produce(m, "incr", "i1", 500, 0, 0, 0, 1, &res);
        scan(m, "incr", db, &s);
        assert_int_equal(s.records, 1500);
        assert_int_equal(s.anomalies[DEDUP_KIND_DUPLICATE], 0);
        assert_int_equal(s.missing, 0);
        assert_int_equal(s.anomalies[DEDUP_KIND_FENCED], 0);
}

/* An empty topic scans to completion at once. */
static void test_empty_topic(void **state)
{
        struct mock *m = *state;
        struct ledger_summary s;
        char db[128];

        assert_int_equal(rd_kafka_mock_topic_create(m->mc, "empty", 3, 1), 0);
        db_path(m, "empty", db, sizeof(db));
        scan(m, "empty", db, &s);
        assert_int_equal(s.records, 0);
        assert_int_equal(s.partitions, 3);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_clean_multi_partition),
            cmocka_unit_test(test_injected_faults),
            cmocka_unit_test(test_zombie_idempotent),
            cmocka_unit_test(test_incremental_scan),
            cmocka_unit_test(test_empty_topic),
        };
        return cmocka_run_group_tests(tests, mock_setup, mock_teardown);
}
