/*
 * trunc_detect.c - a partition's log truncated under the audit (an
 * unclean leader election elected a replica that lacked records the
 * audit had read): how it shows, and where the log diverged.
 *
 * It shows as a fetch position past the new log end (offset out of
 * range, record.c -> parts.c -> audit_trunc_beyond(), noted by
 * trunc_note.c) while the audit runs, or as the last audited record gone or another one when it
 * resumes (resume.c -> audit_trunc_locate()).  Both come here: the
 * fingerprints of the last record of each committed batch
 * (../ledger/ledger_trunc.h) are read back newest first, below the new log end,
 * with a consumer of its own, until one is still there: the log is the
 * same up to it, so the divergence point D is the next offset (at worst
 * a batch early: the records between are read and audited again, and
 * count as before).  Then trunc_unaudit.c takes back what was accepted
 * from D on.  Nothing found (a topic recreated, or a truncation deeper
 * than the ledger keeps): not a truncation; the caller goes on as before
 * (resume.c starts a new incarnation).
 *
 * A third way in: librdkafka >= 2.1 validates each fetch position's
 * leader epoch after a leader change (KIP-320) and, under
 * auto.offset.reset=error, reports a truncation as __LOG_TRUNCATION
 * (record.c -> audit_trunc_kip320()), also when the new leader's log has
 * grown past the position again.  The divergence point is then found the
 * same way, below the log end.  Debian's 2.0.2 has no such check: there
 * only the two other ways show it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/clock.h"
#include "../../base/log.h"
#include "../ledger/ledger_trunc.h"
#include "internal.h"

/* How long one record may take to read back. */
#define AUDIT_TRUNC_PROBE_MS 10000
/* Fingerprints read back at most per truncation: the newest batches are
 * the likely ones, and each costs a fetch. */
#define AUDIT_TRUNC_PROBES 64

/*
 * Reads the record at offset of lp with the probe consumer: *found 1 and
 * its fingerprint in out, or *found 0 when the log holds no record there
 * (past its end, or the next record is further on).  Returns 0, or -1
 * with errstr (not read in time).
 */
static int trunc_probe_read(struct audit *a, const struct ledger_part *lp,
                            int64_t offset, struct fingerprint *out,
                            int *found, char *errstr, size_t errstr_size)
{
        struct audit_trunc *t = a->trunc;
        rd_kafka_topic_partition_list_t *l;
        int64_t deadline = clock_mono_us() + AUDIT_TRUNC_PROBE_MS * 1000LL;
        rd_kafka_resp_err_t err;
        int done = 0;

        *found = 0;
        if (!t->probe) {
                rd_kafka_conf_t *c = rd_kafka_conf_dup(t->kconf);
                t->probe = c ? rd_kafka_new(RD_KAFKA_CONSUMER, c, errstr,
                                            errstr_size)
                             : NULL;
                if (!t->probe) {
                        if (c)
                                rd_kafka_conf_destroy(c);
                        else
                                snprintf(errstr, errstr_size, "out of memory");
                        return -1;
                }
        }
        l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, lp->topic, lp->partition)
            ->offset = offset;
        err = rd_kafka_assign(t->probe, l);
        rd_kafka_topic_partition_list_destroy(l);
        if (err) {
                snprintf(errstr, errstr_size, "cannot assign %s [%d]: %s",
                         lp->topic, (int)lp->partition, rd_kafka_err2str(err));
                return -1;
        }
        while (!done && clock_mono_us() < deadline) {
                rd_kafka_message_t *m = rd_kafka_consumer_poll(t->probe, 100);
                if (!m)
                        continue;
                if (!m->err && m->offset >= offset) {
                        *found = m->offset == offset;
                        if (*found)
                                audit_fingerprint_msg(m, out);
                        done = 1;
                } else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF ||
                           m->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE ||
                           m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET) {
                        done = 1; /* nothing at or after it */
                }
                rd_kafka_message_destroy(m);
        }
        rd_kafka_assign(t->probe, NULL);
        if (!done) {
                snprintf(errstr, errstr_size,
                         "%s [%d]: could not read offset %lld again within "
                         "%d ms",
                         lp->topic, (int)lp->partition, (long long)offset,
                         AUDIT_TRUNC_PROBE_MS);
                return -1;
        }
        return 0;
}

struct trunc_search {
        struct audit *a;
        const struct ledger_part *lp;
        struct fingerprint match; /* offset -1: none yet */
        int probes;
        char *errstr;
        size_t errstr_size;
};

/* ledger_trunc_fp_cb: is this batch's last record still in the log? */
static int trunc_search_fp(void *opaque, const struct fingerprint *fp)
{
        struct trunc_search *s = opaque;
        struct fingerprint now;
        int found;

        /* Below where this process took the part over, another one
         * accepted the records: the ledger's runs there are not theirs. */
        if (s->probes++ >= AUDIT_TRUNC_PROBES ||
            fp->offset + 1 < s->a->rt[s->lp->part].trunc_floor)
                return 1;
        if (trunc_probe_read(s->a, s->lp, fp->offset, &now, &found, s->errstr,
                             s->errstr_size))
                return -1;
        if (found && fingerprint_equal(&now, fp)) {
                s->match = *fp;
                return 1;
        }
        return 0;
}

int audit_trunc_locate(struct audit *a, struct ledger_part *lp, int64_t hi,
                       const char *how, char *errstr, size_t errstr_size)
{
        struct trunc_search s = {a, lp,     {-1, -1, 0, 0},
                                 0, errstr, errstr_size};
        char err[512];

        if (!a->trunc)
                return 0;
        if (ledger_trunc_fps(a->lg, lp, hi, trunc_search_fp, &s, err,
                             sizeof(err))) {
                /* A record that cannot be read back: say so, and leave
                 * the log as it is judged without this. */
                log_warn("%s [%d]: cannot tell where the log diverged from "
                         "the one the ledger knows: %s",
                         lp->topic, (int)lp->partition, err);
                return 0;
        }
        if (s.match.offset < 0)
                return 0;
        if (s.match.offset + 1 >= lp->next_offset) {
                /* Every record audited is still there: only what follows
                 * the last one (transaction markers) is gone. */
                if (lp->next_offset > hi) {
                        lp->next_offset = hi;
                        lp->dirty = 1;
                }
                return 1;
        }
        return audit_trunc_unaudit(a, lp, s.match.offset + 1, &s.match, hi,
                                   how, errstr, errstr_size)
                   ? -1
                   : 1;
}

/*
 * Fetches lp again from its next offset: a seek, or, where it failed,
 * lp assigned again alone.  After an offset out of range under
 * auto.offset.reset=error librdkafka 2.0.2 has stopped fetching the
 * partition, and a seek of a stopped partition fails (its error is in
 * the list, not returned).
 */
static int trunc_restart(struct audit *a, const struct ledger_part *lp,
                         char *errstr, size_t errstr_size)
{
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(
            1);
        rd_kafka_t *rk = audit_rk_of(a, lp->topic);
        rd_kafka_error_t *error;

        rd_kafka_topic_partition_list_add(l, lp->topic, lp->partition)
            ->offset = lp->next_offset;
        error = rd_kafka_seek_partitions(rk, l, AUDIT_META_TIMEOUT_MS);
        if (!error && l->elems[0].err) {
                l->elems[0].err = RD_KAFKA_RESP_ERR_NO_ERROR;
                l->elems[0].offset = lp->next_offset;
                error = rd_kafka_incremental_unassign(rk, l);
                if (!error)
                        error = rd_kafka_incremental_assign(rk, l);
        }
        rd_kafka_topic_partition_list_destroy(l);
        if (error) {
                snprintf(errstr, errstr_size, "cannot fetch %s [%d] again: %s",
                         lp->topic, (int)lp->partition,
                         rd_kafka_error_string(error));
                rd_kafka_error_destroy(error);
                return -1;
        }
        return 0;
}

int audit_trunc_run(struct audit *a, int64_t now, audit_commit_fn *commit,
                    char *errstr, size_t errstr_size)
{
        struct audit_trunc *t = a->trunc;
        size_t i;
        int any = 0;

        if (!t)
                return 0;
        for (i = 0; i < t->nbeyond && i < a->nparts; i++)
                any |= t->beyond[i] >= 0;
        if (!any)
                return 0;
        /* What was read before it first, in its own commit: the
         * truncation is taken back from a committed state. */
        if (commit(a, now))
                return 0; /* the ledger fails: tried again later */
        for (i = 0; i < t->nbeyond && i < a->nparts; i++) {
                struct ledger_part *lp = &a->parts[i];
                int64_t hi = t->beyond[i];
                int r;

                if (hi < 0)
                        continue;
                t->beyond[i] = -1;
                r = audit_trunc_locate(a, lp, hi, t->how[i], errstr,
                                       errstr_size);
                if (r < 0)
                        return -1;
                if (r == 0) {
                        /* Another topic id: say so, not a guess. */
                        if (audit_topic_ids_check(a, lp->topic, errstr,
                                                  errstr_size))
                                return -1;
                        snprintf(errstr, errstr_size,
                                 "%s [%d]: the log was truncated (it ends at "
                                 "%lld, the ledger's next offset is %lld), "
                                 "and no "
                                 "batch the ledger remembers is still there "
                                 "(the topic was recreated, or the log lost "
                                 "more than the last %d offsets): the "
                                 "ledger is left as it is, with its history; "
                                 "start eosaudit again on it and it begins "
                                 "a new incarnation of the topic, keeping "
                                 "this one as evidence",
                                 lp->topic, (int)lp->partition, (long long)hi,
                                 (long long)lp->next_offset,
                                 LEDGER_TRUNC_KEEP);
                        return -1;
                }
                /* A scan ends where the log ends now. */
                if (!a->conf.follow && a->rt[i].end > hi)
                        a->rt[i].end = hi;
                if (trunc_restart(a, lp, errstr, errstr_size))
                        return -1;
                a->rt[i].eof = 0;
                a->rt[i].state_dirty = 1; /* --group: its state record */
                if (!a->conf.follow && lp->next_offset >= a->rt[i].end)
                        audit_mark_done(a, lp);
        }
        /* The rewound pairs, the new next offsets and the truncations in
         * one transaction; a failure is retried as any commit. */
        commit(a, now);
        return 0;
}
