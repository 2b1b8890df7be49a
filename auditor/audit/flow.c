/*
 * flow.c - the flow audit in the consumer loop: the sources are read
 * with the sinks (one consumer, read_committed), every record with an id
 * goes to the lineage engine (dedup/flow.h), and the processor group's
 * committed offsets are the frontier that makes source records due.
 *
 * Why a frontier waits for the sinks: with exactly-once processing the
 * processor commits its input offsets and its outputs in one
 * transaction, so once the group has committed offset F on a source
 * partition, the outputs of every record below F are in the sinks,
 * readable under read_committed, below the sinks' high watermarks of
 * that moment.  So the frontier is read together with those watermarks,
 * and applied only once this consumer has read every sink partition up
 * to them: a record it then finds without a copy is lost, not late.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/log.h"
#include "../ledger/ledger_flow.h"
#include "internal.h"

int audit_flow_topics(struct audit *a, char *errstr, size_t errstr_size)
{
        size_t i, j, n;

        if (!a->conf.source_cnt)
                return 0;
        for (i = 0; i < a->conf.source_cnt; i++)
                for (j = 0; j < a->conf.topic_cnt; j++)
                        if (!strcmp(a->conf.sources[i], a->conf.topics[j])) {
                                snprintf(errstr, errstr_size,
                                         "topic '%s' is both a source "
                                         "(--source) and a sink (-t) of the "
                                         "flow",
                                         a->conf.sources[i]);
                                return -1;
                        }
        n = a->conf.topic_cnt + a->conf.source_cnt;
        a->fls.all_topics = calloc(n, sizeof(*a->fls.all_topics));
        if (!a->fls.all_topics) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        for (i = 0; i < a->conf.topic_cnt; i++)
                a->fls.all_topics[i] = a->conf.topics[i];
        for (i = 0; i < a->conf.source_cnt; i++)
                a->fls.all_topics[a->conf.topic_cnt + i] = a->conf.sources[i];
        a->conf.topics = a->fls.all_topics;
        a->conf.topic_cnt = n;
        return 0;
}

/* The group's committed offsets on every source partition into pend[]
 * (a frontier, struct audit_frontier), read where it commits: the
 * sources' cluster. */
static int group_read(struct audit *a, int64_t *pend, int *committed)
{
        rd_kafka_topic_partition_list_t *l = NULL;
        rd_kafka_ListConsumerGroupOffsets_t *req = NULL;
        rd_kafka_AdminOptions_t *opt = NULL;
        rd_kafka_queue_t *q = NULL;
        rd_kafka_event_t *ev = NULL;
        const rd_kafka_ListConsumerGroupOffsets_result_t *res;
        const rd_kafka_group_result_t **groups;
        const rd_kafka_topic_partition_list_t *got;
        rd_kafka_t *rk;
        size_t ng = 0, t;
        int rc = -1, i;
        uint32_t p;

        l = rd_kafka_topic_partition_list_new((int)a->nparts);
        for (t = 0; t < a->ntopics; t++) {
                int32_t k;
                if (a->topics[t].flow_role != AUDIT_FLOW_SOURCE)
                        continue;
                for (k = 0; k < a->topics[t].npart; k++)
                        rd_kafka_topic_partition_list_add(l, a->topics[t].name,
                                                          k);
        }
        /* The group commits where it reads: on the sources' cluster. */
        rk = a->rk_src ? a->rk_src : a->rk;
        req = rd_kafka_ListConsumerGroupOffsets_new(a->conf.processor_group,
                                                    l);
        opt = rd_kafka_AdminOptions_new(
            rk, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS);
        rd_kafka_AdminOptions_set_request_timeout(opt, AUDIT_ADMIN_TIMEOUT_MS,
                                                  NULL, 0);
        q = rd_kafka_queue_new(rk);
        rd_kafka_ListConsumerGroupOffsets(rk, &req, 1, opt, q);
        ev = rd_kafka_queue_poll(q, AUDIT_ADMIN_TIMEOUT_MS + 1000);
        res = ev ? rd_kafka_event_ListConsumerGroupOffsets_result(ev) : NULL;
        if (!res || rd_kafka_event_error(ev)) {
                log_warn("flow: cannot read the committed offsets of "
                         "processor group '%s': %s",
                         a->conf.processor_group,
                         ev ? rd_kafka_event_error_string(ev) : "timed out");
                goto out;
        }
        groups = rd_kafka_ListConsumerGroupOffsets_result_groups(res, &ng);
        if (ng != 1 || rd_kafka_group_result_error(groups[0])) {
                log_warn("flow: cannot read the committed offsets of "
                         "processor group '%s': %s",
                         a->conf.processor_group,
                         ng == 1 ? rd_kafka_error_string(
                                       rd_kafka_group_result_error(groups[0]))
                                 : "no result");
                goto out;
        }
        got = rd_kafka_group_result_partitions(groups[0]);
        for (p = 0; p < a->nparts; p++)
                pend[p] = -1;
        *committed = 0;
        for (i = 0; got && i < got->cnt; i++) {
                const rd_kafka_topic_partition_t *tp = &got->elems[i];
                for (t = 0; t < a->ntopics; t++)
                        if (!strcmp(a->topics[t].name, tp->topic))
                                break;
                if (t == a->ntopics || tp->err || tp->partition < 0 ||
                    tp->partition >= a->topics[t].npart || tp->offset < 0)
                        continue;
                pend[a->topics[t].part_of[tp->partition]] = tp->offset;
                *committed = 1;
        }
        rc = 0;
out:
        if (ev)
                rd_kafka_event_destroy(ev);
        if (q)
                rd_kafka_queue_destroy(q);
        if (opt)
                rd_kafka_AdminOptions_destroy(opt);
        if (req)
                rd_kafka_ListConsumerGroupOffsets_destroy(req);
        rd_kafka_topic_partition_list_destroy(l);
        return rc;
}

static const struct audit_frontier frontier_group = {"the processor group",
                                                     NULL, group_read, NULL};

/*
 * Reads the processor's committed offsets on every source partition into
 * flow_pend (a->fls.fr), and the sinks' high watermarks.  Returns 0
 * (flow_pending set), or -1 after logging why (the next read tries
 * again).
 */
static int frontier_read(struct audit *a)
{
        int64_t lag = 0;
        int rc = -1, committed = 0, lag_known = 1;
        uint32_t p;

        for (p = 0; p < a->nparts; p++)
                a->fls.pend[p] = -1;
        if (a->fls.fr->read(a, a->fls.pend, &committed))
                return -1;
        /* The sinks' high watermarks now: the outputs of every record
         * below the offsets just read lie below them. */
        for (p = 0; p < a->nparts; p++) {
                int64_t lo, hi;
                rd_kafka_resp_err_t err;
                int role = a->rt[p].flow_role;
                if (role == AUDIT_FLOW_SOURCE) {
                        err = rd_kafka_query_watermark_offsets(
                            audit_rk_of(a, a->parts[p].topic),
                            a->parts[p].topic, a->parts[p].partition, &lo, &hi,
                            AUDIT_META_TIMEOUT_MS);
                        if (!err && a->fls.pend[p] >= 0 && hi > a->fls.pend[p])
                                lag += hi - a->fls.pend[p];
                        else if (!err && a->fls.pend[p] < 0)
                                lag += hi - lo;
                        /* A partition whose watermark is not
                         * known makes the sum unknown, not smaller. */
                        if (err)
                                lag_known = 0;
                        continue;
                }
                if (role != AUDIT_FLOW_SINK)
                        continue;
                err = rd_kafka_query_watermark_offsets(a->rk,
                                                       a->parts[p].topic,
                                                       a->parts[p].partition,
                                                       &lo, &hi,
                                                       AUDIT_META_TIMEOUT_MS);
                if (err) {
                        log_warn("flow: cannot read watermarks of %s [%d]: "
                                 "%s",
                                 a->parts[p].topic, (int)a->parts[p].partition,
                                 rd_kafka_err2str(err));
                        goto out;
                }
                a->fls.pend[p] = hi;
        }
        if (!committed && !a->fls.info.group_committed)
                log_warn("flow: %s '%s' has no committed offset on any "
                         "source partition (is it the processor's group.id "
                         "/ application.id, or its connector's offsets "
                         "topic?): no source record is due, all stay "
                         "pending",
                         a->fls.fr->what, a->fls.fr_name);
        if (committed)
                a->fls.info.group_committed = 1;
        a->fls.info.lag = lag_known ? lag : -1;
        a->fls.pending = 1;
        rc = 0;
out:
        return rc;
}

/* Applies the frontier read once every sink has been read up to where
 * it stood then.  Returns 1 when applied. */
static int frontier_apply(struct audit *a)
{
        uint32_t p;

        if (!a->fls.pending)
                return 0;
        for (p = 0; p < a->nparts; p++)
                if (a->rt[p].flow_role == AUDIT_FLOW_SINK &&
                    a->parts[p].next_offset < a->fls.pend[p])
                        return 0;
        for (p = 0; p < a->nparts; p++)
                if (a->rt[p].flow_role == AUDIT_FLOW_SOURCE &&
                    a->fls.pend[p] >= 0)
                        dedup_flow_frontier(a->flow, p, a->fls.pend[p]);
        a->fls.pending = 0;
        a->fls.info.frontiers++;
        return 1;
}

/* Lost + unexpected among the retired entries: in a run, only the memory
 * bound retires (a new incarnation does it in the ledger, before load). */
static uint64_t flow_retired_bad(const struct audit *a)
{
        struct dedup_flow_state s;

        dedup_flow_state_get(a->flow, &s);
        return s.retired.outcome[DEDUP_FLOW_LOST] +
               s.retired.outcome[DEDUP_FLOW_UNEXPECTED];
}

int audit_flow_setup(struct audit *a, char *errstr, size_t errstr_size)
{
        struct dedup_flow_config fc = a->conf.flow;
        size_t t;

        if (!a->conf.source_cnt)
                return 0;
        /* topics: the sinks, the sources (audit_flow_topics()), then
         * maybe the manifest topic (audit_txn_topics()), in no flow. */
        for (t = 0; t < a->ntopics; t++) {
                size_t i;
                a->topics[t].flow_role = AUDIT_FLOW_SINK;
                for (i = 0; i < a->conf.source_cnt; i++)
                        if (!strcmp(a->topics[t].name, a->conf.sources[i]))
                                a->topics[t].flow_role = AUDIT_FLOW_SOURCE;
                if (a->txs.topics && a->conf.txn_manifests &&
                    !strcmp(a->topics[t].name, a->conf.txn_manifests))
                        a->topics[t].flow_role = AUDIT_FLOW_NONE;
        }
        /* Each part's role, once: pacing asks after every batch. */
        for (t = 0; t < a->ntopics; t++) {
                int32_t k;
                for (k = 0; k < a->topics[t].npart; k++)
                        a->rt[a->topics[t].part_of[k]].flow_role =
                            a->topics[t].flow_role;
        }
        if (a->conf.processor_group) {
                a->fls.fr = &frontier_group;
                a->fls.fr_name = a->conf.processor_group;
        } else if (a->conf.processor_offsets_topic) {
                a->fls.fr = &audit_frontier_connect;
                a->fls.fr_name = a->conf.processor_offsets_topic;
        }
        fc.by_frontier = a->fls.fr != NULL;
        /* A scan reads every sink to its end before it judges what it
         * found no source for (audit_flow_end()). */
        fc.sinks_at_finish = !a->conf.follow;
        a->flow = dedup_flow_new(&fc);
        a->fls.pend = calloc(a->nparts ? a->nparts : 1, sizeof(int64_t));
        if (!a->flow || !a->fls.pend) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        if (ledger_flow_load(a->lg, a->flow, a->parts, a->nparts,
                             dedup_flow_expect_name(fc.expect), errstr,
                             errstr_size))
                return -1;
        a->fls.early0 = flow_retired_bad(a);
        a->fls.info.group = a->fls.fr != NULL;
        a->fls.info.lag = -1;
        if (a->fls.fr && a->fls.fr->open &&
            a->fls.fr->open(a, errstr, errstr_size))
                return -1;
        /* Before the scan's end watermarks are taken (audit_position):
         * a frontier read now lies within what the scan will read. */
        if (a->fls.fr) {
                if (frontier_read(a) && !a->conf.follow) {
                        snprintf(errstr, errstr_size,
                                 "flow: cannot read the committed offsets "
                                 "of %s '%s'",
                                 a->fls.fr->what, a->fls.fr_name);
                        return -1;
                }
                a->fls.last_read_ms = 0;
        }
        log_info("flow: %zu sink topic(s), %zu source topic(s), expect %s, "
                 "due %s",
                 a->ntopics - a->conf.source_cnt, a->conf.source_cnt,
                 dedup_flow_expect_name(fc.expect),
                 a->conf.processor_group
                     ? "by the processor group's committed offsets (exact)"
                 : a->fls.fr ? "by the offsets the processor's connector "
                               "recorded (exact)"
                             : "by the sinks' progress "
                               "(--flow-due-records/-ms)");
        return 0;
}

int audit_flow_record(struct audit *a, const struct ledger_part *lp,
                      int64_t offset, const struct dedup_hdrs *h)
{
        int role = a->topics[a->last_topic].flow_role;

        if (h->ts_ms > 0)
                a->rt[lp->part].flow_ts = h->ts_ms;

        if (role == AUDIT_FLOW_SOURCE)
                dedup_flow_source(a->flow, lp->part, offset, h->ts_ms, h->id,
                                  h->id ? h->id_len : 0);
        else if (role == AUDIT_FLOW_SINK)
                dedup_flow_sink(a->flow, lp->part, offset, h->ts_ms, h->id,
                                h->id ? h->id_len : 0);
        return role == AUDIT_FLOW_SINK;
}

int audit_flow_truncated(struct audit *a, const struct ledger_part *lp,
                         int64_t d, char *errstr, size_t errstr_size)
{
        int role = a->rt[lp->part].flow_role;
        uint64_t changed = 0;
        char err[256];

        if (role != AUDIT_FLOW_SOURCE && role != AUDIT_FLOW_SINK)
                return 0;
        if (ledger_flow_truncated(a->lg,
                                  role == AUDIT_FLOW_SINK
                                      ? DEDUP_FLOW_SIDE_SINK
                                      : DEDUP_FLOW_SIDE_SOURCE,
                                  lp->part, d, &changed, err, sizeof(err))) {
                snprintf(errstr, errstr_size,
                         "%s [%d]: cannot take the truncation into the flow "
                         "audit: %s",
                         lp->topic, (int)lp->partition, err);
                return -1;
        }
        log_warn("%s [%d]: flow: the %s was truncated at offset %lld: %llu "
                 "flow entr%s corrected (%s)",
                 lp->topic, (int)lp->partition,
                 role == AUDIT_FLOW_SINK ? "sink" : "source", (long long)d,
                 (unsigned long long)changed, changed == 1 ? "y" : "ies",
                 role == AUDIT_FLOW_SINK
                     ? "copies at or past it are gone: a record left with "
                       "none is outstanding again, lost if the processor "
                       "does not copy it again"
                     : "records at or past it not yet copied are gone: "
                       "never due, never lost");
        return 0;
}

/* serve: says when the flow's lost, duplicated or unexpected counts
 * grow (at most every 5 s), as the live anomaly lines do for topics. */
/* Entries retired past --flow-max-ids that still read lost or unexpected
 * at the end of a scan.  Their verdicts stand: a retired entry is revived
 * when its copy or its source comes (dedup/flow.h, "Bounded memory"), so
 * these are ids whose counterpart the scan never read.  Said once, only
 * so that a reader knows their evidence is in the ledger's retired rows. */
static void flow_early_say(struct audit *a)
{
        uint64_t n = flow_retired_bad(a);

        n = n > a->fls.early0 ? n - a->fls.early0 : 0;
        if (!n || a->fls.early_said)
                return;
        a->fls.early_said = 1;
        log_info("flow: %" PRIu64 " lost or unexpected id(s) were retired "
                 "past --flow-max-ids (%" PRIu64 ") and their copy or "
                 "source never came: their verdicts stand (a later copy or "
                 "source revives them)",
                 n, a->conf.flow.max_ids);
}

static void flow_say(struct audit *a, int64_t now)
{
        struct dedup_flow_stats st;
        uint64_t c[3];

        if (now - a->fls.said_ms < 5000)
                return;
        a->fls.said_ms = now;
        dedup_flow_stats_get(a->flow, &st);
        c[0] = st.c.outcome[DEDUP_FLOW_LOST];
        c[1] = st.c.outcome[DEDUP_FLOW_DUPLICATED];
        c[2] = st.c.outcome[DEDUP_FLOW_UNEXPECTED];
        if (c[0] > a->fls.said[0] || c[1] > a->fls.said[1] ||
            c[2] > a->fls.said[2])
                log_warn("flow: %" PRIu64 " lost, %" PRIu64
                         " duplicated, %" PRIu64
                         " unexpected so far (of %" PRIu64
                         " source records; /api/v1/flows has the evidence)",
                         c[0], c[1], c[2], st.source_records);
        memcpy(a->fls.said, c, sizeof(c));
}

/*
 * Pacing.  One consumer reads the sources and the sinks, each at its own
 * pace: left alone, a scan can read one side almost whole before the
 * other, and then the ids outstanding between them (source records
 * without their copy yet, sink records without their source yet) reach
 * the topics' size.  Past --flow-max-ids the engine would retire them
 * with a verdict that may be wrong.  So the side that runs ahead is held
 * (its partitions paused) once its unmatched ids pass a quarter of the
 * bound, while the other side still has records to read, and let go at
 * an eighth, or as soon as the other side has nothing more to read now
 * (a lagging processor makes sources run ahead legitimately: they are
 * not held forever).
 */
#define FLOW_HOLD_AT(max) ((max) / 4)
#define FLOW_FREE_AT(max) ((max) / 8)

/*
 * Pacing in the records' time.  A copy is written after its source
 * record, so in a scan a sink partition whose records are later than
 * those of every source partition still being read is ahead of the
 * sources: what it reads now are copies of records not read yet.  Each
 * becomes an entry awaiting its source, written to the ledger at the
 * next commit and again when its source comes (of a 2M-record flow scan
 * that read its sinks first, 2.7 views per id, BENCHMARKS.md).  Read
 * after its source, a copy meets it in memory.
 * So a sink part whose last record is more than FLOW_TS_AHEAD_MS later
 * than the earliest last record of the sources being read is paused,
 * and resumed once the sources are no more than FLOW_TS_AHEAD_MS / 2
 * behind it, or have nothing more to read now.  A source part that gave
 * nothing for FLOW_TS_IDLE_MS (an open transaction holding it, say) does
 * not hold the sinks back.  Timestamps only order the reading: the
 * verdicts do not depend on the order.
 */
#define FLOW_TS_AHEAD_MS 1000
#define FLOW_TS_IDLE_MS 1000
/* Sinks held so read no copies: the sources they wait for run on, past a
 * quarter of the bound (reading them first is what lets their copies,
 * later in the records' time, meet them), up to half of it; then they
 * are held as the bound says, and the sinks go. */
#define FLOW_HOLD_TS_AT(max) ((max) / 2)

/* Whether a part of role has records to read now (not at its end); a
 * sink part held in the records' time (ts_pace()) counts if ts_held. */
static int side_reading(const struct audit *a, int role, int ts_held)
{
        uint32_t p;

        for (p = 0; p < a->nparts; p++)
                if (a->rt[p].flow_role == role && !a->rt[p].done &&
                    !a->rt[p].eof && !a->rt[p].flow_held &&
                    (ts_held || !a->rt[p].flow_ts_held))
                        return 1;
        return 0;
}

/* The handle that reads the side of role (cluster.c). */
static rd_kafka_t *flow_rk(const struct audit *a, int role)
{
        return role == AUDIT_FLOW_SOURCE && a->rk_src ? a->rk_src : a->rk;
}

static void side_hold(struct audit *a, int role)
{
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(
            (int)a->nparts);
        uint32_t p;

        for (p = 0; p < a->nparts; p++) {
                struct audit_rt *rt = &a->rt[p];
                if (a->rt[p].flow_role != role || rt->done || rt->paused ||
                    rt->eof || rt->flow_ts_held)
                        continue;
                rd_kafka_topic_partition_list_add(l, a->parts[p].topic,
                                                  a->parts[p].partition);
                rt->flow_held = 1;
        }
        if (!l->cnt) { /* every part of that side is at its end now */
                rd_kafka_topic_partition_list_destroy(l);
                return;
        }
        rd_kafka_pause_partitions(flow_rk(a, role), l);
        rd_kafka_topic_partition_list_destroy(l);
        a->fls.held_role = role;
        a->fls.info.holds++;
        log_debug("flow: the %s run ahead of the %s: held",
                  role == AUDIT_FLOW_SOURCE ? "sources" : "sinks",
                  role == AUDIT_FLOW_SOURCE ? "sinks" : "sources");
}

/* Resumes the held parts.  librdkafka fetches each from where the
 * application stood when it was paused (the offset after the last
 * message delivered, all of them audited: pacing runs after the batch's
 * verdicts, and a flow audit reads no batch ahead), and drops what was
 * queued for it meanwhile (librdkafka 2.1.0 fixed the batch calls
 * skipping offsets around a pause or a resume): no seek. */
static void side_free(struct audit *a, int64_t now)
{
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(
            (int)a->nparts);
        rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
        uint32_t p;

        for (p = 0; p < a->nparts; p++) {
                struct audit_rt *rt = &a->rt[p];
                if (!rt->flow_held)
                        continue;
                rt->flow_held = 0;
                rt->last_progress_ms = now;
                if (rt->done || rt->paused)
                        continue;
                rd_kafka_topic_partition_list_add(l, a->parts[p].topic,
                                                  a->parts[p].partition);
        }
        if (l->cnt)
                err = rd_kafka_resume_partitions(flow_rk(a, a->fls.held_role),
                                                 l);
        if (err)
                log_warn("flow: cannot resume the partitions let go after "
                         "pacing: %s",
                         rd_kafka_err2str(err));
        rd_kafka_topic_partition_list_destroy(l);
        a->fls.held_role = AUDIT_FLOW_NONE;
}

/* The earliest last record of the source parts being read now (ms), or
 * INT64_MAX when none is. */
static int64_t sources_time(const struct audit *a, int64_t now)
{
        int64_t t = INT64_MAX;
        uint32_t p;

        for (p = 0; p < a->nparts; p++) {
                const struct audit_rt *rt = &a->rt[p];
                if (rt->flow_role != AUDIT_FLOW_SOURCE || rt->done ||
                    rt->eof || rt->paused || rt->flow_held ||
                    now - rt->last_progress_ms >= FLOW_TS_IDLE_MS)
                        continue;
                if (rt->flow_ts < t)
                        t = rt->flow_ts;
        }
        return t;
}

static void ts_pace(struct audit *a, int64_t now)
{
        int64_t t = sources_time(a, now);
        rd_kafka_topic_partition_list_t *hold = NULL, *go = NULL;
        rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
        uint32_t p;

        for (p = 0; p < a->nparts; p++) {
                struct audit_rt *rt = &a->rt[p];
                rd_kafka_topic_partition_list_t **l;
                if (rt->flow_role != AUDIT_FLOW_SINK || rt->paused ||
                    rt->flow_held)
                        continue;
                if (!rt->flow_ts_held && !rt->done && !rt->eof &&
                    t != INT64_MAX && rt->flow_ts > t + FLOW_TS_AHEAD_MS)
                        l = &hold;
                else if (rt->flow_ts_held &&
                         a->fls.held_role != AUDIT_FLOW_SINK &&
                         (rt->done || t == INT64_MAX ||
                          rt->flow_ts <= t + FLOW_TS_AHEAD_MS / 2))
                        l = &go;
                else
                        continue;
                if (!*l)
                        *l = rd_kafka_topic_partition_list_new(8);
                rd_kafka_topic_partition_list_add(*l, a->parts[p].topic,
                                                  a->parts[p].partition);
                rt->flow_ts_held = l == &hold;
                if (l == &go)
                        rt->last_progress_ms = now;
        }
        if (hold) {
                rd_kafka_pause_partitions(flow_rk(a, AUDIT_FLOW_SINK), hold);
                rd_kafka_topic_partition_list_destroy(hold);
                a->fls.info.ts_holds++;
        }
        if (go) {
                /* As side_free(): from where the application stood. */
                err = rd_kafka_resume_partitions(flow_rk(a, AUDIT_FLOW_SINK),
                                                 go);
                rd_kafka_topic_partition_list_destroy(go);
        }
        if (err)
                log_warn("flow: cannot resume the sink partitions let go "
                         "after pacing: %s",
                         rd_kafka_err2str(err));
}

static void flow_pace(struct audit *a, int64_t now)
{
        uint64_t max = a->conf.flow.max_ids, src, snk;

        /* serve reads both sides at their heads, where the "other side
         * at its end" test flips with every record: pacing there would
         * pause and resume on every batch.  A serve that starts on a
         * backlog is not paced. */
        if (a->conf.follow)
                return;
        ts_pace(a, now);
        /* Live entries only: retired ones were judged. */
        dedup_flow_outstanding(a->flow, &src, &snk);
        if (a->fls.held_role == AUDIT_FLOW_SOURCE) {
                if (src <= FLOW_FREE_AT(max) ||
                    !side_reading(a, AUDIT_FLOW_SINK, 1))
                        side_free(a, now);
        } else if (a->fls.held_role == AUDIT_FLOW_SINK) {
                if (snk <= FLOW_FREE_AT(max) ||
                    !side_reading(a, AUDIT_FLOW_SOURCE, 0))
                        side_free(a, now);
        } else if (src > FLOW_HOLD_AT(max) &&
                   (side_reading(a, AUDIT_FLOW_SINK, 0) ||
                    (src > FLOW_HOLD_TS_AT(max) &&
                     side_reading(a, AUDIT_FLOW_SINK, 1)))) {
                side_hold(a, AUDIT_FLOW_SOURCE);
        } else if (snk > FLOW_HOLD_AT(max) &&
                   side_reading(a, AUDIT_FLOW_SOURCE, 0)) {
                side_hold(a, AUDIT_FLOW_SINK);
        }
}

void audit_flow_poll(struct audit *a, int64_t now)
{
        frontier_apply(a);
        flow_pace(a, now);
        /* serve: a new frontier once the last one is applied; a scan
         * keeps the one read before its end watermarks. */
        if (a->conf.follow && a->fls.fr && !a->fls.pending &&
            now - a->fls.last_read_ms >= a->conf.flow_frontier_interval_ms) {
                a->fls.last_read_ms = now;
                frontier_read(a);
        }
        dedup_flow_tick(a->flow);
        if (a->conf.follow) {
                flow_say(a, now);
        }
}

void audit_flow_end(struct audit *a)
{
        frontier_apply(a);
        if (a->fls.pending)
                log_warn("flow: the sinks were not read up to where they "
                         "stood when the processor's offsets were read: "
                         "source records stay pending");
        dedup_flow_tick(a->flow);
        /* The scan read every sink to its end: a sink record whose source
         * was not found is unexpected.  Source records stay pending unless
         * a frontier made them due. */
        dedup_flow_finish(a->flow, 0);
        flow_early_say(a);
}

void audit_flow_free(struct audit *a)
{
        if (a->fls.fr && a->fls.fr->close)
                a->fls.fr->close(a);
        dedup_flow_free(a->flow);
        free(a->fls.pend);
        free(a->fls.all_topics);
}

void audit_flow_info_get(const struct audit *a, struct audit_flow_info *fi)
{
        *fi = a->fls.info;
}
