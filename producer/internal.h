/*
 * internal.h - what the files of the reference producer share (not for
 * other modules):
 *
 *   producer.c  options, session counter, librdkafka configuration and
 *               callbacks, instances, the summary
 *   run.c       producing: pacing, records, injections, transactions,
 *               restarts, producer_run()
 *   manifest.c  --txn-manifests: what a transaction wrote, and its
 *               manifest
 *   process.c   the reference processor (process.h)
 */
#ifndef EOSAUDIT_PRODUCER_INTERNAL_H
#define EOSAUDIT_PRODUCER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "producer.h"

#define PRODUCER_KEY_MAX (PRODUCER_NAME_MAX + 24) /* "NAME-" + int64 */
#define PRODUCER_METADATA_WAIT_MS 10000
#define PRODUCER_UNKNOWN_TOPIC_WAIT_MS 2000
#define PRODUCER_STATS_WAIT_MS 10000
#define PRODUCER_STATS_INTERVAL "100" /* ms; how fast the epoch is learnt */
#define PRODUCER_INIT_TIMEOUT_MS 30000
#define PRODUCER_TXN_CALL_TRIES 10   /* retriable commit/abort errors */
#define PRODUCER_TXN_FAILURES 3      /* abortable failures of one txn */
#define PRODUCER_ZOMBIE_SKIPS 100000 /* keys tried per zombie record */

/* The message opaque of a write, read back in its delivery report: 0 for
 * writes nobody follows (zombie records, any record without restarts),
 * PRODUCER_TAG_REPLAY for a replayed copy, else producer_tag_record(n) for
 * record n and its injected duplicate. */
#define PRODUCER_TAG_NONE ((uintptr_t)0)
#define PRODUCER_TAG_REPLAY ((uintptr_t)1)
#define PRODUCER_TAG_MANIFEST ((uintptr_t)3) /* a transaction's manifest */

/* One librdkafka handle: one session of the producer. */
struct producer_inst {
        struct producer_ctx *ctx;
        const char *label; /* "zombie" or "live", for messages */
        rd_kafka_t *rk;
        rd_kafka_topic_t *rkt;
        int32_t epoch;
        int64_t pid; /* -1: no eos.pid header */
        char epoch_str[16];
        char pid_str[24];
        int64_t *next_seq; /* per partition */
        uint64_t *part_ok; /* delivered per partition */
        /* Delivery reports, counted by producer_dr_cb() on this thread. */
        uint64_t dr_ok, dr_err;
        uint64_t dr_replay_ok; /* of replayed copies; also in dr_ok */
        /* Successful reports without an offset (producer_dr_cb()): not
         * in dr_ok. */
        uint64_t dr_unconfirmed;
        /* Set while waiting for a stats callback with the broker's ids. */
        int want_stats;
        int64_t stats_pid;
        int32_t stats_epoch;
};

/* A record sent by the live session, for the replay after a restart. */
struct producer_sent {
        int64_t n;     /* record number; -1: slot unused */
        int delivered; /* its last write has a successful delivery report */
};

/* Whether conf enables idempotence (enable.idempotence=true). */
int producer_conf_idempotent(const rd_kafka_conf_t *conf);

struct producer_ctx {
        const struct producer_opts *o;
        struct producer_result *res;
        rd_kafka_conf_t *conf; /* template; each instance gets a copy */
        size_t name_len;
        int32_t partition_cnt;
        int idempotent;     /* enable.idempotence (or transactional) */
        char *value;        /* o->value_size bytes, shared by every record */
        int64_t *seq_saved; /* next_seq at the start of a transaction */
        /* Per partition, the last record stamped there in an earlier
         * session (epoch -1: none): what eos.prev_epoch and eos.prev_seq
         * say on the new session's records there (schema/HEADERS.md). */
        int32_t *prev_epoch;
        int64_t *prev_seq;
        uint64_t rng_gap, rng_dup;
        uint64_t txn_no; /* transactions begun */
        uint64_t paced;  /* records produced under --rate */
        double t_start;  /* monotonic s at the first produce; 0 = none */
        /* Restarts: record n's last send is sent[n % restart_replay]
         * while it is one of the last restart_replay records; replay
         * holds the record numbers the new session writes again, in
         * order, replay_pos the next one.  NULL without replays. */
        struct producer_sent *sent;
        int64_t *replay;
        size_t replay_cnt, replay_pos;
        /* --txn-manifests (manifest.c): writes per partition in the open
         * transaction, its eos.txn, and the transactions aborted since
         * the last manifest committed. */
        uint64_t *txn_counts;
        char txn_str[24];
        struct producer_txn_key {
                int32_t epoch;
                uint64_t txn;
        } * aborted;
        size_t naborted, aborted_cap;
};

enum producer_phase {
        PRODUCER_PHASE_LIVE,   /* injections on; records count */
        PRODUCER_PHASE_ZOMBIE, /* stale session; no injections */
};

/* What one phase or transaction enqueued. */
struct producer_tally {
        uint64_t records;       /* distinct records enqueued */
        uint64_t sent;          /* records, duplicates and replays enqueued */
        uint64_t failed;        /* records librdkafka refused at once */
        uint64_t replay_failed; /* replays librdkafka refused at once */
        uint64_t dups, gaps;
};

enum producer_txn {
        PRODUCER_TXN_OK,
        PRODUCER_TXN_ABORTABLE, /* abort, then the transaction may retry */
        PRODUCER_TXN_FATAL,     /* the instance is unusable */
};

/* Defaults, then -F, then -X, then the flags that name a property. */
rd_kafka_conf_t *producer_conf_new(const struct producer_opts *o, char *errstr,
                                   size_t errstr_size);

int producer_err_is_fenced(rd_kafka_resp_err_t err);

/* Fills errstr from the instance's fatal error; returns its code. */
rd_kafka_resp_err_t producer_fatal(struct producer_inst *in, char *errstr,
                                   size_t errstr_size);

/* Waits for every outstanding delivery report; delivery.timeout.ms bounds
 * the wait. */
void producer_flush(struct producer_inst *in);

void producer_inst_close(struct producer_inst *in);

/*
 * Starts in: handle, topic, transactions (learning the epoch) and, on the
 * first instance, the partition count.  Returns 0, PRODUCER_ERR_CONFIG
 * when librdkafka rejects the configuration, else PRODUCER_ERR_RUN.
 */
int producer_inst_open(struct producer_ctx *c, struct producer_inst *in,
                       const char *label, int32_t epoch, char *errstr,
                       size_t errstr_size);

/* Draws even when p is 0, so one stream's decisions never depend on the
 * other's rate. */
int producer_rng_hit(uint64_t *s, double p);

int producer_running(const struct producer_ctx *c);

/* Takes n consecutive epochs from the counter; *first is the lowest. */
int producer_state_take(const char *path, int n, int64_t *first, char *errstr,
                        size_t errstr_size);

/* Even and never 0 for 0 <= n < INT64_MAX (see PRODUCER_TAG_NONE). */
uintptr_t producer_tag_record(int64_t n);

void producer_warn(const struct producer_opts *o, const char *msg);

/* manifest.c: --txn-manifests.  begin() at each transaction's start
 * (after txn_no++), count() for each write, write() as its last write,
 * aborted() after an abort, committed() after a commit.  Each is a no-op
 * returning 0 without manifests; -1 is out of memory. */
int producer_manifest_on(const struct producer_ctx *c);
int producer_manifest_begin(struct producer_ctx *c);
void producer_manifest_count(struct producer_ctx *c, int32_t partition);
rd_kafka_resp_err_t producer_manifest_write(struct producer_ctx *c,
                                            struct producer_inst *in);
int producer_manifest_aborted(struct producer_ctx *c, int32_t epoch);
void producer_manifest_committed(struct producer_ctx *c);
void producer_manifest_free(struct producer_ctx *c);

#endif /* EOSAUDIT_PRODUCER_INTERNAL_H */
