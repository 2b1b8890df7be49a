/*
 * group_common.c - what every file of group/ calls and that calls none of
 * them: the member's failure (one line, the loop stops), the consumers'
 * fatal error, the end of both consumers' rebalance callbacks and the
 * commit of what a revocation gives up, and the group's extra librdkafka
 * handles (producer, state reader, ids consumer).
 */
#include <stdio.h>
#include <string.h>

#include "../../base/clock.h"
#include "../../base/log.h"
#include "internal.h"

void audit_group_fail(struct audit *a, const char *what, const char *why)
{
        if (a->grp->failed)
                return;
        a->grp->failed = 1;
        GERR(a->grp, "group %.200s: %.60s: %.700s", a->conf.group, what, why);
        log_error("%s", a->grp->err);
}

int audit_group_failed(const struct audit *a, char *errstr, size_t errstr_size)
{
        if (!a->grp || !a->grp->failed)
                return 0;
        snprintf(errstr, errstr_size, "%s", a->grp->err);
        return 1;
}

/* The consumer's fatal error, in one line: above all a newer member
 * with the same group.instance.id (the broker fenced this one; its
 * transactions cannot commit offsets any more, KIP-447, and the newer
 * one restores the partitions from the state topic). */
void audit_group_consumer_fatal(struct audit *a, rd_kafka_t *rk)
{
        char why[512], line[900];
        rd_kafka_resp_err_t fe = rd_kafka_fatal_error(rk, why, sizeof(why));

        if (fe == RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID) {
                snprintf(line, sizeof(line),
                         "another member joined with group.instance.id %s "
                         "(FENCED_INSTANCE_ID): this one stops, the newer "
                         "one audits its partitions from their committed "
                         "state (%s)",
                         a->conf.group_instance_id ? a->conf.group_instance_id
                                                   : "?",
                         why);
                audit_group_fail(a, "fenced", line);
                return;
        }
        snprintf(line, sizeof(line), "%s: %s", rd_kafka_err2name(fe), why);
        audit_group_fail(a, "consumer fatal error", line);
}

/*
 * What both consumers' rebalance callbacks do last (the audited
 * partitions here, the ids partitions in group_ids.c): takes l (assign)
 * or gives it back, incrementally: both consumers are cooperative-sticky
 * (audit_group_conf() sets the strategy after the user's -X), so
 * rd_kafka_rebalance_protocol() is not asked; it answers NULL once the
 * consumer's group handler takes no more requests (inside
 * rd_kafka_consumer_close() after a failed commit: t_88 crashed on it).
 * An assignment refused stops the member; an unassignment refused is
 * logged (the partitions are committed and forgotten by then).
 */
void audit_group_rebalance_apply(struct audit *a, rd_kafka_t *rk,
                                 rd_kafka_topic_partition_list_t *l,
                                 int assign, const char *what)
{
        rd_kafka_error_t *e = assign ? rd_kafka_incremental_assign(rk, l)
                                     : rd_kafka_incremental_unassign(rk, l);
        char why[600];

        if (!e)
                return;
        snprintf(why, sizeof(why), "incremental %s: %s",
                 assign ? "assignment" : "unassignment",
                 rd_kafka_error_string(e));
        if (assign)
                audit_group_fail(a, what, why);
        else
                log_warn("group %s: %s: %s", a->conf.group, what, why);
        rd_kafka_error_destroy(e);
}

void audit_group_commit_revoked(struct audit *a, rd_kafka_t *rk,
                                const char *then)
{
        if (!rd_kafka_assignment_lost(rk) && !a->grp->failed &&
            a->grp->commit(a, clock_wall_ms()))
                log_warn("group %s: the last commit before a revocation "
                         "failed: %s",
                         a->conf.group, then);
}

/* The consumer's settings a producer would warn about, one line each. */
static const char *const group_consumer_only[] = {
    "group.",
    "partition.assignment.strategy",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "enable.auto.",
    "auto.commit.",
    "auto.offset.reset",
    "queued.",
    "fetch.",
    "isolation.level",
    "enable.partition.eof",
    "max.poll.interval.ms",
    "check.crcs",
    "consume.callback.max.messages",
    "coordinator.query.interval.ms",
    "allow.auto.create.topics",
    "client.rack"};

rd_kafka_t *audit_group_handle(
    struct audit *a, rd_kafka_type_t type, const char *const *props,
    void (*rebalance_cb)(rd_kafka_t *, rd_kafka_resp_err_t,
                         rd_kafka_topic_partition_list_t *, void *),
    char *errstr, size_t errstr_size)
{
        rd_kafka_conf_t *c =
            type == RD_KAFKA_PRODUCER
                ? rd_kafka_conf_dup_filter(a->grp->base,
                                           sizeof(group_consumer_only) /
                                               sizeof(group_consumer_only[0]),
                                           (const char **)group_consumer_only)
                : rd_kafka_conf_dup(a->grp->base);
        rd_kafka_t *rk;

        for (; *props; props += 2) {
                if (rd_kafka_conf_set(c, props[0], props[1], errstr,
                                      errstr_size) != RD_KAFKA_CONF_OK) {
                        rd_kafka_conf_destroy(c);
                        return NULL;
                }
        }
        if (rebalance_cb) {
                /* base was copied before the audit's opaque was set. */
                rd_kafka_conf_set_opaque(c, a);
                rd_kafka_conf_set_rebalance_cb(c, rebalance_cb);
        }
        rk = rd_kafka_new(type, c, errstr, errstr_size);
        if (!rk)
                rd_kafka_conf_destroy(c);
        return rk;
}
