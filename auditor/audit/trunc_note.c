/*
 * trunc_note.c - a log truncated under the audit, as it shows while the
 * audit reads: a fetch position past the new log end (offset out of
 * range: parts.c -> audit_trunc_beyond()) or librdkafka's KIP-320 report
 * (record.c -> audit_trunc_kip320()).  Each is noted per partition here
 * and handled after the batch by trunc_detect.c (audit_trunc_run()); the
 * handler's state (struct audit_trunc, internal.h) is made and freed here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int audit_trunc_init(struct audit *a, const rd_kafka_conf_t *kconf,
                     char *errstr, size_t errstr_size)
{
        struct audit_trunc *t = calloc(1, sizeof(*t));

        if (!t || !(t->kconf = rd_kafka_conf_dup(kconf))) {
                free(t);
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        /* Never a member of the audit's group, never committing. */
        if (rd_kafka_conf_set(t->kconf, "group.id", "eosaudit-trunc-probe",
                              errstr, errstr_size) != RD_KAFKA_CONF_OK ||
            rd_kafka_conf_set(t->kconf, "enable.auto.commit", "false", errstr,
                              errstr_size) != RD_KAFKA_CONF_OK ||
            rd_kafka_conf_set(t->kconf, "enable.partition.eof", "true", errstr,
                              errstr_size) != RD_KAFKA_CONF_OK) {
                rd_kafka_conf_destroy(t->kconf);
                free(t);
                return -1;
        }
        a->trunc = t;
        return 0;
}

void audit_trunc_free(struct audit *a)
{
        struct audit_trunc *t = a->trunc;

        if (!t)
                return;
        if (t->probe) {
                rd_kafka_consumer_close(t->probe);
                rd_kafka_destroy(t->probe);
        }
        if (t->kconf)
                rd_kafka_conf_destroy(t->kconf);
        free(t->beyond);
        free(t->how);
        free(t);
        a->trunc = NULL;
}

/* Notes a truncation of lp (log end hi) for audit_trunc_run(). */
static int trunc_note_beyond(struct audit *a, const struct ledger_part *lp,
                             int64_t hi, const char *how, char *errstr,
                             size_t errstr_size)
{
        struct audit_trunc *t = a->trunc;

        if (lp->part >= t->nbeyond) {
                size_t n = a->parts_cap > lp->part ? a->parts_cap
                                                   : lp->part + 1;
                int64_t *v = realloc(t->beyond, n * sizeof(*v));
                const char **w;
                size_t i;
                if (v)
                        t->beyond = v;
                w = v ? realloc(t->how, n * sizeof(*w)) : NULL;
                if (!w) {
                        snprintf(errstr, errstr_size, "out of memory");
                        return -1;
                }
                t->how = w;
                for (i = t->nbeyond; i < n; i++) {
                        v[i] = -1;
                        w[i] = NULL;
                }
                t->nbeyond = n;
        }
        t->beyond[lp->part] = hi;
        t->how[lp->part] = how;
        return 1;
}

int audit_trunc_signal(rd_kafka_resp_err_t err)
{
#if RD_KAFKA_VERSION >= 0x020100ff
        return err == RD_KAFKA_RESP_ERR__LOG_TRUNCATION;
#else
        (void)err;
        return 0;
#endif
}

int audit_trunc_kip320(struct audit *a, struct ledger_part *lp, char *errstr,
                       size_t errstr_size)
{
        int64_t lo, hi;
        rd_kafka_resp_err_t err;

        if (!a->trunc)
                return 0;
        err = rd_kafka_query_watermark_offsets(audit_rk_of(a, lp->topic),
                                               lp->topic, lp->partition, &lo,
                                               &hi, AUDIT_META_TIMEOUT_MS);
        if (err) {
                snprintf(errstr, errstr_size,
                         "cannot read watermarks of %s [%d]: %s", lp->topic,
                         (int)lp->partition, rd_kafka_err2str(err));
                return -1;
        }
        return trunc_note_beyond(a, lp, hi, "KIP-320", errstr, errstr_size) < 0
                   ? -1
                   : 0;
}

int audit_trunc_beyond(struct audit *a, struct ledger_part *lp, int64_t hi,
                       char *errstr, size_t errstr_size)
{
        /* While the loop runs: handled after the batch, once what was
         * read before it is committed (audit_trunc_run()). */
        if (a->trunc && a->started_ms)
                return trunc_note_beyond(a, lp, hi, "offset out of range",
                                         errstr, errstr_size);
        snprintf(errstr, errstr_size,
                 "%s [%d]: the ledger expects offset %lld but the partition "
                 "ends at %lld, and the ledger holds no record of this log "
                 "that is still there to tell where they diverged; nothing "
                 "was changed: the ledger keeps its history, and a start "
                 "with a ledger that has a fingerprint of this partition "
                 "(any eosaudit since schema 4) begins a new incarnation "
                 "of the topic, keeping this one as evidence",
                 lp->topic, (int)lp->partition, (long long)lp->next_offset,
                 (long long)hi);
        return -1;
}
