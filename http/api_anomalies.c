/*
 * api_anomalies.c - /api/v1/anomalies: the ledger's anomalies, newest
 * first, filtered by topic, kind, producer and time, a page at a time
 * (the cursor is the id of the last anomaly of the previous page).
 */
#include "../auditor/report.h"
#include "internal.h"

static int http_anomaly_cb(void *opaque, const struct ledger_anomaly *an)
{
        struct http_page *pg = opaque;

        if (http_page_full(pg))
                return 1;
        json_array_append_new(pg->items, report_anomaly_json(an));
        pg->last_id = an->id;
        pg->n++;
        return 0;
}

static json_t *http_api_anomalies(struct http_api *a)
{
        const struct http_query *q = a->q;
        struct ledger_anomaly_filter f;
        struct http_page pg = {.items = json_array(), .limit = q->limit};
        int rc;

        http_query_anomaly_filter(q, &f);
        rc = ledger_anomalies_query(a->lg, &f, http_anomaly_cb, &pg,
                                    a->errstr, sizeof(a->errstr));
        return http_page_json(&pg, rc, "anomalies", json_integer(pg.last_id));
}

void http_api_anomalies_handle(const struct http_request *rq,
                               struct http_reply *r)
{
        http_api_run(rq, r, HTTP_EP_ANOMALIES, http_api_anomalies);
}
