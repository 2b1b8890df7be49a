/*
 * group_ids.c - serve --group: redeliveries across members, through the
 * ids topic eosaudit-GROUP-ids (the Kafka Streams repartition pattern;
 * docs/GROUP.md).
 *
 * In group mode the tracker has no id window (audit_group_ids_conf():
 * window.max_ids is taken away from the engine before the tracker is
 * made), so the local engine never says redelivered.  Instead:
 *
 *   - The owner of an audited partition notes, for each record whose id
 *     the audit takes (an id, and a sequence verdict other than
 *     duplicate or fenced: exactly the records the single process's
 *     window checks, so an in-session repeat stays what its sequence
 *     says and is never also a redelivery), one small binary entry (the
 *     id's 128-bit hash, topic, partition, offset, timestamp, producer,
 *     epoch, seq) for ids partition k = hash mod N.  In the member's next
 *     transaction, with its state records and offsets, the entries of
 *     each k are packed, in the order noted, into records of up to
 *     GIDS_PACK_MAX_ENTRIES entries (group_ids_window.h): librdkafka's
 *     costs are per message, and a record per id cost more than the audit
 *     itself.
 *   - The ids topic's partitions are owned through a second consumer
 *     group, GROUP-ids (a second consumer per member, cooperative-sticky
 *     too, group.instance.id suffixed "-ids"): each topic set is balanced
 *     on its own, so that no member holds only ids partitions and audits
 *     nothing.  The owner of ids
 *     partition k judges every id hashing to k, entry by entry in
 *     (record offset, index in the record) order: an entry whose id (same
 *     topic) is among the last W entries of partition k before it, and
 *     not older than --id-window-age-ms by record time, is redelivered,
 *     the evidence naming both copies (the latest earlier one as first_*,
 *     ids_offset the offset of the record holding the entry).
 *     Its verdicts go to the events topic, and its position on k to
 *     GROUP-ids' offsets, in its next transaction (the member's one
 *     transaction sends the offsets of both groups, each with its
 *     consumer's group metadata).  W = ceil(--id-window /
 *     N) times the number of audited topics: about the single process's
 *     window, spread over the N partitions.  W counts entries, not
 *     offsets: a record holds up to GIDS_PACK_MAX_ENTRIES of them.
 *   - On assignment of k its window is rebuilt by reading k (read
 *     committed) from max(log start, committed - span) to the committed
 *     offset without verdicts, span growing until the read held >= W
 *     entries or began at the log start (ids_assign(): transaction
 *     markers and aborted records take offsets too, so no span fixed
 *     beforehand is sure to), then judging goes on from the committed
 *     offset.
 *
 * Exactly once, across kill -9 and rebalances: a verdict is a function
 * of ids partition k's committed records alone.  The entries judged
 * before it are the committed records' entries in (offset, index) order
 * (read_committed; a pack is judged whole, and a judge's position is
 * always a record boundary), and the window is the last W of them.  A
 * read from c' < c that held >= W entries before c leaves the last W
 * entries before c, the live window's (one that had to begin at the log
 * start differs only if retention deleted entries the live window still
 * held: the ids topic's retention must stay well above W entries).  So
 * a rebuilt window equals the live one, and the match rule
 * picks the latest earlier copy, which both have.  The ids records of
 * an audited batch commit with the offsets of that batch, or not at
 * all: a batch audited again by a partition's next owner writes them
 * again, and the aborted first copies are never read (read_committed).
 * A judge's verdicts commit with its position on k, or not at all: its
 * successor rebuilds the window up to that position and judges the same
 * records again, to the same verdicts.  So each redelivered record is
 * one event on the events topic, across the group.
 *
 * Which copy is the redelivery: the one whose ids record comes later on
 * k, that is, whose owner committed it later (within one member, the
 * order read, like the single process).
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
#include "internal.h"
#include "group_ids_window.h"

#define IDS_DEFAULT_PARTITIONS 12

/* A judge: ids partition k, owned. */
struct ids_judge {
        int owned;
        int64_t next;    /* next offset of k to judge (-1: from its start) */
        int64_t sent;    /* the position committed last */
        struct gids_window *w; /* NULL until its first record */
};

/* A record to produce in the next transaction (for ids: an entry, packed
 * by audit_group_ids_txn()). */
struct ids_out {
        uint32_t part;  /* the audited part (ids entries) */
        int32_t k;      /* ids partition (verdicts: the judge's) */
        size_t off, len; /* in the arena */
};

struct audit_group_ids {
        char *topic;
        int32_t nparts;      /* the ids topic's partitions */
        uint64_t window;     /* W: entries of k a judge remembers */
        int64_t max_age_ms;
        struct ids_judge *j; /* nparts */
        /* The packs being filled, one per ids partition (nparts): only
         * inside audit_group_ids_txn(), their buffers kept between
         * transactions. */
        struct gids_pack *packs;
        /* Pending: ids entries (recs) and verdicts (evs), their bytes in
         * one arena each.  The entries stay apart until the transaction
         * (not packed at once) so that audit_group_ids_forget() can drop
         * those of a revoked audited partition. */
        struct ids_out *recs, *evs;
        size_t nrecs, caprecs, nevs, capevs;
        unsigned char *arena, *earena;
        size_t alen, acap, elen, ecap;
        /* Written (committed): records, entries, bytes; judged entries.
         * txn_*: what the open transaction holds. */
        uint64_t produced, entries, bytes, judged, verdicts;
        uint64_t txn_recs, txn_entries, txn_bytes;
        int closing;         /* inside audit_group_ids_close() */
        int synced;          /* the ids consumer had an assignment */
        int gone;            /* the ids topic deleted under us */
};

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */

static int ids_push(struct ids_out **v, size_t *n, size_t *cap,
                    unsigned char **arena, size_t *alen, size_t *acap,
                    uint32_t part, int32_t k, const void *bytes, size_t len)
{
        struct ids_out *o;

        if (grow_array((void **)v, cap, *n + 1, sizeof(**v), 64, NULL) ||
            grow_array((void **)arena, acap, *alen + len, 1, 64, NULL))
                return -1;
        memcpy(*arena + *alen, bytes, len);
        o = &(*v)[(*n)++];
        o->part = part;
        o->k = k;
        o->off = *alen;
        o->len = len;
        *alen += len;
        return 0;
}

/* ------------------------------------------------------------------ */
/* Owner side                                                          */
/* ------------------------------------------------------------------ */

void audit_group_ids_note(struct audit *a, const struct ledger_part *lp,
                          int64_t offset, const struct dedup_hdrs *h,
                          enum dedup_verdict v)
{
        struct audit_group_ids *x = a->grp ? a->grp->ids : NULL;
        unsigned char b[GIDS_ENTRY_MAX];
        struct gids_rec r;
        int tracked;

        if (!x || !h->id || v == DEDUP_V_DUPLICATE || v == DEDUP_V_FENCED)
                return;
        if (h->id_hashed)
                r.id = h->id_hash;
        else
                dedup_id_hash(h->id, h->id_len, &r.id);
        tracked = h->producer && dedup_hdrs_status(h) == DEDUP_HDR_TRACKED;
        r.partition = lp->partition;
        r.offset = offset;
        r.ts_ms = h->ts_ms;
        r.epoch = tracked ? h->epoch : -1;
        r.seq = tracked ? h->seq : -1;
        r.topic = lp->topic;
        r.topic_len = strlen(lp->topic); /* Kafka's: at most 249 */
        r.producer = tracked ? h->producer : NULL;
        r.producer_len = tracked ? h->producer_len : 0;
        if (ids_push(&x->recs, &x->nrecs, &x->caprecs, &x->arena, &x->alen,
                     &x->acap, lp->part, (int32_t)(r.id.lo % (uint64_t)x->nparts),
                     b, gids_entry_encode(b, &r)))
                audit_group_fail(a, "ids", "out of memory");
}

/* ------------------------------------------------------------------ */
/* Judges                                                              */
/* ------------------------------------------------------------------ */

static void ids_judge_clear(struct ids_judge *j)
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
        if (!v || ids_push(&x->evs, &x->nevs, &x->capevs, &x->earena,
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

/*
 * The ids topic deleted under the running member: the judges' windows
 * are gone with it, so redeliveries across the gap would go unseen
 * without a word.  The member stops with one line, as for the state
 * topic, and its ids consumer is not destroyed (librdkafka 2.0.2 waits
 * forever destroying a consumer of a deleted topic; the process is
 * ending).
 */
static void ids_gone(struct audit *a)
{
        struct audit_group_ids *x = a->grp->ids;
        char why[700];

        x->gone = 1;
        snprintf(why, sizeof(why),
                 "%s was deleted under the running group "
                 "(UNKNOWN_TOPIC_OR_PART): the windows of redeliveries "
                 "went with it; to audit on, delete the offsets of "
                 "consumer group %s-ids (they point past the end of a "
                 "new ids topic), or use a new --group",
                 x->topic, a->conf.group);
        audit_group_fail(a, "ids topic", why);
}

/* One message of the ids consumer: judged, and destroyed. */
static void ids_message(struct audit *a, rd_kafka_message_t *m)
{
        struct audit_group_ids *x = a->grp ? a->grp->ids : NULL;
        struct ids_judge *j;
        long n;

        if (!x || !m->rkt ||
            strcmp(rd_kafka_topic_name(m->rkt), x->topic))
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
                ids_gone(a);
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

/* A window being rebuilt (ids_assign()). */
struct ids_rebuild {
        int64_t lo;   /* k's log start */
        int64_t span; /* this read: [max(lo, c - span), c) */
        int64_t from, last; /* its start, the last offset judged in it */
        uint64_t got; /* entries read by it */
        int more;     /* read (again, further back) next */
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
static int ids_assign(struct audit *a, rd_kafka_topic_partition_list_t *l,
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
                ids_judge_clear(&x->j[k]);
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
                        rb[k].from = c - rb[k].span > rb[k].lo
                                         ? c - rb[k].span
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
                                rb[k].span = ids_next_span(
                                    rb[k].span, rb[k].got, x->window);
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
                a->grp->ids->synced = 1;
                /* An assignment that reaches a closing consumer is taken
                 * and not judged (its committed offsets cannot be read
                 * then: rd_kafka_committed() waits out its timeout); the
                 * revocation that follows gives it back. */
                if (!a->grp->failed && !a->grp->ids->closing &&
                    ids_assign(a, l, errstr, sizeof(errstr))) {
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
                ids_message(a, m);
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
        /* librdkafka 2.0.2 asserts when a cooperative-sticky consumer is
         * destroyed before its first assignment (its issue 4312, fixed in
         * 2.3.0; seen in t_87: a member stopped right after it joined),
         * and waits forever destroying one whose topic was deleted
         * (ids_gone()): the process is ending, the handle is left to
         * it. */
        if (!g->ids || (g->ids->synced && !g->ids->gone))
                rd_kafka_destroy(g->ids_rk);
        g->ids_rk = NULL;
        /* Nothing judged any more (a close that served no revocation
         * leaves no position to send without the consumer). */
        for (k = 0; g->ids && k < g->ids->nparts; k++)
                ids_judge_clear(&g->ids->j[k]);
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
                        ids_judge_clear(&x->j[l->elems[i].partition]);
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
/* The transaction                                                     */
/* ------------------------------------------------------------------ */

int audit_group_ids_pending(const struct audit *a)
{
        const struct audit_group_ids *x = a->grp ? a->grp->ids : NULL;
        int32_t k;

        if (!x)
                return 0;
        if (x->nrecs || x->nevs)
                return 1;
        for (k = 0; k < x->nparts; k++)
                if (x->j[k].owned && x->j[k].next > 0 &&
                    x->j[k].next != x->j[k].sent)
                        return 1;
        return 0;
}

static rd_kafka_resp_err_t ids_produce(struct audit_group *g,
                                       const char *topic, int32_t partition,
                                       const void *val, size_t len)
{
        rd_kafka_resp_err_t err;

        do {
                err = rd_kafka_producev(
                    g->prod, RD_KAFKA_V_TOPIC(topic),
                    RD_KAFKA_V_PARTITION(partition),
                    RD_KAFKA_V_VALUE((void *)val, len),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
                if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        rd_kafka_poll(g->prod, 50);
        } while (err == RD_KAFKA_RESP_ERR__QUEUE_FULL);
        return err;
}

/* Produces k's pack, if it holds entries, and empties it. */
static rd_kafka_resp_err_t ids_pack_out(struct audit_group *g,
                                        struct audit_group_ids *x, int32_t k)
{
        const unsigned char *p;
        rd_kafka_resp_err_t err;
        size_t len;

        if (!(p = gids_pack_finish(&x->packs[k], &len)))
                return 0;
        if (!(err = ids_produce(g, x->topic, k, p, len))) {
                x->txn_recs++;
                x->txn_entries += x->packs[k].n;
                x->txn_bytes += len;
        }
        gids_pack_reset(&x->packs[k]);
        return err;
}

/*
 * The ids entries noted since the last transaction (of the audited
 * partitions still owned), packed per ids partition k in the order noted:
 * a pack is produced when full (gids_pack_full()) and at the end, so
 * that every entry is in a record of this transaction, with the offsets
 * of the batches they come from.  Then the verdicts, and the judges'
 * positions into offs.
 */
int audit_group_ids_txn(struct audit *a, rd_kafka_topic_partition_list_t *offs,
                        char *errstr, size_t errstr_size)
{
        struct audit_group *g = a->grp;
        struct audit_group_ids *x = g->ids;
        rd_kafka_resp_err_t err = 0;
        size_t i;
        int32_t k;

        if (!x)
                return 0;
        /* A transaction tried again (after an abort) packs again. */
        x->txn_recs = x->txn_entries = x->txn_bytes = 0;
        for (k = 0; k < x->nparts; k++)
                gids_pack_reset(&x->packs[k]);
        for (i = 0; i < x->nrecs && !err; i++) {
                struct gids_pack *pk = &x->packs[x->recs[i].k];
                if (!a->rt[x->recs[i].part].owned)
                        continue;
                if (gids_pack_add(pk, x->arena + x->recs[i].off,
                                  x->recs[i].len)) {
                        snprintf(errstr, errstr_size, "out of memory");
                        audit_group_fail(a, "ids", errstr);
                        return -1;
                }
                if (gids_pack_full(pk))
                        err = ids_pack_out(g, x, x->recs[i].k);
        }
        for (k = 0; k < x->nparts && !err; k++)
                err = ids_pack_out(g, x, k);
        if (err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
            err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
                ids_gone(a);
                return -1;
        }
        for (i = 0; i < x->nevs && !err; i++)
                if (x->j[x->evs[i].k].owned)
                        err = ids_produce(g, g->events_topic,
                                          RD_KAFKA_PARTITION_UA,
                                          x->earena + x->evs[i].off,
                                          x->evs[i].len);
        if (err) {
                snprintf(errstr, errstr_size, "ids or verdict record: %s",
                         rd_kafka_err2str(err));
                audit_group_fail(a, "produce", errstr);
                return -1;
        }
        for (k = 0; k < x->nparts; k++)
                if (x->j[k].owned && x->j[k].next > 0 &&
                    x->j[k].next != x->j[k].sent)
                        rd_kafka_topic_partition_list_add(offs, x->topic, k)
                            ->offset = x->j[k].next;
        return 0;
}

void audit_group_ids_done(struct audit *a)
{
        struct audit_group_ids *x = a->grp ? a->grp->ids : NULL;
        int32_t k;

        if (!x)
                return;
        x->produced += x->txn_recs;
        x->entries += x->txn_entries;
        x->bytes += x->txn_bytes;
        x->txn_recs = x->txn_entries = x->txn_bytes = 0;
        x->nrecs = x->nevs = 0;
        x->alen = x->elen = 0;
        for (k = 0; k < x->nparts; k++)
                if (x->j[k].owned)
                        x->j[k].sent = x->j[k].next;
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

int audit_group_ids_gone(const struct audit *a)
{
        return a->grp && a->grp->ids && a->grp->ids->gone;
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
                ids_judge_clear(&x->j[k]);
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
