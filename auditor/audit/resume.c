/*
 * resume.c - when the audit resumes, is each partition's log still the
 * one the ledger knows?  First the topic's id (topic_id.c): another id
 * than the ledger's is a topic deleted and created again, whatever its
 * partitions hold, and nothing is read back.  Then, for what the id
 * cannot see (and alone where no id can be had), the record the audit
 * stopped at is read again and compared with its fingerprint
 * (../fingerprint.h); with the same id, a log that holds another record
 * there is a truncated one, never a recreated topic.  A log truncated
 * by an unclean leader election (and maybe written on since) is the same
 * log up to a batch the ledger remembers: it is un-audited from there
 * (trunc_detect.c).  A topic deleted and recreated, or truncated deeper
 * than the ledger remembers, starts a new incarnation in the ledger:
 * nothing of the old log's state (pairs, gaps, ids) is applied to the new
 * one, which is audited from its start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/clock.h"
#include "../../base/log.h"
#include "internal.h"

/* How long reading the records back may take in all. */
#define AUDIT_RESUME_FETCH_MS 15000

struct audit_probe {
        struct fingerprint_probe p;
        int want;     /* the record must be read */
        int resolved; /* ... and was (or is known gone) */
};

/* Reads the record at (or the first after) each wanted part's
 * fingerprint offset, with the audit's own consumer. */
static int audit_probe_fetch(struct audit *a, struct audit_probe *pr,
                             char *errstr, size_t errstr_size)
{
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(
            (int)a->nparts);
        rd_kafka_message_t *msgs[256];
        rd_kafka_resp_err_t err;
        int64_t deadline = clock_mono_us() + AUDIT_RESUME_FETCH_MS * 1000LL;
        uint32_t i, left = 0;

        for (i = 0; i < a->nparts; i++) {
                if (!pr[i].want)
                        continue;
                rd_kafka_topic_partition_list_add(l, a->parts[i].topic,
                                                  a->parts[i].partition)
                    ->offset = a->parts[i].fp.offset;
                left++;
        }
        if (!left) {
                rd_kafka_topic_partition_list_destroy(l);
                return 0;
        }
        if (audit_assign_list(a, l, errstr, errstr_size))
                return -1;
        while (left && clock_mono_us() < deadline) {
                ssize_t n = audit_consume(a, 100, msgs,
                                          sizeof(msgs) / sizeof(*msgs));
                ssize_t k;
                for (k = 0; k < n; k++) {
                        rd_kafka_message_t *m = msgs[k];
                        struct ledger_part *lp = m->rkt ? audit_part_of(a, m)
                                                        : NULL;
                        struct audit_probe *q = lp ? &pr[lp->part] : NULL;
                        if (q && q->want && !q->resolved) {
                                if (!m->err && m->offset >= lp->fp.offset) {
                                        q->p.found = 1;
                                        audit_fingerprint_msg(m, &q->p.rec);
                                        q->resolved = 1;
                                } else if (
                                    m->err ==
                                        RD_KAFKA_RESP_ERR__PARTITION_EOF ||
                                    m->err ==
                                        RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE ||
                                    m->err ==
                                        RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET) {
                                        /* Nothing readable at or after
                                         * it: gone. */
                                        q->resolved = 1;
                                }
                                if (q->resolved)
                                        left--;
                        }
                        rd_kafka_message_destroy(m);
                }
        }
        /* Back to nothing assigned: audit_assign() follows. */
        err = rd_kafka_assign(a->rk, NULL);
        if (!err && a->rk_src)
                err = rd_kafka_assign(a->rk_src, NULL);
        if (err) {
                snprintf(errstr, errstr_size, "cannot unassign partitions: %s",
                         rd_kafka_err2str(err));
                return -1;
        }
        return 0;
}

/* Starts a new incarnation of topic t for the parts whose verdict says
 * their log is not the ledger's. */
static int audit_incarnate(struct audit *a, size_t t,
                           const struct audit_probe *pr,
                           const enum fingerprint_verdict *v,
                           const char *detail, char *errstr,
                           size_t errstr_size)
{
        struct ledger_incarnation_part *why;
        size_t n = 0;
        int32_t p;
        int64_t inc = 0;
        int rc;

        why = calloc((size_t)a->topics[t].npart, sizeof(*why));
        if (!why) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        for (p = 0; p < a->topics[t].npart; p++) {
                uint32_t i = a->topics[t].part_of[p];
                if (!fingerprint_verdict_new_log(v[i]))
                        continue;
                why[n].partition = p;
                why[n].reason = fingerprint_verdict_name(v[i]);
                why[n].old_next = a->parts[i].next_offset;
                why[n].fp_offset = a->parts[i].fp.offset;
                why[n].log_start = pr[i].p.lo;
                why[n].detail = detail;
                n++;
        }
        rc = n ? ledger_topic_incarnate(a->lg, a->topics[t].name, why, n, &inc,
                                        errstr, errstr_size)
               : 0;
        if (!rc && n)
                log_warn("topic '%s' is not the log the ledger knows "
                         "(%zu partition(s) recreated or truncated): "
                         "incarnation %lld starts, audited from the log "
                         "start with no state carried across; the earlier "
                         "one is kept as evidence",
                         a->topics[t].name, n, (long long)inc);
        free(why);
        return rc;
}

/*
 * The ledger's id of each topic into topics[].id, judged against the
 * brokers' (now): tv[t].  A changed id is said here, one line per topic.
 */
static int audit_resume_ids(struct audit *a, const struct audit_topic_id *now,
                            enum topic_id_verdict *tv, char *errstr,
                            size_t errstr_size)
{
        size_t t;

        for (t = 0; t < a->ntopics; t++) {
                struct audit_topic *at = &a->topics[t];
                int r = ledger_topic_id_get(a->lg, at->name, at->id,
                                            sizeof(at->id), errstr,
                                            errstr_size);
                if (r < 0)
                        return -1;
                if (!r || !topic_id_valid(at->id))
                        at->id[0] = '\0';
                tv[t] = topic_id_compare(at->id, now[t].id);
                if (!now[t].id[0])
                        audit_topic_id_unknown(a, t, now[t].why);
                else if (tv[t] == TOPIC_ID_CHANGED)
                        log_warn("topic '%s' was deleted and created again: "
                                 "its topic id is %s, the ledger's is %s",
                                 at->name, now[t].id, at->id);
        }
        return 0;
}

/* Stores each topic's id for its current incarnation (the new one, if
 * one began); topics[].id follows. */
static int audit_resume_ids_put(struct audit *a,
                                const struct audit_topic_id *now, char *errstr,
                                size_t errstr_size)
{
        int64_t now_ms = clock_wall_ms();
        size_t t;
        uint32_t i;

        for (t = 0; t < a->ntopics; t++) {
                struct audit_topic *at = &a->topics[t];
                int audited = 0;
                if (!now[t].id[0])
                        continue;
                if (ledger_topic_id_put(a->lg, at->name, now[t].id, now_ms,
                                        errstr, errstr_size))
                        return -1;
                for (i = 0; i < (uint32_t)at->npart; i++)
                        audited |= a->parts[at->part_of[i]].fp.offset >= 0;
                if (!at->id[0] && audited)
                        log_info("topic '%s': its topic id %s is now in the "
                                 "ledger, which had none: this once, the "
                                 "fingerprint of the last audited record "
                                 "alone told whether it was recreated",
                                 at->name, now[t].id);
                snprintf(at->id, sizeof(at->id), "%s", now[t].id);
        }
        return 0;
}

int audit_resume_check(struct audit *a, int *reload, char *errstr,
                       size_t errstr_size)
{
        size_t nt = a->ntopics ? a->ntopics : 1;
        struct audit_probe *pr = calloc(a->nparts ? a->nparts : 1,
                                        sizeof(*pr));
        enum fingerprint_verdict *v = calloc(a->nparts ? a->nparts : 1,
                                             sizeof(*v));
        enum topic_id_verdict *ptv = calloc(a->nparts ? a->nparts : 1,
                                            sizeof(*ptv));
        enum topic_id_verdict *tv = calloc(nt, sizeof(*tv));
        struct audit_topic_id *now = calloc(nt, sizeof(*now));
        uint32_t i;
        size_t t;
        int rc = -1, untruncated = 0;

        *reload = 0;
        if (!pr || !v || !ptv || !tv || !now) {
                snprintf(errstr, errstr_size, "out of memory");
                goto out;
        }
        audit_topic_ids_read(a, now);
        if (audit_resume_ids(a, now, tv, errstr, errstr_size))
                goto out;
        for (t = 0; t < a->ntopics; t++) {
                int32_t p;
                for (p = 0; p < a->topics[t].npart; p++) {
                        pr[a->topics[t].part_of[p]].p.compacted =
                            a->topics[t].compacted;
                        ptv[a->topics[t].part_of[p]] = tv[t];
                }
        }
        for (i = 0; i < a->nparts; i++) {
                struct ledger_part *lp = &a->parts[i];
                rd_kafka_resp_err_t err;
                if (lp->next_offset < 0 ||
                    (lp->fp.offset < 0 &&
                     !(ptv[i] == TOPIC_ID_CHANGED && lp->next_offset > 0)))
                        continue;
                err = rd_kafka_query_watermark_offsets(
                    audit_rk_of(a, lp->topic), lp->topic, lp->partition,
                    &pr[i].p.lo, &pr[i].p.hi, AUDIT_META_TIMEOUT_MS);
                if (err) {
                        snprintf(errstr, errstr_size,
                                 "cannot read watermarks of %s [%d]: %s",
                                 lp->topic, (int)lp->partition,
                                 rd_kafka_err2str(err));
                        goto out;
                }
                /* A new topic id needs no record read back. */
                pr[i].want = ptv[i] != TOPIC_ID_CHANGED &&
                             pr[i].p.lo <= lp->fp.offset &&
                             lp->fp.offset < pr[i].p.hi;
        }
        if (audit_probe_fetch(a, pr, errstr, errstr_size))
                goto out;
        for (i = 0; i < a->nparts; i++) {
                struct ledger_part *lp = &a->parts[i];
                if (ptv[i] == TOPIC_ID_CHANGED) {
                        /* Said once for the topic (audit_resume_ids). */
                        v[i] = lp->next_offset >= 0 && (lp->fp.offset >= 0 ||
                                                        lp->next_offset > 0)
                                   ? fingerprint_with_topic_id(ptv[i], FP_NONE)
                                   : FP_NONE;
                        continue;
                }
                if (lp->next_offset < 0 || lp->fp.offset < 0) {
                        v[i] = FP_NONE;
                        continue;
                }
                if (pr[i].want && !pr[i].resolved) {
                        /* Held back (an open transaction, a slow
                         * broker): no verdict, resume as before. */
                        log_warn("%s [%d]: could not read offset %lld "
                                 "again within %d ms: resuming without "
                                 "checking that the log is the one the "
                                 "ledger knows",
                                 lp->topic, (int)lp->partition,
                                 (long long)lp->fp.offset,
                                 AUDIT_RESUME_FETCH_MS);
                        v[i] = FP_NONE;
                        continue;
                }
                v[i] = fingerprint_check(&lp->fp, lp->next_offset, &pr[i].p);
                if (fingerprint_verdict_new_log(v[i])) {
                        /* Truncated under the ledger (an unclean leader
                         * election), then maybe written on: the same log
                         * up to a batch the ledger remembers. */
                        int r = audit_trunc_locate(a, lp, pr[i].p.hi,
                                                   "fingerprint", errstr,
                                                   errstr_size);
                        if (r < 0)
                                goto out;
                        if (r > 0) {
                                v[i] = FP_NONE;
                                untruncated = 1;
                                continue;
                        }
                        /* The same topic id: rewritten below the record,
                         * truncated deeper than the ledger remembers. */
                        v[i] = fingerprint_with_topic_id(ptv[i], v[i]);
                }
                if (fingerprint_verdict_new_log(v[i])) {
                        log_warn("%s [%d]: the last audited record (offset "
                                 "%lld) is %s; the log now spans "
                                 "%lld..%lld, the ledger expected offset "
                                 "%lld next: %s",
                                 lp->topic, (int)lp->partition,
                                 (long long)lp->fp.offset,
                                 !pr[i].want      ? "outside the log"
                                 : !pr[i].p.found ? "gone"
                                                  : "another record",
                                 (long long)pr[i].p.lo, (long long)pr[i].p.hi,
                                 (long long)lp->next_offset,
                                 fingerprint_verdict_name(v[i]));
                } else if (v[i] == FP_REWIND) {
                        log_warn("%s [%d]: the log now ends at %lld, below "
                                 "the ledger's next offset %lld, after the "
                                 "last audited record (still there): only "
                                 "transaction markers were lost; resuming "
                                 "at %lld",
                                 lp->topic, (int)lp->partition,
                                 (long long)pr[i].p.hi,
                                 (long long)lp->next_offset,
                                 (long long)pr[i].p.hi);
                        lp->next_offset = pr[i].p.hi;
                        lp->dirty = 1;
                } else if (v[i] == FP_COMPACTED) {
                        log_info("%s [%d]: the last audited record (offset "
                                 "%lld) was compacted away: resuming",
                                 lp->topic, (int)lp->partition,
                                 (long long)lp->fp.offset);
                }
        }
        /* What was taken back, written before anything is read. */
        if (untruncated && audit_commit(a, clock_wall_ms())) {
                snprintf(errstr, errstr_size,
                         "cannot write the truncation to the ledger");
                goto out;
        }
        for (t = 0; t < a->ntopics; t++) {
                int32_t p;
                int any = 0;
                char detail[64 + 2 * LEDGER_TOPIC_ID_MAX];
                for (p = 0; p < a->topics[t].npart; p++)
                        any |= fingerprint_verdict_new_log(
                            v[a->topics[t].part_of[p]]);
                if (!any)
                        continue;
                /* Ids are base64 (topic_id_valid()): nothing to escape. */
                snprintf(detail, sizeof(detail),
                         "{\"how\":\"topic id\",\"topic_id\":\"%s\","
                         "\"topic_id_was\":\"%s\"}",
                         now[t].id, a->topics[t].id);
                if (audit_incarnate(a, t, pr, v,
                                    tv[t] == TOPIC_ID_CHANGED ? detail : NULL,
                                    errstr, errstr_size))
                        goto out;
                *reload = 1;
        }
        if (audit_resume_ids_put(a, now, errstr, errstr_size))
                goto out;
        rc = 0;
out:
        free(pr);
        free(v);
        free(ptv);
        free(tv);
        free(now);
        return rc;
}
