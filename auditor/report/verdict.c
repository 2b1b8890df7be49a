/*
 * verdict.c - what an audit concluded: the anomaly total, the verdicts
 * (a topic's, a flow sink's, a whole scan's), the counts added up and
 * differenced, the newest anomalies of each kind, and an engine event as
 * a ledger anomaly.  The lowest file of report/: it calls no other.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

uint64_t report_anomaly_total(const struct ledger_summary *s)
{
        uint64_t n = s->coverage_gaps + s->truncations;
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
void report_untracked_text(const struct ledger_summary *s, char *buf,
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

/* The kinds "latest anomalies" shows a few of each: every anomaly kind
 * and coverage gaps. */
const char *report_kind_at(int k)
{
        return k < DEDUP_KIND__ANOMALY_CNT
                   ? dedup_kind_name((enum dedup_kind)k)
                   : "coverage";
}

/* The newest `examples` anomalies of each kind of topic, to cb. */
int report_latest(struct ledger *lg, const char *topic, int examples,
                  ledger_anomaly_cb *cb, void *opaque, char *errstr,
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
                if (ledger_anomalies_query(lg, &f, cb, opaque, errstr,
                                           errstr_size))
                        return -1;
        }
        return 0;
}

void report_summary_add(struct ledger_summary *sum,
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
        sum->topic_streams += s->topic_streams;
        sum->open_gaps += s->open_gaps;
        sum->coverage_gaps += s->coverage_gaps;
        sum->coverage_records += s->coverage_records;
        sum->truncations += s->truncations;
        sum->truncated_records += s->truncated_records;
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

/* What this run added: s minus prev, each figure clamped at 0. */
void report_delta(const struct ledger_summary *s,
                  const struct ledger_summary *prev, struct ledger_summary *d)
{
        int k;

#define REPORT_SUB(f) (s->f > prev->f ? s->f - prev->f : 0)
        memset(d, 0, sizeof(*d));
        d->records = REPORT_SUB(records);
        d->untracked = REPORT_SUB(untracked);
        d->missing = REPORT_SUB(missing);
        d->coverage_gaps = REPORT_SUB(coverage_gaps);
        d->coverage_records = REPORT_SUB(coverage_records);
        d->truncations = REPORT_SUB(truncations);
        d->truncated_records = REPORT_SUB(truncated_records);
        d->ids_checked = REPORT_SUB(ids_checked);
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                d->anomalies[k] = REPORT_SUB(anomalies[k]);
#undef REPORT_SUB
}

/* The flow's verdict as the ledger holds it. */
int report_flow_verdict_get(struct ledger *lg, enum report_verdict *fv,
                            char *errstr, size_t errstr_size)
{
        struct ledger_flow_summary fs;

        if (ledger_flow_summary(lg, &fs, errstr, errstr_size))
                return -1;
        *fv = report_flow_verdict(&fs);
        return 0;
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

void report_anomaly_from_event(struct ledger_anomaly *a, const char *topic,
                               int32_t partition, const struct dedup_event *ev)
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

uint64_t report_flow_bad(const struct ledger_flow_summary *s)
{
        return s->lost + s->duplicated + s->unexpected;
}

enum report_verdict report_flow_verdict(const struct ledger_flow_summary *s)
{
        if (report_flow_bad(s))
                return REPORT_ANOMALIES;
        if (!s->present || (!s->source_records && !s->sink_records))
                return REPORT_NOT_AUDITED;
        return REPORT_CLEAN;
}

enum report_verdict report_sink_verdict(enum report_verdict own,
                                        enum report_verdict fv)
{
        if (own == REPORT_NOT_AUDITED)
                return fv;
        return report_verdict_merge(own, fv == REPORT_NOT_AUDITED
                                             ? REPORT_CLEAN
                                             : fv);
}
