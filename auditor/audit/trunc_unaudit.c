/*
 * trunc_unaudit.c - taking back what the audit accepted from a log that
 * was truncated under it (trunc_detect.c found where): what is noted of
 * every accepted record for that, and the un-audit itself.
 *
 * From the divergence point D on, each producer stream's accepted records
 * (the runs the ledger kept, ../ledger/ledger_trunc.h) are taken back from the
 * engine (dedup_tracker_part_rewind()): its pair goes back to the last
 * seq it had before D, so records the producer writes again fill their
 * holes once and those never written again become a gap, missing once
 * confirmed.  The part's next offset goes back to D and its fingerprint
 * to the record found still there; one 'truncated' anomaly names the
 * offsets, the records and each stream's seqs.  All of it is written by
 * the next commit, in one transaction.  The id windows keep the ids of
 * records taken back: a copy written again under --dedup-key reads as
 * redelivered (see docs/RUNBOOK.md).  A flow's source or sink part has
 * its flow entries corrected too (flow.c, audit_flow_truncated()), in
 * the same commit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../base/clock.h"
#include "../../base/log.h"
#include "../ledger/ledger_trunc.h"
#include "internal.h"

void audit_trunc_note(struct audit *a, const struct ledger_part *lp,
                      int64_t offset, const struct dedup_hdrs *h,
                      enum dedup_verdict v)
{
        if (v != DEDUP_V_OK && v != DEDUP_V_BASELINE &&
            v != DEDUP_V_GAP_OPENED)
                return;
        /* Out of memory is said by the next commit. */
        (void)ledger_trunc_note(a->lg, lp, offset, h->producer,
                                h->producer_len, h->epoch, h->seq);
}

/* The anomaly's detail (schema/0014_truncation.sql); NULL: no memory. */
static char *trunc_detail(const struct ledger_trunc_stream *s, size_t n,
                          int64_t hi, const char *how)
{
        json_t *o = json_object(), *arr = json_array();
        char *out = NULL;
        size_t i;

        if (!o || !arr)
                goto out;
        json_object_set_new(o, "how", json_string(how));
        json_object_set_new(o, "log_end", json_integer(hi));
        json_object_set_new(o, "leader_epoch", json_null());
        for (i = 0; i < n; i++) {
                json_t *e = json_object();
                if (!e)
                        goto out;
                json_object_set_new(e, "producer",
                                    json_stringn(s[i].producer,
                                                 s[i].producer_len));
                json_object_set_new(e, "epoch", json_integer(s[i].epoch));
                json_object_set_new(e, "seq_lo", json_integer(s[i].seq));
                json_object_set_new(e, "epoch_hi",
                                    json_integer(s[i].epoch_hi));
                json_object_set_new(e, "seq_hi", json_integer(s[i].seq_hi));
                json_object_set_new(e, "records",
                                    json_integer((json_int_t)s[i].records));
                json_array_append_new(arr, e);
        }
        json_object_set(o, "streams", arr);
        out = json_dumps(o, JSON_COMPACT);
out:
        json_decref(arr);
        json_decref(o);
        return out;
}

/* The 'truncated' anomaly of t on lp, as the ledger writes it. */
static void trunc_anomaly(struct ledger_anomaly *an,
                          const struct ledger_part *lp,
                          const struct ledger_truncation *t, int64_t now)
{
        memset(an, 0, sizeof(*an));
        an->topic = lp->topic;
        an->partition = lp->partition;
        an->kind = "truncated";
        an->epoch = an->first_partition = -1;
        an->seq_lo = an->seq_hi = an->first_offset = -1;
        an->first_offset_hi = an->msgid_len = -1;
        an->offset_lo = t->offset_lo;
        an->offset_hi = t->offset_hi;
        an->count = t->records;
        an->detected_ms = now;
        an->detail = t->detail;
}

int audit_trunc_unaudit(struct audit *a, struct ledger_part *lp, int64_t d,
                        const struct fingerprint *match, int64_t hi,
                        const char *how, char *errstr, size_t errstr_size)
{
        struct ledger_trunc_stream *s = NULL;
        struct dedup_rewind *rw = NULL;
        struct ledger_truncation t;
        char *detail = NULL;
        uint64_t records = 0;
        size_t n = 0, i;
        int rc = -1;

        if (ledger_trunc_streams(a->lg, lp, d, a->rt[lp->part].trunc_floor, &s,
                                 &n, errstr, errstr_size))
                goto out;
        rw = calloc(n ? n : 1, sizeof(*rw));
        detail = trunc_detail(s, n, hi, how);
        if (!rw || !detail) {
                snprintf(errstr, errstr_size, "out of memory");
                goto out;
        }
        for (i = 0; i < n; i++) {
                rw[i].producer = s[i].producer;
                rw[i].producer_len = s[i].producer_len;
                rw[i].epoch = s[i].epoch;
                rw[i].seq = s[i].seq;
                rw[i].last_seq = s[i].last_seq;
                rw[i].records = s[i].records;
                records += s[i].records;
        }
        if (dedup_tracker_part_rewind(a->tr, lp->part, d, rw, n) < 0) {
                snprintf(errstr, errstr_size,
                         "%s [%d]: the ledger's runs past offset %lld do "
                         "not fit the engine's state",
                         lp->topic, (int)lp->partition, (long long)d);
                goto out;
        }
        t.offset_lo = d;
        t.offset_hi = lp->next_offset - 1;
        t.log_end = hi;
        t.records = records;
        t.leader_epoch = -1;
        t.how = how;
        t.detail = detail;
        if (ledger_trunc_pending(a->lg, lp, &t, errstr, errstr_size))
                goto out;
        /* A flow's source or sink: its entries are corrected, not
         * dropped as a new incarnation's (dedup/flow.h).  Found when the
         * audit starts, the flow is not loaded yet: not corrected. */
        if (a->flow) {
                if (audit_flow_truncated(a, lp, d, errstr, errstr_size))
                        goto out;
        } else if (a->conf.source_cnt) {
                log_warn("%s [%d]: truncated before the flow audit was "
                         "loaded: if it is a source or a sink of the flow, "
                         "its flow entries are not corrected (copies past "
                         "offset %lld still count)",
                         lp->topic, (int)lp->partition, (long long)d);
        }
        log_warn("%s [%d]: truncated: the log now ends at %lld, below "
                 "offset %lld that the audit had read (%s; an unclean "
                 "leader election?); it is the same log up to offset %lld: "
                 "offsets %lld..%lld are un-audited, %llu accepted "
                 "record(s) of %zu producer stream(s) taken back; reading "
                 "on from %lld: records not written again are missing once "
                 "their gap is confirmed",
                 lp->topic, (int)lp->partition, (long long)hi,
                 (long long)(lp->next_offset - 1), how,
                 (long long)match->offset, (long long)d,
                 (long long)t.offset_hi, (unsigned long long)records, n,
                 (long long)d);
        for (i = 0; i < n; i++)
                log_warn("%s [%d]: truncated: producer '%.*s' seqs %d/%lld.."
                         "%d/%lld (%llu records) taken back",
                         lp->topic, (int)lp->partition, (int)s[i].producer_len,
                         s[i].producer, (int)s[i].epoch, (long long)s[i].seq,
                         (int)s[i].epoch_hi, (long long)s[i].seq_hi,
                         (unsigned long long)s[i].records);
        lp->next_offset = d;
        lp->fp = *match;
        lp->dirty = 1;
        a->rt[lp->part].fp_stale = 0;
        a->stats.records = a->stats.records > records
                               ? a->stats.records - records
                               : 0;
        if (a->mode->truncated) {
                struct ledger_anomaly an;
                trunc_anomaly(&an, lp, &t, clock_wall_ms());
                if (a->mode->truncated(a, lp, &an, errstr, errstr_size))
                        goto out;
        }
        rc = 0;
out:
        free(detail);
        free(rw);
        ledger_trunc_streams_free(s, n);
        return rc;
}
