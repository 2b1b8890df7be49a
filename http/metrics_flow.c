/*
 * metrics_flow.c - the flow audit's families on /metrics, from the
 * ledger's flow figures (ledger_flow.h) as of the last commit; nothing
 * when no flow was audited.  Outcomes move (a lost record whose copy
 * comes late turns delivered), so eosaudit_flow_records_total is no
 * counter despite its name; typed gauge with that name it fails
 * `promtool check metrics` ("non-counter metrics should not have _total
 * suffix"), so it is untyped: it promises no monotony (the alerts and
 * the board read it with delta() and as is).  The processor's lag is a
 * live figure (status.h): http_metrics_flow_lag().
 */
#include <inttypes.h>

#include "../auditor/ledger/ledger_flow.h"
#include "internal.h"

/*
 * The end-to-end latency (sink record time - source record time, once
 * per source record: its first copy) as a Prometheus histogram, from the
 * engine's buckets (dedup_flow_lat_bounds: 1 ms .. 600 s, whole ms, a
 * bound inclusive as "le" is).  Cumulative as Prometheus wants; _count
 * is the records measured (delivered or duplicated, both timestamps
 * known).  Like eosaudit_flow_records_total it is the ledger's, so it
 * survives restarts.  The largest latency seen goes beside it.
 */
static void flow_latency(struct http_buf *b,
                         const struct ledger_flow_summary *s)
{
        uint64_t cum = 0;
        size_t i;

        http_buf_printf(b, "# HELP eosaudit_flow_latency_seconds End-to-end "
                           "latency of the flow: sink record time - source "
                           "record time, once per source record with a "
                           "sink copy.\n"
                           "# TYPE eosaudit_flow_latency_seconds "
                           "histogram\n");
        for (i = 0; i < DEDUP_FLOW_LAT_BUCKETS; i++) {
                cum += s->lat[i];
                if (i < DEDUP_FLOW_LAT_BUCKETS - 1)
                        http_buf_printf(b,
                                        "eosaudit_flow_latency_seconds_bucket"
                                        "{le=\"%g\"} %" PRIu64 "\n",
                                        (double)dedup_flow_lat_bounds[i] / 1e3,
                                        cum);
                else
                        http_buf_printf(b,
                                        "eosaudit_flow_latency_seconds_bucket"
                                        "{le=\"+Inf\"} %" PRIu64 "\n",
                                        cum);
        }
        http_buf_printf(b,
                        "eosaudit_flow_latency_seconds_sum %.3f\n"
                        "eosaudit_flow_latency_seconds_count %" PRIu64 "\n",
                        (double)s->lat_sum_ms / 1e3, cum);
        if (s->lat_count)
                http_buf_printf(b,
                                "# HELP eosaudit_flow_latency_max_seconds "
                                "The largest end-to-end latency of the "
                                "flow.\n"
                                "# TYPE eosaudit_flow_latency_max_seconds "
                                "gauge\n"
                                "eosaudit_flow_latency_max_seconds %.3f\n",
                                (double)s->lat_max_ms / 1e3);
}

void http_metrics_flow(const struct http_request *rq, struct http_buf *b)
{
        struct ledger_flow_summary s;
        char errstr[512];
        struct ledger *lg = http_reader_get(rq->readers, errstr,
                                            sizeof(errstr));
        int rc;
        size_t i;

        if (!lg)
                return;
        rc = ledger_flow_summary(lg, &s, errstr, sizeof(errstr));
        http_reader_put(rq->readers, lg, rc != 0);
        if (rc || !s.present)
                return;
        {
                const struct {
                        const char *outcome;
                        uint64_t v;
                } o[] = {{"delivered", s.delivered},
                         {"lost", s.lost},
                         {"duplicated", s.duplicated},
                         {"pending", s.pending},
                         {"unexpected", s.unexpected},
                         {"awaiting_source", s.awaiting}};
                http_buf_printf(
                    b, "# HELP eosaudit_flow_records_total Records "
                       "of the flow by outcome: source records "
                       "delivered, lost, duplicated or pending; sink "
                       "records unexpected or awaiting their source "
                       "(scan/serve --source).\n"
                       "# TYPE eosaudit_flow_records_total untyped\n");
                for (i = 0; i < sizeof(o) / sizeof(o[0]); i++)
                        http_buf_printf(b,
                                        "eosaudit_flow_records_total{outcome="
                                        "\"%s\"} %" PRIu64 "\n",
                                        o[i].outcome, o[i].v);
        }
        http_buf_printf(b,
                        "# HELP eosaudit_flow_duplicate_copies Sink copies "
                        "beyond the first of duplicated source records.\n"
                        "# TYPE eosaudit_flow_duplicate_copies gauge\n"
                        "eosaudit_flow_duplicate_copies %" PRIu64 "\n",
                        s.duplicate_copies);
        flow_latency(b, &s);
}

void http_metrics_flow_lag(struct http_buf *b, const struct status_view *v)
{
        if (!v || v->flow_lag < 0)
                return;
        http_buf_printf(b,
                        "# HELP eosaudit_flow_processor_lag_records Records "
                        "of the flow's sources above the processor group's "
                        "committed offsets (--processor-group), summed over "
                        "the source partitions, as of the last read of "
                        "them (every 2 s in serve, once in a scan); a "
                        "partition without a committed offset counts its "
                        "whole log.\n"
                        "# TYPE eosaudit_flow_processor_lag_records gauge\n"
                        "eosaudit_flow_processor_lag_records %" PRId64 "\n",
                        v->flow_lag);
}
