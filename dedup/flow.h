/*
 * flow.h - lineage of a consume-transform-produce flow: which source
 * records reached the sink, how many times, and how late.  Part of the
 * pure engine (no I/O, no clock, no SQLite, no librdkafka).
 *
 * A record on either side is known by its identity (the auditor's
 * --dedup-key, hashed with dedup_id_hash(): 128 bits).  The engine keeps
 * one entry per outstanding id:
 *
 *   source seen, due, copies == 0        -> LOST (at-most-one: DELIVERED,
 *                                           a filtered record)
 *   source seen, not due, copies == 0    -> PENDING
 *   source seen, copies == 1             -> DELIVERED
 *   source seen, copies >= 2             -> DUPLICATED (at-least-one:
 *                                           DELIVERED, a fan-out)
 *   source seen, copies == 0, prior      -> DELIVERED (its copies were in
 *                                           a sink incarnation since
 *                                           retired: restore only; or a
 *                                           sink truncation left copies
 *                                           it cannot count)
 *   source seen, copies == 0, gone       -> PENDING for good, never due
 *                                           (its record was truncated
 *                                           from the source before a copy
 *                                           was read: dedup_flow_truncated)
 *   sink seen, no source, not yet aged   -> AWAITING (the source copy may
 *                                           still come: sink-before-source)
 *   sink seen, no source, aged           -> UNEXPECTED
 *
 * An outcome is a function of the entry's state, never a one-way latch: a
 * LOST record whose copy comes late turns DELIVERED, an UNEXPECTED sink
 * record whose source shows up turns DELIVERED; the counters move with
 * it, so they are always what the entries say.
 *
 * Due: a source record is due when the processor's committed offset on its
 * source part is past it (dedup_flow_frontier(); exact under exactly-once
 * processing, where offsets and outputs commit in one transaction - the
 * caller applies a frontier only once the sinks have been read up to
 * where they stood when the frontier was read).  Without a frontier
 * (by_frontier = 0) a source record is due once the sink has moved
 * due_records records or due_ms ms (records' time) past it
 * (dedup_flow_tick(); a heuristic: a slow processor reads as loss).
 * A sink-only entry ages (turns UNEXPECTED) once the sources have moved
 * due_records records or due_ms ms past it, and at dedup_flow_finish()
 * (there only, with sinks_at_finish: in a scan whose sinks run ahead of
 * their sources, aging by the sources' progress judged copies unexpected
 * whose sources were still to be read, each an evidence row written and
 * taken back).
 *
 * Counting: delivered, lost, duplicated and pending count source ids (a
 * repeated source id is one entry, counted in source_repeats: the
 * source's own audit reports it); unexpected and awaiting count sink
 * records; duplicate_copies counts the sink copies beyond the first of
 * every DUPLICATED entry.
 *
 * Bounded memory: at most max_ids live entries.  Past it the oldest entry
 * (by arrival) is retired: judged as if due now (a pending source record
 * without a copy becomes LOST, an awaiting sink record UNEXPECTED) and
 * its contribution moves to the retired counters.  A retired entry is not
 * forgotten: on a miss (an id read on either side with no live entry) the
 * engine looks for it among the retired entries not yet persisted, then
 * asks the caller's store (dedup_flow_set_lookup); found, it is revived -
 * live again with its seq and fields, its contribution taken back out of
 * the retired counters - and the record applies to it (a copy of a LOST
 * source turns it DELIVERED, a source of an UNEXPECTED sink record too, a
 * second copy of a DELIVERED one DUPLICATED).  So the bound costs a lookup
 * per miss once something was retired, never a verdict; the revived entry
 * is the youngest and may push another out.  Cost per live id: a 40-byte
 * packed entry, 8 to 16 bytes of hash table and the id's kept bytes plus
 * one (flow_internal.h; dedup_flow_entry_bytes() is the most for an id
 * of DEDUP_FLOW_ID_KEEP bytes; bench/flow.sh measures it from outside:
 * 60 bytes for its ids of 12 bytes).
 *
 * Persistence, as for the tracker: after a batch the caller writes the
 * retired entries (dedup_flow_retired, in order: an id retired, revived
 * and retired again is listed twice, the later view wins), then the dirty
 * ones (dedup_flow_dirty_foreach: a revived entry is live again under
 * the same seq) and dedup_flow_state_get(), all in one
 * transaction, then dedup_flow_dirty_clear(), which marks what was
 * persisted as evidence (dedup_flow_view.evid).  After a restart it restores
 * the state (dedup_flow_state_set) and the live entries in seq order
 * (dedup_flow_restore).
 */
#ifndef EOSAUDIT_DEDUP_FLOW_H
#define EOSAUDIT_DEDUP_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "dedup.h"

#define DEDUP_FLOW_ID_KEEP 32     /* id bytes kept per entry as evidence */
#define DEDUP_FLOW_LAT_BUCKETS 20 /* latency histogram buckets */

enum dedup_flow_expect {
        DEDUP_FLOW_EXACTLY_ONE = 0,
        DEDUP_FLOW_AT_MOST_ONE,
        DEDUP_FLOW_AT_LEAST_ONE,
};

/* "exactly-one", ...; and back (0, or -1 for an unknown name). */
const char *dedup_flow_expect_name(enum dedup_flow_expect e);
int dedup_flow_expect_parse(const char *s, enum dedup_flow_expect *out);

enum dedup_flow_outcome {
        DEDUP_FLOW_PENDING = 0,
        DEDUP_FLOW_DELIVERED,
        DEDUP_FLOW_LOST,
        DEDUP_FLOW_DUPLICATED,
        DEDUP_FLOW_AWAITING,
        DEDUP_FLOW_UNEXPECTED,
        DEDUP_FLOW__OUTCOMES
};

/* Whether o is a verdict that wants evidence: lost, duplicated or
 * unexpected. */
static inline int dedup_flow_outcome_bad(enum dedup_flow_outcome o)
{
        return o == DEDUP_FLOW_LOST || o == DEDUP_FLOW_DUPLICATED ||
               o == DEDUP_FLOW_UNEXPECTED;
}

/* "pending", "delivered", ...; NULL for an unknown one. */
const char *dedup_flow_outcome_name(enum dedup_flow_outcome o);
int dedup_flow_outcome_parse(const char *s, enum dedup_flow_outcome *out);

struct dedup_flow_config {
        enum dedup_flow_expect expect;
        uint64_t max_ids;     /* live entries; >= 1 */
        int by_frontier;      /* due by dedup_flow_frontier() only */
        uint64_t due_records; /* 0: not by records */
        int64_t due_ms;       /* 0: not by time */
        int sinks_at_finish;  /* sink-only entries age at
                                 dedup_flow_finish() only (a scan, which
                                 reads every sink to its end first), not
                                 by due_records/due_ms */
};

void dedup_flow_config_defaults(struct dedup_flow_config *c);

/* The upper bounds (ms) of the latency buckets, inclusive (a latency l
 * counts in the first bucket whose bound is >= l, as Prometheus's "le");
 * the last is open.  Latencies are whole ms, negative ones count as 0. */
extern const int64_t dedup_flow_lat_bounds[DEDUP_FLOW_LAT_BUCKETS];

/* Counters by outcome (see "Counting" above). */
struct dedup_flow_counts {
        uint64_t outcome[DEDUP_FLOW__OUTCOMES];
        uint64_t duplicate_copies;
};

/* What the caller persists besides the entries. */
struct dedup_flow_state {
        struct dedup_flow_counts retired;  /* of retired entries */
        uint64_t source_reads, sink_reads; /* records with an id */
        uint64_t source_repeats;
        uint64_t source_no_id, sink_no_id;
        int64_t source_clock, sink_clock; /* latest record time, ms */
        uint64_t next_seq;
        uint64_t lat[DEDUP_FLOW_LAT_BUCKETS];
        int64_t lat_max_ms;  /* -1: none */
        uint64_t lat_sum_ms; /* of the latencies counted in lat[] */
};

struct dedup_flow_stats {
        struct dedup_flow_counts c; /* live + retired */
        uint64_t source_records;    /* distinct source ids */
        uint64_t source_repeats;
        uint64_t source_no_id, sink_no_id;
        uint64_t sink_records; /* sink records with an id */
        uint64_t live;         /* entries held now */
        uint64_t lat_count;
        uint64_t lat_sum_ms;
        int64_t lat_p50_ms, lat_p99_ms, lat_max_ms; /* -1: none */
};

/* One entry, as read for persistence and evidence, or restored. */
struct dedup_flow_view {
        struct dedup_id id;
        uint64_t seq; /* arrival order, unique, from 1 */
        enum dedup_flow_outcome outcome;
        int src_seen, due;
        uint32_t src_part;
        int64_t src_offset, src_ts;
        uint32_t copies;
        uint32_t sink_part, sink_part_last;
        int64_t sink_offset, sink_offset_last, sink_ts; /* first copy's ts */
        uint64_t born; /* reads counter at arrival (for aging) */
        int latency_done;
        /* A source record whose copies were in a sink topic that was
         * recreated since (a new incarnation, the copies forgotten), or
         * truncated where the engine cannot tell whether copies are left
         * (dedup_flow_truncated()): DELIVERED with no copy, and its
         * copies count from zero (copies is then a lower bound), so a
         * re-delivery is not DUPLICATED.  Also set on a sink-only entry
         * after such a truncation: its source, when it comes, is
         * DELIVERED. */
        int prior;
        /* A source record without a copy whose record was truncated from
         * the source (dedup_flow_truncated()): PENDING for good, never
         * due; read again from the source, a source record as any. */
        int gone;
        /* Its last persisted view was lost, duplicated or unexpected
         * (the caller keeps evidence of those: dedup_flow_outcome_bad()),
         * so a write that is none of them must take that evidence back.
         * Set by dedup_flow_dirty_clear(); the caller sets it in a view it
         * restores or looks up. */
        int evid;
        size_t id_len;                              /* the id's whole length */
        unsigned char id_bytes[DEDUP_FLOW_ID_KEEP]; /* min(id_len, KEEP) */
};

struct dedup_flow;

/* NULL on allocation failure.  conf is copied. */
struct dedup_flow *dedup_flow_new(const struct dedup_flow_config *conf);
void dedup_flow_free(struct dedup_flow *fl);

/*
 * A source record of part (a caller-chosen index, as the tracker's) at
 * offset, with the record's time ts_ms (<= 0: none) and id (NULL or
 * empty: none, only counted).  Returns 0, or -1 when memory ran out (the
 * flow is then failed: dedup_flow_failed()).
 */
int dedup_flow_source(struct dedup_flow *fl, uint32_t part, int64_t offset,
                      int64_t ts_ms, const void *id, size_t id_len);
/* A sink record: same rules. */
int dedup_flow_sink(struct dedup_flow *fl, uint32_t part, int64_t offset,
                    int64_t ts_ms, const void *id, size_t id_len);

/* The processor has committed offset on source part: every source record
 * of part below it is due, now and when it is read later. */
void dedup_flow_frontier(struct dedup_flow *fl, uint32_t part,
                         int64_t committed);

/* Applies due_records / due_ms (sources, unless by_frontier; sink-only
 * entries always). */
void dedup_flow_tick(struct dedup_flow *fl);

/* End of a scan: every sink-only entry is aged (UNEXPECTED); with
 * sources_due, every source record is due as well. */
void dedup_flow_finish(struct dedup_flow *fl, int sources_due);

int dedup_flow_failed(const struct dedup_flow *fl);

void dedup_flow_stats_get(const struct dedup_flow *fl,
                          struct dedup_flow_stats *st);
/* The ids outstanding between the sides, as dedup_flow_stats_get() counts
 * them in c.outcome[DEDUP_FLOW_PENDING] and [DEDUP_FLOW_AWAITING], without
 * the rest (latency percentiles): what the consumer's pacing reads after
 * every batch.  Either pointer may be NULL. */
void dedup_flow_outstanding(const struct dedup_flow *fl, uint64_t *pending,
                            uint64_t *awaiting);

/* A hint, no effect on the state: brings the memory a read of id will
 * touch towards the cache, a few records ahead of it (the table is
 * larger than any cache: each read misses on its slot, its entry and its
 * bytes).  Stage 0 the slot; stage 1, some records later, the entry the
 * slot names; stage 2, later still, the entry's id bytes. */
void dedup_flow_prefetch(const struct dedup_flow *fl,
                         const struct dedup_id *id, int stage);

/* Calls cb for every live entry whose outcome is o (any when o is
 * DEDUP_FLOW__OUTCOMES), in arrival order; cb returning non-zero stops. */
typedef int(dedup_flow_cb)(void *opaque, const struct dedup_flow_view *v);
int dedup_flow_foreach(const struct dedup_flow *fl, enum dedup_flow_outcome o,
                       dedup_flow_cb *cb, void *opaque);

/* Persistence (see above). */
int dedup_flow_dirty_foreach(const struct dedup_flow *fl, dedup_flow_cb *cb,
                             void *opaque);
const struct dedup_flow_view *dedup_flow_retired(const struct dedup_flow *fl,
                                                 size_t *n);
void dedup_flow_dirty_clear(struct dedup_flow *fl);
/* Whether anything awaits persistence (dirty or retired entries). */
int dedup_flow_dirty(const struct dedup_flow *fl);
void dedup_flow_state_get(const struct dedup_flow *fl,
                          struct dedup_flow_state *s);
void dedup_flow_state_set(struct dedup_flow *fl,
                          const struct dedup_flow_state *s);
/* Restores a live entry (not dirty); in seq order.  0, or -1 (memory, or
 * an id already there). */
int dedup_flow_restore(struct dedup_flow *fl, const struct dedup_flow_view *v);

/*
 * A partition of one side truncated at offset d (an unclean leader
 * election: records read, then gone from the log; the caller found d).
 * Unlike a recreated topic (a new incarnation, which the caller handles
 * in its store), the entries are corrected, live ones and the retired
 * ones not yet persisted:
 *
 * DEDUP_FLOW_SIDE_SINK, part a sink part: every copy on part at offset
 * >= d is gone.  An entry keeps its first and last copy and a count, and
 * copies read on one part come in offset order, so what is left is known
 * for one copy, for two (both ends kept), and for more when the last copy
 * is on part below d (none gone).  An entry whose copies are all gone is
 * outstanding again: PENDING (not due, queued by source offset, due by
 * the rules again: due_records counted from now, due_ms from the record's
 * time as before, a frontier applied from now on, even the same one), so
 * LOST if the processor does not copy it again, DELIVERED once (not
 * DUPLICATED) if it does.  An entry with copies left keeps those (a
 * DUPLICATED one with one left turns DELIVERED).  Unknowable: more than
 * two copies with the copies between the first and the last on part or
 * elsewhere (the last not on part below d).  The engine then keeps the
 * copies surely left (the ends not gone: 0, 1 or 2) and sets prior: with
 * none left the entry reads DELIVERED, not LOST, and a copy written
 * again counts from the ones kept, so it never turns a false LOST or a
 * false DUPLICATED (a missed one at worst: a loss or a duplicate among
 * copies it can no longer count).  An entry already prior stays
 * DELIVERED with no copy left.
 *
 * DEDUP_FLOW_SIDE_SOURCE, part a source part: a source record at offset
 * >= d of part that was outstanding (PENDING or LOST, no copy) no longer
 * exists, so no copy is owed: it is gone (view.gone), PENDING for good,
 * never due, never LOST.  A copy of it read later was made before the
 * truncation: DELIVERED, not UNEXPECTED.  Written again (the same id read
 * from the source), it is a source record again, normal rules.  A record
 * with a copy keeps its verdict (the processor did copy it).  The part's
 * frontier goes back to d: a record written at d or past it again is due
 * by a frontier applied from then on.
 *
 * Sink-only entries follow the sink rule (copies gone are not counted:
 * UNEXPECTED counts fewer records).  Changed entries are dirty (their
 * verdict changes reach the caller as any other: a DUPLICATED turned
 * DELIVERED has evid set, and its evidence is taken back); changed
 * retired views go to the retired list (dedup_flow_retired()) and the
 * retired counters move with them.  *changed (may be NULL): how many
 * entries changed.  0, or -1 (out of memory: the flow is failed).
 */
enum dedup_flow_side {
        DEDUP_FLOW_SIDE_SOURCE = 0,
        DEDUP_FLOW_SIDE_SINK,
};
int dedup_flow_truncated(struct dedup_flow *fl, enum dedup_flow_side side,
                         uint32_t part, int64_t d, uint64_t *changed);
/* The same truncation applied to v, a retired view the caller's store
 * holds (its latest, persisted), after dedup_flow_truncated(): retired
 * entries are judged (due), so a source record whose copies are all gone
 * is LOST there until a copy written again revives it.  1 when it changed
 * (its new view is in the retired list, the counters moved), 0 when not
 * (or when the engine holds a newer view of the id: live or in the
 * retired list), -1 when the flow failed. */
int dedup_flow_retired_truncated(struct dedup_flow *fl,
                                 enum dedup_flow_side side, uint32_t part,
                                 int64_t d, const struct dedup_flow_view *v);

/* Where retired entries already persisted are found again: fills *out
 * with the latest retired entry of id (outcome as it was counted, due set)
 * and returns 1; 0 when there is none (or it names a part the flow does
 * not know); -1 on failure (the flow is then failed).  Called only on a
 * miss, once the retired counters are not all zero. */
typedef int(dedup_flow_lookup_cb)(void *opaque, const struct dedup_id *id,
                                  struct dedup_flow_view *out);
void dedup_flow_set_lookup(struct dedup_flow *fl, dedup_flow_lookup_cb *cb,
                           void *opaque);

/* Bytes per live entry: the entry and its share of the hash table at the
 * table's highest load. */
size_t dedup_flow_entry_bytes(void);
/* Bytes held now. */
size_t dedup_flow_memory(const struct dedup_flow *fl);

#endif /* EOSAUDIT_DEDUP_FLOW_H */
