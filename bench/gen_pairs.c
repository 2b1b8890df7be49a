/*
 * gen_pairs.c - fills a topic with many (partition, producer) pairs for
 * bench/cardinality.sh: K producer names, each writing C records to every
 * one of the topic's P partitions, so the topic holds P*K pairs and P*K*C
 * records.  One idempotent librdkafka producer (acks=all) writes them all,
 * stamping the eos.* headers of schema/HEADERS.md as K distinct producers
 * would: eos.producer "gp-NNNNN", eos.epoch, and eos.seq counting per
 * (producer, partition) from 0.  The partition is chosen explicitly.
 *
 * Each partition's log holds seq 0 of every producer, then seq 1 of every
 * producer, and so on: it changes producer at every record, the engine's
 * worst case.  Partitions are written one after the other.
 *
 * usage: gen_pairs -b BROKERS -t TOPIC [-p PARTITIONS] [-k PRODUCERS]
 *                  [-c RECORDS_PER_PAIR] [-s SIZE] [-e EPOCH] [-q] [--json]
 *
 * -p, when given, must match the topic's partition count (read from the
 * broker).  Prints one summary line on stderr (and a JSON object on stdout
 * with --json).  Exit status: 0 all delivered, 1 some not, 2 usage or
 * set-up error.  Without arguments (as `make bench` runs it) it only says
 * what it is for and exits 0.
 */
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#define GEN_QUEUE_MAX 1000000 /* messages librdkafka may hold unsent */

struct gen_conf {
        const char *brokers;
        const char *topic;
        uint32_t parts; /* 0 = the topic's */
        uint32_t producers;
        uint32_t per_pair;
        uint32_t size;
        uint32_t epoch;
        int quiet;
        int json;
};

struct gen_stats {
        uint64_t delivered;
        uint64_t failed;
        rd_kafka_resp_err_t first_err;
};

static volatile sig_atomic_t run = 1;

static void on_signal(int sig)
{
        (void)sig;
        run = 0;
}

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_u32(const char *s, const char *what, uint32_t lo, uint32_t hi,
                     uint32_t *out)
{
        char *end;
        unsigned long long v;

        if (*s < '0' || *s > '9')
                goto bad;
        v = strtoull(s, &end, 10);
        if (*end != '\0' || v < lo || v > hi)
                goto bad;
        *out = (uint32_t)v;
        return 0;
bad:
        fprintf(stderr, "gen_pairs: %s wants an integer in %u..%u, not '%s'\n",
                what, lo, hi, s);
        return -1;
}

static void usage(FILE *f)
{
        fprintf(f, "usage: gen_pairs -b BROKERS -t TOPIC [-p PARTITIONS] "
                   "[-k PRODUCERS] [-c RECORDS_PER_PAIR]\n"
                   "                 [-s SIZE] [-e EPOCH] [-q] [--json]\n"
                   "Writes RECORDS_PER_PAIR records (2) for each of PRODUCERS "
                   "(10000) producer\nnames to every partition of TOPIC, "
                   "stamped with eos.producer/epoch/seq.\n");
}

static int gen_conf_parse(struct gen_conf *c, int argc, char **argv)
{
        static const struct option opts[] = {
            {"json", no_argument, NULL, 'j'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        int o;

        memset(c, 0, sizeof(*c));
        c->producers = 10000;
        c->per_pair = 2;
        c->size = 100;
        while ((o = getopt_long(argc, argv, "b:t:p:k:c:s:e:qh", opts, NULL)) !=
               -1) {
                switch (o) {
                case 'b':
                        c->brokers = optarg;
                        break;
                case 't':
                        c->topic = optarg;
                        break;
                case 'p':
                        if (parse_u32(optarg, "-p", 1, 100000, &c->parts))
                                return -1;
                        break;
                case 'k':
                        if (parse_u32(optarg, "-k", 1, 99999, &c->producers))
                                return -1;
                        break;
                case 'c':
                        if (parse_u32(optarg, "-c", 1, 1000000, &c->per_pair))
                                return -1;
                        break;
                case 's':
                        if (parse_u32(optarg, "-s", 0, 1000000, &c->size))
                                return -1;
                        break;
                case 'e':
                        if (parse_u32(optarg, "-e", 0, 2147483647, &c->epoch))
                                return -1;
                        break;
                case 'q':
                        c->quiet = 1;
                        break;
                case 'j':
                        c->json = 1;
                        break;
                case 'h':
                        usage(stdout);
                        return 1;
                default:
                        usage(stderr);
                        return -1;
                }
        }
        if (optind != argc || !c->brokers || !c->topic) {
                usage(stderr);
                return -1;
        }
        return 0;
}

/* Delivery reports arrive on this thread, from rd_kafka_poll/flush. */
static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *rkm,
                        void *opaque)
{
        struct gen_stats *st = opaque;

        (void)rk;
        if (!rkm->err) {
                st->delivered++;
                return;
        }
        if (!st->failed)
                st->first_err = rkm->err;
        st->failed++;
}

static rd_kafka_t *gen_producer_new(const struct gen_conf *c,
                                    struct gen_stats *st)
{
        static const char *const props[][2] = {
            {"enable.idempotence", "true"},
            {"acks", "all"},
            {"max.in.flight.requests.per.connection", "5"},
            {"linger.ms", "20"},
            {"batch.num.messages", "10000"},
            {"queue.buffering.max.messages", "1000000"},
            {"queue.buffering.max.kbytes", "1048576"},
            {"client.id", "gen_pairs"},
        };
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char errstr[512];
        rd_kafka_t *rk;
        size_t i;

        if (rd_kafka_conf_set(conf, "bootstrap.servers", c->brokers, errstr,
                              sizeof(errstr)) != RD_KAFKA_CONF_OK)
                goto fail;
        for (i = 0; i < sizeof(props) / sizeof(props[0]); i++)
                if (rd_kafka_conf_set(conf, props[i][0], props[i][1], errstr,
                                      sizeof(errstr)) != RD_KAFKA_CONF_OK)
                        goto fail;
        if (c->quiet && rd_kafka_conf_set(conf, "log_level", "3", errstr,
                                          sizeof(errstr)) != RD_KAFKA_CONF_OK)
                goto fail;
        rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
        rd_kafka_conf_set_opaque(conf, st);
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        if (!rk)
                goto fail;
        /* conf is owned by rk now. */
        return rk;
fail:
        fprintf(stderr, "gen_pairs: cannot create the producer: %s\n", errstr);
        rd_kafka_conf_destroy(conf);
        return NULL;
}

/* The topic's partition count, or 0 on error (message printed). */
static uint32_t gen_topic_parts(rd_kafka_t *rk, rd_kafka_topic_t *rkt,
                                const char *topic)
{
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_resp_err_t err;
        uint32_t n = 0;

        err = rd_kafka_metadata(rk, 0, rkt, &md, 10000);
        if (err) {
                fprintf(stderr, "gen_pairs: metadata of '%s': %s\n", topic,
                        rd_kafka_err2str(err));
                return 0;
        }
        if (md->topic_cnt != 1 || md->topics[0].err) {
                fprintf(stderr, "gen_pairs: topic '%s': %s\n", topic,
                        md->topic_cnt ? rd_kafka_err2str(md->topics[0].err)
                                      : "not in the metadata");
        } else {
                n = (uint32_t)md->topics[0].partition_cnt;
        }
        rd_kafka_metadata_destroy(md);
        return n;
}

/* Queues one record, waiting while librdkafka's queue is full. */
static int gen_send(rd_kafka_t *rk, const struct gen_conf *c, uint32_t part,
                    const char *name, size_t name_len, const char *epoch,
                    size_t epoch_len, uint32_t seq, const char *value)
{
        char seqs[16];
        int n = snprintf(seqs, sizeof(seqs), "%u", seq);
        rd_kafka_resp_err_t err;

        for (;;) {
                err = rd_kafka_producev(
                    rk, RD_KAFKA_V_TOPIC(c->topic),
                    RD_KAFKA_V_PARTITION((int32_t)part),
                    RD_KAFKA_V_VALUE((void *)value, c->size),
                    RD_KAFKA_V_MSGFLAGS(0),
                    RD_KAFKA_V_HEADER("eos.producer", name, (ssize_t)name_len),
                    RD_KAFKA_V_HEADER("eos.epoch", epoch, (ssize_t)epoch_len),
                    RD_KAFKA_V_HEADER("eos.seq", seqs, (ssize_t)n),
                    RD_KAFKA_V_END);
                if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        break;
                rd_kafka_poll(rk, 10);
        }
        if (err) {
                fprintf(stderr, "gen_pairs: produce to '%s' [%u]: %s\n",
                        c->topic, part, rd_kafka_err2str(err));
                return -1;
        }
        return 0;
}

int main(int argc, char **argv)
{
        struct gen_conf c;
        struct gen_stats st;
        rd_kafka_t *rk = NULL;
        rd_kafka_topic_t *rkt = NULL;
        char *value = NULL, name[16], epoch[16];
        uint64_t total, queued = 0;
        uint32_t parts, r, k, p;
        int elen, rc = 2, r_parse;
        double t0, secs;

        if (argc == 1) {
                fprintf(stderr, "gen_pairs: fills a topic for "
                                "bench/cardinality.sh (needs a broker); "
                                "see --help\n");
                return 0;
        }
        r_parse = gen_conf_parse(&c, argc, argv);
        if (r_parse)
                return r_parse > 0 ? 0 : 2;
        memset(&st, 0, sizeof(st));
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);

        value = malloc(c.size ? c.size : 1);
        if (!value) {
                fprintf(stderr, "gen_pairs: out of memory\n");
                goto out;
        }
        memset(value, 'x', c.size ? c.size : 1);
        elen = snprintf(epoch, sizeof(epoch), "%u", c.epoch);

        rk = gen_producer_new(&c, &st);
        if (!rk)
                goto out;
        rkt = rd_kafka_topic_new(rk, c.topic, NULL);
        if (!rkt) {
                fprintf(stderr, "gen_pairs: topic '%s': %s\n", c.topic,
                        rd_kafka_err2str(rd_kafka_last_error()));
                goto out;
        }
        parts = gen_topic_parts(rk, rkt, c.topic);
        if (!parts)
                goto out;
        if (c.parts && c.parts != parts) {
                fprintf(stderr,
                        "gen_pairs: topic '%s' has %u partitions, "
                        "not %u\n",
                        c.topic, parts, c.parts);
                goto out;
        }
        total = (uint64_t)parts * c.producers * c.per_pair;

        rc = 1;
        t0 = now_s();
        /* Partition after partition: librdkafka fills whole batches. */
        for (p = 0; run && p < parts; p++) {
                for (r = 0; run && r < c.per_pair; r++) {
                        for (k = 0; k < c.producers; k++) {
                                int nlen = snprintf(name, sizeof(name),
                                                    "gp-%05u", k);
                                if (gen_send(rk, &c, p, name, (size_t)nlen,
                                             epoch, (size_t)elen, r, value))
                                        goto flush;
                                queued++;
                                if (queued % 1000 == 0)
                                        rd_kafka_poll(rk, 0);
                        }
                }
        }
flush:
        while (rd_kafka_outq_len(rk) > 0 &&
               rd_kafka_flush(rk, 1000) == RD_KAFKA_RESP_ERR__TIMED_OUT &&
               now_s() - t0 < 3600)
                ;
        secs = now_s() - t0;
        if (st.delivered == total && !st.failed)
                rc = 0;
        fprintf(stderr,
                "gen_pairs: delivered=%llu failed=%llu records=%llu "
                "pairs=%llu partitions=%u producers=%u elapsed_ms=%.0f "
                "records_per_s=%.0f%s%s\n",
                (unsigned long long)st.delivered,
                (unsigned long long)st.failed, (unsigned long long)total,
                (unsigned long long)parts * c.producers, parts, c.producers,
                secs * 1000, (double)st.delivered / secs,
                st.failed ? " first_error=" : "",
                st.failed ? rd_kafka_err2str(st.first_err) : "");
        if (c.json)
                printf("{\"delivered\":%llu,\"failed\":%llu,\"queued\":%llu,"
                       "\"records\":%llu,\"pairs\":%llu,\"partitions\":%u,"
                       "\"producers\":%u,\"elapsed_ms\":%.0f}\n",
                       (unsigned long long)st.delivered,
                       (unsigned long long)st.failed,
                       (unsigned long long)queued, (unsigned long long)total,
                       (unsigned long long)parts * c.producers, parts,
                       c.producers, secs * 1000);
out:
        if (rkt)
                rd_kafka_topic_destroy(rkt);
        if (rk)
                rd_kafka_destroy(rk);
        free(value);
        return rc;
}
