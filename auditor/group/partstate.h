/*
 * partstate.h - one topic-partition's whole audit state as one record, to
 * move the partition from one auditor process to another (group mode:
 * `serve --group`, auditor/audit/group.c).
 *
 * The record is JSON (jansson), self-describing and versioned:
 *   {"v":1, "topic":T, "partition":P, "next_offset":N,
 *    "from_log_start":0|1, "fp":[offset, ts_ms, "lo-hex", "hi-hex"],
 *    "counts":{"records":..,"untracked":..,"missing":..,"recovered":..,
 *              "unknown":..,"ids":..,"anomalies":{"duplicate":..,...}},
 *    "pairs":[{"producer":"<hex>", "epoch", "last_seq", "last_ms",
 *              "records", "rebaseline", "pid", "retired":[..],
 *              "session_ms", "runs":[[seq,offset,len],..],
 *              "gaps":[[epoch,lo,hi,opened_offset,opened_ms,opened_rec,
 *                       unknown],..], "done":[same]}, ..],
 *    "topic_id":ID}
 * "topic_id" (the topic's id when the record was written, as Kafka prints
 * it) is left out where it was not known, and by members older than it:
 * a reader takes its absence for "unknown".
 * Producer names are hex (they are header bytes, not always UTF-8).
 *
 * What it carries is what the ledger keeps per partition: offset,
 * counters, pairs with their sequence state and gaps, the fingerprint of
 * the last audited record.  What it does not: the id windows (per
 * process), the transaction check's pending transactions, incarnations.
 *
 * Invariants
 *  - partstate_import() checks the whole record before it changes the
 *    tracker: a rejected record leaves the part as it was.  Once checked,
 *    the part is forgotten (dedup_tracker_part_forget) and replaced.
 *  - No I/O: the bytes come from and go to the caller.
 */
#ifndef EOSAUDIT_PARTSTATE_H
#define EOSAUDIT_PARTSTATE_H

#include <stddef.h>

#include "../../dedup/dedup.h"
#include "../ledger/ledger.h"

#define PARTSTATE_VERSION 1

/*
 * The state of part lp->part of tr, with lp's offset and fingerprint and
 * its topic's id (NULL or "": not known, left out), as a NUL-terminated
 * JSON record (malloc'd, the caller frees; *len its length).  Returns
 * NULL with errstr on failure (memory, a counter past INT64_MAX).
 */
char *partstate_export(struct dedup_tracker *tr, const struct ledger_part *lp,
                       const char *topic_id, size_t *len, char *errstr,
                       size_t errstr_size);

/*
 * The topic id a state record names: 1 with it in out (NUL-terminated),
 * 0 when it names none, -1 when the record is not JSON or its "topic_id"
 * is no string that fits out.
 */
int partstate_topic_id(const void *buf, size_t len, char *out,
                       size_t out_size);

/*
 * Restores a record made by partstate_export() into part lp->part of tr
 * (added): its pairs, gaps and counters replace the part's, and lp's
 * next_offset, from_log_start and fingerprint are set (lp->dirty too, so
 * that the next ledger commit stores them).  The record must name lp's
 * topic and partition.  Returns 0, or -1 with a one-line errstr and
 * nothing changed (a malformed record, another version, another
 * partition), or -1 after a failed restore (memory) with the part
 * forgotten.
 */
int partstate_import(struct dedup_tracker *tr, struct ledger_part *lp,
                     const void *buf, size_t len, char *errstr,
                     size_t errstr_size);

/*
 * The "counts" object of a state record into *c: the one definition of
 * which counters a record must carry, for partstate_import() and for the
 * group view's reader (grouprep.c) alike.  Every one is required, each a
 * non-negative integer: records, untracked, missing, recovered, unknown,
 * ids, and in "anomalies" every kind dedup_kind_name() names (a record
 * without one would reset that count).  Returns 0, or -1 (malformed).
 */
struct json_t;
int partstate_counts_of(const struct json_t *o, struct dedup_counts *c);

#endif /* EOSAUDIT_PARTSTATE_H */
