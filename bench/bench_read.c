/*
 * bench_read.c - how fast this machine can read a topic to its end when
 * the reading is split over threads, with nothing audited: the ceiling of
 * the partitioned designs issue 16 proposed ("each thread its own
 * partition queue: rd_kafka_queue_get_partition or one consumer per
 * thread - measure both"), measured before anyone builds them.
 *
 *   -m consumers  THREADS consumers (rd_kafka_t each: its own broker
 *                 threads and connections), thread i assigned the
 *                 partitions p with p % THREADS == i
 *   -m queues     one consumer; each partition's queue
 *                 (rd_kafka_queue_get_partition) forwarded to the queue of
 *                 thread p % THREADS
 *   -H            per record what eosaudit does before its audit:
 *                 rd_kafka_message_headers(), every header through
 *                 dedup_hdrs_feed(), eos.msgid hashed with dedup_id_hash()
 *
 * Every consumer has eosaudit's settings (audit_kconf_defaults() and
 * audit_kconf_apply(): read_committed, its prefetch budget per consumer,
 * the 50 ms fetch wake-up, enable.partition.eof), reads from the
 * beginning and stops at each partition's end.  Prints one line:
 * "records SECONDS" (wall clock from before the consumers are made).
 *
 * usage: bench_read -b BROKER -t TOPIC [-m consumers|queues] [-n THREADS]
 *                   [-H]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "../auditor/audit/audit.h"
#include "../dedup/dedup.h"

#define MAX_THREADS 64
#define BATCH 1000

struct reader {
        rd_kafka_t *rk;      /* consumers mode: this thread's own */
        rd_kafka_queue_t *q; /* what the thread reads */
        int parts;           /* partitions it waits for the end of */
        int headers;
        uint64_t records, sink;
        pthread_t th;
};

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *why)
{
        fprintf(stderr, "bench_read: %s: %s\n", what, why);
        exit(2);
}

static rd_kafka_t *consumer(const char *broker)
{
        char err[512];
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        rd_kafka_t *rk;

        /* eosaudit's own consumer settings, from where eosaudit takes
         * them; group.id only because librdkafka's consumer needs one
         * (assign() only: the group is never joined). */
        if (audit_kconf_defaults(conf, err, sizeof(err)) ||
            rd_kafka_conf_set(conf, "bootstrap.servers", broker, err,
                              sizeof(err)) != RD_KAFKA_CONF_OK ||
            rd_kafka_conf_set(conf, "group.id", "bench-read", err,
                              sizeof(err)) != RD_KAFKA_CONF_OK ||
            audit_kconf_apply(conf, err, sizeof(err)))
                die("configuration", err);
        rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
        if (!rk)
                die("rd_kafka_new", err);
        return rk;
}

static int partitions(rd_kafka_t *rk, const char *topic)
{
        const struct rd_kafka_metadata *md;
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
        int n;

        if (!rkt || rd_kafka_metadata(rk, 0, rkt, &md, 10000) !=
                        RD_KAFKA_RESP_ERR_NO_ERROR)
                die(topic, "no metadata");
        if (md->topic_cnt != 1 || md->topics[0].err)
                die(topic, "no such topic");
        n = md->topics[0].partition_cnt;
        rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(rkt);
        return n;
}

static void assign(rd_kafka_t *rk, const char *topic, int nparts, int nth,
                   int which)
{
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(
            nparts);
        int p;

        for (p = 0; p < nparts; p++)
                if (which < 0 || p % nth == which)
                        rd_kafka_topic_partition_list_add(l, topic, p)
                            ->offset = RD_KAFKA_OFFSET_BEGINNING;
        if (rd_kafka_assign(rk, l))
                die(topic, "assign failed");
        rd_kafka_topic_partition_list_destroy(l);
}

static void record(struct reader *r, const rd_kafka_message_t *m)
{
        rd_kafka_headers_t *hdrs;
        struct dedup_hdrs h;
        struct dedup_id id;
        const char *name;
        const void *val;
        size_t size, i;

        r->records++;
        if (!r->headers)
                return;
        dedup_hdrs_init(&h);
        if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR)
                for (i = 0;
                     !rd_kafka_header_get_all(hdrs, i, &name, &val, &size);
                     i++)
                        dedup_hdrs_feed(&h, name, strlen(name), val, size);
        if (h.msgid) {
                dedup_id_hash(h.msgid, h.msgid_len, &id);
                r->sink += id.lo;
        }
}

static void *run(void *opaque)
{
        struct reader *r = opaque;
        rd_kafka_message_t *msgs[BATCH];
        int eofs = 0;

        while (eofs < r->parts) {
                ssize_t n = rd_kafka_consume_batch_queue(r->q, 100, msgs,
                                                         BATCH),
                        i;
                if (n < 0)
                        die("consume",
                            rd_kafka_err2str(rd_kafka_last_error()));
                for (i = 0; i < n; i++) {
                        if (msgs[i]->err == RD_KAFKA_RESP_ERR__PARTITION_EOF)
                                eofs++;
                        else if (msgs[i]->err)
                                die("consume",
                                    rd_kafka_message_errstr(msgs[i]));
                        else
                                record(r, msgs[i]);
                        rd_kafka_message_destroy(msgs[i]);
                }
        }
        return NULL;
}

int main(int argc, char **argv)
{
        const char *broker = NULL, *topic = NULL, *mode = "consumers";
        struct reader rd[MAX_THREADS];
        rd_kafka_t *rk;
        int nth = 1, headers = 0, nparts, i, p, c;
        uint64_t total = 0, sink = 0;
        double t0;

        while ((c = getopt(argc, argv, "b:t:m:n:H")) != -1) {
                switch (c) {
                case 'b':
                        broker = optarg;
                        break;
                case 't':
                        topic = optarg;
                        break;
                case 'm':
                        mode = optarg;
                        break;
                case 'n': {
                        char *end;
                        long v = strtol(optarg, &end, 10);
                        nth = *optarg && !*end && v >= 1 && v <= MAX_THREADS
                                  ? (int)v
                                  : 0;
                        break;
                }
                case 'H':
                        headers = 1;
                        break;
                default:
                        fprintf(stderr,
                                "usage: bench_read -b BROKER -t TOPIC "
                                "[-m consumers|queues] [-n THREADS] [-H]\n");
                        return 2;
                }
        }
        if (!broker || !topic || nth < 1 || nth > MAX_THREADS ||
            (strcmp(mode, "consumers") && strcmp(mode, "queues")))
                die("usage", "-b BROKER -t TOPIC [-m consumers|queues] "
                             "[-n 1..64] [-H]");
        memset(rd, 0, sizeof(rd));
        t0 = now_s();
        rk = consumer(broker);
        nparts = partitions(rk, topic);
        if (nth > nparts)
                nth = nparts;
        for (i = 0; i < nth; i++) {
                rd[i].headers = headers;
                for (p = 0; p < nparts; p++)
                        rd[i].parts += p % nth == i;
        }
        if (!strcmp(mode, "queues")) {
                for (i = 0; i < nth; i++)
                        rd[i].q = rd_kafka_queue_new(rk);
                assign(rk, topic, nparts, nth, -1);
                for (p = 0; p < nparts; p++) {
                        rd_kafka_queue_t *pq =
                            rd_kafka_queue_get_partition(rk, topic, p);
                        if (!pq)
                                die(topic, "no partition queue");
                        rd_kafka_queue_forward(pq, rd[p % nth].q);
                        rd_kafka_queue_destroy(pq);
                }
        } else {
                rd[0].rk = rk;
                for (i = 1; i < nth; i++)
                        rd[i].rk = consumer(broker);
                for (i = 0; i < nth; i++) {
                        assign(rd[i].rk, topic, nparts, nth, i);
                        rd[i].q = rd_kafka_queue_get_consumer(rd[i].rk);
                }
        }
        for (i = 0; i < nth; i++)
                if (pthread_create(&rd[i].th, NULL, run, &rd[i]))
                        die("pthread_create", "failed");
        for (i = 0; i < nth; i++) {
                pthread_join(rd[i].th, NULL);
                total += rd[i].records;
                sink += rd[i].sink;
        }
        printf("%llu %.3f\n", (unsigned long long)total, now_s() - t0);
        fprintf(stderr, "bench_read: %s, %d thread(s)%s; hash sum %llx\n",
                mode, nth, headers ? ", headers parsed" : "",
                (unsigned long long)sink);
        for (i = 0; i < nth; i++) {
                rd_kafka_queue_destroy(rd[i].q);
                if (rd[i].rk && rd[i].rk != rk) {
                        rd_kafka_consumer_close(rd[i].rk);
                        rd_kafka_destroy(rd[i].rk);
                }
        }
        rd_kafka_consumer_close(rk);
        rd_kafka_destroy(rk);
        return 0;
}
