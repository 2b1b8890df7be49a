/*
 * api_history.c - /api/v1/history: what the audit did minute by minute
 * (records audited, anomalous records, confirmed gaps and their missing
 * records, unaudited offsets), from the ledger's history
 * (ledger_history_foreach), for the dashboard's chart.
 *
 *   GET /api/v1/history?minutes=N[&topic=T]
 *
 * The last N minutes (1 to 7 days' worth, 60 by default), the current one
 * included; sums over the audited topics unless topic names one of them.
 * Only minutes in which a commit changed something are listed ("points",
 * oldest first): a minute missing between from_ms and to_ms added nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../auditor/report/report.h"
#include "../base/clock.h"
#include "internal.h"

_Static_assert(HTTP_HISTORY_MINUTES_MAX == LEDGER_HISTORY_MINUTES,
               "the API offers what the ledger keeps");

/* One slot per minute of the window, summed over the topics. */
struct http_history {
        struct ledger_history_point *pts; /* [minutes] */
        unsigned char *set;               /* [minutes]: a row was seen */
        int64_t from_ms;
        int64_t minutes;
};

static int http_history_cb(void *opaque, const struct ledger_history_point *p)
{
        struct http_history *h = opaque;
        struct ledger_history_point *d;
        int64_t i = (p->minute_ms - h->from_ms) / LEDGER_HISTORY_MINUTE_MS;

        /* A row past the window: a clock that went back. */
        if (p->minute_ms < h->from_ms || i >= h->minutes)
                return 0;
        d = &h->pts[i];
        d->minute_ms = p->minute_ms;
        d->records = dedup_sat_add(d->records, p->records);
        d->untracked = dedup_sat_add(d->untracked, p->untracked);
        d->anomalous = dedup_sat_add(d->anomalous, p->anomalous);
        d->gaps = dedup_sat_add(d->gaps, p->gaps);
        d->missing = dedup_sat_add(d->missing, p->missing);
        d->unaudited = dedup_sat_add(d->unaudited, p->unaudited);
        h->set[i] = 1;
        return 0;
}

static json_t *http_point_json(const struct ledger_history_point *p)
{
        return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o}", "minute_ms",
                         (json_int_t)p->minute_ms, "records",
                         report_u64_json(p->records), "untracked",
                         report_u64_json(p->untracked), "anomalous_records",
                         report_u64_json(p->anomalous), "gaps",
                         report_u64_json(p->gaps), "missing_records",
                         report_u64_json(p->missing), "unaudited_offsets",
                         report_u64_json(p->unaudited));
}

static json_t *http_api_history(struct http_api *a)
{
        const char *const *topics;
        size_t n, i;
        struct http_history h = {0};
        int64_t now = clock_wall_ms();
        json_t *j = NULL, *pts;

        if (http_api_topics(a, &topics, &n))
                return NULL;
        h.minutes = a->q->minutes;
        h.from_ms = now - now % LEDGER_HISTORY_MINUTE_MS -
                    (h.minutes - 1) * LEDGER_HISTORY_MINUTE_MS;
        h.pts = calloc((size_t)h.minutes, sizeof(*h.pts));
        h.set = calloc((size_t)h.minutes, 1);
        if (!h.pts || !h.set)
                goto out; /* errstr empty: out of memory */
        for (i = 0; i < n; i++)
                if (ledger_history_foreach(a->lg, topics[i], h.from_ms,
                                           http_history_cb, &h, a->errstr,
                                           sizeof(a->errstr)))
                        goto out;
        pts = json_array();
        for (i = 0; i < (size_t)h.minutes; i++)
                if (h.set[i])
                        json_array_append_new(pts, http_point_json(&h.pts[i]));
        /* NULL (out of memory) when pts is. */
        j = json_pack("{s:I, s:I, s:I, s:I, s:I, s:o, s:I}", "minute_ms",
                      (json_int_t)LEDGER_HISTORY_MINUTE_MS, "minutes",
                      (json_int_t)h.minutes, "from_ms", (json_int_t)h.from_ms,
                      "to_ms",
                      (json_int_t)(h.from_ms +
                                   h.minutes * LEDGER_HISTORY_MINUTE_MS),
                      "retention_minutes", (json_int_t)LEDGER_HISTORY_MINUTES,
                      "points", pts, "generated_ms", (json_int_t)now);
out:
        free(h.pts);
        free(h.set);
        return j;
}

void http_api_history_handle(const struct http_request *rq,
                             struct http_reply *r)
{
        http_api_run(rq, r, HTTP_EP_HISTORY, http_api_history);
}
