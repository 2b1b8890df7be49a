/*
 * group_ids_judge.c - serve --group, the ids topic: the judges, an ids
 * record judged and a window rebuilt on assignment (group_ids.h).
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

/* ------------------------------------------------------------------ */
/* Judges                                                              */
/* ------------------------------------------------------------------ */

void group_ids_judge_clear(struct ids_judge *j)
{
        gids_window_free(j->w);
        memset(j, 0, sizeof(*j));
        j->next = j->sent = -1;
}

/* The verdict's JSON: the one evidence format of the events topic, an
 * anomaly of /api/v1/anomalies as group.c's events (its "id" null), plus
 * who judged it and where the first copy is: "member", "first_topic",
 * "first_ts_ms", "ids_partition", "ids_offset" (malloc'd). */
static char *ids_verdict_json(struct audit *a, int32_t k, int64_t ids_offset,
                              const struct gids_rec *r,
                              const struct gids_first *f)
{
        char topic[256];
        struct ledger_anomaly an;
        json_t *o;
        char *s;

        snprintf(topic, sizeof(topic), "%.*s", (int)r->topic_len, r->topic);
        memset(&an, 0, sizeof(an));
        an.topic = topic;
        an.partition = r->partition;
        an.kind = dedup_kind_name(DEDUP_KIND_REDELIVERED);
        an.producer = r->producer;
        an.producer_len = r->producer_len;
        an.epoch = r->epoch;
        an.seq_lo = an.seq_hi = r->seq;
        an.offset_lo = an.offset_hi = r->offset;
        an.first_offset = an.first_offset_hi = f->offset;
        an.first_partition = f->partition;
        an.count = 1;
        an.detected_ms = r->ts_ms;
        an.msgid_len = -1;
        o = report_anomaly_json(&an);
        if (!o)
                return NULL;
        json_object_set_new(o, "id", json_null());
        json_object_set_new(o, "first_topic", json_string(f->topic));
        json_object_set_new(o, "first_ts_ms", json_integer(f->ts_ms));
        json_object_set_new(o, "member", json_string(a->grp->txn_id));
        json_object_set_new(o, "ids_partition", json_integer(k));
        json_object_set_new(o, "ids_offset", json_integer(ids_offset));
        s = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        return s;
}

/*
 * Judges the record at offset o of ids partition k (emit: a verdict is
 * an event of the next transaction; 0 while the window is rebuilt).
 * Returns 0, or -1 when memory ran out.
 */
static int ids_judge_one(struct audit *a, int32_t k, int64_t o,
                         const struct gids_rec *r, int emit)
{
        struct audit_group_ids *x = a->grp->ids;
        struct ids_judge *j = &x->j[k];
        struct gids_first f;
        char *v;
        int rc;

        if (!j->w && !(j->w = gids_window_new(x->window, x->max_age_ms)))
                return -1;
        rc = gids_window_judge(j->w, o, r, &f);
        if (rc <= 0 || !emit)
                return rc < 0 ? -1 : 0;
        v = ids_verdict_json(a, k, o, r, &f);
        if (!v || group_ids_push(&x->evs, &x->nevs, &x->capevs, &x->earena,
                                 &x->elen, &x->ecap, 0, k, v, strlen(v))) {
                free(v);
                return -1;
        }
        free(v);
        x->verdicts++;
        return 0;
}

/*
 * Judges the entries of the ids record m (at offset o of k) in order
 * (emit as ids_judge_one()).  Returns the entries judged, or -1 when
 * memory ran out.  A record that is not an ids record is skipped whole,
 * with a warning: what is judged stays a function of the committed
 * records, whoever reads them.
 */
static long ids_judge_record(struct audit *a, int32_t k,
                             const rd_kafka_message_t *m, int emit)
{
        struct gids_iter it;
        struct gids_rec r;
        long n = 0;

        if (gids_iter_open(&it, m->payload, m->len) < 0) {
                log_warn("group %s: ids topic %s [%d] offset %lld: not an "
                         "ids record of a known version, skipped",
                         a->conf.group, a->grp->ids->topic, (int)k,
                         (long long)m->offset);
                return 0;
        }
        while (gids_iter_next(&it, &r)) {
                if (ids_judge_one(a, k, m->offset, &r, emit))
                        return -1;
                n++;
        }
        return n;
}

/* One message of the ids consumer: judged, and destroyed. */
void group_ids_message(struct audit *a, rd_kafka_message_t *m)
{
        struct audit_group_ids *x = a->grp ? a->grp->ids : NULL;
        struct ids_judge *j;
        long n;

        if (!x || !m->rkt || strcmp(rd_kafka_topic_name(m->rkt), x->topic))
                goto out;
        if (m->partition < 0 || m->partition >= x->nparts)
                goto out;
        j = &x->j[m->partition];
        if (!j->owned)
                goto out; /* queued before a revocation */
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                /* Past transaction markers: nothing to judge below. */
                if (m->offset > j->next) {
                        j->next = m->offset;
                        a->uncommitted++;
                }
                goto out;
        }
        if (m->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
                group_ids_topic_gone(a);
                goto out;
        }
        if (m->err) {
                log_warn("group %s: ids topic %s [%d]: %s", a->conf.group,
                         x->topic, (int)m->partition,
                         rd_kafka_message_errstr(m));
                goto out;
        }
        if (m->offset < j->next)
                goto out; /* judged already (queued before a reassignment) */
        if ((n = ids_judge_record(a, m->partition, m, 1)) < 0)
                audit_group_fail(a, "ids judge", "out of memory");
        else
                x->judged += (uint64_t)n;
        j->next = m->offset + 1;
        a->uncommitted++;
out:
        rd_kafka_message_destroy(m);
}

/* A window being rebuilt (group_ids_assign()). */
struct ids_rebuild {
        int64_t lo;         /* k's log start */
        int64_t span;       /* this read: [max(lo, c - span), c) */
        int64_t from, last; /* its start, the last offset judged in it */
        uint64_t got;       /* entries read by it */
        int more;           /* read (again, further back) next */
};

/*
 * The first read of a rebuild: the records that hold W entries when the
 * packs are full, plus room for transaction markers; or all of [lo, c)
 * when that is at most IDS_WHOLE_LOG_READS times as many records (each
 * read costs a round trip, assign, fetch, end of partition, ~150 ms
 * here, that a short log is cheaper to read through than to pay twice).
 * A later read goes back at least twice as far, as far as the entries
 * per offset seen so far say W needs, and a quarter more: few reads, and
 * a bounded over-read, whatever the packs (full ones from a backlog,
 * small ones from a live stream, single entries from older members).
 */
#define IDS_WHOLE_LOG_READS 8

static int64_t ids_first_span(uint64_t window, int64_t lo, int64_t c)
{
        int64_t span = (int64_t)(window / GIDS_PACK_MAX_ENTRIES) + 64;

        return c - lo <= IDS_WHOLE_LOG_READS * span ? c - lo : span;
}

static int64_t ids_next_span(int64_t span, uint64_t got, uint64_t window)
{
        double want = got ? (double)span * (double)window / (double)got * 1.25
                          : (double)span * 16;
        int64_t next = want > 4e18 ? INT64_MAX / 2 : (int64_t)want + 1;

        return next > 2 * span ? next : 2 * span;
}

/*
 * Rebuilds the windows of the ids partitions of l (read_committed, no
 * verdicts) and sets their offsets in l to the committed ones (none: the
 * start).  A window is the last W entries before the committed offset c,
 * so k is read from max(log start, c - span) to c, span growing
 * (ids_next_span()) until the read held W entries or began at the log
 * start: the offsets below c are not all entries (transaction markers,
 * aborted records take offsets too), so no span fixed beforehand would
 * be sure to hold W.  Each read starts from an empty window, which then
 * keeps the last W entries of it: the live window's.
 */
int group_ids_assign(struct audit *a, rd_kafka_topic_partition_list_t *l,
                     char *errstr, size_t errstr_size)
{
        struct audit_group *g = a->grp;
        struct audit_group_ids *x = g->ids;
        rd_kafka_topic_partition_list_t *mine, *rd = NULL;
        struct ids_rebuild *rb = NULL;
        int64_t t0 = clock_wall_ms(), deadline, lo, hi;
        rd_kafka_resp_err_t err;
        int i, todo = 0, reads = 0, rc = -1;
        uint64_t replayed = 0;

        if (!x)
                return 0;
        mine = rd_kafka_topic_partition_list_new(l->cnt);
        for (i = 0; i < l->cnt; i++)
                if (!strcmp(l->elems[i].topic, x->topic))
                        rd_kafka_topic_partition_list_add(
                            mine, x->topic, l->elems[i].partition);
        if (!mine->cnt) {
                rc = 0;
                goto out;
        }
        if (!(rb = calloc((size_t)x->nparts, sizeof(*rb)))) {
                snprintf(errstr, errstr_size, "out of memory");
                goto out;
        }
        /* The judges' positions are GROUP-ids' offsets. */
        if ((err = rd_kafka_committed(g->ids_rk, mine, GROUP_STATE_READ_MS))) {
                snprintf(errstr, errstr_size,
                         "cannot read the committed offsets of the group "
                         "%s-ids: %s",
                         a->conf.group, rd_kafka_err2str(err));
                goto out;
        }
        for (i = 0; i < mine->cnt; i++) {
                int32_t k = mine->elems[i].partition;
                int64_t c = mine->elems[i].offset;
                if (k < 0 || k >= x->nparts) {
                        snprintf(errstr, errstr_size,
                                 "ids topic %s [%d] was assigned but the "
                                 "topic had %d partitions at start",
                                 x->topic, (int)k, (int)x->nparts);
                        goto out;
                }
                group_ids_judge_clear(&x->j[k]);
                x->j[k].owned = 1;
                x->j[k].next = c >= 0 ? c : 0;
                x->j[k].sent = c;
                rd_kafka_topic_partition_list_find(l, x->topic, k)->offset =
                    c >= 0 ? c : RD_KAFKA_OFFSET_BEGINNING;
                if (c <= 0)
                        continue;
                if (rd_kafka_query_watermark_offsets(g->reader, x->topic, k,
                                                     &lo, &hi,
                                                     AUDIT_META_TIMEOUT_MS)) {
                        snprintf(errstr, errstr_size,
                                 "cannot read the watermarks of the ids "
                                 "topic %s [%d]",
                                 x->topic, (int)k);
                        goto out;
                }
                if (hi < c) {
                        snprintf(errstr, errstr_size,
                                 "ids topic %s [%d] ends at %lld, below the "
                                 "group's committed offset %lld: it was "
                                 "deleted or recreated under the group "
                                 "(start a new --group)",
                                 x->topic, (int)k, (long long)hi,
                                 (long long)c);
                        goto out;
                }
                if (lo >= c)
                        continue;
                rb[k].lo = lo;
                rb[k].span = ids_first_span(x->window, lo, c);
                rb[k].more = 1;
                todo++;
        }
        deadline = clock_wall_ms() + GROUP_STATE_READ_MS;
        while (todo) {
                int left = 0;
                int32_t k;
                rd = rd_kafka_topic_partition_list_new(todo);
                for (k = 0; k < x->nparts; k++) {
                        int64_t c = x->j[k].next;
                        if (!rb[k].more)
                                continue;
                        rb[k].more = 0;
                        rb[k].got = 0;
                        rb[k].from = c - rb[k].span > rb[k].lo ? c - rb[k].span
                                                               : rb[k].lo;
                        rb[k].last = -1;
                        gids_window_free(x->j[k].w);
                        x->j[k].w = NULL;
                        rd_kafka_topic_partition_list_add(rd, x->topic, k)
                            ->offset = rb[k].from;
                        left++;
                }
                reads++;
                if (rd_kafka_assign(g->reader, rd)) {
                        snprintf(errstr, errstr_size,
                                 "cannot read the ids topic %s", x->topic);
                        goto out;
                }
                while (left) {
                        rd_kafka_message_t *m;
                        rd_kafka_topic_partition_t *e;
                        int64_t c;
                        long n;
                        if (clock_wall_ms() > deadline) {
                                snprintf(errstr, errstr_size,
                                         "the ids topic %s could not be read "
                                         "to the group's offsets within %d s",
                                         x->topic, GROUP_STATE_READ_MS / 1000);
                                goto unassign;
                        }
                        m = rd_kafka_consumer_poll(g->reader, 200);
                        if (!m)
                                continue;
                        e = m->rkt ? rd_kafka_topic_partition_list_find(
                                         rd, rd_kafka_topic_name(m->rkt),
                                         m->partition)
                                   : NULL;
                        if (!e || e->offset == RD_KAFKA_OFFSET_END) {
                                rd_kafka_message_destroy(m);
                                continue;
                        }
                        c = x->j[m->partition].next;
                        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                                if (m->offset >= c) {
                                        e->offset = RD_KAFKA_OFFSET_END;
                                        left--;
                                }
                        } else if (m->err) {
                                log_warn("group %s: reading the ids topic: %s",
                                         a->conf.group,
                                         rd_kafka_message_errstr(m));
                        } else {
                                /* Each record once, in order, from this
                                 * read's start, whatever an earlier read
                                 * left queued. */
                                if (m->offset < c &&
                                    m->offset >= rb[m->partition].from &&
                                    m->offset > rb[m->partition].last) {
                                        rb[m->partition].last = m->offset;
                                        n = ids_judge_record(a, m->partition,
                                                             m, 0);
                                        if (n < 0) {
                                                rd_kafka_message_destroy(m);
                                                snprintf(errstr, errstr_size,
                                                         "out of memory");
                                                goto unassign;
                                        }
                                        rb[m->partition].got += (uint64_t)n;
                                }
                                if (m->offset >= c - 1) {
                                        e->offset = RD_KAFKA_OFFSET_END;
                                        left--;
                                }
                        }
                        rd_kafka_message_destroy(m);
                }
                rd_kafka_assign(g->reader, NULL);
                /* Fewer than W entries read and more log below: again,
                 * further back. */
                todo = 0;
                for (i = 0; i < rd->cnt; i++) {
                        k = rd->elems[i].partition;
                        if (rb[k].got < x->window &&
                            x->j[k].next - rb[k].span > rb[k].lo) {
                                rb[k].span = ids_next_span(rb[k].span,
                                                           rb[k].got,
                                                           x->window);
                                rb[k].more = 1;
                                todo++;
                        } else
                                replayed += rb[k].got;
                }
                rd_kafka_topic_partition_list_destroy(rd);
                rd = NULL;
        }
        rc = 0;
        goto out;
unassign:
        rd_kafka_assign(g->reader, NULL);
out:
        if (!rc && mine->cnt)
                log_info("group %s: judging %d ids partition(s), %llu ids "
                         "read back into their windows (%d reads, %lld ms)",
                         a->conf.group, mine->cnt,
                         (unsigned long long)replayed, reads,
                         (long long)(clock_wall_ms() - t0));
        rd_kafka_topic_partition_list_destroy(mine);
        if (rd)
                rd_kafka_topic_partition_list_destroy(rd);
        free(rb);
        return rc;
}
