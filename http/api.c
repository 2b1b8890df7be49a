/*
 * api.c - what the JSON endpoints under /api/v1/ share: the run of one
 * request (query string, ledger reader, status view, reply), pages of
 * results and the start of a per-partition row.  Each endpoint lives in
 * its own api_*.c.
 */
#include <stdio.h>
#include <string.h>

#include "../auditor/report/report.h"
#include "internal.h"

void http_api_run(const struct http_request *rq, struct http_reply *r,
                  enum http_endpoint ep, http_api_fn *fn)
{
        struct http_api a = {.rq = rq};
        struct http_query query;
        struct status_view view;
        json_t *j;

        if (http_query_parse(&query, ep, rq->query, rq->query_len, a.errstr,
                             sizeof(a.errstr))) {
                http_reply_error(r, 400, "%s", a.errstr);
                return;
        }
        a.q = &query;
        a.lg = http_reader_get(rq->readers, a.errstr, sizeof(a.errstr));
        if (!a.lg) {
                http_reply_error(r, 503, "ledger not available: %s", a.errstr);
                goto out;
        }
        a.v = status_view_get(rq->conf->status, &view);
        a.errstr[0] = '\0';
        a.fail_status = 500;
        j = fn(&a);
        if (a.v)
                status_view_release(&view);
        /* A failed query may leave the connection unusable: reopen. */
        http_reader_put(rq->readers, a.lg, !j && a.fail_status == 500);
        if (j)
                http_reply_json(r, 200, j);
        else
                http_reply_error(r, a.fail_status, "%s",
                                 a.errstr[0] ? a.errstr : "out of memory");
out:
        http_query_release(&query);
}

void http_api_unknown_handle(const struct http_request *rq,
                             struct http_reply *r)
{
        http_reply_error(r, 404, "no such endpoint: /api/v1/%.64s", rq->rest);
}

int http_page_full(struct http_page *pg)
{
        if (pg->n < pg->limit)
                return 0;
        pg->more = 1;
        return 1;
}

json_t *http_page_json(struct http_page *pg, int failed, const char *name,
                       json_t *next)
{
        json_t *j;

        if (failed) {
                json_decref(pg->items);
                json_decref(next);
                return NULL;
        }
        j = json_object();

        json_object_set_new(j, name, pg->items);
        json_object_set_new(j, "limit", json_integer(pg->limit));
        json_object_set_new(j, "next_cursor", pg->more ? next : json_null());
        if (!pg->more)
                json_decref(next);
        return j;
}

/* {"topic": ..., "partition": ...}, the start of a per-partition row. */
json_t *http_where_json(const char *topic, int32_t partition)
{
        json_t *o = json_object();

        json_object_set_new(o, "topic",
                            report_bytes_json(topic, strlen(topic), NULL));
        json_object_set_new(o, "partition", json_integer(partition));
        return o;
}

int http_api_topics(struct http_api *a, const char *const **topics, size_t *n)
{
        const struct http_conf *c = a->rq->conf;
        size_t i;

        *topics = c->topics;
        *n = c->topic_cnt;
        if (!a->q->topic)
                return 0;
        for (i = 0; i < c->topic_cnt && strcmp(c->topics[i], a->q->topic); i++)
                ;
        if (i == c->topic_cnt) {
                snprintf(a->errstr, sizeof(a->errstr),
                         "topic '%.255s' is not audited here", a->q->topic);
                a->fail_status = 404;
                return -1;
        }
        *topics += i;
        *n = 1;
        return 0;
}
