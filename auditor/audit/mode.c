/*
 * mode.c - the single-process mode (mode.h): this process audits every
 * partition of its topics, assigned from the ledger's offsets, commits
 * those offsets to Kafka now and then for lag tools only, and looks for
 * partitions added in follow mode.  The group mode is auditor/group/.
 */
#include "../../base/log.h"
#include "internal.h"

int audit_mode_failed(struct audit *a, char *errstr, size_t errstr_size)
{
        return a->mode->failed && a->mode->failed(a, errstr, errstr_size);
}

void audit_kafka_commit(struct audit *a)
{
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(
            (int)a->nparts);
        rd_kafka_topic_partition_list_t *src = NULL;
        rd_kafka_resp_err_t err;
        uint32_t i;

        /* Nowhere to go: it would hold up the close (refusal.c). */
        if (a->group_refused)
                goto out;
        for (i = 0; i < a->nparts; i++)
                if (a->parts[i].next_offset >= 0)
                        rd_kafka_topic_partition_list_add(
                            l, a->parts[i].topic, a->parts[i].partition)
                            ->offset = a->parts[i].next_offset;
        /* Only for lag visibility: failure changes nothing here.  The
         * sources on another cluster commit there. */
        src = audit_cluster_split(a, l);
        err = l->cnt ? rd_kafka_commit(a->rk, l, 1)
                     : RD_KAFKA_RESP_ERR_NO_ERROR;
        if (!err && src && src->cnt)
                err = rd_kafka_commit(a->rk_src, src, 1);
        if (err)
                log_debug("kafka offset commit: %s", rd_kafka_err2str(err));
out:
        if (src)
                rd_kafka_topic_partition_list_destroy(src);
        rd_kafka_topic_partition_list_destroy(l);
}

/* Every part positioned from the ledger and assigned, all owned. */
static int single_start(struct audit *a, audit_commit_fn *commit, char *errstr,
                        size_t errstr_size)
{
        uint32_t i;

        (void)commit; /* nothing commits behind the loop's back */
        for (i = 0; i < a->nparts; i++) {
                if (audit_position(a, &a->parts[i], errstr, errstr_size))
                        return -1;
                a->rt[i].owned = 1;
        }
        return audit_assign(a, errstr, errstr_size);
}

static ssize_t single_consume(struct audit *a, int timeout_ms,
                              rd_kafka_message_t **msgs, size_t max)
{
        return audit_consume(a, timeout_ms, msgs, max);
}

static void single_after_commit(struct audit *a, int64_t now)
{
        if (now - a->last_kafka_commit_ms >=
            a->conf.kafka_commit_interval_ms) {
                audit_kafka_commit(a);
                a->last_kafka_commit_ms = now;
        }
}

/* Follow mode: partitions added to the topics, now and then. */
static int single_tick(struct audit *a, int64_t now, char *errstr,
                       size_t errstr_size)
{
        if (a->conf.follow && a->conf.metadata_refresh_ms > 0 &&
            now - a->last_meta_ms >= a->conf.metadata_refresh_ms)
                return audit_refresh(a, now, errstr, errstr_size);
        return 0;
}

const struct audit_mode audit_mode_single = {
    .name = "single",
    .start = single_start,
    .consume = single_consume,
    .after_commit = single_after_commit,
    .tick = single_tick,
    .finish = audit_kafka_commit,
};
