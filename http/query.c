/*
 * query.c - the query strings of the JSON endpoints and the producers
 * cursor (see http.h): pure functions of their input, fuzzed by
 * tests/fuzz/fuzz_query.c, and the ledger filters they turn into.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/hex.h"
#include "../dedup/dedup.h"
#include "http.h"

enum http_param {
        HTTP_P_TOPIC,
        HTTP_P_KIND,
        HTTP_P_PRODUCER,
        HTTP_P_SINCE,
        HTTP_P_LIMIT,
        HTTP_P_CURSOR,
        HTTP_P_MINUTES,
        HTTP_P_SCOPE,
        HTTP_P__CNT
};

static const char *const http_param_names[HTTP_P__CNT] = {
    [HTTP_P_TOPIC] = "topic",       [HTTP_P_KIND] = "kind",
    [HTTP_P_PRODUCER] = "producer", [HTTP_P_SINCE] = "since",
    [HTTP_P_LIMIT] = "limit",       [HTTP_P_CURSOR] = "cursor",
    [HTTP_P_MINUTES] = "minutes",   [HTTP_P_SCOPE] = "scope",
};

#define HTTP_P(p) (1u << (p))

/* Which parameters each endpoint takes, and its limits. */
static const struct {
        unsigned params;
        int64_t limit_default, limit_max;
} http_eps[] = {
    [HTTP_EP_SUMMARY] = {HTTP_P(HTTP_P_TOPIC) | HTTP_P(HTTP_P_SCOPE), 0, 0},
    [HTTP_EP_ANOMALIES] = {HTTP_P(HTTP_P_TOPIC) | HTTP_P(HTTP_P_KIND) |
                               HTTP_P(HTTP_P_SCOPE) | HTTP_P(HTTP_P_PRODUCER) |
                               HTTP_P(HTTP_P_SINCE) | HTTP_P(HTTP_P_LIMIT) |
                               HTTP_P(HTTP_P_CURSOR),
                           HTTP_ANOMALIES_LIMIT_DEFAULT,
                           HTTP_ANOMALIES_LIMIT_MAX},
    [HTTP_EP_PRODUCERS] = {HTTP_P(HTTP_P_TOPIC) | HTTP_P(HTTP_P_PRODUCER) |
                               HTTP_P(HTTP_P_LIMIT) | HTTP_P(HTTP_P_CURSOR),
                           HTTP_PRODUCERS_LIMIT_DEFAULT,
                           HTTP_PRODUCERS_LIMIT_MAX},
    [HTTP_EP_PARTITIONS] = {HTTP_P(HTTP_P_TOPIC), 0, 0},
    [HTTP_EP_HISTORY] = {HTTP_P(HTTP_P_TOPIC) | HTTP_P(HTTP_P_MINUTES), 0, 0},
    [HTTP_EP_FLOWS] = {HTTP_P(HTTP_P_LIMIT) | HTTP_P(HTTP_P_CURSOR),
                       HTTP_FLOWS_LIMIT_DEFAULT, HTTP_FLOWS_LIMIT_MAX},
    [HTTP_EP_GROUP] = {0, 0, 0},
};

/* Percent-decodes in[0..len) into out (with plus_space, '+' is a space);
 * returns the decoded length, or -1 for a bad escape or a NUL byte,
 * encoded or raw (libmicrohttpd hands us a C string, but
 * http_query_parse() takes bytes: a raw NUL would end a key early or put
 * a NUL in a producer). */
static long http_pct_decode_as(const char *in, size_t len, char *out,
                               int plus_space)
{
        size_t i, o = 0;
        int hi, lo;

        for (i = 0; i < len; i++) {
                if (!in[i])
                        return -1;
                if (plus_space && in[i] == '+') {
                        out[o++] = ' ';
                } else if (in[i] != '%') {
                        out[o++] = in[i];
                } else {
                        if (len - i < 3 || (hi = hex_digit(in[i + 1])) < 0 ||
                            (lo = hex_digit(in[i + 2])) < 0 || !(hi | lo))
                                return -1;
                        out[o++] = (char)(hi << 4 | lo);
                        i += 2;
                }
        }
        out[o] = '\0';
        return (long)o;
}

static long http_pct_decode(const char *in, size_t len, char *out)
{
        return http_pct_decode_as(in, len, out, 1);
}

long http_path_decode(const char *in, size_t len, char *out)
{
        return http_pct_decode_as(in, len, out, 0);
}

/* Hex-decodes in[0..len) into out, NUL-terminated; returns the length,
 * or -1. */
static long http_hex_decode(const char *in, size_t len, char *out)
{
        long n = hex_decode(out, len / 2, in, len);

        if (n >= 0)
                out[n] = '\0';
        return n;
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
        if (!d2 || dedup_parse_decimal(d1 + 1, (size_t)(d2 - d1 - 1),
                                       INT32_MAX, &part))
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

        if (!strcmp(k, "coverage") || !strcmp(k, "truncated"))
                return 1;
        return !dedup_kind_parse(k, &kind) &&
               (kind < DEDUP_KIND__ANOMALY_CNT ||
                kind == DEDUP_KIND_GAP_UNKNOWN);
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
        snprintf(buf + o, size - o, ", %s, truncated or coverage",
                 dedup_kind_name(DEDUP_KIND_GAP_UNKNOWN));
}

/* v[0..len), plain decimal from min to max, into *out (untouched on
 * failure); else -1 and "<name> must be <what>(a number from min to
 * max)", the parentheses only with a what. */
static int http_param_num(const char *v, size_t len, uint64_t min,
                          uint64_t max, int64_t *out, const char *name,
                          const char *what, char *errstr, size_t errstr_size)
{
        uint64_t n;

        if (!dedup_parse_decimal(v, len, max, &n) && n >= min) {
                *out = (int64_t)n;
                return 0;
        }
        snprintf(errstr, errstr_size,
                 "%s must be %s%sa number from %llu to %llu%s", name, what,
                 *what ? "(" : "", (unsigned long long)min,
                 (unsigned long long)max, *what ? ")" : "");
        return -1;
}

/* Sets parameter p of q from its decoded value v[0..len) (in q->buf,
 * NUL-terminated); spare has room for a decoded cursor. */
static int http_param_set(struct http_query *q, enum http_endpoint ep,
                          enum http_param p, char *v, size_t len, char *spare,
                          char *errstr, size_t errstr_size)
{
        char kinds[256];

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
                return http_param_num(v, len, 0, INT64_MAX, &q->since_ms,
                                      "since", "milliseconds since the epoch ",
                                      errstr, errstr_size);
        case HTTP_P_LIMIT:
                return http_param_num(v, len, 1,
                                      (uint64_t)http_eps[ep].limit_max,
                                      &q->limit, "limit", "", errstr,
                                      errstr_size);
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
                return http_param_num(v, len, 1, INT64_MAX, &q->cursor,
                                      "cursor", "an anomaly id ", errstr,
                                      errstr_size);
        case HTTP_P_MINUTES:
                return http_param_num(v, len, 1, HTTP_HISTORY_MINUTES_MAX,
                                      &q->minutes, "minutes", "", errstr,
                                      errstr_size);
        case HTTP_P_SCOPE:
                if (!strcmp(v, "group")) {
                        q->scope = HTTP_SCOPE_GROUP;
                } else if (!strcmp(v, "member")) {
                        q->scope = HTTP_SCOPE_MEMBER;
                } else if (len) {
                        snprintf(errstr, errstr_size,
                                 "scope must be group or member");
                        return -1;
                }
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
        q->minutes = HTTP_HISTORY_MINUTES_DEFAULT;
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
                if (p == HTTP_P__CNT || !(http_eps[ep].params & HTTP_P(p))) {
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
