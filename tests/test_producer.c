/*
 * test_producer.c - the reference producer's pure parts and the kconf
 * helpers: murmur2, kconf numbers, settings and files, the command line,
 * option checks, the result line.  The end-to-end cases against
 * librdkafka's in-process mock cluster are in test_producer_mock.c and
 * test_producer_msgid.c.
 *
 * The murmur2 vectors were computed with Kafka's own
 * org.apache.kafka.common.utils.Utils.murmur2 (kafka-clients 4.1.0, the
 * jar in deploy/kafka/lib).
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
            {"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971, 2},
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
                        x = x * 6364136223846793005ull +
                            1442695040888963407ull;
                        key[j] = (unsigned char)(x >> 56);
                }
                /* librdkafka's murmur2 partitioner never looks at rkt. */
                assert_int_equal(producer_partition(key, len, cnt),
                                 rd_kafka_msg_partitioner_murmur2(
                                     NULL, len ? key : (void *)"", len, cnt,
                                     NULL, NULL));
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
            {"0", 0, 0},       {"1", 0, 1},       {"0.25", 0, 0.25},
            {".5", 0, 0.5},    {"1e-1", 0, 0.1},  {"1.5", -1, 0},
            {"-0.1", -1, 0},   {"nan", -1, 0},    {"inf", -1, 0},
            {"0x1p-1", -1, 0}, {" 0.5", -1, 0},   {"0.5 ", -1, 0},
            {"", -1, 0},       {"1e-400", -1, 0},
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
        assert_int_equal(kconf_parse_u64("18446744073709551615", 0, UINT64_MAX,
                                         &u),
                         0);
        assert_true(u == UINT64_MAX);
        assert_int_equal(kconf_parse_u64("-1", 0, UINT64_MAX, &u), -1);
        assert_int_equal(kconf_parse_u64("18446744073709551616", 0, UINT64_MAX,
                                         &u),
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
            {2, {"-b", "127.0.0.1:1", "-t", "t"}},         /* no --producer */
            /* --producer defaults to the transactional id. */
            {2,
             {"-b", "x", "-t", "t", "--transactional-id", "tx", "--state",
              "/tmp/s"}},
            {2, {"-t", "t", "--producer", "p"}}, /* no brokers */
            {2, {"-b", "x", "-t", "t", "--producer", "p", "-n", "-1"}},
            {2, {"-b", "x", "-t", "t", "--producer", "p", "-n", "1k"}},
            {2, {"-b", "x", "-t", "t", "--producer", "p", "--size", "-1"}},
            {2, {"-b", "x", "-t", "t", "--producer", "p", "--rate", "x"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--inject-gaps",
              "1.5"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--inject-duplicates",
              "-0.1"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--epoch",
              "2147483648"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--epoch", "2147483647",
              "--zombie"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--epoch", "1",
              "--state", "/tmp/s"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--abort-every", "2"}},
            {2, {"-b", "x", "-t", "t", "--producer", "p", "--txn-size", "5"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--transactional-id",
              "x", "--abort-every", "1"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--transactional-id",
              "x", "--epoch", "3"}},
            {2, {"-b", "x", "-t", "t", "--producer", "p", "--bogus"}},
            {2, {"-b", "x", "-t", "t", "--producer", "p", "-Z"}},
            {2, {"-b", "x", "-t", "t", "--producer", "p", "extra"}},
            {2, {"-b", "x", "-t", "t", "--producer"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "-X",
              "no.such.property=1"}},
            {2, {"-b", "x", "-t", "t", "--producer", "p", "-X", "acks"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "-X",
              "transactional.id=x"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "-F",
              "/nonexistent.properties"}},
            /* librdkafka refuses acks=1 with idempotence at creation. */
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "-q", "-X", "acks=1"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--msgid-from",
              "uuid"}},
            {2, {"-b", "x", "-t", "t", "--producer", "p", "--msgid-from", ""}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--msgid-from", "Key"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--msgid-header", ""}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--msgid-header",
              "eos.seq"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--msgid-from", "none",
              "--msgid-header", "ce_id"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--msgid-header",
              "ce_id", "--msgid-from", "none"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--restart-every",
              "-1"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--restart-every",
              "1k"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--restart-every",
              " 5"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--restart-every", ""}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--restart-every",
              "9223372036854775808"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--restart-replay",
              "5"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--restart-every", "0",
              "--restart-replay", "5"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--restart-every", "10",
              "--restart-replay", "-1"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--restart-every", "10",
              "--restart-replay", "1000001"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--restart-every", "10",
              "--restart-replay", "1.5"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "--restart-every", "10",
              "--zombie"}},
            {2,
             {"-b", "x", "-t", "t", "--producer", "p", "-n", "3",
              "--restart-every", "1", "--epoch", "2147483647"}},
            {2, {"-b", "x", "-t", "t", "--producer", "p", "--restart-every"}},
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
                assert_int_equal(cmd_produce(argc, argv, &run),
                                 cases[i].status);
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
            {PRODUCER_MSGID_KEY, 0, "eos.msgid", 1000, 0, 10, -1, 0, NULL},
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
            {PRODUCER_MSGID_KEY, 0, "eos.msgid", 20, 10, 10, 2147483646, 0,
             NULL},
            {PRODUCER_MSGID_KEY, 0, "eos.msgid", 21, 10, 10, 2147483646, 0,
             "past 2147483647"},
            {PRODUCER_MSGID_INDEX, 0, "eos.msgid", INT64_MAX, 1, 10, 5, 0,
             "past 2147483647"},
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
        res.unconfirmed = 4;
        assert_true(producer_result_format(&res, 0, buf, sizeof(buf)) > 0);
        assert_non_null(strstr(buf, " redelivered_injected=7 restarts=2 "));
        assert_non_null(strstr(buf, " unconfirmed=4"));
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

#define T(f) cmocka_unit_test(f)

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_murmur2_java_vectors), T(test_murmur2_matches_librdkafka),
            T(test_kconf_parse_numbers),  T(test_kconf_set),
            T(test_kconf_file_load),      T(test_args),
            T(test_opts_check_name),      T(test_opts_check_msgid_restart),
            T(test_result_format),
        };

        int failed = cmocka_run_group_tests_name("producer", tests, NULL,
                                                 NULL);

        return failed ? 1 : 0;
}
