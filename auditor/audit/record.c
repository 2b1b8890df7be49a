/*
 * record.c - one consumed message: its headers and identity (per
 * --dedup-key) through the engine, or what its error means for the audit.
 */
#include <stdio.h>
#include <string.h>

#include "../../base/le.h"
#include "../../base/log.h"
#include "../../dedup/topic.h"
#include "internal.h"

/* The topic of rkt: its index, or ntopics. */
static size_t audit_topic_find(const struct audit *a,
                               const rd_kafka_topic_t *rkt)
{
        const char *name = rd_kafka_topic_name(rkt);
        size_t t;

        for (t = 0; t < a->ntopics; t++)
                if (!strcmp(a->topics[t].name, name))
                        break;
        return t;
}

struct ledger_part *audit_part_of(struct audit *a,
                                  const rd_kafka_message_t *rkm)
{
        size_t t;

        if (rkm->rkt != a->last_rkt) {
                t = audit_topic_find(a, rkm->rkt);
                if (t == a->ntopics)
                        return NULL;
                a->last_rkt = rkm->rkt;
                a->last_topic = t;
        }
        t = a->last_topic;
        if (rkm->partition < 0 || rkm->partition >= a->topics[t].npart)
                return NULL;
        return &a->parts[a->topics[t].part_of[rkm->partition]];
}

/*
 * value-hash identity: 16 bytes, MurmurHash3 x64_128 of (flags, hash of
 * the key, hash of the value), flags telling a null key or value from an
 * empty one; the two inner hashes keep key and value apart, so that
 * ("ab", "c") and ("a", "bc") differ.
 */
static void audit_value_hash(const rd_kafka_message_t *rkm,
                             unsigned char out[AUDIT_VALUE_HASH_LEN])
{
        unsigned char frame[1 + 16 + 16];
        struct dedup_id kh, vh, id;

        dedup_id_hash(rkm->key ? rkm->key : "", rkm->key ? rkm->key_len : 0,
                      &kh);
        dedup_id_hash(rkm->payload ? rkm->payload : "",
                      rkm->payload ? rkm->len : 0, &vh);
        frame[0] = (unsigned char)((rkm->key ? 1 : 0) |
                                   (rkm->payload ? 2 : 0));
        le64_put(frame + 1, kh.lo);
        le64_put(frame + 9, kh.hi);
        le64_put(frame + 17, vh.lo);
        le64_put(frame + 25, vh.hi);
        dedup_id_hash(frame, sizeof(frame), &id);
        le64_put(out, id.lo);
        le64_put(out + 8, id.hi);
}

/* Points h->id at the record's identity per --dedup-key (the header case
 * is handled while the headers are read). */
static void audit_identity(const struct audit *a,
                           const rd_kafka_message_t *rkm, struct dedup_hdrs *h,
                           unsigned char buf[AUDIT_VALUE_HASH_LEN])
{
        switch (a->id_src) {
        case AUDIT_ID_MSGID:
                h->id = h->msgid;
                h->id_len = h->msgid_len;
                break;
        case AUDIT_ID_HEADER:
                break;
        case AUDIT_ID_KEY:
                h->id = rkm->key && rkm->key_len ? rkm->key : NULL;
                h->id_len = rkm->key ? rkm->key_len : 0;
                break;
        case AUDIT_ID_VALUE_HASH:
                audit_value_hash(rkm, buf);
                h->id = buf;
                h->id_len = AUDIT_VALUE_HASH_LEN;
                break;
        }
}

void audit_record_parse(const struct audit *a, const rd_kafka_message_t *rkm,
                        struct audit_rec *r)
{
        struct dedup_hdrs *h = &r->h;
        rd_kafka_headers_t *hdrs;
        size_t t;

        r->part = AUDIT_REC_NONE;
        if (rkm->err || !rkm->rkt)
                return;
        t = audit_topic_find(a, rkm->rkt);
        if (t == a->ntopics || rkm->partition < 0 ||
            rkm->partition >= a->topics[t].npart)
                return;
        r->topic = (uint32_t)t;
        r->part = a->topics[t].part_of[rkm->partition];
        dedup_hdrs_init(h);
        if (rd_kafka_message_headers(rkm, &hdrs) ==
            RD_KAFKA_RESP_ERR_NO_ERROR) {
                const char *name;
                const void *val;
                size_t size, i, name_len;
                for (i = 0;
                     !rd_kafka_header_get_all(hdrs, i, &name, &val, &size);
                     i++) {
                        name_len = strlen(name);
                        dedup_hdrs_feed(h, name, name_len, val, size);
                        /* The last occurrence counts, as for eos.*; a
                         * null or empty value is no id. */
                        if (a->id_src == AUDIT_ID_HEADER &&
                            name_len == a->id_header_len &&
                            !memcmp(name, a->id_header, name_len)) {
                                h->id = val && size ? val : NULL;
                                h->id_len = val ? size : 0;
                        }
                }
        }
        audit_identity(a, rkm, h, r->id_buf);
        /* Hashed here, off the consumer thread when there are helpers;
         * the same hash the engine would compute. */
        if (h->id) {
                dedup_id_hash(h->id, h->id_len, &h->id_hash);
                h->id_hashed = 1;
        }
        /* Verdicts run on the records' time (-1: none, the wall clock). */
        h->ts_ms = rd_kafka_message_timestamp(rkm, NULL);
}

void audit_record_prefetch(const struct audit *a, const struct audit_rec *r)
{
        if (r->part == AUDIT_REC_NONE)
                return;
        dedup_tracker_prefetch(a->tr, r->part, &r->h);
        if (a->flow && r->h.id_hashed)
                dedup_flow_prefetch(a->flow, &r->h.id_hash, 0);
}

/* How far ahead of its verdict audit_record_ahead() parses a record. */
#define AUDIT_PARSE_AHEAD 12

static void rec_flow_stage(const struct audit *a, const struct audit_rec *r,
                           int stage)
{
        if (r->part != AUDIT_REC_NONE && r->h.id_hashed)
                dedup_flow_prefetch(a->flow, &r->h.id_hash, stage);
}

void audit_record_ahead(const struct audit *a, rd_kafka_message_t **msgs,
                        struct audit_rec *recs, size_t n, size_t k)
{
        size_t j;

        if (!k)
                for (j = 0; j < n && j < AUDIT_PARSE_AHEAD; j++) {
                        audit_record_parse(a, msgs[j], &recs[j]);
                        audit_record_prefetch(a, &recs[j]);
                }
        j = k + AUDIT_PARSE_AHEAD;
        if (j < n) {
                audit_record_parse(a, msgs[j], &recs[j]);
                audit_record_prefetch(a, &recs[j]);
                /* audit_message() reads the message (offset, partition). */
                __builtin_prefetch(msgs[j]);
        }
        if (!a->flow)
                return;
        /* The flow's table takes three misses in a row: each started once
         * the one before it has had time to land. */
        if ((j = k + AUDIT_PARSE_AHEAD * 2 / 3) < n)
                rec_flow_stage(a, &recs[j], 1);
        if ((j = k + AUDIT_PARSE_AHEAD / 3) < n)
                rec_flow_stage(a, &recs[j], 2);
}

static void audit_record(struct audit *a, struct ledger_part *lp,
                         const rd_kafka_message_t *rkm, struct audit_rec *r,
                         int64_t now)
{
        struct audit_rt *rt = &a->rt[lp->part];
        struct dedup_hdrs *h = &r->h;
        enum dedup_verdict v;

        /* flow.c and txn.c read the record's topic here. */
        a->last_rkt = rkm->rkt;
        a->last_topic = r->topic;
        /* Already in the ledger (a refetch after a seek), or past the
         * scan's end: neither is audited now; nor a part this process
         * does not audit (--group: revoked, auditor/group/). */
        if (rkm->offset < lp->next_offset || !rt->owned)
                return;
        if (!a->conf.follow && rkm->offset >= rt->end) {
                audit_mark_done(a, lp);
                return;
        }
        /* How far the records' time runs behind the wall clock as they
         * are read (loop.c: the idle clock keeps that distance). */
        if (h->ts_ms > 0)
                a->rec_lag_ms = now > h->ts_ms ? now - h->ts_ms : 0;
        /* A flow's sink record is judged by lineage only: its eos.*
         * headers are the source writer's (flow.c). */
        if (a->flow && audit_flow_record(a, lp, rkm->offset, h)) {
                int64_t ts = h->ts_ms;
                dedup_hdrs_init(h);
                h->ts_ms = ts;
        }
        v = dedup_tracker_observe(a->tr, lp->part, rkm->offset, h);
        audit_trunc_note(a, lp, rkm->offset, h, v);
        if (a->mode->after_record)
                a->mode->after_record(a, lp, rkm->offset, h, v);
        if (a->conf.txn_manifests)
                audit_txn_record(a, lp, rkm, h);
        if (a->conf.status) {
                int64_t ts = rd_kafka_message_timestamp(rkm, NULL);
                if (ts > 0 && ts <= now)
                        status_hist_observe(&a->view.topics[r->topic].latency,
                                            (double)(now - ts) / 1000.0);
        }
        lp->next_offset = rkm->offset + 1;
        /* Hashed once per batch, for the last record only. */
        lp->fp.offset = rkm->offset;
        lp->fp.ts_ms = rd_kafka_message_timestamp(rkm, NULL);
        rt->fp_stale = 1;
        lp->dirty = 1;
        rt->eof = 0;
        rt->last_progress_ms = now;
        a->uncommitted++;
        a->stats.records++;
        if (!a->conf.follow && lp->next_offset >= rt->end)
                audit_mark_done(a, lp);
}

void audit_message(struct audit *a, rd_kafka_message_t *rkm,
                   struct audit_rec *r, int64_t now, int *fatal, char *errstr,
                   size_t errstr_size)
{
        struct ledger_part *lp;
        struct audit_rec own;

        if (!rkm->err) {
                if (!r) {
                        audit_record_parse(a, rkm, &own);
                        r = &own;
                }
                if (r->part != AUDIT_REC_NONE)
                        audit_record(a, &a->parts[r->part], rkm, r, now);
                return;
        }
        lp = rkm->rkt ? audit_part_of(a, rkm) : NULL;
        if (rkm->err == RD_KAFKA_RESP_ERR__PARTITION_EOF && lp &&
            a->rt[lp->part].owned) {
                struct audit_rt *rt = &a->rt[lp->part];
                int64_t eof = rkm->offset;
                /* A scan drops records at or past its end unaudited
                 * (audit_record): never move past them. */
                if (!a->conf.follow && eof > rt->end)
                        eof = rt->end;
                /* Only markers or aborted records lie between the last
                 * record and here: nothing to audit, so move past them. */
                if (eof > lp->next_offset) {
                        log_debug("%s [%d]: end of partition at %lld "
                                  "moves the audit from %lld",
                                  lp->topic, (int)lp->partition,
                                  (long long)eof, (long long)lp->next_offset);
                        lp->next_offset = eof;
                        lp->dirty = 1;
                        rt->last_progress_ms = now;
                }
                rt->eof = 1;
                /* Topic-scoped streams: this partition is read past the
                 * records' clock (a record read ends that, in the
                 * engine). */
                dedup_tracker_part_at_end(a->tr, lp->part, 1);
                if (!a->conf.follow && lp->next_offset >= rt->end)
                        audit_mark_done(a, lp);
                return;
        }
        if ((rkm->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
             rkm->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE) &&
            lp) {
                if (audit_out_of_range(a, lp, errstr, errstr_size))
                        *fatal = 1;
                return;
        }
        if (audit_trunc_signal(rkm->err) && lp) {
                if (audit_trunc_kip320(a, lp, errstr, errstr_size))
                        *fatal = 1;
                return;
        }
        if (rkm->err == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED) {
                audit_group_refused(a, rkm->err);
                return;
        }
        if (access_line(errstr, errstr_size, rkm->err, ACCESS_OP_READ_TOPIC,
                        lp         ? lp->topic
                        : rkm->rkt ? rd_kafka_topic_name(rkm->rkt)
                                   : NULL,
                        rd_kafka_message_errstr(rkm))) {
                a->refused = 1;
                *fatal = 1;
                return;
        }
        if (rkm->err == RD_KAFKA_RESP_ERR__FATAL ||
            rkm->err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
            rkm->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
                snprintf(errstr, errstr_size, "consumer: %s",
                         rd_kafka_message_errstr(rkm));
                *fatal = 1;
                return;
        }
        /* Transport errors and the like: librdkafka retries by itself. */
        log_debug("consumer: %s", rd_kafka_message_errstr(rkm));
}

void audit_fingerprint_batch(struct audit *a, rd_kafka_message_t **msgs,
                             size_t n)
{
        size_t k;

        /* From the end: the first message met of a part is its last. */
        for (k = n; k-- > 0;) {
                rd_kafka_message_t *rkm = msgs[k];
                struct ledger_part *lp;
                if (rkm->err || !rkm->rkt || !(lp = audit_part_of(a, rkm)))
                        continue;
                if (!a->rt[lp->part].fp_stale || lp->fp.offset != rkm->offset)
                        continue;
                audit_fingerprint_msg(rkm, &lp->fp);
                a->rt[lp->part].fp_stale = 0;
        }
}
