/*
 * api_group.c - /api/v1/group (serve --group): who this member is, the
 * partitions it audits now, and the group's members with their
 * assignments as the brokers last described them (auditor/status.h,
 * struct status_group: listed by the audit thread every few seconds; this
 * thread reads the published copy and never calls librdkafka).  Without
 * --group: 404.
 */
#include <string.h>

#include "../auditor/report/report.h"
#include "../base/clock.h"
#include "internal.h"

static json_t *http_str_json(const char *s)
{
        return s ? report_bytes_json(s, strlen(s), NULL) : json_null();
}

static json_t *http_group_json(const struct status_view *v)
{
        const struct status_group *g = v->group;
        json_t *j = json_object(), *owned = json_array(),
               *members = json_array();
        size_t i, k;

        for (i = 0; i < v->nparts; i++) {
                const struct status_part *sp = &v->parts[i];
                json_t *o;
                if (!sp->owned || !sp->topic)
                        continue;
                o = http_where_json(sp->topic, sp->partition);
                json_object_set_new(o, "next_offset",
                                    report_opt_json(sp->next_offset));
                json_array_append_new(owned, o);
        }
        for (i = 0; i < g->nmembers; i++) {
                const struct status_member *m = &g->members[i];
                json_t *as = json_array();
                for (k = 0; k < m->nparts; k++)
                        json_array_append_new(
                            as, http_where_json(m->parts[k].topic
                                                    ? m->parts[k].topic
                                                    : "",
                                                m->parts[k].partition));
                json_array_append_new(
                    members,
                    json_pack("{s:o, s:o, s:o, s:b, s:b, s:o}", "member_id",
                              http_str_json(m->member_id), "client_id",
                              http_str_json(m->client_id), "client_host",
                              http_str_json(m->client_host), "self", m->self,
                              "assignment_unreadable", m->bad_assignment,
                              "assignment", as));
        }
        json_object_set_new(j, "group", http_str_json(g->group));
        json_object_set_new(j, "member", http_str_json(g->member));
        json_object_set_new(j, "transactional_id", http_str_json(g->txn_id));
        json_object_set_new(j, "instance_id", http_str_json(g->instance_id));
        json_object_set_new(j, "owned", owned);
        json_object_set_new(j, "state", http_str_json(g->state));
        json_object_set_new(j, "protocol", http_str_json(g->protocol));
        json_object_set_new(j, "members", members);
        json_object_set_new(j, "listed_ms", report_opt_json(g->listed_ms));
        json_object_set_new(j, "error",
                            g->error[0] ? http_str_json(g->error)
                                        : json_null());
        json_object_set_new(j, "generated_ms", json_integer(clock_wall_ms()));
        return j;
}

void http_api_group_handle(const struct http_request *rq, struct http_reply *r)
{
        struct status_view view;
        const struct status_view *v;
        struct http_query query;
        char errstr[160];
        json_t *j;

        /* Like every /api/v1 endpoint: a parameter it does not take is
         * a 400, not silently ignored. */
        if (http_query_parse(&query, HTTP_EP_GROUP, rq->query, rq->query_len,
                             errstr, sizeof(errstr))) {
                http_reply_error(r, 400, "%s", errstr);
                return;
        }
        http_query_release(&query);
        v = status_view_get(rq->conf->status, &view);

        /* The view's group is the one listed; conf's says group mode
         * is on before the first listing. */
        if (!rq->conf->group && !(v && v->group)) {
                if (v)
                        status_view_release(&view);
                http_reply_error(r, 404,
                                 "group mode is off: this process "
                                 "was not started with --group");
                return;
        }
        if (!v || !v->group) {
                if (v)
                        status_view_release(&view);
                http_reply_error(r, 503, "group %.200s: not listed yet",
                                 rq->conf->group);
                return;
        }
        j = http_group_json(v);
        status_view_release(&view);
        if (j)
                http_reply_json(r, 200, j);
        else
                http_reply_error(r, 500, "out of memory");
}
