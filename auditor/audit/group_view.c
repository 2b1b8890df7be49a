/*
 * group_view.c - serve --group: the group's part of the live figures
 * (status.h, struct status_group) that /api/v1/group serves.
 *
 * The members and their assignments come from rd_kafka_list_groups() on
 * the consumer's handle, called here on the audit_run() thread only (HTTP
 * threads read the published copy and never call librdkafka): every
 * GROUP_LIST_MS, and GROUP_RELIST_MS after a rebalance.  The call waits
 * for the brokers (one ListGroups and one DescribeGroups round trip, at
 * most GROUP_LIST_TIMEOUT_MS) and holds the loop that long: a few ms
 * every few seconds on a healthy cluster; never inside the rebalance
 * callback (a revocation's commit publishes the view there).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/log.h"
#include "group.h"

#define GROUP_LIST_MS 3000
#define GROUP_RELIST_MS 500
#define GROUP_LIST_TIMEOUT_MS 1000

static char *dup_or_empty(const char *s)
{
        return strdup(s ? s : "");
}

/* The members of gi into sg (replacing the last listing). */
static int group_view_members(struct audit *a, struct status_group *sg,
                              const struct rd_kafka_group_info *gi)
{
        struct status_member *ms;
        char *self = rd_kafka_memberid(a->rk);
        char errstr[256];
        int i;

        ms = calloc(gi->member_cnt > 0 ? (size_t)gi->member_cnt : 1,
                    sizeof(*ms));
        if (!ms) {
                rd_kafka_mem_free(a->rk, self);
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
                if (status_assignment_parse(mi->member_assignment,
                                            mi->member_assignment_size > 0
                                                ? (size_t)mi
                                                      ->member_assignment_size
                                                : 0,
                                            m, errstr, sizeof(errstr))) {
                        m->bad_assignment = 1;
                        log_warn("group %s: member %s: %s", a->conf.group,
                                 m->member_id ? m->member_id : "?", errstr);
                }
                audit_group_ids_unlist(a, m);
        }
        rd_kafka_mem_free(a->rk, self);
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

static void group_view_list(struct audit *a, struct status_group *sg,
                            int64_t now)
{
        const struct rd_kafka_group_list *gl = NULL;
        rd_kafka_resp_err_t err;
        int i, found = 0;

        a->grp->listed_ms = now;
        a->grp->relist = 0;
        err = rd_kafka_list_groups(a->rk, a->conf.group, &gl,
                                   GROUP_LIST_TIMEOUT_MS);
        if (err) {
                snprintf(sg->error, sizeof(sg->error), "listing the group: %s",
                         rd_kafka_err2str(err));
                goto out;
        }
        for (i = 0; i < gl->group_cnt && !found; i++) {
                const struct rd_kafka_group_info *gi = &gl->groups[i];
                if (strcmp(gi->group, a->conf.group))
                        continue;
                found = 1;
                if (gi->err) {
                        snprintf(sg->error, sizeof(sg->error),
                                 "describing the group: %s",
                                 rd_kafka_err2str(gi->err));
                        goto out;
                }
                if (group_view_members(a, sg, gi)) {
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
}

void audit_group_view(struct audit *a, int64_t now)
{
        struct audit_group *g = a->grp;
        struct status_group *sg = a->view.group;

        if (!g)
                return;
        if (!sg) {
                sg = calloc(1, sizeof(*sg));
                if (!sg)
                        return;
                sg->group = strdup(a->conf.group);
                sg->member = strdup(g->member);
                sg->txn_id = strdup(g->txn_id);
                sg->instance_id = a->conf.group_instance_id
                                      ? strdup(a->conf.group_instance_id)
                                      : NULL;
                sg->listed_ms = -1;
                if (!sg->group || !sg->member || !sg->txn_id ||
                    (a->conf.group_instance_id && !sg->instance_id)) {
                        status_group_free(sg);
                        return;
                }
                a->view.group = sg;
                g->listed_ms = 0;
        }
        if (g->in_rebalance)
                return; /* a commit inside the rebalance callback */
        if (now - g->listed_ms >= GROUP_LIST_MS ||
            (g->relist && now - g->listed_ms >= GROUP_RELIST_MS))
                group_view_list(a, sg, now);
}
