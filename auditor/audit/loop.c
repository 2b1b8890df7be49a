/*
 * loop.c - audit_run(): the consumer loop, its ledger commits (and the
 * Kafka offset commits for lag tools) and progress.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../base/clock.h"
#include "../../base/log.h"
#include "internal.h"

#define AUDIT_BATCH_MAX 10000 /* messages taken from the queue at once */

static void audit_report_events(struct audit *a)
{
        const struct dedup_event *ev;
        size_t n, i;

        ev = dedup_tracker_events(a->tr, &n);
        for (i = a->events_seen; i < n; i++) {
                const struct ledger_part *lp = &a->parts[ev[i].part];
                if (ev[i].kind == DEDUP_KIND_EXPIRED)
                        log_info("%s [%d]: producer '%.*s' idle for longer "
                                 "than the TTL: its state is expired",
                                 lp->topic, (int)lp->partition,
                                 (int)ev[i].producer_len, ev[i].producer);
                if (a->conf.on_event)
                        a->conf.on_event(a->conf.opaque, lp->topic,
                                         lp->partition, &ev[i]);
        }
        a->events_seen = n;
}

static void audit_kafka_commit(struct audit *a)
{
        rd_kafka_topic_partition_list_t *l =
            rd_kafka_topic_partition_list_new((int)a->nparts);
        rd_kafka_resp_err_t err;
        uint32_t i;

        /* Nowhere to go: it would hold up the close (refusal.c). */
        if (a->group_refused)
                goto out;
        for (i = 0; i < a->nparts; i++)
                if (a->parts[i].next_offset >= 0)
                        rd_kafka_topic_partition_list_add(
                            l, a->parts[i].topic, a->parts[i].partition)
                            ->offset = a->parts[i].next_offset;
        /* Only for lag visibility: failure changes nothing here. */
        err = rd_kafka_commit(a->rk, l, 1);
        if (err)
                log_debug("kafka offset commit: %s", rd_kafka_err2str(err));
out:
        rd_kafka_topic_partition_list_destroy(l);
}

/* Commits the batch; on failure keeps it and retries later. */
static int audit_commit(struct audit *a, int64_t now)
{
        char errstr[512];
        int64_t us = 0;

        audit_report_events(a);
        if (ledger_commit(a->lg, a->tr, a->parts, a->nparts, &us, errstr,
                          sizeof(errstr))) {
                if (!a->commit_failing)
                        log_error("ledger commit failed, pausing the audit "
                                  "until it succeeds: %s",
                                  errstr);
                a->commit_failing = 1;
                return -1;
        }
        if (a->commit_failing)
                log_info("ledger commit succeeded again; the audit resumes");
        a->commit_failing = 0;
        a->events_seen = 0;
        a->uncommitted = 0;
        a->last_commit_ms = now;
        a->stats.commits++;
        a->stats.last_commit_us = us;
        if (a->conf.status) {
                status_hist_observe(&a->view.commit, (double)us / 1e6);
                audit_publish(a, now);
        }
        if (now - a->last_kafka_commit_ms >= a->conf.kafka_commit_interval_ms) {
                audit_kafka_commit(a);
                a->last_kafka_commit_ms = now;
        }
        return 0;
}

static int audit_pending(struct audit *a)
{
        size_t n;
        uint32_t i;

        if (a->uncommitted)
                return 1;
        /* A frontier applied while no record comes changes the flow. */
        if (a->flow && dedup_flow_dirty(a->flow))
                return 1;
        dedup_tracker_events(a->tr, &n);
        if (n)
                return 1;
        for (i = 0; i < a->nparts; i++)
                if (a->parts[i].dirty)
                        return 1;
        return 0;
}

static void audit_progress(struct audit *a, int64_t now, int final)
{
        double secs = (double)(now - a->started_ms) / 1000.0;

        if (!a->conf.progress ||
            (!final && now - a->last_progress_print_ms < 500))
                return;
        a->last_progress_print_ms = now;
        fprintf(stderr,
                "\rscan: %llu records, %u/%u partitions done, %.0f records/s ",
                (unsigned long long)a->stats.records, a->stats.partitions_done,
                a->nparts, secs > 0 ? (double)a->stats.records / secs : 0.0);
        if (final)
                fputc('\n', stderr);
}

int audit_run(struct audit *a, char *errstr, size_t errstr_size)
{
        rd_kafka_message_t **msgs;
        int fatal = 0, rc = -1;
        uint32_t i;

        msgs = malloc(AUDIT_BATCH_MAX * sizeof(*msgs));
        if (!msgs) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        for (i = 0; i < a->nparts; i++)
                if (!a->conf.follow && a->parts[i].next_offset >= a->rt[i].end)
                        audit_mark_done(a, &a->parts[i]);

        while (!fatal && (!a->conf.run || *a->conf.run)) {
                ssize_t n, k;
                int64_t now;

                if (a->conf.follow && a->conf.drain && *a->conf.drain &&
                    audit_drain(a, errstr, errstr_size)) {
                        fatal = 1;
                        break;
                }
                if (!a->conf.follow && audit_all_done(a))
                        break;
                if (a->commit_failing) {
                        /* Hold the batch: nothing is consumed until the
                         * ledger takes it. */
                        sleep(1);
                        audit_commit(a, clock_wall_ms());
                        audit_publish(a, clock_wall_ms());
                        continue;
                }
                n = rd_kafka_consume_batch_queue(a->rkqu, 100, msgs,
                                                 AUDIT_BATCH_MAX);
                now = clock_wall_ms();
                dedup_tracker_begin(a->tr, now);
                for (k = 0; k < n; k++)
                        if (!fatal)
                                audit_message(a, msgs[k], now, &fatal, errstr,
                                              errstr_size);
                if (n > 0)
                        audit_fingerprint_batch(a, msgs, (size_t)n);
                for (k = 0; k < n; k++)
                        rd_kafka_message_destroy(msgs[k]);
                if (!fatal &&
                    access_watch_line(&a->watch, errstr, errstr_size)) {
                        a->refused = 1;
                        fatal = 1;
                }
                if (dedup_tracker_failed(a->tr)) {
                        snprintf(errstr, errstr_size,
                                 "out of memory in the engine");
                        fatal = 1;
                }
                if (fatal)
                        break;
                if (a->flow)
                        audit_flow_poll(a, now);
                if (now - a->last_tick_ms >= 1000) {
                        /* At the head of the log the records' time moves
                         * on with the wall clock: idle live topics confirm
                         * gaps and expire pairs.  It keeps the distance
                         * the last record read had from the wall clock,
                         * so that records written with old timestamps (a
                         * replay) read the same as live ones.  A backlog
                         * still runs on its records' time alone. */
                        if (a->conf.follow && audit_caught_up(a))
                                dedup_tracker_clock_advance(
                                    a->tr, now - a->rec_lag_ms);
                        dedup_tracker_tick(a->tr);
                        a->last_tick_ms = now;
                        if (a->conf.on_tick)
                                a->conf.on_tick(a->conf.opaque, now);
                }
                if (audit_pending(a) &&
                    (a->uncommitted >= a->conf.commit_records ||
                     now - a->last_commit_ms >= a->conf.commit_interval_ms))
                        audit_commit(a, now);
                if (!a->conf.follow)
                        audit_check_stalls(a, now);
                if (a->conf.follow && a->conf.metadata_refresh_ms > 0 &&
                    now - a->last_meta_ms >= a->conf.metadata_refresh_ms &&
                    audit_refresh(a, now, errstr, errstr_size)) {
                        fatal = 1;
                        break;
                }
                if (a->conf.status && now - a->last_publish_ms >= 1000)
                        audit_publish(a, now);
                audit_progress(a, now, 0);
        }
        if (fatal)
                goto out;

        /* The last batch; a complete scan also confirms every open gap. */
        dedup_tracker_begin(a->tr, clock_wall_ms());
        dedup_tracker_tick(a->tr);
        if (!a->conf.follow && audit_all_done(a)) {
                dedup_tracker_confirm_all(a->tr);
                if (a->flow)
                        audit_flow_end(a);
        }
        if (audit_pending(a) && audit_commit(a, clock_wall_ms())) {
                snprintf(errstr, errstr_size,
                         "the last batch could not be written to the ledger; "
                         "it will be audited again on the next run");
                goto out;
        }
        audit_kafka_commit(a);
        audit_progress(a, clock_wall_ms(), 1);
        if (!a->conf.follow && !audit_all_done(a)) {
                snprintf(errstr, errstr_size,
                         "interrupted before the end of the scan");
                goto out;
        }
        rc = 0;
out:
        free(msgs);
        if (rc && a->refused)
                rc = AUDIT_E_ACCESS;
        return rc;
}

struct ledger *audit_ledger(struct audit *a)
{
        return a->lg;
}

void audit_stats_get(const struct audit *a, struct audit_stats *st)
{
        *st = a->stats;
}
