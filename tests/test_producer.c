/*
 * test_producer.c - the reference producer and the kconf helpers.
 *
 * The murmur2 vectors were computed with Kafka's own
 * org.apache.kafka.common.utils.Utils.murmur2 (kafka-clients 4.1.0, the
 * jar in deploy/kafka/lib).  The end-to-end cases run against librdkafka's
 * in-process mock cluster and read every record back with a plain
 * consumer.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "../base/kconf.h"
#include "../producer/producer.h"
#include "../cmd/cmd.h"

#define MOCK_PARTITIONS 3

static rd_kafka_t *mock_rk; /* hosts the mock cluster */
static rd_kafka_mock_cluster_t *mock;
static int topic_serial;

/* ------------------------------------------------------------------ */
/* murmur2                                                             */
/* ------------------------------------------------------------------ */

static void test_murmur2_java_vectors(void **state)
{
        static const struct {
                const char *key;
                int32_t java; /* Utils.murmur2(key.getBytes("UTF-8")) */
                int32_t partition3;
        } cases[] = {
                {"", 275646681, 0},
                {"a", -1563381124, 1},
                {"ab", 316155434, 2},
                {"abc", 479470107, 0},
                {"21", -973932308, 0},
                {"foobar", -790332482, 0},
                {"kafka", -798503068, 1},
                {"a-little-bit-long-string", -985981536, 2},
                {"a-little-bit-longer-string", -1486304829, 2},
                {"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                 -58897971, 2},
                {"giberish123456789", -1890243828, 2},
                {"producer-0", 894127558, 1},
                {"producer-1", -1795407095, 0},
                {"producer-999", 1224915650, 2},
                {"p-12345", 1877954649, 0},
        };
        static const unsigned char high[] = {0xff, 0x80, 0x7f, 0x00, 0xc3};
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                size_t len = strlen(cases[i].key);

                assert_int_equal(producer_murmur2(cases[i].key, len),
                                 (uint32_t)cases[i].java);
                assert_int_equal(producer_partition(cases[i].key, len, 3),
                                 cases[i].partition3);
        }
        /* Bytes >= 0x80 are unsigned in Java's (data[i] & 0xff). */
        assert_int_equal(producer_murmur2(high, sizeof(high)), 1119845942u);
}

static void test_murmur2_matches_librdkafka(void **state)
{
        unsigned char key[67];
        uint64_t x = 12345;
        int i;

        (void)state;
        for (i = 0; i < 20000; i++) {
                size_t len = (size_t)i % sizeof(key), j;
                int32_t cnt = 1 + i % 97;

                for (j = 0; j < len; j++) {
                        x = x * 6364136223846793005ull + 1442695040888963407ull;
                        key[j] = (unsigned char)(x >> 56);
                }
                /* librdkafka's murmur2 partitioner never looks at rkt. */
                assert_int_equal(producer_partition(key, len, cnt),
                                 rd_kafka_msg_partitioner_murmur2(
                                         NULL, len ? key : (void *)"", len,
                                         cnt, NULL, NULL));
        }
}

/* ------------------------------------------------------------------ */
/* kconf                                                               */
/* ------------------------------------------------------------------ */

static void test_kconf_parse_numbers(void **state)
{
        static const struct {
                const char *s;
                int64_t min, max;
                int rc;
                int64_t want;
        } i64[] = {
                {"0", 0, 10, 0, 0},
                {"10", 0, 10, 0, 10},
                {"11", 0, 10, -1, 0},
                {"-1", -1, 10, 0, -1},
                {"-1", 0, 10, -1, 0},
                {"", 0, 10, -1, 0},
                {" 1", 0, 10, -1, 0},
                {"1 ", 0, 10, -1, 0},
                {"+1", 0, 10, -1, 0},
                {"1x", 0, 10, -1, 0},
                {"0x10", 0, 100, -1, 0},
                {"-", INT64_MIN, 0, -1, 0},
                {"9223372036854775807", 0, INT64_MAX, 0, INT64_MAX},
                {"9223372036854775808", 0, INT64_MAX, -1, 0},
        };
        static const struct {
                const char *s;
                int rc;
                double want;
        } dbl[] = {
                {"0", 0, 0},     {"1", 0, 1},       {"0.25", 0, 0.25},
                {".5", 0, 0.5},  {"1e-1", 0, 0.1},  {"1.5", -1, 0},
                {"-0.1", -1, 0}, {"nan", -1, 0},    {"inf", -1, 0},
                {"0x1p-1", -1, 0}, {" 0.5", -1, 0}, {"0.5 ", -1, 0},
                {"", -1, 0},     {"1e-400", -1, 0},
        };
        uint64_t u;
        double d;
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(i64) / sizeof(i64[0]); i++) {
                int64_t v = 777;

                assert_int_equal(kconf_parse_i64(i64[i].s, i64[i].min,
                                                 i64[i].max, &v),
                                 i64[i].rc);
                assert_true(v == (i64[i].rc == 0 ? i64[i].want : 777));
        }
        for (i = 0; i < sizeof(dbl) / sizeof(dbl[0]); i++) {
                d = -9;
                assert_int_equal(kconf_parse_double(dbl[i].s, 0, 1, &d),
                                 dbl[i].rc);
                if (dbl[i].rc == 0)
                        assert_true(d == dbl[i].want);
        }
        assert_int_equal(kconf_parse_u64("18446744073709551615", 0,
                                         UINT64_MAX, &u),
                         0);
        assert_true(u == UINT64_MAX);
        assert_int_equal(kconf_parse_u64("-1", 0, UINT64_MAX, &u), -1);
        assert_int_equal(kconf_parse_u64("18446744073709551616", 0,
                                         UINT64_MAX, &u),
                         -1);
}

static void conf_expect(const rd_kafka_conf_t *conf, const char *name,
                        const char *want)
{
        char buf[256];
        size_t size = sizeof(buf);

        assert_int_equal(rd_kafka_conf_get(conf, name, buf, &size),
                         RD_KAFKA_CONF_OK);
        assert_string_equal(buf, want);
}

static void test_kconf_set(void **state)
{
        static const struct {
                const char *kv;
                int rc;
                const char *err; /* a part of errstr on failure */
        } cases[] = {
                {"linger.ms=7", 0, NULL},
                /* The value is everything after the first '='. */
                {"client.id=a=b", 0, NULL},
                /* Secrets come from files, not from a command line. */
                {"sasl.password=hunter2", -1, "from files only"},
                {"ssl.key.password=x", -1, "from files only"},
                {"security.protocol=sasl_ssl", 0, NULL},
                /* A topic-level property goes to the default topic conf. */
                {"message.timeout.ms=1234", 0, NULL},
                {"linger.ms", -1, "expected key=value"},
                {"=1", -1, "empty property name"},
                {"no.such.thing=1", -1, "no.such.thing"},
                /* librdkafka names the canonical property, not the
                 * alias linger.ms. */
                {"linger.ms=soon", -1, "Invalid value"},
        };
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char errstr[256];
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                errstr[0] = '\0';
                assert_int_equal(kconf_set(conf, cases[i].kv, errstr,
                                           sizeof(errstr)),
                                 cases[i].rc);
                if (cases[i].err)
                        assert_non_null(strstr(errstr, cases[i].err));
                else
                        assert_string_equal(errstr, ""); /* untouched */
        }
        conf_expect(conf, "linger.ms", "7");
        conf_expect(conf, "client.id", "a=b");
        rd_kafka_conf_destroy(conf);
}

static char *write_temp(const char *text)
{
        static char path[64];
        FILE *fp;
        int fd;

        snprintf(path, sizeof(path), "/tmp/test_producer.XXXXXX");
        fd = mkstemp(path);
        assert_true(fd >= 0);
        fp = fdopen(fd, "w");
        assert_non_null(fp);
        fputs(text, fp);
        fclose(fp);
        return path;
}

static void test_kconf_file_load(void **state)
{
        static const struct {
                const char *text;
                int rc;
                const char *err; /* after "PATH" */
        } cases[] = {
                {"# comment\n\n  linger.ms = 9 \r\n\tacks=all\n", 0, NULL},
                {"linger.ms=9", 0, NULL}, /* no final newline */
                {"", 0, NULL},
                {"linger.ms=9\n\nbogus line\n", -1, ":3: expected key=value"},
                {"# x\nno.such.thing=1\n", -1, ":2: "},
                {"linger.ms=9\n = 4\n", -1, ":2: empty property name"},
        };
        char errstr[512];
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                rd_kafka_conf_t *conf = rd_kafka_conf_new();
                char *path = write_temp(cases[i].text);
                char want[128];

                errstr[0] = '\0';
                assert_int_equal(kconf_file_load(conf, path, errstr,
                                                 sizeof(errstr)),
                                 cases[i].rc);
                if (cases[i].rc == 0) {
                        if (strstr(cases[i].text, "linger"))
                                conf_expect(conf, "linger.ms", "9");
                } else {
                        snprintf(want, sizeof(want), "%s%s", path,
                                 cases[i].err);
                        assert_memory_equal(errstr, want, strlen(want));
                }
                unlink(path);
                rd_kafka_conf_destroy(conf);
        }
        {
                rd_kafka_conf_t *conf = rd_kafka_conf_new();

                assert_int_equal(kconf_file_load(conf, "/nonexistent/x.conf",
                                                 errstr, sizeof(errstr)),
                                 -1);
                assert_string_equal(errstr, "/nonexistent/x.conf: "
                                            "No such file or directory");
                rd_kafka_conf_destroy(conf);
        }
}

/* ------------------------------------------------------------------ */
/* Command line                                                        */
/* ------------------------------------------------------------------ */

static void test_args(void **state)
{
        static volatile sig_atomic_t run = 1;
        /* None of these may reach a broker: 127.0.0.1:1 would hang. */
        static const struct {
                int status;
                const char *argv[14];
        } cases[] = {
                {0, {"--help"}},
                {2, {"-b", "127.0.0.1:1", "--producer", "p"}}, /* no -t */
                {2, {"-b", "127.0.0.1:1", "-t", "t"}}, /* no --producer */
                /* --producer defaults to the transactional id. */
                {2, {"-b", "x", "-t", "t", "--transactional-id", "tx",
                     "--state", "/tmp/s"}},
                {2, {"-t", "t", "--producer", "p"}},   /* no brokers */
                {2, {"-b", "x", "-t", "t", "--producer", "p", "-n", "-1"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "-n", "1k"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "--size", "-1"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "--rate", "x"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--inject-gaps", "1.5"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--inject-duplicates", "-0.1"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "--epoch",
                     "2147483648"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "--epoch",
                     "2147483647", "--zombie"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "--epoch", "1",
                     "--state", "/tmp/s"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--abort-every", "2"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--txn-size", "5"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--transactional-id", "x", "--abort-every", "1"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--transactional-id", "x", "--epoch", "3"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "--bogus"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "-Z"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "extra"}},
                {2, {"-b", "x", "-t", "t", "--producer"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "-X",
                     "no.such.property=1"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "-X", "acks"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "-X",
                     "transactional.id=x"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "-F",
                     "/nonexistent.properties"}},
                /* librdkafka refuses acks=1 with idempotence at creation. */
                {2, {"-b", "x", "-t", "t", "--producer", "p", "-q", "-X",
                     "acks=1"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "--msgid-from",
                     "uuid"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "--msgid-from",
                     ""}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "--msgid-from",
                     "Key"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--msgid-header", ""}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--msgid-header", "eos.seq"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "--msgid-from",
                     "none", "--msgid-header", "ce_id"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--msgid-header", "ce_id", "--msgid-from", "none"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--restart-every", "-1"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--restart-every", "1k"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--restart-every", " 5"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--restart-every", ""}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--restart-every", "9223372036854775808"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--restart-replay", "5"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--restart-every", "0", "--restart-replay", "5"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--restart-every", "10", "--restart-replay", "-1"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--restart-every", "10", "--restart-replay",
                     "1000001"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--restart-every", "10", "--restart-replay", "1.5"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--restart-every", "10", "--zombie"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p", "-n", "3",
                     "--restart-every", "1", "--epoch", "2147483647"}},
                {2, {"-b", "x", "-t", "t", "--producer", "p",
                     "--restart-every"}},
        };
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *argv[16] = {"produce"};
                int argc = 1, j;

                for (j = 0; cases[i].argv[j]; j++)
                        argv[argc++] = (char *)cases[i].argv[j];
                fprintf(stderr, "case %zu: ", i);
                if (cases[i].status == 0) {
                        /* --help goes to stdout; keep the log readable. */
                        int saved = dup(STDOUT_FILENO);
                        int null = open("/dev/null", O_WRONLY);

                        fflush(stdout);
                        dup2(null, STDOUT_FILENO);
                        assert_int_equal(cmd_produce(argc, argv, &run), 0);
                        fflush(stdout);
                        dup2(saved, STDOUT_FILENO);
                        close(saved);
                        close(null);
                        fputc('\n', stderr);
                        continue;
                }
                assert_int_equal(cmd_produce(argc, argv, &run), cases[i].status);
        }
}

static void test_opts_check_name(void **state)
{
        struct producer_opts o;
        char name[PRODUCER_NAME_MAX + 2];
        char errstr[256];

        (void)state;
        producer_opts_init(&o);
        o.topic = "t";
        memset(name, 'n', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        o.name = name;
        o.msgid_from = PRODUCER_MSGID_NONE;
        assert_int_equal(producer_opts_check(&o, errstr, sizeof(errstr)), -1);
        name[PRODUCER_NAME_MAX] = '\0';
        assert_int_equal(producer_opts_check(&o, errstr, sizeof(errstr)), 0);
        o.msgid_from = PRODUCER_MSGID_INDEX;
        assert_int_equal(producer_opts_check(&o, errstr, sizeof(errstr)), 0);
        /* Keys NAME-0..NAME-999 must fit eos.msgid's 255 bytes: a name
         * of 251 bytes does, 252 do not. */
        o.msgid_from = PRODUCER_MSGID_KEY;
        assert_int_equal(producer_opts_check(&o, errstr, sizeof(errstr)), -1);
        assert_non_null(strstr(errstr, "--msgid-from index"));
        name[252] = '\0';
        assert_int_equal(producer_opts_check(&o, errstr, sizeof(errstr)), -1);
        name[251] = '\0';
        assert_int_equal(producer_opts_check(&o, errstr, sizeof(errstr)), 0);
        o.count = 1001; /* NAME-1000 */
        assert_int_equal(producer_opts_check(&o, errstr, sizeof(errstr)), -1);
        o.count = 1000;
        o.zombie = 1; /* zombie records take numbers from count on */
        assert_int_equal(producer_opts_check(&o, errstr, sizeof(errstr)), -1);
        o.zombie = 0;
        o.name = "";
        assert_int_equal(producer_opts_check(&o, errstr, sizeof(errstr)), -1);
}

static void test_opts_check_msgid_restart(void **state)
{
        static const struct {
                enum producer_msgid from;
                int header_len;     /* > 0: a header name of that many 'h' */
                const char *header; /* else this one */
                int64_t count, every, replay, epoch;
                int zombie;
                const char *err; /* NULL: accepted */
        } cases[] = {
                {PRODUCER_MSGID_KEY, 0, "eos.msgid", 1000, 0, 10, -1, 0,
                 NULL},
                {PRODUCER_MSGID_KEY, 0, "ce_id", 1000, 0, 10, -1, 0, NULL},
                {PRODUCER_MSGID_KEY, 255, NULL, 1000, 0, 10, -1, 0, NULL},
                {PRODUCER_MSGID_KEY, 256, NULL, 1000, 0, 10, -1, 0,
                 "longer than 255"},
                {PRODUCER_MSGID_INDEX, 0, "", 1000, 0, 10, -1, 0, "empty"},
                {PRODUCER_MSGID_INDEX, 0, NULL, 1000, 0, 10, -1, 0, "empty"},
                /* Unused without an id. */
                {PRODUCER_MSGID_NONE, 0, NULL, 1000, 0, 10, -1, 0, NULL},
                {PRODUCER_MSGID_KEY, 0, "eos.seq", 1000, 0, 10, -1, 0,
                 "stamps itself"},
                {PRODUCER_MSGID_INDEX, 0, "eos.epoch", 1000, 0, 10, -1, 0,
                 "stamps itself"},
                {PRODUCER_MSGID_KEY, 0, "eos.producer", 1000, 0, 10, -1, 0,
                 "stamps itself"},
                {PRODUCER_MSGID_KEY, 0, "eos.pid", 1000, 0, 10, -1, 0,
                 "stamps itself"},
                {(enum producer_msgid)7, 0, "eos.msgid", 1000, 0, 10, -1, 0,
                 "key, index or none"},
                {PRODUCER_MSGID_KEY, 0, "eos.msgid", 1000, 1, 0, -1, 0, NULL},
                {PRODUCER_MSGID_KEY, 0, "eos.msgid", 1000, 1, 1000000, -1, 0,
                 NULL},
                {PRODUCER_MSGID_KEY, 0, "eos.msgid", 1000, -1, 10, -1, 0,
                 "--restart-every"},
                {PRODUCER_MSGID_KEY, 0, "eos.msgid", 1000, 5, -1, -1, 0,
                 "--restart-replay"},
                {PRODUCER_MSGID_KEY, 0, "eos.msgid", 1000, 5, 1000001, -1, 0,
                 "--restart-replay"},
                {PRODUCER_MSGID_KEY, 0, "eos.msgid", 1000, 5, 10, -1, 1,
                 "--zombie"},
                /* 2 sessions from epoch 2147483646 fit, 3 do not. */
                {PRODUCER_MSGID_KEY, 0, "eos.msgid", 20, 10, 10,
                 2147483646, 0, NULL},
                {PRODUCER_MSGID_KEY, 0, "eos.msgid", 21, 10, 10,
                 2147483646, 0, "past 2147483647"},
                {PRODUCER_MSGID_INDEX, 0, "eos.msgid", INT64_MAX, 1, 10, 5,
                 0, "past 2147483647"},
        };
        char header[300];
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct producer_opts o;
                char errstr[512] = "";

                producer_opts_init(&o);
                o.topic = "t";
                o.name = "p";
                o.msgid_from = cases[i].from;
                o.msgid_header = cases[i].header;
                if (cases[i].header_len > 0) {
                        memset(header, 'h', (size_t)cases[i].header_len);
                        header[cases[i].header_len] = '\0';
                        o.msgid_header = header;
                }
                o.count = cases[i].count;
                o.restart_every = cases[i].every;
                o.restart_replay = cases[i].replay;
                o.epoch = cases[i].epoch;
                o.zombie = cases[i].zombie;
                fprintf(stderr, "case %zu: ", i);
                assert_int_equal(producer_opts_check(&o, errstr,
                                                     sizeof(errstr)),
                                 cases[i].err ? -1 : 0);
                fprintf(stderr, "%s\n", errstr);
                if (cases[i].err)
                        assert_non_null(strstr(errstr, cases[i].err));
        }
}

static void test_result_format(void **state)
{
        struct producer_result res;
        char buf[1024], small[16];
        int len;

        (void)state;
        memset(&res, 0, sizeof(res));
        res.delivered = 10;
        res.epoch = 3;
        res.pid = -1;
        res.zombie_epoch = -1;
        assert_true(producer_result_format(&res, 0, buf, sizeof(buf)) > 0);
        assert_memory_equal(buf,
                            "delivered=10 failed=0 aborted=0 "
                            "duplicates_injected=0 gaps_injected=0 epoch=3 ",
                            strlen("delivered=10 failed=0 aborted=0 "
                                   "duplicates_injected=0 gaps_injected=0 "
                                   "epoch=3 "));
        res.redelivered_injected = 7;
        res.restarts = 2;
        assert_true(producer_result_format(&res, 0, buf, sizeof(buf)) > 0);
        assert_non_null(strstr(buf, " redelivered_injected=7 restarts=2 "));
        len = producer_result_format(&res, 1, buf, sizeof(buf));
        assert_int_equal(len, (int)strlen(buf));
        assert_non_null(strstr(buf, ",\"redelivered_injected\":7,"
                                    "\"restarts\":2,"));
        assert_memory_equal(buf, "{\"delivered\":10,", 16);
        assert_int_equal(buf[strlen(buf) - 1], '}');
        /* Truncation reports the full length, like snprintf(). */
        assert_int_equal(producer_result_format(&res, 1, small, sizeof(small)),
                         len);
        assert_int_equal(strlen(small), sizeof(small) - 1);
}

/* ------------------------------------------------------------------ */
/* Mock cluster                                                        */
/* ------------------------------------------------------------------ */

struct rec {
        int32_t partition;
        int64_t offset;
        char key[64];
        char producer[64];
        int64_t epoch, seq, pid; /* pid -1 when absent */
        int64_t prev_epoch, prev_seq; /* -1 when absent */
        char id[64];      /* the id header mock_read_id() was asked for */
        int has_id;       /* ... present (the last one, like the auditor) */
        int id_cnt;       /* ... how many times */
        int has_msgid;    /* eos.msgid present */
};

struct readback {
        struct rec *recs;
        size_t cnt, cap;
};

static int setup_mock(void **state)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char errstr[256];

        (void)state;
        rd_kafka_conf_set_log_cb(conf, NULL);
        mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr,
                               sizeof(errstr));
        if (!mock_rk)
                return -1;
        mock = rd_kafka_mock_cluster_new(mock_rk, 3);
        return mock ? 0 : -1;
}

static int teardown_mock(void **state)
{
        (void)state;
        if (mock)
                rd_kafka_mock_cluster_destroy(mock);
        if (mock_rk)
                rd_kafka_destroy(mock_rk);
        return 0;
}

static const char *mock_topic(void)
{
        static char topic[64];

        snprintf(topic, sizeof(topic), "eos-test-%d", ++topic_serial);
        assert_int_equal(rd_kafka_mock_topic_create(mock, topic,
                                                    MOCK_PARTITIONS, 1),
                         RD_KAFKA_RESP_ERR_NO_ERROR);
        return topic;
}

static void mock_opts(struct producer_opts *o, const char *topic)
{
        static const char *const kv[] = {"log_level=3"};

        producer_opts_init(o);
        o->brokers = rd_kafka_mock_cluster_bootstraps(mock);
        o->topic = topic;
        o->name = "tp";
        o->quiet = 1;
        o->conf_kv = kv;
        o->conf_kv_cnt = 1;
}

static int64_t hdr_int(const void *v, size_t size, int64_t max)
{
        char buf[32];
        int64_t out;

        assert_non_null(v);
        assert_true(size > 0 && size < sizeof(buf));
        memcpy(buf, v, size);
        buf[size] = '\0';
        assert_int_equal(kconf_parse_i64(buf, 0, max, &out), 0);
        return out;
}

/* Reads every partition of topic from the beginning to its end, with the
 * message id from header idhdr. */
static void mock_read_id(const char *topic, const char *idhdr,
                         struct readback *rb)
{
        static const char *const kv[] = {
                "enable.partition.eof=true",
                "isolation.level=read_committed",
                "group.id=test-producer",
                "fetch.wait.max.ms=10",
        };
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        rd_kafka_topic_partition_list_t *parts;
        rd_kafka_t *rk;
        char errstr[256];
        int eof = 0, i;
        time_t deadline = time(NULL) + 20;

        memset(rb, 0, sizeof(*rb));
        for (i = 0; i < (int)(sizeof(kv) / sizeof(kv[0])); i++)
                assert_int_equal(kconf_set(conf, kv[i], errstr,
                                           sizeof(errstr)),
                                 0);
        assert_int_equal(rd_kafka_conf_set(conf, "bootstrap.servers",
                                           rd_kafka_mock_cluster_bootstraps(
                                                   mock),
                                           errstr, sizeof(errstr)),
                         RD_KAFKA_CONF_OK);
        rd_kafka_conf_set_log_cb(conf, NULL);
        rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
        assert_non_null(rk);
        parts = rd_kafka_topic_partition_list_new(MOCK_PARTITIONS);
        for (i = 0; i < MOCK_PARTITIONS; i++)
                rd_kafka_topic_partition_list_add(parts, topic, i)->offset =
                        RD_KAFKA_OFFSET_BEGINNING;
        assert_int_equal(rd_kafka_assign(rk, parts), 0);
        rd_kafka_topic_partition_list_destroy(parts);

        while (eof < MOCK_PARTITIONS) {
                rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
                rd_kafka_headers_t *hdrs;
                struct rec *r;
                const void *v;
                size_t size;

                assert_true(time(NULL) < deadline);
                if (!m)
                        continue;
                if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                        eof++;
                        rd_kafka_message_destroy(m);
                        continue;
                }
                assert_int_equal(m->err, 0);
                if (rb->cnt == rb->cap) {
                        rb->cap = rb->cap ? rb->cap * 2 : 1024;
                        rb->recs = realloc(rb->recs,
                                           rb->cap * sizeof(*rb->recs));
                        assert_non_null(rb->recs);
                }
                r = &rb->recs[rb->cnt++];
                memset(r, 0, sizeof(*r));
                r->partition = m->partition;
                r->offset = m->offset;
                assert_true(m->key_len < sizeof(r->key));
                memcpy(r->key, m->key, m->key_len);
                assert_int_equal(rd_kafka_message_headers(m, &hdrs), 0);
                assert_int_equal(rd_kafka_header_get_last(hdrs, "eos.producer",
                                                          &v, &size),
                                 0);
                assert_true(size >= 1 && size < sizeof(r->producer));
                memcpy(r->producer, v, size);
                assert_int_equal(rd_kafka_header_get_last(hdrs, "eos.epoch",
                                                          &v, &size),
                                 0);
                r->epoch = hdr_int(v, size, INT32_MAX);
                assert_int_equal(rd_kafka_header_get_last(hdrs, "eos.seq", &v,
                                                          &size),
                                 0);
                r->seq = hdr_int(v, size, INT64_MAX);
                r->pid = -1;
                if (rd_kafka_header_get_last(hdrs, "eos.pid", &v, &size) == 0)
                        r->pid = hdr_int(v, size, INT64_MAX);
                r->prev_epoch = r->prev_seq = -1;
                if (rd_kafka_header_get_last(hdrs, "eos.prev_epoch", &v,
                                             &size) == 0)
                        r->prev_epoch = hdr_int(v, size, INT32_MAX);
                if (rd_kafka_header_get_last(hdrs, "eos.prev_seq", &v,
                                             &size) == 0)
                        r->prev_seq = hdr_int(v, size, INT64_MAX);
                /* Both or neither. */
                assert_int_equal(r->prev_epoch < 0, r->prev_seq < 0);
                r->has_msgid = rd_kafka_header_get_last(hdrs, "eos.msgid", &v,
                                                        &size) == 0;
                if (rd_kafka_header_get_last(hdrs, idhdr, &v, &size) == 0) {
                        assert_true(size >= 1 && size < sizeof(r->id));
                        memcpy(r->id, v, size);
                        r->has_id = 1;
                }
                for (r->id_cnt = 0; rd_kafka_header_get(hdrs, (size_t)r->id_cnt,
                                                        idhdr, &v, &size) == 0;
                     r->id_cnt++)
                        ;
                /* Every record is where Java's partitioner would put it. */
                assert_int_equal(r->partition,
                                 producer_partition(m->key, m->key_len,
                                                    MOCK_PARTITIONS));
                rd_kafka_message_destroy(m);
        }
        rd_kafka_consumer_close(rk);
        rd_kafka_destroy(rk);
}

static void mock_read(const char *topic, struct readback *rb)
{
        mock_read_id(topic, "eos.msgid", rb);
}

/* What an auditor of one producer's records would count. */
struct audit {
        uint64_t records, dups, gaps, fenced;
        int32_t epochs[2];
};

/* Walks each partition in offset order: a seq equal to the previous one is
 * a duplicate, a jump of k+1 is k missing; records of a lower epoch after
 * a higher one are fenced.  seq must start at 0 in every epoch. */
static void audit(const struct readback *rb, struct audit *a)
{
        int32_t p;
        size_t i;

        memset(a, 0, sizeof(*a));
        for (p = 0; p < MOCK_PARTITIONS; p++) {
                int64_t top_epoch = -1, last_off = -1;
                int64_t next[2] = {0, 0}, last_seq[2] = {-1, -1};
                int64_t base = -1;

                for (i = 0; i < rb->cnt; i++) {
                        const struct rec *r = &rb->recs[i];
                        int e;

                        if (r->partition != p)
                                continue;
                        assert_true(r->offset > last_off);
                        last_off = r->offset;
                        assert_string_equal(r->producer, "tp");
                        a->records++;
                        if (base < 0)
                                base = r->epoch;
                        e = (int)(r->epoch - base);
                        assert_true(e == 0 || e == 1);
                        if (r->epoch < top_epoch) {
                                a->fenced++;
                                /* The zombie still counts its own seqs. */
                                assert_int_equal(r->seq, next[e]);
                                next[e]++;
                                continue;
                        }
                        top_epoch = r->epoch;
                        if (r->seq == last_seq[e]) {
                                a->dups++;
                                continue;
                        }
                        assert_true(r->seq >= next[e]);
                        assert_true(r->seq <= next[e] + 1); /* gaps are 1 */
                        a->gaps += (uint64_t)(r->seq - next[e]);
                        last_seq[e] = r->seq;
                        next[e] = r->seq + 1;
                }
        }
}

/*
 * The eos.prev_* contract on every partition, in offset order: records of
 * a partition's first epoch carry none; every record of a later epoch
 * names the epoch before it there and the last (highest) seq of that
 * epoch there.  Returns how many records named one.
 */
static uint64_t prev_check(const struct readback *rb)
{
        uint64_t named = 0;
        int32_t p;
        size_t i;

        for (p = 0; p < MOCK_PARTITIONS; p++) {
                int64_t epoch = -1, last = -1, pe = -1, ps = -1;

                for (i = 0; i < rb->cnt; i++) {
                        const struct rec *r = &rb->recs[i];

                        if (r->partition != p)
                                continue;
                        if (r->epoch != epoch) {
                                assert_true(r->epoch > epoch);
                                pe = epoch;
                                ps = last;
                                epoch = r->epoch;
                                last = -1;
                        }
                        assert_int_equal(r->prev_epoch, pe);
                        assert_int_equal(r->prev_seq, ps);
                        named += pe >= 0;
                        if (r->seq > last)
                                last = r->seq;
                }
        }
        return named;
}

static void test_mock_idempotent(void **state)
{
        struct producer_opts o;
        struct producer_result res;
        struct readback rb;
        struct audit a;
        char errstr[512];
        size_t i;

        (void)state;
        mock_opts(&o, mock_topic());
        o.count = 20000;
        assert_int_equal(producer_run(&o, &res, errstr, sizeof(errstr)), 0);
        fprintf(stderr, "mock: %" PRIu64 " records of 100 bytes in %" PRId64
                        " ms\n",
                res.delivered, res.elapsed_ms);
        assert_int_equal(res.delivered, 20000);
        assert_int_equal(res.records, 20000);
        assert_int_equal(res.failed, 0);
        assert_int_equal(res.epoch, 0);
        assert_int_equal(res.pid, -1);
        assert_int_equal(res.partition_cnt, MOCK_PARTITIONS);

        mock_read(o.topic, &rb);
        assert_int_equal(rb.cnt, 20000);
        assert_int_equal(prev_check(&rb), 0); /* one session: no prev */
        audit(&rb, &a);
        assert_int_equal(a.dups + a.gaps + a.fenced, 0);
        for (i = 0; i < rb.cnt; i++) {
                assert_int_equal(rb.recs[i].epoch, 0);
                assert_int_equal(rb.recs[i].pid, -1);
        }
        free(rb.recs);
}

static void test_mock_injections(void **state)
{
        static const struct {
                double dup, gap;
                uint64_t seed;
                int64_t count;
        } cases[] = {
                {0.05, 0.05, 42, 3000},
                {0.5, 0, 7, 500},
                {0, 0.5, 7, 500},
                {1, 1, 3, 50}, /* every record: gap before, copy after */
        };
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct producer_opts o;
                struct producer_result res, again;
                struct readback rb;
                struct audit a;
                char errstr[512];

                mock_opts(&o, mock_topic());
                o.count = cases[i].count;
                o.dup_rate = cases[i].dup;
                o.gap_rate = cases[i].gap;
                o.seed = cases[i].seed;
                assert_int_equal(producer_run(&o, &res, errstr,
                                              sizeof(errstr)),
                                 0);
                assert_int_equal(res.failed, 0);
                assert_int_equal(res.records, (uint64_t)cases[i].count);
                assert_int_equal(res.delivered,
                                 res.records + res.duplicates_injected);
                if (cases[i].dup > 0)
                        assert_true(res.duplicates_injected > 0);
                if (cases[i].gap > 0)
                        assert_true(res.gaps_injected > 0);
                if (cases[i].dup == 1)
                        assert_int_equal(res.duplicates_injected,
                                         (uint64_t)cases[i].count);

                mock_read(o.topic, &rb);
                assert_int_equal(rb.cnt, res.delivered);
                audit(&rb, &a);
                assert_int_equal(a.dups, res.duplicates_injected);
                assert_int_equal(a.gaps, res.gaps_injected);
                assert_int_equal(a.fenced, 0);
                free(rb.recs);

                /* Same seed, same injections. */
                o.topic = mock_topic();
                assert_int_equal(producer_run(&o, &again, errstr,
                                              sizeof(errstr)),
                                 0);
                assert_int_equal(again.duplicates_injected,
                                 res.duplicates_injected);
                assert_int_equal(again.gaps_injected, res.gaps_injected);
        }
}

static void test_mock_zombie_idempotent(void **state)
{
        struct producer_opts o;
        struct producer_result res;
        struct readback rb;
        struct audit a;
        char errstr[512];

        (void)state;
        mock_opts(&o, mock_topic());
        o.count = 300;
        o.epoch = 5;
        o.zombie = 1;
        o.gap_rate = 0.1;
        o.dup_rate = 0.1;
        assert_int_equal(producer_run(&o, &res, errstr, sizeof(errstr)), 0);
        assert_int_equal(res.failed, 0);
        assert_int_equal(res.zombie_epoch, 5);
        assert_int_equal(res.epoch, 6);
        assert_int_equal(res.records, 300);
        assert_int_equal(res.zombie_records, 30);
        assert_int_equal(res.delivered, 300 + 30 + res.duplicates_injected);

        mock_read(o.topic, &rb);
        assert_int_equal(rb.cnt, res.delivered);
        audit(&rb, &a);
        assert_int_equal(a.fenced, res.zombie_records);
        assert_int_equal(a.dups, res.duplicates_injected);
        assert_int_equal(a.gaps, res.gaps_injected);
        free(rb.recs);
}

static void test_mock_state_file(void **state)
{
        static const struct {
                int zombie;
                int32_t epoch; /* of the live session */
                const char *after;
        } runs[] = {
                {0, 0, "0\n"},
                {0, 1, "1\n"},
                {1, 3, "3\n"}, /* the zombie takes 2, the live one 3 */
                {0, 4, "4\n"},
        };
        char path[] = "/tmp/test_producer_state.XXXXXX";
        char errstr[512];
        size_t i;
        int fd = mkstemp(path);

        (void)state;
        assert_true(fd >= 0);
        close(fd);
        unlink(path); /* a missing file is a first run */
        for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
                struct producer_opts o;
                struct producer_result res;
                char buf[32] = "";
                FILE *fp;

                mock_opts(&o, mock_topic());
                o.count = 20;
                o.state_path = path;
                o.zombie = runs[i].zombie;
                assert_int_equal(producer_run(&o, &res, errstr,
                                              sizeof(errstr)),
                                 0);
                assert_int_equal(res.epoch, runs[i].epoch);
                fp = fopen(path, "r");
                assert_non_null(fp);
                assert_non_null(fgets(buf, sizeof(buf), fp));
                fclose(fp);
                assert_string_equal(buf, runs[i].after);
        }
        /* A corrupt counter stops the run before anything is produced. */
        fd = open(path, O_WRONLY | O_TRUNC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "x\n", 2), 2);
        close(fd);
        {
                struct producer_opts o;
                struct producer_result res;

                mock_opts(&o, mock_topic());
                o.state_path = path;
                assert_int_equal(producer_run(&o, &res, errstr,
                                              sizeof(errstr)),
                                 PRODUCER_ERR_RUN);
                assert_non_null(strstr(errstr, "expected one line"));
                assert_int_equal(res.delivered, 0);
        }
        unlink(path);
}

static void test_mock_transactional(void **state)
{
        struct producer_opts o;
        struct producer_result res;
        struct readback rb;
        char errstr[512];
        int64_t *seqs;
        size_t i;

        (void)state;
        mock_opts(&o, mock_topic());
        o.transactional_id = "test-txn-1";
        o.count = 500;
        o.txn_size = 50;
        o.abort_every = 3;
        o.gap_rate = 0.02;
        o.dup_rate = 0.02;
        assert_int_equal(producer_run(&o, &res, errstr, sizeof(errstr)), 0);
        assert_int_equal(res.failed, 0);
        assert_true(res.pid >= 0);
        assert_true(res.epoch >= 0);
        /* Transactions 3, 6, 9 and 12 abort; 10 commit by number 14. */
        assert_int_equal(res.transactions, 10);
        assert_int_equal(res.aborted_transactions, 4);
        assert_true(res.aborted >= 200);
        assert_int_equal(res.records, 500);
        assert_int_equal(res.delivered,
                         res.records + res.duplicates_injected);

        mock_read(o.topic, &rb);
        for (i = 0; i < rb.cnt; i++) {
                assert_int_equal(rb.recs[i].pid, res.pid);
                assert_int_equal(rb.recs[i].epoch, res.epoch);
        }
        /* The mock cluster writes no transaction markers, so aborted
         * records stay visible: each is an exact copy (key and seq) of a
         * record its retry committed. */
        assert_int_equal(rb.cnt, res.delivered + res.aborted);
        seqs = malloc((size_t)o.count * sizeof(*seqs));
        assert_non_null(seqs);
        for (i = 0; i < (size_t)o.count; i++)
                seqs[i] = -1;
        for (i = 0; i < rb.cnt; i++) {
                int64_t k;

                assert_memory_equal(rb.recs[i].key, "tp-", 3);
                assert_int_equal(kconf_parse_i64(rb.recs[i].key + 3, 0,
                                                 o.count - 1, &k),
                                 0);
                if (seqs[k] == -1)
                        seqs[k] = rb.recs[i].seq;
                assert_int_equal(rb.recs[i].seq, seqs[k]);
        }
        for (i = 0; i < (size_t)o.count; i++)
                assert_true(seqs[i] >= 0);
        free(seqs);
        free(rb.recs);
}

/* The mock neither bumps the epoch for a second init_transactions() of the
 * same id nor fences the first instance, so the zombie's transaction
 * commits here; against a real broker it must end in zombie_fenced=1
 * (tests/integration).  This checks the flow and the counts. */
static void test_mock_zombie_transactional(void **state)
{
        struct producer_opts o;
        struct producer_result res;
        char errstr[512];

        (void)state;
        mock_opts(&o, mock_topic());
        o.transactional_id = "test-txn-zombie";
        o.count = 200;
        o.txn_size = 40;
        o.zombie = 1;
        assert_int_equal(producer_run(&o, &res, errstr, sizeof(errstr)), 0);
        assert_int_equal(res.failed, 0);
        assert_int_equal(res.records, 200);
        assert_true(res.pid >= 0);
        assert_true(res.zombie_epoch >= 0);
        /* A: 100 in 3 transactions, B: 100 in 3, the zombie 20 in 1. */
        assert_int_equal(res.transactions, 7);
        if (res.zombie_fenced) {
                assert_int_equal(res.zombie_records, 0);
        } else {
                assert_int_equal(res.zombie_records, 20);
        }
        assert_int_equal(res.delivered, 200 + res.zombie_records);
}

static void test_mock_stop(void **state)
{
        /* With restarts too: a stop ends the run, no restart follows. */
        static const int64_t restart_every[] = {0, 1};
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(restart_every) / sizeof(restart_every[0]);
             i++) {
                struct producer_opts o;
                struct producer_result res;
                volatile sig_atomic_t run = 0;
                char errstr[512];

                mock_opts(&o, mock_topic());
                o.run = &run;
                o.restart_every = restart_every[i];
                assert_int_equal(producer_run(&o, &res, errstr,
                                              sizeof(errstr)),
                                 0);
                assert_int_equal(res.stopped, 1);
                assert_int_equal(res.delivered, 0);
                assert_int_equal(res.failed, 0);
                assert_int_equal(res.restarts, 0);
        }
}

static void test_mock_rate(void **state)
{
        struct producer_opts o;
        struct producer_result res;
        char errstr[512];

        (void)state;
        mock_opts(&o, mock_topic());
        o.count = 50;
        o.rate = 200;
        assert_int_equal(producer_run(&o, &res, errstr, sizeof(errstr)), 0);
        assert_int_equal(res.delivered, 50);
        /* 49 intervals of 5 ms. */
        assert_true(res.elapsed_ms >= 240);
        assert_true(res.elapsed_ms < 2000);
}

/* ------------------------------------------------------------------ */
/* Message ids and restarts                                            */
/* ------------------------------------------------------------------ */

#define IDAUDIT_EPOCHS 64

/* What an auditor of message ids would see in one producer's records
 * without gaps or zombies (record n has key "tp-n"). */
struct idaudit {
        uint64_t distinct;    /* records with at least one copy */
        uint64_t dups;        /* copies with the previous copy's epoch
                                 and seq: in-session duplicates */
        uint64_t redelivered; /* copies in a higher epoch than the
                                 previous copy: cross-session repeats */
        size_t epoch_cnt;
        int64_t epochs[IDAUDIT_EPOCHS];       /* ascending */
        uint64_t replays[IDAUDIT_EPOCHS];     /* redelivered per epoch */
};

/* One (partition, epoch) stream of seqs. */
struct idstream {
        int32_t partition;
        int64_t epoch, next;
        int fresh; /* a first copy was seen: replays come before those */
};

static int64_t rec_number(const struct rec *r, int64_t count)
{
        int64_t n;

        assert_memory_equal(r->key, "tp-", 3);
        assert_int_equal(kconf_parse_i64(r->key + 3, 0, count - 1, &n), 0);
        return n;
}

/*
 * Checks every record of rb: its id (from idhdr, see mock_read_id()) is
 * what from says for its number (none: no eos.msgid at all); seqs run
 * from 0 by 1 in each (partition, epoch), a copy with the previous copy's
 * epoch and seq aside; epochs never go down on a partition; a record seen
 * before in a lower epoch is a redelivery, which comes before any new
 * record of its session on that partition.  With every > 0, the copies
 * in the k-th epoch after the first are of records every*k - replay ..
 * every*k - 1.
 */
static void idaudit(const struct readback *rb, int64_t count,
                    enum producer_msgid from, int64_t every, int64_t replay,
                    struct idaudit *a)
{
        int64_t *last_epoch = malloc((size_t)count * sizeof(*last_epoch));
        int64_t *last_seq = malloc((size_t)count * sizeof(*last_seq));
        struct idstream streams[MOCK_PARTITIONS * IDAUDIT_EPOCHS];
        int64_t top[MOCK_PARTITIONS];
        size_t stream_cnt = 0, i, j;

        memset(a, 0, sizeof(*a));
        assert_non_null(last_epoch);
        assert_non_null(last_seq);
        for (i = 0; i < (size_t)count; i++)
                last_epoch[i] = last_seq[i] = -1;
        for (i = 0; i < MOCK_PARTITIONS; i++)
                top[i] = -1;
        /* The sessions, in order. */
        for (i = 0; i < rb->cnt; i++) {
                int64_t e = rb->recs[i].epoch;

                for (j = 0; j < a->epoch_cnt && a->epochs[j] != e; j++)
                        ;
                if (j < a->epoch_cnt)
                        continue;
                assert_true(a->epoch_cnt < IDAUDIT_EPOCHS);
                for (j = a->epoch_cnt++; j > 0 && a->epochs[j - 1] > e; j--)
                        a->epochs[j] = a->epochs[j - 1];
                a->epochs[j] = e;
        }
        for (i = 0; i < rb->cnt; i++) {
                const struct rec *r = &rb->recs[i];
                int64_t n = rec_number(r, count);
                struct idstream *st = NULL;
                char want[64];
                size_t k;

                if (from == PRODUCER_MSGID_NONE) {
                        assert_false(r->has_msgid);
                        assert_false(r->has_id);
                } else {
                        if (from == PRODUCER_MSGID_KEY)
                                snprintf(want, sizeof(want), "%s", r->key);
                        else
                                snprintf(want, sizeof(want), "%" PRId64, n);
                        assert_true(r->has_id);
                        assert_int_equal(r->id_cnt, 1);
                        assert_string_equal(r->id, want);
                }
                for (k = 0; k < a->epoch_cnt && a->epochs[k] != r->epoch; k++)
                        ;
                assert_true(r->epoch >= top[r->partition]); /* no zombie */
                top[r->partition] = r->epoch;
                for (j = 0; j < stream_cnt && !st; j++)
                        if (streams[j].partition == r->partition &&
                            streams[j].epoch == r->epoch)
                                st = &streams[j];
                if (!st) {
                        assert_true(stream_cnt < sizeof(streams) /
                                                         sizeof(streams[0]));
                        st = &streams[stream_cnt++];
                        memset(st, 0, sizeof(*st));
                        st->partition = r->partition;
                        st->epoch = r->epoch;
                }
                if (last_epoch[n] == r->epoch && last_seq[n] == r->seq) {
                        a->dups++; /* the same write again */
                        assert_int_equal(r->seq, st->next - 1);
                        continue;
                }
                assert_int_equal(r->seq, st->next);
                st->next++;
                if (last_epoch[n] < 0) {
                        a->distinct++;
                        st->fresh = 1;
                } else {
                        /* The original (and any earlier replay) is in a
                         * lower epoch; replays open the session. */
                        assert_true(r->epoch > last_epoch[n]);
                        assert_false(st->fresh);
                        a->redelivered++;
                        a->replays[k]++;
                        if (every > 0) {
                                assert_true(k >= 1);
                                assert_true(n < every * (int64_t)k);
                                assert_true(n >= every * (int64_t)k - replay);
                        }
                }
                last_epoch[n] = r->epoch;
                last_seq[n] = r->seq;
        }
        free(last_epoch);
        free(last_seq);
}

static void test_mock_msgid_from(void **state)
{
        static const enum producer_msgid cases[] = {
                PRODUCER_MSGID_KEY,
                PRODUCER_MSGID_INDEX,
                PRODUCER_MSGID_NONE,
        };
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct producer_opts o;
                struct producer_result res;
                struct readback rb;
                struct idaudit a;
                char errstr[512];

                mock_opts(&o, mock_topic());
                o.count = 300;
                o.dup_rate = 0.2; /* a duplicate carries its record's id */
                o.msgid_from = cases[i];
                assert_int_equal(producer_run(&o, &res, errstr,
                                              sizeof(errstr)),
                                 0);
                assert_int_equal(res.failed, 0);
                assert_true(res.duplicates_injected > 0);
                assert_int_equal(res.restarts, 0);
                assert_int_equal(res.redelivered_injected, 0);

                mock_read(o.topic, &rb);
                assert_int_equal(rb.cnt, res.delivered);
                idaudit(&rb, o.count, cases[i], 0, 0, &a);
                assert_int_equal(a.distinct, 300);
                assert_int_equal(a.dups, res.duplicates_injected);
                assert_int_equal(a.redelivered, 0);
                assert_int_equal(a.epoch_cnt, 1);
                free(rb.recs);
        }
}

static void test_mock_msgid_header(void **state)
{
        static const struct {
                enum producer_msgid from;
                const char *header;
        } cases[] = {
                {PRODUCER_MSGID_KEY, "ce_id"},
                {PRODUCER_MSGID_INDEX, "x-request-id"},
                {PRODUCER_MSGID_KEY, "eos.msgid"},
        };
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct producer_opts o;
                struct producer_result res;
                struct readback rb;
                struct idaudit a;
                char errstr[512];
                size_t j;

                mock_opts(&o, mock_topic());
                o.count = 100;
                o.msgid_from = cases[i].from;
                o.msgid_header = cases[i].header;
                assert_int_equal(producer_run(&o, &res, errstr,
                                              sizeof(errstr)),
                                 0);
                assert_int_equal(res.delivered, 100);

                mock_read_id(o.topic, cases[i].header, &rb);
                assert_int_equal(rb.cnt, 100);
                idaudit(&rb, o.count, cases[i].from, 0, 0, &a);
                assert_int_equal(a.distinct, 100);
                /* The id is under the other name only. */
                for (j = 0; j < rb.cnt; j++)
                        assert_int_equal(rb.recs[j].has_msgid,
                                         strcmp(cases[i].header,
                                                "eos.msgid") == 0);
                free(rb.recs);
        }
}

/* Removes what an aborted transaction left visible on the mock cluster
 * (it writes no transaction markers): a record followed by another with
 * its partition, epoch and seq, which its retry wrote.  Only for runs
 * without injected duplicates.  Returns how many were removed. */
static size_t drop_aborted(struct readback *rb)
{
        size_t i, j, kept = 0;

        for (i = 0; i < rb->cnt; i++) {
                const struct rec *r = &rb->recs[i];
                int retried = 0;

                for (j = i + 1; j < rb->cnt && !retried; j++)
                        if (rb->recs[j].partition == r->partition &&
                            rb->recs[j].epoch == r->epoch &&
                            rb->recs[j].seq == r->seq) {
                                assert_string_equal(rb->recs[j].key, r->key);
                                retried = 1;
                        }
                if (!retried)
                        rb->recs[kept++] = *r;
        }
        j = rb->cnt - kept;
        rb->cnt = kept;
        return j;
}

/* Records replayed at restart k (1, 2, ...), which comes after record
 * every * k - 1: the last replay of them, or all there are. */
static uint64_t replays_at(int64_t every, int64_t replay, uint64_t k)
{
        uint64_t sent = (uint64_t)every * k;

        return (uint64_t)replay < sent ? (uint64_t)replay : sent;
}

static void test_mock_restart(void **state)
{
        static const struct {
                const char *txid; /* NULL: idempotent */
                int64_t count, every, replay;
                int64_t epoch;    /* --epoch, -1 none */
                int state;        /* --state (a fresh file) */
                double dup;
                int64_t txn_size, abort_every;
                enum producer_msgid from;
        } cases[] = {
                /* 3 restarts, 10 replayed after each. */
                {NULL, 100, 30, 10, -1, 0, 0, 0, 0, PRODUCER_MSGID_KEY},
                /* Replays reach back past the last restart; duplicates
                 * (same session) stay apart from replays. */
                {NULL, 50, 7, 20, -1, 0, 0.2, 0, 0, PRODUCER_MSGID_INDEX},
                /* New sessions only; --epoch 5 goes up by one. */
                {NULL, 40, 10, 0, 5, 0, 0, 0, 0, PRODUCER_MSGID_KEY},
                /* Never more replays than records delivered; --state
                 * takes an epoch per session. */
                {NULL, 30, 10, 1000, -1, 1, 0, 0, 0, PRODUCER_MSGID_KEY},
                /* -n a multiple of N: no restart after the last record. */
                {NULL, 20, 10, 5, -1, 0, 0, 0, 0, PRODUCER_MSGID_KEY},
                /* Transactional: the last transaction commits first. */
                {"tx-restart-1", 120, 50, 15, -1, 0, 0, 20, 0,
                 PRODUCER_MSGID_KEY},
                /* Aborted transactions with replays in them replay them
                 * again in their retry. */
                {"tx-restart-2", 100, 40, 30, -1, 0, 0, 15, 2,
                 PRODUCER_MSGID_INDEX},
        };
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct producer_opts o;
                struct producer_result res;
                struct readback rb;
                struct idaudit a;
                char errstr[512];
                char path[] = "/tmp/test_producer_restart.XXXXXX";
                uint64_t restarts = (uint64_t)(cases[i].count - 1) /
                                    (uint64_t)cases[i].every;
                uint64_t want = 0, k;
                size_t j;

                fprintf(stderr, "restart case %zu\n", i);
                mock_opts(&o, mock_topic());
                o.count = cases[i].count;
                o.restart_every = cases[i].every;
                o.restart_replay = cases[i].replay;
                o.epoch = cases[i].epoch;
                o.dup_rate = cases[i].dup;
                o.msgid_from = cases[i].from;
                if (cases[i].txid) {
                        o.transactional_id = cases[i].txid;
                        o.txn_size = cases[i].txn_size;
                        o.abort_every = cases[i].abort_every;
                }
                if (cases[i].state) {
                        int fd = mkstemp(path);

                        assert_true(fd >= 0);
                        close(fd);
                        unlink(path); /* a first run */
                        o.state_path = path;
                }
                assert_int_equal(producer_run(&o, &res, errstr,
                                              sizeof(errstr)),
                                 0);
                for (k = 1; k <= restarts; k++)
                        want += replays_at(cases[i].every, cases[i].replay,
                                           k);
                assert_int_equal(res.failed, 0);
                assert_int_equal(res.records, (uint64_t)cases[i].count);
                assert_int_equal(res.restarts, restarts);
                assert_int_equal(res.redelivered_injected, want);
                assert_int_equal(res.delivered,
                                 res.records + res.duplicates_injected +
                                         res.redelivered_injected);
                if (cases[i].dup > 0)
                        assert_true(res.duplicates_injected > 0);

                mock_read(o.topic, &rb);
                if (cases[i].abort_every) {
                        assert_true(res.aborted_transactions > 0);
                        assert_int_equal(drop_aborted(&rb), res.aborted);
                }
                assert_int_equal(rb.cnt, res.delivered);
                assert_true(prev_check(&rb) > 0);
                idaudit(&rb, o.count, cases[i].from, cases[i].every,
                        cases[i].replay, &a);
                assert_int_equal(a.distinct, (uint64_t)cases[i].count);
                assert_int_equal(a.redelivered, res.redelivered_injected);
                assert_int_equal(a.dups, res.duplicates_injected);
                /* One session per restart, each with a higher epoch. */
                assert_int_equal(a.epoch_cnt, restarts + 1);
                assert_int_equal(a.epochs[a.epoch_cnt - 1], res.epoch);
                for (k = 1; k <= restarts; k++)
                        assert_int_equal(a.replays[k],
                                         replays_at(cases[i].every,
                                                    cases[i].replay, k));
                if (!cases[i].txid) {
                        int64_t first = cases[i].epoch > 0 ? cases[i].epoch
                                                           : 0;

                        for (j = 0; j < a.epoch_cnt; j++)
                                assert_int_equal(a.epochs[j],
                                                 first + (int64_t)j);
                } else {
                        assert_true(res.pid >= 0);
                }
                if (cases[i].state) {
                        char buf[32] = "", want_buf[32];
                        FILE *fp = fopen(path, "r");

                        assert_non_null(fp);
                        assert_non_null(fgets(buf, sizeof(buf), fp));
                        fclose(fp);
                        snprintf(want_buf, sizeof(want_buf), "%" PRIu64 "\n",
                                 restarts);
                        assert_string_equal(buf, want_buf);
                        unlink(path);
                }
                free(rb.recs);
        }
}

/* Records that were never delivered are not replayed: a partition
 * without a leader loses every record sent to it. */
static void test_mock_restart_lost(void **state)
{
        static const char *const kv[] = {"log_level=3",
                                         "message.timeout.ms=300"};
        struct producer_opts o;
        struct producer_result res;
        struct readback rb;
        struct idaudit a;
        char errstr[512], key[32];
        uint64_t lost = 0, want = 0;
        int64_t n;

        (void)state;
        mock_opts(&o, mock_topic());
        o.conf_kv = kv;
        o.conf_kv_cnt = 2;
        o.count = 30;
        o.restart_every = 10;
        o.restart_replay = 10;
        assert_int_equal(rd_kafka_mock_partition_set_leader(mock, o.topic, 2,
                                                            -1),
                         RD_KAFKA_RESP_ERR_NO_ERROR);
        assert_int_equal(producer_run(&o, &res, errstr, sizeof(errstr)), 0);
        for (n = 0; n < o.count; n++) {
                int len = snprintf(key, sizeof(key), "tp-%" PRId64, n);

                if (producer_partition(key, (size_t)len, MOCK_PARTITIONS) ==
                    2)
                        lost++;
                else if (n < 20) /* replayed at the restart after 10, 20 */
                        want++;
        }
        assert_true(lost > 0);
        assert_int_equal(res.restarts, 2);
        assert_int_equal(res.failed, lost); /* no replay of them failed */
        assert_int_equal(res.redelivered_injected, want);

        /* A leader again, so that reading reaches the partition's end. */
        assert_int_equal(rd_kafka_mock_partition_set_leader(mock, o.topic, 2,
                                                            1),
                         RD_KAFKA_RESP_ERR_NO_ERROR);
        mock_read(o.topic, &rb);
        assert_int_equal(rb.cnt, res.delivered);
        idaudit(&rb, o.count, PRODUCER_MSGID_KEY, 10, 10, &a);
        assert_int_equal(a.distinct, 30 - lost);
        assert_int_equal(a.redelivered, want);
        free(rb.recs);
}


int main(void)
{
        const struct CMUnitTest unit[] = {
                cmocka_unit_test(test_murmur2_java_vectors),
                cmocka_unit_test(test_murmur2_matches_librdkafka),
                cmocka_unit_test(test_kconf_parse_numbers),
                cmocka_unit_test(test_kconf_set),
                cmocka_unit_test(test_kconf_file_load),
                cmocka_unit_test(test_args),
                cmocka_unit_test(test_opts_check_name),
                cmocka_unit_test(test_opts_check_msgid_restart),
                cmocka_unit_test(test_result_format),
        };
        const struct CMUnitTest mocked[] = {
                cmocka_unit_test(test_mock_idempotent),
                cmocka_unit_test(test_mock_injections),
                cmocka_unit_test(test_mock_zombie_idempotent),
                cmocka_unit_test(test_mock_state_file),
                cmocka_unit_test(test_mock_transactional),
                cmocka_unit_test(test_mock_zombie_transactional),
                cmocka_unit_test(test_mock_stop),
                cmocka_unit_test(test_mock_rate),
                cmocka_unit_test(test_mock_msgid_from),
                cmocka_unit_test(test_mock_msgid_header),
                cmocka_unit_test(test_mock_restart),
                cmocka_unit_test(test_mock_restart_lost),
        };
        int failed = cmocka_run_group_tests_name("producer", unit, NULL, NULL);

        failed += cmocka_run_group_tests_name("producer against the mock "
                                              "cluster",
                                              mocked, setup_mock,
                                              teardown_mock);
        return failed ? 1 : 0;
}
