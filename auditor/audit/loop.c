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
/* Records per chunk of a batch handed to a thread: small enough that the
 * consumer thread seldom waits for the first one, and that its parsed
 * records are still in cache when it classifies them. */
#define AUDIT_CHUNK 256
/* The consumer thread starts loading the id window's filter block this
 * many records ahead of the one it classifies (a cache miss each). */
#define AUDIT_PREFETCH_AHEAD 8

/*
 * One job of the pool (pool.h): parse the batch's records into recs, and
 * destroy the previous batch's messages (fingerprinted already).  Only
 * audit_record_parse() and rd_kafka_message_destroy() run on the helpers.
 */
struct audit_batch {
        struct audit *a;
        rd_kafka_message_t **msgs;
        struct audit_rec *recs;
        size_t n;
        rd_kafka_message_t **old;
};

static void audit_batch_chunk(void *opaque, size_t b, size_t e)
{
        struct audit_batch *jb = opaque;
        size_t i;

        for (i = b; i < e; i++)
                if (i < jb->n)
                        audit_record_parse(jb->a, jb->msgs[i], &jb->recs[i]);
                else
                        rd_kafka_message_destroy(jb->old[i - jb->n]);
}

static unsigned audit_threads(const struct audit *a)
{
        long cores;

        if (a->conf.threads)
                return a->conf.threads;
        /* One core is librdkafka's broker thread's: on 2 cores a helper
         * only takes CPU from it and from the consumer (BENCHMARKS.md,
         * section 1: 1 -> 2 threads x0.99 with ids, x0.83 without). */
        cores = sysconf(_SC_NPROCESSORS_ONLN) - 1;
        return cores < 1 ? 1 : cores > AUDIT_THREADS_MAX
                                   ? AUDIT_THREADS_MAX
                                   : (unsigned)cores;
}

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
int audit_commit(struct audit *a, int64_t now)
{
        char errstr[512];
        int64_t us = 0;

        audit_report_events(a);
        /* --group: the state and offsets in Kafka first; the ledger is
         * this member's evidence store.  A failure there is fatal (said
         * by group.c; the loop stops at audit_group_failed()). */
        if (a->grp && audit_group_commit(a, errstr, sizeof(errstr)))
                return -1;
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
        if (!a->grp &&
            now - a->last_kafka_commit_ms >= a->conf.kafka_commit_interval_ms) {
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
        rd_kafka_message_t **msgs, **old;
        struct audit_rec *recs;
        struct audit_batch jb;
        size_t nold = 0;
        int fatal = 0, rc = -1;
        uint32_t i;

        msgs = malloc(2 * AUDIT_BATCH_MAX * sizeof(*msgs));
        recs = malloc(AUDIT_BATCH_MAX * sizeof(*recs));
        if (!msgs || !recs) {
                free(msgs);
                free(recs);
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        old = msgs + AUDIT_BATCH_MAX;
        a->pool = audit_pool_new(audit_threads(a) - 1, errstr, errstr_size);
        if (!a->pool) {
                free(msgs);
                free(recs);
                return -1;
        }
        jb.a = a;
        jb.recs = recs;
        for (i = 0; i < a->nparts; i++)
                if (!a->conf.follow && a->parts[i].next_offset >= a->rt[i].end)
                        audit_mark_done(a, &a->parts[i]);

        while (!fatal && (!a->conf.run || *a->conf.run)) {
                rd_kafka_message_t **swap;
                ssize_t n, k;
                int64_t now;
                int pooled;

                if (a->conf.follow && a->conf.drain && *a->conf.drain &&
                    audit_drain(a, errstr, errstr_size)) {
                        fatal = 1;
                        break;
                }
                if (!a->conf.follow && audit_all_done(a))
                        break;
                if (audit_group_failed(a, errstr, errstr_size)) {
                        fatal = 1;
                        break;
                }
                if (a->commit_failing) {
                        /* Hold the batch: nothing is consumed until the
                         * ledger takes it. */
                        sleep(1);
                        audit_commit(a, clock_wall_ms());
                        audit_publish(a, clock_wall_ms());
                        continue;
                }
                /* The last job (freeing the batch before it, in the
                 * array msgs points at now) ends before msgs and jb are
                 * reused. */
                audit_pool_finish(a->pool);
                n = a->grp ? audit_group_consume(a, 100, msgs,
                                                 AUDIT_BATCH_MAX)
                           : rd_kafka_consume_batch_queue(a->rkqu, 100, msgs,
                                                          AUDIT_BATCH_MAX);
                if (n < 0)
                        n = 0;
                now = clock_wall_ms();
                dedup_tracker_begin(a->tr, now);
                /* The helpers parse this batch ahead of the verdicts
                 * below, which stay on this thread in the batch's order
                 * (each partition's order), and destroy the last one. */
                jb.msgs = msgs;
                jb.n = (size_t)n;
                jb.old = old;
                pooled = !audit_pool_start(a->pool, audit_batch_chunk, &jb,
                                           (size_t)n + nold, AUDIT_CHUNK,
                                           (size_t)n);
                if (!pooled)
                        for (k = 0; k < (ssize_t)nold; k++)
                                rd_kafka_message_destroy(old[k]);
                nold = 0;
                for (k = 0; k < n && !fatal; k++) {
                        if (pooled) {
                                audit_pool_wait(a->pool, (size_t)k + 1);
                                if (k + AUDIT_PREFETCH_AHEAD < n &&
                                    audit_pool_done(a->pool,
                                                    (size_t)k +
                                                        AUDIT_PREFETCH_AHEAD))
                                        audit_record_prefetch(
                                            a, &recs[k + AUDIT_PREFETCH_AHEAD]);
                        }
                        audit_message(a, msgs[k], pooled ? &recs[k] : NULL,
                                      now, &fatal, errstr, errstr_size);
                }
                /* Every record parsed (some may be left after a fatal
                 * error); the helpers may still be freeing the last
                 * batch: the next audit_pool_start() waits for that, so
                 * it overlaps this thread's commit and the next poll. */
                audit_pool_wait(a->pool, (size_t)n);
                if (n > 0)
                        audit_fingerprint_batch(a, msgs, (size_t)n);
                /* Destroyed by the next job, or at the end. */
                swap = old;
                old = msgs;
                msgs = swap;
                nold = (size_t)n;
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
                if (!fatal && audit_group_failed(a, errstr, errstr_size))
                        fatal = 1;
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
                if (a->conf.follow && !a->grp &&
                    a->conf.metadata_refresh_ms > 0 &&
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
        if (!a->grp)
                audit_kafka_commit(a);
        audit_progress(a, clock_wall_ms(), 1);
        if (!a->conf.follow && !audit_all_done(a)) {
                snprintf(errstr, errstr_size,
                         "interrupted before the end of the scan");
                goto out;
        }
        rc = 0;
out:
        audit_pool_free(a->pool);
        a->pool = NULL;
        while (nold > 0)
                rd_kafka_message_destroy(old[--nold]);
        free(msgs < old ? msgs : old);
        free(recs);
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
