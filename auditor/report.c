/*
 * report.c - see report.h.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
        json_object_set_new(o, "ids_checked", report_u64_json(s->ids_checked));
        json_object_set_new(o, "window", report_window_json(s));
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
        sum->ids_checked += s->ids_checked;
        sum->window_ids += s->window_ids;
        sum->window_gens += s->window_gens;
        if (s->window_oldest_ms >= 0 &&
            (sum->window_oldest_ms < 0 ||
             s->window_oldest_ms < sum->window_oldest_ms))
                sum->window_oldest_ms = s->window_oldest_ms;
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
        sum.window_oldest_ms = -1;
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

static int print_cb(void *opaque, const struct ledger_anomaly *a)
{
        char line[REPORT_EVENT_MAX];

        report_event_format(a, line, sizeof(line));
        fprintf(opaque, "  %s\n", line);
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
