/*
 * group_ids.c - serve --group, the ids topic: its consumer (the ids
 * group's rebalances, polls, close) and setup (group_ids.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "../../base/clock.h"
#include "../../base/grow.h"
#include "../../base/log.h"
#include "../report/report.h"
#include "group_ids.h"

/*
 * The ids consumer's rebalance callback (served by audit_group_ids_poll()
 * and by its close): assigned ids partitions are judged from GROUP-ids'
 * committed offsets, their windows rebuilt; revoked ones are committed
 * first (the member's one transaction, as the main callback does), then
 * forgotten; lost ones are forgotten (their next owner judges again what
 * this one did not commit).
 */
static void ids_rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                             rd_kafka_topic_partition_list_t *l, void *opaque)
{
        struct audit *a = opaque;
        char errstr[512];

        if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
                /* An assignment that reaches a closing consumer is taken
                 * and not judged (its committed offsets cannot be read
                 * then: rd_kafka_committed() waits out its timeout); the
                 * revocation that follows gives it back. */
                if (!a->grp->failed && !a->grp->ids->closing &&
                    group_ids_assign(a, l, errstr, sizeof(errstr))) {
                        if (audit_group_state_gone(a))
                                audit_group_fail_gone(a);
                        else
                                audit_group_fail(a, "ids assignment", errstr);
                }
                if (a->grp->failed) {
                        audit_group_ids_forget(a, l);
                        return;
                }
                audit_group_rebalance_apply(a, rk, l, 1, "ids rebalance");
                return;
        }
        if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
                audit_group_commit_revoked(a, rk,
                                           "the next owner of those ids "
                                           "partitions judges them again");
                audit_group_ids_forget(a, l);
                log_info("group %s: %d ids partition(s) revoked%s",
                         a->conf.group, l->cnt,
                         rd_kafka_assignment_lost(rk) ? " (lost)" : "");
        } else
                audit_group_fail(a, "ids rebalance", rd_kafka_err2str(err));
        audit_group_rebalance_apply(a, rk, l, 0, "ids rebalance");
}

int audit_group_ids_poll(struct audit *a, int max)
{
        struct audit_group *g = a->grp;
        int n = 0;

        while (g->ids_rk && n < max && !g->failed) {
                rd_kafka_message_t *m = rd_kafka_consumer_poll(g->ids_rk, 0);
                if (!m)
                        break;
                if (m->err == RD_KAFKA_RESP_ERR__FATAL) {
                        audit_group_consumer_fatal(a, g->ids_rk);
                        rd_kafka_message_destroy(m);
                        break;
                }
                group_ids_message(a, m);
                n++;
        }
        return n;
}

void audit_group_ids_close(struct audit *a)
{
        struct audit_group *g = a->grp;
        int32_t k;

        if (!g || !g->ids_rk)
                return;
        /* Its last revocation commits (ids_rebalance_cb()). */
        if (g->ids)
                g->ids->closing = 1;
        rd_kafka_consumer_close(g->ids_rk);
        rd_kafka_destroy(g->ids_rk);
        g->ids_rk = NULL;
        /* Nothing judged any more (a close that served no revocation
         * leaves no position to send without the consumer). */
        for (k = 0; g->ids && k < g->ids->nparts; k++)
                group_ids_judge_clear(&g->ids->j[k]);
}

/* Drops what l takes away: the windows and verdicts of its ids
 * partitions, the unsent ids records of its audited partitions. */
void audit_group_ids_forget(struct audit *a,
                            const rd_kafka_topic_partition_list_t *l)
{
        struct audit_group_ids *x = a->grp ? a->grp->ids : NULL;
        size_t r, w;
        int i;

        if (!x)
                return;
        for (i = 0; i < l->cnt; i++)
                if (!strcmp(l->elems[i].topic, x->topic) &&
                    l->elems[i].partition >= 0 &&
                    l->elems[i].partition < x->nparts)
                        group_ids_judge_clear(&x->j[l->elems[i].partition]);
        for (r = w = 0; r < x->nevs; r++)
                if (x->j[x->evs[r].k].owned)
                        x->evs[w++] = x->evs[r];
        x->nevs = w;
        for (r = w = 0; r < x->nrecs; r++)
                if (a->rt[x->recs[r].part].owned)
                        x->recs[w++] = x->recs[r];
        x->nrecs = w;
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */
/* ------------------------------------------------------------------ */

int audit_group_ids_conf(struct audit *a, char *errstr, size_t errstr_size)
{
        struct audit_group_ids *x;
        size_t len;

        /* --id-window 0: no redelivery checks, no ids topic. */
        if (!a->conf.dedup.window.max_ids)
                return 0;
        x = a->grp->ids = calloc(1, sizeof(*x));
        len = strlen(a->conf.group) + 32;
        if (!x || !(x->topic = malloc(len))) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        snprintf(x->topic, len, "eosaudit-%s-ids", a->conf.group);
        x->window = a->conf.dedup.window.max_ids;
        x->max_age_ms = a->conf.dedup.window.max_age_ms;
        /* The engine's windows are off: the judges are the one source of
         * redelivered in group mode (no event twice). */
        a->conf.dedup.window.max_ids = 0;
        return 0;
}

int audit_group_ids_start(struct audit *a, char *errstr, size_t errstr_size)
{
        struct audit_group_ids *x = a->grp->ids;
        int32_t k;
        uint64_t per;

        if (!x)
                return 0;
        if (audit_group_topic_n(a, x->topic, "delete", "ids", NULL,
                                a->conf.group_ids_partitions > 0
                                    ? a->conf.group_ids_partitions
                                    : IDS_DEFAULT_PARTITIONS,
                                errstr, errstr_size))
                return -1;
        /* The count that routes ids is the topic's, whoever created it:
         * every member hashes over the same partitions. */
        if (audit_group_partitions(a->rk, x->topic, "ids",
                                   AUDIT_META_TIMEOUT_MS, &x->nparts, errstr,
                                   errstr_size))
                return -1;
        x->j = calloc((size_t)x->nparts, sizeof(*x->j));
        x->packs = calloc((size_t)x->nparts, sizeof(*x->packs));
        if (!x->j || !x->packs) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        for (k = 0; k < x->nparts; k++)
                x->j[k].next = x->j[k].sent = -1;
        per = x->window / (uint64_t)x->nparts +
              (x->window % (uint64_t)x->nparts != 0);
        x->window = per * (a->ntopics ? a->ntopics : 1);
        if (x->window > UINT32_MAX / 2)
                x->window = UINT32_MAX / 2;
        /* The ids consumer: the group's consumer settings in group
         * GROUP-ids (cooperative-sticky, same session settings, a static
         * member's id suffixed), its offsets from the transactions only. */
        {
                char gid[600], iid[600];
                const char *props[] = {"group.id", gid, NULL, NULL, NULL};
                rd_kafka_topic_partition_list_t *l;
                rd_kafka_resp_err_t err;

                snprintf(gid, sizeof(gid), "%s-ids", a->conf.group);
                if (a->conf.group_instance_id) {
                        if ((size_t)snprintf(iid, sizeof(iid), "%s-ids",
                                             a->conf.group_instance_id) >=
                            sizeof(iid)) {
                                snprintf(errstr, errstr_size,
                                         "--group-instance-id too long");
                                return -1;
                        }
                        props[2] = "group.instance.id";
                        props[3] = iid;
                }
                a->grp->ids_rk = audit_group_handle(a, RD_KAFKA_CONSUMER,
                                                    props, ids_rebalance_cb,
                                                    errstr, errstr_size);
                if (!a->grp->ids_rk)
                        return -1;
                l = rd_kafka_topic_partition_list_new(1);
                rd_kafka_topic_partition_list_add(l, x->topic,
                                                  RD_KAFKA_PARTITION_UA);
                err = rd_kafka_subscribe(a->grp->ids_rk, l);
                rd_kafka_topic_partition_list_destroy(l);
                if (err) {
                        snprintf(errstr, errstr_size,
                                 "group %s-ids: cannot subscribe: %s",
                                 a->conf.group, rd_kafka_err2str(err));
                        return -1;
                }
        }
        log_info("group %s: redeliveries across members through %s (%d "
                 "partitions, %llu ids remembered per partition; "
                 "shared through group %s-ids)",
                 a->conf.group, x->topic, (int)x->nparts,
                 (unsigned long long)x->window, a->conf.group);
        return 0;
}

void audit_group_ids_free(struct audit *a)
{
        struct audit_group_ids *x = a->grp ? a->grp->ids : NULL;
        int32_t k;

        if (!x)
                return;
        if (x->produced)
                log_info("group %s: ids entries written %llu in %llu records "
                         "(%.1f bytes each, %.1f per entry), judged %llu, "
                         "redelivered %llu",
                         a->conf.group, (unsigned long long)x->entries,
                         (unsigned long long)x->produced,
                         (double)x->bytes / (double)x->produced,
                         (double)x->bytes / (double)x->entries,
                         (unsigned long long)x->judged,
                         (unsigned long long)x->verdicts);
        for (k = 0; x->j && k < x->nparts; k++)
                group_ids_judge_clear(&x->j[k]);
        for (k = 0; x->packs && k < x->nparts; k++)
                gids_pack_free(&x->packs[k]);
        free(x->packs);
        free(x->j);
        free(x->recs);
        free(x->evs);
        free(x->arena);
        free(x->earena);
        free(x->topic);
        free(x);
        a->grp->ids = NULL;
}
