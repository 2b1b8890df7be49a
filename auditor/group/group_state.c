/*
 * group_state.c - serve --group: the state topic (group.h).  It is
 * created at a member's start, checked for its cleanup.policy, read up
 * to its end when partitions are assigned, and never created again by a
 * member while the group has offsets: see the rule below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/clock.h"
#include "../../base/log.h"
#include "internal.h"

/* ------------------------------------------------------------------ */
/* The state topic                                                     */
/* ------------------------------------------------------------------ */

/*
 * A state topic lost under the group.  The state topic is the only
 * record of what a partition's audit has seen, the group's committed
 * offsets of where it stopped, and both are written in one transaction:
 * committed offsets without a state record mean the state topic was
 * deleted, recreated or emptied under the group.  Such a partition is
 * never audited with an empty state (from the offsets: every pair, gap
 * and counter before them silently lost; from the log start: every
 * record counted twice): it is refused and the member stops (exit 2),
 * for an operator to decide (a new --group audits from the log start).
 * So a member creates the state topic only when the group has no
 * offsets for the audited partitions, and a running member whose
 * transaction fails because the topic is gone says so and stops (the
 * producer never creates it again: allow.auto.create.topics=false).
 */

/* The group's committed offsets of l's partitions into l (< 0: none). */
int audit_group_committed(struct audit *a, rd_kafka_topic_partition_list_t *l,
                          char *errstr, size_t errstr_size)
{
        rd_kafka_resp_err_t err = rd_kafka_committed(a->rk, l,
                                                     GROUP_STATE_READ_MS);

        if (err) {
                snprintf(errstr, errstr_size,
                         "cannot read the committed offsets of the group: %s",
                         rd_kafka_err2str(err));
                return -1;
        }
        return 0;
}

/* 1 when the cluster's metadata says the state topic does not exist
 * (UNKNOWN_TOPIC_OR_PART); 0 when it does; -1 when that cannot be told
 * within timeout_ms (brokers away, or a reply that does not list the
 * topic: librdkafka 2.14 gave one to a member shutting down, and taking
 * it for a deletion stopped the member with exit 2).  One topic's
 * metadata, not the cluster's: it runs every second or so on an idle
 * member. */
static int group_topic_gone(struct audit *a, const char *topic, int timeout_ms)
{
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_topic_t *rkt;
        rd_kafka_resp_err_t err;
        int gone = -1, i;

        if (!a->grp->reader)
                return -1;
        rkt = rd_kafka_topic_new(a->grp->reader, topic, NULL);
        if (!rkt)
                return -1;
        err = rd_kafka_metadata(a->grp->reader, 0, rkt, &md, timeout_ms);
        rd_kafka_topic_destroy(rkt);
        if (err || !md)
                return -1;
        for (i = 0; i < md->topic_cnt; i++)
                if (!strcmp(md->topics[i].topic, topic))
                        gone = md->topics[i].err ==
                               RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
        rd_kafka_metadata_destroy(md);
        return gone;
}

static int group_state_gone(struct audit *a, int timeout_ms)
{
        return group_topic_gone(a, a->grp->state_topic, timeout_ms);
}

int audit_group_topic_gone(struct audit *a, const char *topic)
{
        return topic && group_topic_gone(a, topic, AUDIT_META_TIMEOUT_MS) > 0;
}

int audit_group_state_gone(struct audit *a)
{
        /* Unknown: the caller's own error stands. */
        return group_state_gone(a, AUDIT_META_TIMEOUT_MS) > 0;
}

/*
 * A member with nothing to commit runs no transaction, so a state topic
 * deleted under it would go unnoticed until records came (and then the
 * transaction fails): it looks at the topic's metadata itself, once per
 * commit interval (at least GROUP_WATCH_MS apart) without a committed
 * transaction, and stops with the same one line.  Brokers that do not
 * answer within GROUP_WATCH_TIMEOUT_MS prove nothing: the next look comes
 * GROUP_WATCH_AWAY_MS later, so that a member whose brokers are away
 * does not spend its loop waiting for them.
 * (A topic deleted and recreated between two looks is not seen here; the
 * next transaction writes the member's own partitions' full states to
 * it, and an assignment of another partition is refused, group.c.)
 */
void audit_group_watch(struct audit *a, int64_t now)
{
        struct audit_group *g = a->grp;
        int64_t every = a->conf.commit_interval_ms > GROUP_WATCH_MS
                            ? a->conf.commit_interval_ms
                            : GROUP_WATCH_MS;
        int gone;

        if (g->failed || now - g->alive_ms < every)
                return;
        gone = group_state_gone(a, GROUP_WATCH_TIMEOUT_MS);
        g->alive_ms = clock_wall_ms();
        if (gone > 0)
                audit_group_fail_gone(a);
        else if (gone < 0)
                g->alive_ms += GROUP_WATCH_AWAY_MS;
}

void audit_group_fail_gone(struct audit *a)
{
        char why[700];

        snprintf(why, sizeof(why),
                 "the state topic %s was deleted under the running group "
                 "(UNKNOWN_TOPIC_OR_PART): this member stops; the "
                 "partitions' audit states are lost and no member audits "
                 "them again from zero (start a new --group to audit from "
                 "the log start)",
                 a->grp->state_topic);
        audit_group_fail(a, "state topic lost", why);
}

int audit_group_partitions(rd_kafka_t *rk, const char *name, const char *what,
                           int timeout_ms, int32_t *n, char *errstr,
                           size_t errstr_size)
{
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, name, NULL);
        rd_kafka_resp_err_t err;
        int64_t start = clock_mono_ms();
        int rc = -1;

        if (!rkt) {
                snprintf(errstr, errstr_size, "the %s topic %s: %s", what,
                         name, rd_kafka_err2str(rd_kafka_last_error()));
                return -1;
        }
        for (;;) {
                err = rd_kafka_metadata(rk, 0, rkt, &md, timeout_ms);
                if (!err && (!md || md->topic_cnt != 1))
                        err = RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
                if (!err)
                        err = md->topics[0].err;
                if (!err && md->topics[0].partition_cnt < 1)
                        err = RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE;
                if (!err) {
                        *n = md->topics[0].partition_cnt;
                        rc = 0;
                        break;
                }
                /* A topic created a moment ago is not known to every
                 * broker at once (unknown, or no leader yet). */
                if ((err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART &&
                     err != RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE) ||
                    clock_mono_ms() - start >= timeout_ms) {
                        snprintf(errstr, errstr_size,
                                 "cannot read the partitions of the %s "
                                 "topic %s: %s",
                                 what, name, rd_kafka_err2str(err));
                        break;
                }
                if (md)
                        rd_kafka_metadata_destroy(md);
                md = NULL;
                usleep(GROUP_META_STEP_MS * 1000);
        }
        if (md)
                rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(rkt);
        return rc;
}

int audit_group_topic(struct audit *a, const char *name, const char *policy,
                      const char *what, const char *nocreate, char *errstr,
                      size_t errstr_size)
{
        int32_t n;

        if (audit_group_topic_n(a, name, policy, what, nocreate, 1, errstr,
                                errstr_size) ||
            audit_group_partitions(a->rk, name, what, AUDIT_META_TIMEOUT_MS,
                                   &n, errstr, errstr_size))
                return -1;
        /* Its records are read from partition 0 (the state restored, the
         * events' offsets their ids): one made by hand with more would
         * lose some. */
        if (n != 1) {
                snprintf(errstr, errstr_size,
                         "the %s topic %s has %d partitions: it must have "
                         "one (delete it, or use another --group)",
                         what, name, (int)n);
                return -1;
        }
        return 0;
}

int audit_group_topic_n(struct audit *a, const char *name, const char *policy,
                        const char *what, const char *nocreate, int partitions,
                        char *errstr, size_t errstr_size)
{
        rd_kafka_NewTopic_t *nt;
        rd_kafka_AdminOptions_t *opt;
        rd_kafka_queue_t *q = rd_kafka_queue_new(a->rk);
        rd_kafka_event_t *ev = NULL;
        rd_kafka_ConfigResource_t *res = NULL;
        const rd_kafka_topic_result_t **tr;
        const rd_kafka_ConfigResource_t **rs = NULL;
        const rd_kafka_ConfigEntry_t **ce;
        size_t n = 0, i;
        char why[256];
        int rc = -1, compact = 0, tries = 0;
        rd_kafka_resp_err_t derr;

        if (nocreate)
                goto describe;
        nt = rd_kafka_NewTopic_new(name, partitions,
                                   a->conf.group_replication > 0
                                       ? a->conf.group_replication
                                       : -1,
                                   why, sizeof(why));
        if (!nt) {
                snprintf(errstr, errstr_size, "%s topic %s: %s", what, name,
                         why);
                goto out;
        }
        rd_kafka_NewTopic_set_config(nt, "cleanup.policy", policy);
        opt = rd_kafka_AdminOptions_new(a->rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
        rd_kafka_AdminOptions_set_request_timeout(opt, AUDIT_ADMIN_TIMEOUT_MS,
                                                  NULL, 0);
        rd_kafka_CreateTopics(a->rk, &nt, 1, opt, q);
        ev = rd_kafka_queue_poll(q, AUDIT_ADMIN_TIMEOUT_MS + 1000);
        rd_kafka_AdminOptions_destroy(opt);
        rd_kafka_NewTopic_destroy(nt);
        if (!ev || !rd_kafka_event_CreateTopics_result(ev) ||
            rd_kafka_event_error(ev)) {
                snprintf(errstr, errstr_size,
                         "cannot create the %s topic %s: %s", what, name,
                         ev ? rd_kafka_event_error_string(ev) : "timed out");
                goto out;
        }
        tr = rd_kafka_CreateTopics_result_topics(
            rd_kafka_event_CreateTopics_result(ev), &n);
        if (n == 1 && !rd_kafka_topic_result_error(tr[0])) {
                log_info("group %s: created the %s topic %s (cleanup.policy "
                         "%s)",
                         a->conf.group, what, name, policy);
                rc = 0;
                goto out;
        }
        if (n != 1 || rd_kafka_topic_result_error(tr[0]) !=
                          RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
                snprintf(errstr, errstr_size,
                         "cannot create the %s topic %s: %s", what, name,
                         n == 1 ? rd_kafka_topic_result_error_string(tr[0])
                                : "no result");
                goto out;
        }
        /* It exists: the state topic must be compacted, or states would
         * be deleted by retention and a partition restart from zero; the
         * events topic must not be (its records have no key). */
        rd_kafka_event_destroy(ev);
        ev = NULL;
describe:
        res = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, name);
        opt = rd_kafka_AdminOptions_new(a->rk,
                                        RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
        rd_kafka_AdminOptions_set_request_timeout(opt, AUDIT_ADMIN_TIMEOUT_MS,
                                                  NULL, 0);
        rd_kafka_DescribeConfigs(a->rk, &res, 1, opt, q);
        ev = rd_kafka_queue_poll(q, AUDIT_ADMIN_TIMEOUT_MS + 1000);
        rd_kafka_AdminOptions_destroy(opt);
        n = 0;
        if (ev && rd_kafka_event_DescribeConfigs_result(ev) &&
            !rd_kafka_event_error(ev))
                rs = rd_kafka_DescribeConfigs_result_resources(
                    rd_kafka_event_DescribeConfigs_result(ev), &n);
        /* A missing topic: the resource's error (or the request's). */
        derr = n == 1 ? rd_kafka_ConfigResource_error(rs[0])
               : ev   ? rd_kafka_event_error(ev)
                      : RD_KAFKA_RESP_ERR__TIMED_OUT;
        /* Created a moment ago by another member started at the same
         * time (ours said TOPIC_ALREADY_EXISTS): its metadata reaches
         * every broker shortly after.  Up to 10 s, then the error. */
        if (!nocreate && derr == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART &&
            tries++ < 40) {
                rd_kafka_event_destroy(ev);
                ev = NULL;
                rd_kafka_ConfigResource_destroy(res);
                res = NULL;
                rs = NULL;
                usleep(250 * 1000);
                goto describe;
        }
        if (nocreate && derr == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
                snprintf(
                    errstr, errstr_size,
                    "the %s topic %s does not exist (UNKNOWN_TOPIC_OR_PART)"
                    " but %s: it was deleted, and is not created again "
                    "empty, which would audit those partitions from "
                    "zero (start a new --group to audit from the log "
                    "start)",
                    what, name, nocreate);
                goto out;
        }
        if (n != 1 || rd_kafka_ConfigResource_error(rs[0])) {
                snprintf(errstr, errstr_size,
                         "cannot read the configuration of the %s topic "
                         "%s: %s",
                         what, name,
                         n == 1 ? rd_kafka_ConfigResource_error_string(rs[0])
                         : ev   ? rd_kafka_event_error_string(ev)
                                : "timed out");
                goto out;
        }
        ce = rd_kafka_ConfigResource_configs(rs[0], &n);
        for (i = 0; i < n; i++) {
                const char *v = rd_kafka_ConfigEntry_value(ce[i]);
                if (!strcmp(rd_kafka_ConfigEntry_name(ce[i]),
                            "cleanup.policy") &&
                    v && !strcmp(v, policy))
                        compact = 1;
        }
        if (!compact) {
                snprintf(errstr, errstr_size,
                         "the %s topic %s exists but its cleanup.policy is "
                         "not %s (set cleanup.policy=%s, or use another "
                         "--group)",
                         what, name, policy, policy);
                goto out;
        }
        rc = 0;
out:
        if (ev)
                rd_kafka_event_destroy(ev);
        if (res)
                rd_kafka_ConfigResource_destroy(res);
        rd_kafka_queue_destroy(q);
        return rc;
}

/* The last committed state record of each part of want[0..n) into
 * vals[] (malloc'd; NULL: none).  Returns 0, or -1 with errstr. */
int audit_group_state_read(struct audit *a, const uint32_t *want, size_t n,
                           char **vals, size_t *lens, char *errstr,
                           size_t errstr_size)
{
        struct audit_group *g = a->grp;
        rd_kafka_topic_partition_list_t *l;
        rd_kafka_resp_err_t err;
        char(*keys)[320] = calloc(n ? n : 1, sizeof(*keys));
        int64_t lo, hi, deadline;
        int rc = -1;
        size_t i;

        if (!keys) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        for (i = 0; i < n; i++)
                snprintf(keys[i], sizeof(keys[i]), "%s/%d",
                         a->parts[want[i]].topic,
                         (int)a->parts[want[i]].partition);
        err = rd_kafka_query_watermark_offsets(g->reader, g->state_topic, 0,
                                               &lo, &hi,
                                               AUDIT_META_TIMEOUT_MS);
        if (err) {
                snprintf(errstr, errstr_size,
                         "cannot read the watermarks of the state topic %s: "
                         "%s%s",
                         g->state_topic, rd_kafka_err2str(err),
                         err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART
                             ? " (UNKNOWN_TOPIC_OR_PART: the state topic was "
                               "deleted under the group; its partitions are "
                               "not audited again from zero)"
                             : "");
                goto out;
        }
        if (hi <= lo) {
                rc = 0; /* empty: every partition starts fresh */
                goto out;
        }
        l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, g->state_topic, 0)->offset =
            RD_KAFKA_OFFSET_BEGINNING;
        err = rd_kafka_assign(g->reader, l);
        rd_kafka_topic_partition_list_destroy(l);
        if (err) {
                snprintf(errstr, errstr_size,
                         "cannot read the state topic "
                         "%s: %s",
                         g->state_topic, rd_kafka_err2str(err));
                goto out;
        }
        deadline = clock_wall_ms() + GROUP_STATE_READ_MS;
        for (;;) {
                rd_kafka_message_t *m;
                int64_t pos = -1;
                if (clock_wall_ms() > deadline) {
                        snprintf(errstr, errstr_size,
                                 "the state topic %s could not be read to its "
                                 "end (%lld) within %d s: a transaction left "
                                 "open?",
                                 g->state_topic, (long long)hi,
                                 GROUP_STATE_READ_MS / 1000);
                        goto unassign;
                }
                m = rd_kafka_consumer_poll(g->reader, 200);
                if (!m)
                        continue;
                if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                        pos = m->offset;
                } else if (m->err) {
                        log_warn("group %s: reading the state topic: %s",
                                 a->conf.group, rd_kafka_message_errstr(m));
                } else {
                        pos = m->offset + 1;
                        for (i = 0; m->key && i < n; i++) {
                                size_t kl = strlen(keys[i]);
                                if (m->key_len != kl ||
                                    memcmp(m->key, keys[i], kl))
                                        continue;
                                free(vals[i]);
                                vals[i] = NULL;
                                lens[i] = 0;
                                if (m->payload &&
                                    (vals[i] = malloc(m->len + 1))) {
                                        memcpy(vals[i], m->payload, m->len);
                                        vals[i][m->len] = '\0';
                                        lens[i] = m->len;
                                } else if (m->payload) {
                                        rd_kafka_message_destroy(m);
                                        snprintf(errstr, errstr_size,
                                                 "out of memory");
                                        goto unassign;
                                }
                        }
                }
                rd_kafka_message_destroy(m);
                if (pos >= hi)
                        break;
        }
        rc = 0;
unassign:
        rd_kafka_assign(g->reader, NULL);
out:
        free(keys);
        return rc;
}
