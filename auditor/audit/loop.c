/*
 * loop.c - audit_run(): the consumer loop, its ledger commits (and the
 * Kafka offset commits for lag tools) and progress.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/clock.h"
#include "../../base/log.h"
#include "internal.h"

/* Messages taken from the queue at once.  Small enough that a batch's
 * messages are still in cache when they are classified, fingerprinted and
 * destroyed: with 10,000, each of those passes missed the cache on every
 * message (2 x 10,000 messages and their headers, ~10 MB, held at once),
 * and a 5M-record scan took a quarter more CPU (BENCHMARKS.md, section 1). */
#define AUDIT_BATCH_MAX 1000
/* Records per chunk of a batch handed to a thread: small enough that the
 * consumer thread seldom waits for the first one, and that its parsed
 * records are still in cache when it classifies them. */
#define AUDIT_CHUNK 256
/* The consumer thread starts loading the id window's filter block this
 * many records ahead of the one it classifies (a cache miss each). */
#define AUDIT_PREFETCH_AHEAD 8
/* Batches read and parsed ahead while a ledger commit runs: up to 40,000
 * records (their messages held), and no batch more once they hold
 * AUDIT_AHEAD_BYTES, which is what bounds it with 100-byte records.
 * The bytes count each record as settings.c's queue cap does, plus the
 * ~300 bytes of its message and headers that the cap leaves out: so the
 * read-ahead holds at most about as much as librdkafka's queue (8 MiB)
 * plus one batch, whatever the records' size.  (32 MiB hid a commit
 * better, 0.2-0.4 s of a 5M scan, for 80 MB more RSS.) */
#define AUDIT_AHEAD_MAX 40
#define AUDIT_AHEAD_BYTES (8u << 20)
#define AUDIT_MSG_OVERHEAD 300u

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
        return cores < 1                   ? 1
               : cores > AUDIT_THREADS_MAX ? AUDIT_THREADS_MAX
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

/* What follows a ledger commit, on the consumer thread: counters,
 * status, the Kafka offsets; or, on failure, the pause. */
static int audit_commit_end(struct audit *a, int64_t now, int rc, int64_t us,
                            const char *errstr)
{
        if (rc) {
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
        if (a->mode->after_commit)
                a->mode->after_commit(a, now);
        return 0;
}

/* Commits the batch; on failure keeps it and retries later. */
int audit_commit(struct audit *a, int64_t now)
{
        char errstr[512];
        int64_t us = 0;
        int rc;

        audit_report_events(a);
        /* The mode's part first (--group: the state and offsets in Kafka;
         * the ledger is this member's evidence store).  A failure there
         * is fatal (said by the mode; the loop stops at
         * audit_mode_failed()), or the batch goes into the next commit. */
        if (a->mode->before_commit &&
            a->mode->before_commit(a, errstr, sizeof(errstr)))
                return -1;
        rc = ledger_commit(a->lg, a->tr, a->parts, a->nparts, &us, errstr,
                           sizeof(errstr));
        return audit_commit_end(a, now, rc, us, errstr);
}

static void *audit_commit_thread(void *opaque)
{
        struct audit *a = opaque;

        a->commit_rc = ledger_commit(a->lg, a->tr, a->parts, a->nparts,
                                     &a->commit_us, a->commit_err,
                                     sizeof(a->commit_err));
        /* Only tells audit_read_ahead() to stop; the join orders the
         * rest. */
        __atomic_store_n(&a->commit_done, 1, __ATOMIC_RELEASE);
        return NULL;
}

/*
 * Starts the commit on a thread of its own, so that it overlaps this
 * thread's poll and parse of the next batch (the SQLite writes, the WAL
 * checkpoints and the sorting of closed id generations were a quarter of
 * this thread's time).  The commit is the same consistent cut as one
 * made here: nothing it reads (tracker, parts, flow, ledger handle)
 * changes until audit_commit_join(); pthread_create/join order the two
 * threads' accesses.  Without a thread, it commits here.
 */
static void audit_commit_start(struct audit *a, int64_t now)
{
        /* A mode with its own part of the commit (--group: the Kafka
         * transaction, and a rebalance callback may commit from inside
         * the next poll): here, and now. */
        if (a->mode->before_commit) {
                audit_commit(a, now);
                return;
        }
        audit_report_events(a);
        a->commit_now = now;
        a->commit_us = 0;
        a->commit_err[0] = '\0';
        a->commit_done = 0;
        if (pthread_create(&a->commit_thr, NULL, audit_commit_thread, a)) {
                audit_commit_thread(a);
                audit_commit_end(a, now, a->commit_rc, a->commit_us,
                                 a->commit_err);
                return;
        }
        a->commit_inflight = 1;
}

/* Waits for the commit in flight, if any, and finishes it here. */
static void audit_commit_join(struct audit *a)
{
        if (!a->commit_inflight)
                return;
        pthread_join(a->commit_thr, NULL);
        a->commit_inflight = 0;
        audit_commit_end(a, a->commit_now, a->commit_rc, a->commit_us,
                         a->commit_err);
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

/*
 * A batch read and parsed while a commit ran (audit_read_ahead()), to be
 * classified after it, in order.  Each slot owns its arrays once
 * allocated; taking a batch out swaps them with the loop's free ones.
 */
struct audit_ahead {
        rd_kafka_message_t **msgs;
        struct audit_rec *recs;
        size_t n;
        size_t bytes; /* its messages, as AUDIT_AHEAD_BYTES counts */
        int64_t now;  /* when it was read */
};

/* What a read-ahead message holds, as AUDIT_AHEAD_BYTES counts it. */
static size_t audit_msg_bytes(const rd_kafka_message_t *m)
{
        return m->len + m->key_len + AUDIT_MSG_OVERHEAD;
}

/*
 * While the commit runs on its thread, reads (without waiting) and
 * parses further batches into the free slots after head, until the
 * commit ends, the slots are full, they hold AUDIT_AHEAD_BYTES or
 * nothing is ready.  Only scans without a flow audit: there, reading
 * earlier changes nothing (each partition's end is fixed at the start),
 * where a live audit or the flow's pacing pause partitions by what was
 * classified.
 */
static void audit_read_ahead(struct audit *a, struct audit_ahead *ahead,
                             size_t head, size_t *nahead)
{
        size_t held = 0, i;

        /* What the slots read earlier (not yet classified) hold. */
        for (i = 0; i < *nahead; i++)
                held += ahead[(head + i) % AUDIT_AHEAD_MAX].bytes;
        while (*nahead < AUDIT_AHEAD_MAX && held < AUDIT_AHEAD_BYTES &&
               !__atomic_load_n(&a->commit_done, __ATOMIC_ACQUIRE)) {
                struct audit_ahead *ah =
                    &ahead[(head + *nahead) % AUDIT_AHEAD_MAX];
                ssize_t n, k;

                if (!ah->msgs)
                        ah->msgs = malloc(AUDIT_BATCH_MAX * sizeof(*ah->msgs));
                if (!ah->recs)
                        ah->recs = malloc(AUDIT_BATCH_MAX * sizeof(*ah->recs));
                if (!ah->msgs || !ah->recs)
                        return; /* no read-ahead, nothing lost */
                n = rd_kafka_consume_batch_queue(a->rkqu, 0, ah->msgs,
                                                 AUDIT_BATCH_MAX);
                if (n <= 0)
                        return;
                ah->now = clock_wall_ms();
                ah->n = (size_t)n;
                ah->bytes = 0;
                for (k = 0; k < n; k++) {
                        audit_record_parse(a, ah->msgs[k], &ah->recs[k]);
                        ah->bytes += audit_msg_bytes(ah->msgs[k]);
                }
                held += ah->bytes;
                (*nahead)++;
        }
}

int audit_run(struct audit *a, char *errstr, size_t errstr_size)
{
        rd_kafka_message_t **msgs, **old;
        struct audit_rec *recs;
        struct audit_batch jb;
        struct audit_ahead ahead[AUDIT_AHEAD_MAX];
        size_t nold = 0, ahead_head = 0, nahead = 0;
        int fatal = 0, rc = -1;
        uint32_t i;

        memset(ahead, 0, sizeof(ahead));
        msgs = malloc(AUDIT_BATCH_MAX * sizeof(*msgs));
        old = malloc(AUDIT_BATCH_MAX * sizeof(*old));
        recs = malloc(AUDIT_BATCH_MAX * sizeof(*recs));
        if (!msgs || !old || !recs) {
                free(msgs);
                free(old);
                free(recs);
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        a->pool = audit_pool_new(audit_threads(a) - 1, errstr, errstr_size);
        if (!a->pool) {
                free(msgs);
                free(old);
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
                struct audit_rec *rswap;
                ssize_t n, k;
                int64_t now;
                int pooled, preparsed = 0;

                if (a->conf.follow && a->conf.drain && *a->conf.drain)
                        audit_commit_join(a);
                if (a->conf.follow && a->conf.drain && *a->conf.drain &&
                    audit_drain(a, errstr, errstr_size)) {
                        fatal = 1;
                        break;
                }
                if (!a->conf.follow && audit_all_done(a))
                        break;
                if (audit_mode_failed(a, errstr, errstr_size)) {
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
                if (nahead) {
                        /* A batch read while the last commit ran: its
                         * arrays change places with the free ones. */
                        struct audit_ahead *ah = &ahead[ahead_head];
                        swap = msgs;
                        msgs = ah->msgs;
                        ah->msgs = swap;
                        rswap = recs;
                        recs = ah->recs;
                        ah->recs = rswap;
                        n = (ssize_t)ah->n;
                        now = ah->now;
                        ahead_head = (ahead_head + 1) % AUDIT_AHEAD_MAX;
                        nahead--;
                        preparsed = 1;
                } else {
                        n = a->mode->consume(a, 100, msgs, AUDIT_BATCH_MAX);
                        if (n < 0)
                                n = 0;
                        now = clock_wall_ms();
                }
                /* The helpers parse this batch ahead of the verdicts
                 * below, which stay on this thread in the batch's order
                 * (each partition's order), and destroy the last one. */
                jb.msgs = msgs;
                jb.recs = recs;
                jb.n = preparsed ? 0 : (size_t)n;
                jb.old = old;
                pooled = !audit_pool_start(a->pool, audit_batch_chunk, &jb,
                                           jb.n + nold, AUDIT_CHUNK, jb.n);
                if (!pooled)
                        for (k = 0; k < (ssize_t)nold; k++)
                                rd_kafka_message_destroy(old[k]);
                nold = 0;
                if (a->commit_inflight) {
                        /* While the ledger writes, parse this batch and
                         * read and parse the next ones (that needs no
                         * audit state), then take the tracker back.  A
                         * failed commit pauses the audit after this
                         * batch: its records only add to the state the
                         * retry writes. */
                        if (pooled && !preparsed)
                                audit_pool_wait(a->pool, (size_t)n);
                        if (!a->conf.follow && !a->flow)
                                audit_read_ahead(a, ahead, ahead_head,
                                                 &nahead);
                        audit_commit_join(a);
                        preparsed = preparsed || pooled;
                }
                dedup_tracker_begin(a->tr, now);
                for (k = 0; k < n && !fatal; k++) {
                        if (preparsed) {
                                if (k + AUDIT_PREFETCH_AHEAD < n) {
                                        audit_record_prefetch(
                                            a,
                                            &recs[k + AUDIT_PREFETCH_AHEAD]);
                                        /* audit_message() reads the
                                         * message (offset, partition). */
                                        __builtin_prefetch(
                                            msgs[k + AUDIT_PREFETCH_AHEAD]);
                                }
                        } else if (pooled) {
                                audit_pool_wait(a->pool, (size_t)k + 1);
                                if (k + AUDIT_PREFETCH_AHEAD < n &&
                                    audit_pool_done(a->pool,
                                                    (size_t)k +
                                                        AUDIT_PREFETCH_AHEAD))
                                        audit_record_prefetch(
                                            a,
                                            &recs[k + AUDIT_PREFETCH_AHEAD]);
                        } else {
                                audit_record_ahead(a, msgs, recs, (size_t)n,
                                                   (size_t)k);
                        }
                        audit_message(a, msgs[k], &recs[k], now, &fatal,
                                      errstr, errstr_size);
                }
                /* Every record parsed (some may be left after a fatal
                 * error); the helpers may still be freeing the last
                 * batch: the next audit_pool_start() waits for that, so
                 * it overlaps this thread's commit and the next poll. */
                if (pooled && jb.n)
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
                if (!fatal && audit_mode_failed(a, errstr, errstr_size))
                        fatal = 1;
                if (!fatal &&
                    audit_trunc_run(a, now, audit_commit, errstr, errstr_size))
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
                                dedup_tracker_clock_advance(a->tr,
                                                            now -
                                                                a->rec_lag_ms);
                        dedup_tracker_tick(a->tr);
                        a->last_tick_ms = now;
                        if (a->conf.on_tick)
                                a->conf.on_tick(a->conf.opaque, now);
                }
                if (!a->conf.follow)
                        audit_check_stalls(a, now);
                if (a->mode->tick &&
                    a->mode->tick(a, now, errstr, errstr_size)) {
                        fatal = 1;
                        break;
                }
                if (a->conf.status && now - a->last_publish_ms >= 1000)
                        audit_publish(a, now);
                audit_progress(a, now, 0);
                /* Last: the commit runs while the next batch comes.  A
                 * failing ledger is retried at the top, once a second.
                 * A generation of ids that closed is committed at once:
                 * its ids are then written once, sorted, where a later
                 * commit would also rewrite those the commits between
                 * had appended (dedup.h): a 5M-record scan's consumer
                 * waited half as long for its commits. */
                if (!a->commit_failing && audit_pending(a) &&
                    (a->uncommitted >= a->conf.commit_records ||
                     dedup_tracker_gens_closed(a->tr) ||
                     now - a->last_commit_ms >= a->conf.commit_interval_ms))
                        audit_commit_start(a, now);
        }
        audit_commit_join(a);
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
                if (audit_mode_failed(a, errstr, errstr_size))
                        goto out;
                /* The ledger failed, or the mode's part did and that loses
                 * something. */
                if (a->commit_failing || !a->mode->last_commit_lost ||
                    !a->mode->last_commit_lost(a)) {
                        snprintf(errstr, errstr_size,
                                 "the last batch could not be written to the "
                                 "ledger; it will be audited again on the "
                                 "next run");
                        goto out;
                }
        }
        if (a->mode->finish)
                a->mode->finish(a);
        audit_progress(a, clock_wall_ms(), 1);
        if (!a->conf.follow && !audit_all_done(a)) {
                snprintf(errstr, errstr_size,
                         "interrupted before the end of the scan");
                goto out;
        }
        rc = 0;
out:
        audit_commit_join(a);
        audit_pool_free(a->pool);
        a->pool = NULL;
        while (nold > 0)
                rd_kafka_message_destroy(old[--nold]);
        /* Batches read ahead and never classified (an error, a stop):
         * not audited, so read again next time. */
        for (; nahead > 0; nahead--) {
                struct audit_ahead *ah = &ahead[ahead_head];
                while (ah->n > 0)
                        rd_kafka_message_destroy(ah->msgs[--ah->n]);
                ahead_head = (ahead_head + 1) % AUDIT_AHEAD_MAX;
        }
        for (i = 0; i < AUDIT_AHEAD_MAX; i++) {
                free(ahead[i].msgs);
                free(ahead[i].recs);
        }
        free(msgs);
        free(old);
        free(recs);
        if (rc && a->refused)
                rc = AUDIT_E_ACCESS;
        return rc;
}

struct ledger *audit_ledger(struct audit *a)
{
        return a->lg;
}
