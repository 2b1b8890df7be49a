/*
 * report_flow.h - the flow audit in reports: scan's human report and
 * its --json "flow" object, both from the ledger (ledger_flow.h).
 */
#ifndef EOSAUDIT_REPORT_FLOW_H
#define EOSAUDIT_REPORT_FLOW_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "../ledger/ledger_flow.h"
#include "report.h"

/* What the exit status counts: lost + duplicated + unexpected. */
uint64_t report_flow_bad(const struct ledger_flow_summary *s);

/* The flow's verdict: ANOMALIES when report_flow_bad(), else NOT_AUDITED
 * when it traced no record (no flow, or no record on either side with an
 * id), else CLEAN (pending records are not yet judged: not a failure). */
enum report_verdict report_flow_verdict(const struct ledger_flow_summary *s);

/* A flow sink's verdict: the flow's fv, merged with its own checks'
 * verdict own when those audited anything (own NOT_AUDITED is the rule
 * on a sink: the forwarded headers raise nothing, by design). */
enum report_verdict report_sink_verdict(enum report_verdict own,
                                        enum report_verdict fv);

/*
 * {"expect", "source_records", "delivered", "lost", "duplicated",
 *  "duplicate_copies", "unexpected", "pending", "awaiting_source",
 *  "source_repeats", "source_without_id", "sink_without_id",
 *  "sink_records", "outstanding_ids", "latency_ms": {"count", "p50", "p99",
 *  "max"}, "evidence": [...], "evidence_truncated"}; each evidence item:
 * {"outcome", "id", "id_hex" (when id is lossy), "id_len", "source":
 * {"topic", "partition", "offset", "timestamp"} or null, "sink": {"topic",
 * "partition", "offset", "last_topic", "last_partition", "last_offset",
 * "copies", "timestamp"} or null, "retired"}.  Up to evidence_limit items
 * (< 0: all).  A new reference, or NULL with errstr.
 */
json_t *report_flow_json(struct ledger *lg, int64_t evidence_limit,
                         char *errstr, size_t errstr_size);

/* The figures alone (the object above without evidence, with
 * "updated_ms"), and one evidence item. */
json_t *report_flow_summary_json(const struct ledger_flow_summary *s);
json_t *report_flow_row_json(const struct ledger_flow_row *r);

/* The human part, after the topics: counts, latency and up to
 * evidence_limit evidence lines.  Returns 0, or -1 with errstr. */
int report_flow_print(FILE *f, struct ledger *lg, int64_t evidence_limit,
                      char *errstr, size_t errstr_size);

#endif /* EOSAUDIT_REPORT_FLOW_H */
