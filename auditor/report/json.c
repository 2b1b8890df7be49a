/*
 * json.c - the reports as JSON: bytes as JSON strings (lossy UTF-8, with
 * _hex beside), an anomaly (the one evidence format, of the API and of
 * the group's events topic), a topic's counts and verdict, scan --json's
 * object and the summary of counts another process holds.
 */
#include <stdlib.h>
#include <string.h>

#include "../../base/hex.h"
#include "internal.h"

#define REPORT_BYTES_MAX (DEDUP_PRODUCER_MAX * 3 + 1)

/* Length of the valid UTF-8 sequence at p (1..4), or 0. */
static size_t utf8_seq_len(const unsigned char *p, size_t left)
{
        size_t n, i;
        uint32_t cp;

        if (p[0] < 0x80)
                return 1;
        if (p[0] >= 0xc2 && p[0] <= 0xdf)
                n = 2, cp = p[0] & 0x1f;
        else if (p[0] >= 0xe0 && p[0] <= 0xef)
                n = 3, cp = p[0] & 0x0f;
        else if (p[0] >= 0xf0 && p[0] <= 0xf4)
                n = 4, cp = p[0] & 0x07;
        else
                return 0;
        if (left < n)
                return 0;
        for (i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (p[i] & 0x3f);
        }
        if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
                return 0;
        return n;
}

json_t *report_bytes_json(const char *p, size_t len, int *lossy)
{
        const unsigned char *u = (const unsigned char *)p;
        char buf[REPORT_BYTES_MAX * 2] = "", *out = buf;
        size_t i = 0, o = 0;
        json_t *j;
        int bad = 0;

        if (len > DEDUP_PRODUCER_MAX * 2) {
                out = malloc(len * 3 + 1);
                if (!out)
                        return NULL;
        }
        while (i < len) {
                size_t n = utf8_seq_len(u + i, len - i);
                if (n) {
                        memcpy(out + o, u + i, n);
                        o += n;
                        i += n;
                } else {
                        memcpy(out + o, "\xef\xbf\xbd", 3); /* U+FFFD */
                        o += 3;
                        i++;
                        bad = 1;
                }
        }
        j = json_stringn(out, o);
        if (out != buf)
                free(out);
        if (lossy)
                *lossy = bad;
        return j;
}

json_t *report_opt_json(int64_t v)
{
        return v < 0 ? json_null() : json_integer(v);
}

json_t *report_u64_json(uint64_t v)
{
        return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

void report_producer_set(json_t *o, const char *p, size_t len)
{
        char hex[DEDUP_PRODUCER_MAX * 2 + 1];
        int lossy = 0;

        if (!p) {
                json_object_set_new(o, "producer", json_null());
                return;
        }
        json_object_set_new(o, "producer", report_bytes_json(p, len, &lossy));
        if (!lossy)
                return;
        hex_encode(hex, p,
                   len < DEDUP_PRODUCER_MAX ? len : DEDUP_PRODUCER_MAX);
        json_object_set_new(o, "producer_hex", json_string(hex));
}

/* "msgid" (lossy UTF-8), "msgid_hex" (the bytes, when msgid is lossy;
 * else null) and "msgid_len" (the whole id's length; msgid may hold only
 * its first DEDUP_ID_EVIDENCE_MAX bytes), all null when a has no id. */
static void report_msgid_set(json_t *o, const struct ledger_anomaly *a)
{
        char hex[DEDUP_ID_EVIDENCE_MAX * 2 + 1];
        size_t n = a->msgid_stored < DEDUP_ID_EVIDENCE_MAX
                       ? a->msgid_stored
                       : DEDUP_ID_EVIDENCE_MAX;
        int lossy = 0;

        if (!a->msgid || a->msgid_len < 0) {
                json_object_set_new(o, "msgid", json_null());
                json_object_set_new(o, "msgid_hex", json_null());
                json_object_set_new(o, "msgid_len", json_null());
                return;
        }
        json_object_set_new(o, "msgid",
                            report_bytes_json(a->msgid, n, &lossy));
        if (lossy) {
                hex_encode(hex, a->msgid, n);
                json_object_set_new(o, "msgid_hex", json_string(hex));
        } else {
                json_object_set_new(o, "msgid_hex", json_null());
        }
        json_object_set_new(o, "msgid_len", json_integer(a->msgid_len));
}

json_t *report_anomaly_json(const struct ledger_anomaly *a)
{
        json_t *o = json_object();

        if (!o)
                return NULL;
        json_object_set_new(o, "id", json_integer(a->id));
        json_object_set_new(o, "topic",
                            report_bytes_json(a->topic, strlen(a->topic),
                                              NULL));
        json_object_set_new(o, "partition", json_integer(a->partition));
        json_object_set_new(o, "kind", json_string(a->kind));
        report_producer_set(o, a->producer, a->producer_len);
        json_object_set_new(o, "epoch", report_opt_json(a->epoch));
        json_object_set_new(o, "seq_lo", report_opt_json(a->seq_lo));
        json_object_set_new(o, "seq_hi", report_opt_json(a->seq_hi));
        json_object_set_new(o, "offset_lo", report_opt_json(a->offset_lo));
        json_object_set_new(o, "offset_hi", report_opt_json(a->offset_hi));
        json_object_set_new(o, "first_offset",
                            report_opt_json(a->first_offset));
        json_object_set_new(o, "first_partition",
                            report_opt_json(a->first_partition));
        json_object_set_new(o, "first_offset_hi",
                            report_opt_json(a->first_offset_hi));
        report_msgid_set(o, a);
        json_object_set_new(o, "incarnation", json_integer(a->incarnation));
        json_object_set_new(o, "reason",
                            a->reason ? json_string(a->reason) : json_null());
        if (a->detail) {
                json_t *d = json_loads(a->detail, 0, NULL);
                json_object_set_new(o, "detail", d ? d : json_null());
        }
        json_object_set_new(o, "count", report_u64_json(a->count));
        json_object_set_new(o, "detected_ms", json_integer(a->detected_ms));
        return o;
}

json_t *report_kinds_json(const uint64_t *counts)
{
        json_t *o = json_object();
        int k;

        for (k = 0; o && k < DEDUP_KIND__ANOMALY_CNT; k++)
                json_object_set_new(o, dedup_kind_name((enum dedup_kind)k),
                                    report_u64_json(counts[k]));
        return o;
}

/* {"ids": n, "generations": n, "oldest_ms": ms or null}: the id windows. */
static json_t *report_window_json(const struct ledger_summary *s)
{
        json_t *o = json_object();

        json_object_set_new(o, "ids", report_u64_json(s->window_ids));
        json_object_set_new(o, "generations", json_integer(s->window_gens));
        json_object_set_new(o, "oldest_ms",
                            report_opt_json(s->window_oldest_ms));
        return o;
}

static json_t *report_counts_json(const struct ledger_summary *s)
{
        json_t *o = json_object();

        json_object_set_new(o, "records_total", report_u64_json(s->records));
        json_object_set_new(o, "untracked", report_u64_json(s->untracked));
        json_object_set_new(o, "missing_records", report_u64_json(s->missing));
        json_object_set_new(o, "recovered_records",
                            report_u64_json(s->recovered));
        json_object_set_new(o, "unknown_records", report_u64_json(s->unknown));
        json_object_set_new(o, "producers", report_u64_json(s->producers));
        json_object_set_new(o, "pairs", report_u64_json(s->pairs));
        json_object_set_new(o, "topic_streams",
                            report_u64_json(s->topic_streams));
        json_object_set_new(o, "partitions", json_integer(s->partitions));
        json_object_set_new(o, "open_gaps", report_u64_json(s->open_gaps));
        json_object_set_new(o, "coverage_gaps",
                            report_u64_json(s->coverage_gaps));
        json_object_set_new(o, "unaudited_offsets",
                            report_u64_json(s->coverage_records));
        json_object_set_new(o, "truncations", report_u64_json(s->truncations));
        json_object_set_new(o, "truncated_records",
                            report_u64_json(s->truncated_records));
        json_object_set_new(o, "anomalies", report_kinds_json(s->anomalies));
        json_object_set_new(o, "anomalies_total",
                            report_u64_json(report_anomaly_total(s)));
        json_object_set_new(o, "ids_checked", report_u64_json(s->ids_checked));
        json_object_set_new(o, "window", report_window_json(s));
        return o;
}

/* "verdict" and "warnings" of one topic's counts. */
static void report_verdict_set(json_t *o, enum report_verdict v,
                               const struct ledger_summary *s)
{
        char w[256];
        json_t *warn = json_array();

        json_object_set_new(o, "verdict", json_string(report_verdict_name(v)));
        if (v == REPORT_NOT_AUDITED)
                json_array_append_new(
                    warn,
                    json_string(s->records ? "not audited: no record carries "
                                             "the eos.* headers and no "
                                             "message id was checked"
                                           : "not audited: no record was "
                                             "read"));
        report_untracked_text(s, w, sizeof(w));
        if (w[0])
                json_array_append_new(warn, json_string(w));
        json_object_set_new(o, "warnings", warn);
}

static json_t *report_new_json(const struct ledger_summary *d)
{
        json_t *o = json_object();

        json_object_set_new(o, "records_total", report_u64_json(d->records));
        json_object_set_new(o, "untracked", report_u64_json(d->untracked));
        json_object_set_new(o, "missing_records", report_u64_json(d->missing));
        json_object_set_new(o, "coverage_gaps",
                            report_u64_json(d->coverage_gaps));
        json_object_set_new(o, "anomalies", report_kinds_json(d->anomalies));
        json_object_set_new(o, "anomalies_total",
                            report_u64_json(report_anomaly_total(d)));
        json_object_set_new(o, "ids_checked", report_u64_json(d->ids_checked));
        return o;
}

/* Newest (highest id) first. */
static int report_by_id_desc(const void *x, const void *y)
{
        json_int_t a = json_integer_value(
            json_object_get(*(json_t *const *)x, "id"));
        json_int_t b = json_integer_value(
            json_object_get(*(json_t *const *)y, "id"));

        return a < b ? 1 : a > b ? -1 : 0;
}

/* arr sorted newest first (a new array; arr is released). */
static json_t *report_sorted(json_t *arr)
{
        size_t n = json_array_size(arr), i;
        json_t **v = calloc(n ? n : 1, sizeof(*v));
        json_t *out = json_array();

        if (!v || !out) {
                free(v);
                json_decref(out);
                return arr;
        }
        for (i = 0; i < n; i++)
                v[i] = json_array_get(arr, i);
        qsort(v, n, sizeof(*v), report_by_id_desc);
        for (i = 0; i < n; i++)
                json_array_append(out, v[i]);
        free(v);
        json_decref(arr);
        return out;
}

/* "verdict" and "warnings" of a flow's sink: its records are judged by
 * lineage, so carrying no eos.* headers of its own is no warning. */
static void report_sink_verdict_set(json_t *o, enum report_verdict v)
{
        json_t *warn = json_array();

        json_object_set_new(o, "verdict", json_string(report_verdict_name(v)));
        if (v == REPORT_NOT_AUDITED)
                json_array_append_new(warn,
                                      json_string(
                                          "not audited: the flow traced no "
                                          "record (no id on either side)"));
        json_object_set_new(o, "warnings", warn);
}

/* report_latest()'s callback: each anomaly into the array with its kcat
 * commands. */
struct report_walk {
        json_t *arr;
        const char *brokers;
};

static int report_walk_cb(void *opaque, const struct ledger_anomaly *a)
{
        struct report_walk *w = opaque;
        json_t *o = report_anomaly_json(a);

        if (o)
                report_kcat_set(o, a, w->brokers);
        json_array_append_new(w->arr, o);
        return 0;
}

json_t *report_summary_json(struct ledger *lg, const char *const *topics,
                            size_t n, const struct report_opts *o,
                            char *errstr, size_t errstr_size)
{
        struct ledger_summary sum, s, d, dsum;
        enum report_verdict verdict = REPORT_CLEAN, v, fv = REPORT_CLEAN;
        json_t *root = NULL, *arr = json_array();
        int any_prev = 0;
        size_t i;

        memset(&sum, 0, sizeof(sum));
        memset(&dsum, 0, sizeof(dsum));
        sum.window_oldest_ms = -1;
        if (!arr)
                goto fail;
        if (o->sinks && report_flow_verdict_get(lg, &fv, errstr, errstr_size))
                goto fail;
        for (i = 0; i < n; i++) {
                json_t *t;
                int sink = i < o->sinks;
                if (ledger_summary(lg, topics[i], &s, errstr, errstr_size))
                        goto fail;
                report_summary_add(&sum, &s);
                v = report_verdict(&s);
                if (sink)
                        v = report_sink_verdict(v, fv);
                verdict = report_verdict_merge(verdict, v);
                t = report_counts_json(&s);
                json_object_set_new(t, "topic",
                                    report_bytes_json(topics[i],
                                                      strlen(topics[i]),
                                                      NULL));
                if (o->sinks)
                        json_object_set_new(t, "judged_by",
                                            json_string(sink ? "lineage"
                                                             : "sequence"));
                if (sink)
                        report_sink_verdict_set(t, v);
                else
                        report_verdict_set(t, v, &s);
                if (o->prev) {
                        int had = o->prev[i].partitions > 0;
                        static const struct ledger_summary none;

                        report_delta(&s, had ? &o->prev[i] : &none, &d);
                        report_summary_add(&dsum, &d);
                        any_prev |= had;
                        json_object_set_new(t, "previous_run",
                                            json_boolean(had));
                        json_object_set_new(t, "new", report_new_json(&d));
                }
                if (o->examples > 0) {
                        struct report_walk w = {.arr = json_array(),
                                                .brokers = o->brokers};
                        if (report_latest(lg, topics[i], o->examples,
                                          report_walk_cb, &w, errstr,
                                          errstr_size)) {
                                json_decref(w.arr);
                                json_decref(t);
                                goto fail;
                        }
                        json_object_set_new(t, "latest_anomalies",
                                            report_sorted(w.arr));
                }
                json_array_append_new(arr, t);
        }
        root = report_counts_json(&sum);
        if (o->sinks)
                verdict = report_verdict_merge(verdict, fv);
        /* Sums hide a topic nobody audited: the verdict is the topics'. */
        json_object_set_new(root, "verdict",
                            json_string(report_verdict_name(verdict)));
        if (o->prev) {
                json_object_set_new(root, "previous_run",
                                    json_boolean(any_prev));
                json_object_set_new(root, "new", report_new_json(&dsum));
        }
        /* Producers may write to several topics: the total is a sum. */
        json_object_set_new(root, "topics", arr);
        return root;
fail:
        json_decref(arr);
        if (!*errstr)
                snprintf(errstr, errstr_size, "out of memory");
        return NULL;
}

json_t *report_summary_of_json(const char *const *topics,
                               const struct ledger_summary *per, size_t n)
{
        struct ledger_summary sum;
        enum report_verdict verdict = REPORT_CLEAN, v;
        json_t *root, *arr = json_array();
        size_t i;

        memset(&sum, 0, sizeof(sum));
        sum.window_oldest_ms = -1;
        if (!arr)
                return NULL;
        for (i = 0; i < n; i++) {
                json_t *t = report_counts_json(&per[i]);
                report_summary_add(&sum, &per[i]);
                v = report_verdict(&per[i]);
                verdict = report_verdict_merge(verdict, v);
                json_object_set_new(t, "topic",
                                    report_bytes_json(topics[i],
                                                      strlen(topics[i]),
                                                      NULL));
                report_verdict_set(t, v, &per[i]);
                json_array_append_new(arr, t);
        }
        root = report_counts_json(&sum);
        if (!root) {
                json_decref(arr);
                return NULL;
        }
        json_object_set_new(root, "verdict",
                            json_string(report_verdict_name(verdict)));
        json_object_set_new(root, "topics", arr);
        return root;
}
