/*
 * report.h - audit reports built from the ledger: the JSON object of
 * `scan --json` (and, later, /api/v1/summary) and the human report.
 *
 * Everything here reads the ledger only; it never sees the live tracker,
 * so any thread with its own ledger handle may call it.
 */
#ifndef EOSAUDIT_REPORT_H
#define EOSAUDIT_REPORT_H

#include <stdio.h>

#include <jansson.h>

#include "../ledger/ledger.h"

/* Number of anomalies in s that make an audit fail (exit status 1):
 * every anomaly kind, and coverage gaps (records nobody could audit). */
uint64_t report_anomaly_total(const struct ledger_summary *s);

/*
 * What an audit concluded, worst first when merged:
 *   REPORT_ANOMALIES   report_anomaly_total() > 0 (scan exits 1)
 *   REPORT_NOT_AUDITED nothing was audited: no record carried the eos.*
 *                      headers (or every one was untracked) and no message
 *                      id was checked - an empty topic, or one whose
 *                      producers stamp nothing (scan exits 3).  Never
 *                      "clean": there is no evidence either way.
 *   REPORT_CLEAN       records were audited and nothing was found
 */
enum report_verdict { REPORT_CLEAN, REPORT_NOT_AUDITED, REPORT_ANOMALIES };

enum report_verdict report_verdict(const struct ledger_summary *s);
/* The verdict of several topics: anomalies anywhere, else not audited
 * when any topic was not audited, else clean. */
enum report_verdict report_verdict_merge(enum report_verdict a,
                                         enum report_verdict b);
/* "clean", "not_audited", "anomalies": the JSON value of "verdict". */
const char *report_verdict_name(enum report_verdict v);

/* Whether most of s's records (more than half) carry no eos.* headers, so
 * the sequence checks did not cover them: worth a warning. */
int report_mostly_untracked(const struct ledger_summary *s);

/* What a summary shows besides the totals (zero it for none). */
struct report_opts {
        int examples;        /* latest anomalies shown, per kind */
        const char *brokers; /* for the kcat commands; NULL: "BROKER" */
        /* Per topic (same order), the ledger's summary before this run:
         * figures new since then are shown beside the totals.  NULL: no
         * previous run; an entry with partitions == 0: none for that
         * topic. */
        const struct ledger_summary *prev;
        /* topics[0..sinks) are the sinks of a flow (scan/serve --source),
         * the rest its sources or other topics; 0: no flow.  See
         * report_verdict_topics(). */
        size_t sinks;
};

/*
 * The verdict of topics[0..n) (what scan's exit status, its --json
 * "verdict" and /api/v1/summary's say), with topics[0..sinks) the sinks
 * of a flow.  A sink is judged by lineage: the eos.* headers it carries
 * are the source writer's, forwarded, and raise nothing, so its own
 * verdict is NOT_AUDITED by design; it takes the flow's verdict instead
 * (report_flow_verdict()), and the flow's verdict merges into the whole.
 * A sink whose own checks found anomalies keeps them.  Returns 0 and *v,
 * or -1 with errstr.
 */
int report_verdict_topics(struct ledger *lg, const char *const *topics,
                          size_t n, size_t sinks, enum report_verdict *v,
                          char *errstr, size_t errstr_size);

/*
 * The summary of topics[0..n): totals at the top level (records_total,
 * untracked, missing_records, recovered_records, unknown_records,
 * producers, pairs, topic_streams, anomalies{duplicate, gap,
 * out_of_order, fenced, malformed, redelivered}, ids_checked, window{ids,
 * generations, oldest_ms}, verdict, warnings[], ...) and one object per
 * topic in "topics"; with o->examples > 0, the newest anomalies of each
 * kind with their evidence and kcat commands; with o->prev, "new" (what
 * this run added: records_total, missing_records, coverage_gaps,
 * anomalies{...}, anomalies_total) and "previous_run" (true/false).  With
 * o->sinks, the sinks' objects say "judged_by": "lineage" (the others
 * "sequence") and the verdicts follow report_verdict_topics().  The totals of
 * window are sums over the topics' windows, oldest_ms the oldest of them
 * (null when no window holds an id).
 * Returns a new reference (caller json_decref()s), or NULL with errstr.
 */
json_t *report_summary_json(struct ledger *lg, const char *const *topics,
                            size_t n, const struct report_opts *o,
                            char *errstr, size_t errstr_size);

/*
 * The same object as report_summary_json() (without examples, previous
 * run or flow) from summaries the caller made, per[i] of topics[i]: serve
 * --group's group-wide summary, made from the group's state topic.  A new
 * reference, or NULL on OOM.
 */
json_t *report_summary_of_json(const char *const *topics,
                               const struct ledger_summary *per, size_t n);

/* One anomaly as a JSON object with its evidence.  A producer name that
 * is not valid UTF-8 is given lossily in "producer" (U+FFFD for each bad
 * byte) and exactly in "producer_hex".  Every object has
 * "first_partition", "first_offset_hi" (a redelivered anomaly's first
 * copies: offsets first_offset..first_offset_hi of first_partition),
 * "msgid" (its first record's id, lossy UTF-8 as for producer),
 * "msgid_hex" (the id's bytes when msgid is lossy) and "msgid_len" (the
 * whole id's length: msgid holds at most DEDUP_ID_EVIDENCE_MAX bytes),
 * each null when it does not apply. */
json_t *report_anomaly_json(const struct ledger_anomaly *a);

/* Sets "producer" on o from len bytes at p (JSON null when p is NULL),
 * lossily when they are not valid UTF-8, and then "producer_hex" too. */
void report_producer_set(json_t *o, const char *p, size_t len);

/* {"duplicate": n, "gap": n, ...}: counts[DEDUP_KIND__ANOMALY_CNT] indexed
 * by enum dedup_kind.  A new reference, or NULL on OOM. */
json_t *report_kinds_json(const uint64_t *counts);

/* v as a JSON integer, or null when it is negative (the ledger's and the
 * engine's "unknown"). */
json_t *report_opt_json(int64_t v);
/* A counter as a JSON integer, clamped at INT64_MAX. */
json_t *report_u64_json(uint64_t v);

/* A JSON string from arbitrary bytes: as is when valid UTF-8, else with
 * U+FFFD for each byte that is not; *lossy (if not NULL) says which. */
json_t *report_bytes_json(const char *p, size_t len, int *lossy);

/* The longest line report_event_format() writes, NUL included (a
 * producer name of 255 bytes that are not UTF-8, an id in hex). */
#define REPORT_EVENT_MAX 2048

/*
 * One anomaly on one line, no newline: the one format of the human report,
 * serve's log and the demo, carrying all the evidence there is:
 *   KIND TOPIC [P] producer 'NAME' epoch E seq A..B offsets X..Y
 *       EVIDENCE, count N          (a gap: "missing N")
 * KIND padded to 12 columns; producer, epoch and seq only when known;
 * "offset X" / "seq A" for one.  EVIDENCE: a duplicate's " (first copy at
 * offset F)"; a redelivered anomaly's " are copies of partition FP offsets
 * FA..FB, id 'X'" ("is a copy of ... offset FA" for one; the id as is when
 * it is printable ASCII, else 0x and hex, "..." when only its start was
 * kept; without FP when unknown).  A producer name that is not UTF-8 is
 * given lossily (U+FFFD).  Returns snprintf()'s result.
 */
int report_event_format(const struct ledger_anomaly *a, char *buf,
                        size_t size);

/* A live event of the audit (audit_event_cb) as an anomaly row, for
 * report_event_format(): pointers borrowed from topic and ev; id -1;
 * first_partition -1 (the event names it by the audit's part index). */
void report_anomaly_from_event(struct ledger_anomaly *a, const char *topic,
                               int32_t partition,
                               const struct dedup_event *ev);

/* The human report on f, the anomalies as report_event_format() writes
 * them, each followed by its kcat command; with o->prev what is new since
 * the previous run.  Returns 0, or -1 with errstr. */
int report_summary_print(FILE *f, struct ledger *lg, const char *const *topics,
                         size_t n, const struct report_opts *o, char *errstr,
                         size_t errstr_size);

/* The longest command report_kcat_format() writes, NUL included. */
#define REPORT_KCAT_MAX 1024

/*
 * A ready-to-paste kcat command that fetches the records of anomaly a
 * (first = 0: offsets offset_lo..offset_hi of its partition; a gap's
 * offset is the first record after the hole) or their first copies
 * (first = 1: a duplicate's first copy, a redelivered anomaly's first
 * copies), as JSON with their headers:
 *   kcat -C -b BROKERS -t TOPIC -p P -o OFFSET -c N -e -J
 * Arguments that are not plain words are single-quoted.  Returns 0, or -1
 * (buf "") when there is nothing to fetch: a coverage gap (its offsets are
 * deleted), a first copy that is unknown, or a command that does not fit.
 */
int report_kcat_format(const struct ledger_anomaly *a, const char *brokers,
                       int first, char *buf, size_t size);

/* Sets "kcat" (and "kcat_first" for first copies) on o, an anomaly's
 * JSON object; null when report_kcat_format() has nothing to fetch. */
void report_kcat_set(json_t *o, const struct ledger_anomaly *a,
                     const char *brokers);

#endif /* EOSAUDIT_REPORT_H */
