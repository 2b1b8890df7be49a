/*
 * api.c - the JSON endpoints under /api/v1/ and /readyz, and the parsing
 * of their query strings (a pure function: see http_query_parse()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/clock.h"
#include "../auditor/report.h"
#include "../dedup/dedup.h"
#include "internal.h"

/* ------------------------------------------------------------------ */
/* Query strings                                                       */
/* ------------------------------------------------------------------ */

enum http_param {
        HTTP_P_TOPIC,
        HTTP_P_KIND,
        HTTP_P_PRODUCER,
        HTTP_P_SINCE,
        HTTP_P_LIMIT,
        HTTP_P_CURSOR,
        HTTP_P__CNT
};

static const char *const http_param_names[HTTP_P__CNT] = {
        [HTTP_P_TOPIC] = "topic",   [HTTP_P_KIND] = "kind",
        [HTTP_P_PRODUCER] = "producer", [HTTP_P_SINCE] = "since",
        [HTTP_P_LIMIT] = "limit",   [HTTP_P_CURSOR] = "cursor",
};

#define HTTP_P(p) (1u << (p))

/* Which parameters each endpoint takes, and its limits. */
static const struct {
        unsigned params;
        int64_t limit_default, limit_max;
} http_eps[] = {
        [HTTP_EP_SUMMARY] = {HTTP_P(HTTP_P_TOPIC), 0, 0},
        [HTTP_EP_ANOMALIES] = {HTTP_P(HTTP_P_TOPIC) | HTTP_P(HTTP_P_KIND) |
                                       HTTP_P(HTTP_P_PRODUCER) |
                                       HTTP_P(HTTP_P_SINCE) |
                                       HTTP_P(HTTP_P_LIMIT) |
                                       HTTP_P(HTTP_P_CURSOR),
                               HTTP_ANOMALIES_LIMIT_DEFAULT,
                               HTTP_ANOMALIES_LIMIT_MAX},
        [HTTP_EP_PRODUCERS] = {HTTP_P(HTTP_P_TOPIC) |
                                       HTTP_P(HTTP_P_PRODUCER) |
                                       HTTP_P(HTTP_P_LIMIT) |
                                       HTTP_P(HTTP_P_CURSOR),
                               HTTP_PRODUCERS_LIMIT_DEFAULT,
                               HTTP_PRODUCERS_LIMIT_MAX},
        [HTTP_EP_PARTITIONS] = {HTTP_P(HTTP_P_TOPIC), 0, 0},
};

static int http_hex_val(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* Percent-decodes in[0..len) into out ('+' is a space); returns the
 * decoded length, or -1 for a bad escape or a NUL byte, encoded or raw
 * (libmicrohttpd hands us a C string, but http_query_parse() takes
 * bytes: a raw NUL would end a key early or put a NUL in a producer). */
static long http_pct_decode(const char *in, size_t len, char *out)
{
        size_t i, o = 0;
        int hi, lo;

        for (i = 0; i < len; i++) {
                if (!in[i])
                        return -1;
                if (in[i] == '+') {
                        out[o++] = ' ';
                } else if (in[i] != '%') {
                        out[o++] = in[i];
                } else {
                        if (len - i < 3 || (hi = http_hex_val(in[i + 1])) < 0 ||
                            (lo = http_hex_val(in[i + 2])) < 0 ||
                            !(hi | lo))
                                return -1;
                        out[o++] = (char)(hi << 4 | lo);
                        i += 2;
                }
        }
        out[o] = '\0';
        return (long)o;
}

/* Hex-decodes in[0..len) into out; returns the length, or -1. */
static long http_hex_decode(const char *in, size_t len, char *out)
{
        size_t i;
        int hi, lo;

        if (len % 2)
                return -1;
        for (i = 0; i < len; i += 2) {
                if ((hi = http_hex_val(in[i])) < 0 ||
                    (lo = http_hex_val(in[i + 1])) < 0)
                        return -1;
                out[i / 2] = (char)(hi << 4 | lo);
        }
        out[len / 2] = '\0';
        return (long)(len / 2);
}

size_t http_cursor_format(char *buf, size_t size, const char *topic,
                          int32_t partition, const char *producer,
                          size_t producer_len)
{
        size_t tlen = strlen(topic), need, i, o = 0;
        int n;

        /* Two hex digits a byte, two dots, up to 10 digits, NUL. */
        need = 2 * tlen + 2 * producer_len + 13;
        if (size < need)
                return 0;
        for (i = 0; i < tlen; i++, o += 2)
                snprintf(buf + o, 3, "%02x", (unsigned char)topic[i]);
        n = snprintf(buf + o, size - o, ".%d.", (int)partition);
        if (n < 0 || (size_t)n >= size - o)
                return 0;
        o += (size_t)n;
        for (i = 0; i < producer_len; i++, o += 2)
                snprintf(buf + o, 3, "%02x", (unsigned char)producer[i]);
        buf[o] = '\0';
        return o;
}

/* "<hex topic>.<partition>.<hex producer>", decoded into out (which has
 * room for len bytes and two NULs). */
static int http_cursor_parse(struct http_query *q, const char *v, size_t len,
                             char *out)
{
        const char *d1 = memchr(v, '.', len), *d2;
        uint64_t part;
        long tlen, plen;

        if (!d1)
                return -1;
        d2 = memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - v));
        if (!d2 ||
            dedup_parse_decimal(d1 + 1, (size_t)(d2 - d1 - 1), INT32_MAX,
                                &part))
                return -1;
        tlen = http_hex_decode(v, (size_t)(d1 - v), out);
        if (tlen <= 0 || memchr(out, '\0', (size_t)tlen))
                return -1;
        plen = http_hex_decode(d2 + 1, len - (size_t)(d2 + 1 - v),
                               out + tlen + 1);
        if (plen <= 0 || plen > DEDUP_PRODUCER_MAX ||
            memchr(out + tlen + 1, '\0', (size_t)plen))
                return -1;
        q->after.topic = out;
        q->after.partition = (int32_t)part;
        q->after.producer = out + tlen + 1;
        q->after.producer_len = (size_t)plen;
        return 0;
}

static int http_kind_ok(const char *k)
{
        enum dedup_kind kind;

        if (!strcmp(k, "coverage"))
                return 1;
        return !dedup_kind_parse(k, &kind) && kind < DEDUP_KIND__ANOMALY_CNT;
}

/* "duplicate, gap, ..., redelivered or coverage": the kinds a filter
 * takes, from the engine's list so that a new kind is named here too. */
static void http_kinds_text(char *buf, size_t size)
{
        size_t o = 0;
        int k, n;

        buf[0] = '\0';
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++) {
                n = snprintf(buf + o, size - o, "%s, ",
                             dedup_kind_name((enum dedup_kind)k));
                if (n < 0 || (size_t)n >= size - o)
                        return;
                o += (size_t)n;
        }
        if (o >= 2)
                o -= 2;
        snprintf(buf + o, size - o, " or coverage");
}

/* Sets parameter p of q from its decoded value v[0..len) (in q->buf,
 * NUL-terminated); spare has room for a decoded cursor. */
static int http_param_set(struct http_query *q, enum http_endpoint ep,
                          enum http_param p, char *v, size_t len,
                          char *spare, char *errstr, size_t errstr_size)
{
        char kinds[256];
        uint64_t n;

        switch (p) {
        case HTTP_P_TOPIC:
                q->topic = len ? v : NULL;
                return 0;
        case HTTP_P_KIND:
                if (len && !http_kind_ok(v)) {
                        http_kinds_text(kinds, sizeof(kinds));
                        snprintf(errstr, errstr_size,
                                 "unknown kind '%.64s' (%s)", v, kinds);
                        return -1;
                }
                q->kind = len ? v : NULL;
                return 0;
        case HTTP_P_PRODUCER:
                if (len > DEDUP_PRODUCER_MAX) {
                        snprintf(errstr, errstr_size,
                                 "producer longer than %d bytes",
                                 DEDUP_PRODUCER_MAX);
                        return -1;
                }
                q->producer = len ? v : NULL;
                q->producer_len = len;
                return 0;
        case HTTP_P_SINCE:
                if (dedup_parse_decimal(v, len, INT64_MAX, &n)) {
                        snprintf(errstr, errstr_size,
                                 "since must be milliseconds since the "
                                 "epoch (a number from 0 to %lld)",
                                 (long long)INT64_MAX);
                        return -1;
                }
                q->since_ms = (int64_t)n;
                return 0;
        case HTTP_P_LIMIT:
                if (dedup_parse_decimal(v, len,
                                        (uint64_t)http_eps[ep].limit_max,
                                        &n) ||
                    !n) {
                        snprintf(errstr, errstr_size,
                                 "limit must be a number from 1 to %lld",
                                 (long long)http_eps[ep].limit_max);
                        return -1;
                }
                q->limit = (int64_t)n;
                return 0;
        case HTTP_P_CURSOR:
                if (ep == HTTP_EP_PRODUCERS) {
                        if (!len)
                                return 0;
                        if (http_cursor_parse(q, v, len, spare)) {
                                snprintf(errstr, errstr_size,
                                         "cursor is not one that this "
                                         "endpoint returned");
                                return -1;
                        }
                        return 0;
                }
                if (dedup_parse_decimal(v, len, INT64_MAX, &n) || !n) {
                        snprintf(errstr, errstr_size,
                                 "cursor must be an anomaly id (a number "
                                 "from 1 to %lld)",
                                 (long long)INT64_MAX);
                        return -1;
                }
                q->cursor = (int64_t)n;
                return 0;
        case HTTP_P__CNT:
                break;
        }
        return -1;
}

static void http_query_init(struct http_query *q, enum http_endpoint ep)
{
        memset(q, 0, sizeof(*q));
        q->since_ms = -1;
        q->cursor = -1;
        q->limit = http_eps[ep].limit_default;
}

int http_query_parse(struct http_query *out, enum http_endpoint ep,
                     const char *q, size_t len, char *errstr,
                     size_t errstr_size)
{
        struct http_query r;
        unsigned seen = 0;
        size_t pos = 0, o = 0;
        int p;

        http_query_init(&r, ep);
        if ((unsigned)ep >= sizeof(http_eps) / sizeof(http_eps[0])) {
                snprintf(errstr, errstr_size, "unknown endpoint");
                return -1;
        }
        /* Decoding never grows: keys, values and a decoded cursor fit in
         * 3 * len plus their NULs (a few per accepted parameter). */
        r.buf = malloc(3 * len + 64);
        if (!r.buf) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        while (pos < len) {
                const char *seg = q + pos, *amp, *eq;
                size_t slen, klen;
                long k, v;
                char *key, *val;

                amp = memchr(seg, '&', len - pos);
                slen = amp ? (size_t)(amp - seg) : len - pos;
                pos += slen + 1;
                if (!slen)
                        continue;
                eq = memchr(seg, '=', slen);
                klen = eq ? (size_t)(eq - seg) : slen;
                key = r.buf + o;
                k = http_pct_decode(seg, klen, key);
                if (k < 0)
                        goto bad_escape;
                o += (size_t)k + 1;
                for (p = 0; p < HTTP_P__CNT; p++)
                        if (!strcmp(key, http_param_names[p]))
                                break;
                if (p == HTTP_P__CNT ||
                    !(http_eps[ep].params & HTTP_P(p))) {
                        snprintf(errstr, errstr_size,
                                 "unknown parameter '%.64s'", key);
                        goto fail;
                }
                if (seen & HTTP_P(p)) {
                        snprintf(errstr, errstr_size,
                                 "parameter '%s' given more than once",
                                 http_param_names[p]);
                        goto fail;
                }
                seen |= HTTP_P(p);
                val = r.buf + o;
                v = eq ? http_pct_decode(eq + 1, slen - klen - 1, val) : 0;
                if (v < 0)
                        goto bad_escape;
                val[v] = '\0';
                o += (size_t)v + 1;
                if (http_param_set(&r, ep, (enum http_param)p, val, (size_t)v,
                                   r.buf + o, errstr, errstr_size))
                        goto fail;
                if (p == HTTP_P_CURSOR && r.after.topic)
                        o += (size_t)v + 2; /* the decoded cursor */
        }
        *out = r;
        return 0;
bad_escape:
        snprintf(errstr, errstr_size,
                 "bad percent-encoding (or a NUL byte) in the query "
                 "string");
fail:
        free(r.buf);
        return -1;
}

void http_query_release(struct http_query *q)
{
        free(q->buf);
        q->buf = NULL;
}

/* ------------------------------------------------------------------ */
/* Live figures                                                        */
/* ------------------------------------------------------------------ */

/* {"ready": bool, "reasons": [...], ...} from v (NULL: none yet). */
static json_t *http_live_json(const struct status_view *v)
{
        const char *why[8];
        size_t n = status_ready_reasons(v, why, 8), i;
        json_t *o = json_object(), *reasons = json_array();

        for (i = 0; i < n; i++)
                json_array_append_new(reasons, json_string(why[i]));
        json_object_set_new(o, "ready", json_boolean(n == 0));
        json_object_set_new(o, "reasons", reasons);
        if (!v)
                return o;
        json_object_set_new(o, "brokers_up", json_integer(v->brokers_up));
        json_object_set_new(o, "ledger_paused",
                            json_boolean(v->ledger_paused));
        json_object_set_new(o, "records_read",
                            report_u64_json(v->records));
        json_object_set_new(o, "started_ms", json_integer(v->started_ms));
        json_object_set_new(o, "updated_ms", json_integer(v->updated_ms));
        return o;
}

/* ------------------------------------------------------------------ */
/* Endpoints                                                           */
/* ------------------------------------------------------------------ */

/* What an endpoint needs; the ledger reader is taken for the request. */
struct http_api {
        struct http_server *s;
        struct ledger *lg;
        const struct http_query *q;
        const struct status_view *v; /* NULL: nothing published */
        unsigned fail_status;        /* of a NULL result; 500 unless set */
        char errstr[512];
};

static json_t *http_api_summary(struct http_api *a)
{
        const struct http_conf *c = http_server_conf(a->s);
        const char *const *topics = c->topics;
        size_t n = c->topic_cnt, i;
        json_t *j, *arr;

        if (a->q->topic) {
                for (i = 0; i < n && strcmp(topics[i], a->q->topic); i++)
                        ;
                if (i == n) {
                        snprintf(a->errstr, sizeof(a->errstr),
                                 "topic '%.255s' is not audited here",
                                 a->q->topic);
                        a->fail_status = 404;
                        return NULL;
                }
                topics += i;
                n = 1;
        }
        j = report_summary_json(a->lg, topics, n, 0, a->errstr,
                                sizeof(a->errstr));
        if (!j)
                return NULL;
        arr = json_object_get(j, "topics");
        for (i = 0; i < n; i++)
                json_object_set_new(json_array_get(arr, i), "lag",
                                    report_opt_json(status_topic_lag(a->v,
                                                                topics[i])));
        json_object_set_new(j, "lag",
                            report_opt_json(status_topic_lag(a->v, NULL)));
        json_object_set_new(j, "live", http_live_json(a->v));
        json_object_set_new(j, "generated_ms", json_integer(clock_wall_ms()));
        return j;
}

/* A page of a newest-first or key-ordered walk: up to limit items, and
 * whether more follow (the walk asks for limit + 1). */
struct http_page {
        json_t *items;
        int64_t limit, n;
        int more;
        int64_t last_id;          /* anomalies: id of the last item kept */
        int failed;               /* a cursor did not fit */
        /* producers: the cursor of the last item kept; Kafka topic names
         * have at most 249 bytes */
        char cursor[2 * (249 + DEDUP_PRODUCER_MAX) + 16];
};

static int http_page_full(struct http_page *pg)
{
        if (pg->n < pg->limit)
                return 0;
        pg->more = 1;
        return 1;
}

static int http_anomaly_cb(void *opaque, const struct ledger_anomaly *an)
{
        struct http_page *pg = opaque;

        if (http_page_full(pg))
                return 1;
        json_array_append_new(pg->items, report_anomaly_json(an));
        pg->last_id = an->id;
        pg->n++;
        return 0;
}

static json_t *http_page_json(struct http_page *pg, const char *name,
                              json_t *next)
{
        json_t *j = json_object();

        json_object_set_new(j, name, pg->items);
        json_object_set_new(j, "limit", json_integer(pg->limit));
        json_object_set_new(j, "next_cursor", pg->more ? next : json_null());
        if (!pg->more)
                json_decref(next);
        return j;
}

void http_query_anomaly_filter(const struct http_query *q,
                               struct ledger_anomaly_filter *f)
{
        memset(f, 0, sizeof(*f));
        f->topic = q->topic;
        f->kind = q->kind;
        f->producer = q->producer;
        f->producer_len = q->producer_len;
        f->since_ms = q->since_ms;
        f->before_id = q->cursor;
        f->limit = q->limit + 1;
}

void http_query_pair_filter(const struct http_query *q,
                            struct ledger_pair_key *after,
                            struct ledger_pair_filter *f)
{
        memset(after, 0, sizeof(*after));
        memset(f, 0, sizeof(*f));
        after->topic = q->after.topic;
        after->partition = q->after.partition;
        after->producer = q->after.producer;
        after->producer_len = q->after.producer_len;
        f->topic = q->topic;
        f->producer = q->producer;
        f->producer_len = q->producer_len;
        f->after = q->after.topic ? after : NULL;
        f->limit = q->limit + 1;
}

static json_t *http_api_anomalies(struct http_api *a)
{
        const struct http_query *q = a->q;
        struct ledger_anomaly_filter f;
        struct http_page pg = {.items = json_array(), .limit = q->limit};

        http_query_anomaly_filter(q, &f);
        if (ledger_anomalies_query(a->lg, &f, http_anomaly_cb, &pg, a->errstr,
                                   sizeof(a->errstr))) {
                json_decref(pg.items);
                return NULL;
        }
        return http_page_json(&pg, "anomalies", json_integer(pg.last_id));
}

/* {"topic": ..., "partition": ...}, the start of a per-partition row. */
static json_t *http_where_json(const char *topic, int32_t partition)
{
        json_t *o = json_object();

        json_object_set_new(o, "topic",
                            report_bytes_json(topic, strlen(topic), NULL));
        json_object_set_new(o, "partition", json_integer(partition));
        return o;
}

static int http_pair_cb(void *opaque, const struct ledger_pair *p)
{
        struct http_page *pg = opaque;
        json_t *o;

        if (http_page_full(pg))
                return 1;
        o = http_where_json(p->topic, p->partition);
        report_producer_set(o, p->producer, p->producer_len);
        json_object_set_new(o, "epoch", json_integer(p->epoch));
        json_object_set_new(o, "last_seq", report_opt_json(p->last_seq));
        json_object_set_new(o, "last_offset", json_integer(p->last_offset));
        json_object_set_new(o, "last_ms", json_integer(p->last_ms));
        json_object_set_new(o, "records", report_u64_json(p->records));
        json_object_set_new(o, "open_gaps", report_u64_json(p->open_gaps));
        json_array_append_new(pg->items, o);
        pg->n++;
        if (!http_cursor_format(pg->cursor, sizeof(pg->cursor), p->topic,
                                p->partition, p->producer,
                                p->producer_len)) {
                pg->failed = 1;
                return 1;
        }
        return 0;
}

static json_t *http_api_producers(struct http_api *a)
{
        const struct http_query *q = a->q;
        struct ledger_pair_key after;
        struct ledger_pair_filter f;
        struct http_page pg = {.items = json_array(), .limit = q->limit};

        http_query_pair_filter(q, &after, &f);

        if (ledger_pairs_foreach(a->lg, &f, http_pair_cb, &pg, a->errstr,
                                 sizeof(a->errstr)) ||
            pg.failed) {
                if (pg.failed) {
                        snprintf(a->errstr, sizeof(a->errstr),
                                 "a topic name is too long to page past");
                        a->fail_status = 422;
                }
                json_decref(pg.items);
                return NULL;
        }
        return http_page_json(&pg, "producers", json_string(pg.cursor));
}

struct http_parts {
        json_t *items;
        const struct status_view *v;
        unsigned char *seen; /* [v->nparts]: listed from the ledger */
};

/* The live figures of (topic, partition) onto o; marks it seen. */
static void http_part_live(struct http_parts *pp, json_t *o,
                           const char *topic, int32_t partition)
{
        const struct status_part *sp = NULL;
        size_t i;

        for (i = 0; pp->v && i < pp->v->nparts; i++) {
                sp = &pp->v->parts[i];
                if (sp->partition == partition && sp->topic &&
                    !strcmp(sp->topic, topic)) {
                        pp->seen[i] = 1;
                        break;
                }
                sp = NULL;
        }
        json_object_set_new(o, "assigned", json_boolean(sp != NULL));
        json_object_set_new(o, "high_watermark",
                            report_opt_json(sp ? sp->high_watermark : -1));
        json_object_set_new(o, "lag", report_opt_json(sp ? status_part_lag(sp)
                                                      : -1));
}

static json_t *http_part_json(const char *topic, int32_t partition,
                              int64_t next_offset)
{
        json_t *o = http_where_json(topic, partition);

        json_object_set_new(o, "next_offset", report_opt_json(next_offset));
        return o;
}

static int http_partition_cb(void *opaque, const struct ledger_partition *p)
{
        struct http_parts *pp = opaque;
        const struct dedup_counts *c = &p->counts;
        json_t *o = http_part_json(p->topic, p->partition, p->next_offset);

        json_object_set_new(o, "from_log_start",
                            json_boolean(p->from_log_start));
        json_object_set_new(o, "records_total", report_u64_json(c->records));
        json_object_set_new(o, "untracked", report_u64_json(c->untracked));
        json_object_set_new(o, "missing_records",
                            report_u64_json(c->missing));
        json_object_set_new(o, "anomalies", report_kinds_json(c->anomalies));
        json_object_set_new(o, "ids_checked", report_u64_json(c->ids));
        json_object_set_new(o, "open_gaps", report_u64_json(p->open_gaps));
        json_object_set_new(o, "updated_ms", json_integer(p->updated_ms));
        http_part_live(pp, o, p->topic, p->partition);
        json_array_append_new(pp->items, o);
        return 0;
}

static json_t *http_api_partitions(struct http_api *a)
{
        struct http_parts pp = {.items = json_array(), .v = a->v};
        const struct status_part *sp;
        size_t i;
        json_t *o;

        pp.seen = calloc(a->v && a->v->nparts ? a->v->nparts : 1, 1);
        if (!pp.seen ||
            ledger_partitions_foreach(a->lg, a->q->topic, http_partition_cb,
                                      &pp, a->errstr, sizeof(a->errstr))) {
                free(pp.seen);
                json_decref(pp.items);
                return NULL;
        }
        /* Assigned partitions that have no ledger row yet. */
        for (i = 0; a->v && i < a->v->nparts; i++) {
                sp = &a->v->parts[i];
                if (pp.seen[i] || !sp->topic ||
                    (a->q->topic && strcmp(a->q->topic, sp->topic)))
                        continue;
                o = http_part_json(sp->topic, sp->partition,
                                   sp->next_offset);
                http_part_live(&pp, o, sp->topic, sp->partition);
                json_array_append_new(pp.items, o);
        }
        free(pp.seen);
        return json_pack("{s:o}", "partitions", pp.items);
}

static const struct {
        const char *path;
        enum http_endpoint ep;
        json_t *(*fn)(struct http_api *a);
} http_api_routes[] = {
        {"summary", HTTP_EP_SUMMARY, http_api_summary},
        {"anomalies", HTTP_EP_ANOMALIES, http_api_anomalies},
        {"producers", HTTP_EP_PRODUCERS, http_api_producers},
        {"partitions", HTTP_EP_PARTITIONS, http_api_partitions},
};

void http_api_handle(struct http_server *s, const char *path, const char *q,
                     size_t qlen, struct http_reply *r)
{
        struct http_api a = {.s = s};
        struct http_query query;
        struct status_view view;
        size_t i, n = sizeof(http_api_routes) / sizeof(http_api_routes[0]);
        json_t *j;

        for (i = 0; i < n && strcmp(path, http_api_routes[i].path); i++)
                ;
        if (i == n) {
                http_reply_error(r, 404, "no such endpoint: /api/v1/%.64s",
                                 path);
                return;
        }
        if (http_query_parse(&query, http_api_routes[i].ep, q, qlen,
                             a.errstr, sizeof(a.errstr))) {
                http_reply_error(r, 400, "%s", a.errstr);
                return;
        }
        a.q = &query;
        a.lg = http_reader_get(s, a.errstr, sizeof(a.errstr));
        if (!a.lg) {
                http_reply_error(r, 503, "ledger not available: %s",
                                 a.errstr);
                goto out;
        }
        a.v = status_view_get(http_server_conf(s)->status, &view);
        a.errstr[0] = '\0';
        a.fail_status = 500;
        j = http_api_routes[i].fn(&a);
        if (a.v)
                status_view_release(&view);
        /* A failed query may leave the connection unusable: reopen. */
        http_reader_put(s, a.lg, !j && a.fail_status == 500);
        if (j)
                http_reply_json(r, 200, j);
        else
                http_reply_error(r, a.fail_status, "%s",
                                 a.errstr[0] ? a.errstr : "out of memory");
out:
        http_query_release(&query);
}

void http_readyz_handle(struct http_server *s, struct http_reply *r)
{
        struct status_view view;
        struct status_view *v = status_view_get(http_server_conf(s)->status, &view);
        json_t *live = http_live_json(v);
        int ready = json_is_true(json_object_get(live, "ready"));

        if (v)
                status_view_release(v);
        if (!ready) {
                json_t *why = json_object_get(live, "reasons");
                json_object_set_new(
                        live, "error",
                        json_sprintf("not ready: %s",
                                     json_string_value(
                                             json_array_get(why, 0))));
        }
        http_reply_json(r, ready ? 200 : 503, live);
}
