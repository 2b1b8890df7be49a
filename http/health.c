/*
 * health.c - the endpoints that say whether eosaudit runs and what it
 * looks like: the dashboard page at /, /healthz (the process answers) and
 * /readyz (the audit is ready, from the published status).
 */
#include <string.h>

#include "../auditor/report/report.h"
#include "internal.h"

void http_page_handle(const struct http_request *rq, struct http_reply *r)
{
        (void)rq;
        r->status = 200;
        r->type = "text/html; charset=utf-8";
        r->fixed = http_index_html;
        r->len = http_index_html_len;
        r->flags |= HTTP_REPLY_PAGE;
}

void http_healthz_handle(const struct http_request *rq, struct http_reply *r)
{
        (void)rq;
        http_reply_json(r, 200, json_pack("{s:s}", "status", "ok"));
}

json_t *http_live_json(const struct status_view *v)
{
        const char *why[8];
        size_t n = status_ready_reasons(v, why, 8), i;
        json_t *o = json_object(), *reasons = json_array();

        for (i = 0; i < n; i++)
                json_array_append_new(reasons, json_string(why[i]));
        json_object_set_new(o, "ready", json_boolean(n == 0));
        json_object_set_new(o, "reasons", reasons);
        if (!v)
                return o;
        json_object_set_new(o, "brokers_up", json_integer(v->brokers_up));
        json_object_set_new(o, "ledger_paused",
                            json_boolean(v->ledger_paused));
        json_object_set_new(o, "records_read", report_u64_json(v->records));
        json_object_set_new(o, "started_ms", json_integer(v->started_ms));
        json_object_set_new(o, "updated_ms", json_integer(v->updated_ms));
        return o;
}

void http_readyz_handle(const struct http_request *rq, struct http_reply *r)
{
        struct status_view view;
        struct status_view *v = status_view_get(rq->conf->status, &view);
        json_t *live = http_live_json(v);
        int ready = json_is_true(json_object_get(live, "ready"));

        if (v)
                status_view_release(v);
        if (!ready) {
                json_t *why = json_object_get(live, "reasons");
                json_object_set_new(live, "error",
                                    json_sprintf("not ready: %s",
                                                 json_string_value(
                                                     json_array_get(why, 0))));
        }
        http_reply_json(r, ready ? 200 : 503, live);
}
