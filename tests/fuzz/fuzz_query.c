/*
 * fuzz_query.c - libFuzzer target: what a client controls in a request to
 * the HTTP API, through the pure parsers of http/ and on into the ledger
 * queries the handlers run.
 *
 * Input: [sel][bytes...].  sel % 5 is the endpoint (enum http_endpoint);
 * sel / 5 % 3 picks the size of the error buffer (256, 1 or 17 bytes).
 * The bytes are used three ways:
 *  - as a raw query string for http_query_parse();
 *  - up to their first NUL, as a --listen address for http_listen_parse();
 *  - split in two at their middle, as a (topic, producer) for
 *    http_cursor_format() into buffers of every size around the needed one.
 *
 * Invariants checked:
 *  - http_query_parse() agrees with an independent model of the contract
 *    in http.h (split on '&', percent-decode, known names once, values in
 *    range, no NUL byte raw or encoded): both accept or both refuse, and
 *    an accepted query holds exactly the model's values;
 *  - a refused query leaves a NUL-terminated error message;
 *  - a cursor formatted from any (topic, partition, producer) parses back
 *    to the same key; a too-small buffer gives 0 and no overflow;
 *  - an accepted listen address is AF_INET or AF_INET6 with a matching
 *    length, and formatting it back and parsing again gives the same
 *    address;
 *  - every accepted query runs against a ledger holding hostile names
 *    (quotes, "--", "%", non-UTF-8) without an error (the server would
 *    answer 500), and every row the ledger returns matches the query's
 *    filters, in order, within the limit.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../auditor/ledger/ledger.h"
#include "../../dedup/dedup.h"
#include "../../http/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ------------------------------------------------------------------ */
/* A model of the query-string contract (http.h), written separately   */
/* ------------------------------------------------------------------ */

enum {
        FQ_TOPIC,
        FQ_KIND,
        FQ_PRODUCER,
        FQ_SINCE,
        FQ_LIMIT,
        FQ_CURSOR,
        FQ_MINUTES,
        FQ_N
};

static const char *const fq_names[FQ_N] = {
    "topic", "kind", "producer", "since", "limit", "cursor", "minutes",
};

/* Which names each endpoint takes, and its limits. */
static const struct {
        unsigned names;
        int64_t limit_default, limit_max;
} fq_eps[5] = {
    [HTTP_EP_SUMMARY] = {1u << FQ_TOPIC, 0, 0},
    [HTTP_EP_ANOMALIES] = {0x3fu, HTTP_ANOMALIES_LIMIT_DEFAULT,
                           HTTP_ANOMALIES_LIMIT_MAX},
    [HTTP_EP_PRODUCERS] = {(1u << FQ_TOPIC) | (1u << FQ_PRODUCER) |
                               (1u << FQ_LIMIT) | (1u << FQ_CURSOR),
                           HTTP_PRODUCERS_LIMIT_DEFAULT,
                           HTTP_PRODUCERS_LIMIT_MAX},
    [HTTP_EP_PARTITIONS] = {1u << FQ_TOPIC, 0, 0},
    [HTTP_EP_HISTORY] = {(1u << FQ_TOPIC) | (1u << FQ_MINUTES), 0, 0},
};

struct fq_model {
        char *val[FQ_N]; /* decoded, malloc'd; NULL when absent */
        size_t len[FQ_N];
        int64_t since, limit, cursor, minutes;
        int has_after;
        char *after_topic, *after_producer;
        size_t after_topic_len, after_producer_len;
        int32_t after_partition;
};

static void fq_model_release(struct fq_model *m)
{
        int i;

        for (i = 0; i < FQ_N; i++)
                free(m->val[i]);
        free(m->after_topic);
        free(m->after_producer);
        memset(m, 0, sizeof(*m));
}

static int fq_hex(int c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* Percent-decoding as http.h describes it; NULL for a bad escape or any
 * NUL byte (raw or %00). */
static char *fq_pct(const char *s, size_t n, size_t *out_len)
{
        char *o = malloc(n + 1);
        size_t i, k = 0;

        if (!o)
                abort();
        for (i = 0; i < n; i++) {
                int c = (unsigned char)s[i];
                if (c == '%') {
                        if (n - i < 3 || fq_hex(s[i + 1]) < 0 ||
                            fq_hex(s[i + 2]) < 0) {
                                free(o);
                                return NULL;
                        }
                        c = fq_hex(s[i + 1]) * 16 + fq_hex(s[i + 2]);
                        i += 2;
                } else if (c == '+') {
                        c = ' ';
                }
                if (c == 0) {
                        free(o);
                        return NULL;
                }
                o[k++] = (char)c;
        }
        o[k] = '\0';
        *out_len = k;
        return o;
}

/* Decodes hex s[0..n) into a new buffer; NULL if not hex of even length,
 * empty, or holding a NUL byte. */
static char *fq_unhex(const char *s, size_t n, size_t *out_len)
{
        char *o;
        size_t i;

        if (!n || n % 2)
                return NULL;
        o = malloc(n / 2 + 1);
        if (!o)
                abort();
        for (i = 0; i < n; i += 2) {
                int hi = fq_hex(s[i]), lo = fq_hex(s[i + 1]);
                if (hi < 0 || lo < 0 || !(hi | lo)) {
                        free(o);
                        return NULL;
                }
                o[i / 2] = (char)(hi * 16 + lo);
        }
        o[n / 2] = '\0';
        *out_len = n / 2;
        return o;
}

static int fq_decimal(const char *s, size_t n, uint64_t max, uint64_t *out)
{
        uint64_t v = 0;
        size_t i;

        if (!n || n > 20)
                return -1;
        for (i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -1;
                if (v > (UINT64_MAX - 9) / 10)
                        return -1;
                v = v * 10 + (uint64_t)(s[i] - '0');
                if (v > max)
                        return -1;
        }
        *out = v;
        return 0;
}

static int fq_kind_ok(const char *k)
{
        static const char *const kinds[] = {"duplicate",    "gap",
                                            "out_of_order", "fenced",
                                            "malformed",    "coverage"};
        size_t i;

        for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
                if (!strcmp(k, kinds[i]))
                        return 1;
        return 0;
}

/* "<hex topic>.<partition>.<hex producer>" */
static int fq_cursor(struct fq_model *m, const char *v, size_t n)
{
        const char *d1 = memchr(v, '.', n), *d2;
        uint64_t part;

        if (!d1)
                return -1;
        d2 = memchr(d1 + 1, '.', n - (size_t)(d1 + 1 - v));
        if (!d2 || fq_decimal(d1 + 1, (size_t)(d2 - d1 - 1), INT32_MAX, &part))
                return -1;
        m->after_topic = fq_unhex(v, (size_t)(d1 - v), &m->after_topic_len);
        m->after_producer = fq_unhex(d2 + 1, n - (size_t)(d2 + 1 - v),
                                     &m->after_producer_len);
        if (!m->after_topic || !m->after_producer ||
            m->after_producer_len > DEDUP_PRODUCER_MAX)
                return -1;
        m->after_partition = (int32_t)part;
        m->has_after = 1;
        return 0;
}

/* 0: the model accepts q for ep (and m holds the values); -1: it refuses. */
static int fq_model_parse(struct fq_model *m, int ep, const char *q, size_t n)
{
        size_t pos = 0;
        uint64_t x;

        memset(m, 0, sizeof(*m));
        m->since = -1;
        m->cursor = -1;
        m->limit = fq_eps[ep].limit_default;
        m->minutes = HTTP_HISTORY_MINUTES_DEFAULT;
        while (pos < n) {
                const char *seg = q + pos, *amp = memchr(seg, '&', n - pos);
                size_t slen = amp ? (size_t)(amp - seg) : n - pos, klen, vlen;
                const char *eq;
                char *key, *val;
                int i;

                pos += slen + 1;
                if (!slen)
                        continue;
                eq = memchr(seg, '=', slen);
                klen = eq ? (size_t)(eq - seg) : slen;
                key = fq_pct(seg, klen, &vlen);
                if (!key)
                        return -1;
                for (i = 0; i < FQ_N && strcmp(key, fq_names[i]); i++)
                        ;
                free(key);
                if (i == FQ_N || !(fq_eps[ep].names & (1u << i)) || m->val[i])
                        return -1;
                if (eq) {
                        val = fq_pct(eq + 1, slen - klen - 1, &vlen);
                } else {
                        val = calloc(1, 1);
                        vlen = 0;
                }
                if (!val)
                        return -1;
                m->val[i] = val;
                m->len[i] = vlen;
                switch (i) {
                case FQ_KIND:
                        if (vlen && !fq_kind_ok(val))
                                return -1;
                        break;
                case FQ_PRODUCER:
                        if (vlen > DEDUP_PRODUCER_MAX)
                                return -1;
                        break;
                case FQ_SINCE:
                        if (fq_decimal(val, vlen, INT64_MAX, &x))
                                return -1;
                        m->since = (int64_t)x;
                        break;
                case FQ_LIMIT:
                        if (fq_decimal(val, vlen,
                                       (uint64_t)fq_eps[ep].limit_max, &x) ||
                            !x)
                                return -1;
                        m->limit = (int64_t)x;
                        break;
                case FQ_CURSOR:
                        if (ep == HTTP_EP_PRODUCERS) {
                                if (vlen && fq_cursor(m, val, vlen))
                                        return -1;
                        } else if (fq_decimal(val, vlen, INT64_MAX, &x) ||
                                   !x) {
                                return -1;
                        } else {
                                m->cursor = (int64_t)x;
                        }
                        break;
                case FQ_MINUTES:
                        if (fq_decimal(val, vlen, HTTP_HISTORY_MINUTES_MAX,
                                       &x) ||
                            !x)
                                return -1;
                        m->minutes = (int64_t)x;
                        break;
                default:
                        break;
                }
        }
        return 0;
}

/* The string the parser gave for a parameter against the model's value
 * (an empty value means absent). */
static void fq_same(const char *got, size_t got_len, const struct fq_model *m,
                    int i)
{
        if (!m->val[i] || !m->len[i]) {
                if (got)
                        abort();
                return;
        }
        if (!got || got_len != m->len[i] || memcmp(got, m->val[i], got_len) ||
            got[got_len] != '\0')
                abort();
}

static void fq_compare(const struct http_query *q, const struct fq_model *m)
{
        fq_same(q->topic, q->topic ? strlen(q->topic) : 0, m, FQ_TOPIC);
        fq_same(q->kind, q->kind ? strlen(q->kind) : 0, m, FQ_KIND);
        fq_same(q->producer, q->producer_len, m, FQ_PRODUCER);
        if (q->producer && memchr(q->producer, '\0', q->producer_len))
                abort();
        if (q->since_ms != m->since || q->limit != m->limit ||
            q->cursor != m->cursor || q->minutes != m->minutes)
                abort();
        if (!m->has_after) {
                if (q->after.topic)
                        abort();
                return;
        }
        if (!q->after.topic || strlen(q->after.topic) != m->after_topic_len ||
            memcmp(q->after.topic, m->after_topic, m->after_topic_len) ||
            q->after.partition != m->after_partition ||
            q->after.producer_len != m->after_producer_len ||
            memcmp(q->after.producer, m->after_producer,
                   m->after_producer_len))
                abort();
}

/* ------------------------------------------------------------------ */
/* A ledger with hostile names, made once per process                  */
/* ------------------------------------------------------------------ */

#define FQ_NPARTS 4

static const char *const fq_topics[FQ_NPARTS] = {"orders", "orders",
                                                 "it's'; DROP TABLE pairs; --",
                                                 "%_\xff\xfe"};
static const int32_t fq_partitions[FQ_NPARTS] = {0, 1, 0, 2147483647};
static const char *const fq_producers[] = {
    "p1",           "' OR 1=1 --", "\";--", "%",    "_",
    "\xff\xfe\x80", "p1 ",         "P1",    "a\\b", "x'||'y",
};
#define FQ_NPROD (sizeof(fq_producers) / sizeof(fq_producers[0]))

static struct ledger *fq_lg;
static char fq_dir[256];
static char fq_db[300];

static void fq_ledger_remove(void)
{
        ledger_close(fq_lg);
        fq_lg = NULL;
        ledger_remove(fq_db);
        rmdir(fq_dir);
}

static void fq_observe(struct dedup_tracker *tr, uint32_t part, int64_t offset,
                       const char *producer, int32_t epoch, int64_t seq)
{
        struct dedup_hdrs h;

        dedup_hdrs_init(&h);
        h.producer = producer;
        h.producer_len = producer ? strlen(producer) : 0;
        h.epoch = epoch;
        h.seq = seq;
        h.seen = (producer ? DEDUP_HDR_PRODUCER : 0) |
                 (epoch >= 0 ? DEDUP_HDR_EPOCH : 0) |
                 (seq >= 0 ? DEDUP_HDR_SEQ : 0);
        dedup_tracker_observe(tr, part, offset, &h);
}

/* Every kind on every part, each producer a few times, three batches with
 * their own clock (so "since" splits them), a coverage gap. */
static void fq_ledger_make(void)
{
        struct ledger_part parts[FQ_NPARTS];
        struct dedup_config conf;
        struct dedup_tracker *tr;
        struct ledger *lg = NULL;
        const char *tmp = getenv("TMPDIR");
        char err[256];
        uint32_t i, b;
        size_t k;
        int64_t off[FQ_NPARTS] = {0};

        snprintf(fq_dir, sizeof(fq_dir), "%s/eosaudit-fuzzq-XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(fq_dir))
                abort();
        snprintf(fq_db, sizeof(fq_db), "%s/ledger.db", fq_dir);
        atexit(fq_ledger_remove);
        dedup_config_defaults(&conf);
        conf.gap_grace_records = 0;
        conf.gap_grace_ms = 0;
        tr = dedup_tracker_new(&conf);
        if (!tr || ledger_open(&lg, fq_db, err, sizeof(err)))
                abort();
        for (i = 0; i < FQ_NPARTS; i++) {
                memset(&parts[i], 0, sizeof(parts[i]));
                parts[i].topic = fq_topics[i];
                parts[i].partition = fq_partitions[i];
                parts[i].part = i;
                parts[i].next_offset = -1;
                parts[i].from_log_start = 1;
                parts[i].coverage_lo = parts[i].coverage_hi = -1;
                if (dedup_tracker_part_add(tr, i, 1))
                        abort();
        }
        for (b = 0; b < 3; b++) {
                dedup_tracker_begin(tr, 1000 * (int64_t)(b + 1));
                for (i = 0; i < FQ_NPARTS; i++) {
                        for (k = 0; k < FQ_NPROD; k++) {
                                const char *p = fq_producers[k];
                                int64_t s = 3 * (int64_t)b;
                                fq_observe(tr, i, off[i]++, p, 0, s);
                                fq_observe(tr, i, off[i]++, p, 0, s); /* dup */
                                fq_observe(tr, i, off[i]++, p, 0, s + 2);
                        }
                        fq_observe(tr, i, off[i]++, "p1", -1,
                                   1); /* malformed */
                        parts[i].next_offset = off[i];
                        parts[i].dirty = 1;
                }
                if (b == 1) {
                        parts[3].coverage_lo = off[3];
                        parts[3].coverage_hi = off[3] + 9;
                        off[3] += 10;
                        parts[3].next_offset = off[3];
                }
                if (b == 2)
                        dedup_tracker_confirm_all(tr);
                if (ledger_commit(lg, tr, parts, FQ_NPARTS, NULL, err,
                                  sizeof(err)))
                        abort();
        }
        ledger_close(lg);
        dedup_tracker_free(tr);
        if (ledger_open_reader(&fq_lg, fq_db, err, sizeof(err)))
                abort();
}

/* Byte strings as the ledger keeps them: equal, and compared as memcmp
 * then length (SQLite's BINARY collation). */
static int fq_bytes_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
        int c = memcmp(a, b, alen < blen ? alen : blen);

        if (c)
                return c;
        return alen < blen ? -1 : alen > blen;
}

struct fq_walk {
        const struct http_query *q;
        int64_t rows, last_id;
        char last_key[600];
        size_t last_key_len;
        int32_t last_part;
        int have_last;
};

static int fq_anomaly_cb(void *opaque, const struct ledger_anomaly *a)
{
        struct fq_walk *w = opaque;
        const struct http_query *q = w->q;

        if (q->topic && strcmp(a->topic, q->topic))
                abort();
        if (q->kind && strcmp(a->kind, q->kind))
                abort();
        if (q->producer &&
            (!a->producer || fq_bytes_cmp(a->producer, a->producer_len,
                                          q->producer, q->producer_len)))
                abort();
        if (q->since_ms >= 0 && a->detected_ms < q->since_ms)
                abort();
        if (q->cursor > 0 && a->id >= q->cursor)
                abort();
        if (w->rows && a->id >= w->last_id)
                abort(); /* newest first */
        w->last_id = a->id;
        w->rows++;
        return 0;
}

static int fq_pair_cb(void *opaque, const struct ledger_pair *p)
{
        struct fq_walk *w = opaque;
        const struct http_query *q = w->q;
        char key[600];
        size_t tlen = strlen(p->topic), klen;

        if (q->topic && strcmp(p->topic, q->topic))
                abort();
        if (q->producer && fq_bytes_cmp(p->producer, p->producer_len,
                                        q->producer, q->producer_len))
                abort();
        if (tlen + p->producer_len + 1 > sizeof(key))
                abort();
        /* (topic, partition, producer) strictly after the cursor, and
         * ascending. */
        if (q->after.topic) {
                int c = strcmp(p->topic, q->after.topic);
                if (c < 0 || (!c && p->partition < q->after.partition) ||
                    (!c && p->partition == q->after.partition &&
                     fq_bytes_cmp(p->producer, p->producer_len,
                                  q->after.producer,
                                  q->after.producer_len) <= 0))
                        abort();
        }
        memcpy(key, p->topic, tlen + 1);
        memcpy(key + tlen + 1, p->producer, p->producer_len);
        klen = tlen + 1 + p->producer_len;
        if (w->have_last) {
                int c = strcmp(p->topic, w->last_key);
                if (c < 0 || (!c && p->partition < w->last_part) ||
                    (!c && p->partition == w->last_part &&
                     fq_bytes_cmp(key + tlen + 1, p->producer_len,
                                  w->last_key + strlen(w->last_key) + 1,
                                  w->last_key_len - strlen(w->last_key) - 1) <=
                         0))
                        abort();
        }
        memcpy(w->last_key, key, klen);
        w->last_key_len = klen;
        w->last_part = p->partition;
        w->have_last = 1;
        w->rows++;
        return 0;
}

/* History points: oldest first, one per minute, within the window. */
static int fq_history_cb(void *opaque, const struct ledger_history_point *p)
{
        struct fq_walk *w = opaque;

        if (p->minute_ms % LEDGER_HISTORY_MINUTE_MS ||
            (w->rows && p->minute_ms <= w->last_id) || p->minute_ms < 0)
                abort();
        w->last_id = p->minute_ms;
        w->rows++;
        return 0;
}

static int fq_partition_cb(void *opaque, const struct ledger_partition *p)
{
        struct fq_walk *w = opaque;

        if (w->q->topic && strcmp(p->topic, w->q->topic))
                abort();
        w->rows++;
        return 0;
}

/* What the handler of ep asks the ledger for q (see http/api_anomalies.c
 * and http/api_producers.c). */
static void fq_ledger_run(int ep, const struct http_query *q)
{
        struct fq_walk w = {.q = q};
        struct ledger_summary sum;
        char err[256];
        int rc = 0;

        if (!fq_lg)
                fq_ledger_make();
        switch (ep) {
        case HTTP_EP_SUMMARY:
                rc = ledger_summary(fq_lg, q->topic, &sum, err, sizeof(err));
                break;
        case HTTP_EP_ANOMALIES: {
                struct ledger_anomaly_filter f;
                http_query_anomaly_filter(q, &f);
                rc = ledger_anomalies_query(fq_lg, &f, fq_anomaly_cb, &w, err,
                                            sizeof(err));
                if (w.rows > q->limit + 1)
                        abort();
                break;
        }
        case HTTP_EP_PRODUCERS: {
                struct ledger_pair_key after;
                struct ledger_pair_filter f;
                http_query_pair_filter(q, &after, &f);
                rc = ledger_pairs_foreach(fq_lg, &f, fq_pair_cb, &w, err,
                                          sizeof(err));
                if (w.rows > q->limit + 1)
                        abort();
                break;
        }
        case HTTP_EP_PARTITIONS:
                rc = ledger_partitions_foreach(fq_lg, q->topic,
                                               fq_partition_cb, &w, err,
                                               sizeof(err));
                break;
        case HTTP_EP_HISTORY:
                /* As http/api_history.c asks, but from time 0 (not now
                 * minus q->minutes) so that the fixture's rows are walked
                 * whatever the clock says. */
                rc = ledger_history_foreach(fq_lg, q->topic, 0, fq_history_cb,
                                            &w, err, sizeof(err));
                if (w.rows > LEDGER_HISTORY_MINUTES + 1)
                        abort();
                break;
        default:
                abort();
        }
        if (rc) {
                fprintf(stderr, "fuzz_query: ledger query failed: %s\n", err);
                abort();
        }
}

/* ------------------------------------------------------------------ */
/* Cursors and listen addresses                                        */
/* ------------------------------------------------------------------ */

static void fq_cursor_roundtrip(const uint8_t *p, size_t n, int32_t part)
{
        size_t tlen = n / 2, plen = n - tlen, need, len, sz;
        char *topic = malloc(tlen + 1), *buf, *q;
        struct http_query hq;
        char err[128];

        if (!topic)
                abort();
        memcpy(topic, p, tlen);
        topic[tlen] = '\0';
        tlen = strlen(topic); /* a C string: up to its first NUL */
        if (plen > DEDUP_PRODUCER_MAX)
                plen = DEDUP_PRODUCER_MAX;
        need = 2 * tlen + 2 * plen + 13;
        /* Sizes below, at and above what the format needs. */
        for (sz = need > 3 ? need - 3 : 0; sz <= need + 1; sz++) {
                buf = malloc(sz ? sz : 1);
                if (!buf)
                        abort();
                len = http_cursor_format(buf, sz, topic, part,
                                         (const char *)p + n / 2, plen);
                if (len &&
                    (len >= sz || buf[len] != '\0' || strlen(buf) != len))
                        abort();
                free(buf);
        }
        buf = malloc(need + 7);
        if (!buf)
                abort();
        memcpy(buf, "cursor=", 7);
        len = http_cursor_format(buf + 7, need, topic, part,
                                 (const char *)p + n / 2, plen);
        if (!len)
                abort(); /* the documented size always fits */
        q = buf;
        if (!http_query_parse(&hq, HTTP_EP_PRODUCERS, q, len + 7, err,
                              sizeof(err))) {
                /* Only a key the parser may refuse (empty, or with a NUL
                 * byte) does not come back. */
                if (!hq.after.topic || strcmp(hq.after.topic, topic) ||
                    hq.after.partition != part ||
                    hq.after.producer_len != plen ||
                    memcmp(hq.after.producer, p + n / 2, plen))
                        abort();
                http_query_release(&hq);
        } else if (tlen && plen && !memchr(p + n / 2, '\0', plen) &&
                   part >= 0) {
                abort();
        }
        free(buf);
        free(topic);
}

static void fq_listen(const uint8_t *p, size_t n, size_t errsz)
{
        struct sockaddr_storage a, b;
        size_t alen = 0, blen = 0;
        char *s = malloc(n + 1), err[256], host[INET6_ADDRSTRLEN],
             again[INET6_ADDRSTRLEN + 16];

        if (!s)
                abort();
        memcpy(s, p, n);
        s[n] = '\0';
        memset(err, 'x', sizeof(err));
        if (http_listen_parse(s, &a, &alen, err, errsz)) {
                if (!memchr(err, '\0', errsz))
                        abort();
                free(s);
                return;
        }
        if (a.ss_family == AF_INET) {
                const struct sockaddr_in *a4 = (const struct sockaddr_in *)&a;
                if (alen != sizeof(*a4) ||
                    !inet_ntop(AF_INET, &a4->sin_addr, host, sizeof(host)))
                        abort();
                snprintf(again, sizeof(again), "%s:%u", host,
                         (unsigned)ntohs(a4->sin_port));
        } else if (a.ss_family == AF_INET6) {
                const struct sockaddr_in6 *a6 =
                    (const struct sockaddr_in6 *)&a;
                if (alen != sizeof(*a6) ||
                    !inet_ntop(AF_INET6, &a6->sin6_addr, host, sizeof(host)))
                        abort();
                snprintf(again, sizeof(again), "[%s]:%u", host,
                         (unsigned)ntohs(a6->sin6_port));
        } else {
                abort();
        }
        if (http_listen_parse(again, &b, &blen, err, sizeof(err)) ||
            blen != alen || memcmp(&a, &b, alen))
                abort();
        free(s);
}

/* ------------------------------------------------------------------ */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const size_t errsizes[3] = {256, 1, 17};
        struct http_query q;
        struct fq_model m;
        char err[256];
        const char *s;
        size_t n, errsz;
        int ep, rc, mrc;

        if (size < 1)
                return 0;
        ep = data[0] % 5;
        errsz = errsizes[data[0] / 5 % 3];
        s = (const char *)data + 1;
        n = size - 1;

        memset(err, 'x', sizeof(err));
        rc = http_query_parse(&q, (enum http_endpoint)ep, s, n, err, errsz);
        mrc = fq_model_parse(&m, ep, s, n);
        if (rc != mrc) {
                fprintf(stderr, "fuzz_query: parser %d, model %d (%s)\n", rc,
                        mrc, rc ? err : "accepted");
                abort();
        }
        if (rc) {
                if (!memchr(err, '\0', errsz))
                        abort();
        } else {
                fq_compare(&q, &m);
                fq_ledger_run(ep, &q);
                http_query_release(&q);
        }
        fq_model_release(&m);

        fq_cursor_roundtrip(data + 1, n,
                            (int32_t)(size > 4 ? (data[1] | data[2] << 8 |
                                                  (data[3] & 0x7f) << 16)
                                               : 0));
        fq_listen(data + 1, n < 200 ? n : 200, errsz);
        return 0;
}
