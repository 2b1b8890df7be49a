/*
 * evlog.c - see evlog.h.
 */
#include <stdio.h>
#include <string.h>

#include "../auditor/report/report.h"
#include "evlog.h"

void evlog_init(struct evlog *l, evlog_sink *sink, void *opaque,
                const char *brokers)
{
        memset(l, 0, sizeof(*l));
        l->sink = sink;
        l->opaque = opaque;
        l->brokers = brokers;
        l->window_ms = -1;
}

static int evlog_same(const struct evlog_group *g, const char *topic,
                      int32_t partition, const struct dedup_event *ev)
{
        if (g->kind != ev->kind || g->partition != partition ||
            g->epoch != ev->epoch || strcmp(g->topic, topic))
                return 0;
        if (!ev->producer)
                return !g->has_producer;
        return g->has_producer && g->producer_len == ev->producer_len &&
               !memcmp(g->producer, ev->producer, ev->producer_len);
}

/* The group as an anomaly row, for report_event_format(). */
static void evlog_row(const struct evlog_group *g, struct ledger_anomaly *a)
{
        memset(a, 0, sizeof(*a));
        a->id = -1;
        a->topic = g->topic;
        a->partition = g->partition;
        a->kind = dedup_kind_name(g->kind);
        a->producer = g->has_producer ? g->producer : NULL;
        a->producer_len = g->producer_len;
        a->epoch = g->epoch;
        a->seq_lo = a->seq_hi = -1;
        a->offset_lo = g->offset_lo;
        a->offset_hi = g->offset_hi;
        a->first_offset = a->first_offset_hi = -1;
        a->first_partition = -1;
        a->msgid_len = -1;
        a->count = g->records;
}

/* "fenced demo [2] producer 'x' epoch 0 offsets 5..900, count 2000:
 * 174 events in 12 s, ended": a group's summary. */
static void evlog_summary(struct evlog *l, struct evlog_group *g,
                          int64_t now_ms, int ended)
{
        char line[REPORT_EVENT_MAX + 128], kcat[REPORT_KCAT_MAX];
        struct ledger_anomaly a;
        size_t n;
        int dense;

        evlog_row(g, &a);
        report_event_format(&a, line, REPORT_EVENT_MAX);
        n = strlen(line);
        snprintf(line + n, sizeof(line) - n,
                 " in all: %llu events over %lld s, %s",
                 (unsigned long long)g->events,
                 (long long)((g->last_ms - g->first_ms + 999) / 1000),
                 ended ? "ended" : "continuing");
        g->said_events = g->events;
        g->said_ms = now_ms;
        /* Sparse records (duplicates here and there) have no one command
         * worth pasting: their first lines had theirs. */
        dense = g->offset_hi - g->offset_lo < 2 * (int64_t)g->records;
        l->sink(l->opaque, EVLOG_SUMMARY, line,
                !dense || report_kcat_format(&a, l->brokers, 0, kcat,
                                             sizeof(kcat))
                    ? NULL
                    : kcat);
}

/* Starts a new window of the rate limit once the last one has passed,
 * saying first how many groups it held back. */
static void evlog_window(struct evlog *l, int64_t now_ms)
{
        char line[256];

        if (l->window_ms >= 0 && now_ms - l->window_ms < EVLOG_WINDOW_MS)
                return;
        if (l->held) {
                snprintf(line, sizeof(line),
                         "%llu more anomaly groups in the last %d s were not "
                         "logged (rate limit); every anomaly is in the "
                         "ledger: /api/v1/anomalies, scan --db",
                         (unsigned long long)l->held, EVLOG_WINDOW_MS / 1000);
                l->sink(l->opaque, EVLOG_NOTE, line, NULL);
        }
        l->window_ms = now_ms;
        l->window_lines = 0;
        l->held = 0;
}

/* Whether another first line may be written now (the rate limit). */
static int evlog_may_say(struct evlog *l, int64_t now_ms)
{
        evlog_window(l, now_ms);
        if (l->window_lines >= EVLOG_BURST) {
                l->held++;
                l->held_total++;
                return 0;
        }
        l->window_lines++;
        return 1;
}

/* Ends group i: its summary when more than its first event was seen (a
 * group held back by the rate limit was counted there instead). */
static void evlog_end(struct evlog *l, size_t i, int64_t now_ms)
{
        struct evlog_group *g = &l->g[i];

        if (g->said_events && g->events > g->said_events)
                evlog_summary(l, g, now_ms, 1);
        l->g[i] = l->g[--l->n];
}

void evlog_event(struct evlog *l, const char *topic, int32_t partition,
                 const struct dedup_event *ev, int64_t now_ms)
{
        char line[REPORT_EVENT_MAX], kcat[REPORT_KCAT_MAX];
        struct ledger_anomaly a;
        struct evlog_group *g;
        size_t i, oldest = 0;

        if (ev->kind == DEDUP_KIND_EXPIRED)
                return;
        for (i = 0; i < l->n; i++) {
                g = &l->g[i];
                if (!evlog_same(g, topic, partition, ev))
                        continue;
                g->events++;
                g->records += ev->count;
                if (ev->offset_lo >= 0 && ev->offset_lo < g->offset_lo)
                        g->offset_lo = ev->offset_lo;
                if (ev->offset_hi > g->offset_hi)
                        g->offset_hi = ev->offset_hi;
                g->last_ms = now_ms;
                return;
        }
        if (l->n == EVLOG_GROUPS) {
                for (i = 1; i < l->n; i++)
                        if (l->g[i].last_ms < l->g[oldest].last_ms)
                                oldest = i;
                evlog_end(l, oldest, now_ms);
        }
        g = &l->g[l->n++];
        memset(g, 0, sizeof(*g));
        snprintf(g->topic, sizeof(g->topic), "%s", topic);
        g->partition = partition;
        g->has_producer = ev->producer != NULL;
        g->producer_len = ev->producer_len < sizeof(g->producer)
                              ? ev->producer_len
                              : sizeof(g->producer);
        if (ev->producer)
                memcpy(g->producer, ev->producer, g->producer_len);
        g->epoch = ev->epoch;
        g->kind = ev->kind;
        g->events = 1;
        g->records = ev->count;
        g->offset_lo = ev->offset_lo;
        g->offset_hi = ev->offset_hi;
        g->first_ms = g->last_ms = g->said_ms = now_ms;
        /* The first event says it all (seq, first copy, id). */
        if (!evlog_may_say(l, now_ms))
                return;
        g->said_events = 1;
        report_anomaly_from_event(&a, topic, partition, ev);
        report_event_format(&a, line, sizeof(line));
        l->sink(l->opaque, EVLOG_FIRST, line,
                report_kcat_format(&a, l->brokers, 0, kcat, sizeof(kcat))
                    ? NULL
                    : kcat);
}

void evlog_tick(struct evlog *l, int64_t now_ms)
{
        size_t i = 0;

        while (i < l->n) {
                struct evlog_group *g = &l->g[i];
                if (now_ms - g->last_ms >= EVLOG_QUIET_MS) {
                        evlog_end(l, i, now_ms);
                        continue;
                }
                if (g->said_events && g->events > g->said_events &&
                    now_ms - g->said_ms >= EVLOG_REPEAT_MS)
                        evlog_summary(l, g, now_ms, 0);
                i++;
        }
        evlog_window(l, now_ms);
}

void evlog_flush(struct evlog *l, int64_t now_ms)
{
        while (l->n)
                evlog_end(l, l->n - 1, now_ms);
        if (l->held) /* what the last window held back */
                evlog_window(l, l->window_ms + EVLOG_WINDOW_MS);
}
