/*
 * metrics.c - /metrics in the Prometheus text exposition format 0.0.4.
 *
 * Counters come from the ledger (ledger_summary per audited topic), so
 * they survive a restart; live figures (lag, histograms, readiness) from
 * the published status.  Every family of the ledger has a topic label;
 * the anomaly families have kind, and the lag has partition; process-wide
 * families (readiness, build info, commit durations) have none.  Producer
 * names never become labels (their number is unbounded).
 *
 * Units are never mixed in one family, so that sum() over its labels
 * means something: anomalous records (eosaudit_anomalous_records_total),
 * anomaly events counted as such (eosaudit_anomaly_events_total: confirmed
 * gaps and coverage gaps), the records missing in those gaps and the
 * offsets retention deleted unaudited each have their own counter.
 *
 * serve --group: the families above stay this member's own (its ledger:
 * the partitions it audits or audited), so that sum() across the
 * members' scrapes is the group's.  The group-wide figures that each
 * member also serves (from the group's state and events topics,
 * auditor/grouprep.h) are in families of their own, eosaudit_group_*,
 * which every member reports alike: never sum them across members.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "../auditor/group/grouprep.h"
#include "../auditor/report/report.h"
#include "internal.h"

#define HTTP_METRICS_MAX (16 * 1024 * 1024)
#define HTTP_METRICS_TOPICS_MAX 1024

static const char http_type_metrics[] = "text/plain; version=0.0.4; "
                                        "charset=utf-8";

struct http_label {
        const char *name;
        const char *value;
};

static void http_family(struct http_buf *b, const char *name, const char *type,
                        const char *help)
{
        http_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
                        type);
}

/* A label value: UTF-8 (U+FFFD for bad bytes), with backslash, double
 * quote and newline escaped. */
static void http_label_value(struct http_buf *b, const char *v)
{
        json_t *u = report_bytes_json(v, strlen(v), NULL);
        const char *p = json_string_value(u), *run;
        size_t n = json_string_length(u), i;

        if (!p) {
                b->failed = 1;
                return;
        }
        run = p;
        for (i = 0; i < n; i++) {
                const char *esc = p[i] == '\\'   ? "\\\\"
                                  : p[i] == '"'  ? "\\\""
                                  : p[i] == '\n' ? "\\n"
                                                 : NULL;
                if (!esc)
                        continue;
                http_buf_add(b, run, (size_t)(p + i - run));
                http_buf_add(b, esc, 2);
                run = p + i + 1;
        }
        http_buf_add(b, run, (size_t)(p + n - run));
        json_decref(u);
}

/* name[suffix]{labels} value */
static void http_sample(struct http_buf *b, const char *name,
                        const char *suffix, const struct http_label *ls,
                        size_t n, const char *value)
{
        size_t i;

        http_buf_printf(b, "%s%s", name, suffix);
        for (i = 0; i < n; i++) {
                http_buf_printf(b, "%s%s=\"", i ? "," : "{", ls[i].name);
                http_label_value(b, ls[i].value);
                http_buf_add(b, "\"", 1);
        }
        http_buf_printf(b, "%s %s\n", n ? "}" : "", value);
}

static void http_sample_u64(struct http_buf *b, const char *name,
                            const struct http_label *ls, size_t n, uint64_t v)
{
        char num[24];

        snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
        http_sample(b, name, "", ls, n, num);
}

/* One histogram of a family; topic may be NULL (no label). */
static void http_histogram(struct http_buf *b, const char *name,
                           const char *topic, const struct status_hist *h)
{
        struct http_label ls[2];
        size_t n = 0, i;
        uint64_t cum = 0;
        char le[32], num[32];

        if (topic)
                ls[n++] = (struct http_label){"topic", topic};
        ls[n] = (struct http_label){"le", le};
        for (i = 0; i <= h->nbuckets; i++) {
                cum += h->counts[i];
                if (i < h->nbuckets)
                        snprintf(le, sizeof(le), "%g", h->bounds[i]);
                else
                        snprintf(le, sizeof(le), "+Inf");
                snprintf(num, sizeof(num), "%llu", (unsigned long long)cum);
                http_sample(b, name, "_bucket", ls, n + 1, num);
        }
        snprintf(num, sizeof(num), "%.17g", h->sum);
        http_sample(b, name, "_sum", ls, n, num);
        snprintf(num, sizeof(num), "%llu", (unsigned long long)h->count);
        http_sample(b, name, "_count", ls, n, num);
}

/* Families whose value is one field of the topic's ledger summary. */
/* A family of one counter per topic: the uint64_t at off in each
 * topic's summary (struct ledger_summary, or struct grouprep_counts). */
struct http_topic_family {
        const char *name, *type, *help;
        size_t off;
};

static const struct http_topic_family http_summary_families[] = {
    {"eosaudit_records_total", "counter",
     "Records audited (every record observed, tracked or not).",
     offsetof(struct ledger_summary, records)},
    {"eosaudit_missing_records_total", "counter",
     "Records lost in confirmed gaps (a record that comes after its "
     "gap was confirmed lowers it).",
     offsetof(struct ledger_summary, missing)},
    {"eosaudit_recovered_records_total", "counter",
     "Records that came after their gap was confirmed: no longer "
     "missing.",
     offsetof(struct ledger_summary, recovered)},
    {"eosaudit_unknown_records", "gauge",
     "Records of gaps open when retention deleted unread records: "
     "maybe deleted, maybe lost.",
     offsetof(struct ledger_summary, unknown)},
    {"eosaudit_untracked_records_total", "counter",
     "Records without any eos.* header.",
     offsetof(struct ledger_summary, untracked)},
    {"eosaudit_unaudited_offsets_total", "counter",
     "Offsets deleted by retention before they were audited (in the "
     "coverage gaps of eosaudit_anomaly_events_total).",
     offsetof(struct ledger_summary, coverage_records)},
    {"eosaudit_truncated_records_total", "counter",
     "Records the audit had accepted that a truncated log (an unclean "
     "leader election) took back; those not written again are also "
     "in eosaudit_missing_records_total once their gap is confirmed.",
     offsetof(struct ledger_summary, truncated_records)},
    {"eosaudit_open_gaps", "gauge",
     "Gaps in eos.seq not confirmed yet (a late record may fill them).",
     offsetof(struct ledger_summary, open_gaps)},
    {"eosaudit_producers", "gauge",
     "Distinct producer names tracked, per-partition and "
     "topic-scoped.",
     offsetof(struct ledger_summary, producers)},
    {"eosaudit_producer_partitions", "gauge",
     "Tracked (partition, producer) pairs.",
     offsetof(struct ledger_summary, pairs)},
    {"eosaudit_topic_streams", "gauge",
     "Tracked topic-scoped streams (eos.scope: topic), one per "
     "(producer, epoch).",
     offsetof(struct ledger_summary, topic_streams)},
    {"eosaudit_ids_checked_total", "counter",
     "Records whose message id was checked against the topic's id "
     "window (for redelivered records).",
     offsetof(struct ledger_summary, ids_checked)},
    {"eosaudit_id_window_ids", "gauge",
     "Message ids the topic's id window holds now.",
     offsetof(struct ledger_summary, window_ids)},
};

/* The kinds whose unit is the record; the others (gap, and coverage,
 * which is no engine kind) are counted as events. */
static int http_kind_is_records(enum dedup_kind k)
{
        return k != DEDUP_KIND_GAP && k != DEDUP_KIND_TORN;
}

/* Families fam[0..n) of the audited topics, from their summaries
 * sums (stride bytes apart). */
static void http_topic_families(struct http_buf *b, const struct http_conf *c,
                                const struct http_topic_family *fam, size_t n,
                                const void *sums, size_t stride)
{
        struct http_label l = {"topic", NULL};
        size_t f, i;

        for (f = 0; f < n; f++) {
                http_family(b, fam[f].name, fam[f].type, fam[f].help);
                for (i = 0; i < c->topic_cnt; i++) {
                        uint64_t v;
                        memcpy(&v,
                               (const char *)sums + i * stride + fam[f].off,
                               sizeof(v));
                        l.value = c->topics[i];
                        http_sample_u64(b, fam[f].name, &l, 1, v);
                }
        }
}

/* The anomalies by kind of the audited topics: the records family
 * (records), then the events family (events: gap and torn) with its
 * family left open for the caller's other kinds.  anoms: each topic's
 * DEDUP_KIND__ANOMALY_CNT counts, stride bytes apart. */
static void http_kind_families(struct http_buf *b, const struct http_conf *c,
                               const char *records, const char *records_help,
                               const char *events, const char *events_help,
                               const uint64_t *anoms, size_t stride)
{
        static const enum dedup_kind ev[] = {DEDUP_KIND_GAP, DEDUP_KIND_TORN};
        struct http_label ls[2] = {{"topic", NULL}, {"kind", NULL}};
        size_t i, e;
        int k;

        http_family(b, records, "counter", records_help);
        for (i = 0; i < c->topic_cnt; i++) {
                const uint64_t *a =
                    (const uint64_t *)(const void *)((const char *)anoms +
                                                     i * stride);
                ls[0].value = c->topics[i];
                for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++) {
                        if (!http_kind_is_records((enum dedup_kind)k))
                                continue;
                        ls[1].value = dedup_kind_name((enum dedup_kind)k);
                        http_sample_u64(b, records, ls, 2, a[k]);
                }
        }
        http_family(b, events, "counter", events_help);
        for (i = 0; i < c->topic_cnt; i++) {
                const uint64_t *a =
                    (const uint64_t *)(const void *)((const char *)anoms +
                                                     i * stride);
                ls[0].value = c->topics[i];
                for (e = 0; e < sizeof(ev) / sizeof(ev[0]); e++) {
                        ls[1].value = dedup_kind_name(ev[e]);
                        http_sample_u64(b, events, ls, 2, a[ev[e]]);
                }
        }
}

/* The counters of the audited topics, from the ledger. */
static void http_ledger_families(struct http_buf *b, const struct http_conf *c,
                                 const struct ledger_summary *sums)
{
        struct http_label ls[2] = {{"topic", NULL}, {"kind", "coverage"}};
        size_t i;

        http_kind_families(
            b, c, "eosaudit_anomalous_records_total",
            "Records found anomalous, by kind (duplicate, out_of_order, "
            "fenced, malformed, redelivered, aborted_read).",
            "eosaudit_anomaly_events_total",
            "Anomalies counted as events, by kind: confirmed gaps in "
            "eos.seq (gap; their records are in "
            "eosaudit_missing_records_total), (transaction, partition)s "
            "short of their manifest (torn) and offset ranges lost to "
            "retention (coverage; their offsets are in "
            "eosaudit_unaudited_offsets_total).",
            sums[0].anomalies, sizeof(sums[0]));
        for (i = 0; i < c->topic_cnt; i++) { /* still the events family */
                ls[0].value = c->topics[i];
                http_sample_u64(b, "eosaudit_anomaly_events_total", ls, 2,
                                sums[i].coverage_gaps);
        }
        http_topic_families(b, c, http_summary_families,
                            sizeof(http_summary_families) /
                                sizeof(http_summary_families[0]),
                            sums, sizeof(sums[0]));
}

static void http_live_families(struct http_buf *b, const struct status_view *v)
{
        struct http_label ls[2] = {{"topic", NULL}, {"partition", NULL}};
        char part[16];
        int64_t lag;
        size_t i;

        http_family(b, "eosaudit_start_time_seconds", "gauge",
                    "When the audit started, seconds since the epoch.");
        http_sample_u64(b, "eosaudit_start_time_seconds", NULL, 0,
                        (uint64_t)(v->started_ms / 1000));
        http_family(b, "eosaudit_brokers_up", "gauge",
                    "Brokers the consumer sees as up.");
        http_sample_u64(b, "eosaudit_brokers_up", NULL, 0,
                        v->brokers_up > 0 ? (uint64_t)v->brokers_up : 0);
        http_family(b, "eosaudit_ledger_paused", "gauge",
                    "1 while ledger commits fail and the audit holds its "
                    "batch.");
        http_sample_u64(b, "eosaudit_ledger_paused", NULL, 0,
                        !!v->ledger_paused);
        http_family(b, "eosaudit_consumer_lag_records", "gauge",
                    "High watermark minus the next offset to audit, per "
                    "partition.");
        for (i = 0; i < v->nparts; i++) {
                lag = status_part_lag(&v->parts[i]);
                if (lag < 0 || !v->parts[i].topic)
                        continue;
                snprintf(part, sizeof(part), "%d", (int)v->parts[i].partition);
                ls[0].value = v->parts[i].topic;
                ls[1].value = part;
                http_sample_u64(b, "eosaudit_consumer_lag_records", ls, 2,
                                (uint64_t)lag);
        }
        http_family(b, "eosaudit_record_latency_seconds", "histogram",
                    "From a record's timestamp to its audit (this process "
                    "only).");
        for (i = 0; i < v->ntopics; i++)
                http_histogram(b, "eosaudit_record_latency_seconds",
                               v->topics[i].name, &v->topics[i].latency);
        http_family(b, "eosaudit_ledger_commit_duration_seconds", "histogram",
                    "Duration of one ledger commit (this process only).");
        http_histogram(b, "eosaudit_ledger_commit_duration_seconds", NULL,
                       &v->commit);
}

/* Families of one counter of the group's state records per topic. */
static const struct http_topic_family http_group_families[] = {
    {"eosaudit_group_records_total", "counter",
     "The whole group's records audited, from its state topic (every "
     "member reports the same: do not sum across members).",
     offsetof(struct grouprep_counts, records)},
    {"eosaudit_group_missing_records_total", "counter",
     "The whole group's records lost in confirmed gaps, from its state "
     "topic (do not sum across members).",
     offsetof(struct grouprep_counts, missing)},
    {"eosaudit_group_untracked_records_total", "counter",
     "The whole group's records without any eos.* header, from its "
     "state topic (do not sum across members).",
     offsetof(struct grouprep_counts, untracked)},
    {"eosaudit_group_truncated_records_total", "counter",
     "The whole group's records its owners had accepted that a "
     "truncated log took back, from its events topic's truncated "
     "events (do not sum across members).",
     offsetof(struct grouprep_counts, truncated_records)},
};

/* serve --group: the whole group's figures (never summed across
 * members), when the group view has read them. */
static void http_group_families_add(struct http_buf *b,
                                    const struct http_conf *c,
                                    const struct grouprep_snap *s)
{
        struct http_label ls[2] = {{"topic", NULL}, {"kind", NULL}};
        struct grouprep_counts *sums;
        size_t *nstate, i;

        sums = calloc(c->topic_cnt ? c->topic_cnt : 1, sizeof(*sums));
        nstate = calloc(c->topic_cnt ? c->topic_cnt : 1, sizeof(*nstate));
        if (!sums || !nstate) {
                b->failed = 1;
                goto out;
        }
        for (i = 0; i < c->topic_cnt; i++)
                nstate[i] = grouprep_snap_sum(s, c->topics[i], &sums[i], NULL,
                                              NULL);
        http_kind_families(
            b, c, "eosaudit_group_anomalous_records_total",
            "The whole group's anomalous records by kind, from its state "
            "topic, redelivered from its events topic (every member "
            "reports the same: do not sum across members).",
            "eosaudit_group_anomaly_events_total",
            "The whole group's anomalies counted as events (gap, torn), "
            "from its state topic (do not sum across members).",
            sums[0].anomalies, sizeof(sums[0]));
        http_topic_families(b, c, http_group_families,
                            sizeof(http_group_families) /
                                sizeof(http_group_families[0]),
                            sums, sizeof(sums[0]));
        http_family(b, "eosaudit_group_partitions_with_state", "gauge",
                    "Audited partitions that have a state record in the "
                    "group's state topic (the others are not audited by "
                    "any member yet).");
        for (i = 0; i < c->topic_cnt; i++) {
                ls[0].value = c->topics[i];
                http_sample_u64(b, "eosaudit_group_partitions_with_state", ls,
                                1, nstate[i]);
        }
        http_family(b, "eosaudit_group_state_records_malformed_total",
                    "counter",
                    "Records of the group's state topic that did not parse "
                    "(skipped), since this member started.");
        http_sample_u64(b, "eosaudit_group_state_records_malformed_total",
                        NULL, 0, s->state_malformed);
out:
        free(sums);
        free(nstate);
}

/* The ledger summaries of the audited topics into sums[]; -1 when the
 * ledger cannot be read (yet). */
static int http_summaries(const struct http_request *rq,
                          struct ledger_summary *sums)
{
        const struct http_conf *c = rq->conf;
        char errstr[512];
        struct ledger *lg = http_reader_get(rq->readers, errstr,
                                            sizeof(errstr));
        size_t i;
        int rc = 0;

        if (!lg)
                return -1;
        for (i = 0; !rc && i < c->topic_cnt; i++)
                rc = ledger_summary(lg, c->topics[i], &sums[i], errstr,
                                    sizeof(errstr));
        http_reader_put(rq->readers, lg, rc != 0);
        return rc;
}

void http_metrics_handle(const struct http_request *rq, struct http_reply *r)
{
        const struct http_conf *c = rq->conf;
        struct ledger_summary *sums;
        struct status_view view, *v;
        struct http_label ls[2] = {{"version", NULL},
                                   {"librdkafka_version", NULL}};
        const char *why[1];
        struct http_buf b;
        int ledger_ok;

        if (c->topic_cnt > HTTP_METRICS_TOPICS_MAX) {
                http_reply_error(r, 500, "too many topics");
                return;
        }
        sums = calloc(c->topic_cnt ? c->topic_cnt : 1, sizeof(*sums));
        if (!sums) {
                http_reply_error(r, 500, "out of memory");
                return;
        }
        ledger_ok = !http_summaries(rq, sums);
        v = status_view_get(c->status, &view);
        http_buf_init(&b, HTTP_METRICS_MAX);

        /* No eosaudit_up: Prometheus's own up{job=...} says whether the
         * process answers. */
        http_family(&b, "eosaudit_ready", "gauge",
                    "1 when the ledger is open, partitions are assigned, a "
                    "broker is up and commits succeed (see /readyz).");
        http_sample_u64(&b, "eosaudit_ready", NULL, 0,
                        status_ready_reasons(v, why, 1) == 0);
        http_family(&b, "eosaudit_build_info", "gauge",
                    "Versions of eosaudit and librdkafka; always 1.");
        ls[0].value = c->version ? c->version : "unknown";
        ls[1].value = rd_kafka_version_str();
        http_sample(&b, "eosaudit_build_info", "", ls, 2, "1");
        http_family(&b, "eosaudit_ledger_readable", "gauge",
                    "1 when the ledger could be read for this scrape; the "
                    "counters are missing otherwise.");
        http_sample_u64(&b, "eosaudit_ledger_readable", NULL, 0, ledger_ok);
        if (ledger_ok)
                http_ledger_families(&b, c, sums);
        /* The flow audit's families (metrics_flow.c). */
        if (ledger_ok)
                http_metrics_flow(rq, &b);
        if (c->group) {
                struct grouprep_snap *s = status_grouprep_get(c->status);
                if (s)
                        http_group_families_add(&b, c, s);
                grouprep_snap_put(s);
        }
        if (v) {
                http_live_families(&b, v);
                http_metrics_flow_lag(&b, v);
                status_view_release(v);
        }
        free(sums);
        http_reply_text(r, 200, http_type_metrics, &b);
}
