/*
 * cluster.c - a flow whose sources are on another cluster than its sinks
 * (--source-bootstrap: a copy between clusters, MirrorMaker 2 or a
 * replicator, audited as a processor).  A consumer handle reaches one
 * cluster, so the sources get a consumer of their own, made from
 * conf.source_kconf with the same required settings (audit_kconf_check())
 * and the same callbacks; everything that names a partition to
 * librdkafka asks audit_rk_of() which handle reads it, and the loop
 * takes its batches from both queues (audit_consume()).
 *
 * Invariants
 *  - Without conf.source_kconf nothing changes: rk_src stays NULL,
 *    audit_rk_of() is rk, audit_cluster_split() returns NULL and
 *    audit_consume() is rk's queue alone.
 *  - Each partition is read by one handle, so each keeps its order; the
 *    two sides interleave as they arrive, as they do on one handle.
 *  - Only the sources' partitions are ever assigned to rk_src; the
 *    sources' handle is closed before the sinks' (audit_free()).
 */
#include <stdio.h>
#include <string.h>

#include "../../base/log.h"
#include "internal.h"

int audit_cluster_open(struct audit *a, char *errstr, size_t errstr_size)
{
        rd_kafka_conf_t *kconf;

        if (!a->conf.source_kconf || !a->conf.source_cnt)
                return 0;
        kconf = rd_kafka_conf_dup(a->conf.source_kconf);
        if (audit_kconf_check(kconf, errstr, errstr_size)) {
                rd_kafka_conf_destroy(kconf);
                return -1;
        }
        rd_kafka_conf_set_opaque(kconf, a);
        rd_kafka_conf_set_error_cb(kconf, audit_error_cb);
        rd_kafka_conf_set_offset_commit_cb(kconf, audit_commit_cb);
        a->rk_src = rd_kafka_new(RD_KAFKA_CONSUMER, kconf, errstr,
                                 errstr_size);
        if (!a->rk_src) {
                rd_kafka_conf_destroy(kconf);
                return -1;
        }
        rd_kafka_poll_set_consumer(a->rk_src);
        a->rkqu_src = rd_kafka_queue_get_consumer(a->rk_src);
        return 0;
}

rd_kafka_t *audit_rk_of(const struct audit *a, const char *topic)
{
        size_t i;

        if (!a->rk_src)
                return a->rk;
        for (i = 0; i < a->conf.source_cnt; i++)
                if (!strcmp(a->conf.sources[i], topic))
                        return a->rk_src;
        return a->rk;
}

rd_kafka_topic_partition_list_t *
audit_cluster_split(const struct audit *a, rd_kafka_topic_partition_list_t *l)
{
        rd_kafka_topic_partition_list_t *src;
        int i, k = 0;

        if (!a->rk_src)
                return NULL;
        src = rd_kafka_topic_partition_list_new(l->cnt ? l->cnt : 1);
        for (i = 0; i < l->cnt; i++) {
                rd_kafka_topic_partition_t *e = &l->elems[i];
                if (audit_rk_of(a, e->topic) == a->rk_src) {
                        rd_kafka_topic_partition_list_add(src, e->topic,
                                                          e->partition)
                            ->offset = e->offset;
                        continue;
                }
                if (k != i) {
                        /* Swap, so that l still owns (and frees) every
                         * element's topic name once. */
                        rd_kafka_topic_partition_t tmp = l->elems[k];
                        l->elems[k] = *e;
                        *e = tmp;
                }
                k++;
        }
        /* The moved ones, now past k, leave l. */
        while (l->cnt > k)
                rd_kafka_topic_partition_list_del_by_idx(l, l->cnt - 1);
        return src;
}

ssize_t audit_consume(struct audit *a, int timeout_ms,
                      rd_kafka_message_t **msgs, size_t max)
{
        ssize_t n = 0, m;

        if (a->rkqu_src) {
                /* Half the batch at most, so that neither side waits
                 * behind the other. */
                n = rd_kafka_consume_batch_queue(a->rkqu_src, 0, msgs,
                                                 max / 2 ? max / 2 : 1);
                if (n < 0)
                        n = 0;
        }
        m = rd_kafka_consume_batch_queue(a->rkqu, n ? 0 : timeout_ms, msgs + n,
                                         max - (size_t)n);
        if (m < 0)
                return n ? n : m;
        return n + m;
}

void audit_cluster_close(struct audit *a)
{
        if (a->rkqu_src)
                rd_kafka_queue_destroy(a->rkqu_src);
        if (a->rk_src) {
                rd_kafka_consumer_close(a->rk_src);
                rd_kafka_destroy(a->rk_src);
        }
        a->rkqu_src = NULL;
        a->rk_src = NULL;
}
