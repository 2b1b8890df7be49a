/*
 * txn.h - the transaction check of the engine: are transactions atomic?
 *
 * Kafka's read_committed promise has two halves: every record of a
 * committed transaction becomes visible, and no record of an aborted one
 * does.  A transactional producer stamps eos.txn (the transaction's
 * ordinal within its (eos.producer, eos.epoch)) on each record and, as the
 * last write of each transaction it commits, writes one manifest: the
 * (topic, partition)s it wrote with the record count of each, and the
 * ordinals it aborted since its previous manifest (schema/HEADERS.md,
 * "Transactions").  The caller parses manifests, maps their topics to
 * parts, and hands both the records and the manifests to the tracker:
 *
 *   a committed manifest whose records are not all visible within the
 *   grace                                            -> TORN, per short part
 *   records of a transaction whose manifest never shows within the
 *   grace                                            -> TORN (no manifest)
 *   a visible record of a transaction a manifest names aborted
 *                                                    -> ABORTED_READ
 *
 * Invariants
 *  - Part of the tracker (same thread, same purity, same heap accounting:
 *    dedup_tracker_memory() includes it); off until dedup_txn_enable().
 *  - A transaction is keyed by (producer, epoch, txn).  It is pending
 *    from its first record or manifest until its manifest is seen with
 *    every count met (it is then forgotten), or until the grace passes
 *    (it is then TORN), or a manifest names it aborted (it then stays as
 *    a tombstone for the grace, so late records of it are ABORTED_READ).
 *    A complete one also stays as a tombstone (in memory only) for the
 *    grace: a manifest written twice changes nothing.
 *  - Time is the records' clock (dedup.h): the grace runs on record
 *    times; dedup_tracker_tick() sweeps, dedup_tracker_confirm_all()
 *    (the end of a scan) confirms every pending transaction.
 *  - Memory is bounded: past max_pending pending transactions the oldest
 *    is confirmed early (TORN), as the open-gap bound does; past
 *    max_pending tombstones the oldest is forgotten.
 *  - Events go to the tracker's event list and counters: TORN counts one
 *    per (transaction, short part) in the part's anomalies[DEDUP_KIND_TORN]
 *    with the event's count = records missing (or, without a manifest,
 *    records seen); ABORTED_READ counts records.
 *  - Persistence mirrors pairs: dirty transactions (and forgotten ones,
 *    removed = 1) since dedup_tracker_dirty_clear() are walked with
 *    dedup_txn_dirty_foreach(), and put back with dedup_txn_restore().
 */
#ifndef EOSAUDIT_DEDUP_TXN_H
#define EOSAUDIT_DEDUP_TXN_H

#include <stddef.h>
#include <stdint.h>

#include "dedup.h"

#define DEDUP_TXN_PENDING_DEFAULT 100000

struct dedup_txn_config {
        int64_t grace_ms;     /* 0 = only at the end of a scan or the bound */
        uint32_t max_pending; /* >= 1: transactions held at once */
};

/* Turns the check on (conf is copied).  Returns 0, or -1 on allocation
 * failure.  Calling it again changes the config. */
int dedup_txn_enable(struct dedup_tracker *tr,
                     const struct dedup_txn_config *conf);

/*
 * A visible record of part at offset with a valid eos.txn (h->txn >= 0),
 * already given to dedup_tracker_observe() (so h is tracked).  Returns
 * 1 when it is an ABORTED_READ, 0 otherwise, -1 on allocation failure
 * (the tracker has failed).  A no-op returning 0 when the check is off or
 * h has no eos.txn.
 */
int dedup_txn_record(struct dedup_tracker *tr, uint32_t part, int64_t offset,
                     const struct dedup_hdrs *h);

/* One entry of a manifest: records the transaction wrote on part. */
struct dedup_txn_count {
        uint32_t part;
        uint64_t records;
};

/* An aborted transaction of the manifest's producer. */
struct dedup_txn_key {
        int32_t epoch;
        int64_t txn;
};

/* A committed manifest, read at (part, offset) of the manifest topic.
 * Entries of parts that are not audited are the caller's to drop. */
struct dedup_txn_manifest {
        const char *producer;
        size_t producer_len;
        int32_t epoch;
        int64_t txn;
        const struct dedup_txn_count *counts;
        size_t ncounts;
        const struct dedup_txn_key *aborted;
        size_t naborted;
        uint32_t part;
        int64_t offset;
};

/* Returns the records it turned into ABORTED_READ (seen before the abort
 * was known), or -1 on allocation failure or a bad manifest. */
int64_t dedup_txn_manifest(struct dedup_tracker *tr,
                           const struct dedup_txn_manifest *m);

/* What a pending transaction expects and has seen on one part. */
struct dedup_txn_slot {
        uint32_t part;
        uint64_t expected; /* from the manifest; 0 without one */
        uint64_t seen;
        int64_t offset_lo, offset_hi; /* records seen; -1 none */
};

/* A transaction as persisted.  Strings and slots are valid during the
 * callback only (or, on restore, are the caller's). */
struct dedup_txn_view {
        const char *producer;
        size_t producer_len;
        int32_t epoch;
        int64_t txn;
        int removed;  /* dirty_foreach: forgotten, delete it */
        int aborted;  /* a tombstone */
        int manifest; /* its manifest was seen */
        uint32_t manifest_part;
        int64_t manifest_offset;
        int64_t opened_ms; /* records' clock when it was first seen (or
                              aborted); the grace runs from here */
        const struct dedup_txn_slot *slots;
        uint32_t nslots;
};

typedef int(dedup_txn_cb)(void *opaque, const struct dedup_txn_view *v);
/* Transactions changed or forgotten since the last dirty clear; stops at
 * and returns cb's first non-zero result. */
int dedup_txn_dirty_foreach(struct dedup_tracker *tr, dedup_txn_cb *cb,
                            void *opaque);
/*
 * Puts back a stored transaction (not dirty), oldest opened_ms first.
 * Slots of parts not added are dropped.  Returns 0, or -1 on allocation
 * failure or a bad view.
 */
int dedup_txn_restore(struct dedup_tracker *tr,
                      const struct dedup_txn_view *v);

/* Pending transactions held now, and tombstones (aborted transactions,
 * and complete ones kept for the grace so that a repeated manifest or a
 * record beyond the count does not open them again); each is bounded by
 * max_pending. */
size_t dedup_txn_pending(const struct dedup_tracker *tr);
size_t dedup_txn_tombstones(const struct dedup_tracker *tr);

#endif /* EOSAUDIT_DEDUP_TXN_H */
