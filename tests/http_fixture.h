/*
 * http_fixture.h - what the HTTP tests (test_http*.c) share: hostile
 * topic and producer names, a small socket client (libcurl is not a
 * dependency), and the group fixture: a ledger filled through
 * ledger_commit(), a published status and a server on 127.0.0.1 with a
 * port the kernel picks.
 *
 * Each test binary is one translation unit, so the helpers are static
 * (inline, so that a binary using only some of them compiles warning-free).
 */
#ifndef EOSAUDIT_TESTS_HTTP_FIXTURE_H
#define EOSAUDIT_TESTS_HTTP_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <jansson.h>

#include "../auditor/ledger/ledger.h"
#include "../base/log.h"
#include "../auditor/report/report.h"
#include "../auditor/audit/status.h"
#include "../http/http.h"

/* Names that must come out exactly (JSON) or escaped (labels). */
#define T_PLAIN "orders"
#define T_ODD "we\"ird\\to\npic"            /* quote, backslash, newline */
#define T_ODD_LABEL "we\\\"ird\\\\to\\npic" /* as a label value */
#define T_ODD_Q "we%22ird%5Cto%0Apic"       /* percent-encoded */
#define P1 "p1"
#define PQ "it's \"q\" \\ \x01\t;--"     /* quotes, backslash, control bytes */
#define PBIN "\xff\xfe\x80 bin\x01\xc3(" /* not UTF-8 */
#define PBIN_Q "%FF%FE%80+bin%01%C3("
#define PBIN_HEX "fffe802062696e01c328"

#define NPARTS 3
#define HIGH_WATERMARK 100

/* Message ids: a printable one, and one that is not UTF-8 and longer
 * than the evidence keeps (DEDUP_ID_EVIDENCE_MAX bytes). */
#define ID1 "m-1"
#define LONG_ID_LEN 300
static __attribute__((unused)) unsigned char long_id[LONG_ID_LEN];

static __attribute__((unused)) const char *const topics[] = {T_PLAIN, T_ODD};

/* ------------------------------------------------------------------ */
/* A tiny HTTP client                                                  */
/* ------------------------------------------------------------------ */

struct resp {
        int status; /* 0: no answer (closed) */
        char *head; /* status line and headers, NUL-terminated */
        char *body; /* NUL-terminated */
        size_t body_len;
};

static inline void resp_free(struct resp *r)
{
        free(r->head);
        free(r->body);
        memset(r, 0, sizeof(*r));
}

static inline int conn_open(uint16_t port)
{
        struct sockaddr_in a;
        struct timeval tv = {10, 0};
        int fd = socket(AF_INET, SOCK_STREAM, 0);

        assert_true(fd >= 0);
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
                fail_msg("connect to port %u: %s", port, strerror(errno));
        return fd;
}

static inline void send_all(int fd, const char *p, size_t len)
{
        ssize_t n;

        while (len) {
                n = send(fd, p, len, MSG_NOSIGNAL);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return; /* the server may close early: fine */
                p += n;
                len -= (size_t)n;
        }
}

/* Case-insensitive header lookup in r->head; value copied into buf. */
static inline const char *resp_header(const struct resp *r, const char *name,
                                      char *buf, size_t size)
{
        const char *p = r->head ? strstr(r->head, "\r\n") : NULL;
        size_t nlen = strlen(name);

        while (p && p[2]) {
                const char *line = p + 2, *end = strstr(line, "\r\n");
                if (!end)
                        break;
                if (!strncasecmp(line, name, nlen) && line[nlen] == ':') {
                        const char *v = line + nlen + 1;
                        while (*v == ' ')
                                v++;
                        snprintf(buf, size, "%.*s", (int)(end - v), v);
                        return buf;
                }
                p = end;
        }
        return NULL;
}

/*
 * Reads one response from fd: headers, then Content-Length bytes of body
 * (none for HEAD).  Returns 0, or -1 when the connection closed first.
 */
static inline int resp_read(int fd, struct resp *r, int head_only)
{
        size_t cap = 4096, len = 0, hlen = 0, want;
        char *buf = malloc(cap), *eoh, cl[32];
        ssize_t n;

        memset(r, 0, sizeof(*r));
        assert_non_null(buf);
        for (;;) {
                if (hlen) {
                        want = hlen;
                        if (!head_only &&
                            resp_header(r, "Content-Length", cl, sizeof(cl)))
                                want += strtoull(cl, NULL, 10);
                        if (len >= want)
                                break;
                }
                if (len + 4096 > cap) {
                        cap *= 2;
                        buf = realloc(buf, cap);
                        assert_non_null(buf);
                }
                n = recv(fd, buf + len, cap - len - 1, 0);
                if (n <= 0)
                        break;
                len += (size_t)n;
                buf[len] = '\0';
                if (!hlen && (eoh = strstr(buf, "\r\n\r\n"))) {
                        hlen = (size_t)(eoh - buf) + 4;
                        r->head = strndup(buf, hlen - 2);
                        assert_non_null(r->head);
                }
        }
        if (!hlen) {
                free(buf);
                return -1;
        }
        r->status = (int)strtol(buf + 9, NULL, 10); /* "HTTP/1.1 200" */
        r->body_len = len - hlen;
        r->body = malloc(r->body_len + 1);
        assert_non_null(r->body);
        memcpy(r->body, buf + hlen, r->body_len);
        r->body[r->body_len] = '\0';
        free(buf);
        return 0;
}

/* One request on a fresh connection. */
static inline void request(uint16_t port, const char *raw, size_t len,
                           struct resp *r)
{
        int fd = conn_open(port);

        send_all(fd, raw, len);
        if (resp_read(fd, r, !strncmp(raw, "HEAD ", 5)))
                r->status = 0;
        close(fd);
}

/* method target with extra header lines (each ending in \r\n). */
static inline void req(uint16_t port, const char *method, const char *target,
                       const char *headers, struct resp *r)
{
        size_t size = strlen(target) + (headers ? strlen(headers) : 0) + 128;
        char *raw = malloc(size);
        int n;

        assert_non_null(raw);
        n = snprintf(raw, size,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Connection: close\r\n%s\r\n",
                     method, target, headers ? headers : "");
        assert_true(n > 0 && (size_t)n < size);
        request(port, raw, (size_t)n, r);
        free(raw);
}

static inline json_t *get_json(uint16_t port, const char *target, int status)
{
        struct resp r;
        json_error_t jerr;
        json_t *j;
        char type[64];

        req(port, "GET", target, NULL, &r);
        if (r.status != status)
                fail_msg("GET %s: status %d, want %d: %s", target, r.status,
                         status, r.body ? r.body : "");
        assert_non_null(resp_header(&r, "Content-Type", type, sizeof(type)));
        assert_string_equal(type, "application/json");
        j = json_loadb(r.body, r.body_len, 0, &jerr);
        if (!j)
                fail_msg("GET %s: not JSON (%s): %s", target, jerr.text,
                         r.body);
        resp_free(&r);
        return j;
}

static inline json_int_t jint(json_t *j, const char *key)
{
        json_t *v = json_object_get(j, key);

        if (!json_is_integer(v))
                fail_msg("no integer '%s'", key);
        return json_integer_value(v);
}

/* The keys of object j, in the order the server wrote them, must be
 * want ("a,b,c"): an answer's shape. */
static inline void keys_are(json_t *j, const char *want)
{
        char got[1024] = "";
        size_t n = 0;
        const char *k;
        json_t *v;

        if (!json_is_object(j))
                fail_msg("not an object where \"%s\" was due", want);
        json_object_foreach(j, k, v)
        {
                int w = snprintf(got + n, sizeof(got) - n, "%s%s",
                                 n ? "," : "", k);
                if (w < 0 || (size_t)w >= sizeof(got) - n)
                        fail_msg("too many keys, want \"%s\"", want);
                n += (size_t)w;
        }
        assert_string_equal(got, want);
}

/* ------------------------------------------------------------------ */
/* Fixture: a ledger, a status and a server                            */
/* ------------------------------------------------------------------ */

struct fx {
        char dir[64];
        char db[128];
        char token[128];
        struct status *st;
        struct http_server *hs;
        uint16_t port;
        struct ledger_summary sum[2];
        int64_t anomalies; /* rows */
        int64_t pairs;
};

struct rec {
        uint32_t part;
        int64_t offset;
        const char *producer; /* NULL: no eos.producer */
        int32_t epoch;        /* -1: no eos.epoch */
        int64_t seq;          /* -1: no eos.seq */
        const char *id;       /* message id; NULL: none; long_id: that */
};

/* Part 0 and 1 are orders/0 and orders/1, part 2 is T_ODD/0.  orders has
 * an id window, where the ids of orders/0 offsets 0 and 1 come again. */
static __attribute__((unused)) const struct rec recs[] = {
    {0, 0, P1, 0, 0, ID1},
    {0, 1, P1, 0, 1, (const char *)long_id},
    {0, 2, P1, 0, 1, NULL},   /* dup */
    {0, 3, P1, 0, 4, NULL},   /* gap 2..3 */
    {0, 4, P1, -1, -1, NULL}, /* malformed */
    /* untracked, and redelivered: the id of orders/0 offset 1 */
    {0, 5, NULL, -1, -1, (const char *)long_id},
    /* redelivered by another producer: the id of orders/0 offset 0 */
    {1, 0, PQ, 0, 0, ID1},
    {1, 1, PQ, 0, 0, NULL}, /* dup */
    {1, 2, PQ, 1, 0, NULL},
    {1, 3, PQ, 0, 1, NULL}, /* fenced */
    {2, 0, PBIN, 0, 0, NULL},
    {2, 1, PBIN, 0, 0, NULL}, /* dup */
    {2, 2, PBIN, 0, 1, NULL},
    {2, 3, PQ, 0, 0, NULL},
    {2, 4, PQ, 0, 0, NULL}, /* dup */
    {2, 5, P1, 0, 0, NULL},
};
#define NRECS (sizeof(recs) / sizeof(recs[0]))

/* The parsed headers of r, as the engine sees them. */
static inline void observe(struct dedup_tracker *tr, const struct rec *r)
{
        struct dedup_hdrs h;

        dedup_hdrs_init(&h);
        h.producer = r->producer;
        h.producer_len = r->producer ? strlen(r->producer) : 0;
        h.epoch = r->epoch;
        h.seq = r->seq;
        h.seen = (r->producer ? DEDUP_HDR_PRODUCER : 0) |
                 (r->epoch >= 0 ? DEDUP_HDR_EPOCH : 0) |
                 (r->seq >= 0 ? DEDUP_HDR_SEQ : 0);
        h.id = r->id;
        h.id_len = r->id == (const char *)long_id ? LONG_ID_LEN
                   : r->id                        ? strlen(r->id)
                                                  : 0;
        dedup_tracker_observe(tr, r->part, r->offset, &h);
}

/* Fills the ledger: every kind but out_of_order and coverage, and an open
 * gap left on orders/0 after a second batch.  One id window per topic, as
 * the auditor has them. */
static inline void ledger_fill(struct fx *fx)
{
        static const int32_t partitions[NPARTS] = {0, 1, 0};
        static const char *const part_topics[NPARTS] = {T_PLAIN, T_PLAIN,
                                                        T_ODD};
        struct ledger_part parts[NPARTS];
        struct dedup_config conf;
        struct dedup_tracker *tr;
        struct ledger *lg = NULL;
        char err[256];
        uint32_t i;
        size_t k;
        struct rec later = {0, 6, P1, 0, 9, NULL}; /* opens gap 5..8 */
        uint32_t windows[2];

        for (i = 0; i < LONG_ID_LEN; i++)
                long_id[i] = (unsigned char)(0xc0 + i % 64); /* no UTF-8 */
        dedup_config_defaults(&conf);
        conf.gap_grace_records = 0;
        conf.gap_grace_ms = 0;
        conf.window.max_ids = 1000;
        tr = dedup_tracker_new(&conf);
        assert_non_null(tr);
        for (i = 0; i < NPARTS; i++) {
                memset(&parts[i], 0, sizeof(parts[i]));
                parts[i].topic = part_topics[i];
                parts[i].partition = partitions[i];
                parts[i].part = i;
                parts[i].next_offset = -1;
                parts[i].from_log_start = 1;
                parts[i].coverage_lo = parts[i].coverage_hi = -1;
                assert_int_equal(dedup_tracker_part_add(tr, i, 1), 0);
        }
        for (k = 0; k < 2; k++)
                assert_int_equal(dedup_tracker_window_add(tr, &windows[k]), 0);
        for (i = 0; i < NPARTS; i++)
                dedup_tracker_part_set_window(
                    tr, i, windows[strcmp(part_topics[i], T_PLAIN) != 0]);
        if (ledger_open(&lg, fx->db, err, sizeof(err)))
                fail_msg("ledger_open: %s", err);
        if (ledger_windows_load(lg, tr, topics, windows, 2, parts, NPARTS,
                                "msgid", err, sizeof(err)))
                fail_msg("ledger_windows_load: %s", err);
        dedup_tracker_begin(tr, 1000);
        for (k = 0; k < NRECS; k++) {
                observe(tr, &recs[k]);
                parts[recs[k].part].next_offset = recs[k].offset + 1;
                parts[recs[k].part].dirty = 1;
        }
        dedup_tracker_confirm_all(tr);
        if (ledger_commit(lg, tr, parts, NPARTS, NULL, err, sizeof(err)))
                fail_msg("ledger_commit: %s", err);
        dedup_tracker_begin(tr, 2000);
        observe(tr, &later);
        parts[0].next_offset = 7;
        parts[0].dirty = 1;
        if (ledger_commit(lg, tr, parts, NPARTS, NULL, err, sizeof(err)))
                fail_msg("ledger_commit: %s", err);
        for (k = 0; k < 2; k++)
                if (ledger_summary(lg, topics[k], &fx->sum[k], err,
                                   sizeof(err)))
                        fail_msg("ledger_summary: %s", err);
        ledger_close(lg);
        dedup_tracker_free(tr);
}

/* A published view: lag 100 - next_offset, two latency observations. */
static inline void status_fill(struct fx *fx)
{
        static const int32_t partitions[NPARTS] = {0, 1, 0};
        static const char *const part_topics[NPARTS] = {T_PLAIN, T_PLAIN,
                                                        T_ODD};
        static const int64_t next[NPARTS] = {7, 4, 6};
        struct status_view v;
        size_t i;

        fx->st = status_new();
        assert_non_null(fx->st);
        assert_int_equal(status_view_init(&v, topics, 2, NPARTS), 0);
        for (i = 0; i < NPARTS; i++) {
                v.parts[i].topic = strdup(part_topics[i]);
                v.parts[i].partition = partitions[i];
                v.parts[i].next_offset = next[i];
                v.parts[i].high_watermark = HIGH_WATERMARK;
        }
        v.started_ms = 1000;
        v.updated_ms = 2000;
        v.ledger_open = v.assigned = v.brokers_up = 1;
        status_hist_observe(&v.topics[0].latency, 0.02);
        status_hist_observe(&v.topics[1].latency, 7);
        status_hist_observe(&v.commit, 0.003);
        assert_int_equal(status_publish(fx->st, &v), 0);
        status_view_release(&v);
}

static inline struct http_server *
server_start(const char *db, struct status *st, const char *token_file)
{
        struct http_server *hs = NULL;
        struct http_conf c;
        char err[512];

        http_conf_defaults(&c);
        c.listen = "127.0.0.1:0";
        c.db_path = db;
        c.topics = topics;
        c.topic_cnt = 2;
        c.status = st;
        c.token_file = token_file;
        c.version = "9.9.9-test";
        if (http_start(&hs, &c, err, sizeof(err)))
                fail_msg("http_start: %s", err);
        assert_true(http_port(hs) > 0);
        return hs;
}

static inline int count_cb(void *opaque, const struct ledger_anomaly *a)
{
        (void)a;
        ++*(int64_t *)opaque;
        return 0;
}

static inline int fx_setup(void **state)
{
        struct fx *fx = calloc(1, sizeof(*fx));
        struct ledger *lg = NULL;
        char err[256];
        FILE *f;

        assert_non_null(fx);
        snprintf(fx->dir, sizeof(fx->dir), "/tmp/eosaudit-http-XXXXXX");
        assert_non_null(mkdtemp(fx->dir));
        snprintf(fx->db, sizeof(fx->db), "%s/ledger.db", fx->dir);
        snprintf(fx->token, sizeof(fx->token), "%s/token", fx->dir);
        f = fopen(fx->token, "w");
        assert_non_null(f);
        fputs("s3cr3t-Token_42\n", f);
        fclose(f);
        ledger_fill(fx);
        status_fill(fx);
        assert_int_equal(ledger_open_reader(&lg, fx->db, err, sizeof(err)), 0);
        assert_int_equal(ledger_anomalies_foreach(lg, NULL, -1, count_cb,
                                                  &fx->anomalies, err,
                                                  sizeof(err)),
                         0);
        ledger_close(lg);
        fx->pairs = (int64_t)(fx->sum[0].pairs + fx->sum[1].pairs);
        fx->hs = server_start(fx->db, fx->st, NULL);
        fx->port = http_port(fx->hs);
        *state = fx;
        return 0;
}

static inline int fx_teardown(void **state)
{
        struct fx *fx = *state;

        http_stop(fx->hs);
        status_free(fx->st);
        ledger_remove(fx->db);
        unlink(fx->token);
        rmdir(fx->dir);
        free(fx);
        return 0;
}

/* One line of the exposition, exactly. */
static inline void assert_line(const char *text, const char *line)
{
        const char *p = text;
        size_t n = strlen(line);

        while ((p = strstr(p, line))) {
                if ((p == text || p[-1] == '\n') && p[n] == '\n')
                        return;
                p += n;
        }
        fail_msg("no line '%s' in:\n%s", line, text);
}

#endif /* EOSAUDIT_TESTS_HTTP_FIXTURE_H */
