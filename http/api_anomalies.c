/*
 * api_anomalies.c - /api/v1/anomalies: the ledger's anomalies, newest
 * first, filtered by topic, kind, producer and time, a page at a time
 * (the cursor is the id of the last anomaly of the previous page).  With
 * serve --group, by default, the group's newest events from its events
 * topic (api_scope.c); ?scope=member this member's ledger's.
 */
#include "../auditor/group/grouprep.h"
#include "../auditor/report/report.h"
#include "internal.h"

struct http_anomaly_walk {
        struct http_page pg;
        const char *brokers;
};

static int http_anomaly_cb(void *opaque, const struct ledger_anomaly *an)
{
        struct http_anomaly_walk *w = opaque;
        struct http_page *pg = &w->pg;
        json_t *o;

        if (http_page_full(pg))
                return 1;
        /* The evidence with the command that fetches it, as scan shows. */
        o = report_anomaly_json(an);
        if (o)
                report_kcat_set(o, an, w->brokers);
        json_array_append_new(pg->items, o);
        pg->last_id = an->id;
        pg->n++;
        return 0;
}

static json_t *http_api_anomalies(struct http_api *a)
{
        const struct http_query *q = a->q;
        struct ledger_anomaly_filter f;
        struct http_anomaly_walk w = {.pg = {.items = json_array(),
                                             .limit = q->limit},
                                      .brokers = a->rq->conf->brokers};
        struct grouprep_snap *snap;
        json_t *j;
        int rc;

        if ((rc = http_api_scope(a, &snap)) < 0) {
                json_decref(w.pg.items);
                return NULL;
        }
        if (rc) {
                json_decref(w.pg.items);
                j = http_group_anomalies_json(a, snap);
                grouprep_snap_put(snap);
                return j;
        }
        http_query_anomaly_filter(q, &f);
        rc = ledger_anomalies_query(a->lg, &f, http_anomaly_cb, &w, a->errstr,
                                    sizeof(a->errstr));
        j = http_page_json(&w.pg, rc, "anomalies", json_integer(w.pg.last_id));
        if (j)
                json_object_set_new(j, "scope", json_string("member"));
        return j;
}

void http_api_anomalies_handle(const struct http_request *rq,
                               struct http_reply *r)
{
        http_api_run(rq, r, HTTP_EP_ANOMALIES, http_api_anomalies);
}
