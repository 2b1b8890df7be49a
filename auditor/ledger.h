/*
 * ledger.h - the durable audit ledger (SQLite, WAL).
 *
 * Invariants
 *  - One process owns a ledger at a time: ledger_open() takes an exclusive
 *    flock() on "<path>-lock" and fails with a clear message if another
 *    process holds it.  Read-only handles (ledger_open_reader) for other
 *    threads of the owning process take no lock.
 *  - Everything one batch changed - next offsets and counters of its
 *    parts, the tracker's dirty pairs and open gaps, expired pairs, its
 *    anomaly events, and the id windows' new ids and generations - is
 *    written in ONE transaction by
 *    ledger_commit().  A crash before COMMIT loses the whole batch and the
 *    audit replays it from the old offsets; a crash after loses nothing.
 *    So no record is ever counted twice or missed.
 *  - The schema lives in schema/NNNN_*.sql, applied in order and tracked
 *    by PRAGMA user_version; a ledger newer than the binary is refused.
 *  - A struct ledger is used by one thread at a time.
 *
 * Ownership
 *  - ledger_open() and ledger_open_reader() return a handle that the
 *    caller alone frees, with ledger_close(); closing a writer releases
 *    the process lock after the database is closed.
 *  - Strings given to the ledger are borrowed: a ledger_part's topic for
 *    as long as the parts are passed in, ledger_windows_load()'s topics for
 *    the life of the handle (the tracker's id lookups call back into it,
 *    so the handle must outlive the tracker's use of it).
 *  - Strings and blobs handed to the walk callbacks (ledger_*_foreach,
 *    ledger_anomalies_query) belong to SQLite and are valid only during
 *    the call.
 *
 * The implementation is auditor/ledger/, one file per job (open, load,
 * id windows, commit, queries); auditor/ledger/internal.h says which.
 */
#ifndef EOSAUDIT_LEDGER_H
#define EOSAUDIT_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "../dedup/dedup.h"

struct ledger;

/*
 * One audited (topic, partition).  Callers keep an array of these indexed
 * by the tracker's part number: parts[i].part == i.
 */
struct ledger_part {
        const char *topic; /* borrowed */
        int32_t partition;
        uint32_t part;       /* the tracker's index; equals the array index */
        int64_t next_offset; /* next offset to audit; -1 = never audited */
        int from_log_start;  /* audited from offset 0 (strict first seq);
                                set by ledger_load().  ledger_commit()
                                stores the tracker's own value, which a
                                coverage gap (rebaseline) clears. */
        /* A coverage gap to record with the next commit: offsets
         * [coverage_lo, coverage_hi] were deleted by retention before they
         * were audited.  -1 when none; ledger_commit() resets them. */
        int64_t coverage_lo, coverage_hi;
        int dirty; /* include in the next commit; reset by ledger_commit() */
};

/*
 * Opens (creating if needed) the ledger at path, applies migrations, sets
 * WAL mode and takes the process lock.  Returns 0 and *out, or -1 with
 * errstr filled.
 */
int ledger_open(struct ledger **out, const char *path, char *errstr,
                size_t errstr_size);

/* Opens a read-only connection (no lock, no migrations) for readers such
 * as HTTP threads.  The ledger must exist and be migrated. */
int ledger_open_reader(struct ledger **out, const char *path, char *errstr,
                       size_t errstr_size);

void ledger_close(struct ledger *lg);

/*
 * Loads the stored state of parts[0..nparts) into tr (which must already
 * have each part added): next_offset, from_log_start and counters of each
 * part (a part the ledger has never seen keeps next_offset -1), and every
 * pair with its open gaps.  The caller then calls dedup_tracker_part_add()
 * again only for parts with next_offset == -1 once it knows their origin.
 */
int ledger_load(struct ledger *lg, struct dedup_tracker *tr,
                struct ledger_part *parts, size_t nparts, char *errstr,
                size_t errstr_size);

/*
 * The id windows: windows[i] is the tracker's window of topic topics[i]
 * (from dedup_tracker_window_add()).  Loads each window's generations and
 * their ids into tr - generations stored under another dedup_key (the
 * identity the ids were made from) are deleted first, as are ones older
 * than the tracker's age bound would keep - and installs the ledger as
 * the tracker's id store (dedup_tracker_set_id_lookup), mapping stored
 * partitions back to parts[] (ledger_load() must have run).  The ledger
 * must outlive tr's use of it.
 */
int ledger_windows_load(struct ledger *lg, struct dedup_tracker *tr,
                        const char *const *topics, const uint32_t *windows,
                        size_t ntopics, const struct ledger_part *parts,
                        size_t nparts, const char *dedup_key, char *errstr,
                        size_t errstr_size);

/*
 * The transaction check's pending transactions and tombstones
 * (schema/0008_txn.sql) into tr, after ledger_load() and
 * dedup_txn_enable(); those of partitions no longer among parts lose
 * them.  Returns 0, or -1 with errstr filled.  ledger_commit() writes
 * them back with every batch.
 */
int ledger_txns_load(struct ledger *lg, struct dedup_tracker *tr,
                     const struct ledger_part *parts, size_t nparts,
                     char *errstr, size_t errstr_size);

/*
 * Writes one batch in one transaction (see invariants), then clears the
 * tracker's dirty set and events and the parts' dirty flags.  On failure
 * nothing is written, the tracker is left as it was, and -1 is returned
 * with errstr filled: the caller must not advance past the batch.
 * commit_us, when non-NULL, receives the commit's duration in us.
 */
int ledger_commit(struct ledger *lg, struct dedup_tracker *tr,
                  struct ledger_part *parts, size_t nparts,
                  int64_t *commit_us, char *errstr, size_t errstr_size);

/* Figures for one topic (NULL: all topics), summed over its partitions. */
struct ledger_summary {
        uint64_t records;
        uint64_t untracked;
        uint64_t anomalies[DEDUP_KIND__ANOMALY_CNT];
        uint64_t missing;
        uint64_t producers;      /* distinct producer names tracked */
        uint64_t pairs;          /* tracked (partition, producer) pairs */
        uint64_t open_gaps;
        uint64_t coverage_gaps;
        uint64_t coverage_records; /* offsets lost to retention */
        uint32_t partitions;
        uint64_t ids_checked;    /* records whose id the window checked */
        uint64_t window_ids;     /* ids the windows hold now */
        uint32_t window_gens;    /* their live generations */
        int64_t window_oldest_ms; /* first_ms of the oldest; -1 none */
};

int ledger_summary(struct ledger *lg, const char *topic,
                   struct ledger_summary *out, char *errstr,
                   size_t errstr_size);

/* One stored anomaly, newest first. */
struct ledger_anomaly {
        int64_t id;
        const char *topic;
        int32_t partition;
        const char *kind; /* dedup_kind_name() or "coverage" */
        const char *producer; /* NULL when unknown */
        size_t producer_len;
        int32_t epoch;        /* -1 unknown */
        int64_t seq_lo, seq_hi; /* -1 unknown */
        int64_t offset_lo, offset_hi;
        int64_t first_offset; /* -1 unknown */
        uint64_t count;
        int64_t detected_ms;
        unsigned malformed_bits; /* DEDUP_HDR_* missing or bad; 0 unless
                                    kind is "malformed" */
        /* redelivered: where the first copies are (offsets first_offset
         * .. first_offset_hi of first_partition) and the first record's id
         * (msgid_len bytes in all; msgid holds at most
         * DEDUP_ID_EVIDENCE_MAX of them).  -1 / NULL otherwise. */
        int32_t first_partition;
        int64_t first_offset_hi;
        const void *msgid;
        size_t msgid_stored; /* bytes at msgid */
        int64_t msgid_len;
};

typedef int(ledger_anomaly_cb)(void *opaque, const struct ledger_anomaly *a);

/* Calls cb for up to limit anomalies (limit < 0: all) of topic (NULL: all
 * topics), newest first; cb returning non-zero stops the walk (and
 * ledger_anomalies_foreach() returns 0).  Strings are valid only during the
 * call. */
int ledger_anomalies_foreach(struct ledger *lg, const char *topic,
                             int64_t limit, ledger_anomaly_cb *cb,
                             void *opaque, char *errstr, size_t errstr_size);

/* Which anomalies ledger_anomalies_query() walks; every field set narrows
 * the walk (all of them must match).  The strings are borrowed. */
struct ledger_anomaly_filter {
        const char *topic;    /* NULL: any */
        const char *kind;     /* NULL: any; a kind name or "coverage" */
        const char *producer; /* NULL: any; bytes, producer_len of them */
        size_t producer_len;
        int64_t since_ms;     /* detected_ms >= since_ms; < 0: any */
        int64_t before_id;    /* id < before_id (the next page); <= 0: any */
        int64_t limit;        /* < 0: all */
};

/* As ledger_anomalies_foreach() for the anomalies that match f, newest
 * (highest id) first. */
int ledger_anomalies_query(struct ledger *lg,
                           const struct ledger_anomaly_filter *f,
                           ledger_anomaly_cb *cb, void *opaque, char *errstr,
                           size_t errstr_size);

/* The stored state of one (partition, producer) pair. */
struct ledger_pair {
        const char *topic;
        int32_t partition;
        const char *producer; /* bytes, not necessarily UTF-8 */
        size_t producer_len;
        int32_t epoch;
        int64_t last_seq; /* -1 none */
        int64_t last_offset;
        int64_t last_ms;
        uint64_t records;
        uint64_t open_gaps;
};

/* Pairs are listed in (topic, partition, producer) order, producers
 * compared as bytes; a listing resumes after such a key. */
struct ledger_pair_key {
        const char *topic;
        int32_t partition;
        const char *producer;
        size_t producer_len;
};

struct ledger_pair_filter {
        const char *topic;    /* NULL: any */
        const char *producer; /* NULL: any; producer_len bytes */
        size_t producer_len;
        const struct ledger_pair_key *after; /* NULL: from the first */
        int64_t limit;        /* < 0: all */
};

typedef int(ledger_pair_cb)(void *opaque, const struct ledger_pair *p);

/* Calls cb for the pairs that match f, in key order; cb returning
 * non-zero stops the walk.  Strings are valid only during the call. */
int ledger_pairs_foreach(struct ledger *lg, const struct ledger_pair_filter *f,
                         ledger_pair_cb *cb, void *opaque, char *errstr,
                         size_t errstr_size);

/* The stored row of one audited partition. */
struct ledger_partition {
        const char *topic;
        int32_t partition;
        int64_t next_offset; /* -1: none */
        int from_log_start;
        struct dedup_counts counts;
        uint64_t open_gaps;
        int64_t updated_ms;
};

typedef int(ledger_partition_cb)(void *opaque,
                                 const struct ledger_partition *p);

/* Calls cb for every stored partition of topic (NULL: all topics) in
 * (topic, partition) order; cb returning non-zero stops the walk. */
int ledger_partitions_foreach(struct ledger *lg, const char *topic,
                              ledger_partition_cb *cb, void *opaque,
                              char *errstr, size_t errstr_size);

/*
 * Testing only: hook is called by ledger_commit() after every write of the
 * batch and just before COMMIT, so a test can simulate a crash at the worst
 * moment (e.g. _exit() in a forked child).  NULL clears it.
 */
typedef void(ledger_commit_hook)(void *opaque);
void ledger_commit_hook_set(struct ledger *lg, ledger_commit_hook *hook,
                            void *opaque);

#endif /* EOSAUDIT_LEDGER_H */
