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

#include "../auditor/kconf.h"
#include "../producer/producer.h"

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
                {"sasl.password=a=b", 0, NULL},
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
        conf_expect(conf, "sasl.password", "a=b");
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
        /* None of these may reach a broker: 127.0.0.1:1 would hang. */
        static const struct {
                int status;
                const char *argv[12];
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
                        assert_int_equal(producer_main(argc, argv), 0);
                        fflush(stdout);
                        dup2(saved, STDOUT_FILENO);
                        close(saved);
                        close(null);
                        fputc('\n', stderr);
                        continue;
                }
                assert_int_equal(producer_main(argc, argv), cases[i].status);
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
        assert_int_equal(producer_opts_check(&o, errstr, sizeof(errstr)), -1);
        name[PRODUCER_NAME_MAX] = '\0';
        assert_int_equal(producer_opts_check(&o, errstr, sizeof(errstr)), 0);
        o.name = "";
        assert_int_equal(producer_opts_check(&o, errstr, sizeof(errstr)), -1);
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
        len = producer_result_format(&res, 1, buf, sizeof(buf));
        assert_int_equal(len, (int)strlen(buf));
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

/* Reads every partition of topic from the beginning to its end. */
static void mock_read(const char *topic, struct readback *rb)
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
                /* Every record is where Java's partitioner would put it. */
                assert_int_equal(r->partition,
                                 producer_partition(m->key, m->key_len,
                                                    MOCK_PARTITIONS));
                rd_kafka_message_destroy(m);
        }
        rd_kafka_consumer_close(rk);
        rd_kafka_destroy(rk);
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
        struct producer_opts o;
        struct producer_result res;
        volatile sig_atomic_t run = 0;
        char errstr[512];

        (void)state;
        mock_opts(&o, mock_topic());
        o.run = &run;
        assert_int_equal(producer_run(&o, &res, errstr, sizeof(errstr)), 0);
        assert_int_equal(res.stopped, 1);
        assert_int_equal(res.delivered, 0);
        assert_int_equal(res.failed, 0);
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
        };
        int failed = cmocka_run_group_tests_name("producer", unit, NULL, NULL);

        failed += cmocka_run_group_tests_name("producer against the mock "
                                              "cluster",
                                              mocked, setup_mock,
                                              teardown_mock);
        return failed ? 1 : 0;
}
