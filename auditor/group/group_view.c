/*
 * group_view.c - serve --group: the group view, a thread of its own that
 * reads what the whole group has committed and lists its members, for
 * HTTP threads to read (status.h: status_grouprep_get and the view's
 * group).  The audit thread never waits for it.
 *
 * The thread has its own consumer handle, which no other thread calls:
 * it is assigned every partition of the state topic and of the events
 * topic from the beginning (read_committed, so it sees each partition's
 * owner's last committed transaction, never an open or aborted one) and
 * tails them, feeding the aggregation (auditor/grouprep.h).  The handle
 * has a group.id (librdkafka's assign and poll need one) but never joins
 * the group nor commits: it is no member.  Once every partition of both
 * topics was read to its end, and then at most every GROUP_PUBLISH_MS
 * while records come, it publishes an immutable snapshot.  Every
 * GROUP_LIST_MS (GROUP_RELIST_MS after a rebalance of this member) it
 * also lists the group's members (rd_kafka_list_groups(): a ListGroups
 * and a DescribeGroups round trip) and asks the high watermarks of up to
 * GROUP_HW_BATCH audited partitions (for the group's lag); both wait for
 * the brokers on this thread only.
 *
 * Stopping: audit_group_view_stop() sets a flag the thread sees within
 * GROUP_POLL_MS, and joins it; the thread closes and destroys its handle
 * itself, also when a topic it read was deleted under the group.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/clock.h"
#include "../../base/log.h"
#include "grouprep.h"
#include "internal.h"

#define GROUP_LIST_MS 3000
#define GROUP_RELIST_MS 500
#define GROUP_LIST_TIMEOUT_MS 1000
#define GROUP_POLL_MS 100
#define GROUP_PUBLISH_MS 250
#define GROUP_HW_BATCH 64
#define GROUP_HW_TIMEOUT_MS 1000

struct audit_group_view {
        pthread_t th;
        atomic_int stop;
        atomic_int relist;     /* a rebalance of this member: list soon */
        rd_kafka_t *rk;        /* this thread's only */
        rd_kafka_t *member_rk; /* the audit's consumer: rd_kafka_memberid()
                                  only, which is thread-safe */
        struct status *status;
        struct grouprep *agg;
        struct status_group *sg;
        char *state_topic, *events_topic;
        rd_kafka_topic_partition_list_t *assigned;
        int *eof; /* per assigned partition: read to its end */
        int caught_up;
        int errored;               /* the figures carry an error line */
        struct grouprep_tp *parts; /* the audited partitions */
        size_t nparts, hw_next;
};

/* ------------------------------------------------------------------ */
/* The member listing (/api/v1/group)                                  */
/* ------------------------------------------------------------------ */

static char *dup_or_empty(const char *s)
{
        return strdup(s ? s : "");
}

/* The members of gi into sg (replacing the last listing). */
static int group_view_members(struct audit_group_view *v,
                              struct status_group *sg,
                              const struct rd_kafka_group_info *gi)
{
        struct status_member *ms;
        char *self = rd_kafka_memberid(v->member_rk);
        char errstr[256];
        int i;

        ms = calloc(gi->member_cnt > 0 ? (size_t)gi->member_cnt : 1,
                    sizeof(*ms));
        if (!ms) {
                rd_kafka_mem_free(v->member_rk, self);
                return -1;
        }
        for (i = 0; i < gi->member_cnt; i++) {
                const struct rd_kafka_group_member_info *mi = &gi->members[i];
                struct status_member *m = &ms[i];
                m->member_id = dup_or_empty(mi->member_id);
                m->client_id = dup_or_empty(mi->client_id);
                m->client_host = dup_or_empty(mi->client_host);
                m->self = self && mi->member_id &&
                          !strcmp(self, mi->member_id);
                if (status_assignment_parse(
                        mi->member_assignment,
                        mi->member_assignment_size > 0
                            ? (size_t)mi->member_assignment_size
                            : 0,
                        m, errstr, sizeof(errstr))) {
                        m->bad_assignment = 1;
                        log_warn("group %s: member %s: %s", sg->group,
                                 m->member_id ? m->member_id : "?", errstr);
                }
        }
        rd_kafka_mem_free(v->member_rk, self);
        for (i = 0; i < (int)sg->nmembers; i++)
                status_member_release(&sg->members[i]);
        free(sg->members);
        sg->members = ms;
        sg->nmembers = (size_t)gi->member_cnt;
        free(sg->state);
        free(sg->protocol);
        sg->state = dup_or_empty(gi->state);
        sg->protocol = dup_or_empty(gi->protocol);
        return 0;
}

static void group_view_list(struct audit_group_view *v, int64_t now)
{
        struct status_group *sg = v->sg;
        const struct rd_kafka_group_list *gl = NULL;
        rd_kafka_resp_err_t err;
        int i, found = 0;

        err = rd_kafka_list_groups(v->rk, sg->group, &gl,
                                   GROUP_LIST_TIMEOUT_MS);
        if (err) {
                snprintf(sg->error, sizeof(sg->error), "listing the group: %s",
                         rd_kafka_err2str(err));
                goto out;
        }
        for (i = 0; i < gl->group_cnt && !found; i++) {
                const struct rd_kafka_group_info *gi = &gl->groups[i];
                if (strcmp(gi->group, sg->group))
                        continue;
                found = 1;
                if (gi->err) {
                        snprintf(sg->error, sizeof(sg->error),
                                 "describing the group: %s",
                                 rd_kafka_err2str(gi->err));
                        goto out;
                }
                if (group_view_members(v, sg, gi)) {
                        snprintf(sg->error, sizeof(sg->error),
                                 "out of memory");
                        goto out;
                }
        }
        if (!found) {
                snprintf(sg->error, sizeof(sg->error),
                         "the brokers do not list the group");
                goto out;
        }
        sg->error[0] = '\0';
        sg->listed_ms = now;
out:
        if (gl)
                rd_kafka_group_list_destroy(gl);
        if (status_group_publish(v->status, sg))
                log_warn("group %s: out of memory publishing the member "
                         "listing",
                         sg->group);
}

/* Up to GROUP_HW_BATCH audited partitions' high watermarks, in turn. */
static void group_view_watermarks(struct audit_group_view *v)
{
        size_t k;

        for (k = 0;
             k < v->nparts && k < GROUP_HW_BATCH && !atomic_load(&v->stop);
             k++) {
                const struct grouprep_tp *tp = &v->parts[v->hw_next];
                int64_t lo = -1, hi = -1;
                v->hw_next = (v->hw_next + 1) % v->nparts;
                if (!rd_kafka_query_watermark_offsets(v->rk, tp->topic,
                                                      tp->partition, &lo, &hi,
                                                      GROUP_HW_TIMEOUT_MS))
                        grouprep_high_watermark(v->agg, tp->topic,
                                                tp->partition, hi);
        }
}

/* ------------------------------------------------------------------ */
/* Reading the state and events topics                                 */
/* ------------------------------------------------------------------ */

/* Every partition of topic (what: "state", "events") into l, from its
 * beginning.  1 s at most: the thread tries again every second, and its
 * stop must not wait out a long answer from brokers that are away. */
static int group_view_add(struct audit_group_view *v, const char *topic,
                          const char *what, rd_kafka_topic_partition_list_t *l,
                          char *errstr, size_t errstr_size)
{
        int32_t n, p;

        if (audit_group_partitions(v->rk, topic, what, 1000, &n, errstr,
                                   errstr_size))
                return -1;
        for (p = 0; p < n; p++)
                rd_kafka_topic_partition_list_add(l, topic, p)->offset =
                    RD_KAFKA_OFFSET_BEGINNING;
        return 0;
}

static int group_view_assign(struct audit_group_view *v, char *errstr,
                             size_t errstr_size)
{
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(
            2);
        rd_kafka_resp_err_t err;

        if (group_view_add(v, v->state_topic, "state", l, errstr,
                           errstr_size) ||
            group_view_add(v, v->events_topic, "events", l, errstr,
                           errstr_size))
                goto fail;
        v->eof = calloc((size_t)l->cnt, sizeof(*v->eof));
        if (!v->eof) {
                snprintf(errstr, errstr_size, "out of memory");
                goto fail;
        }
        err = rd_kafka_assign(v->rk, l);
        if (err) {
                snprintf(errstr, errstr_size, "assign: %s",
                         rd_kafka_err2str(err));
                goto fail;
        }
        v->assigned = l;
        return 0;
fail:
        free(v->eof);
        v->eof = NULL;
        rd_kafka_topic_partition_list_destroy(l);
        return -1;
}

/* Whether every partition assigned was read to its end once. */
static int group_view_eof(struct audit_group_view *v,
                          const rd_kafka_message_t *m)
{
        const char *topic = rd_kafka_topic_name(m->rkt);
        int i, all = 1;

        for (i = 0; i < v->assigned->cnt; i++) {
                if (v->assigned->elems[i].partition == m->partition &&
                    !strcmp(v->assigned->elems[i].topic, topic))
                        v->eof[i] = 1;
                all &= v->eof[i];
        }
        return all;
}

/* One message of the handle; 1 when it changed the figures. */
static int group_view_message(struct audit_group_view *v,
                              const rd_kafka_message_t *m)
{
        const char *topic;
        char line[300];
        int rc;

        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                if (!v->caught_up && group_view_eof(v, m)) {
                        v->caught_up = 1;
                        return 1;
                }
                return 0;
        }
        if (m->err) {
                snprintf(line, sizeof(line), "reading %s: %s",
                         m->rkt ? rd_kafka_topic_name(m->rkt) : "?",
                         rd_kafka_message_errstr(m));
                grouprep_error(v->agg, line);
                v->errored = 1;
                return 1;
        }
        if (v->errored) { /* reading again */
                grouprep_error(v->agg, "");
                v->errored = 0;
        }
        topic = rd_kafka_topic_name(m->rkt);
        if (!strcmp(topic, v->state_topic))
                rc = grouprep_state(v->agg, m->key, m->key_len, m->payload,
                                    m->len);
        else
                rc = grouprep_event(v->agg, m->partition, m->offset,
                                    m->payload, m->len);
        if (rc < 0)
                grouprep_error(v->agg, "out of memory");
        else if (rc > 0)
                log_debug("group %s: %s [%d] offset %lld: not a record of "
                          "eosaudit's (counted and skipped)",
                          v->sg->group, topic, (int)m->partition,
                          (long long)m->offset);
        return 1;
}

static void group_view_publish(struct audit_group_view *v, int64_t now)
{
        struct grouprep_snap *s = grouprep_snap_make(v->agg, now);

        if (s)
                status_grouprep_publish(v->status, s);
        else
                log_warn("group %s: out of memory publishing its figures",
                         v->sg->group);
}

static void *group_view_thread(void *arg)
{
        struct audit_group_view *v = arg;
        int64_t listed = 0, published = 0, now, assign_at = 0;
        int dirty = 0;
        char errstr[512];

        while (!atomic_load(&v->stop)) {
                rd_kafka_message_t *m;
                now = clock_wall_ms();
                if (!v->assigned && now >= assign_at) {
                        if (group_view_assign(v, errstr, sizeof(errstr))) {
                                if (!v->errored) /* once, not each try */
                                        log_warn("group %s: the group view "
                                                 "cannot read its topics "
                                                 "yet: %s",
                                                 v->sg->group, errstr);
                                grouprep_error(v->agg, errstr);
                                v->errored = 1;
                                assign_at = now + 1000;
                        } else if (v->errored) {
                                /* An idle group brings no record to
                                 * clear it. */
                                grouprep_error(v->agg, "");
                                v->errored = 0;
                        }
                }
                if (now - listed >= GROUP_LIST_MS ||
                    (atomic_load(&v->relist) &&
                     now - listed >= GROUP_RELIST_MS)) {
                        atomic_store(&v->relist, 0);
                        group_view_list(v, now);
                        group_view_watermarks(v);
                        listed = now;
                        dirty = 1;
                }
                m = v->assigned ? rd_kafka_consumer_poll(v->rk, GROUP_POLL_MS)
                                : NULL;
                if (!v->assigned)
                        usleep(GROUP_POLL_MS * 1000);
                if (m) {
                        dirty |= group_view_message(v, m);
                        rd_kafka_message_destroy(m);
                }
                now = clock_wall_ms();
                if (v->caught_up && dirty &&
                    now - published >= GROUP_PUBLISH_MS) {
                        group_view_publish(v, now);
                        published = now;
                        dirty = 0;
                }
        }
        /* Its handle, closed here: no other thread calls it. */
        rd_kafka_consumer_close(v->rk);
        rd_kafka_destroy(v->rk);
        v->rk = NULL;
        return NULL;
}

/* ------------------------------------------------------------------ */
/* Start and stop (the audit thread)                                   */
/* ------------------------------------------------------------------ */

static void group_view_free(struct audit_group_view *v)
{
        size_t i;

        if (!v)
                return;
        if (v->rk)
                rd_kafka_destroy(v->rk);
        if (v->assigned)
                rd_kafka_topic_partition_list_destroy(v->assigned);
        free(v->eof);
        grouprep_free(v->agg);
        status_group_free(v->sg);
        for (i = 0; i < v->nparts; i++)
                free(v->parts[i].topic);
        free(v->parts);
        free(v->state_topic);
        free(v->events_topic);
        free(v);
}

int audit_group_view_start(struct audit *a, char *errstr, size_t errstr_size)
{
        struct audit_group *g = a->grp;
        struct audit_group_view *v;
        struct status_group *sg;
        char gid[600];
        rd_kafka_conf_t *c = NULL;
        const char *props[] = {"group.id",
                               gid,
                               "enable.auto.commit",
                               "false",
                               "auto.offset.reset",
                               "earliest",
                               "isolation.level",
                               "read_committed",
                               "enable.partition.eof",
                               "true",
                               "allow.auto.create.topics",
                               "false",
                               NULL};
        const char *const *pp;
        uint32_t i;

        if (!a->conf.status)
                return 0; /* nobody reads it */
        v = calloc(1, sizeof(*v));
        sg = v ? calloc(1, sizeof(*sg)) : NULL;
        if (!v || !sg)
                goto oom;
        v->sg = sg;
        sg->group = strdup(a->conf.group);
        sg->member = strdup(g->member);
        sg->txn_id = strdup(g->txn_id);
        sg->instance_id = a->conf.group_instance_id
                              ? strdup(a->conf.group_instance_id)
                              : NULL;
        sg->listed_ms = -1;
        v->state_topic = strdup(g->state_topic);
        v->events_topic = strdup(g->events_topic);
        v->agg = grouprep_new(GROUPREP_EVENTS_MAX);
        v->parts = calloc(a->nparts ? a->nparts : 1, sizeof(*v->parts));
        if (!sg->group || !sg->member || !sg->txn_id ||
            (a->conf.group_instance_id && !sg->instance_id) ||
            !v->state_topic || !v->events_topic || !v->agg || !v->parts)
                goto oom;
        for (i = 0; i < a->nparts; i++) {
                v->parts[i].partition = a->parts[i].partition;
                if (!(v->parts[i].topic = strdup(a->parts[i].topic)))
                        goto oom;
                v->nparts++; /* freed from here on */
                if (grouprep_expect(v->agg, a->parts[i].topic,
                                    a->parts[i].partition))
                        goto oom;
        }
        v->status = a->conf.status;
        v->member_rk = a->rk;
        snprintf(gid, sizeof(gid), "%s-view", g->txn_id);
        c = rd_kafka_conf_dup(g->base);
        for (pp = props; c && *pp; pp += 2)
                if (rd_kafka_conf_set(c, pp[0], pp[1], errstr, errstr_size) !=
                    RD_KAFKA_CONF_OK)
                        goto fail;
        if (!c)
                goto oom;
        v->rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, errstr, errstr_size);
        if (!v->rk)
                goto fail;
        c = NULL;
        /* The listing is published after the thread's first one (at
         * once): until then /api/v1/group says "not listed yet". */
        if (pthread_create(&v->th, NULL, group_view_thread, v)) {
                snprintf(errstr, errstr_size,
                         "group %s: cannot start the group view's thread",
                         a->conf.group);
                goto fail;
        }
        g->view = v;
        return 0;
oom:
        snprintf(errstr, errstr_size, "out of memory");
fail:
        if (c)
                rd_kafka_conf_destroy(c);
        group_view_free(v);
        return -1;
}

void audit_group_view_relist(struct audit *a)
{
        if (a->grp && a->grp->view)
                atomic_store(&a->grp->view->relist, 1);
}

void audit_group_view_stop(struct audit *a)
{
        struct audit_group_view *v = a->grp ? a->grp->view : NULL;

        if (!v)
                return;
        atomic_store(&v->stop, 1);
        pthread_join(v->th, NULL);
        group_view_free(v);
        a->grp->view = NULL;
}
