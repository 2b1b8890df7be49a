/*
 * api_partitions.c - /api/v1/partitions: each partition's counters from
 * the ledger with its live figures (assigned, high watermark, lag), and
 * the assigned partitions that have no ledger row yet.
 */
#include <stdlib.h>
#include <string.h>

#include "../auditor/report/report.h"
#include "internal.h"

struct http_parts {
        json_t *items;
        const struct status_view *v;
        unsigned char *seen; /* [v->nparts]: listed from the ledger */
};

/* The live figures of (topic, partition) onto o; marks it seen. */
static void http_part_live(struct http_parts *pp, json_t *o, const char *topic,
                           int32_t partition)
{
        const struct status_part *sp = NULL;
        size_t i;

        for (i = 0; pp->v && i < pp->v->nparts; i++) {
                sp = &pp->v->parts[i];
                if (sp->partition == partition && sp->topic &&
                    !strcmp(sp->topic, topic)) {
                        pp->seen[i] = 1;
                        break;
                }
                sp = NULL;
        }
        json_object_set_new(o, "assigned", json_boolean(sp != NULL));
        json_object_set_new(o, "high_watermark",
                            report_opt_json(sp ? sp->high_watermark : -1));
        json_object_set_new(o, "lag",
                            report_opt_json(sp ? status_part_lag(sp) : -1));
}

static json_t *http_part_json(const char *topic, int32_t partition,
                              int64_t next_offset)
{
        json_t *o = http_where_json(topic, partition);

        json_object_set_new(o, "next_offset", report_opt_json(next_offset));
        return o;
}

static int http_partition_cb(void *opaque, const struct ledger_partition *p)
{
        struct http_parts *pp = opaque;
        const struct dedup_counts *c = &p->counts;
        json_t *o = http_part_json(p->topic, p->partition, p->next_offset);

        json_object_set_new(o, "from_log_start",
                            json_boolean(p->from_log_start));
        json_object_set_new(o, "records_total", report_u64_json(c->records));
        json_object_set_new(o, "untracked", report_u64_json(c->untracked));
        json_object_set_new(o, "missing_records", report_u64_json(c->missing));
        json_object_set_new(o, "anomalies", report_kinds_json(c->anomalies));
        json_object_set_new(o, "ids_checked", report_u64_json(c->ids));
        json_object_set_new(o, "open_gaps", report_u64_json(p->open_gaps));
        json_object_set_new(o, "updated_ms", json_integer(p->updated_ms));
        http_part_live(pp, o, p->topic, p->partition);
        json_array_append_new(pp->items, o);
        return 0;
}

static json_t *http_api_partitions(struct http_api *a)
{
        struct http_parts pp = {.items = json_array(), .v = a->v};
        const struct status_part *sp;
        size_t i;
        json_t *o;

        pp.seen = calloc(a->v && a->v->nparts ? a->v->nparts : 1, 1);
        if (!pp.seen ||
            ledger_partitions_foreach(a->lg, a->q->topic, http_partition_cb,
                                      &pp, a->errstr, sizeof(a->errstr))) {
                free(pp.seen);
                json_decref(pp.items);
                return NULL;
        }
        /* Assigned partitions that have no ledger row yet. */
        for (i = 0; a->v && i < a->v->nparts; i++) {
                sp = &a->v->parts[i];
                if (pp.seen[i] || !sp->topic ||
                    (a->q->topic && strcmp(a->q->topic, sp->topic)))
                        continue;
                o = http_part_json(sp->topic, sp->partition, sp->next_offset);
                http_part_live(&pp, o, sp->topic, sp->partition);
                json_array_append_new(pp.items, o);
        }
        free(pp.seen);
        return json_pack("{s:o}", "partitions", pp.items);
}

void http_api_partitions_handle(const struct http_request *rq,
                                struct http_reply *r)
{
        http_api_run(rq, r, HTTP_EP_PARTITIONS, http_api_partitions);
}
