/*
 * run.c - producing (see producer.h and the overview in producer.c):
 * pacing, records and their injections, replays, transactions, restarts,
 * and producer_run().
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>

#include "../base/clock.h"
#include "../base/kconf.h"
#include "../dedup/eos_headers.h"
#include "internal.h"

/* ------------------------------------------------------------------ */
/* Producing                                                           */
/* ------------------------------------------------------------------ */

/* Holds the loop back to --rate, serving callbacks meanwhile. */
static void producer_pace(struct producer_ctx *c, struct producer_inst *in)
{
        double due;

        if (c->t_start == 0)
                c->t_start = clock_mono_s();
        if (c->o->rate <= 0)
                return;
        due = c->t_start + (double)c->paced++ / c->o->rate;
        for (;;) {
                double wait = due - clock_mono_s();

                if (wait <= 0 || !producer_running(c))
                        return;
                rd_kafka_poll(in->rk,
                              wait > 0.1 ? 100 : (int)(wait * 1e3) + 1);
        }
}

/* One write: record n (key, partition) with seq; tag goes to its delivery
 * report (PRODUCER_TAG_*). */
struct producer_write {
        int64_t n;
        const char *key;
        size_t key_len;
        int32_t partition;
        int64_t seq;
        uintptr_t tag;
};

/* Enqueues one write, waiting while librdkafka's queue is full (unless
 * stopping, then __QUEUE_FULL is returned). */
static rd_kafka_resp_err_t producer_enqueue(struct producer_ctx *c,
                                            struct producer_inst *in,
                                            const struct producer_write *w)
{
        const struct producer_opts *o = c->o;
        char seq_str[24], index_str[24], prev_epoch_str[16], prev_seq_str[24];
        int seq_len = snprintf(seq_str, sizeof(seq_str), "%" PRId64, w->seq);
        int prev_epoch_len = 0, prev_seq_len = 0;
        const char *id = NULL;
        size_t id_len = 0;

        /* Every copy of record n is stamped here, so all carry its id. */
        if (o->msgid_from == PRODUCER_MSGID_KEY) {
                id = w->key;
                id_len = w->key_len;
        } else if (o->msgid_from == PRODUCER_MSGID_INDEX) {
                id = index_str;
                id_len = (size_t)snprintf(index_str, sizeof(index_str),
                                          "%" PRId64, w->n);
        }
        if (!o->scope_topic && c->prev_epoch &&
            c->prev_epoch[w->partition] >= 0 &&
            c->prev_epoch[w->partition] != in->epoch) {
                prev_epoch_len = snprintf(prev_epoch_str,
                                          sizeof(prev_epoch_str), "%" PRId32,
                                          c->prev_epoch[w->partition]);
                prev_seq_len = snprintf(prev_seq_str, sizeof(prev_seq_str),
                                        "%" PRId64, c->prev_seq[w->partition]);
        }
        for (;;) {
                rd_kafka_headers_t *hdrs = rd_kafka_headers_new(7);
                rd_kafka_resp_err_t err;

                rd_kafka_header_add(hdrs, EOS_HDR_PRODUCER, -1, o->name,
                                    (ssize_t)c->name_len);
                rd_kafka_header_add(hdrs, EOS_HDR_EPOCH, -1, in->epoch_str,
                                    -1);
                rd_kafka_header_add(hdrs, EOS_HDR_SEQ, -1, seq_str, seq_len);
                if (o->scope_topic)
                        rd_kafka_header_add(hdrs, EOS_HDR_SCOPE, -1,
                                            EOS_SCOPE_TOPIC, -1);
                if (in->pid >= 0)
                        rd_kafka_header_add(hdrs, EOS_HDR_PID, -1, in->pid_str,
                                            -1);
                /* On every record of a later session where an earlier one
                 * wrote: the auditor checks the first it sees, so a lost
                 * first record does not hide the end of the earlier one. */
                if (prev_epoch_len > 0) {
                        rd_kafka_header_add(hdrs, EOS_HDR_PREV_EPOCH, -1,
                                            prev_epoch_str, prev_epoch_len);
                        rd_kafka_header_add(hdrs, EOS_HDR_PREV_SEQ, -1,
                                            prev_seq_str, prev_seq_len);
                }
                if (id)
                        rd_kafka_header_add(hdrs, o->msgid_header, -1, id,
                                            (ssize_t)id_len);
                if (c->txn_counts)
                        rd_kafka_header_add(hdrs, EOS_HDR_TXN, -1, c->txn_str,
                                            -1);
                /* No copy: c->value outlives the handle. */
                err = rd_kafka_producev(
                    in->rk, RD_KAFKA_V_RKT(in->rkt),
                    RD_KAFKA_V_PARTITION(o->scope_topic ? RD_KAFKA_PARTITION_UA
                                                        : w->partition),
                    RD_KAFKA_V_KEY(o->unkeyed ? NULL : w->key,
                                   o->unkeyed ? 0 : w->key_len),
                    RD_KAFKA_V_VALUE(c->value, (size_t)o->value_size),
                    RD_KAFKA_V_HEADERS(hdrs),
                    RD_KAFKA_V_OPAQUE((void *)w->tag), RD_KAFKA_V_END);
                if (!err) {
                        producer_manifest_count(c, w->partition);
                        return 0; /* hdrs owned by the message */
                }
                rd_kafka_headers_destroy(hdrs);
                if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL ||
                    !producer_running(c))
                        return err;
                rd_kafka_poll(in->rk, 100);
        }
}

/* The seq counter of a write to partition: its own, or the topic's
 * (slot 0) with --scope topic. */
static int32_t producer_seq_slot(const struct producer_ctx *c,
                                 int32_t partition)
{
        return c->o->scope_topic ? 0 : partition;
}

/*
 * Produces record n (key, partition) with in's next seq, injecting a gap
 * before it and a duplicate after it when inject says so (the live
 * session; it also follows the record for replays).  Returns 0, 1 when
 * stopping left it unsent, or -1 on a fatal error (errstr).
 */
static int producer_send(struct producer_ctx *c, struct producer_inst *in,
                         int64_t n, const char *key, size_t key_len,
                         int32_t partition, int inject,
                         struct producer_tally *t, char *errstr,
                         size_t errstr_size)
{
        const struct producer_opts *o = c->o;
        int gap = inject && producer_rng_hit(&c->rng_gap, o->gap_rate);
        int dup = inject && producer_rng_hit(&c->rng_dup, o->dup_rate);
        struct producer_write w = {
            .n = n,
            .key = key,
            .key_len = key_len,
            .partition = partition,
            .seq = in->next_seq[producer_seq_slot(c, partition)] + gap,
            .tag = PRODUCER_TAG_NONE,
        };
        rd_kafka_resp_err_t err;

        if (inject && c->sent) {
                struct producer_sent *s = &c->sent[n % o->restart_replay];

                /* Reset before the send: a retried transaction sends n
                 * again and only the last send's report counts. */
                s->n = n;
                s->delivered = 0;
                w.tag = producer_tag_record(n);
        }
        err = producer_enqueue(c, in, &w);
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                return 1;
        if (err && producer_fatal(in, errstr, errstr_size))
                return -1;
        /* The seq is spent even when the record fails: an auditor sees the
         * lost record as a gap. */
        in->next_seq[producer_seq_slot(c, partition)] = w.seq + 1;
        if (err) {
                t->failed++;
                return 0;
        }
        t->records++;
        t->sent++;
        t->gaps += (uint64_t)gap;
        if (!dup)
                return 0;
        /* Same tag: n is delivered when either copy is. */
        err = producer_enqueue(c, in, &w);
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                return 1;
        if (err && producer_fatal(in, errstr, errstr_size))
                return -1;
        if (!err) {
                t->sent++;
                t->dups++;
        }
        return 0;
}

/*
 * Writes record n again in in's session: same key, value, id and
 * partition, in's next seq, no injection.  Returns 0, 1 when stopping
 * left it unsent, or -1 on a fatal error (errstr).
 */
static int producer_send_replay(struct producer_ctx *c,
                                struct producer_inst *in, int64_t n,
                                struct producer_tally *t, char *errstr,
                                size_t errstr_size)
{
        char key[PRODUCER_KEY_MAX];
        struct producer_write w = {.n = n, .tag = PRODUCER_TAG_REPLAY};
        rd_kafka_resp_err_t err;

        w.key = key;
        w.key_len = (size_t)snprintf(key, sizeof(key), "%s-%" PRId64,
                                     c->o->name, n);
        w.partition = producer_partition(key, w.key_len, c->partition_cnt);
        w.seq = in->next_seq[producer_seq_slot(c, w.partition)];
        err = producer_enqueue(c, in, &w);
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                return 1;
        if (err && producer_fatal(in, errstr, errstr_size))
                return -1;
        in->next_seq[producer_seq_slot(c, w.partition)] =
            w.seq + 1; /* spent, as in send() */
        if (err) {
                t->replay_failed++;
                return 0;
        }
        t->sent++;
        return 0;
}

/* The next record's key and partition; a zombie skips keys of partitions
 * the live session has not delivered to.  Returns -1 if none is found. */
static int producer_next_key(struct producer_ctx *c, enum producer_phase ph,
                             const struct producer_inst *live, int64_t *n,
                             char *key, size_t *key_len, int32_t *partition)
{
        int skips;

        for (skips = 0; skips < PRODUCER_ZOMBIE_SKIPS; skips++) {
                int len = snprintf(key, PRODUCER_KEY_MAX, "%s-%" PRId64,
                                   c->o->name, *n);

                *key_len = (size_t)len;
                *partition = producer_partition(key, *key_len,
                                                c->partition_cnt);
                if (ph != PRODUCER_PHASE_ZOMBIE ||
                    live->part_ok[*partition] > 0)
                        return 0;
                (*n)++;
        }
        return -1;
}

/*
 * Produces the pending replays (live phase), then up to want records
 * (record numbers from *n on), without flushing.  Returns 0, or -1 on a
 * fatal error (errstr).
 */
static int producer_send_batch(struct producer_ctx *c,
                               struct producer_inst *in,
                               enum producer_phase ph,
                               const struct producer_inst *live, int64_t *n,
                               uint64_t want, struct producer_tally *t,
                               char *errstr, size_t errstr_size)
{
        char key[PRODUCER_KEY_MAX];
        size_t key_len;
        int32_t partition;

        while (producer_running(c)) {
                int r;

                if (ph == PRODUCER_PHASE_LIVE &&
                    c->replay_pos < c->replay_cnt) {
                        producer_pace(c, in);
                        r = producer_send_replay(c, in,
                                                 c->replay[c->replay_pos], t,
                                                 errstr, errstr_size);
                        if (r == -1)
                                return -1;
                        if (r == 1)
                                return 0;
                        c->replay_pos++;
                        rd_kafka_poll(in->rk, 0);
                        continue;
                }
                if (t->records + t->failed >= want)
                        break;
                if (producer_next_key(c, ph, live, n, key, &key_len,
                                      &partition) == -1)
                        return 0;
                producer_pace(c, in);
                r = producer_send(c, in, *n, key, key_len, partition,
                                  ph == PRODUCER_PHASE_LIVE, t, errstr,
                                  errstr_size);
                if (r == -1)
                        return -1;
                if (r == 1)
                        return 0;
                (*n)++;
                rd_kafka_poll(in->rk, 0);
        }
        return 0;
}

/* Delivery report counters of an instance at the start of a unit. */
struct producer_mark {
        uint64_t ok, err, replay_ok, unconfirmed;
};

static struct producer_mark producer_mark_take(const struct producer_inst *in)
{
        struct producer_mark m = {in->dr_ok, in->dr_err, in->dr_replay_ok,
                                  in->dr_unconfirmed};

        return m;
}

/* Adds what one committed (or non-transactional) unit of in, begun at m,
 * achieved. */
static void producer_tally_add(struct producer_ctx *c, enum producer_phase ph,
                               const struct producer_tally *t,
                               const struct producer_inst *in,
                               const struct producer_mark *m)
{
        struct producer_result *res = c->res;
        uint64_t delivered = in->dr_ok - m->ok;

        res->delivered += delivered;
        res->failed += in->dr_err - m->err + t->failed + t->replay_failed;
        res->unconfirmed += in->dr_unconfirmed - m->unconfirmed;
        if (ph == PRODUCER_PHASE_ZOMBIE) {
                res->zombie_records += delivered;
                return;
        }
        res->records += t->records;
        res->duplicates_injected += t->dups;
        res->gaps_injected += t->gaps;
        res->redelivered_injected += in->dr_replay_ok - m->replay_ok;
}

static int producer_phase_idempotent(struct producer_ctx *c,
                                     struct producer_inst *in,
                                     enum producer_phase ph,
                                     const struct producer_inst *live,
                                     int64_t *n, uint64_t want, char *errstr,
                                     size_t errstr_size)
{
        struct producer_tally t = {0};
        struct producer_mark m = producer_mark_take(in);
        int rc;

        rc = producer_send_batch(c, in, ph, live, n, want, &t, errstr,
                                 errstr_size);
        producer_flush(in);
        producer_tally_add(c, ph, &t, in, &m);
        return rc;
}

/* Classifies a transaction call's error and destroys it. */
static enum producer_txn producer_txn_error(struct producer_inst *in,
                                            rd_kafka_error_t *error,
                                            const char *call,
                                            rd_kafka_resp_err_t *code,
                                            char *errstr, size_t errstr_size)
{
        enum producer_txn r;

        *code = RD_KAFKA_RESP_ERR_NO_ERROR;
        if (!error)
                return PRODUCER_TXN_OK;
        *code = rd_kafka_error_code(error);
        snprintf(errstr, errstr_size, "%s: %s: %s", in->label, call,
                 rd_kafka_error_string(error));
        r = rd_kafka_error_txn_requires_abort(error) ? PRODUCER_TXN_ABORTABLE
                                                     : PRODUCER_TXN_FATAL;
        rd_kafka_error_destroy(error);
        if (r == PRODUCER_TXN_FATAL && !producer_err_is_fenced(*code)) {
                rd_kafka_resp_err_t fatal = rd_kafka_fatal_error(in->rk, NULL,
                                                                 0);

                if (fatal)
                        *code = fatal;
        }
        return r;
}

/* commit (abort == 0) or abort the open transaction, retrying retriable
 * errors. */
static enum producer_txn producer_txn_end(struct producer_inst *in, int abort,
                                          rd_kafka_resp_err_t *code,
                                          char *errstr, size_t errstr_size)
{
        rd_kafka_error_t *error = NULL;
        int tries;

        if (abort)
                producer_flush(in); /* so every report is in before */
        for (tries = 0; tries < PRODUCER_TXN_CALL_TRIES; tries++) {
                error = abort ? rd_kafka_abort_transaction(in->rk, -1)
                              : rd_kafka_commit_transaction(in->rk, -1);
                if (!error || !rd_kafka_error_is_retriable(error))
                        break;
                rd_kafka_error_destroy(error);
                error = NULL;
        }
        if (tries == PRODUCER_TXN_CALL_TRIES) {
                *code = RD_KAFKA_RESP_ERR__TIMED_OUT;
                snprintf(errstr, errstr_size, "%s: %s_transaction: %s",
                         in->label, abort ? "abort" : "commit",
                         "still failing after retries");
                return PRODUCER_TXN_FATAL;
        }
        return producer_txn_error(in, error,
                                  abort ? "abort_transaction"
                                        : "commit_transaction",
                                  code, errstr, errstr_size);
}

/*
 * Transactions of o->txn_size records until want records are committed.
 * A transaction aborted on purpose (--abort-every) or by an abortable
 * error is produced again with the same records and seqs.  A zombie
 * fenced by the broker is an expected outcome (res->zombie_fenced), not
 * an error.  Returns 0, or -1 with errstr.
 */
static int producer_phase_txn(struct producer_ctx *c, struct producer_inst *in,
                              enum producer_phase ph,
                              const struct producer_inst *live, int64_t *n,
                              uint64_t want, char *errstr, size_t errstr_size)
{
        const struct producer_opts *o = c->o;
        struct producer_result *res = c->res;
        size_t seq_size = (size_t)c->partition_cnt * sizeof(*in->next_seq);
        rd_kafka_resp_err_t code = RD_KAFKA_RESP_ERR_NO_ERROR;
        enum producer_txn r = PRODUCER_TXN_OK;
        uint64_t done = 0, lost = 0;
        int failures = 0;

        while (done < want && producer_running(c)) {
                struct producer_tally t = {0};
                struct producer_mark m = producer_mark_take(in);
                uint64_t chunk = want - done;
                uint64_t rng_gap0 = c->rng_gap, rng_dup0 = c->rng_dup;
                size_t replay_pos0 = c->replay_pos;
                int64_t n0 = *n;
                int deliberate;

                if (chunk > (uint64_t)o->txn_size)
                        chunk = (uint64_t)o->txn_size;
                memcpy(c->seq_saved, in->next_seq, seq_size);
                r = producer_txn_error(in, rd_kafka_begin_transaction(in->rk),
                                       "begin_transaction", &code, errstr,
                                       errstr_size);
                if (r != PRODUCER_TXN_OK) {
                        r = PRODUCER_TXN_FATAL;
                        break;
                }
                c->txn_no++;
                if (producer_manifest_begin(c)) {
                        snprintf(errstr, errstr_size, "out of memory");
                        (void)producer_txn_end(in, 1, &code, errstr,
                                               errstr_size);
                        return -1;
                }
                if (producer_send_batch(c, in, ph, live, n, chunk, &t, errstr,
                                        errstr_size) == -1) {
                        code = producer_fatal(in, errstr, errstr_size);
                        r = PRODUCER_TXN_FATAL;
                        lost = t.records;
                        break;
                }
                /* A stop commits what was produced rather than abort it. */
                deliberate = ph == PRODUCER_PHASE_LIVE && o->abort_every &&
                             c->txn_no % (uint64_t)o->abort_every == 0 &&
                             producer_running(c);
                /* The manifest is the last write of a transaction that
                 * commits (an aborted one is named by the next). */
                if (!deliberate && producer_manifest_write(c, in)) {
                        snprintf(errstr, errstr_size,
                                 "%s: cannot write the manifest to %s",
                                 in->label, o->txn_manifests);
                        r = PRODUCER_TXN_ABORTABLE;
                } else {
                        r = deliberate ? PRODUCER_TXN_ABORTABLE
                                       : producer_txn_end(in, 0, &code, errstr,
                                                          errstr_size);
                }
                if (r == PRODUCER_TXN_OK) {
                        producer_manifest_committed(c);
                        failures = 0;
                        res->transactions++;
                        producer_tally_add(c, ph, &t, in, &m);
                        done += t.records + t.failed;
                        continue;
                }
                if (r == PRODUCER_TXN_ABORTABLE && !deliberate &&
                    ++failures >= PRODUCER_TXN_FAILURES) {
                        char last[512];

                        snprintf(last, sizeof(last), "%s", errstr);
                        (void)producer_txn_end(in, 1, &code, errstr,
                                               errstr_size);
                        snprintf(errstr, errstr_size,
                                 "transaction failed %d times; last: %s",
                                 failures, last);
                        res->failed += t.records;
                        return -1;
                }
                if (r == PRODUCER_TXN_ABORTABLE)
                        r = producer_txn_end(in, 1, &code, errstr,
                                             errstr_size);
                if (r != PRODUCER_TXN_OK) {
                        lost = t.records;
                        break;
                }
                if (producer_manifest_aborted(c, in->epoch)) {
                        snprintf(errstr, errstr_size, "out of memory");
                        return -1;
                }
                /* The retry replays the very same writes, replayed
                 * copies included. */
                res->aborted += t.sent;
                res->aborted_transactions++;
                *n = n0;
                memcpy(in->next_seq, c->seq_saved, seq_size);
                c->rng_gap = rng_gap0;
                c->rng_dup = rng_dup0;
                c->replay_pos = replay_pos0;
        }
        if (r == PRODUCER_TXN_OK)
                return 0;
        if (ph == PRODUCER_PHASE_ZOMBIE && producer_err_is_fenced(code)) {
                res->zombie_fenced = 1;
                return 0;
        }
        res->failed += lost;
        return -1;
}

/*
 * A crash and restart of the application between two records (n is the
 * next one): in's units are flushed and committed, so every report is in.
 * Picks the records to replay, destroys in and opens a new session in its
 * place, with a strictly higher epoch: the next one of --state's counter,
 * the broker's when transactional (or the last one + 1 if the broker's is
 * not above it), else the last one + 1.  Returns 0 or PRODUCER_ERR_RUN
 * (errstr); in is left for producer_inst_close() either way.
 */
/* The session of in ends: notes the last seq it stamped on each partition
 * it wrote to, for the next session's eos.prev_* headers.  Its units are
 * committed, so next_seq is past what readers see (an aborted
 * transaction's seqs were given back). */
static void producer_prev_note(struct producer_ctx *c,
                               const struct producer_inst *in)
{
        int32_t p;

        for (p = 0; p < c->partition_cnt; p++) {
                if (in->next_seq[p] <= 0)
                        continue;
                c->prev_epoch[p] = in->epoch;
                c->prev_seq[p] = in->next_seq[p] - 1;
        }
}

static int producer_restart(struct producer_ctx *c, struct producer_inst *in,
                            int64_t n, char *errstr, size_t errstr_size)
{
        const struct producer_opts *o = c->o;
        int64_t prev = in->epoch, epoch = prev + 1, i;

        if (prev >= INT32_MAX) {
                snprintf(errstr, errstr_size,
                         "restart: no epoch left above %" PRId64, prev);
                return PRODUCER_ERR_RUN;
        }
        /* The delivered ones among the last restart_replay records: a
         * record that was lost is not a redelivery when sent again. */
        c->replay_cnt = 0;
        c->replay_pos = 0;
        for (i = n > o->restart_replay ? n - o->restart_replay : 0;
             c->sent && i < n; i++) {
                const struct producer_sent *s =
                    &c->sent[i % o->restart_replay];

                if (s->n == i && s->delivered)
                        c->replay[c->replay_cnt++] = i;
        }

        producer_prev_note(c, in);
        producer_inst_close(in); /* the crash: rd_kafka_destroy() */
        if (o->state_path) {
                if (producer_state_take(o->state_path, 1, &epoch, errstr,
                                        errstr_size) == -1)
                        return PRODUCER_ERR_RUN;
                if (epoch <= prev) {
                        snprintf(errstr, errstr_size,
                                 "state \"%s\": the counter went back to "
                                 "%" PRId64 " below this run's epoch %" PRId64,
                                 o->state_path, epoch - 1, prev);
                        return PRODUCER_ERR_RUN;
                }
        }
        if (producer_inst_open(c, in, "producer", (int32_t)epoch, errstr,
                               errstr_size) != 0)
                return PRODUCER_ERR_RUN;
        if (in->epoch <= prev) {
                /* Transactional only: a broker that does not bump the
                 * epoch (librdkafka's mock cluster) or that gave a new
                 * producer id at epoch 0 (exhaustion). */
                char msg[160];

                snprintf(msg, sizeof(msg),
                         "restart: the broker's epoch %" PRId32
                         " is not above the last session's %" PRId64
                         ": stamping %" PRId64,
                         in->epoch, prev, prev + 1);
                producer_warn(o, msg);
                in->epoch = (int32_t)(prev + 1);
                snprintf(in->epoch_str, sizeof(in->epoch_str), "%" PRId32,
                         in->epoch);
        }
        c->res->restarts++;
        c->res->epoch = in->epoch;
        c->res->pid = in->pid;
        return 0;
}

int producer_run(const struct producer_opts *o, struct producer_result *res,
                 char *errstr, size_t errstr_size)
{
        struct producer_ctx c;
        struct producer_inst a, b; /* a: the only one, or the zombie */
        int (*phase)(struct producer_ctx *, struct producer_inst *,
                     enum producer_phase, const struct producer_inst *,
                     int64_t *, uint64_t, char *, size_t);
        uint64_t count = (uint64_t)o->count;
        int64_t epoch = o->epoch >= 0 ? o->epoch : 0;
        int64_t n = 0; /* the next record number */
        size_t i;
        int rc = PRODUCER_ERR_CONFIG;

        memset(&c, 0, sizeof(c));
        memset(&a, 0, sizeof(a));
        memset(&b, 0, sizeof(b));
        memset(res, 0, sizeof(*res));
        res->epoch = -1;
        res->zombie_epoch = -1;
        res->pid = -1;
        c.o = o;
        c.res = res;
        if (producer_opts_check(o, errstr, errstr_size) == -1)
                goto out;
        c.name_len = strlen(o->name);
        c.rng_gap = o->seed ^ 0x6761707367617073ull; /* independent streams */
        c.rng_dup = o->seed ^ 0x6475707364757073ull;
        c.conf = producer_conf_new(o, errstr, errstr_size);
        if (!c.conf)
                goto out;
        c.idempotent = o->transactional_id || producer_conf_idempotent(c.conf);

        rc = PRODUCER_ERR_RUN;
        if (o->value_size > 0) {
                c.value = malloc((size_t)o->value_size);
                if (!c.value) {
                        snprintf(errstr, errstr_size, "out of memory");
                        goto out;
                }
                memset(c.value, 'x', (size_t)o->value_size);
        }
        if (o->state_path &&
            producer_state_take(o->state_path, o->zombie ? 2 : 1, &epoch,
                                errstr, errstr_size) == -1)
                goto out;

        rc = producer_inst_open(&c, &a, o->zombie ? "zombie" : "producer",
                                (int32_t)epoch, errstr, errstr_size);
        if (rc != 0)
                goto out;
        rc = PRODUCER_ERR_RUN;
        res->partition_cnt = c.partition_cnt;
        c.seq_saved = calloc((size_t)c.partition_cnt, sizeof(*c.seq_saved));
        c.prev_epoch = malloc((size_t)c.partition_cnt * sizeof(*c.prev_epoch));
        c.prev_seq = calloc((size_t)c.partition_cnt, sizeof(*c.prev_seq));
        if (!c.seq_saved || !c.prev_epoch || !c.prev_seq) {
                snprintf(errstr, errstr_size, "out of memory");
                goto out;
        }
        for (i = 0; i < (size_t)c.partition_cnt; i++)
                c.prev_epoch[i] = -1;
        if (o->restart_every > 0 && o->restart_replay > 0) {
                c.sent = malloc((size_t)o->restart_replay * sizeof(*c.sent));
                c.replay = malloc((size_t)o->restart_replay *
                                  sizeof(*c.replay));
                if (!c.sent || !c.replay) {
                        snprintf(errstr, errstr_size, "out of memory");
                        goto out;
                }
                for (i = 0; i < (size_t)o->restart_replay; i++)
                        c.sent[i].n = -1;
        }
        phase = o->transactional_id ? producer_phase_txn
                                    : producer_phase_idempotent;
        if (!o->zombie) {
                res->epoch = a.epoch;
                res->pid = a.pid;
                for (;;) {
                        /* n counts the records done, as -n counts them. */
                        uint64_t want = count - (uint64_t)n;

                        if (o->restart_every > 0 &&
                            want > (uint64_t)o->restart_every)
                                want = (uint64_t)o->restart_every;
                        if (phase(&c, &a, PRODUCER_PHASE_LIVE, NULL, &n, want,
                                  errstr, errstr_size) == -1)
                                goto out;
                        if (!o->restart_every || (uint64_t)n >= count ||
                            !producer_running(&c))
                                break;
                        if (producer_restart(&c, &a, n, errstr, errstr_size) !=
                            0)
                                goto out;
                }
                rc = 0;
                goto out;
        }
        res->zombie_epoch = a.epoch;
        if (phase(&c, &a, PRODUCER_PHASE_LIVE, NULL, &n, count - count / 2,
                  errstr, errstr_size) == -1)
                goto out;
        /* Only now: B's init_transactions() fences A at the broker.  B's
         * records name A's last ones (A's later writes, as a zombie, do
         * not: they are of the epoch named). */
        producer_prev_note(&c, &a);
        if (producer_running(&c) &&
            producer_inst_open(&c, &b, "producer", (int32_t)epoch + 1, errstr,
                               errstr_size) != 0)
                goto out;
        if (b.rk) {
                res->epoch = b.epoch;
                res->pid = b.pid;
                if (b.epoch <= a.epoch)
                        producer_warn(o, "the new session's epoch is not "
                                         "above the zombie's: the auditor "
                                         "cannot tell them apart");
                if (phase(&c, &b, PRODUCER_PHASE_LIVE, NULL, &n, count / 2,
                          errstr, errstr_size) == -1)
                        goto out;
                n = o->count;
                if (phase(&c, &a, PRODUCER_PHASE_ZOMBIE, &b, &n,
                          count / 10 > 0 ? count / 10 : 1, errstr,
                          errstr_size) == -1)
                        goto out;
        }
        rc = 0;
out:
        /* Every phase ends with a flush: this is the last report. */
        if (c.t_start > 0)
                res->elapsed_ms = (int64_t)((clock_mono_s() - c.t_start) *
                                            1e3);
        res->stopped = !producer_running(&c);
        producer_inst_close(&b);
        producer_inst_close(&a);
        if (c.conf)
                rd_kafka_conf_destroy(c.conf);
        free(c.seq_saved);
        free(c.prev_epoch);
        free(c.prev_seq);
        free(c.sent);
        free(c.replay);
        producer_manifest_free(&c);
        free(c.value); /* after the handles: records point into it */
        return rc;
}
