/*
 * report.c - see report.h.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report.h"
#include "report_flow.h"

#define REPORT_BYTES_MAX (DEDUP_PRODUCER_MAX * 3 + 1)

uint64_t report_anomaly_total(const struct ledger_summary *s)
{
        uint64_t n = s->coverage_gaps;
        int k;

        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                n += s->anomalies[k];
        return n;
}

enum report_verdict report_verdict(const struct ledger_summary *s)
{
        if (report_anomaly_total(s))
                return REPORT_ANOMALIES;
        /* Untracked records are read but not audited; malformed ones are
         * anomalies, counted above. */
        if (s->records <= s->untracked && !s->ids_checked)
                return REPORT_NOT_AUDITED;
        return REPORT_CLEAN;
}

enum report_verdict report_verdict_merge(enum report_verdict a,
                                         enum report_verdict b)
{
        return a > b ? a : b;
}

const char *report_verdict_name(enum report_verdict v)
{
        switch (v) {
        case REPORT_ANOMALIES:
                return "anomalies";
        case REPORT_NOT_AUDITED:
                return "not_audited";
        case REPORT_CLEAN:
                break;
        }
        return "clean";
}

int report_mostly_untracked(const struct ledger_summary *s)
{
        return s->records && s->untracked > s->records / 2;
}

/* The warning of a topic that is mostly untracked, into buf ("" when it
 * is not). */
static void report_untracked_text(const struct ledger_summary *s, char *buf,
                                  size_t size)
{
        unsigned pct;

        buf[0] = '\0';
        if (!report_mostly_untracked(s))
                return;
        pct = (unsigned)(s->untracked * 100.0 / (double)s->records);
        snprintf(buf, size,
                 "%llu of %llu records (%u%%) carry no eos.* headers: no "
                 "sequence check (duplicate, gap, out_of_order, fenced) "
                 "covered them%s",
                 (unsigned long long)s->untracked,
                 (unsigned long long)s->records, pct,
                 s->ids_checked ? "; only their message ids were checked"
                                : "");
}

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

/* Lower-case hex of up to max bytes of p into hex (room for 2 * max + 1). */
static void report_hex(char *hex, const void *p, size_t len, size_t max)
{
        const unsigned char *u = p;
        size_t i;

        for (i = 0; i < len && i < max; i++)
                snprintf(hex + 2 * i, 3, "%02x", u[i]);
        hex[2 * i] = '\0';
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
        report_hex(hex, p, len, DEDUP_PRODUCER_MAX);
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
        json_object_set_new(o, "msgid", report_bytes_json(a->msgid, n, &lossy));
        if (lossy) {
                report_hex(hex, a->msgid, n, DEDUP_ID_EVIDENCE_MAX);
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
        json_object_set_new(o, "topic", report_bytes_json(a->topic,
                                                          strlen(a->topic),
                                                          NULL));
        json_object_set_new(o, "partition", json_integer(a->partition));
        json_object_set_new(o, "kind", json_string(a->kind));
        report_producer_set(o, a->producer, a->producer_len);
        json_object_set_new(o, "epoch", report_opt_json(a->epoch));
        json_object_set_new(o, "seq_lo", report_opt_json(a->seq_lo));
        json_object_set_new(o, "seq_hi", report_opt_json(a->seq_hi));
        json_object_set_new(o, "offset_lo", report_opt_json(a->offset_lo));
        json_object_set_new(o, "offset_hi", report_opt_json(a->offset_hi));
        json_object_set_new(o, "first_offset", report_opt_json(a->first_offset));
        json_object_set_new(o, "first_partition",
                            report_opt_json(a->first_partition));
        json_object_set_new(o, "first_offset_hi",
                            report_opt_json(a->first_offset_hi));
        report_msgid_set(o, a);
        json_object_set_new(o, "incarnation", json_integer(a->incarnation));
        json_object_set_new(o, "reason", a->reason ? json_string(a->reason)
                                                   : json_null());
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
        json_object_set_new(o, "oldest_ms", report_opt_json(s->window_oldest_ms));
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
        json_object_set_new(o, "unknown_records",
                            report_u64_json(s->unknown));
        json_object_set_new(o, "producers", report_u64_json(s->producers));
        json_object_set_new(o, "pairs", report_u64_json(s->pairs));
        json_object_set_new(o, "partitions", json_integer(s->partitions));
        json_object_set_new(o, "open_gaps", report_u64_json(s->open_gaps));
        json_object_set_new(o, "coverage_gaps",
                            report_u64_json(s->coverage_gaps));
        json_object_set_new(o, "unaudited_offsets",
                            report_u64_json(s->coverage_records));
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

        json_object_set_new(o, "verdict",
                            json_string(report_verdict_name(v)));
        if (v == REPORT_NOT_AUDITED)
                json_array_append_new(
                    warn, json_string(s->records
                                          ? "not audited: no record carries "
                                            "the eos.* headers and no "
                                            "message id was checked"
                                          : "not audited: no record was "
                                            "read"));
        report_untracked_text(s, w, sizeof(w));
        if (w[0])
                json_array_append_new(warn, json_string(w));
        json_object_set_new(o, "warnings", warn);
}

/* What this run added: s minus prev, each figure clamped at 0. */
static void report_delta(const struct ledger_summary *s,
                         const struct ledger_summary *prev,
                         struct ledger_summary *d)
{
        int k;

#define REPORT_SUB(f) (s->f > prev->f ? s->f - prev->f : 0)
        memset(d, 0, sizeof(*d));
        d->records = REPORT_SUB(records);
        d->untracked = REPORT_SUB(untracked);
        d->missing = REPORT_SUB(missing);
        d->coverage_gaps = REPORT_SUB(coverage_gaps);
        d->coverage_records = REPORT_SUB(coverage_records);
        d->ids_checked = REPORT_SUB(ids_checked);
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                d->anomalies[k] = REPORT_SUB(anomalies[k]);
#undef REPORT_SUB
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

/* The kinds "latest anomalies" shows a few of each: every anomaly kind
 * and coverage gaps. */
static const char *report_kind_at(int k)
{
        return k < DEDUP_KIND__ANOMALY_CNT ? dedup_kind_name((enum dedup_kind)k)
                                           : "coverage";
}

struct report_walk {
        json_t *arr;         /* JSON: anomalies collected */
        FILE *f;             /* text: where lines go */
        const char *brokers;
};

static int report_walk_cb(void *opaque, const struct ledger_anomaly *a)
{
        struct report_walk *w = opaque;
        char line[REPORT_EVENT_MAX], cmd[REPORT_KCAT_MAX];

        if (w->arr) {
                json_t *o = report_anomaly_json(a);
                if (o)
                        report_kcat_set(o, a, w->brokers);
                json_array_append_new(w->arr, o);
                return 0;
        }
        report_event_format(a, line, sizeof(line));
        fprintf(w->f, "    %s\n", line);
        if (!report_kcat_format(a, w->brokers, 0, cmd, sizeof(cmd)))
                fprintf(w->f, "        fetch: %s\n", cmd);
        if (!report_kcat_format(a, w->brokers, 1, cmd, sizeof(cmd)))
                fprintf(w->f, "        first: %s\n", cmd);
        return 0;
}

/* The newest `examples` anomalies of each kind of topic into w. */
static int report_latest(struct ledger *lg, const char *topic, int examples,
                         struct report_walk *w, char *errstr,
                         size_t errstr_size)
{
        int k;

        for (k = 0; k <= DEDUP_KIND__ANOMALY_CNT; k++) {
                struct ledger_anomaly_filter f;

                memset(&f, 0, sizeof(f));
                f.topic = topic;
                f.kind = report_kind_at(k);
                f.since_ms = -1;
                f.limit = examples;
                if (ledger_anomalies_query(lg, &f, report_walk_cb, w, errstr,
                                           errstr_size))
                        return -1;
        }
        return 0;
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

static void summary_add(struct ledger_summary *sum,
                        const struct ledger_summary *s)
{
        int k;

        sum->records += s->records;
        sum->untracked += s->untracked;
        sum->missing += s->missing;
        sum->recovered += s->recovered;
        sum->unknown += s->unknown;
        sum->producers += s->producers;
        sum->pairs += s->pairs;
        sum->open_gaps += s->open_gaps;
        sum->coverage_gaps += s->coverage_gaps;
        sum->coverage_records += s->coverage_records;
        sum->partitions += s->partitions;
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                sum->anomalies[k] += s->anomalies[k];
        sum->ids_checked += s->ids_checked;
        sum->window_ids += s->window_ids;
        sum->window_gens += s->window_gens;
        if (s->window_oldest_ms >= 0 &&
            (sum->window_oldest_ms < 0 ||
             s->window_oldest_ms < sum->window_oldest_ms))
                sum->window_oldest_ms = s->window_oldest_ms;
}

/* The flow's verdict as the ledger holds it. */
static int report_flow_verdict_get(struct ledger *lg, enum report_verdict *fv,
                                   char *errstr, size_t errstr_size)
{
        struct ledger_flow_summary fs;

        if (ledger_flow_summary(lg, &fs, errstr, errstr_size))
                return -1;
        *fv = report_flow_verdict(&fs);
        return 0;
}

/* "verdict" and "warnings" of a flow's sink: its records are judged by
 * lineage, so carrying no eos.* headers of its own is no warning. */
static void report_sink_verdict_set(json_t *o, enum report_verdict v)
{
        json_t *warn = json_array();

        json_object_set_new(o, "verdict",
                            json_string(report_verdict_name(v)));
        if (v == REPORT_NOT_AUDITED)
                json_array_append_new(
                    warn, json_string("not audited: the flow traced no "
                                      "record (no id on either side)"));
        json_object_set_new(o, "warnings", warn);
}

int report_verdict_topics(struct ledger *lg, const char *const *topics,
                          size_t n, size_t sinks, enum report_verdict *v,
                          char *errstr, size_t errstr_size)
{
        struct ledger_summary s;
        enum report_verdict fv = REPORT_CLEAN, tv;
        size_t i;

        *v = REPORT_CLEAN;
        if (sinks && report_flow_verdict_get(lg, &fv, errstr, errstr_size))
                return -1;
        for (i = 0; i < n; i++) {
                if (ledger_summary(lg, topics[i], &s, errstr, errstr_size))
                        return -1;
                tv = report_verdict(&s);
                if (i < sinks)
                        tv = report_sink_verdict(tv, fv);
                *v = report_verdict_merge(*v, tv);
        }
        if (sinks)
                *v = report_verdict_merge(*v, fv);
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
                summary_add(&sum, &s);
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
                        json_object_set_new(
                            t, "judged_by",
                            json_string(sink ? "lineage" : "sequence"));
                if (sink)
                        report_sink_verdict_set(t, v);
                else
                        report_verdict_set(t, v, &s);
                if (o->prev) {
                        int had = o->prev[i].partitions > 0;
                        static const struct ledger_summary none;

                        report_delta(&s, had ? &o->prev[i] : &none, &d);
                        summary_add(&dsum, &d);
                        any_prev |= had;
                        json_object_set_new(t, "previous_run",
                                            json_boolean(had));
                        json_object_set_new(t, "new", report_new_json(&d));
                }
                if (o->examples > 0) {
                        struct report_walk w = {.arr = json_array(),
                                                .brokers = o->brokers};
                        if (report_latest(lg, topics[i], o->examples, &w,
                                          errstr, errstr_size)) {
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
                summary_add(&sum, &per[i]);
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

/* A message id for a terminal: 'text' when every byte is printable
 * ASCII, else 0x and hex; "..." after it when only its start was kept. */
static void report_id_text(char *buf, size_t size,
                           const struct ledger_anomaly *a)
{
        const unsigned char *u = a->msgid;
        size_t n = a->msgid_stored < DEDUP_ID_EVIDENCE_MAX
                           ? a->msgid_stored
                           : DEDUP_ID_EVIDENCE_MAX;
        const char *more = a->msgid_len > (int64_t)n ? "..." : "";
        char hex[DEDUP_ID_EVIDENCE_MAX * 2 + 1];
        size_t i;

        for (i = 0; i < n && u[i] >= 0x20 && u[i] < 0x7f; i++)
                ;
        if (i == n) {
                snprintf(buf, size, "'%.*s'%s", (int)n, (const char *)u, more);
                return;
        }
        report_hex(hex, u, n, DEDUP_ID_EVIDENCE_MAX);
        snprintf(buf, size, "0x%s%s", hex, more);
}

/* "offset 7" or "offsets 7..9". */
static void report_offsets_text(char *buf, size_t size, int64_t lo,
                                int64_t hi)
{
        if (hi > lo)
                snprintf(buf, size, "offsets %lld..%lld", (long long)lo,
                         (long long)hi);
        else
                snprintf(buf, size, "offset %lld", (long long)lo);
}

/* Where a redelivered anomaly's first copies are, and their id:
 * " are copies of partition 1 offsets 7..9, id 'x'". */
static void report_copies_text(char *buf, size_t size,
                               const struct ledger_anomaly *a)
{
        char id[DEDUP_ID_EVIDENCE_MAX * 2 + 16] = "", first[64] = "";
        char where[96];
        int many = a->offset_hi > a->offset_lo;

        if (a->first_offset >= 0)
                report_offsets_text(first, sizeof(first), a->first_offset,
                                    a->first_offset_hi > a->first_offset
                                            ? a->first_offset_hi
                                            : a->first_offset);
        if (a->first_offset >= 0 && a->first_partition >= 0)
                snprintf(where, sizeof(where), "partition %d %s",
                         (int)a->first_partition, first);
        else if (a->first_offset >= 0)
                snprintf(where, sizeof(where), "%s", first);
        else
                snprintf(where, sizeof(where), "%s",
                         many ? "earlier records" : "an earlier record");
        if (a->msgid && a->msgid_len >= 0) {
                char text[DEDUP_ID_EVIDENCE_MAX * 2 + 8];

                report_id_text(text, sizeof(text), a);
                snprintf(id, sizeof(id), ", id %s", text);
        }
        snprintf(buf, size, " %s %s%s",
                 many ? "are copies of" : "is a copy of", where, id);
}

void report_anomaly_from_event(struct ledger_anomaly *a, const char *topic,
                               int32_t partition,
                               const struct dedup_event *ev)
{
        memset(a, 0, sizeof(*a));
        a->id = -1;
        a->topic = topic;
        a->partition = partition;
        a->kind = dedup_kind_name(ev->kind);
        a->producer = ev->producer;
        a->producer_len = ev->producer ? ev->producer_len : 0;
        a->epoch = ev->epoch;
        a->seq_lo = ev->seq_lo;
        a->seq_hi = ev->seq_hi;
        a->offset_lo = ev->offset_lo;
        a->offset_hi = ev->offset_hi;
        a->first_offset = ev->first_offset;
        a->count = ev->count;
        a->detected_ms = ev->when_ms;
        a->malformed_bits = ev->malformed_bits;
        /* The event names its first copies' partition by the audit's part
         * index, which only the audit can map: unknown here. */
        a->first_partition = -1;
        a->first_offset_hi = -1;
        a->msgid_len = -1;
        /* A fenced write's evidence may be on another partition: without
         * it, its offset would mislead. */
        if ((ev->kind == DEDUP_KIND_FENCED ||
             ev->kind == DEDUP_KIND_DUPLICATE) &&
            ev->first_part != ev->part)
                a->first_offset = -1;
        if (ev->kind == DEDUP_KIND_REDELIVERED) {
                a->first_offset_hi = ev->first_offset_hi;
                a->msgid = ev->id;
                a->msgid_stored = ev->id_len < DEDUP_ID_EVIDENCE_MAX
                                          ? ev->id_len
                                          : DEDUP_ID_EVIDENCE_MAX;
                a->msgid_len = (int64_t)ev->id_len;
        }
}

int report_event_format(const struct ledger_anomaly *a, char *buf,
                        size_t size)
{
        char who[DEDUP_PRODUCER_MAX * 3 + 32] = "", seq[64] = "";
        char epoch[32] = "";
        char at[64], evidence[DEDUP_ID_EVIDENCE_MAX * 2 + 160] = "";
        const char *what = !strcmp(a->kind, "gap") ? "missing" : "count";
        int lossy;

        if (a->producer) {
                json_t *name = report_bytes_json(a->producer,
                                                 a->producer_len, &lossy);
                snprintf(who, sizeof(who), " producer '%s'",
                         name ? json_string_value(name) : "?");
                json_decref(name);
        }
        int txn = !strcmp(a->kind, "torn") || !strcmp(a->kind, "aborted_read");

        if (txn && a->seq_lo >= 0) /* the transaction's ordinal */
                snprintf(seq, sizeof(seq), " txn %lld", (long long)a->seq_lo);
        else if (a->seq_lo >= 0 && a->seq_hi > a->seq_lo)
                snprintf(seq, sizeof(seq), " seq %lld..%lld",
                         (long long)a->seq_lo, (long long)a->seq_hi);
        else if (a->seq_lo >= 0)
                snprintf(seq, sizeof(seq), " seq %lld", (long long)a->seq_lo);
        report_offsets_text(at, sizeof(at), a->offset_lo, a->offset_hi);
        if (!strcmp(a->kind, "redelivered"))
                report_copies_text(evidence, sizeof(evidence), a);
        else if (a->reason)
                snprintf(evidence, sizeof(evidence),
                         " (%s: not the log audited before, whose last "
                         "audited record was offset %lld; incarnation %lld "
                         "audited from the log start)",
                         a->reason, (long long)a->first_offset,
                         (long long)a->incarnation);
        else if (!strcmp(a->kind, "fenced") && a->first_offset >= 0 &&
                 a->first_partition >= 0)
                snprintf(evidence, sizeof(evidence),
                         " (its new session began at partition %d offset "
                         "%lld)",
                         (int)a->first_partition, (long long)a->first_offset);
        else if (!strcmp(a->kind, "fenced") && a->first_offset >= 0)
                snprintf(evidence, sizeof(evidence),
                         " (its new session began at offset %lld)",
                         (long long)a->first_offset);
        else if (!strcmp(a->kind, "out_of_order") && a->first_offset >= 0)
                snprintf(evidence, sizeof(evidence),
                         " (recovered: its gap, opened at offset %lld, had "
                         "been confirmed)",
                         (long long)a->first_offset);
        else if (!strcmp(a->kind, "torn") && a->first_offset >= 0) {
                /* Short of what its manifest lists; the manifest is in the
                 * manifest topic. */
                char part[32] = "";
                if (a->first_partition >= 0)
                        snprintf(part, sizeof(part), " partition %d",
                                 (int)a->first_partition);
                snprintf(evidence, sizeof(evidence),
                         " (manifest at%s offset %lld)", part,
                         (long long)a->first_offset);
                what = "missing";
        } else if (!strcmp(a->kind, "torn"))
                snprintf(evidence, sizeof(evidence), " (no manifest)");
        else if (a->first_offset >= 0 && a->first_partition >= 0)
                snprintf(evidence, sizeof(evidence),
                         " (first copy at partition %d offset %lld)",
                         (int)a->first_partition, (long long)a->first_offset);
        else if (a->first_offset >= 0)
                snprintf(evidence, sizeof(evidence),
                         " (first copy at offset %lld)",
                         (long long)a->first_offset);
        if (a->epoch >= 0)
                snprintf(epoch, sizeof(epoch), " epoch %d", (int)a->epoch);
        return snprintf(buf, size, "%-12s %s [%d]%s%s%s %s%s, %s %llu",
                        a->kind, a->topic, (int)a->partition, who, epoch, seq,
                        at, evidence, what, (unsigned long long)a->count);
}

int report_event_text(const char *topic, int32_t partition,
                      const struct dedup_event *ev, char *buf, size_t size)
{
        struct ledger_anomaly a;

        if (ev->kind == DEDUP_KIND_EXPIRED)
                return -1;
        report_anomaly_from_event(&a, topic, partition, ev);
        report_event_format(&a, buf, size);
        return 0;
}

/* The redelivered line, and the id window's when ids were checked. */
static void print_redelivered_counts(FILE *f, const struct ledger_summary *s)
{
        char when[32] = "";
        time_t t;
        struct tm tm;

        if (!s->ids_checked) {
                fprintf(f, "  redelivered    %llu records (no message id "
                           "checked)\n",
                        (unsigned long long)
                            s->anomalies[DEDUP_KIND_REDELIVERED]);
                return;
        }
        fprintf(f, "  redelivered    %llu records (%llu message ids "
                   "checked)\n",
                (unsigned long long)s->anomalies[DEDUP_KIND_REDELIVERED],
                (unsigned long long)s->ids_checked);
        t = (time_t)(s->window_oldest_ms / 1000);
        if (s->window_oldest_ms >= 0 && gmtime_r(&t, &tm))
                strftime(when, sizeof(when), ", since %Y-%m-%dT%H:%M:%SZ",
                         &tm);
        fprintf(f, "  id window      %llu ids in %u generation%s%s\n",
                (unsigned long long)s->window_ids, s->window_gens,
                s->window_gens == 1 ? "" : "s", when);
}

/* The line of what this run added, after the totals. */
static void print_new(FILE *f, const struct ledger_summary *d)
{
        uint64_t bad = report_anomaly_total(d);
        int k, sep = 0;

        if (!d->records && !bad && !d->missing) {
                fprintf(f, "  since last run nothing new (0 records)\n");
                return;
        }
        fprintf(f, "  since last run %llu records, %llu anomalies",
                (unsigned long long)d->records, (unsigned long long)bad);
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++) {
                if (!d->anomalies[k])
                        continue;
                fprintf(f, "%s%s %llu", sep ? ", " : " (", report_kind_at(k),
                        (unsigned long long)d->anomalies[k]);
                sep = 1;
        }
        if (d->coverage_gaps) {
                fprintf(f, "%scoverage %llu", sep ? ", " : " (",
                        (unsigned long long)d->coverage_gaps);
                sep = 1;
        }
        fprintf(f, "%s\n", sep ? ")" : "");
}

static const char *print_verdict(enum report_verdict v)
{
        switch (v) {
        case REPORT_ANOMALIES:
                return "ANOMALIES FOUND";
        case REPORT_NOT_AUDITED:
                return "NOT AUDITED (no record carries the eos.* headers and "
                       "no message id was checked: nothing is known either "
                       "way)";
        case REPORT_CLEAN:
                break;
        }
        return "clean";
}

int report_summary_print(FILE *f, struct ledger *lg,
                         const char *const *topics, size_t n,
                         const struct report_opts *o, char *errstr,
                         size_t errstr_size)
{
        enum report_verdict fv = REPORT_CLEAN;
        size_t i;

        if (o->sinks && report_flow_verdict_get(lg, &fv, errstr, errstr_size))
                return -1;
        for (i = 0; i < n; i++) {
                struct ledger_summary s;
                enum report_verdict v;
                char warn[256];
                if (ledger_summary(lg, topics[i], &s, errstr, errstr_size))
                        return -1;
                v = report_verdict(&s);
                if (i < o->sinks)
                        v = report_sink_verdict(v, fv);
                fprintf(f, "topic %s: %u partitions%s\n", topics[i],
                        s.partitions,
                        i < o->sinks ? " (a flow's sink: judged by lineage, "
                                       "see \"flow\" below)"
                                     : "");
                fprintf(f, "  records        %llu (untracked %llu)\n",
                        (unsigned long long)s.records,
                        (unsigned long long)s.untracked);
                report_untracked_text(&s, warn, sizeof(warn));
                if (warn[0] && i >= o->sinks)
                        fprintf(f, "  WARNING        %s\n", warn);
                fprintf(f, "  producers      %llu on %llu (partition, "
                           "producer) pairs\n",
                        (unsigned long long)s.producers,
                        (unsigned long long)s.pairs);
                fprintf(f, "  duplicate      %llu records\n",
                        (unsigned long long)s.anomalies[DEDUP_KIND_DUPLICATE]);
                fprintf(f, "  gap            %llu (%llu records missing",
                        (unsigned long long)s.anomalies[DEDUP_KIND_GAP],
                        (unsigned long long)s.missing);
                if (s.recovered)
                        fprintf(f, ", %llu more came later",
                                (unsigned long long)s.recovered);
                fprintf(f, ")\n");
                fprintf(f, "  out_of_order   %llu records\n",
                        (unsigned long long)
                            s.anomalies[DEDUP_KIND_OUT_OF_ORDER]);
                fprintf(f, "  fenced         %llu records\n",
                        (unsigned long long)s.anomalies[DEDUP_KIND_FENCED]);
                fprintf(f, "  malformed      %llu records\n",
                        (unsigned long long)s.anomalies[DEDUP_KIND_MALFORMED]);
                print_redelivered_counts(f, &s);
                fprintf(f, "  torn           %llu (transaction, partition)s "
                           "short of their manifest\n",
                        (unsigned long long)s.anomalies[DEDUP_KIND_TORN]);
                fprintf(f, "  aborted_read   %llu records\n",
                        (unsigned long long)
                            s.anomalies[DEDUP_KIND_ABORTED_READ]);
                if (s.open_gaps)
                        fprintf(f, "  open gaps      %llu (not confirmed yet)\n",
                                (unsigned long long)s.open_gaps);
                if (s.coverage_gaps)
                        fprintf(f, "  coverage gaps  %llu (%llu offsets "
                                   "deleted before they were audited)\n",
                                (unsigned long long)s.coverage_gaps,
                                (unsigned long long)s.coverage_records);
                if (s.unknown)
                        fprintf(f, "  unknown        %llu records of gaps "
                                   "open across a coverage gap: maybe "
                                   "deleted, maybe lost\n",
                                (unsigned long long)s.unknown);
                if (o->prev && o->prev[i].partitions > 0) {
                        struct ledger_summary d;
                        report_delta(&s, &o->prev[i], &d);
                        print_new(f, &d);
                }
                fprintf(f, "  verdict        %s\n", print_verdict(v));
                if (v == REPORT_ANOMALIES && o->examples > 0) {
                        struct report_walk w = {.f = f,
                                                .brokers = o->brokers};
                        fprintf(f, "  latest anomalies (the newest %d of each "
                                   "kind):\n",
                                o->examples);
                        if (report_latest(lg, topics[i], o->examples, &w,
                                          errstr, errstr_size))
                                return -1;
                }
        }
        return 0;
}
