/*
 * api_producers.c - /api/v1/producers: the tracked (partition, producer)
 * pairs in key order, a page at a time (the cursor names the last pair of
 * the previous page, see http_cursor_format()).
 */
#include <stdio.h>

#include "../auditor/report/report.h"
#include "internal.h"

static int http_pair_cb(void *opaque, const struct ledger_pair *p)
{
        struct http_page *pg = opaque;
        json_t *o;

        if (http_page_full(pg))
                return 1;
        o = http_where_json(p->topic, p->partition);
        report_producer_set(o, p->producer, p->producer_len);
        json_object_set_new(o, "epoch", json_integer(p->epoch));
        json_object_set_new(o, "last_seq", report_opt_json(p->last_seq));
        json_object_set_new(o, "last_offset", json_integer(p->last_offset));
        json_object_set_new(o, "last_ms", json_integer(p->last_ms));
        json_object_set_new(o, "records", report_u64_json(p->records));
        json_object_set_new(o, "open_gaps", report_u64_json(p->open_gaps));
        json_array_append_new(pg->items, o);
        pg->n++;
        if (!http_cursor_format(pg->cursor, sizeof(pg->cursor), p->topic,
                                p->partition, p->producer, p->producer_len)) {
                pg->failed = 1;
                return 1;
        }
        return 0;
}

static json_t *http_api_producers(struct http_api *a)
{
        const struct http_query *q = a->q;
        struct ledger_pair_key after;
        struct ledger_pair_filter f;
        struct http_page pg = {.items = json_array(), .limit = q->limit};
        int rc;

        http_query_pair_filter(q, &after, &f);
        rc = ledger_pairs_foreach(a->lg, &f, http_pair_cb, &pg, a->errstr,
                                  sizeof(a->errstr));
        if (pg.failed) {
                snprintf(a->errstr, sizeof(a->errstr),
                         "a topic name is too long to page past");
                a->fail_status = 422;
        }
        return http_page_json(&pg, rc || pg.failed, "producers",
                              json_string(pg.cursor));
}

void http_api_producers_handle(const struct http_request *rq,
                               struct http_reply *r)
{
        http_api_run(rq, r, HTTP_EP_PRODUCERS, http_api_producers);
}
