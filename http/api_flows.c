/*
 * api_flows.c - /api/v1/flows: the flow audit (scan/serve --source) as
 * the ledger holds it after the last commit: the counts by outcome, the
 * end-to-end latency, and the evidence of every lost, duplicated or
 * unexpected record, a page at a time (the cursor is the seq of the last
 * item of the previous page).  "flow" is null when no flow was audited;
 * "processor_lag" is the live lag of --processor-group (null: none).
 */
#include "../auditor/report/report_flow.h"
#include "internal.h"

struct http_flow_page {
        struct http_page pg;
        int64_t last_seq;
};

static int http_flow_cb(void *opaque, const struct ledger_flow_row *r)
{
        struct http_flow_page *fp = opaque;

        if (http_page_full(&fp->pg))
                return 1;
        json_array_append_new(fp->pg.items, report_flow_row_json(r));
        fp->last_seq = r->seq;
        fp->pg.n++;
        return 0;
}

static json_t *http_api_flows(struct http_api *a)
{
        struct http_flow_page fp = {
            .pg = {.items = json_array(), .limit = a->q->limit}};
        struct ledger_flow_summary s;
        json_t *j;
        int rc;

        if (ledger_flow_summary(a->lg, &s, a->errstr, sizeof(a->errstr))) {
                json_decref(fp.pg.items);
                return NULL;
        }
        rc = ledger_flow_evidence_foreach(a->lg, NULL,
                                          a->q->cursor > 0 ? a->q->cursor : 0,
                                          a->q->limit + 1, http_flow_cb, &fp,
                                          a->errstr, sizeof(a->errstr));
        j = http_page_json(&fp.pg, rc, "evidence", json_integer(fp.last_seq));
        if (j) {
                json_object_set_new(j, "flow",
                                    s.present ? report_flow_summary_json(&s)
                                              : json_null());
                /* Live, as /metrics' eosaudit_flow_processor_lag_records:
                 * null without --processor-group or before its read. */
                json_object_set_new(j, "processor_lag",
                                    report_opt_json(a->v ? a->v->flow_lag
                                                         : -1));
        }
        return j;
}

void http_api_flows_handle(const struct http_request *rq, struct http_reply *r)
{
        http_api_run(rq, r, HTTP_EP_FLOWS, http_api_flows);
}
