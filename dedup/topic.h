/*
 * topic.h - topic-scoped streams: records numbered across every partition
 * of their topic.
 *
 * A producer that does not know a record's partition when it stamps it (a
 * client's interceptor runs before the partitioner) stamps eos.scope:
 * topic, and eos.seq numbers the stream (eos.producer, eos.epoch, topic)
 * across all partitions of the topic, from 0, +1 per record
 * (schema/HEADERS.md, contract version 2).  The tracker reconciles such a
 * stream across the parts the caller tied to one topic
 * (dedup_tracker_part_set_topic()):
 *
 *   a seq seen twice anywhere in the topic          -> DUPLICATE, with the
 *                     first copy's part and offset while it is among the
 *                     stream's last DEDUP_TOPIC_LOCS seqs
 *   a seq no part showed once every part of the topic has been read past
 *   its time plus the gap grace                     -> GAP (missing)
 *   a record filling a confirmed gap still remembered -> OUT_OF_ORDER,
 *                                                      recovered
 *   a lower epoch written (by record time) after the producer's newer
 *   epoch began                                     -> FENCED
 * and the id window finds redelivered records as for any record.  Per-part
 * order is not asserted: a seq lower than one already seen is no anomaly
 * (a producer used from several threads stamps and appends in different
 * orders).
 *
 * Invariants
 *  - Part of the tracker (same thread, purity and heap accounting); the
 *    dedup.h entry points (observe, tick, confirm_all, dirty_clear,
 *    part_rebaseline) run it; a record takes this path when its
 *    eos.scope is topic.
 *  - Time: a seq's time is bounded by the latest record time among the
 *    records that showed it was skipped or that share its word of 64
 *    seqs.  A part is read past time t when it has given a record of time
 *    >= t, or the caller said it is at its end
 *    (dedup_tracker_part_at_end()) and the records' clock is >= t.  A
 *    topic is past t when all its parts are.  gap_grace_ms applies;
 *    gap_grace_records does not (a count on one partition says nothing
 *    of another); gap_grace_ms 0: gaps are confirmed only by
 *    dedup_tracker_confirm_all() and the window bound.
 *  - Memory per stream: about 200 bytes, the evidence of its last
 *    DEDUP_TOPIC_LOCS seqs (8 bytes each, once a record came) and the
 *    window: 16 bytes per 64 seqs between the lowest seq not yet settled
 *    and the highest seen, up to conf.topic_window seqs (262,144 by
 *    default: 64 KiB).  A record further ahead than the window first
 *    settles its lowest seqs: those not seen are confirmed missing early,
 *    as the open-gap bound does; one that comes later is out_of_order
 *    while its gap is among the DEDUP_TOPIC_DONE remembered, else a
 *    duplicate.
 *  - The first record of a stream sets its floor: when every part of the
 *    topic is audited from its log start, 0 (seqs below it are missing
 *    unless they come); else its own seq, and seqs below the floor are
 *    accepted untracked (DEDUP_V_BASELINE), never duplicates or gaps.
 *  - Persistence mirrors pairs: dirty streams (and removed ones) since
 *    dedup_tracker_dirty_clear() are walked with dedup_topic_dirty_foreach()
 *    and put back with dedup_topic_restore().
 */
#ifndef EOSAUDIT_DEDUP_TOPIC_H
#define EOSAUDIT_DEDUP_TOPIC_H

#include <stddef.h>
#include <stdint.h>

#include "dedup.h"

#define DEDUP_TOPIC_WINDOW_DEFAULT 262144u /* seqs per stream */
#define DEDUP_TOPIC_WINDOW_MIN 64u
#define DEDUP_TOPIC_WINDOW_MAX (1u << 30)
#define DEDUP_TOPIC_LOCS 1024 /* latest seqs whose (part, offset) is kept */
#define DEDUP_TOPIC_DONE 16   /* confirmed gaps remembered per stream */

/*
 * Ties part to topic, a small caller-chosen index (one per topic).  A part
 * belongs to one topic; parts added later (new partitions) are tied the
 * same way.  A topic-scoped record on a part tied to no topic is
 * malformed (DEDUP_HDR_SCOPE): it cannot be reconciled.  Returns 0, or -1
 * on allocation failure or a part not added.
 */
int dedup_tracker_part_set_topic(struct dedup_tracker *tr, uint32_t part,
                                 uint32_t topic);

/*
 * The caller has read part to its end (no record after the last one read
 * is readable now): the part counts as read past the records' clock.  A
 * record observed on the part ends that.  Not persisted.
 */
void dedup_tracker_part_at_end(struct dedup_tracker *tr, uint32_t part,
                               int at_end);

/* A seq of a stream and where it was seen (part -1: unknown). */
struct dedup_topic_loc {
        int64_t seq;
        uint32_t part;
        int64_t offset;
};

/* A confirmed gap of a stream, counted on part (the part of the record
 * above it when known, else the topic's first part); offset: that
 * record's, -1 unknown; unknown: counted unknown (a coverage hole), not
 * missing. */
struct dedup_topic_gap {
        int64_t lo, hi;
        uint32_t part;
        int64_t offset;
        int unknown;
};

/*
 * A stream as persisted.  Arrays are valid during the callback only (or,
 * on restore, are the caller's).  words/word_ms cover the words of 64
 * seqs from base / 64 on, nwords of them: bit (seq % 64) of words[i] is
 * set when seq = (base / 64 + i) * 64 + bit was seen.
 */
struct dedup_topic_view {
        uint32_t part; /* the topic's first part: names the topic */
        const char *producer;
        size_t producer_len;
        int32_t epoch;
        int removed;               /* dirty_foreach: expired, delete it */
        int64_t floor, base, next; /* [base, next): not settled */
        int64_t last_ms;
        uint64_t records;
        const uint64_t *words;
        const int64_t *word_ms;
        uint32_t nwords;
        const struct dedup_topic_loc *locs;
        uint32_t nlocs;
        const struct dedup_topic_gap *done;
        uint32_t ndone;
};

typedef int(dedup_topic_cb)(void *opaque, const struct dedup_topic_view *v);

/* Streams changed or removed since the last dirty clear; stops at and
 * returns cb's first non-zero result, -1 when memory ran out. */
int dedup_topic_dirty_foreach(struct dedup_tracker *tr, dedup_topic_cb *cb,
                              void *opaque);
/* Every live stream (reports, tests). */
int dedup_topic_foreach(struct dedup_tracker *tr, dedup_topic_cb *cb,
                        void *opaque);

/* Puts back a stored stream (not dirty); v->part must be tied to a topic.
 * Locations and gaps of parts not added are dropped.  Returns 0, or -1 on
 * allocation failure or a bad view. */
int dedup_topic_restore(struct dedup_tracker *tr,
                        const struct dedup_topic_view *v);

/* Live streams, and seqs not yet settled (summed over streams). */
size_t dedup_topic_streams(const struct dedup_tracker *tr);
uint64_t dedup_topic_unsettled(const struct dedup_tracker *tr);

#endif /* EOSAUDIT_DEDUP_TOPIC_H */
