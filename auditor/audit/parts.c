/*
 * parts.c - partition and offset bookkeeping: where each partition
 * starts (and coverage gaps when retention got there first), assignment,
 * pausing finished partitions, the end of a scan and stalls.
 */
#include <stdio.h>

#include "../../base/clock.h"
#include "../../base/log.h"
#include "internal.h"

/* Asks the partition's leader for its low and high watermarks.  A
 * partition just added to its topic can be assigned (serve --group)
 * before this handle's metadata knows it: librdkafka 2.14 then answers
 * __UNKNOWN_PARTITION at once, so the topic's metadata is asked for
 * again, a few times, before that counts as an error. */
static int audit_watermarks(struct audit *a, const struct ledger_part *lp,
                            int64_t *lo, int64_t *hi, char *errstr,
                            size_t errstr_size)
{
        rd_kafka_resp_err_t err;
        int tries = 0;

        for (;;) {
                const struct rd_kafka_metadata *md = NULL;
                rd_kafka_topic_t *rkt;

                rd_kafka_t *rk = audit_rk_of(a, lp->topic);

                err = rd_kafka_query_watermark_offsets(rk, lp->topic,
                                                       lp->partition, lo, hi,
                                                       AUDIT_META_TIMEOUT_MS);
                if (err != RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
                    ++tries > 10)
                        break;
                rkt = rd_kafka_topic_new(rk, lp->topic, NULL);
                if (!rkt)
                        break;
                if (!rd_kafka_metadata(rk, 0, rkt, &md,
                                       AUDIT_META_TIMEOUT_MS) &&
                    md)
                        rd_kafka_metadata_destroy(md);
                rd_kafka_topic_destroy(rkt);
        }

        if (access_line(errstr, errstr_size, err, ACCESS_OP_DESCRIBE_TOPIC,
                        lp->topic, NULL) ||
            access_watch_line(&a->watch, errstr, errstr_size)) {
                a->refused = 1;
                return -1;
        }
        if (err) {
                snprintf(errstr, errstr_size,
                         "cannot read watermarks of %s [%d]: %s", lp->topic,
                         (int)lp->partition, rd_kafka_err2str(err));
                return -1;
        }
        return 0;
}

/*
 * Decides where each part starts: from the ledger, or (never audited)
 * from the log start.  Offsets the ledger expected but retention deleted
 * become a coverage gap.  A log that now ends below the ledger's next
 * offset was truncated: 1 while the loop runs (audit_trunc_beyond()).
 */
int audit_position(struct audit *a, struct ledger_part *lp, char *errstr,
                   size_t errstr_size)
{
        struct audit_rt *rt = &a->rt[lp->part];
        int64_t lo, hi;

        if (audit_watermarks(a, lp, &lo, &hi, errstr, errstr_size))
                return -1;
        rt->end = hi;
        if (lp->next_offset < 0) {
                lp->from_log_start = lo == 0;
                if (dedup_tracker_part_add(a->tr, lp->part, lo == 0)) {
                        snprintf(errstr, errstr_size, "out of memory");
                        return -1;
                }
                lp->next_offset = lo;
                lp->dirty = 1;
        } else if (lp->next_offset < lo) {
                log_warn("%s [%d]: offsets %lld..%lld were deleted by "
                         "retention before they were audited: recording a "
                         "coverage gap; producers keep their state, their "
                         "seqs may jump across it",
                         lp->topic, (int)lp->partition,
                         (long long)lp->next_offset, (long long)(lo - 1));
                lp->coverage_lo = lp->next_offset;
                lp->coverage_hi = lo - 1;
                lp->next_offset = lo;
                lp->from_log_start = 0;
                lp->dirty = 1;
                dedup_tracker_part_rebaseline(a->tr, lp->part);
        } else if (lp->next_offset > hi) {
                /* The log lost records the audit had read (an unclean
                 * leader election): trunc_detect.c. */
                return audit_trunc_beyond(a, lp, hi, errstr, errstr_size);
        }
        rt->last_progress_ms = clock_wall_ms();
        return 0;
}

int audit_assign_list(struct audit *a, rd_kafka_topic_partition_list_t *l,
                      char *errstr, size_t errstr_size)
{
        rd_kafka_topic_partition_list_t *src = audit_cluster_split(a, l);
        rd_kafka_resp_err_t err = rd_kafka_assign(a->rk, l);

        if (!err && src)
                err = rd_kafka_assign(a->rk_src, src);
        if (src)
                rd_kafka_topic_partition_list_destroy(src);
        rd_kafka_topic_partition_list_destroy(l);
        if (err) {
                snprintf(errstr, errstr_size, "cannot assign partitions: %s",
                         rd_kafka_err2str(err));
                return -1;
        }
        return 0;
}

int audit_assign(struct audit *a, char *errstr, size_t errstr_size)
{
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(
            (int)a->nparts);
        uint32_t i;

        for (i = 0; i < a->nparts; i++) {
                if (!a->conf.follow && a->parts[i].next_offset >= a->rt[i].end)
                        continue; /* nothing to scan */
                rd_kafka_topic_partition_list_add(l, a->parts[i].topic,
                                                  a->parts[i].partition)
                    ->offset = a->parts[i].next_offset;
        }
        return audit_assign_list(a, l, errstr, errstr_size);
}

static void audit_pause(struct audit *a, struct ledger_part *lp)
{
        rd_kafka_topic_partition_list_t *l;

        if (a->rt[lp->part].paused)
                return;
        l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, lp->topic, lp->partition);
        rd_kafka_pause_partitions(audit_rk_of(a, lp->topic), l);
        rd_kafka_topic_partition_list_destroy(l);
        a->rt[lp->part].paused = 1;
}

void audit_mark_done(struct audit *a, struct ledger_part *lp)
{
        struct audit_rt *rt = &a->rt[lp->part];

        if (rt->done)
                return;
        rt->done = 1;
        a->stats.partitions_done++;
        audit_pause(a, lp);
}

/* The fetch position fell outside the log: records were deleted. */
int audit_out_of_range(struct audit *a, struct ledger_part *lp, char *errstr,
                       size_t errstr_size)
{
        rd_kafka_topic_partition_list_t *l;
        rd_kafka_error_t *error;
        int rc = audit_position(a, lp, errstr, errstr_size);

        if (rc)
                return rc < 0 ? -1 : 0; /* 1: a truncation, handled later */
        l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, lp->topic, lp->partition)
            ->offset = lp->next_offset;
        error = rd_kafka_seek_partitions(audit_rk_of(a, lp->topic), l,
                                         AUDIT_META_TIMEOUT_MS);
        rd_kafka_topic_partition_list_destroy(l);
        if (error) {
                snprintf(errstr, errstr_size, "cannot seek %s [%d]: %s",
                         lp->topic, (int)lp->partition,
                         rd_kafka_error_string(error));
                rd_kafka_error_destroy(error);
                return -1;
        }
        return 0;
}

/* Scan: a partition at EOF below its start watermark for too long is
 * held back by an open transaction (read_committed stops at the LSO). */
void audit_check_stalls(struct audit *a, int64_t now)
{
        uint32_t i;

        for (i = 0; i < a->nparts; i++) {
                struct audit_rt *rt = &a->rt[i];
                if (rt->done || !rt->eof ||
                    now - rt->last_progress_ms < a->conf.stall_timeout_ms)
                        continue;
                log_warn("%s [%d]: stopped at offset %lld below the start "
                         "high watermark %lld for %lld ms (an open "
                         "transaction?): the rest is not audited",
                         a->parts[i].topic, (int)a->parts[i].partition,
                         (long long)a->parts[i].next_offset,
                         (long long)rt->end,
                         (long long)a->conf.stall_timeout_ms);
                a->stats.partitions_stalled++;
                audit_mark_done(a, &a->parts[i]);
        }
}

/* Every part read to its end (the last fetch said EOF, no record since):
 * no backlog left anywhere. */
int audit_caught_up(const struct audit *a)
{
        uint32_t i;

        for (i = 0; i < a->nparts; i++)
                if (!a->rt[i].eof && a->rt[i].owned)
                        return 0;
        return a->nparts > 0;
}

int audit_all_done(const struct audit *a)
{
        return a->stats.partitions_done == a->nparts;
}

/* Turns a follow-mode audit into a scan up to the watermarks of now. */
int audit_drain(struct audit *a, char *errstr, size_t errstr_size)
{
        uint32_t i;

        a->conf.follow = 0;
        for (i = 0; i < a->nparts; i++) {
                struct ledger_part *lp = &a->parts[i];
                int64_t lo, hi;
                if (audit_watermarks(a, lp, &lo, &hi, errstr, errstr_size))
                        return -1;
                a->rt[i].end = hi;
                if (lp->next_offset >= hi)
                        audit_mark_done(a, lp);
        }
        return 0;
}
