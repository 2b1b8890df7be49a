/*
 * api_scope.c - serve --group: the group-wide answers of /api/v1/summary
 * and /api/v1/anomalies (their default in group mode; ?scope=member for
 * this member's own ledger), made from the snapshot the group view's
 * thread publishes (auditor/grouprep.h: the group's state and events
 * topics, read read_committed).  This thread only reads the snapshot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../auditor/group/grouprep.h"
#include "../auditor/report/report.h"
#include "../base/clock.h"
#include "internal.h"

int http_api_scope(struct http_api *a, struct grouprep_snap **snap)
{
        const struct http_conf *c = a->rq->conf;

        *snap = NULL;
        if (a->q->scope == HTTP_SCOPE_MEMBER ||
            (a->q->scope == HTTP_SCOPE_DEFAULT && !c->group))
                return 0;
        if (!c->group) {
                snprintf(a->errstr, sizeof(a->errstr),
                         "scope=group needs group mode: this process was "
                         "not started with --group");
                a->fail_status = 404;
                return -1;
        }
        *snap = status_grouprep_get(c->status);
        if (!*snap) {
                snprintf(a->errstr, sizeof(a->errstr),
                         "group %.200s: its state and events topics are "
                         "not read to their end yet (scope=member answers "
                         "for this member meanwhile)",
                         c->group);
                a->fail_status = 503;
                return -1;
        }
        return 1;
}

/* Whether topic is one of topics[0..n) (topics NULL: yes). */
static int http_group_topic_in(const char *topic, const char *const *topics,
                               size_t n)
{
        size_t i;

        if (!topics)
                return 1;
        for (i = 0; i < n; i++)
                if (!strcmp(topic, topics[i]))
                        return 1;
        return 0;
}

/* {"name", "as_of", partitions with and without state, ...}; the
 * partitions those of topics[0..n) (topics NULL: every one), as the
 * figures beside them. */
static json_t *http_group_about(const struct http_api *a,
                                const struct grouprep_snap *s,
                                const char *const *topics, size_t n)
{
        const char *group = a->rq->conf->group;
        json_t *none = json_array();
        size_t i, with_state = 0;

        for (i = 0; i < s->nparts; i++)
                with_state += http_group_topic_in(s->parts[i].topic, topics,
                                                  n);
        for (i = 0; i < s->nunstated; i++)
                if (http_group_topic_in(s->unstated[i].topic, topics, n))
                        json_array_append_new(
                            none, http_where_json(s->unstated[i].topic,
                                                  s->unstated[i].partition));
        return json_pack(
            "{s:o, s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:I, s:o}", "name",
            report_bytes_json(group, strlen(group), NULL), "as_of",
            "each partition's last committed transaction of its owner "
            "(read_committed): behind this member's own view by up to the "
            "owners' commit interval",
            "partitions_with_state", (json_int_t)with_state,
            "partitions_without_state", none, "state_records_read",
            report_u64_json(s->state_records), "state_records_malformed",
            report_u64_json(s->state_malformed), "event_records_read",
            report_u64_json(s->events_read), "event_records_malformed",
            report_u64_json(s->events_malformed), "updated_ms",
            (json_int_t)s->made_ms, "error",
            s->error[0] ? report_bytes_json(s->error, strlen(s->error), NULL)
                        : json_null());
}

/* What a state record does not carry: null rather than a wrong 0. */
static void http_group_unknowns(json_t *o)
{
        static const char *const none[] = {"producers", "open_gaps",
                                           "coverage_gaps",
                                           "unaudited_offsets", "window"};
        size_t i;

        for (i = 0; i < sizeof(none) / sizeof(none[0]); i++)
                json_object_set_new(o, none[i], json_null());
}

json_t *http_group_summary_json(struct http_api *a,
                                const struct grouprep_snap *s,
                                const char *const *topics, size_t n)
{
        struct ledger_summary *per = calloc(n ? n : 1, sizeof(*per));
        struct grouprep_counts c;
        int64_t *lags = calloc(n ? n : 1, sizeof(*lags)), lag = -1;
        size_t i;
        json_t *j = NULL, *arr;
        int k;

        if (!per || !lags)
                goto out;
        for (i = 0; i < n; i++) {
                uint64_t pairs;
                per[i].partitions = (uint32_t)grouprep_snap_sum(s, topics[i],
                                                                &c, &pairs,
                                                                &lags[i]);
                per[i].records = c.records;
                per[i].untracked = c.untracked;
                per[i].missing = c.missing;
                per[i].recovered = c.recovered;
                per[i].unknown = c.unknown;
                per[i].ids_checked = c.ids;
                per[i].pairs = pairs;
                per[i].window_oldest_ms = -1;
                per[i].truncations = c.truncations;
                per[i].truncated_records = c.truncated_records;
                for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                        per[i].anomalies[k] = c.anomalies[k];
                if (lags[i] >= 0)
                        lag = (lag < 0 ? 0 : lag) + lags[i];
        }
        j = report_summary_of_json(topics, per, n);
        if (!j)
                goto out;
        arr = json_object_get(j, "topics");
        for (i = 0; i < n; i++) {
                json_t *t = json_array_get(arr, i);
                http_group_unknowns(t);
                json_object_set_new(t, "lag", report_opt_json(lags[i]));
        }
        http_group_unknowns(j);
        json_object_set_new(j, "scope", json_string("group"));
        json_object_set_new(j, "group", http_group_about(a, s, topics, n));
        json_object_set_new(j, "lag", report_opt_json(lag));
        json_object_set_new(j, "live", http_live_json(a->v));
        json_object_set_new(j, "generated_ms", json_integer(clock_wall_ms()));
out:
        free(per);
        free(lags);
        return j;
}

/* Whether e passes q's filters (topic, kind, producer, since, cursor). */
static int http_group_event_match(const struct http_query *q,
                                  const struct grouprep_event *e)
{
        if (q->topic && strcmp(q->topic, e->topic))
                return 0;
        if (q->kind && strcmp(q->kind, e->kind))
                return 0;
        if (q->producer &&
            (!e->producer || e->producer_len != q->producer_len ||
             memcmp(e->producer, q->producer, q->producer_len)))
                return 0;
        if (q->since_ms >= 0 && e->when_ms < q->since_ms)
                return 0;
        if (q->cursor >= 0 && e->offset >= q->cursor)
                return 0;
        return 1;
}

json_t *http_group_anomalies_json(struct http_api *a,
                                  const struct grouprep_snap *s)
{
        struct http_page pg = {.items = json_array(), .limit = a->q->limit};
        json_t *j;
        size_t i;

        for (i = s->nevents; i-- > 0;) {
                const struct grouprep_event *e = &s->events[i];
                struct ledger_anomaly an;
                json_t *o;
                if (!http_group_event_match(a->q, e))
                        continue;
                if (http_page_full(&pg))
                        break;
                memset(&an, 0, sizeof(an));
                an.id = e->offset;
                an.topic = e->topic;
                an.partition = e->partition;
                an.kind = e->kind;
                an.producer = e->producer;
                an.producer_len = e->producer_len;
                an.epoch = e->epoch;
                an.seq_lo = e->seq_lo;
                an.seq_hi = e->seq_hi;
                an.offset_lo = e->offset_lo;
                an.offset_hi = e->offset_hi;
                an.first_offset = e->first_offset;
                an.count = e->count;
                an.detected_ms = e->when_ms;
                an.first_partition = e->first_partition;
                an.first_offset_hi = e->first_offset_hi;
                an.msgid = e->msgid;
                an.msgid_stored = e->msgid_stored;
                an.msgid_len = e->msgid_len;
                an.reason = e->reason;
                an.detail = e->detail;
                o = report_anomaly_json(&an);
                if (o) {
                        report_kcat_set(o, &an, a->rq->conf->brokers);
                        if (e->first_topic)
                                json_object_set_new(
                                    o, "first_topic",
                                    report_bytes_json(e->first_topic,
                                                      strlen(e->first_topic),
                                                      NULL));
                        json_object_set_new(
                            o, "member",
                            e->member
                                ? report_bytes_json(e->member,
                                                    strlen(e->member), NULL)
                                : json_null());
                }
                json_array_append_new(pg.items, o);
                pg.last_id = e->offset;
                pg.n++;
        }
        j = http_page_json(&pg, 0, "anomalies", json_integer(pg.last_id));
        if (!j)
                return NULL;
        json_object_set_new(j, "scope", json_string("group"));
        json_object_set_new(j, "group",
                            http_group_about(a, s,
                                             a->q->topic ? &a->q->topic : NULL,
                                             a->q->topic ? 1 : 0));
        json_object_set_new(j, "events_kept",
                            json_integer((json_int_t)s->nevents));
        return j;
}
