/*
 * process.h - the reference processor behind `eosaudit process`: a
 * consume-transform-produce loop, the shape of every exactly-once
 * pipeline (Kafka Streams' task loop, a hand-written poll -> produce ->
 * sendOffsetsToTransaction), with faults to inject, so that the flow
 * audit (scan --source) has a subject whose truth is known.
 *
 * Invariants
 *  - Every source record becomes one sink record: same value, same
 *    headers (eos.* forwarded, as Kafka Streams does, so the message id
 *    travels), same key unless rekey (then key + "/r": another sink
 *    partition), partitioned by librdkafka's default partitioner.
 *  - exactly-once: one transaction per batch of up to batch records: the
 *    outputs and the group's offsets (rd_kafka_send_offsets_to_transaction)
 *    commit together; an abort (on purpose or on an abortable error)
 *    rewinds the consumer to the group's committed offsets, so the batch
 *    is processed again.  A crash mid-transaction leaves it open; the next
 *    session (same transactional.id) fences and aborts it.
 *  - at-least-once: an idempotent producer; after each batch the outputs
 *    are flushed, then the offsets committed: a crash between the two
 *    writes the batch again after the restart (duplicates, by design).
 *  - Faults: drop_every N drops the source records whose offset % N ==
 *    N - 1 (a function of the record, so a replay drops the same ones);
 *    crash_after N ends the process (a forked child: _exit(137), like
 *    kill -9) once N records have been produced, at-least-once after a
 *    flush and before the offset commit, exactly-once inside the open
 *    transaction; the parent then runs the loop again (the restart);
 *    abort_every N aborts every Nth transaction after its records were
 *    produced.
 *  - A library: no argv, no signal handlers (cmd/process.c has them).
 */
#ifndef EOSAUDIT_PROCESS_H
#define EOSAUDIT_PROCESS_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

enum process_mode {
        PROCESS_EXACTLY_ONCE = 0,
        PROCESS_AT_LEAST_ONCE,
};

struct process_opts {
        const char *brokers;
        const char *const *sources;
        size_t source_cnt;
        const char *sink;
        const char *group;            /* the consumer group */
        const char *transactional_id; /* exactly-once; NULL: the group's */
        enum process_mode mode;
        uint64_t batch;       /* records per transaction / commit, >= 1 */
        uint64_t crash_after; /* 0: never */
        /* With crash_after: the crashing session runs in this process,
         * not a forked child, and ends as a crash does for the data (the
         * batch's outputs flushed, at-least-once, or its transaction left
         * to abort; the offsets not committed), then leaves the group at
         * once.  For a caller with threads of its own, where fork() is not
         * safe (the demo: a lock another thread held at the fork stays
         * held in the child). */
        int crash_in_process;
        uint64_t abort_every; /* 0: never (exactly-once only) */
        uint64_t drop_every;  /* 0: never */
        int rekey;
        int64_t idle_exit_ms;       /* stop once nothing came for this long;
                                 0: run until *run is cleared */
        const char *conf_file;      /* librdkafka properties, or NULL */
        const char *const *conf_kv; /* "key=value" for both clients */
        size_t conf_kv_cnt;
        volatile sig_atomic_t *run; /* may be NULL */
};

void process_opts_defaults(struct process_opts *o);

struct process_stats {
        uint64_t consumed;     /* source records read (replays included) */
        uint64_t produced;     /* sink records produced (aborted included) */
        uint64_t dropped;      /* records dropped on purpose */
        uint64_t transactions; /* committed */
        uint64_t aborted;      /* transactions aborted */
        uint64_t commits;      /* at-least-once offset commits */
        int restarts;          /* 1 after a crash_after crash */
};

/*
 * Runs the loop (with crash_after: in a child first, then again here).
 * Returns 0, or -1 with errstr (a configuration librdkafka refuses, a
 * fatal transactional error, a fenced producer).
 */
int process_run(const struct process_opts *o, struct process_stats *st,
                char *errstr, size_t errstr_size);

#endif /* EOSAUDIT_PROCESS_H */
