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

#include "../../dedup/dedup.h"
#include "fingerprint.h"

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
        /* The last record audited here (offset -1: none), stored by
         * ledger_commit() with next_offset and read back by ledger_load();
         * the caller keeps it current. */
        struct fingerprint fp;
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
 * Removes the ledger at path, closed, and what lives beside it: its WAL,
 * shared memory, lock and journal files and its directory of id files
 * ("<path>-ids").  Best effort: what cannot be removed stays.
 */
void ledger_remove(const char *path);

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

/* A partition of window's topic found after ledger_windows_load() (it
 * was added to the topic): its ids map back to part p->part.  Returns 0,
 * or -1 (out of memory, or no such window). */
int ledger_windows_part_add(struct ledger *lg, uint32_t window,
                            const struct ledger_part *p);

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
                  struct ledger_part *parts, size_t nparts, int64_t *commit_us,
                  char *errstr, size_t errstr_size);

/*
 * A topic deleted and recreated, or a partition's log truncated (an
 * unclean leader election): the ledger's state of the topic belongs to
 * a log that is gone (see fingerprint.h).  why[] names each partition
 * that showed it.
 */
struct ledger_incarnation_part {
        int32_t partition;
        const char *reason; /* "recreated" or "truncated" */
        int64_t old_next;   /* the ledger's next offset there */
        int64_t fp_offset;  /* the last audited record, -1 none */
        int64_t log_start;  /* where the log starts now */
        const char *detail; /* what told it, a JSON object for the
                               coverage row's detail (NULL: none) */
};

/*
 * Starts a new incarnation of topic in one transaction: its partition
 * rows are copied to retired_partitions; its partitions, pairs, open gaps,
 * coverage gaps and id window are deleted; anomalies stay as evidence,
 * tagged with the incarnation they belong to.  One 'coverage' anomaly per
 * why[] entry (reason set; offsets log_start..old_next - 1, the offsets
 * the ledger had audited there; first_offset the last audited record)
 * opens the new incarnation.  The flow audit's live entries that name the
 * topic are retired (ledger_flow_incarnate(), auditor/ledger/flow.c):
 * nothing outstanding of the old log is judged against the new one.
 * Call before ledger_load(), ledger_windows_load() and ledger_flow_load(),
 * or load again after.  *incarnation (may be NULL)
 * receives the new number (the first incarnation of a topic is 0).
 */
int ledger_topic_incarnate(struct ledger *lg, const char *topic,
                           const struct ledger_incarnation_part *why, size_t n,
                           int64_t *incarnation, char *errstr,
                           size_t errstr_size);

/* The current incarnation of topic (0 when it never had another). */
int ledger_topic_incarnation(struct ledger *lg, const char *topic,
                             int64_t *incarnation, char *errstr,
                             size_t errstr_size);

/*
 * The topic's id (schema/0017_topic_id.sql) as its current incarnation
 * saw it: a NUL-terminated string of at most LEDGER_TOPIC_ID_MAX - 1
 * characters, opaque here.  ledger_topic_id_get() returns 1 with it in
 * out, 0 when none was stored (a ledger written before schema 17, or no
 * id could be had), -1 with errstr.  ledger_topic_id_put() stores id for
 * the current incarnation, replacing what was there; returns 0 or -1.
 * Each is one statement of its own: call them while no transaction of
 * this handle is open.
 */
#define LEDGER_TOPIC_ID_MAX 64
int ledger_topic_id_get(struct ledger *lg, const char *topic, char *out,
                        size_t out_size, char *errstr, size_t errstr_size);
int ledger_topic_id_put(struct ledger *lg, const char *topic, const char *id,
                        int64_t now_ms, char *errstr, size_t errstr_size);

/* Figures for one topic (NULL: all topics), summed over its partitions. */
struct ledger_summary {
        uint64_t records;
        uint64_t untracked;
        uint64_t anomalies[DEDUP_KIND__ANOMALY_CNT];
        uint64_t missing;       /* records in confirmed gaps still missing */
        uint64_t recovered;     /* records that came after their gap was
                                    confirmed (also out_of_order) */
        uint64_t unknown;       /* records of gaps open across a coverage
                                    gap: maybe among the deleted records */
        uint64_t producers;     /* distinct producer names tracked, on
                                    pairs or topic streams or both */
        uint64_t pairs;         /* tracked (partition, producer) pairs */
        uint64_t topic_streams; /* tracked topic-scoped streams (eos.scope:
                                    topic): one per (producer, epoch) of a
                                    topic, none of them a pair */
        uint64_t open_gaps;
        uint64_t coverage_gaps;    /* coverage gaps, and partitions found
                                    recreated or truncated when the
                                    current incarnation began */
        uint64_t coverage_records; /* offsets lost to retention */
        uint32_t partitions;
        uint64_t ids_checked;       /* records whose id the window checked */
        uint64_t window_ids;        /* ids the windows hold now */
        uint32_t window_gens;       /* their live generations */
        int64_t window_oldest_ms;   /* first_ms of the oldest; -1 none */
        uint64_t truncations;       /* logs found truncated under the audit
                                    (ledger_trunc.h) */
        uint64_t truncated_records; /* accepted records they took back */
};

int ledger_summary(struct ledger *lg, const char *topic,
                   struct ledger_summary *out, char *errstr,
                   size_t errstr_size);

/* One stored anomaly, newest first. */
struct ledger_anomaly {
        int64_t id;
        const char *topic;
        int32_t partition;
        const char *kind;     /* dedup_kind_name() or "coverage" */
        const char *producer; /* NULL when unknown */
        size_t producer_len;
        int32_t epoch;          /* -1 unknown */
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
        /* The incarnation of its topic the anomaly belongs to (0: the
         * first; see ledger_topic_incarnate()), and, for the 'coverage'
         * row that opened an incarnation, why ("recreated" or
         * "truncated"; NULL otherwise).  That row's offsets are the ones
         * the earlier incarnation had audited (from the new log start),
         * its first_offset the last record audited there. */
        int64_t incarnation;
        const char *reason;
        /* 'truncated': what it took back, a JSON object
         * (schema/0014_truncation.sql); NULL otherwise. */
        const char *detail;
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
        int64_t since_ms;  /* detected_ms >= since_ms; < 0: any */
        int64_t before_id; /* id < before_id (the next page); <= 0: any */
        int64_t limit;     /* < 0: all */
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
        int64_t limit;                       /* < 0: all */
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
 * The history (schema/0003_history.sql): what the commits of each minute
 * added to a topic's counters, written by the commits themselves (in their
 * transaction) and kept for LEDGER_HISTORY_MINUTES minutes back from the
 * newest commit.
 */
#define LEDGER_HISTORY_MINUTES (7 * 24 * 60)
#define LEDGER_HISTORY_MINUTE_MS 60000

struct ledger_history_point {
        int64_t minute_ms; /* start of the minute, wall clock */
        uint64_t records;
        uint64_t untracked;
        uint64_t anomalous; /* records: every kind but gap */
        uint64_t gaps;      /* confirmed gaps (events) */
        uint64_t missing;   /* records in those gaps */
        uint64_t unaudited; /* offsets in coverage gaps */
};

typedef int(ledger_history_cb)(void *opaque,
                               const struct ledger_history_point *p);

/* Calls cb for every minute from since_ms on in which a commit changed
 * topic's counters (NULL: the sums over all topics), oldest first; minutes
 * without a commit are skipped.  cb returning non-zero stops the walk. */
int ledger_history_foreach(struct ledger *lg, const char *topic,
                           int64_t since_ms, ledger_history_cb *cb,
                           void *opaque, char *errstr, size_t errstr_size);

/*
 * One message id (ids_query.c): where the id windows saw it first, and the
 * other copies the redelivered anomalies name.  The id is given as the
 * audit hashed it: the id bytes of --dedup-key msgid, header:NAME or key,
 * or the 16 bytes of a value-hash identity (what an anomaly's msgid_hex
 * shows); it is hashed here with dedup_id_hash().
 */
struct ledger_id_seen {
        /* The first copy, from the generation of the topic's id window
         * that holds the id (a closed one's sorted chunks, or the open
         * one's batches); in_window 0: no generation holds it (never seen,
         * or its generation was dropped), and the fields below are -1. */
        int in_window;
        int32_t partition;
        int64_t offset;
        int64_t gen;
        int gen_closed;
        int64_t gen_first_ms, gen_last_ms;
        /* The topic's window as a whole. */
        uint32_t gens;
        int64_t oldest_ms;  /* first_ms of the oldest generation; -1 none */
        char dedup_key[64]; /* of the stored ids ("msgid", "key", ...);
                               "" when the topic has no generation */
};

/* One later copy of the id: a record of a redelivered anomaly. */
struct ledger_id_copy {
        int64_t anomaly_id;
        int32_t partition;
        int64_t offset;
        int64_t detected_ms;
        /* The first copy as the anomaly names it. */
        int32_t first_partition;
        int64_t first_offset;
        const char *producer; /* NULL when unknown */
        size_t producer_len;
};

typedef int(ledger_id_copy_cb)(void *opaque, const struct ledger_id_copy *c);

/* The dedup_key of topic's stored ids into key ("" when it has none). */
int ledger_id_key(struct ledger *lg, const char *topic, char *key,
                  size_t key_size, char *errstr, size_t errstr_size);

/*
 * Looks id (len bytes) up in topic's id window and its redelivered
 * anomalies, in one read transaction: fills *seen and calls cb for at most
 * limit copies (oldest anomaly first; cb returning non-zero stops).  A copy
 * is a record of an anomaly whose first copies hold the window's first
 * copy, or whose stored evidence is this id.  Returns the number of copies
 * found (>= 0), or -1 with errstr filled.  On a read-only handle too.
 */
int ledger_id_find(struct ledger *lg, const char *topic, const void *id,
                   size_t len, int64_t limit, struct ledger_id_seen *seen,
                   ledger_id_copy_cb *cb, void *opaque, char *errstr,
                   size_t errstr_size);

/*
 * Testing only: hook is called by ledger_commit() after every write of the
 * batch and just before COMMIT, so a test can simulate a crash at the worst
 * moment (e.g. _exit() in a forked child).  NULL clears it.
 */
typedef void(ledger_commit_hook)(void *opaque);
void ledger_commit_hook_set(struct ledger *lg, ledger_commit_hook *hook,
                            void *opaque);

#endif /* EOSAUDIT_LEDGER_H */
