/*
 * ledger_flow.h - the flow audit's part of the ledger (schema/0006_flow.sql,
 * 0016_flow_store.sql): the entries of the flow engine (dedup/flow.h), its
 * state, and the figures and evidence reports read.
 *
 * Invariants
 *  - Once ledger_flow_load() has attached a flow, every ledger_commit()
 *    writes its dirty entries, its retired ones and its state in the same
 *    transaction as the offsets of the records that changed them, then
 *    clears its dirty set: a kill -9 at any point replays the batch from
 *    the old offsets against the old entries, so no count changes.
 *  - Entries are packed views, appended batch by batch and closed into
 *    files written once (a file is durable before the transaction that
 *    names it commits; one no row names is removed at the next load); the
 *    latest view of an id counts, and a retired one (any outcome) is found
 *    again when its id shows up on either side.
 *  - flow_entries holds the evidence only: a row per entry whose latest
 *    view is lost, duplicated or unexpected (live = 1 held, 0 retired,
 *    2 judged in a topic's old incarnation).
 *  - Strings handed to callbacks belong to SQLite: valid during the call.
 */
#ifndef EOSAUDIT_LEDGER_FLOW_H
#define EOSAUDIT_LEDGER_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "../../dedup/flow.h"
#include "ledger.h"

/*
 * Restores fl (new, empty) from the ledger - its state and its live
 * entries, in arrival order; an entry whose topic or partition is not
 * among parts[0..nparts) is dropped with a warning - and attaches it, so
 * that ledger_commit() writes it from now on.  parts and expect ("exactly-
 * one", ... as the report shows it) are borrowed for the life of lg.
 * Returns 0, or -1 with errstr.
 */
int ledger_flow_load(struct ledger *lg, struct dedup_flow *fl,
                     const struct ledger_part *parts, size_t nparts,
                     const char *expect, char *errstr, size_t errstr_size);

/*
 * Sink or source part (a flow part, as the engine numbers them) of the
 * attached flow was truncated at offset d (an unclean leader election;
 * not a recreated topic, which is a new incarnation): the engine's
 * entries are corrected (dedup_flow_truncated()), and so are the retired
 * ones the store holds (dedup_flow_retired_truncated(): their new views
 * join the engine's retired list).  Nothing is written here: the next
 * ledger_commit() writes it all, with the truncation the caller noted
 * (ledger_trunc_pending()), in one transaction.  *changed: the entries
 * changed.  0, or -1 with errstr (out of memory, the store unreadable:
 * the flow is then not to be committed).
 */
int ledger_flow_truncated(struct ledger *lg, enum dedup_flow_side side,
                          uint32_t part, int64_t d, uint64_t *changed,
                          char *errstr, size_t errstr_size);

/* How many views the flow's batches gather before they are closed into a
 * file of their own (schema/0016_flow_store.sql); 0: the default,
 * 131,072.  For tests, which want files from a few ids. */
void ledger_flow_gen_views_set(struct ledger *lg, size_t views);

/* The figures of the last commit.  present = 0: no flow was ever
 * audited in this ledger (the rest is zero). */
struct ledger_flow_summary {
        int present;
        char expect[16];
        uint64_t source_records, delivered, lost, duplicated, duplicate_copies,
            pending, awaiting, unexpected, source_repeats, source_no_id,
            sink_no_id, sink_records, live, lat_count;
        int64_t lat_p50_ms, lat_p99_ms, lat_max_ms; /* -1: none */
        int64_t updated_ms;
        /* The latency histogram: lat[b] latencies within
         * dedup_flow_lat_bounds[b] (not cumulative; they add up to
         * lat_count), and their sum. */
        uint64_t lat[DEDUP_FLOW_LAT_BUCKETS];
        uint64_t lat_sum_ms;
};

int ledger_flow_summary(struct ledger *lg, struct ledger_flow_summary *s,
                        char *errstr, size_t errstr_size);

/* One entry as stored (evidence).  Topics NULL when unknown (a sink-only
 * entry has no source, a lost one no sink); partitions and offsets -1. */
struct ledger_flow_row {
        int64_t seq;
        const char *outcome;
        int live;
        const char *src_topic;
        int32_t src_partition;
        int64_t src_offset, src_ts;
        uint32_t copies;
        const char *sink_topic;
        int32_t sink_partition;
        int64_t sink_offset;
        const char *sink_topic_last;
        int32_t sink_partition_last;
        int64_t sink_offset_last, sink_ts;
        const void *id;
        size_t id_stored; /* bytes at id, at most DEDUP_FLOW_ID_KEEP */
        int64_t id_len;   /* the id's whole length */
};

typedef int(ledger_flow_row_cb)(void *opaque, const struct ledger_flow_row *r);

/* Calls cb for up to limit (< 0: all) entries whose outcome is outcome
 * (NULL: lost, duplicated or unexpected), seq > after_seq, in seq order;
 * cb returning non-zero stops the walk. */
int ledger_flow_evidence_foreach(struct ledger *lg, const char *outcome,
                                 int64_t after_seq, int64_t limit,
                                 ledger_flow_row_cb *cb, void *opaque,
                                 char *errstr, size_t errstr_size);

#endif /* EOSAUDIT_LEDGER_FLOW_H */
