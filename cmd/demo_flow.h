/*
 * demo_flow.h - the demo's second act (cmd/demo_flow.c): a pipeline on
 * the mock cluster.  The reference producer fills a source topic, the
 * reference processor (producer/process.h) copies it to a sink
 * at-least-once, crashing after DEMO_FLOW_CRASH_AFTER records and
 * restarting, and the flow audit (scan --source) of sink <- source reports
 * the records the restart wrote twice, with their evidence.
 *
 * Invariants
 *  - librdkafka's mock cluster accepts the transactional API but does not
 *    enforce transactions (no fencing, aborted records stay readable), so
 *    the act is at-least-once; exactly-once is audited against a real
 *    broker by the integration tests (t_71, t_73).
 *  - The crash is in process (process_opts.crash_in_process): the
 *    session stops dead, its last batch written and its offsets not
 *    committed, and a new session starts; no fork in a process with
 *    threads.
 *  - The duplicated figure is checked against a count that does not use
 *    the audit: the sink's records (its watermarks) minus the source's.
 *    Every source record reaches the sink at least once (at-least-once,
 *    no record dropped), so the difference is the extra copies.
 */
#ifndef EOSAUDIT_DEMO_FLOW_H
#define EOSAUDIT_DEMO_FLOW_H

#include <signal.h>

#include <librdkafka/rdkafka_mock.h>

#define DEMO_FLOW_SOURCE "demo-orders"
#define DEMO_FLOW_SINK "demo-orders-enriched"
#define DEMO_FLOW_RECORDS 3000
#define DEMO_FLOW_BATCH 200
#define DEMO_FLOW_CRASH_AFTER 1100 /* mid-batch: its records go twice */

struct demo_flow;

/*
 * Starts the act in a thread of its own (its processor and audit mostly
 * wait on the mock cluster's group timers, so it runs alongside the first
 * act); what it prints is held until demo_flow_finish().  Returns NULL
 * (printed) when the topics or the thread cannot be made.
 */
struct demo_flow *demo_flow_start(rd_kafka_mock_cluster_t *mc,
                                  const char *bootstraps, int quiet,
                                  volatile sig_atomic_t *run);

/*
 * Waits for the act, then prints it (unless print is 0) and frees it.
 * Returns 0 when the flow audit's figures match the independent count, 1
 * when they do not, 2 on an error (printed).  df may be NULL (returns 2).
 */
int demo_flow_finish(struct demo_flow *df, int print);

#endif /* EOSAUDIT_DEMO_FLOW_H */
