/*
 * view.c - the live figures HTTP threads read (status.h), and how many
 * brokers librdkafka's statistics say are up.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../base/clock.h"
#include "internal.h"

/* librdkafka statistics (consumer thread): how many brokers are UP. */
int audit_stats_cb(rd_kafka_t *rk, char *json, size_t json_len, void *opaque)
{
        struct audit *a = opaque;
        json_t *root = json_loadb(json, json_len, 0, NULL);
        json_t *brokers, *b;
        const char *key;
        int up = 0;

        (void)rk;
        if (!root)
                return 0;
        brokers = json_object_get(root, "brokers");
        json_object_foreach(brokers, key, b)
        {
                const char *state = json_string_value(
                    json_object_get(b, "state"));
                const char *source = json_string_value(
                    json_object_get(b, "source"));
                json_int_t id = json_integer_value(
                    json_object_get(b, "nodeid"));
                /* Bootstrap entries (nodeid -1) are not real brokers, and
                 * neither is the logical "GroupCoordinator" entry: it
                 * carries the nodeid of a broker already counted. */
                if (id >= 0 && state && !strcmp(state, "UP") &&
                    !(source && !strcmp(source, "logical")))
                        up++;
        }
        a->brokers_up = up;
        json_decref(root);
        return 0; /* librdkafka frees json */
}

void audit_publish(struct audit *a, int64_t now)
{
        uint32_t i;

        if (!a->conf.status)
                return;
        for (i = 0; i < a->nparts; i++) {
                int64_t lo = -1, hi = -1;
                rd_kafka_get_watermark_offsets(
                    audit_rk_of(a, a->parts[i].topic), a->parts[i].topic,
                    a->parts[i].partition, &lo, &hi);
                /* librdkafka reports -1001 (invalid) until it knows. */
                if (hi >= 0)
                        a->view.parts[i].high_watermark = hi;
                else if (a->view.parts[i].high_watermark < 0)
                        a->view.parts[i].high_watermark = a->rt[i].end;
                a->view.parts[i].next_offset = a->parts[i].next_offset;
                a->view.parts[i].owned = a->rt[i].owned;
        }
        a->view.updated_ms = now;
        a->view.ledger_open = 1;
        a->view.assigned = 1;
        a->view.brokers_up = a->brokers_up;
        a->view.ledger_paused = a->commit_failing;
        a->view.records = a->stats.records;
        a->view.live_pairs = dedup_tracker_pairs(a->tr);
        a->view.live_open_gaps = dedup_tracker_open_gaps(a->tr);
        /* Read with the frontier (flow.c), every
         * conf.flow_frontier_interval_ms (2 s): not per record. */
        a->view.flow_lag = a->flow && a->fls.fr ? a->fls.info.lag : -1;
        status_publish(a->conf.status, &a->view);
        a->last_publish_ms = now;
}

int audit_view_init(struct audit *a)
{
        const char **names = calloc(a->ntopics, sizeof(*names));
        uint32_t i;
        size_t t;
        int rc;

        if (!names)
                return -1;
        for (t = 0; t < a->ntopics; t++)
                names[t] = a->topics[t].name;
        rc = status_view_init(&a->view, names, a->ntopics, a->nparts);
        free(names);
        if (rc)
                return -1;
        for (i = 0; i < a->nparts; i++) {
                a->view.parts[i].topic = strdup(a->parts[i].topic);
                a->view.parts[i].partition = a->parts[i].partition;
                if (!a->view.parts[i].topic)
                        return -1;
        }
        a->view.started_ms = clock_wall_ms();
        return 0;
}

int audit_view_part_add(struct audit *a, const struct ledger_part *lp)
{
        struct status_part *parts;
        struct status_part *sp;

        parts = realloc(a->view.parts, (a->view.nparts + 1) * sizeof(*parts));
        if (!parts)
                return -1;
        a->view.parts = parts;
        sp = &parts[a->view.nparts];
        memset(sp, 0, sizeof(*sp));
        sp->topic = strdup(lp->topic);
        if (!sp->topic)
                return -1;
        sp->partition = lp->partition;
        sp->next_offset = sp->high_watermark = -1;
        a->view.nparts++;
        return 0;
}
