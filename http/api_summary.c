/*
 * api_summary.c - /api/v1/summary: the ledger's counters per audited
 * topic (report_summary_json, the same as `eosaudit scan --json`
 * prints), with the live lag and readiness; with serve --group, by default, the whole
 * group's (api_scope.c), and ?scope=member this member's ledger's.
 */
#include <stdio.h>
#include <string.h>

#include "../auditor/group/grouprep.h"
#include "../auditor/report/report.h"
#include "../base/clock.h"
#include "internal.h"

static json_t *http_api_summary(struct http_api *a)
{
        const char *const *topics;
        struct grouprep_snap *snap;
        size_t n, i, off, sinks;
        json_t *j, *arr;
        int scope;

        if (http_api_topics(a, &topics, &n) ||
            (scope = http_api_scope(a, &snap)) < 0)
                return NULL;
        if (scope) {
                j = http_group_summary_json(a, snap, topics, n);
                grouprep_snap_put(snap);
                return j;
        }
        /* ?topic= narrows topics to one of the configured ones: a sink
         * stays a sink. */
        off = (size_t)(topics - a->rq->conf->topics);
        sinks = off < a->rq->conf->flow_sinks ? a->rq->conf->flow_sinks - off
                                              : 0;
        if (sinks > n)
                sinks = n;
        j = report_summary_json(a->lg, topics, n,
                                &(struct report_opts){.sinks = sinks},
                                a->errstr, sizeof(a->errstr));
        if (!j)
                return NULL;
        arr = json_object_get(j, "topics");
        for (i = 0; i < n; i++)
                json_object_set_new(json_array_get(arr, i), "lag",
                                    report_opt_json(
                                        status_topic_lag(a->v, topics[i])));
        json_object_set_new(j, "lag",
                            report_opt_json(status_topic_lag(a->v, NULL)));
        json_object_set_new(j, "live", http_live_json(a->v));
        json_object_set_new(j, "generated_ms", json_integer(clock_wall_ms()));
        json_object_set_new(j, "scope", json_string("member"));
        return j;
}

void http_api_summary_handle(const struct http_request *rq,
                             struct http_reply *r)
{
        http_api_run(rq, r, HTTP_EP_SUMMARY, http_api_summary);
}
