/*
 * dedup.h - the detection engine: header parsing and per-(partition,
 * producer) sequence tracking.
 *
 * Invariants
 *  - Pure: no I/O, no clock, no SQLite, no librdkafka.  Time comes in
 *    with the records (struct dedup_hdrs.ts_ms) and, for records without
 *    a timestamp, through dedup_tracker_begin(); persistence is done by the caller,
 *    which reads dirty state and events after each batch and writes them
 *    back with dedup_tracker_restore_*() after a restart.
 *  - Single-threaded: one tracker belongs to one thread (the consumer).
 *  - A "part" is a small caller-chosen index (0, 1, 2, ...) standing for
 *    one (topic, partition); the engine never sees topic names.
 *  - Every record observed is counted exactly once in its part's
 *    struct dedup_counts; anomalies are reported as events.
 *
 * Classification per (part, producer):
 *   epoch == highest seen, seq == next       -> OK
 *   seq > next                               -> gap opened for [next, seq-1]
 *   seq < next, inside an open gap           -> OUT_OF_ORDER (fills the hole)
 *   seq < next, inside a confirmed gap       -> OUT_OF_ORDER, recovered: the
 *                                               part's missing goes down
 *   seq < next, not in a gap                 -> DUPLICATE
 *   epoch < highest seen                     -> FENCED
 *   epoch > highest seen                     -> new session; must start at 0
 *   after a coverage hole, seq > next        -> accepted as a baseline
 * (A record stamped eos.scope: topic is numbered across its topic's parts
 * instead: dedup/topic.h.)
 * The first record of a producer on a part is a baseline unless the part
 * is audited from its log start (offset 0), in which case seq must be 0.
 * A gap only counts (DEDUP_KIND_GAP) once confirmed: at end of scan
 * (dedup_tracker_confirm_all) or after the grace period (dedup_tracker_tick).
 * A pair remembers its last DEDUP_DONE_GAPS confirmed gaps of its current
 * epoch: a record that comes after its gap was confirmed is out_of_order
 * (counted in recovered too, its event's first_offset naming the record
 * that opened the gap), and no longer missing.
 *
 * Message ids (across sessions): a record whose identity is set (h->id:
 * eos.msgid, or what the caller picked) on a part that belongs to an id
 * window is checked against the ids that window has seen; a repeat is
 * REDELIVERED with the first copy's (part, offset) as evidence, unless the
 * sequence check already called the record a duplicate or fenced write
 * (an in-session repeat is reported once, as what it is).  The window is
 * bounded by count and age (struct dedup_window_config) and kept as
 * DEDUP_WINDOW_GENS generations: a ring of Bloom filters in memory, one
 * per generation, in front of the caller's store, which it asks
 * (dedup_id_lookup_cb) only when a filter says "maybe".  A generation is
 * dropped whole, so eviction is by generation, oldest first.
 */
#ifndef EOSAUDIT_DEDUP_H
#define EOSAUDIT_DEDUP_H

#include <stddef.h>
#include <stdint.h>

#define DEDUP_PRODUCER_MAX 255 /* bytes in eos.producer */
#define DEDUP_MSGID_MAX 255    /* bytes in eos.msgid */
#define DEDUP_EPOCH_MAX INT32_MAX
#define DEDUP_SEQ_MAX INT64_MAX
#define DEDUP_HISTORY_RUNS 2      /* recent (seq, offset) runs kept per pair */
#define DEDUP_RETIRED_PIDS 2      /* replaced producer ids kept per producer */
#define DEDUP_DONE_GAPS 8         /* confirmed gaps remembered per pair */
#define DEDUP_ID_EVIDENCE_MAX 255 /* id bytes kept as evidence in an event */

/* ------------------------------------------------------------------ */
/* Header parsing                                                      */
/* ------------------------------------------------------------------ */

/* Bits for struct dedup_hdrs.seen and .bad. */
#define DEDUP_HDR_PRODUCER 0x01u
#define DEDUP_HDR_EPOCH 0x02u
#define DEDUP_HDR_SEQ 0x04u
#define DEDUP_HDR_PID 0x08u
#define DEDUP_HDR_MSGID 0x10u
#define DEDUP_HDR_PREV_EPOCH 0x20u
#define DEDUP_HDR_PREV_SEQ 0x40u
#define DEDUP_HDR_TXN 0x80u
#define DEDUP_HDR_SCOPE 0x100u
#define DEDUP_HDR_PREV (DEDUP_HDR_PREV_EPOCH | DEDUP_HDR_PREV_SEQ)
#define DEDUP_HDR_REQUIRED                                                    \
        (DEDUP_HDR_PRODUCER | DEDUP_HDR_EPOCH | DEDUP_HDR_SEQ)

enum dedup_hdr_status {
        DEDUP_HDR_TRACKED,   /* all three required headers, all valid */
        DEDUP_HDR_UNTRACKED, /* none of the eos.* headers */
        DEDUP_HDR_MALFORMED, /* some but not all, or an invalid value */
};

/* A 128-bit identity: MurmurHash3 x64_128 of the id bytes, seed 0. */
struct dedup_id {
        uint64_t lo, hi;
};

/*
 * Parsed eos.* headers of one record.  producer and msgid point into the
 * caller's header memory and are valid only as long as it is.
 */
struct dedup_hdrs {
        const char *producer;
        size_t producer_len;
        const char *msgid;
        size_t msgid_len;
        int32_t epoch;
        int64_t seq;
        int64_t pid; /* -1 when absent */
        /* eos.prev_epoch, eos.prev_seq: the last record this producer
         * stamped on this stream in its previous epoch (-1 when absent);
         * both or neither. */
        int32_t prev_epoch;
        int64_t prev_seq;
        /* eos.txn: the record's transaction, an ordinal within (producer,
         * epoch); -1 when absent.  Checked by dedup/txn.h. */
        int64_t txn;
        /* eos.scope: topic: eos.seq numbers (producer, epoch, topic)
         * across the topic's partitions (dedup/topic.h); 0: per
         * partition (absent, or "partition"). */
        int scope_topic;
        /* The record's identity for the id window: NULL = none.  Not set
         * by dedup_hdrs_feed(); the caller points it at msgid, a header,
         * the key, or a hash of key and value (see the auditor's
         * --dedup-key).  Any length; hashed with dedup_id_hash(). */
        const void *id;
        size_t id_len;
        /* The record's timestamp (ms since the epoch; <= 0: none), set by
         * the caller (Kafka's CreateTime or LogAppendTime), not by
         * dedup_hdrs_feed().  0 after dedup_hdrs_init(). */
        int64_t ts_ms;
        unsigned seen; /* DEDUP_HDR_* present (last occurrence) */
        unsigned bad;  /* DEDUP_HDR_* whose last occurrence is invalid */
        /* id_hashed: id_hash is dedup_id_hash(id, id_len), computed by
         * the caller ahead of dedup_tracker_observe() (on another thread,
         * or to prefetch with dedup_tracker_prefetch()); the engine
         * trusts it.  0 after dedup_hdrs_init(): the engine hashes. */
        int id_hashed;
        struct dedup_id id_hash;
};

void dedup_hdrs_init(struct dedup_hdrs *h);

/*
 * Feeds one record header.  Names that are not eos.* are ignored.  When a
 * header repeats, the last one counts (it replaces the earlier value and
 * its validity).  value may be NULL (a Kafka null header): invalid.
 */
void dedup_hdrs_feed(struct dedup_hdrs *h, const char *name, size_t name_len,
                     const void *value, size_t size);

enum dedup_hdr_status dedup_hdrs_status(const struct dedup_hdrs *h);

/*
 * Parses a plain decimal (digits only, no sign, no space, non-empty, no
 * overflow) of at most max.  Returns 0 and sets *out, or -1.
 */
int dedup_parse_decimal(const char *s, size_t len, uint64_t max,
                        uint64_t *out);

/* ------------------------------------------------------------------ */
/* Tracker                                                             */
/* ------------------------------------------------------------------ */

enum dedup_kind {
        DEDUP_KIND_DUPLICATE = 0,
        DEDUP_KIND_GAP,          /* a confirmed gap: records lost */
        DEDUP_KIND_OUT_OF_ORDER, /* a late record filled an open gap */
        DEDUP_KIND_FENCED,       /* a write from a lower (fenced) epoch */
        DEDUP_KIND_MALFORMED,
        DEDUP_KIND_REDELIVERED,  /* an id seen before, in another session
                                    or from another producer */
        DEDUP_KIND_TORN,         /* a transaction only partly visible
                                    (dedup/txn.h) */
        DEDUP_KIND_ABORTED_READ, /* a record of an aborted transaction
                                    was visible (dedup/txn.h) */
        DEDUP_KIND__ANOMALY_CNT,
        /* Not anomalies: state changes the caller must persist or log. */
        DEDUP_KIND_EXPIRED = DEDUP_KIND__ANOMALY_CNT, /* idle pair dropped */
        DEDUP_KIND_GAP_UNKNOWN, /* an open gap whose records may have been
                                   deleted by retention: neither missing
                                   nor found ("gap_unknown") */
        DEDUP_KIND__CNT
};

/* "duplicate", "gap", ... ; NULL for an unknown kind. */
const char *dedup_kind_name(enum dedup_kind kind);
/* Returns 0 and sets *out for a known name, else -1. */
int dedup_kind_parse(const char *name, enum dedup_kind *out);

/* Per-record verdicts from dedup_tracker_observe(). */
enum dedup_verdict {
        DEDUP_V_OK,
        DEDUP_V_BASELINE,   /* first record of a pair, accepted as-is */
        DEDUP_V_GAP_OPENED, /* record accepted; it skipped sequences */
        DEDUP_V_OUT_OF_ORDER,
        DEDUP_V_DUPLICATE,
        DEDUP_V_FENCED,
        DEDUP_V_MALFORMED,
        DEDUP_V_UNTRACKED,
        DEDUP_V_REDELIVERED, /* the id was seen before; wins over the
                                sequence verdict, which is still counted */
};

/* Counters of one part; the caller persists them with the part's offset. */
struct dedup_counts {
        uint64_t records; /* every record observed */
        uint64_t untracked;
        uint64_t anomalies[DEDUP_KIND__ANOMALY_CNT]; /* records, or gaps */
        uint64_t missing;   /* records in confirmed gaps still missing
                               (saturating): a recovered record lowers it */
        uint64_t recovered; /* records that filled a confirmed gap (each
                               also out_of_order) */
        uint64_t unknown;   /* records of gaps open when retention deleted
                               unread records (they may have been among
                               them): neither missing nor found; a record
                               that fills one lowers it */
        uint64_t ids;       /* records whose id the window checked */
};

/* a + b, saturating at UINT64_MAX: how every counter above adds, and how
 * a reader summing them (several parts, several rows) must add too. */
uint64_t dedup_sat_add(uint64_t a, uint64_t b);

struct dedup_config {
        /* An open gap is confirmed once it has been open this many later
         * records on its part, or this many ms, whichever comes first. */
        uint64_t gap_grace_records; /* 0 = never by records */
        int64_t gap_grace_ms;       /* 0 = never by time */
        int64_t idle_ttl_ms;        /* 0 = never expire idle pairs */
        uint32_t max_open_gaps;     /* per pair; past it the oldest is
                                       confirmed early. >= 1 */
        /* Seqs a topic-scoped stream keeps between the lowest not yet
         * settled and the highest seen (dedup/topic.h); 0 = the default,
         * DEDUP_TOPIC_WINDOW_DEFAULT.  Rounded up to a power of two. */
        uint32_t topic_window;
        struct dedup_window_config {
                uint64_t max_ids;   /* per window; 0 = ids are not checked */
                int64_t max_age_ms; /* 0 = no age bound */
        } window;
};

void dedup_config_defaults(struct dedup_config *conf);

/* One anomaly (or state change), coalesced: consecutive records of the
 * same kind, pair and contiguous seq (or, for malformed, at consecutive
 * offsets of the same part) become one event with count > 1. */
struct dedup_event {
        enum dedup_kind kind;
        uint32_t part;
        const char *producer;   /* NULL for malformed without a producer */
        size_t producer_len;    /* valid until dedup_tracker_events_clear() */
        int32_t epoch;          /* -1 when unknown */
        int64_t seq_lo, seq_hi; /* -1 when unknown */
        int64_t offset_lo, offset_hi; /* records that showed it; for a gap
                                         the record that opened it */
        int64_t first_offset;         /* duplicate: offset of the first copy of
                                 seq_lo, -1 if outside recent history;
                                 redelivered: the first copy of the first
                                 record */
        int64_t first_offset_hi;      /* redelivered: first copy of the last
                                    record; else -1 */
        uint32_t first_part; /* redelivered: part of the first copies */
        size_t id_len;       /* redelivered: the first record's id, whole
                                 length; id holds min(id_len,
                                 DEDUP_ID_EVIDENCE_MAX) bytes */
        unsigned char id[DEDUP_ID_EVIDENCE_MAX];
        uint64_t count; /* records, or missing records for a gap */
        int64_t when_ms;
        unsigned malformed_bits; /* DEDUP_HDR_* missing or bad */
};

/* An open gap: [lo, hi] of epoch, not yet confirmed. */
struct dedup_gap {
        int32_t epoch;
        int64_t lo, hi;
        int64_t opened_offset;
        int64_t opened_ms;
        uint64_t opened_rec; /* part record count when it opened */
        int unknown;         /* a confirmed gap: it was open across a
                                coverage hole (counted unknown, not
                                missing) */
};

struct dedup_run {
        int64_t seq, offset; /* first record of the run */
        uint32_t len;        /* seq and offset both advance by one */
};

/* A copy of one pair's state, as read for persistence or restored. */
struct dedup_pair_view {
        uint32_t part;
        const char *producer;
        size_t producer_len;
        int32_t epoch;
        int64_t last_seq; /* last seq accepted in epoch; -1 = none, so
                                the next expected is last_seq + 1 */
        int64_t last_offset;
        int64_t last_ms;
        uint64_t records;
        int rebaseline; /* a coverage hole precedes the next record: the
                           next accepted seq may jump ahead (no gap) */
        int64_t pid;    /* eos.pid of the pair's session, -1 unknown */
        /* The producer ids its producer's current one replaced, oldest
         * first, -1 = none: a write from one of them is a zombie's.  Read
         * from the producer (one for all its pairs); on restore the list of
         * the pair written last wins. */
        int64_t retired_pids[DEDUP_RETIRED_PIDS];
        /* The record time of the first record of the producer's current
         * session, -1 unknown: a write of an older session after it is
         * fenced.  Read from the producer, restored from the pairs of
         * that session. */
        int64_t session_ms;
        struct dedup_run runs[DEDUP_HISTORY_RUNS];
        const struct dedup_gap *gaps; /* owned by the tracker (or caller on
                                         restore) */
        uint32_t ngaps;
        /* Confirmed gaps of the current epoch still remembered (at most
         * DEDUP_DONE_GAPS, oldest first), what of them is still missing:
         * a late record inside one is out_of_order, not a duplicate. */
        const struct dedup_gap *done_gaps;
        uint32_t ndone;
        int done_changed; /* they changed since the last dirty_clear (the
                             caller may skip rewriting them otherwise) */
        /* A hint: the pair was restored, or was dirty at a dirty_clear
         * since it appeared, so the caller has most likely stored it
         * already (update it rather than insert it).  Only a hint: a
         * caller whose commit failed calls neither restore nor
         * dirty_clear, but a store may lose rows the tracker knows. */
        int stored;
};

struct dedup_tracker;

/* Returns NULL on allocation failure.  conf is copied. */
struct dedup_tracker *dedup_tracker_new(const struct dedup_config *conf);
void dedup_tracker_free(struct dedup_tracker *tr);

/*
 * Declares part (growing the table as needed).  from_log_start: the part is
 * audited from offset 0, so a producer's first record must have seq 0.
 * Returns 0 or -1 on allocation failure.
 */
int dedup_tracker_part_add(struct dedup_tracker *tr, uint32_t part,
                           int from_log_start);
int dedup_tracker_part_from_log_start(const struct dedup_tracker *tr,
                                      uint32_t part);

/*
 * Records preceding the next one were lost to retention (a coverage gap).
 * What is known stays: each pair of part keeps its epoch, last seq and
 * producer id (a lower epoch is still fenced, a seq already seen still a
 * duplicate); only "a higher seq opens a gap" is relaxed for the pair's
 * next accepted record, since the records in between may be the deleted
 * ones (a new session's seqs likewise).  Open gaps of the part may lie in
 * the deleted records: each becomes a DEDUP_KIND_GAP_UNKNOWN event,
 * counted in unknown, never missing (a record that fills it later is
 * out_of_order).  The part stops being audited from its log start.
 */
void dedup_tracker_part_rebaseline(struct dedup_tracker *tr, uint32_t part);

/*
 * A compacted topic's partition: the log cleaner removes records on
 * purpose, so a seq that jumps ahead is accepted as a new baseline instead
 * of opening a gap (duplicates and fenced writes are still found).  Not
 * persisted: the caller sets it from the topic's cleanup.policy on start.
 */
void dedup_tracker_part_set_compacted(struct dedup_tracker *tr, uint32_t part,
                                      int compacted);

struct dedup_counts *dedup_tracker_part_counts(struct dedup_tracker *tr,
                                               uint32_t part);

/*
 * Sets the caller's wall clock (ms) for the records that follow: the
 * time of records without a timestamp (h->ts_ms <= 0), the upper bound
 * of record times, and the detection time of events (when_ms).
 *
 * Everything else runs on the records' clock: the latest record time
 * observed (or restored).  A pair's last_ms, a gap's opened_ms and an id
 * generation's times are record times, and dedup_tracker_tick() compares
 * them with the records' clock, not with the wall clock: an audit that
 * reads a week-old backlog gives the verdicts a live one gave.  So the
 * clock stands still while no record comes, unless the caller, caught up
 * with the log, advances it (dedup_tracker_clock_advance()): otherwise a
 * quiet tracker confirms no gap by time and expires nothing (gaps are
 * still confirmed by later records, at a scan's end, and by the open-gap
 * bound).
 */
void dedup_tracker_begin(struct dedup_tracker *tr, int64_t now_ms);

/*
 * Moves the records' clock forward to now_ms (never back): for a caller
 * at the head of the log (every part read to its end, no backlog), where
 * the time of the next record, whenever it comes, is at least now_ms, so
 * the wall clock is the records' clock.  Without it an idle live topic
 * would confirm no gap by time and expire nothing.  A caller replaying a
 * backlog must not call it: its verdicts run on record time.
 */
void dedup_tracker_clock_advance(struct dedup_tracker *tr, int64_t now_ms);

/*
 * Classifies one record of part at offset.  Returns the verdict; on
 * allocation failure returns DEDUP_V_MALFORMED with tr's error flag set
 * (see dedup_tracker_failed()).  The part must have been added.
 */
enum dedup_verdict dedup_tracker_observe(struct dedup_tracker *tr,
                                         uint32_t part, int64_t offset,
                                         const struct dedup_hdrs *h);

/*
 * Starts loading what observing h on part will read: the producer's
 * bytes (the pair lookup compares them) and the id window's filter block
 * (h->id_hashed set, and a window).  Called a few records ahead of
 * dedup_tracker_observe(), it hides those cache misses.  Reads the
 * tracker only; changes nothing.
 */
void dedup_tracker_prefetch(const struct dedup_tracker *tr, uint32_t part,
                            const struct dedup_hdrs *h);

/* Non-zero after an allocation failure: state can no longer be trusted. */
int dedup_tracker_failed(const struct dedup_tracker *tr);

/* Confirms open gaps past the grace period and expires idle pairs. */
void dedup_tracker_tick(struct dedup_tracker *tr);

/* Confirms every open gap (end of a scan). */
void dedup_tracker_confirm_all(struct dedup_tracker *tr);

/* Events since the last clear, oldest first. */
const struct dedup_event *dedup_tracker_events(const struct dedup_tracker *tr,
                                               size_t *n);
void dedup_tracker_events_clear(struct dedup_tracker *tr);

/*
 * Pairs changed since the last dirty_clear: calls cb for each with a view
 * valid only during the call.  Expired pairs are reported as
 * DEDUP_KIND_EXPIRED events instead.
 */
typedef int(dedup_pair_cb)(void *opaque, const struct dedup_pair_view *pv);
int dedup_tracker_dirty_foreach(struct dedup_tracker *tr, dedup_pair_cb *cb,
                                void *opaque);
void dedup_tracker_dirty_clear(struct dedup_tracker *tr);

/*
 * Orders the pairs dirty_foreach visits by part, then producer bytes
 * (memcmp, a prefix first: SQLite's BINARY order), so that a caller
 * writing them into a B-tree keyed that way walks it once in key order
 * instead of hopping between its pages.  Takes O(n log n) over the dirty
 * pairs and a temporary array; on allocation failure the order stays as
 * it is (which is only slower).
 */
void dedup_tracker_dirty_sort(struct dedup_tracker *tr);

/* Every pair (for reports); same rules as dirty_foreach. */
int dedup_tracker_foreach(struct dedup_tracker *tr, dedup_pair_cb *cb,
                          void *opaque);

/* The pairs of part only (a partition's state, exported to move it to
 * another process); same rules as dirty_foreach. */
int dedup_tracker_part_foreach(struct dedup_tracker *tr, uint32_t part,
                               dedup_pair_cb *cb, void *opaque);

/*
 * Forgets part's state: its pairs with their open and confirmed gaps are
 * dropped without any event (they are not expired: another process owns
 * the partition now), its counters are zeroed and it is no longer audited
 * from its log start.  The part stays added, so that a state can be
 * restored into it (dedup_tracker_restore(), the counters through
 * dedup_tracker_part_counts()).  What is not per part stays: the id
 * windows, a producer's epoch and retired ids as other parts knew them,
 * the transaction check.  Call between batches (after the caller
 * persisted the part's dirty pairs and events).
 */
void dedup_tracker_part_forget(struct dedup_tracker *tr, uint32_t part);

/*
 * A partition's log was truncated (an unclean leader election): the
 * records the audit accepted at offsets >= offset are gone from it, and
 * are taken back, one entry of rw per producer that had any: its first
 * such record was seq of epoch, records of them were accepted, and the
 * last seq it had accepted before offset in epoch was last_seq (-1: none;
 * seq - 1 when the caller does not know).  Each such pair of part goes
 * back to epoch and last_seq, so the seqs after it are holes again:
 * records written again fill them as if they came for the first time; a
 * later seq past them opens a gap over the rest (missing once confirmed,
 * as any gap).  The open gaps that records taken back had opened go, its
 * history runs are cut at offset, its records and the part's lowered by
 * records.  The pairs are marked dirty; events, anomaly counters and id
 * windows stay as they are (what was seen was seen).  A producer without
 * a pair on part is skipped.  Returns the number of pairs rewound, or -1
 * on a bad argument (nothing changed before it).
 */
struct dedup_rewind {
        const char *producer;
        size_t producer_len;
        int32_t epoch;
        int64_t seq;      /* the first record taken back */
        int64_t last_seq; /* the last accepted before offset; < seq */
        uint64_t records;
};
int dedup_tracker_part_rewind(struct dedup_tracker *tr, uint32_t part,
                              int64_t offset, const struct dedup_rewind *rw,
                              size_t n);

/*
 * Restores a pair read back from persistence (gaps are copied).  The part
 * must have been added.  Not marked dirty.  Returns 0, or -1 on allocation
 * failure or a bad view.
 */
int dedup_tracker_restore(struct dedup_tracker *tr,
                          const struct dedup_pair_view *pv);

/* ------------------------------------------------------------------ */
/* Id windows                                                          */
/* ------------------------------------------------------------------ */

#define DEDUP_WINDOW_GENS 16 /* generations per window */
/*
 * A window keeps 112 bits of an id's hash: lo and hi & DEDUP_WINDOW_HI_MASK.
 * Ids that differ only above are one id to it (odds about n / 2^112 for a
 * new id among n remembered).  The ids it hands out (rows, lookups) are
 * cut so, and it cuts what it is given, so that a store need keep only
 * these 14 bytes of each.
 */
#define DEDUP_WINDOW_HI_MASK (((uint64_t)1 << 48) - 1)

void dedup_id_hash(const void *p, size_t len, struct dedup_id *out);
void dedup_id_hash_seeded(const void *p, size_t len, uint32_t seed,
                          struct dedup_id *out);

/*
 * Adds an id window (one per topic) and returns its index in *window.
 * Without any window, or with conf.window.max_ids == 0, ids are ignored.
 */
int dedup_tracker_window_add(struct dedup_tracker *tr, uint32_t *window);
/*
 * The memory of window's filters (from 2 MiB up: 2 MiB-aligned, a
 * multiple of 2 MiB), live as long as the tracker.  For the caller to advise the kernel (huge pages:
 * every check is a random access into it); the engine does no system call.
 */
void *dedup_tracker_window_filters(const struct dedup_tracker *tr,
                                   uint32_t window, size_t *bytes);
/* Makes part's records checked against window (which must exist). */
void dedup_tracker_part_set_window(struct dedup_tracker *tr, uint32_t part,
                                   uint32_t window);

/*
 * The caller's store of committed ids: is id in the closed generation gen?
 * Returns 1 and sets *part, *offset of its first copy (*part UINT32_MAX
 * and *offset -1 when unknown); 0 when not there; -1 on an error (the
 * tracker then fails: dedup_tracker_failed()).  Asked only when the
 * generation's filter says "maybe"; open generations are answered from
 * memory.
 */
typedef int(dedup_id_lookup_cb)(void *opaque, uint32_t window, uint64_t gen,
                                const struct dedup_id *id, uint32_t *part,
                                int64_t *offset);
void dedup_tracker_set_id_lookup(struct dedup_tracker *tr,
                                 dedup_id_lookup_cb *cb, void *opaque);

/* An id of generation gen and where it was first seen. */
struct dedup_id_row {
        uint64_t gen;
        struct dedup_id id;
        uint32_t window;
        uint32_t part;
        int64_t offset;
};

/*
 * A generation: ids first seen between first_ms and last_ms.  The current
 * generation of a window is open: the tracker holds its ids (rows) in
 * memory, and the store keeps them as they came, batch by batch.  Once it
 * is closed (full, or old) the store gets all its ids at once, sorted by
 * id, to keep them indexed; the tracker keeps only its filter.
 */
struct dedup_gen_view {
        uint32_t window;
        uint64_t gen; /* unique within the tracker, increasing */
        int64_t first_ms, last_ms;
        uint64_t ids;
        int closed;
};

/*
 * What the last batch did to the windows, for persistence, in this order:
 *  1. ids first seen (oldest first), to append to their open generation;
 *  2. generations created or changed;
 *  3. generations closed, each with all of its ids sorted by id (lo, then
 *     hi, as unsigned) - including ids of step 1;
 *  4. generations dropped: delete them and their ids (they may include
 *     generations of steps 1-3).
 * All cleared by dedup_tracker_dirty_clear().
 */
const struct dedup_id_row *
dedup_tracker_ids_new(const struct dedup_tracker *tr, size_t *n);
typedef int(dedup_gen_cb)(void *opaque, const struct dedup_gen_view *gv);
int dedup_tracker_gens_dirty_foreach(struct dedup_tracker *tr,
                                     dedup_gen_cb *cb, void *opaque);
typedef int(dedup_gen_rows_cb)(void *opaque, const struct dedup_gen_view *gv,
                               const struct dedup_id_row *rows, size_t n);
/* Returns 0, cb's non-zero result, or -1 when memory ran out. */
int dedup_tracker_gens_closed_foreach(struct dedup_tracker *tr,
                                      dedup_gen_rows_cb *cb, void *opaque);
const uint64_t *dedup_tracker_gens_dropped(const struct dedup_tracker *tr,
                                           size_t *n);
/* How many generations closed since dedup_tracker_dirty_clear() (step 3):
 * a commit right after one writes each id once, sorted, where a commit
 * later also rewrites the ids it had appended in step 1. */
size_t dedup_tracker_gens_closed(const struct dedup_tracker *tr);
/* Whether gen is window's current, open generation (new ids of any other
 * generation need no step 1: steps 3 or 4 take care of them). */
int dedup_tracker_gen_open(const struct dedup_tracker *tr, uint32_t window,
                           uint64_t gen);

/*
 * Restores a generation (oldest first), then its ids: a closed one's with
 * dedup_tracker_id_restore(), an open one's with
 * dedup_tracker_row_restore().  Restoring more than DEDUP_WINDOW_GENS
 * generations into a window drops the oldest (reported as dropped); an
 * open generation followed by another is closed (reported as closed).
 * Returns 0, or -1 on a bad view.
 */
int dedup_tracker_gen_restore(struct dedup_tracker *tr,
                              const struct dedup_gen_view *gv);
/* Returns 0, or -1 when gen is not a live closed generation of window. */
int dedup_tracker_id_restore(struct dedup_tracker *tr, uint32_t window,
                             uint64_t gen, const struct dedup_id *id);
/* Returns 0, or -1 when row->gen is not the open generation of
 * row->window, or memory ran out. */
int dedup_tracker_row_restore(struct dedup_tracker *tr,
                              const struct dedup_id_row *row);

/* Ids a window holds now (sum over its live generations). */
uint64_t dedup_tracker_window_ids(const struct dedup_tracker *tr,
                                  uint32_t window);

size_t dedup_tracker_pairs(const struct dedup_tracker *tr);
size_t dedup_tracker_open_gaps(const struct dedup_tracker *tr);
/* Bytes the tracker holds on the heap (tables, names, gaps). */
size_t dedup_tracker_memory(const struct dedup_tracker *tr);

#endif /* EOSAUDIT_DEDUP_H */
