/*
 * group.c - serve --group: the partitions of the audited topics shared
 * by the eosaudit processes of one consumer group, their state carried
 * from one owner to the next by a compacted topic (docs/GROUP.md).
 *
 *   - The consumer subscribes (cooperative-sticky) instead of assigning
 *     every partition from the ledger.
 *   - Each audit commit is first a Kafka transaction of the process's
 *     transactional producer: one state record (auditor/partstate.h) per
 *     changed partition to eosaudit-GROUP-state, key "topic/partition",
 *     and the partitions' next offsets sent to the group's transaction
 *     (rd_kafka_send_offsets_to_transaction with the consumer's group
 *     metadata: a member fenced by a rebalance cannot commit, KIP-447).
 *     Every anomaly event of the batch goes, in the same transaction, to
 *     eosaudit-GROUP-events (one JSON record each, no key).  Then the
 *     local ledger commit, the member's evidence store.
 *   - A partition assigned is restored from the last committed record of
 *     its key (the state topic read read_committed up to its high
 *     watermark, so that no transaction still open hides a later state),
 *     and audited from that record's offset; no record: a fresh partition
 *     audited from its log start.  A partition revoked is committed first
 *     (inside the rebalance callback, before it is given away), then
 *     forgotten.  A lost assignment is forgotten without a commit: what
 *     it audited since its last commit is audited again by its next owner.
 *
 * Records of a partition that the consumer's queue still holds from
 * before a revocation are dropped (record.c: the part is not owned), or,
 * when it came back, skipped below its restored offset: each record is
 * audited once, in order.
 *
 * The state topic lost under the group (deleted, recreated or emptied:
 * the group has offsets and no state record) is refused, never audited
 * from zero (group_state.c).  --group-instance-id: static membership;
 * a member fenced by a newer one with its id stops (exit 2).
 *
 * Partitions added to a topic while the group runs are assigned once a
 * member's consumer refreshes its metadata (--metadata-refresh-ms) and
 * audited from their log start (group_part_added()).  A topic deleted
 * and created again (another topic id) stops a running member, as often
 * checked (group_tick()), and a state record of its old id is refused at
 * assignment (group_state_topic()).
 *
 * Redeliveries across members: the ids topic (group_ids.c); the engine's
 * own id window is off in group mode.
 *
 * Not in this slice: the transaction check and the flow audit are
 * refused with --group.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "../../base/clock.h"
#include "../../base/log.h"
#include "partstate.h"
#include "../report/report.h"
#include "group_ids.h"
#include "internal.h"

/* ------------------------------------------------------------------ */
/* Rebalances                                                          */
/* ------------------------------------------------------------------ */

static struct ledger_part *group_part(struct audit *a, const char *topic,
                                      int32_t partition)
{
        size_t t;

        for (t = 0; t < a->ntopics; t++)
                if (!strcmp(a->topics[t].name, topic) && partition >= 0 &&
                    partition < a->topics[t].npart)
                        return &a->parts[a->topics[t].part_of[partition]];
        return NULL;
}

/*
 * A partition added to its topic since this member started, now assigned
 * (the group found it on a metadata refresh of its consumer:
 * topic.metadata.refresh.interval.ms, which --metadata-refresh-ms sets,
 * see audit_group_conf()).  Parts for it and for any other added
 * partition before it, owned by nobody until assigned; group_assign()
 * then treats it as any other: restored from its state record if another
 * member audited it already, else, without a committed offset either, a
 * new partition audited from its log start.  NULL with errstr: not a
 * partition of the audited topics, or out of memory.
 */
static struct ledger_part *group_part_added(struct audit *a, const char *topic,
                                            int32_t partition, char *errstr,
                                            size_t errstr_size)
{
        size_t t;
        int32_t p;

        for (t = 0; t < a->ntopics; t++)
                if (!strcmp(a->topics[t].name, topic))
                        break;
        if (t == a->ntopics || partition < a->topics[t].npart) {
                snprintf(errstr, errstr_size,
                         "%s [%d] was assigned but is not a partition of "
                         "the audited topics",
                         topic, (int)partition);
                return NULL;
        }
        for (p = a->topics[t].npart; p <= partition; p++) {
                if (audit_part_add(a, t, p)) {
                        snprintf(errstr, errstr_size, "out of memory");
                        return NULL;
                }
                log_info("group %s: %s [%d]: a partition added to %s since "
                         "this member started",
                         a->conf.group, topic, (int)p, topic);
        }
        return &a->parts[a->topics[t].part_of[partition]];
}

/* The id of topic (an audited one) as this member knows it; "" none. */
static const char *group_topic_id(const struct audit *a, const char *topic)
{
        size_t t;

        for (t = 0; t < a->ntopics; t++)
                if (!strcmp(a->topics[t].name, topic))
                        return a->topics[t].id;
        return "";
}

/*
 * Whether a state record belongs to the topic as it is now: a record that
 * names another topic id than the one this member read is of a topic
 * deleted and created again under the group.  Its state (offsets, pairs,
 * counts) is the old log's: refused, as a lost state is.  A record or a
 * member without an id proves nothing.  Returns 0, or -1 with errstr.
 */
static int group_state_topic(struct audit *a, const struct ledger_part *lp,
                             const char *val, size_t len, char *errstr,
                             size_t errstr_size)
{
        char was[LEDGER_TOPIC_ID_MAX];
        const char *now = group_topic_id(a, lp->topic);

        if (partstate_topic_id(val, len, was, sizeof(was)) != 1 ||
            topic_id_compare(was, now) != TOPIC_ID_CHANGED)
                return 0;
        snprintf(errstr, errstr_size,
                 "%s [%d] refused: its state record in %s is of topic id "
                 "%s, and the topic's id is now %s (deleted and created "
                 "again under the group): the old log's state is not "
                 "applied to the new one (start a new --group to audit it "
                 "from its log start)",
                 lp->topic, (int)lp->partition, a->grp->state_topic, was, now);
        return -1;
}

/* Restores and positions the parts of l; sets each element's offset. */
static int group_assign(struct audit *a, rd_kafka_topic_partition_list_t *l,
                        char *errstr, size_t errstr_size)
{
        uint32_t *want = calloc((size_t)l->cnt + 1, sizeof(*want));
        char **vals = calloc((size_t)l->cnt + 1, sizeof(*vals));
        size_t *lens = calloc((size_t)l->cnt + 1, sizeof(*lens));
        rd_kafka_topic_partition_list_t *miss = NULL;
        int64_t t0 = clock_wall_ms();
        int i, rc = -1, restored = 0;

        if (!want || !vals || !lens) {
                snprintf(errstr, errstr_size, "out of memory");
                goto out;
        }
        for (i = 0; i < l->cnt; i++) {
                /* Indexes only: adding a part moves a->parts. */
                struct ledger_part *lp = group_part(a, l->elems[i].topic,
                                                    l->elems[i].partition);
                if (!lp && !(lp = group_part_added(a, l->elems[i].topic,
                                                   l->elems[i].partition,
                                                   errstr, errstr_size)))
                        goto out;
                want[i] = lp->part;
        }
        if (audit_group_state_read(a, want, (size_t)l->cnt, vals, lens, errstr,
                                   errstr_size))
                goto out;
        /* No state record: a fresh partition, unless the group has
         * offsets committed for it (the state topic lost under it). */
        miss = rd_kafka_topic_partition_list_new(l->cnt);
        for (i = 0; i < l->cnt; i++)
                if (!vals[i])
                        rd_kafka_topic_partition_list_add(
                            miss, l->elems[i].topic, l->elems[i].partition);
        if (miss->cnt && audit_group_committed(a, miss, errstr, errstr_size))
                goto out;
        for (i = 0; i < miss->cnt; i++) {
                if (miss->elems[i].offset < 0)
                        continue;
                snprintf(errstr, errstr_size,
                         "%s [%d] refused: the group has committed offset "
                         "%lld for it but the state topic %s holds no record "
                         "of it (deleted, recreated or emptied under the "
                         "group); it is not audited again from zero with an "
                         "empty state (start a new --group to audit from the "
                         "log start)",
                         miss->elems[i].topic, (int)miss->elems[i].partition,
                         (long long)miss->elems[i].offset,
                         a->grp->state_topic);
                goto out;
        }
        /* Every record of the topic as it is now, before any part is
         * replaced. */
        for (i = 0; i < l->cnt; i++)
                if (vals[i] &&
                    group_state_topic(a, &a->parts[want[i]], vals[i], lens[i],
                                      errstr, errstr_size))
                        goto out;
        for (i = 0; i < l->cnt; i++) {
                struct ledger_part *lp = &a->parts[want[i]];
                struct audit_rt *rt = &a->rt[lp->part];
                dedup_tracker_part_forget(a->tr, lp->part);
                audit_part_init(lp, lp->topic, lp->partition, lp->part);
                if (vals[i]) {
                        if (partstate_import(a->tr, lp, vals[i], lens[i],
                                             errstr, errstr_size))
                                goto out;
                        restored++;
                }
                if (audit_position(a, lp, errstr, errstr_size) < 0)
                        goto out;
                log_debug("group %s: %s [%d] assigned: %s, from offset "
                          "%lld (%llu records audited before)",
                          a->conf.group, lp->topic, (int)lp->partition,
                          vals[i] ? "restored" : "no state",
                          (long long)lp->next_offset,
                          (unsigned long long)
                              dedup_tracker_part_counts(a->tr, lp->part)
                                  ->records);
                rt->owned = 1;
                rt->eof = 0;
                rt->state_dirty = 1; /* its offset goes to the group */
                /* What the ledger noted of it below here (an earlier
                 * stint here) misses what others accepted since. */
                rt->trunc_floor = lp->next_offset > 0 ? lp->next_offset : 0;
                lp->dirty = 1;
                l->elems[i].offset = lp->next_offset;
        }
        log_info("group %s: assigned %d partition(s), %d restored from %s "
                 "(%lld ms)",
                 a->conf.group, l->cnt, restored, a->grp->state_topic,
                 (long long)(clock_wall_ms() - t0));
        rc = 0;
out:
        for (i = 0; vals && i < l->cnt; i++)
                free(vals[i]);
        if (miss)
                rd_kafka_topic_partition_list_destroy(miss);
        free(want);
        free(vals);
        free(lens);
        return rc;
}

/* Forgets the parts of l (after their last commit, unless lost). */
static void group_forget(struct audit *a,
                         const rd_kafka_topic_partition_list_t *l)
{
        int i;

        for (i = 0; i < l->cnt; i++) {
                struct ledger_part *lp = group_part(a, l->elems[i].topic,
                                                    l->elems[i].partition);
                if (!lp)
                        continue;
                log_debug("group %s: %s [%d] forgotten at offset %lld "
                          "(%llu records audited)",
                          a->conf.group, lp->topic, (int)lp->partition,
                          (long long)lp->next_offset,
                          (unsigned long long)
                              dedup_tracker_part_counts(a->tr, lp->part)
                                  ->records);
                dedup_tracker_part_forget(a->tr, lp->part);
                a->rt[lp->part].owned = 0;
                a->rt[lp->part].state_dirty = 0;
                a->rt[lp->part].eof = 0;
                lp->dirty = 0;
                lp->coverage_lo = lp->coverage_hi = -1;
        }
}

static void group_rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                               rd_kafka_topic_partition_list_t *l,
                               void *opaque)
{
        struct audit *a = opaque;
        char errstr[512];

        audit_group_view_relist(a); /* /api/v1/group: the members changed */
        if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
                /* The audited partitions (the ids topic's are another
                 * group's: group_ids.c). */
                if (!a->grp->failed &&
                    group_assign(a, l, errstr, sizeof(errstr))) {
                        /* A member whose partner stopped on a deleted
                         * state topic gets its partitions: the same one
                         * line as a failed transaction. */
                        if (audit_group_state_gone(a))
                                audit_group_fail_gone(a);
                        else
                                audit_group_fail(a, "assignment", errstr);
                }
                if (a->grp->failed) {
                        /* Audit nothing: the loop stops. */
                        group_forget(a, l);
                        audit_group_ids_forget(a, l);
                        return;
                }
                audit_group_rebalance_apply(a, rk, l, 1, "rebalance");
                return;
        }
        if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
                audit_group_commit_revoked(a, rk,
                                           "its next owner audits those "
                                           "records again");
                group_forget(a, l);
                audit_group_ids_forget(a, l); /* their unsent ids records */
                log_info("group %s: %d partition(s) revoked%s", a->conf.group,
                         l->cnt,
                         rd_kafka_assignment_lost(rk) ? " (lost)" : "");
        } else
                audit_group_fail(a, "rebalance", rd_kafka_err2str(err));
        audit_group_rebalance_apply(a, rk, l, 0, "rebalance");
}

/* ------------------------------------------------------------------ */
/* Commit                                                              */
/* ------------------------------------------------------------------ */

static int group_mark(void *opaque, const struct dedup_pair_view *pv)
{
        struct audit *a = opaque;

        if (pv->part < a->nparts)
                a->rt[pv->part].state_dirty = 1;
        return 0;
}

/*
 * A transaction's step failed.  Nothing of it is visible, and the
 * tracker still holds the batch (the ledger commit comes after), so:
 *  - an abortable error (the group's generation moved on during a
 *    rebalance, KIP-447: ILLEGAL_GENERATION) aborts the transaction and
 *    the next commit tries again with the batch and what came since; the
 *    loop goes on consuming meanwhile, which serves the rebalance (a
 *    retry loop that held the consumer would never see it);
 *  - anything else (fenced: another instance of this transactional.id;
 *    a commit whose outcome is unknown) stops the member: serve exits 2
 *    and the partitions' next owners audit its uncommitted records again,
 *    still each record once.
 */
static int group_txn_error(struct audit *a, const char *what,
                           rd_kafka_error_t *e, char *errstr,
                           size_t errstr_size)
{
        snprintf(errstr, errstr_size, "group %s: %s: %s", a->conf.group, what,
                 rd_kafka_error_string(e));
        if (audit_group_state_gone(a)) {
                if (!rd_kafka_error_is_fatal(e) &&
                    rd_kafka_error_txn_requires_abort(e)) {
                        rd_kafka_error_t *ae = rd_kafka_abort_transaction(
                            a->grp->prod, GROUP_OP_TIMEOUT_MS);
                        if (ae)
                                rd_kafka_error_destroy(ae);
                }
                log_debug("%s", errstr);
                audit_group_fail_gone(a);
                snprintf(errstr, errstr_size, "%s", a->grp->err);
                rd_kafka_error_destroy(e);
                return -1;
        }
        /* The ids topic deleted: with librdkafka 2.14 it shows as records
         * that failed delivery, then a fenced abort, not as its own
         * error; say what happened, as for the state topic. */
        if (a->grp->ids && audit_group_topic_gone(a, a->grp->ids->topic)) {
                log_debug("%s", errstr);
                group_ids_topic_gone(a);
                snprintf(errstr, errstr_size, "%s", a->grp->err);
                rd_kafka_error_destroy(e);
                return -1;
        }
        if (!rd_kafka_error_is_fatal(e) &&
            rd_kafka_error_txn_requires_abort(e)) {
                rd_kafka_error_t *ae = rd_kafka_abort_transaction(
                    a->grp->prod, GROUP_OP_TIMEOUT_MS);
                if (!ae) {
                        log_warn("%s: aborted, the next commit takes the "
                                 "batch again",
                                 errstr);
                        rd_kafka_error_destroy(e);
                        return -1;
                }
                audit_group_fail(a, "abort", rd_kafka_error_string(ae));
                rd_kafka_error_destroy(ae);
        }
        audit_group_fail(a, what, rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        return -1;
}

/* One anomaly event as a JSON record of the events topic (malloc'd). */
static char *group_event_json(const struct audit *a,
                              const struct dedup_event *ev)
{
        const struct ledger_part *lp = &a->parts[ev->part];
        struct ledger_anomaly an;
        json_t *o;
        char *s;

        /* The one evidence format: an anomaly of /api/v1/anomalies (its
         * "id", the ledger's row, null: a reader takes the record's
         * offset), and who wrote it. */
        report_anomaly_from_event(&an, lp->topic, lp->partition, ev);
        if (ev->first_part < a->nparts &&
            (ev->kind == DEDUP_KIND_REDELIVERED ||
             (ev->kind == DEDUP_KIND_FENCED && ev->first_part == ev->part)))
                an.first_partition = a->parts[ev->first_part].partition;
        o = report_anomaly_json(&an);
        if (!o)
                return NULL;
        json_object_set_new(o, "id", json_null());
        json_object_set_new(o, "member", json_string(a->grp->txn_id));
        s = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        return s;
}

static void group_truncs_clear(struct audit_group *g)
{
        size_t k;

        for (k = 0; k < g->ntruncs; k++)
                free(g->truncs[k].json);
        free(g->truncs);
        g->truncs = NULL;
        g->ntruncs = 0;
}

/*
 * audit_mode_group's truncated: the owner took back a truncation of lp
 * (the single handler, ../audit/trunc_unaudit.c).  Its pairs are rewound
 * and dirty and lp is at the divergence point, so the next transaction's
 * state record carries the rewound state (a member that takes lp over
 * from it, after a rebalance or a restart, reads on from there, with the
 * holes to fill); the event goes in the same transaction.  An aborted
 * transaction keeps it for the next one; a part lost meanwhile drops it
 * (its next owner reads the state of before the truncation, and finds
 * the truncation itself again).
 */
static int group_truncated(struct audit *a, const struct ledger_part *lp,
                           const struct ledger_anomaly *an, char *errstr,
                           size_t errstr_size)
{
        struct audit_group *g = a->grp;
        struct audit_group_trunc *v;
        json_t *o = report_anomaly_json(an);
        char *s = NULL;

        if (o) {
                json_object_set_new(o, "id", json_null());
                json_object_set_new(o, "member", json_string(g->txn_id));
                s = json_dumps(o, JSON_COMPACT);
                json_decref(o);
        }
        v = s ? realloc(g->truncs, (g->ntruncs + 1) * sizeof(*v)) : NULL;
        if (!v) {
                free(s);
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        g->truncs = v;
        v[g->ntruncs].part = lp->part;
        v[g->ntruncs++].json = s;
        a->rt[lp->part].state_dirty = 1;
        return 0;
}

/* Produces one record of the open transaction (val is taken). */
static rd_kafka_resp_err_t group_produce(struct audit_group *g,
                                         const char *topic, const char *key,
                                         char *val, size_t len)
{
        rd_kafka_resp_err_t err;

        do {
                err = rd_kafka_producev(
                    g->prod, RD_KAFKA_V_TOPIC(topic),
                    RD_KAFKA_V_KEY(key, key ? strlen(key) : 0),
                    RD_KAFKA_V_VALUE(val, len),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_FREE), RD_KAFKA_V_END);
                if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        rd_kafka_poll(g->prod, 50);
        } while (err == RD_KAFKA_RESP_ERR__QUEUE_FULL);
        if (err)
                free(val);
        return err;
}

/* One record of the events topic into the open transaction (val taken;
 * NULL: out of memory).  0, or -1 with the member failed and offs freed. */
static int group_event_produce(struct audit *a,
                               rd_kafka_topic_partition_list_t *offs,
                               char *val, const char *what, char *errstr,
                               size_t errstr_size)
{
        rd_kafka_resp_err_t err = val ? group_produce(a->grp,
                                                      a->grp->events_topic,
                                                      NULL, val, strlen(val))
                                      : RD_KAFKA_RESP_ERR__NOENT;

        if (!err)
                return 0;
        rd_kafka_topic_partition_list_destroy(offs);
        snprintf(errstr, errstr_size, "%s: %s", what,
                 val ? rd_kafka_err2str(err) : "out of memory");
        audit_group_fail(a, "produce", errstr);
        return -1;
}

int audit_group_commit(struct audit *a, char *errstr, size_t errstr_size)
{
        const struct dedup_event *evs;
        size_t nev, k;
        struct audit_group *g = a->grp;
        rd_kafka_topic_partition_list_t *offs, *ioffs;
        rd_kafka_consumer_group_metadata_t *cgmd;
        rd_kafka_error_t *e;
        uint32_t i;
        int n = 0;

        if (g->failed) {
                snprintf(errstr, errstr_size, "%s", g->err);
                return -1;
        }
        dedup_tracker_dirty_foreach(a->tr, group_mark, a);
        offs = rd_kafka_topic_partition_list_new(16);
        for (i = 0; i < a->nparts; i++) {
                struct audit_rt *rt = &a->rt[i];
                if (!rt->owned)
                        continue;
                if (a->parts[i].dirty)
                        rt->state_dirty = 1;
                if (rt->state_dirty && a->parts[i].next_offset >= 0) {
                        rd_kafka_topic_partition_list_add(
                            offs, a->parts[i].topic, a->parts[i].partition)
                            ->offset = a->parts[i].next_offset;
                        n++;
                }
        }
        evs = dedup_tracker_events(a->tr, &nev);
        if (!n && !nev && !g->ntruncs && !audit_group_ids_pending(a)) {
                rd_kafka_topic_partition_list_destroy(offs);
                return 0;
        }
        if ((e = rd_kafka_begin_transaction(g->prod))) {
                rd_kafka_topic_partition_list_destroy(offs);
                return group_txn_error(a, "begin transaction", e, errstr,
                                       errstr_size);
        }
        for (i = 0; i < a->nparts; i++) {
                struct ledger_part *lp = &a->parts[i];
                char key[320];
                size_t len = 0;
                char *val;
                rd_kafka_resp_err_t err;
                if (!a->rt[i].owned || !a->rt[i].state_dirty ||
                    lp->next_offset < 0)
                        continue;
                val = partstate_export(a->tr, lp, group_topic_id(a, lp->topic),
                                       &len, errstr, errstr_size);
                if (!val) {
                        /* Out of memory, or a counter past what a state
                         * record holds: not a retry's matter, and not
                         * to be taken for a rebalance at shutdown. */
                        rd_kafka_topic_partition_list_destroy(offs);
                        e = rd_kafka_abort_transaction(g->prod, -1);
                        if (e)
                                rd_kafka_error_destroy(e);
                        audit_group_fail(a, "state record", errstr);
                        return -1;
                }
                snprintf(key, sizeof(key), "%s/%d", lp->topic,
                         (int)lp->partition);
                err = group_produce(g, g->state_topic, key, val, len);
                if (err) {
                        rd_kafka_topic_partition_list_destroy(offs);
                        snprintf(errstr, errstr_size, "state record of %s: %s",
                                 key, rd_kafka_err2str(err));
                        if (audit_group_state_gone(a))
                                audit_group_fail_gone(a);
                        else
                                audit_group_fail(a, "produce", errstr);
                        return -1;
                }
        }
        /* The batch's anomalies, in the same transaction: visible to a
         * read_committed reader exactly when the state that counted them.
         * Those of a part no longer ours (a lost assignment) are left to
         * the next owner, which audits those records again. */
        for (k = 0; k < nev; k++) {
                if (evs[k].part >= a->nparts || !a->rt[evs[k].part].owned)
                        continue;
                if (group_event_produce(a, offs, group_event_json(a, &evs[k]),
                                        "event record", errstr, errstr_size))
                        return -1;
        }
        /* The truncations taken back since the last transaction, with
         * the rewound state records above (the same parts are dirty). */
        for (k = 0; k < g->ntruncs; k++) {
                if (!a->rt[g->truncs[k].part].owned)
                        continue;
                if (group_event_produce(a, offs, strdup(g->truncs[k].json),
                                        "truncated event", errstr,
                                        errstr_size))
                        return -1;
        }
        /* The ids records of the batch, the verdicts of this member's
         * judges and their positions on the ids topic (group_ids.c):
         * offsets of the ids consumer's group, sent to the same
         * transaction with its own group metadata (a transaction may
         * commit the offsets of several groups, KIP-98; each group's
         * generation is checked apart, KIP-447). */
        ioffs = rd_kafka_topic_partition_list_new(16);
        if (audit_group_ids_txn(a, ioffs, errstr, errstr_size)) {
                rd_kafka_topic_partition_list_destroy(offs);
                rd_kafka_topic_partition_list_destroy(ioffs);
                return -1;
        }
        cgmd = rd_kafka_consumer_group_metadata(a->rk);
        e = rd_kafka_send_offsets_to_transaction(g->prod, offs, cgmd,
                                                 GROUP_OP_TIMEOUT_MS);
        rd_kafka_consumer_group_metadata_destroy(cgmd);
        rd_kafka_topic_partition_list_destroy(offs);
        if (!e && ioffs->cnt && g->ids_rk) {
                cgmd = rd_kafka_consumer_group_metadata(g->ids_rk);
                e = rd_kafka_send_offsets_to_transaction(g->prod, ioffs, cgmd,
                                                         GROUP_OP_TIMEOUT_MS);
                rd_kafka_consumer_group_metadata_destroy(cgmd);
        }
        rd_kafka_topic_partition_list_destroy(ioffs);
        if (e)
                return group_txn_error(a, "send offsets", e, errstr,
                                       errstr_size);
        if ((e = rd_kafka_commit_transaction(g->prod, GROUP_OP_TIMEOUT_MS)))
                return group_txn_error(a, "commit", e, errstr, errstr_size);
        if (n)
                g->alive_ms = clock_wall_ms(); /* no look needed */
        for (i = 0; i < a->nparts; i++)
                a->rt[i].state_dirty = 0;
        group_truncs_clear(g);
        audit_group_ids_done(a);
        return 0;
}

/*
 * One rd_kafka_consume_batch_queue() call, as the single mode reads: its
 * rebalance callbacks are served inside it, between two messages, and
 * librdkafka drops from the batch what a revocation or a seek made
 * outdated (a barrier per partition: librdkafka 2.1.0 fixed the batch
 * calls skipping offsets around such operations; the build's floor is
 * 2.10).  The offsets a member commits are its own next_offset, never
 * librdkafka's position.  The consumer's fatal error ends the batch:
 * what came before it is returned, it and what came after it are
 * destroyed (audit_group_failed() stops the loop).
 */
ssize_t audit_group_consume(struct audit *a, int timeout_ms,
                            rd_kafka_message_t **msgs, size_t max)
{
        ssize_t n, k, j;

        /* The ids consumer first, without waiting (its rebalances and its
         * messages, judged): the audited topics' poll below waits only
         * when it had nothing. */
        if (audit_group_ids_poll(a, (int)max))
                timeout_ms = 0;
        if (a->grp->failed)
                return 0;
        n = rd_kafka_consume_batch_queue(a->rkqu, timeout_ms, msgs, max);
        for (k = 0; k < n; k++) {
                if (msgs[k]->err != RD_KAFKA_RESP_ERR__FATAL)
                        continue;
                audit_group_consumer_fatal(a, a->rk);
                for (j = k; j < n; j++)
                        rd_kafka_message_destroy(msgs[j]);
                return k;
        }
        return n;
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */
/* ------------------------------------------------------------------ */

/* Sets key to val in kconf unless the user set it (-X: a value other than
 * librdkafka's default).  0, or -1 with errstr. */
static int group_conf_default(rd_kafka_conf_t *kconf, const char *key,
                              const char *val, char *errstr,
                              size_t errstr_size)
{
        rd_kafka_conf_t *def = rd_kafka_conf_new();
        char v[32] = "", d[32] = "";
        size_t vl = sizeof(v), dl = sizeof(d);
        int is_default = def &&
                         rd_kafka_conf_get(kconf, key, v, &vl) ==
                             RD_KAFKA_CONF_OK &&
                         rd_kafka_conf_get(def, key, d, &dl) ==
                             RD_KAFKA_CONF_OK &&
                         !strcmp(v, d);

        if (def)
                rd_kafka_conf_destroy(def);
        if (!is_default)
                return 0;
        return rd_kafka_conf_set(kconf, key, val, errstr, errstr_size) ==
                       RD_KAFKA_CONF_OK
                   ? 0
                   : -1;
}

/*
 * Partitions added to an audited topic reach the group when a member's
 * consumer refreshes its metadata (a change of a subscribed topic's
 * partition count makes it rejoin, and the leader assigns them):
 * librdkafka's topic.metadata.refresh.interval.ms, 5 minutes by default.
 * --metadata-refresh-ms (60 s by default), the interval serve looks for
 * new partitions at without --group, sets it on the group's consumer
 * (only: the producer and the state reader need no such look), unless
 * -X topic.metadata.refresh.interval.ms changed it (a value equal to
 * librdkafka's default cannot be told from none and is replaced too);
 * 0 leaves librdkafka's default; at most librdkafka's bound, an hour.
 */
static int group_conf_refresh(struct audit *a, rd_kafka_conf_t *kconf,
                              char *errstr, size_t errstr_size)
{
        char ms[32];

        if (a->conf.metadata_refresh_ms <= 0)
                return 0;
        snprintf(ms, sizeof(ms), "%lld",
                 (long long)(a->conf.metadata_refresh_ms > 3600000
                                 ? 3600000
                                 : a->conf.metadata_refresh_ms));
        return group_conf_default(kconf, "topic.metadata.refresh.interval.ms",
                                  ms, errstr, errstr_size);
}

int audit_group_conf(struct audit *a, rd_kafka_conf_t *kconf, char *errstr,
                     size_t errstr_size)
{
        struct audit_group *g;
        char host[256] = "";
        char *member;
        size_t len;

        if (!a->conf.follow || a->conf.source_cnt || a->conf.txn_manifests) {
                snprintf(errstr, errstr_size,
                         "--group is for serve only, without --source and "
                         "--txn-manifests (not in group mode yet)");
                return -1;
        }
        g = a->grp = calloc(1, sizeof(*g));
        if (!g) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        len = strlen(a->conf.group) + 32;
        g->state_topic = malloc(len);
        if (!g->state_topic) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        snprintf(g->state_topic, len, "eosaudit-%s-state", a->conf.group);
        g->events_topic = malloc(len);
        if (!g->events_topic) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        snprintf(g->events_topic, len, "eosaudit-%s-events", a->conf.group);
        member = g->member;
        if (a->conf.group_member) {
                snprintf(member, sizeof(g->member), "%s",
                         a->conf.group_member);
        } else {
                (void)gethostname(host, sizeof(host) - 1);
                snprintf(member, sizeof(g->member), "%s-%ld", host,
                         (long)getpid());
        }
        if ((size_t)snprintf(g->txn_id, sizeof(g->txn_id), "eosaudit-%s-%s",
                             a->conf.group, member) >= sizeof(g->txn_id)) {
                snprintf(errstr, errstr_size, "--group-member too long");
                return -1;
        }
        /* The consumer: the group's member, cooperative, offsets from
         * the transactions only. */
        if (rd_kafka_conf_set(kconf, "group.id", a->conf.group, errstr,
                              errstr_size) != RD_KAFKA_CONF_OK ||
            rd_kafka_conf_set(kconf, "partition.assignment.strategy",
                              "cooperative-sticky", errstr,
                              errstr_size) != RD_KAFKA_CONF_OK)
                return -1;
        if (audit_group_ids_conf(a, errstr, errstr_size))
                return -1;
        /* Both group consumers' heartbeat.interval.ms, unless -X set it:
         * 1000, not librdkafka's 3000.  A member learns of a rebalance at
         * its next heartbeat, and a cooperative rebalance takes two
         * rounds: with 3 s a joining member waited 4.3 s for partitions
         * and a moved partition went unaudited 3.1 s; with 1 s, 0.6 s and
         * 1.3 s (BENCHMARKS.md section 9).  One heartbeat a second per
         * member is nothing to the coordinator. */
        if (group_conf_default(kconf, "heartbeat.interval.ms", "1000", errstr,
                               errstr_size))
                return -1;
        g->base = rd_kafka_conf_dup(kconf);
        if (!g->base) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        if (group_conf_refresh(a, kconf, errstr, errstr_size))
                return -1;
        /* Static membership: the group's consumer only (not in base:
         * the state reader is no member). */
        if (a->conf.group_instance_id &&
            rd_kafka_conf_set(kconf, "group.instance.id",
                              a->conf.group_instance_id, errstr,
                              errstr_size) != RD_KAFKA_CONF_OK)
                return -1;
        rd_kafka_conf_set_rebalance_cb(kconf, group_rebalance_cb);
        return 0;
}

int audit_group_start(struct audit *a, char *errstr, size_t errstr_size)
{
        struct audit_group *g = a->grp;
        char txn_timeout[16], reader_group[600], offsets[600];
        const char *nocreate = NULL;
        const char *pprops[] = {"transactional.id",
                                g->txn_id,
                                "transaction.timeout.ms",
                                txn_timeout,
                                "linger.ms",
                                "0",
                                "allow.auto.create.topics",
                                "false",
                                NULL};
        /* The reader commits nothing (it reads from the beginning each
         * time): no offsets of its own to commit at its close, which
         * hung on a deleted state topic. */
        const char *rprops[] = {"group.id",
                                reader_group,
                                "allow.auto.create.topics",
                                "false",
                                "enable.auto.commit",
                                "false",
                                "auto.offset.reset",
                                "earliest",
                                "isolation.level",
                                "read_committed",
                                "enable.partition.eof",
                                "true",
                                NULL};
        rd_kafka_topic_partition_list_t *l;
        rd_kafka_resp_err_t err;
        rd_kafka_error_t *e;
        uint32_t i;
        size_t t;

        snprintf(txn_timeout, sizeof(txn_timeout), "%d", GROUP_TXN_TIMEOUT_MS);
        snprintf(reader_group, sizeof(reader_group), "%s-state-reader",
                 g->txn_id);
        /* Nothing is owned until the group assigns it: the ledger's own
         * state of every partition is set aside (the state topic is the
         * one that counts). */
        for (i = 0; i < a->nparts; i++) {
                dedup_tracker_part_forget(a->tr, i);
                audit_part_init(&a->parts[i], a->parts[i].topic,
                                a->parts[i].partition, i);
                a->rt[i].owned = 0;
        }
        /* The state topic is created only for a group without offsets
         * on the audited partitions (see audit_group_committed()). */
        l = rd_kafka_topic_partition_list_new((int)a->nparts);
        for (i = 0; i < a->nparts; i++)
                rd_kafka_topic_partition_list_add(l, a->parts[i].topic,
                                                  a->parts[i].partition);
        if (audit_group_committed(a, l, errstr, errstr_size)) {
                rd_kafka_topic_partition_list_destroy(l);
                return -1;
        }
        for (i = 0; i < (uint32_t)l->cnt && !nocreate; i++)
                if (l->elems[i].offset >= 0) {
                        snprintf(offsets, sizeof(offsets),
                                 "group %s has committed offsets (%s [%d] at "
                                 "%lld)",
                                 a->conf.group, l->elems[i].topic,
                                 (int)l->elems[i].partition,
                                 (long long)l->elems[i].offset);
                        nocreate = offsets;
                }
        rd_kafka_topic_partition_list_destroy(l);
        if (audit_group_topic(a, g->state_topic, "compact", "state", nocreate,
                              errstr, errstr_size) ||
            audit_group_topic(a, g->events_topic, "delete", "events", NULL,
                              errstr, errstr_size))
                return -1;
        g->prod = audit_group_handle(a, RD_KAFKA_PRODUCER, pprops, NULL,
                                     errstr, errstr_size);
        if (!g->prod)
                return -1;
        if ((e = rd_kafka_init_transactions(g->prod, GROUP_OP_TIMEOUT_MS))) {
                snprintf(errstr, errstr_size,
                         "group %s: cannot start the transactional producer "
                         "%s: %s",
                         a->conf.group, g->txn_id, rd_kafka_error_string(e));
                rd_kafka_error_destroy(e);
                return -1;
        }
        g->reader = audit_group_handle(a, RD_KAFKA_CONSUMER, rprops, NULL,
                                       errstr, errstr_size);
        if (!g->reader)
                return -1;
        /* The ids topic, its consumer and its group (group_ids.c): after
         * the reader, which rebuilds the judges' windows. */
        if (audit_group_ids_start(a, errstr, errstr_size))
                return -1;
        l = rd_kafka_topic_partition_list_new((int)a->ntopics);
        for (t = 0; t < a->ntopics; t++)
                rd_kafka_topic_partition_list_add(l, a->topics[t].name,
                                                  RD_KAFKA_PARTITION_UA);
        err = rd_kafka_subscribe(a->rk, l);
        rd_kafka_topic_partition_list_destroy(l);
        if (err) {
                snprintf(errstr, errstr_size, "group %s: cannot subscribe: %s",
                         a->conf.group, rd_kafka_err2str(err));
                return -1;
        }
        log_info("group %s: member %s joining; state in %s", a->conf.group,
                 g->txn_id, g->state_topic);
        return audit_group_view_start(a, errstr, errstr_size);
}

void audit_group_close(struct audit *a)
{
        if (a->grp)
                audit_group_ids_close(a);
}

/* After the consumer is closed (its last revocation committed). */
void audit_group_free(struct audit *a)
{
        struct audit_group *g = a->grp;

        if (!g)
                return;
        if (g->reader) {
                rd_kafka_consumer_close(g->reader);
                rd_kafka_destroy(g->reader);
        }
        if (g->prod)
                rd_kafka_destroy(g->prod);
        if (g->base)
                rd_kafka_conf_destroy(g->base);
        audit_group_ids_free(a);
        group_truncs_clear(g);
        free(g->state_topic);
        free(g->events_topic);
        free(g);
        a->grp = NULL;
}

/* ------------------------------------------------------------------ */
/* The mode (../audit/mode.h)                                          */
/* ------------------------------------------------------------------ */

static int group_start(struct audit *a, audit_commit_fn *commit, char *errstr,
                       size_t errstr_size)
{
        a->grp->commit = commit;
        return audit_group_start(a, errstr, errstr_size);
}

/* The consumer's log of what it skipped, and the record's id for the
 * ids topic. */
static void group_after_record(struct audit *a, struct ledger_part *lp,
                               int64_t offset, const struct dedup_hdrs *h,
                               enum dedup_verdict v)
{
        if (offset > lp->next_offset)
                /* Transaction markers, or records the consumer lost
                 * (audit_group_consume). */
                log_debug("%s [%d]: offsets %lld..%lld not delivered",
                          lp->topic, (int)lp->partition,
                          (long long)lp->next_offset, (long long)offset - 1);
        /* A topic-scoped stream (eos.scope: topic) spans partitions that
         * members audit apart, and they do not reconcile it (yet): the
         * member stops with one line (audit_group_failed()). */
        if (h->scope_topic && dedup_hdrs_status(h) == DEDUP_HDR_TRACKED) {
                char why[700];

                snprintf(why, sizeof(why),
                         "%s [%d] offset %lld: producer '%.*s' numbers its "
                         "records per topic (eos.scope: topic), across "
                         "partitions that members of a group audit apart; "
                         "audit this topic with one process (serve or scan "
                         "without --group)",
                         lp->topic, (int)lp->partition, (long long)offset,
                         (int)(h->producer_len > 100 ? 100 : h->producer_len),
                         h->producer);
                audit_group_fail(a,
                                 "topic-scoped streams are not audited "
                                 "in group mode",
                                 why);
                return;
        }
        audit_group_ids_note(a, lp, offset, h, v);
}

static int group_tick(struct audit *a, int64_t now, char *errstr,
                      size_t errstr_size)
{
        audit_group_watch(a, now);
        /* A topic deleted and created again under the group: another
         * topic id, looked for as often as the consumer looks for new
         * partitions.  Its partitions' states are the old log's. */
        if (a->conf.metadata_refresh_ms > 0 &&
            now - a->last_meta_ms >= a->conf.metadata_refresh_ms) {
                a->last_meta_ms = now;
                if (audit_topic_ids_check(a, NULL, errstr, errstr_size))
                        return -1;
        }
        return 0;
}

/* The transaction was aborted because the group's generation moved on
 * (a rebalance under way as the member stops).  The consumer's close
 * revokes these partitions and commits them in the callback; failing
 * that, their next owner audits those records again from the last
 * committed state.  Nothing is lost or counted twice: not an error. */
static int group_last_commit_lost(struct audit *a)
{
        log_info("group %s: the last transaction was aborted by a "
                 "rebalance; the partitions are committed as they are "
                 "revoked",
                 a->conf.group);
        return 1;
}

const struct audit_mode audit_mode_group = {
    .name = "group",
    .conf = audit_group_conf,
    .start = group_start,
    .consume = audit_group_consume,
    .before_commit = audit_group_commit,
    .after_record = group_after_record,
    .truncated = group_truncated,
    .tick = group_tick,
    .failed = audit_group_failed,
    .last_commit_lost = group_last_commit_lost,
    .stop = audit_group_view_stop,
    .close = audit_group_close,
    .free = audit_group_free,
};
