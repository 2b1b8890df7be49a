/*
 * report.c - see report.h.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define REPORT_BYTES_MAX (DEDUP_PRODUCER_MAX * 3 + 1)

uint64_t report_anomaly_total(const struct ledger_summary *s)
{
        uint64_t n = s->coverage_gaps;
        int k;

        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                n += s->anomalies[k];
        return n;
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

static json_t *report_int(int64_t v)
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
        size_t i;

        if (!p) {
                json_object_set_new(o, "producer", json_null());
                return;
        }
        json_object_set_new(o, "producer", report_bytes_json(p, len, &lossy));
        if (!lossy)
                return;
        for (i = 0; i < len && i < DEDUP_PRODUCER_MAX; i++)
                snprintf(hex + 2 * i, 3, "%02x", (unsigned char)p[i]);
        hex[2 * i] = '\0';
        json_object_set_new(o, "producer_hex", json_string(hex));
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
        json_object_set_new(o, "epoch", report_int(a->epoch));
        json_object_set_new(o, "seq_lo", report_int(a->seq_lo));
        json_object_set_new(o, "seq_hi", report_int(a->seq_hi));
        json_object_set_new(o, "offset_lo", report_int(a->offset_lo));
        json_object_set_new(o, "offset_hi", report_int(a->offset_hi));
        json_object_set_new(o, "first_offset", report_int(a->first_offset));
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

static json_t *report_counts_json(const struct ledger_summary *s)
{
        json_t *o = json_object();

        json_object_set_new(o, "records_total", report_u64_json(s->records));
        json_object_set_new(o, "untracked", report_u64_json(s->untracked));
        json_object_set_new(o, "missing_records", report_u64_json(s->missing));
        json_object_set_new(o, "producers", report_u64_json(s->producers));
        json_object_set_new(o, "pairs", report_u64_json(s->pairs));
        json_object_set_new(o, "partitions", json_integer(s->partitions));
        json_object_set_new(o, "open_gaps", report_u64_json(s->open_gaps));
        json_object_set_new(o, "coverage_gaps",
                            report_u64_json(s->coverage_gaps));
        json_object_set_new(o, "coverage_records",
                            report_u64_json(s->coverage_records));
        json_object_set_new(o, "anomalies", report_kinds_json(s->anomalies));
        json_object_set_new(o, "anomalies_total",
                            report_u64_json(report_anomaly_total(s)));
        return o;
}

static void summary_add(struct ledger_summary *sum,
                        const struct ledger_summary *s)
{
        int k;

        sum->records += s->records;
        sum->untracked += s->untracked;
        sum->missing += s->missing;
        sum->producers += s->producers;
        sum->pairs += s->pairs;
        sum->open_gaps += s->open_gaps;
        sum->coverage_gaps += s->coverage_gaps;
        sum->coverage_records += s->coverage_records;
        sum->partitions += s->partitions;
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                sum->anomalies[k] += s->anomalies[k];
}

static int example_cb(void *opaque, const struct ledger_anomaly *a)
{
        json_array_append_new(opaque, report_anomaly_json(a));
        return 0;
}

json_t *report_summary_json(struct ledger *lg, const char *const *topics,
                            size_t n, int examples, char *errstr,
                            size_t errstr_size)
{
        struct ledger_summary sum, s;
        json_t *root = NULL, *arr = json_array(), *ex = NULL;
        size_t i;

        memset(&sum, 0, sizeof(sum));
        if (!arr)
                goto fail;
        for (i = 0; i < n; i++) {
                json_t *t;
                if (ledger_summary(lg, topics[i], &s, errstr, errstr_size))
                        goto fail;
                summary_add(&sum, &s);
                t = report_counts_json(&s);
                json_object_set_new(t, "topic",
                                    report_bytes_json(topics[i],
                                                      strlen(topics[i]),
                                                      NULL));
                if (examples > 0) {
                        json_t *te = json_array();
                        if (ledger_anomalies_foreach(lg, topics[i], examples,
                                                     example_cb, te, errstr,
                                                     errstr_size)) {
                                json_decref(te);
                                json_decref(t);
                                goto fail;
                        }
                        json_object_set_new(t, "latest_anomalies", te);
                }
                json_array_append_new(arr, t);
        }
        root = report_counts_json(&sum);
        /* Producers may write to several topics: the total is a sum. */
        json_object_set_new(root, "topics", arr);
        return root;
fail:
        json_decref(arr);
        json_decref(ex);
        if (!*errstr)
                snprintf(errstr, errstr_size, "out of memory");
        return NULL;
}

static int print_cb(void *opaque, const struct ledger_anomaly *a)
{
        FILE *f = opaque;
        char seq[64] = "", first[48] = "";
        int lossy;
        json_t *name = a->producer ? report_bytes_json(a->producer,
                                                       a->producer_len, &lossy)
                                   : NULL;

        if (a->seq_lo >= 0)
                snprintf(seq, sizeof(seq),
                         a->seq_lo == a->seq_hi ? " seq %lld" : " seq %lld..%lld",
                         (long long)a->seq_lo, (long long)a->seq_hi);
        if (a->first_offset >= 0)
                snprintf(first, sizeof(first), " (first copy at %lld)",
                         (long long)a->first_offset);
        fprintf(f, "  %-12s %s [%d]%s%s%s epoch %s%d%s at offset %lld",
                a->kind, a->topic, (int)a->partition,
                name ? " producer '" : "",
                name ? json_string_value(name) : "", name ? "'" : "",
                a->epoch >= 0 ? "" : "?", a->epoch >= 0 ? (int)a->epoch : 0,
                seq, (long long)a->offset_lo);
        if (a->offset_hi > a->offset_lo)
                fprintf(f, "..%lld", (long long)a->offset_hi);
        fprintf(f, "%s, %s %llu\n", first,
                !strcmp(a->kind, "gap") ? "missing" : "count",
                (unsigned long long)a->count);
        json_decref(name);
        return 0;
}

int report_summary_print(FILE *f, struct ledger *lg,
                         const char *const *topics, size_t n, int examples,
                         char *errstr, size_t errstr_size)
{
        size_t i;

        for (i = 0; i < n; i++) {
                struct ledger_summary s;
                uint64_t bad;
                if (ledger_summary(lg, topics[i], &s, errstr, errstr_size))
                        return -1;
                bad = report_anomaly_total(&s);
                fprintf(f, "topic %s: %u partitions\n", topics[i],
                        s.partitions);
                fprintf(f, "  records        %llu (untracked %llu)\n",
                        (unsigned long long)s.records,
                        (unsigned long long)s.untracked);
                fprintf(f, "  producers      %llu on %llu (partition, "
                           "producer) pairs\n",
                        (unsigned long long)s.producers,
                        (unsigned long long)s.pairs);
                fprintf(f, "  duplicate      %llu records\n",
                        (unsigned long long)s.anomalies[DEDUP_KIND_DUPLICATE]);
                fprintf(f, "  gap            %llu (%llu records missing)\n",
                        (unsigned long long)s.anomalies[DEDUP_KIND_GAP],
                        (unsigned long long)s.missing);
                fprintf(f, "  out_of_order   %llu records\n",
                        (unsigned long long)
                            s.anomalies[DEDUP_KIND_OUT_OF_ORDER]);
                fprintf(f, "  fenced         %llu records\n",
                        (unsigned long long)s.anomalies[DEDUP_KIND_FENCED]);
                fprintf(f, "  malformed      %llu records\n",
                        (unsigned long long)s.anomalies[DEDUP_KIND_MALFORMED]);
                if (s.open_gaps)
                        fprintf(f, "  open gaps      %llu (not confirmed yet)\n",
                                (unsigned long long)s.open_gaps);
                if (s.coverage_gaps)
                        fprintf(f, "  coverage gaps  %llu (%llu offsets "
                                   "deleted before they were audited)\n",
                                (unsigned long long)s.coverage_gaps,
                                (unsigned long long)s.coverage_records);
                fprintf(f, "  verdict        %s\n",
                        bad ? "ANOMALIES FOUND" : "clean");
                if (bad && examples > 0) {
                        fprintf(f, "  latest anomalies:\n");
                        if (ledger_anomalies_foreach(lg, topics[i], examples,
                                                     print_cb, f, errstr,
                                                     errstr_size))
                                return -1;
                }
        }
        return 0;
}
