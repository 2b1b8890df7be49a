/*
 * frontier_connect.c - a flow's frontier from a Kafka Connect offsets
 * topic (--processor-offsets-topic): where a source connector that
 * commits no consumer group records how far it copied.  MirrorMaker 2 is
 * one: in dedicated mode its MirrorSourceConnector writes, to
 * mm2-offsets.SOURCE.internal on the target cluster (the sinks'), one
 * record per source partition it copies, keyed
 *   ["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"T"}]
 * with the value {"offset":N}: N is the last source offset it copied, so
 * every record below N + 1 has been written to the target (after it was
 * acknowledged; with exactly.once.source.support=enabled, in the same
 * transaction as the copies, so readable under read_committed exactly
 * when they are).  That is what a processor group's committed offset
 * says, and flow.c treats it the same.
 *
 * Invariants
 *  - A consumer of its own, on the sinks' cluster with the sinks'
 *    settings (isolation level included), none of the audit's callbacks;
 *    it assigns every partition of the topic from its start once and
 *    keeps its place: each read goes on to the high watermarks of the
 *    moment (a compacted topic: the last value of a key wins, a null
 *    value forgets it).
 *  - Keys whose partition map has no "topic" string or no "partition"
 *    number, or a topic that is no source of the flow, are skipped: other
 *    connectors may share the topic.  The map's "cluster" is not checked
 *    (MirrorMaker's offsets topic is per source cluster already).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../base/clock.h"
#include "../../base/log.h"
#include "internal.h"

struct frontier_connect {
        rd_kafka_t *rk;
        rd_kafka_queue_t *rkqu;
        int32_t nparts;  /* of the offsets topic */
        int64_t *next;   /* per its partition: the next offset to read */
        int64_t *copied; /* per audit part: last offset copied + 1; -1 */
};

/* The part of source topic/partition, or UINT32_MAX. */
static uint32_t fc_part(const struct audit *a, const char *topic,
                        json_int_t partition)
{
        size_t t;

        for (t = 0; t < a->ntopics; t++)
                if (a->topics[t].flow_role == AUDIT_FLOW_SOURCE &&
                    !strcmp(a->topics[t].name, topic))
                        break;
        if (t == a->ntopics || partition < 0 ||
            partition >= a->topics[t].npart)
                return UINT32_MAX;
        return a->topics[t].part_of[partition];
}

/* One record of the offsets topic. */
static void fc_record(struct audit *a, struct frontier_connect *fc,
                      const rd_kafka_message_t *m)
{
        json_t *key, *map, *topic, *part, *val = NULL, *off;
        uint32_t p;

        if (!m->key)
                return;
        key = json_loadb(m->key, m->key_len, 0, NULL);
        map = json_is_array(key) && json_array_size(key) == 2
                  ? json_array_get(key, 1)
                  : NULL;
        topic = map ? json_object_get(map, "topic") : NULL;
        part = map ? json_object_get(map, "partition") : NULL;
        if (!json_is_string(topic) || !json_is_integer(part))
                goto out;
        p = fc_part(a, json_string_value(topic), json_integer_value(part));
        if (p == UINT32_MAX)
                goto out;
        if (!m->payload) { /* a tombstone: the connector forgot it */
                fc->copied[p] = -1;
                goto out;
        }
        val = json_loadb(m->payload, m->len, 0, NULL);
        off = val ? json_object_get(val, "offset") : NULL;
        if (json_is_integer(off) && json_integer_value(off) >= 0)
                fc->copied[p] = json_integer_value(off) + 1;
out:
        json_decref(val);
        json_decref(key);
}

static int fc_open(struct audit *a, char *errstr, size_t errstr_size)
{
        const char *topic = a->conf.processor_offsets_topic;
        struct frontier_connect *fc = calloc(1, sizeof(*fc));
        rd_kafka_conf_t *kconf = NULL;
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_topic_partition_list_t *l = NULL;
        rd_kafka_topic_t *rkt = NULL;
        rd_kafka_resp_err_t err;
        uint32_t p;
        int32_t k;
        int rc = -1;

        a->fls.fr_state = fc;
        if (!fc)
                goto oom;
        fc->copied = malloc((a->nparts ? a->nparts : 1) * sizeof(int64_t));
        if (!fc->copied)
                goto oom;
        for (p = 0; p < a->nparts; p++)
                fc->copied[p] = -1;
        /* The sinks' settings, none of the audit's callbacks. */
        kconf = rd_kafka_conf_dup(rd_kafka_conf(a->rk));
        rd_kafka_conf_set_opaque(kconf, NULL);
        rd_kafka_conf_set_error_cb(kconf, NULL);
        rd_kafka_conf_set_offset_commit_cb(kconf, NULL);
        rd_kafka_conf_set_stats_cb(kconf, NULL);
        if (rd_kafka_conf_set(kconf, "statistics.interval.ms", "0", errstr,
                              errstr_size) != RD_KAFKA_CONF_OK)
                goto out;
        fc->rk = rd_kafka_new(RD_KAFKA_CONSUMER, kconf, errstr, errstr_size);
        if (!fc->rk)
                goto out;
        kconf = NULL;
        rd_kafka_poll_set_consumer(fc->rk);
        fc->rkqu = rd_kafka_queue_get_consumer(fc->rk);
        rkt = rd_kafka_topic_new(fc->rk, topic, NULL);
        err = rkt ? rd_kafka_metadata(fc->rk, 0, rkt, &md,
                                      AUDIT_META_TIMEOUT_MS)
                  : RD_KAFKA_RESP_ERR__INVALID_ARG;
        if (!err && (md->topic_cnt != 1 || md->topics[0].err))
                err = md->topic_cnt == 1 ? md->topics[0].err
                                         : RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC;
        if (err) {
                snprintf(errstr, errstr_size,
                         "flow: cannot read the processor's offsets topic "
                         "'%s': %s",
                         topic, rd_kafka_err2str(err));
                goto out;
        }
        fc->nparts = md->topics[0].partition_cnt;
        fc->next = calloc(fc->nparts ? (size_t)fc->nparts : 1,
                          sizeof(int64_t));
        if (!fc->next)
                goto oom;
        l = rd_kafka_topic_partition_list_new(fc->nparts);
        for (k = 0; k < fc->nparts; k++)
                rd_kafka_topic_partition_list_add(l, topic, k)->offset =
                    RD_KAFKA_OFFSET_BEGINNING;
        err = rd_kafka_assign(fc->rk, l);
        if (err) {
                snprintf(errstr, errstr_size,
                         "flow: cannot assign the processor's offsets topic "
                         "'%s': %s",
                         topic, rd_kafka_err2str(err));
                goto out;
        }
        rc = 0;
        goto out;
oom:
        snprintf(errstr, errstr_size, "out of memory");
out:
        if (l)
                rd_kafka_topic_partition_list_destroy(l);
        if (md)
                rd_kafka_metadata_destroy(md);
        if (rkt)
                rd_kafka_topic_destroy(rkt);
        if (kconf)
                rd_kafka_conf_destroy(kconf);
        return rc;
}

/* Reads the topic on to its high watermarks of now; then pend[] of each
 * source part is the offset after the last one copied (-1: none). */
static int fc_read(struct audit *a, int64_t *pend, int *committed)
{
        struct frontier_connect *fc = a->fls.fr_state;
        const char *topic = a->conf.processor_offsets_topic;
        int64_t *hi = calloc(fc->nparts ? (size_t)fc->nparts : 1,
                             sizeof(int64_t));
        int64_t until = clock_mono_ms() + AUDIT_META_TIMEOUT_MS;
        rd_kafka_message_t *msgs[256];
        int32_t k, left = 0;
        uint32_t p;
        int rc = -1;

        if (!hi)
                return -1;
        for (k = 0; k < fc->nparts; k++) {
                int64_t lo;
                rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
                    fc->rk, topic, k, &lo, &hi[k], AUDIT_META_TIMEOUT_MS);
                if (err) {
                        log_warn("flow: cannot read the watermarks of the "
                                 "processor's offsets topic %s [%d]: %s",
                                 topic, (int)k, rd_kafka_err2str(err));
                        goto out;
                }
                if (fc->next[k] < hi[k])
                        left++;
        }
        while (left && clock_mono_ms() < until) {
                ssize_t n = rd_kafka_consume_batch_queue(fc->rkqu, 100, msgs,
                                                         sizeof(msgs) /
                                                             sizeof(*msgs));
                ssize_t i;
                for (i = 0; i < n; i++) {
                        rd_kafka_message_t *m = msgs[i];
                        k = m->partition;
                        if (k >= 0 && k < fc->nparts) {
                                int was = fc->next[k] < hi[k];
                                if (!m->err) {
                                        fc_record(a, fc, m);
                                        fc->next[k] = m->offset + 1;
                                } else if (m->err ==
                                           RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                                        /* Markers up to the end. */
                                        fc->next[k] = m->offset;
                                }
                                if (was && fc->next[k] >= hi[k])
                                        left--;
                        }
                        rd_kafka_message_destroy(m);
                }
        }
        if (left) {
                log_warn("flow: the processor's offsets topic '%s' was not "
                         "read to its end in %d s",
                         topic, AUDIT_META_TIMEOUT_MS / 1000);
                goto out;
        }
        *committed = 0;
        for (p = 0; p < a->nparts; p++) {
                if (a->rt[p].flow_role != AUDIT_FLOW_SOURCE)
                        continue;
                pend[p] = fc->copied[p];
                if (pend[p] >= 0)
                        *committed = 1;
        }
        rc = 0;
out:
        free(hi);
        return rc;
}

static void fc_close(struct audit *a)
{
        struct frontier_connect *fc = a->fls.fr_state;

        if (!fc)
                return;
        if (fc->rkqu)
                rd_kafka_queue_destroy(fc->rkqu);
        if (fc->rk) {
                rd_kafka_consumer_close(fc->rk);
                rd_kafka_destroy(fc->rk);
        }
        free(fc->next);
        free(fc->copied);
        free(fc);
        a->fls.fr_state = NULL;
}

const struct audit_frontier audit_frontier_connect = {
    "the processor's offsets topic", fc_open, fc_read, fc_close};
