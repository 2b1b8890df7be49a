/*
 * producer.h - the reference producer behind `eosaudit produce`: writes
 * records stamped with the eos.* header contract (dedup/dedup.h) and can
 * inject the anomalies the auditor must find.
 *
 * Invariants
 *  - Record n (0, 1, 2, ...) has key "NAME-n" and goes to partition
 *    (murmur2(key) & 0x7fffffff) % partition_count, as Kafka's Java
 *    default partitioner would put it; the partition count is read from
 *    metadata once, at start.
 *  - eos.seq counts per (producer, epoch, topic, partition) from 0, +1 per
 *    record; with scope_topic (--scope topic) per (producer, epoch, topic)
 *    instead, the record stamped eos.scope: topic and sent to no partition
 *    of ours: librdkafka's partitioner picks it (by the key, or at random
 *    for unkeyed records), as a producer that does not know partitions
 *    would (schema/HEADERS.md "Topic-scoped streams").  Every injected gap is a skipped seq placed BEFORE a record of
 *    the same partition (the record takes next+1), so each gap counted in
 *    struct producer_result is visible to an auditor, including one on a
 *    partition's last record.  A record that fails leaves a gap too, and
 *    so may one counted unconfirmed (reported delivered with no offset:
 *    struct producer_result, producer.c's delivery report callback).
 *  - An injected duplicate is the same record (partition, key, value,
 *    headers) produced again right after it: a new produce call that
 *    idempotence cannot catch.
 *  - Transactional mode: a transaction that aborts (on purpose or on an
 *    abortable error) is produced again with the same records, seqs and
 *    injections, so committed records stay contiguous; injections in
 *    aborted transactions are not counted.
 *  - Message ids: record n carries its id (the key "NAME-n", or "n") under
 *    msgid_header; every copy of record n (an injected duplicate, a
 *    replay after a restart) carries the same id.  Zombie records are
 *    records of their own (numbers from count on), with their own ids.
 *  - Restarts (--restart-every N): after every N records (counted as -n
 *    counts them) and all their delivery reports, or their commit, the
 *    instance is destroyed and a new one (a new session: a strictly
 *    higher eos.epoch, eos.seq from 0 on every partition) first writes
 *    again those of the last restart_replay records that were delivered,
 *    unchanged but for the seq: copies only the id can tell from new
 *    records.  Replays are not injected into and do not count toward -n;
 *    transactional, they open the first transaction of the new session,
 *    on top of its txn_size records.
 *  - A new session (after a restart, and --zombie's newer session B)
 *    stamps eos.prev_epoch and eos.prev_seq on its records of each
 *    partition an earlier session wrote to: that session's epoch and the
 *    last seq it stamped there (as schema/HEADERS.md asks), so that an
 *    auditor sees a loss at the end of the earlier session.
 *  - Everything runs on the calling thread: librdkafka callbacks are served
 *    by rd_kafka_poll()/flush() from inside producer_run().  A run keeps
 *    no global state, so concurrent runs in one process are independent.
 *  - A library only: the command line of `eosaudit produce` is cmd/'s
 *    (cmd/produce.c); nothing here parses argv or installs signal
 *    handlers.
 */
#ifndef EOSAUDIT_PRODUCER_H
#define EOSAUDIT_PRODUCER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "../dedup/eos_headers.h"

#define PRODUCER_NAME_MAX 255 /* bytes in eos.producer (DEDUP_PRODUCER_MAX) */
#define PRODUCER_VALUE_MAX 100000000 /* --size upper bound */
#define PRODUCER_MSGID_MAX 255       /* bytes in eos.msgid (DEDUP_MSGID_MAX) */
#define PRODUCER_HEADER_NAME_MAX 255 /* --msgid-header bytes */
#define PRODUCER_MSGID_HEADER EOS_HDR_MSGID /* --msgid-header default */
#define PRODUCER_REPLAY_MAX 1000000         /* --restart-replay upper bound */
#define PRODUCER_REPLAY_DEFAULT 10

/* What a record's message id is (--msgid-from). */
enum producer_msgid {
        PRODUCER_MSGID_KEY = 0, /* the key, "NAME-n" (the default) */
        PRODUCER_MSGID_INDEX,   /* the record number n, in decimal */
        PRODUCER_MSGID_NONE,    /* no message id header */
};

/* Returns of producer_run(). */
#define PRODUCER_ERR_RUN -1 /* failed while running; *res is partial */
/* bad options or configuration; nothing was produced */
#define PRODUCER_ERR_CONFIG -2

struct producer_opts {
        const char *brokers; /* -b; NULL: bootstrap.servers from conf */
        const char *topic;   /* -t */
        const char *name;    /* --producer: eos.producer, 1..255 bytes */
        int64_t count;       /* -n: distinct records to deliver */
        double rate;         /* --rate: records/s, 0 = unlimited */
        int64_t value_size;  /* --size: value bytes */
        const char *transactional_id; /* NULL: idempotent only */
        int64_t txn_size;             /* records per transaction, >= 1 */
        int64_t abort_every;    /* abort every Nth transaction; 0 = never */
        const char *state_path; /* --state: session counter file, or NULL */
        int64_t epoch;          /* --epoch override; -1 = none */
        double dup_rate;        /* --inject-duplicates, 0..1 */
        double gap_rate;        /* --inject-gaps, 0..1 */
        int zombie;             /* --zombie */
        enum producer_msgid msgid_from; /* --msgid-from; KEY needs every
                                           key NAME-n within 255 bytes */
        const char *msgid_header;       /* --msgid-header: 1..255 bytes, not an
                                     eos.* header the producer stamps */
        int64_t restart_every;  /* restart after every N records; 0 = never */
        int64_t restart_replay; /* records replayed after a restart,
                                   0..PRODUCER_REPLAY_MAX */
        /* --txn-manifests: with transactional_id, eos.txn on every record
         * and each committed transaction's manifest written to this topic
         * as its last write (schema/HEADERS.md "Transactions").  NULL:
         * none. */
        const char *txn_manifests;
        /* --scope topic: one seq counter for the topic, the partition
         * left to librdkafka; not with transactions or --zombie. */
        int scope_topic;
        /* --unkeyed: records have no key (with scope_topic, and
         * msgid_from index or none). */
        int unkeyed;
        uint64_t seed;         /* --seed: injections are a function of it */
        const char *conf_file; /* -F, applied before conf_kv */
        const char *const *conf_kv; /* -X key=value, applied in order */
        size_t conf_kv_cnt;
        int quiet; /* no warnings, no librdkafka log */
        /* Stop flag: producing stops once *run == 0 (the run still
         * flushes, commits and reports).  NULL: never stops early. */
        volatile sig_atomic_t *run;
};

struct producer_result {
        int32_t partition_cnt;
        int32_t epoch;         /* eos.epoch of the live session (the last
                                 one after restarts) */
        int32_t zombie_epoch;  /* eos.epoch of the zombie; -1 without one */
        int64_t pid;           /* eos.pid stamped (transactional) by the
                                 live session; -1 none */
        uint64_t records;      /* distinct live records meant to be visible */
        uint64_t delivered;    /* visible writes: records, duplicates,
                                 replayed copies and zombie records
                                 (committed, if transactional) */
        uint64_t failed;       /* records meant to be visible that are not */
        uint64_t unconfirmed;  /* writes reported delivered without an
                                 offset (acked implicitly by librdkafka,
                                 producer.c): maybe visible, maybe not;
                                 in neither delivered nor failed */
        uint64_t aborted;      /* writes in aborted transactions */
        uint64_t transactions; /* committed */
        uint64_t aborted_transactions;
        uint64_t duplicates_injected;  /* visible duplicates */
        uint64_t gaps_injected;        /* visible skipped seqs */
        uint64_t zombie_records;       /* visible writes of the zombie */
        uint64_t redelivered_injected; /* visible replayed copies */
        uint64_t restarts;             /* sessions begun by --restart-every */
        int zombie_fenced;  /* the broker fenced the zombie's transaction */
        int stopped;        /* *run was cleared before the end */
        int64_t elapsed_ms; /* first produce to last delivery report */
};

/* Fills o with the defaults of `eosaudit produce` (count 1000, size 100,
 * txn_size 100, epoch -1, seed 1, msgid_from KEY under "eos.msgid",
 * restart_every 0, restart_replay 10, ...); the caller sets the rest. */
void producer_opts_init(struct producer_opts *o);

/* Checks options alone (not the librdkafka configuration).  Returns 0, or
 * -1 with errstr filled. */
int producer_opts_check(const struct producer_opts *o, char *errstr,
                        size_t errstr_size);

/*
 * Produces as o says.  Returns 0 when the run went to its end or stopped
 * on *o->run (records that failed are counted in res->failed), else
 * PRODUCER_ERR_CONFIG or PRODUCER_ERR_RUN with errstr filled.  *res is
 * always filled as far as the run got.  With o->state_path the session
 * counter is advanced before anything is produced.
 */
int producer_run(const struct producer_opts *o, struct producer_result *res,
                 char *errstr, size_t errstr_size);

/*
 * The one-line summary, "delivered=N failed=M aborted=K ..." (no prefix,
 * no newline), or with json a JSON object.  Returns snprintf()'s result.
 */
int producer_result_format(const struct producer_result *res, int json,
                           char *buf, size_t size);

/* Kafka's Utils.murmur2 (seed 0x9747b28c), as an unsigned 32-bit value. */
uint32_t producer_murmur2(const void *key, size_t len);

/* The Java default partitioner for a keyed record; partition_cnt > 0. */
int32_t producer_partition(const void *key, size_t len, int32_t partition_cnt);

#endif /* EOSAUDIT_PRODUCER_H */
