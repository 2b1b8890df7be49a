/*
 * test_audit_conf.c - the consumer settings the audit relies on:
 * audit_kconf_defaults() and audit_kconf_apply() set them (keeping what
 * the user may change), and audit_new() refuses a configuration where one
 * was overridden, before it connects or opens the ledger.
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

/* What the audit needs, and a value it cannot work with. */
static const char *const required[][2] = {
    {"enable.auto.commit", "false"},
    {"enable.auto.offset.store", "false"},
    {"enable.partition.eof", "true"},
    {"auto.offset.reset", "error"},
};
static const char *const refused[][2] = {
    {"enable.auto.commit", "true"},
    {"enable.auto.offset.store", "true"},
    {"enable.partition.eof", "false"},
    {"auto.offset.reset", "earliest"},
};
#define NREQUIRED (sizeof(required) / sizeof(required[0]))

/* Fails unless every key of kv[0..n) reads back as its value. */
static void conf_expect(const rd_kafka_conf_t *conf, const char *const kv[][2],
                        size_t n)
{
        char val[64];
        size_t i, len;

        for (i = 0; i < n; i++) {
                len = sizeof(val);
                if (rd_kafka_conf_get(conf, kv[i][0], val, &len) !=
                    RD_KAFKA_CONF_OK)
                        fail_msg("%s: not set", kv[i][0]);
                if (strcmp(val, kv[i][1]))
                        fail_msg("%s=%s, expected %s", kv[i][0], val,
                                 kv[i][1]);
        }
}

#define CONF_EXPECT(conf, ...)                                                \
        do {                                                                  \
                static const char *const kv_[][2] = {__VA_ARGS__};            \
                conf_expect(conf, kv_, sizeof(kv_) / sizeof(kv_[0]));         \
        } while (0)

static void set(rd_kafka_conf_t *conf, const char *key, const char *val)
{
        char errstr[256];

        if (rd_kafka_conf_set(conf, key, val, errstr, sizeof(errstr)) !=
            RD_KAFKA_CONF_OK)
                fail_msg("%s=%s: %s", key, val, errstr);
}

/* A configuration as the program builds it: defaults, then the user's
 * settings (none here), then apply. */
static rd_kafka_conf_t *conf_new(const char *bootstraps)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char errstr[256];

        set(conf, "bootstrap.servers", bootstraps);
        set(conf, "log_level", "0");
        if (audit_kconf_defaults(conf, errstr, sizeof(errstr)) ||
            audit_kconf_apply(conf, errstr, sizeof(errstr)))
                fail_msg("%s", errstr);
        return conf;
}

static void test_apply_sets_required_and_defaults(void **state)
{
        rd_kafka_conf_t *conf = conf_new("127.0.0.1:1");

        (void)state;
        conf_expect(conf, required, NREQUIRED);
        CONF_EXPECT(conf, {"isolation.level", "read_committed"},
                    {"queued.min.messages", "150000"},
                    {"queued.max.messages.kbytes", "8192"},
                    {"fetch.max.bytes", "4194304"},
                    {"fetch.wait.max.ms", "100"});
        rd_kafka_conf_destroy(conf);
}

/* The user's values between the two calls: required ones are put back,
 * the rest (isolation, the prefetch budget) are kept. */
static void test_apply_keeps_what_the_user_may_change(void **state)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char errstr[256];
        size_t i;

        (void)state;
        assert_int_equal(audit_kconf_defaults(conf, errstr, sizeof(errstr)),
                         0);
        for (i = 0; i < NREQUIRED; i++)
                set(conf, refused[i][0], refused[i][1]);
        set(conf, "isolation.level", "read_uncommitted");
        set(conf, "queued.min.messages", "5000");
        set(conf, "message.max.bytes", "10000000");
        assert_int_equal(audit_kconf_apply(conf, errstr, sizeof(errstr)), 0);
        conf_expect(conf, required, NREQUIRED);
        /* librdkafka refuses fetch.max.bytes < message.max.bytes */
        CONF_EXPECT(conf, {"isolation.level", "read_uncommitted"},
                    {"queued.min.messages", "5000"},
                    {"fetch.max.bytes", "10000000"});
        rd_kafka_conf_destroy(conf);

        /* A fetch.max.bytes of the user's own stays as it is. */
        conf = rd_kafka_conf_new();
        assert_int_equal(audit_kconf_defaults(conf, errstr, sizeof(errstr)),
                         0);
        set(conf, "fetch.max.bytes", "20000000");
        set(conf, "message.max.bytes", "10000000");
        assert_int_equal(audit_kconf_apply(conf, errstr, sizeof(errstr)), 0);
        CONF_EXPECT(conf, {"fetch.max.bytes", "20000000"});
        rd_kafka_conf_destroy(conf);
}

static void audit_conf_init(struct audit_conf *ac, const char **topics,
                            const char *db)
{
        audit_conf_defaults(ac);
        ac->topics = topics;
        ac->topic_cnt = 1;
        ac->db_path = db;
        ac->no_compaction_check = 1; /* the mock never answers */
}

/* Expects audit_new() to refuse conf, naming key, before it connects (no
 * broker listens on port 1) or creates the ledger. */
static void expect_refused(rd_kafka_conf_t *conf, const char *key,
                           const char *db)
{
        const char *topics[] = {"t"};
        struct audit_conf ac;
        static char sentinel;
        struct audit *a = (struct audit *)(void *)&sentinel; /* cleared */
        char errstr[512] = "";

        audit_conf_init(&ac, topics, db);
        assert_int_equal(audit_new(&a, &ac, conf, errstr, sizeof(errstr)), -1);
        assert_null(a);
        printf("# %s\n", errstr);
        assert_non_null(strstr(errstr, key));
        assert_non_null(strstr(errstr, "the audit needs"));
        assert_int_equal(access(db, F_OK), -1);
}

static void test_new_refuses_an_overridden_setting(void **state)
{
        char dir[] = "/tmp/eosaudit-conf-XXXXXX", db[64];
        size_t i;

        (void)state;
        assert_non_null(mkdtemp(dir));
        snprintf(db, sizeof(db), "%s/ledger.db", dir);
        for (i = 0; i < NREQUIRED; i++) {
                rd_kafka_conf_t *conf = conf_new("127.0.0.1:1");
                /* After audit_kconf_apply(): what a caller might do. */
                set(conf, refused[i][0], refused[i][1]);
                expect_refused(conf, refused[i][0], db);
        }
        /* librdkafka's own defaults lack them all; auto.offset.reset is
         * not even set then. */
        {
                rd_kafka_conf_t *conf = rd_kafka_conf_new();
                set(conf, "bootstrap.servers", "127.0.0.1:1");
                set(conf, "log_level", "0");
                expect_refused(conf, "enable.auto.commit", db);
        }
        assert_int_equal(rmdir(dir), 0);
}

/* A group named without the group mode (audit_conf.mode, mode.h) is
 * refused before anything is opened: the audit would otherwise run alone
 * and assign every partition while its members shared them. */
static void test_new_refuses_a_group_without_its_mode(void **state)
{
        char dir[] = "/tmp/eosaudit-conf-XXXXXX", db[64];
        const char *topics[] = {"t"};
        struct audit_conf ac;
        static char sentinel;
        struct audit *a = (struct audit *)(void *)&sentinel; /* cleared */
        char errstr[512] = "";

        (void)state;
        assert_non_null(mkdtemp(dir));
        snprintf(db, sizeof(db), "%s/ledger.db", dir);
        audit_conf_init(&ac, topics, db);
        ac.group = "g1";
        assert_int_equal(audit_new(&a, &ac, conf_new("127.0.0.1:1"), errstr,
                                   sizeof(errstr)),
                         -1);
        assert_null(a);
        assert_non_null(strstr(errstr, "group g1: no group mode"));
        assert_int_equal(access(db, F_OK), -1);
        assert_int_equal(rmdir(dir), 0);
}

/* The positive control: what the program builds, with the isolation a
 * user may choose, is accepted (against librdkafka's mock cluster). */
static void test_new_accepts_read_uncommitted(void **state)
{
        char dir[] = "/tmp/eosaudit-conf-XXXXXX", db[64], cmd[96];
        const char *topics[] = {"t"};
        rd_kafka_conf_t *pconf = rd_kafka_conf_new();
        rd_kafka_mock_cluster_t *mc;
        rd_kafka_conf_t *conf;
        struct audit_conf ac;
        struct audit *a = NULL;
        char errstr[512];
        rd_kafka_t *rk;

        (void)state;
        set(pconf, "log_level", "0");
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, pconf, errstr, sizeof(errstr));
        assert_non_null(rk);
        mc = rd_kafka_mock_cluster_new(rk, 1);
        assert_non_null(mc);
        assert_int_equal(rd_kafka_mock_topic_create(mc, "t", 2, 1), 0);
        assert_non_null(mkdtemp(dir));
        snprintf(db, sizeof(db), "%s/ledger.db", dir);

        conf = rd_kafka_conf_new();
        set(conf, "log_level", "0");
        assert_int_equal(audit_kconf_defaults(conf, errstr, sizeof(errstr)),
                         0);
        set(conf, "bootstrap.servers", rd_kafka_mock_cluster_bootstraps(mc));
        set(conf, "group.id", "test");
        set(conf, "isolation.level", "read_uncommitted");
        assert_int_equal(audit_kconf_apply(conf, errstr, sizeof(errstr)), 0);
        audit_conf_init(&ac, topics, db);
        if (audit_new(&a, &ac, conf, errstr, sizeof(errstr)))
                fail_msg("audit_new: %s", errstr);
        assert_non_null(a);
        audit_free(a);
        assert_int_equal(access(db, F_OK), 0);

        rd_kafka_mock_cluster_destroy(mc);
        rd_kafka_destroy(rk);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_apply_sets_required_and_defaults),
            cmocka_unit_test(test_apply_keeps_what_the_user_may_change),
            cmocka_unit_test(test_new_refuses_an_overridden_setting),
            cmocka_unit_test(test_new_refuses_a_group_without_its_mode),
            cmocka_unit_test(test_new_accepts_read_uncommitted),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
