/*
 * metrics_flow.c - the flow audit's families on /metrics, from the
 * ledger's flow figures (ledger_flow.h) as of the last commit; nothing
 * when no flow was audited.  Outcomes move (a lost record whose copy
 * comes late turns delivered), so eosaudit_flow_records_total is a gauge
 * despite its name.
 */
#include <inttypes.h>

#include "../auditor/ledger_flow.h"
#include "internal.h"

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
                http_buf_printf(b,
                                "# HELP eosaudit_flow_records_total Records "
                                "of the flow by outcome: source records "
                                "delivered, lost, duplicated or pending; sink "
                                "records unexpected or awaiting their source "
                                "(scan/serve --source).\n"
                                "# TYPE eosaudit_flow_records_total gauge\n");
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
        if (s.lat_count)
                http_buf_printf(
                    b,
                    "# HELP eosaudit_flow_latency_seconds End-to-end latency "
                    "(sink record time - source record time): bucket upper "
                    "bounds of p50 and p99, and the largest seen.\n"
                    "# TYPE eosaudit_flow_latency_seconds gauge\n"
                    "eosaudit_flow_latency_seconds{quantile=\"0.5\"} %.3f\n"
                    "eosaudit_flow_latency_seconds{quantile=\"0.99\"} %.3f\n"
                    "eosaudit_flow_latency_seconds{quantile=\"1\"} %.3f\n",
                    (double)s.lat_p50_ms / 1e3, (double)s.lat_p99_ms / 1e3,
                    (double)s.lat_max_ms / 1e3);
}
