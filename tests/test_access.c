/*
 * test_access.c - the operator's lines for refusals (auditor/access.h),
 * the refusal as /readyz's first reason (auditor/status.h), and the
 * secrets checks (base/secrets.h): which keys are secrets, -X refusing
 * them, the warning for a secrets file every user can read, and the TLS
 * settings that get a warning.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../auditor/audit/access.h"
#include "../auditor/audit/status.h"
#include "../base/log.h"
#include "../base/secrets.h"

static void test_lines(void **state)
{
        static const struct {
                rd_kafka_resp_err_t err;
                enum access_op op;
                const char *res, *reason, *want;
        } cases[] = {
            {RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
             ACCESS_OP_READ_TOPIC, "orders", NULL,
             "not authorized to read topic 'orders' "
             "(TOPIC_AUTHORIZATION_FAILED): grant Read on it to this "
             "principal"},
            {RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
             ACCESS_OP_DESCRIBE_TOPIC, "orders", NULL,
             "not authorized to describe topic 'orders' "
             "(TOPIC_AUTHORIZATION_FAILED): grant Describe and Read on it "
             "to this principal (or the topic does not exist)"},
            {RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
             ACCESS_OP_DESCRIBE_CONFIGS, "orders", NULL,
             "not authorized to describe the configuration of topic "
             "'orders' (TOPIC_AUTHORIZATION_FAILED): grant DescribeConfigs "
             "on it to this principal"},
            {RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED,
             ACCESS_OP_COMMIT_GROUP, "eosaudit", NULL,
             "not authorized to use consumer group 'eosaudit' "
             "(GROUP_AUTHORIZATION_FAILED): grant Read on group 'eosaudit' "
             "to this principal"},
            {RD_KAFKA_RESP_ERR__AUTHENTICATION, ACCESS_OP_CONNECT, NULL,
             "SASL authentication error: Authentication failed: Invalid "
             "username or password",
             "the brokers refused the credentials (_AUTHENTICATION): SASL "
             "authentication error: Authentication failed: Invalid "
             "username or password: check sasl.username, sasl.password and "
             "sasl.mechanisms"},
            {RD_KAFKA_RESP_ERR__SSL, ACCESS_OP_CONNECT, NULL,
             "certificate verify failed",
             "the TLS handshake with the brokers failed (_SSL): certificate "
             "verify failed: check ssl.ca.location (the CA that signed the "
             "brokers' certificates) and that each certificate names the "
             "host used to reach the broker"},
        };
        char out[512];
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                assert_int_equal(access_line(out, sizeof(out), cases[i].err,
                                             cases[i].op, cases[i].res,
                                             cases[i].reason),
                                 1);
                assert_string_equal(out, cases[i].want);
        }
        /* Not refusals: out stays untouched. */
        snprintf(out, sizeof(out), "untouched");
        assert_int_equal(access_line(out, sizeof(out),
                                     RD_KAFKA_RESP_ERR__TRANSPORT,
                                     ACCESS_OP_CONNECT, NULL, "down"),
                         0);
        assert_int_equal(access_line(out, sizeof(out),
                                     RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART,
                                     ACCESS_OP_READ_TOPIC, "t", NULL),
                         0);
        assert_string_equal(out, "untouched");
        /* A line longer than out is cut, never overrun. */
        assert_int_equal(
            access_line(out, 16, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
                        ACCESS_OP_READ_TOPIC, "orders", NULL),
            1);
        assert_int_equal(strlen(out), 15);
}

static void test_watch(void **state)
{
        struct access_watch w;
        char out[512];

        (void)state;
        access_watch_init(&w);
        assert_int_equal(access_watch_line(&w, out, sizeof(out)), 0);
        /* Transport trouble is no refusal; the first refusal is kept. */
        access_watch_note(&w, RD_KAFKA_RESP_ERR__TRANSPORT, "down");
        assert_int_equal(access_watch_line(&w, out, sizeof(out)), 0);
        access_watch_note(&w, RD_KAFKA_RESP_ERR__SSL, "bad cert");
        access_watch_note(&w, RD_KAFKA_RESP_ERR__AUTHENTICATION, "bad pw");
        assert_int_equal(access_watch_line(&w, out, sizeof(out)), 1);
        assert_non_null(strstr(out, "(_SSL): bad cert"));
        access_watch_destroy(&w);
}

static void test_readyz_reason(void **state)
{
        struct status *st = status_new();
        struct status_view v, *pv;
        const char *why[4];

        (void)state;
        assert_non_null(st);
        status_refusal_set(st, "not authorized to read topic 'x'");
        pv = status_view_get(st, &v);
        assert_non_null(pv);
        assert_true(status_ready_reasons(pv, why, 4) >= 1);
        assert_string_equal(why[0], "not authorized to read topic 'x'");
        status_view_release(pv);
        status_free(st);
}

static void test_secret_keys(void **state)
{
        static const char *const secret[] = {
            "sasl.password",
            "ssl.key.password",
            "ssl.keystore.password",
            "ssl.key.pem",
            "sasl.oauthbearer.client.secret",
            "sasl.oauthbearer.config",
            "sasl.oauthbearer.client.credentials.client.secret",
            "sasl.oauthbearer.assertion.private.key.passphrase",
            "sasl.oauthbearer.assertion.private.key.pem"};
        static const char *const plain[] = {
            "sasl.username",
            "ssl.ca.location",
            "security.protocol",
            "sasl.mechanisms",
            "ssl.key.location",
            "sasl.oauthbearer.method",
            "sasl.oauthbearer.client.id",
            "sasl.oauthbearer.token.endpoint.url",
            "sasl.oauthbearer.assertion.private.key.file"};
        char errstr[256];
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(secret) / sizeof(secret[0]); i++) {
                assert_int_equal(secrets_key_is_secret(secret[i]), 1);
                assert_int_equal(secrets_cli_check(secret[i], errstr,
                                                   sizeof(errstr)),
                                 -1);
                assert_non_null(strstr(errstr, "from files only"));
                /* The source cluster's settings name their own file. */
                assert_int_equal(secrets_cli_check_for(
                                     secret[i],
                                     "--source-properties-file FILE",
                                     "source-kafka.", errstr, sizeof(errstr)),
                                 -1);
                assert_non_null(strstr(errstr,
                                       "--source-properties-file FILE, or "
                                       "source-kafka."));
        }
        for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
                assert_int_equal(secrets_key_is_secret(plain[i]), 0);
                assert_int_equal(secrets_cli_check(plain[i], errstr,
                                                   sizeof(errstr)),
                                 0);
        }
}

static void test_secret_file(void **state)
{
        char path[] = "/tmp/test_access.XXXXXX";
        int fd = mkstemp(path);

        (void)state;
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(chmod(path, 0600), 0);
        assert_int_equal(secrets_file_check(path, "f"), 0);
        assert_int_equal(chmod(path, 0640), 0);
        assert_int_equal(secrets_file_check(path, "f"), 0);
        assert_int_equal(chmod(path, 0644), 0);
        assert_int_equal(secrets_file_check(path, "f"), 1);
        unlink(path);
        assert_int_equal(secrets_file_check(path, "f"), 0); /* gone */
}

static void test_tls_warnings(void **state)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char errstr[256];

        (void)state;
        /* librdkafka 2.x verifies host names by default: no warning. */
        assert_int_equal(rd_kafka_conf_set(conf, "security.protocol",
                                           "SASL_SSL", errstr, sizeof(errstr)),
                         RD_KAFKA_CONF_OK);
        assert_int_equal(secrets_kconf_check(conf), 0);
        assert_int_equal(
            rd_kafka_conf_set(conf, "ssl.endpoint.identification.algorithm",
                              "none", errstr, sizeof(errstr)),
            RD_KAFKA_CONF_OK);
        assert_int_equal(secrets_kconf_check(conf), 1);
        assert_int_equal(
            rd_kafka_conf_set(conf, "enable.ssl.certificate.verification",
                              "false", errstr, sizeof(errstr)),
            RD_KAFKA_CONF_OK);
        assert_int_equal(secrets_kconf_check(conf), 2);
        rd_kafka_conf_destroy(conf);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_lines),
            cmocka_unit_test(test_watch),
            cmocka_unit_test(test_readyz_reason),
            cmocka_unit_test(test_secret_keys),
            cmocka_unit_test(test_secret_file),
            cmocka_unit_test(test_tls_warnings),
        };

        log_set_level(LOG_ERROR);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
