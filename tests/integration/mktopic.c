/*
 * mktopic.c - creates a topic for the integration tests (lib.sh
 * create_topic) as `kafka.sh topic` does (TopicCommand --create
 * --if-not-exists, replication factor 1), without starting a JVM: some
 * 50 ms instead of 2.5 s, and the suite creates about 80 topics.
 * lib.sh compiles it on first use:
 *
 *   cc -o $BUILD/it-mktopic tests/integration/mktopic.c -lrdkafka
 *   it-mktopic BROKERS NAME PARTITIONS [key=value ...]
 *
 * key=value are topic configurations (cleanup.policy=compact, ...).
 * Exits 0 once the topic exists (made now, or there before, as with
 * --if-not-exists), the broker's metadata shows it with a leader on
 * every partition (PARTITIONS of them when made now) and each leader
 * answers ListOffsets (its log exists); else prints why and exits 1.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#define MT_TIMEOUT_MS 15000

static void mt_sleep_ms(long ms)
{
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

        nanosleep(&ts, NULL);
}

/* 1 when the metadata shows name with want (0: any) partitions, each
 * with a leader; 0 when not yet; -1 on a metadata error. */
static int mt_ready(rd_kafka_t *rk, const char *name, int want)
{
        const struct rd_kafka_metadata *md;
        rd_kafka_resp_err_t err;
        int i, j, rc = 0;

        err = rd_kafka_metadata(rk, 1, NULL, &md, 5000);
        if (err) {
                fprintf(stderr, "mktopic: metadata: %s\n",
                        rd_kafka_err2str(err));
                return -1;
        }
        for (i = 0; i < md->topic_cnt; i++) {
                const struct rd_kafka_metadata_topic *t = &md->topics[i];

                if (strcmp(t->topic, name) || t->err || t->partition_cnt < 1 ||
                    (want && t->partition_cnt != want))
                        continue;
                rc = 1;
                for (j = 0; j < t->partition_cnt; j++) {
                        int64_t lo, hi;
                        if (t->partitions[j].err ||
                            t->partitions[j].leader < 0) {
                                rc = 0;
                                break;
                        }
                        /* The controller names the leader before the
                         * broker has made the partition's log (some 70 ms
                         * later here): until then a produce is refused and
                         * retried.  A test's producer that starts in that
                         * window once saw two acknowledged records missing
                         * (t_84: librdkafka acked the refused batch
                         * implicitly when a later one was written, see
                         * producer.c; produce now counts such records
                         * unconfirmed): ready means the leader answers
                         * ListOffsets, as it did after TopicCommand's
                         * 2.5 s. */
                        if (rd_kafka_query_watermark_offsets(rk, name, j, &lo,
                                                             &hi, 2000)) {
                                rc = 0;
                                break;
                        }
                }
        }
        rd_kafka_metadata_destroy(md);
        return rc;
}

int main(int argc, char **argv)
{
        char errstr[512], *end;
        rd_kafka_conf_t *conf;
        rd_kafka_t *rk = NULL;
        rd_kafka_NewTopic_t *nt = NULL;
        rd_kafka_AdminOptions_t *opt = NULL;
        rd_kafka_queue_t *q = NULL;
        rd_kafka_event_t *ev = NULL;
        const rd_kafka_CreateTopics_result_t *res;
        const rd_kafka_topic_result_t **tr;
        size_t ntr;
        long parts;
        int i, want, rc = 1, waited;

        if (argc < 4) {
                fprintf(stderr, "usage: it-mktopic BROKERS NAME PARTITIONS "
                                "[key=value ...]\n");
                return 2;
        }
        parts = strtol(argv[3], &end, 10);
        if (*end || parts < 1 || parts > 10000) {
                fprintf(stderr, "mktopic: bad partition count '%s'\n",
                        argv[3]);
                return 2;
        }
        conf = rd_kafka_conf_new();
        if (rd_kafka_conf_set(conf, "bootstrap.servers", argv[1], errstr,
                              sizeof(errstr)) != RD_KAFKA_CONF_OK) {
                fprintf(stderr, "mktopic: %s\n", errstr);
                rd_kafka_conf_destroy(conf);
                return 2;
        }
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        if (!rk) {
                fprintf(stderr, "mktopic: %s\n", errstr);
                rd_kafka_conf_destroy(conf);
                return 1;
        }
        nt = rd_kafka_NewTopic_new(argv[2], (int)parts, 1, errstr,
                                   sizeof(errstr));
        if (!nt) {
                fprintf(stderr, "mktopic: %s\n", errstr);
                goto out;
        }
        for (i = 4; i < argc; i++) {
                char *eq = strchr(argv[i], '=');

                if (!eq || eq == argv[i]) {
                        fprintf(stderr, "mktopic: not key=value: '%s'\n",
                                argv[i]);
                        goto out;
                }
                *eq = '\0';
                if (rd_kafka_NewTopic_set_config(nt, argv[i], eq + 1)) {
                        fprintf(stderr, "mktopic: cannot set %s\n", argv[i]);
                        goto out;
                }
        }
        opt = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
        /* The broker answers once the topic is made, not just accepted. */
        if (rd_kafka_AdminOptions_set_operation_timeout(opt, MT_TIMEOUT_MS,
                                                        errstr,
                                                        sizeof(errstr)) ||
            rd_kafka_AdminOptions_set_request_timeout(
                opt, MT_TIMEOUT_MS + 5000, errstr, sizeof(errstr))) {
                fprintf(stderr, "mktopic: %s\n", errstr);
                goto out;
        }
        q = rd_kafka_queue_new(rk);
        rd_kafka_CreateTopics(rk, &nt, 1, opt, q);
        ev = rd_kafka_queue_poll(q, MT_TIMEOUT_MS + 10000);
        if (!ev) {
                fprintf(stderr, "mktopic: no answer to CreateTopics\n");
                goto out;
        }
        if (rd_kafka_event_error(ev)) {
                fprintf(stderr, "mktopic: CreateTopics: %s\n",
                        rd_kafka_event_error_string(ev));
                goto out;
        }
        res = rd_kafka_event_CreateTopics_result(ev);
        tr = rd_kafka_CreateTopics_result_topics(res, &ntr);
        want = (int)parts;
        if (ntr != 1) {
                fprintf(stderr, "mktopic: %zu results\n", ntr);
                goto out;
        }
        if (rd_kafka_topic_result_error(tr[0]) ==
            RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
                want = 0; /* --if-not-exists: as it is */
        } else if (rd_kafka_topic_result_error(tr[0])) {
                fprintf(stderr, "mktopic: cannot create topic %s: %s\n",
                        argv[2], rd_kafka_topic_result_error_string(tr[0]));
                goto out;
        }
        for (waited = 0; waited < MT_TIMEOUT_MS; waited += 50) {
                int r = mt_ready(rk, argv[2], want);

                if (r == 1) {
                        printf("%s topic %s.\n", want ? "Created" : "Found",
                               argv[2]);
                        rc = 0;
                        goto out;
                }
                mt_sleep_ms(50);
        }
        fprintf(stderr,
                "mktopic: topic %s has no leader on every partition "
                "after %d ms\n",
                argv[2], MT_TIMEOUT_MS);
out:
        if (ev)
                rd_kafka_event_destroy(ev);
        if (q)
                rd_kafka_queue_destroy(q);
        if (opt)
                rd_kafka_AdminOptions_destroy(opt);
        if (nt)
                rd_kafka_NewTopic_destroy(nt);
        rd_kafka_destroy(rk);
        return rc;
}
