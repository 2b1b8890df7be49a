/*
 * internal.h - what the files of report/ share and nobody else calls.
 * Public: report.h (verdicts, the anomaly in JSON and as a line, scan's
 * report) and report_flow.h (the flow audit's part).
 *
 * Files, each calling only those listed before it:
 *   verdict.c      verdicts, counts added up and differenced, the newest
 *                  anomalies of each kind, an engine event as an anomaly
 *   report_kcat.c  the kcat command that fetches an anomaly's records
 *   json.c         the reports as JSON (scan --json, the API, the
 *                  group's events topic)
 *   text.c         the reports for a terminal
 *   report_flow.c  the flow audit in both
 */
#ifndef EOSAUDIT_REPORT_INTERNAL_H
#define EOSAUDIT_REPORT_INTERNAL_H

#include <stddef.h>

#include "report.h"
#include "report_flow.h"

/* The warning of a topic that is mostly untracked, into buf ("" when it
 * is not). */
void report_untracked_text(const struct ledger_summary *s, char *buf,
                           size_t size);

/* The kinds "latest anomalies" shows a few of each (k up to
 * DEDUP_KIND__ANOMALY_CNT): every anomaly kind, then "coverage". */
const char *report_kind_at(int k);

/* The newest `examples` anomalies of each kind of topic, to cb.
 * Returns 0, or -1 with errstr. */
int report_latest(struct ledger *lg, const char *topic, int examples,
                  ledger_anomaly_cb *cb, void *opaque, char *errstr,
                  size_t errstr_size);

/* s's counts added to sum's (the oldest id window kept). */
void report_summary_add(struct ledger_summary *sum,
                        const struct ledger_summary *s);

/* What this run added: s minus prev, each figure clamped at 0. */
void report_delta(const struct ledger_summary *s,
                  const struct ledger_summary *prev, struct ledger_summary *d);

/* The flow's verdict as the ledger holds it.  0, or -1 with errstr. */
int report_flow_verdict_get(struct ledger *lg, enum report_verdict *fv,
                            char *errstr, size_t errstr_size);

#endif /* EOSAUDIT_REPORT_INTERNAL_H */
