/*
 * api_summary.c - /api/v1/summary: the ledger's counters per audited
 * topic (report_summary_json, the same as `eosaudit report --json`), with
 * the live lag and readiness.
 */
#include <stdio.h>
#include <string.h>

#include "../auditor/report.h"
#include "../base/clock.h"
#include "internal.h"

static json_t *http_api_summary(struct http_api *a)
{
        const struct http_conf *c = a->rq->conf;
        const char *const *topics = c->topics;
        size_t n = c->topic_cnt, i;
        json_t *j, *arr;

        if (a->q->topic) {
                for (i = 0; i < n && strcmp(topics[i], a->q->topic); i++)
                        ;
                if (i == n) {
                        snprintf(a->errstr, sizeof(a->errstr),
                                 "topic '%.255s' is not audited here",
                                 a->q->topic);
                        a->fail_status = 404;
                        return NULL;
                }
                topics += i;
                n = 1;
        }
        j = report_summary_json(a->lg, topics, n,
                                &(struct report_opts){.examples = 0},
                                a->errstr, sizeof(a->errstr));
        if (!j)
                return NULL;
        arr = json_object_get(j, "topics");
        for (i = 0; i < n; i++)
                json_object_set_new(json_array_get(arr, i), "lag",
                                    report_opt_json(status_topic_lag(a->v,
                                                                topics[i])));
        json_object_set_new(j, "lag",
                            report_opt_json(status_topic_lag(a->v, NULL)));
        json_object_set_new(j, "live", http_live_json(a->v));
        json_object_set_new(j, "generated_ms", json_integer(clock_wall_ms()));
        return j;
}

void http_api_summary_handle(const struct http_request *rq,
                             struct http_reply *r)
{
        http_api_run(rq, r, HTTP_EP_SUMMARY, http_api_summary);
}
