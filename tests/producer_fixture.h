/*
 * producer_fixture.h - what the mock-cluster tests of the reference
 * producer (test_producer_mock.c, test_producer_msgid.c) share: the group
 * fixture hosting librdkafka's in-process mock cluster, fresh topic names,
 * a plain consumer reading every record back, and the auditor's view of
 * one producer's records.
 *
 * Each test binary is one translation unit, so the helpers are static
 * (inline, so that a binary using only some of them compiles warning-free).
 */
#ifndef EOSAUDIT_TESTS_PRODUCER_FIXTURE_H
#define EOSAUDIT_TESTS_PRODUCER_FIXTURE_H

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

static __attribute__((unused))
rd_kafka_t *mock_rk; /* hosts the mock cluster */
static __attribute__((unused)) rd_kafka_mock_cluster_t *mock;
static __attribute__((unused)) int topic_serial;

/* ------------------------------------------------------------------ */
/* Mock cluster                                                        */
/* ------------------------------------------------------------------ */

struct rec {
        int32_t partition;
        int64_t offset;
        char key[64];
        char producer[64];
        int64_t epoch, seq, pid;      /* pid -1 when absent */
        int64_t prev_epoch, prev_seq; /* -1 when absent */
        char id[64];   /* the id header mock_read_id() was asked for */
        int has_id;    /* ... present (the last one, like the auditor) */
        int id_cnt;    /* ... how many times */
        int has_msgid; /* eos.msgid present */
};

struct readback {
        struct rec *recs;
        size_t cnt, cap;
};

static inline int setup_mock(void **state)
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

static inline int teardown_mock(void **state)
{
        (void)state;
        if (mock)
                rd_kafka_mock_cluster_destroy(mock);
        if (mock_rk)
                rd_kafka_destroy(mock_rk);
        return 0;
}

static inline const char *mock_topic(void)
{
        static char topic[64];

        snprintf(topic, sizeof(topic), "eos-test-%d", ++topic_serial);
        assert_int_equal(rd_kafka_mock_topic_create(mock, topic,
                                                    MOCK_PARTITIONS, 1),
                         RD_KAFKA_RESP_ERR_NO_ERROR);
        return topic;
}

static inline void mock_opts(struct producer_opts *o, const char *topic)
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

static inline int64_t hdr_int(const void *v, size_t size, int64_t max)
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
static inline void mock_read_id(const char *topic, const char *idhdr,
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
                for (r->id_cnt = 0;
                     rd_kafka_header_get(hdrs, (size_t)r->id_cnt, idhdr, &v,
                                         &size) == 0;
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

static inline void mock_read(const char *topic, struct readback *rb)
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
static inline void audit(const struct readback *rb, struct audit *a)
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
static inline uint64_t prev_check(const struct readback *rb)
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

#endif /* EOSAUDIT_TESTS_PRODUCER_FIXTURE_H */
