/*
 * test_http.c - the HTTP server against a ledger filled through
 * ledger_commit() and a published status: every endpoint's status and
 * body, paging, 400s, methods, size limits, the bearer token, keep-alive,
 * the per-address limit, escaping of hostile topic and producer names in
 * JSON and in the Prometheus exposition, the evidence of redelivered
 * records (message ids, printable and not), the human report of the same
 * ledger, and the embedded page against http/index.html.
 *
 * Requests go through a small socket client (libcurl is not a
 * dependency); each server listens on 127.0.0.1 with a port the kernel
 * picks.
 */
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

#include "../auditor/ledger.h"
#include "../base/log.h"
#include "../auditor/report.h"
#include "../auditor/status.h"
#include "../http/http.h"

/* Names that must come out exactly (JSON) or escaped (labels). */
#define T_PLAIN "orders"
#define T_ODD "we\"ird\\to\npic"        /* quote, backslash, newline */
#define T_ODD_LABEL "we\\\"ird\\\\to\\npic" /* as a label value */
#define T_ODD_Q "we%22ird%5Cto%0Apic"    /* percent-encoded */
#define P1 "p1"
#define PQ "it's \"q\" \\ \x01\t;--" /* quotes, backslash, control bytes */
#define PBIN "\xff\xfe\x80 bin\x01\xc3("  /* not UTF-8 */
#define PBIN_Q "%FF%FE%80+bin%01%C3("
#define PBIN_HEX "fffe802062696e01c328"

#define NPARTS 3
#define HIGH_WATERMARK 100

/* Message ids: a printable one, and one that is not UTF-8 and longer
 * than the evidence keeps (DEDUP_ID_EVIDENCE_MAX bytes). */
#define ID1 "m-1"
#define LONG_ID_LEN 300
static unsigned char long_id[LONG_ID_LEN];

static const char *const topics[] = {T_PLAIN, T_ODD};

/* ------------------------------------------------------------------ */
/* A tiny HTTP client                                                  */
/* ------------------------------------------------------------------ */

struct resp {
        int status;   /* 0: no answer (closed) */
        char *head;   /* status line and headers, NUL-terminated */
        char *body;   /* NUL-terminated */
        size_t body_len;
};

static void resp_free(struct resp *r)
{
        free(r->head);
        free(r->body);
        memset(r, 0, sizeof(*r));
}

static int conn_open(uint16_t port)
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

static void send_all(int fd, const char *p, size_t len)
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
static const char *resp_header(const struct resp *r, const char *name,
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
static int resp_read(int fd, struct resp *r, int head_only)
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
static void request(uint16_t port, const char *raw, size_t len,
                    struct resp *r)
{
        int fd = conn_open(port);

        send_all(fd, raw, len);
        if (resp_read(fd, r, !strncmp(raw, "HEAD ", 5)))
                r->status = 0;
        close(fd);
}

/* method target with extra header lines (each ending in \r\n). */
static void req(uint16_t port, const char *method, const char *target,
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

static json_t *get_json(uint16_t port, const char *target, int status)
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

static json_int_t jint(json_t *j, const char *key)
{
        json_t *v = json_object_get(j, key);

        if (!json_is_integer(v))
                fail_msg("no integer '%s'", key);
        return json_integer_value(v);
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
static const struct rec recs[] = {
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
static void observe(struct dedup_tracker *tr, const struct rec *r)
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
static void ledger_fill(struct fx *fx)
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
                assert_int_equal(dedup_tracker_window_add(tr, &windows[k]),
                                 0);
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
static void status_fill(struct fx *fx)
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

static struct http_server *server_start(const char *db, struct status *st,
                                        const char *token_file)
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

static int count_cb(void *opaque, const struct ledger_anomaly *a)
{
        (void)a;
        ++*(int64_t *)opaque;
        return 0;
}

static int fx_setup(void **state)
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
        assert_int_equal(ledger_open_reader(&lg, fx->db, err, sizeof(err)),
                         0);
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

static int fx_teardown(void **state)
{
        static const char *const sfx[] = {"", "-wal", "-shm", "-lock",
                                          "-journal"};
        struct fx *fx = *state;
        char p[192];
        size_t i;

        http_stop(fx->hs);
        status_free(fx->st);
        for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
                snprintf(p, sizeof(p), "%s%s", fx->db, sfx[i]);
                unlink(p);
        }
        unlink(fx->token);
        rmdir(fx->dir);
        free(fx);
        return 0;
}

/* ------------------------------------------------------------------ */
/* Endpoints                                                           */
/* ------------------------------------------------------------------ */

static void test_healthz_readyz(void **state)
{
        struct fx *fx = *state;
        json_t *j;

        j = get_json(fx->port, "/healthz", 200);
        assert_string_equal(json_string_value(json_object_get(j, "status")),
                            "ok");
        json_decref(j);
        j = get_json(fx->port, "/readyz", 200);
        assert_true(json_is_true(json_object_get(j, "ready")));
        assert_int_equal(json_array_size(json_object_get(j, "reasons")), 0);
        json_decref(j);
}

static void test_summary(void **state)
{
        struct fx *fx = *state;
        json_t *j = get_json(fx->port, "/api/v1/summary", 200), *t, *an, *w;
        size_t i;

        assert_int_equal(jint(j, "records_total"),
                         fx->sum[0].records + fx->sum[1].records);
        assert_int_equal(jint(j, "records_total"), NRECS + 1);
        assert_int_equal(jint(j, "untracked"), 1);
        an = json_object_get(j, "anomalies");
        assert_int_equal(jint(an, "duplicate"), 4);
        assert_int_equal(jint(an, "gap"), 1);
        assert_int_equal(jint(an, "fenced"), 1);
        assert_int_equal(jint(an, "malformed"), 1);
        assert_int_equal(jint(an, "redelivered"), 2);
        assert_int_equal(jint(j, "missing_records"), 2);
        assert_int_equal(jint(j, "open_gaps"), 1);
        /* Ids: the four records of orders that carry one were checked;
         * the window holds the two distinct ones, in the generation opened
         * by the first batch (at 1000 ms). */
        assert_int_equal(jint(j, "ids_checked"), 4);
        w = json_object_get(j, "window");
        assert_int_equal(jint(w, "ids"), 2);
        assert_int_equal(jint(w, "generations"), 1);
        assert_int_equal(jint(w, "oldest_ms"), 1000);
        /* lag: (100 - 7) + (100 - 4) + (100 - 6) */
        assert_int_equal(jint(j, "lag"), 283);
        assert_true(json_is_true(
                json_object_get(json_object_get(j, "live"), "ready")));
        t = json_object_get(j, "topics");
        assert_int_equal(json_array_size(t), 2);
        for (i = 0; i < 2; i++) {
                json_t *o = json_array_get(t, i);
                assert_string_equal(
                        json_string_value(json_object_get(o, "topic")),
                        topics[i]);
                assert_int_equal(jint(o, "records_total"),
                                 fx->sum[i].records);
                assert_int_equal(jint(o, "producers"), fx->sum[i].producers);
        }
        assert_int_equal(jint(json_array_get(t, 1), "lag"), 94);
        /* The verdicts the dashboard's banner shows. */
        assert_string_equal(json_string_value(json_object_get(j, "verdict")),
                            "anomalies");
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(t, 0), "verdict")),
                            "anomalies");
        assert_true(json_is_array(
                json_object_get(json_array_get(t, 0), "warnings")));
        assert_int_equal(jint(json_array_get(t, 0), "ids_checked"), 4);
        /* The odd topic's window is empty: no oldest id. */
        assert_int_equal(jint(json_array_get(t, 1), "ids_checked"), 0);
        w = json_object_get(json_array_get(t, 1), "window");
        assert_int_equal(jint(w, "ids"), 0);
        assert_int_equal(jint(w, "generations"), 0);
        assert_true(json_is_null(json_object_get(w, "oldest_ms")));
        assert_int_equal(jint(json_object_get(json_array_get(t, 1),
                                              "anomalies"),
                              "redelivered"),
                         0);
        json_decref(j);

        j = get_json(fx->port, "/api/v1/summary?topic=" T_ODD_Q, 200);
        assert_int_equal(json_array_size(json_object_get(j, "topics")), 1);
        assert_int_equal(jint(j, "records_total"), fx->sum[1].records);
        json_decref(j);
        json_decref(get_json(fx->port, "/api/v1/summary?topic=nope", 404));
}

/* Walks every page of target (which ends in '?' or '&'), collecting the
 * items of field; returns how many, checks the order with cmp. */
static size_t walk_pages(uint16_t port, const char *target,
                         const char *field, json_t *all)
{
        char url[2048], cur[1200] = "";
        size_t pages = 0;

        for (;;) {
                json_t *j, *next;
                snprintf(url, sizeof(url), "%s%s%s", target,
                         cur[0] ? "cursor=" : "", cur);
                j = get_json(port, url, 200);
                json_array_extend(all, json_object_get(j, field));
                next = json_object_get(j, "next_cursor");
                pages++;
                assert_true(pages < 100);
                if (json_is_null(next)) {
                        json_decref(j);
                        break;
                }
                if (json_is_integer(next))
                        snprintf(cur, sizeof(cur), "%lld",
                                 (long long)json_integer_value(next));
                else
                        snprintf(cur, sizeof(cur), "%s",
                                 json_string_value(next));
                json_decref(j);
        }
        return pages;
}

static json_t *find_producer(json_t *arr, const char *name)
{
        size_t i;
        json_t *o;

        json_array_foreach(arr, i, o)
        {
                json_t *p = json_object_get(o, "producer");
                if (json_is_string(p) && !strcmp(json_string_value(p), name))
                        return o;
        }
        return NULL;
}

/* The item of arr on partition, or NULL. */
static json_t *find_partition(json_t *arr, json_int_t partition)
{
        size_t i;
        json_t *o;

        json_array_foreach(arr, i, o)
        {
                if (jint(o, "partition") == partition)
                        return o;
        }
        return NULL;
}

/* The hex of the bytes of the long id that evidence keeps. */
static void long_id_hex(char *hex, size_t size)
{
        size_t i;

        assert_true(size > 2 * DEDUP_ID_EVIDENCE_MAX);
        for (i = 0; i < DEDUP_ID_EVIDENCE_MAX; i++)
                snprintf(hex + 2 * i, 3, "%02x", long_id[i]);
}

static void assert_null_field(json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);

        if (!v || !json_is_null(v))
                fail_msg("'%s' is not null (or absent)", key);
}

/* The redelivered records with their evidence: where their first copies
 * are and the first record's message id. */
static void test_anomalies_redelivered(void **state)
{
        /* The integer evidence of the redelivered items, by partition:
         * orders/1 offset 0 is producer PQ sending the id of orders/0
         * offset 0 again; orders/0 offset 5 an untracked record with the id
         * of orders/0 offset 1, which is not UTF-8 and longer than the
         * evidence keeps. */
        static const struct {
                json_int_t partition;
                const char *key;
                json_int_t want;
        } ints[] = {
                {1, "epoch", 0},           {1, "seq_lo", 0},
                {1, "offset_lo", 0},       {1, "offset_hi", 0},
                {1, "first_partition", 0}, {1, "first_offset", 0},
                {1, "first_offset_hi", 0}, {1, "msgid_len", sizeof(ID1) - 1},
                {1, "count", 1},
                {0, "offset_lo", 5},       {0, "offset_hi", 5},
                {0, "first_partition", 0}, {0, "first_offset", 1},
                {0, "first_offset_hi", 1}, {0, "msgid_len", LONG_ID_LEN},
                {0, "count", 1},
        };
        struct fx *fx = *state;
        json_t *j, *arr, *o;
        char hex[2 * DEDUP_ID_EVIDENCE_MAX + 1];
        size_t i;

        j = get_json(fx->port, "/api/v1/anomalies?kind=redelivered", 200);
        arr = json_object_get(j, "anomalies");
        assert_int_equal(json_array_size(arr), 2);
        json_array_foreach(arr, i, o)
        {
                assert_string_equal(
                        json_string_value(json_object_get(o, "kind")),
                        "redelivered");
                assert_string_equal(
                        json_string_value(json_object_get(o, "topic")),
                        T_PLAIN);
        }
        for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
                o = find_partition(arr, ints[i].partition);
                assert_non_null(o);
                if (jint(o, ints[i].key) != ints[i].want)
                        fail_msg("partition %d: %s is %lld, want %lld",
                                 (int)ints[i].partition, ints[i].key,
                                 (long long)jint(o, ints[i].key),
                                 (long long)ints[i].want);
        }
        o = find_partition(arr, 1);
        assert_string_equal(json_string_value(json_object_get(o, "producer")),
                            PQ);
        assert_string_equal(json_string_value(json_object_get(o, "msgid")),
                            ID1);
        assert_null_field(o, "msgid_hex");
        o = find_partition(arr, 0);
        assert_null_field(o, "producer");
        assert_null_field(o, "epoch");
        assert_null_field(o, "seq_lo");
        assert_true(json_is_string(json_object_get(o, "msgid")));
        long_id_hex(hex, sizeof(hex));
        assert_string_equal(
                json_string_value(json_object_get(o, "msgid_hex")), hex);
        json_decref(j);

        /* Other kinds have the fields, null. */
        j = get_json(fx->port, "/api/v1/anomalies?kind=duplicate&limit=1",
                     200);
        o = json_array_get(json_object_get(j, "anomalies"), 0);
        assert_non_null(o);
        assert_null_field(o, "first_partition");
        assert_null_field(o, "first_offset_hi");
        assert_null_field(o, "msgid");
        assert_null_field(o, "msgid_hex");
        assert_null_field(o, "msgid_len");
        json_decref(j);

        /* Filters combine with the kind. */
        j = get_json(fx->port,
                     "/api/v1/anomalies?kind=redelivered&topic=" T_ODD_Q, 200);
        assert_int_equal(json_array_size(json_object_get(j, "anomalies")), 0);
        json_decref(j);
        j = get_json(fx->port,
                     "/api/v1/anomalies?kind=redelivered&limit=1", 200);
        assert_int_equal(json_array_size(json_object_get(j, "anomalies")), 1);
        assert_true(json_is_integer(json_object_get(j, "next_cursor")));
        json_decref(j);
}

/* /api/v1/ids/{id}: m-1 was first orders/0 offset 0 (the open generation
 * of the orders window) and came again on orders/1 offset 0. */
static void test_ids(void **state)
{
        struct fx *fx = *state;
        json_t *j, *o, *c;
        char target[400];
        size_t n;
        int i;

        j = get_json(fx->port, "/api/v1/ids/m-1?topic=" T_PLAIN, 200);
        assert_string_equal(json_string_value(json_object_get(j, "id")), ID1);
        assert_string_equal(json_string_value(json_object_get(j, "topic")),
                            T_PLAIN);
        assert_string_equal(
                json_string_value(json_object_get(j, "dedup_key")), "msgid");
        assert_true(json_is_true(json_object_get(j, "in_window")));
        o = json_object_get(j, "first");
        assert_int_equal(jint(o, "partition"), 0);
        assert_int_equal(jint(o, "offset"), 0);
        assert_true(json_is_false(json_object_get(o, "generation_closed")));
        assert_int_equal(jint(o, "generation_first_ms"), 1000);
        o = json_object_get(j, "copies");
        assert_int_equal(json_array_size(o), 1);
        c = json_array_get(o, 0);
        assert_int_equal(jint(c, "partition"), 1);
        assert_int_equal(jint(c, "offset"), 0);
        assert_int_equal(jint(c, "first_partition"), 0);
        assert_int_equal(jint(c, "first_offset"), 0);
        assert_true(jint(c, "anomaly_id") > 0);
        assert_string_equal(json_string_value(json_object_get(c, "producer")),
                            PQ);
        assert_true(json_is_false(json_object_get(j, "copies_truncated")));
        assert_int_equal(jint(json_object_get(j, "window"), "generations"), 1);
        json_decref(j);

        /* Percent-encoded in the path; the one with the 404 is unknown. */
        j = get_json(fx->port, "/api/v1/ids/m%2D1?topic=" T_PLAIN, 200);
        assert_int_equal(jint(json_object_get(j, "first"), "offset"), 0);
        json_decref(j);
        j = get_json(fx->port, "/api/v1/ids/m-2?topic=" T_PLAIN, 404);
        assert_non_null(strstr(json_string_value(json_object_get(j, "error")),
                               "not seen"));
        json_decref(j);
        /* Another topic's window does not know it. */
        json_decref(get_json(fx->port, "/api/v1/ids/m-1?topic=" T_ODD_Q, 404));

        /* Which topic (two are audited), which id. */
        j = get_json(fx->port, "/api/v1/ids/m-1", 400);
        assert_non_null(strstr(json_string_value(json_object_get(j, "error")),
                               "topic"));
        json_decref(j);
        json_decref(get_json(fx->port, "/api/v1/ids/m-1?topic=nope", 400));
        json_decref(get_json(fx->port, "/api/v1/ids/?topic=" T_PLAIN, 400));
        json_decref(get_json(fx->port, "/api/v1/ids/m-1?topic=" T_PLAIN
                                       "&limit=3",
                             400));
        /* 255 bytes may be asked about (unknown here), 256 may not. */
        for (n = 255; n <= 256; n++) {
                i = snprintf(target, sizeof(target), "/api/v1/ids/");
                memset(target + i, 'x', n);
                snprintf(target + i + n, sizeof(target) - (size_t)i - n,
                         "?topic=%s", T_PLAIN);
                j = get_json(fx->port, target, n == 255 ? 404 : 400);
                if (n == 256)
                        assert_non_null(strstr(
                                json_string_value(json_object_get(j, "error")),
                                "1 to 255 bytes"));
                json_decref(j);
        }
}

static void test_anomalies(void **state)
{
        struct fx *fx = *state;
        json_t *all = json_array(), *j, *o;
        json_int_t prev = INT64_MAX;
        size_t i, pages;

        /* Every anomaly, two a page, newest first, each id once. */
        pages = walk_pages(fx->port, "/api/v1/anomalies?limit=2&",
                           "anomalies", all);
        assert_int_equal(json_array_size(all), fx->anomalies);
        assert_int_equal(pages, (fx->anomalies + 1) / 2);
        json_array_foreach(all, i, o)
        {
                assert_true(jint(o, "id") < prev);
                prev = jint(o, "id");
                assert_non_null(json_object_get(o, "offset_lo"));
                assert_non_null(json_object_get(o, "kind"));
                /* The command that fetches the records, as scan prints
                 * it; none for a coverage gap. */
                if (strcmp(json_string_value(json_object_get(o, "kind")),
                           "coverage"))
                        assert_non_null(strstr(
                                json_string_value(json_object_get(o, "kcat")),
                                "kcat -C -b BROKER -t "));
                assert_non_null(json_object_get(o, "kcat_first"));
        }
        /* Hostile names come back exactly (invalid UTF-8 lossily, with the
         * bytes in hex). */
        assert_non_null(find_producer(all, PQ));
        o = find_producer(all, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd bin\x01"
                               "\xef\xbf\xbd(");
        assert_non_null(o);
        assert_string_equal(
                json_string_value(json_object_get(o, "producer_hex")),
                PBIN_HEX);
        assert_string_equal(json_string_value(json_object_get(o, "topic")),
                            T_ODD);
        json_decref(all);

        /* Filters. */
        j = get_json(fx->port, "/api/v1/anomalies?kind=duplicate", 200);
        assert_int_equal(json_array_size(json_object_get(j, "anomalies")), 4);
        json_array_foreach(json_object_get(j, "anomalies"), i, o)
                assert_string_equal(
                        json_string_value(json_object_get(o, "kind")),
                        "duplicate");
        assert_true(json_is_null(json_object_get(j, "next_cursor")));
        json_decref(j);
        j = get_json(fx->port,
                     "/api/v1/anomalies?topic=" T_ODD_Q "&producer=" PBIN_Q,
                     200);
        assert_int_equal(json_array_size(json_object_get(j, "anomalies")), 1);
        json_decref(j);
        j = get_json(fx->port, "/api/v1/anomalies?since=99999999999999", 200);
        assert_int_equal(json_array_size(json_object_get(j, "anomalies")), 0);
        json_decref(j);
        j = get_json(fx->port, "/api/v1/anomalies?since=0&kind=coverage",
                     200);
        assert_int_equal(json_array_size(json_object_get(j, "anomalies")), 0);
        json_decref(j);
}

static void test_producers_and_partitions(void **state)
{
        struct fx *fx = *state;
        json_t *all = json_array(), *j, *o;
        size_t i;

        walk_pages(fx->port, "/api/v1/producers?limit=1&", "producers", all);
        assert_int_equal(json_array_size(all), fx->pairs);
        o = find_producer(all, PQ);
        assert_non_null(o);
        assert_int_equal(jint(o, "epoch"), 1);
        o = json_array_get(all, 0); /* orders/0 p1: the open gap */
        assert_string_equal(json_string_value(json_object_get(o, "producer")),
                            P1);
        assert_int_equal(jint(o, "open_gaps"), 1);
        assert_int_equal(jint(o, "last_seq"), 9);
        json_decref(all);
        j = get_json(fx->port, "/api/v1/producers?topic=" T_ODD_Q, 200);
        assert_int_equal(json_array_size(json_object_get(j, "producers")), 3);
        o = find_producer(json_object_get(j, "producers"),
                          "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd bin\x01"
                          "\xef\xbf\xbd(");
        assert_non_null(o);
        assert_string_equal(
                json_string_value(json_object_get(o, "producer_hex")),
                PBIN_HEX);
        json_decref(j);

        j = get_json(fx->port, "/api/v1/partitions", 200);
        assert_int_equal(json_array_size(json_object_get(j, "partitions")),
                         NPARTS);
        json_array_foreach(json_object_get(j, "partitions"), i, o)
        {
                assert_int_equal(jint(o, "lag"),
                                 HIGH_WATERMARK - jint(o, "next_offset"));
                assert_int_equal(jint(o, "high_watermark"), HIGH_WATERMARK);
        }
        o = json_array_get(json_object_get(j, "partitions"), 2);
        assert_string_equal(json_string_value(json_object_get(o, "topic")),
                            T_ODD);
        assert_int_equal(jint(json_object_get(o, "anomalies"), "duplicate"),
                         2);
        assert_int_equal(jint(o, "ids_checked"), 0);
        /* Ids checked and redelivered records per partition of orders. */
        o = json_array_get(json_object_get(j, "partitions"), 0);
        assert_int_equal(jint(o, "partition"), 0);
        assert_int_equal(jint(o, "ids_checked"), 3);
        assert_int_equal(jint(json_object_get(o, "anomalies"), "redelivered"),
                         1);
        o = json_array_get(json_object_get(j, "partitions"), 1);
        assert_int_equal(jint(o, "partition"), 1);
        assert_int_equal(jint(o, "ids_checked"), 1);
        assert_int_equal(jint(json_object_get(o, "anomalies"), "redelivered"),
                         1);
        json_decref(j);
}

/* One line of the exposition, exactly. */
static void assert_line(const char *text, const char *line)
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

/* /api/v1/history: the fixture's commits, summed per minute, add up to
 * the ledger's counters; a topic keeps to its own; bad windows are 400. */
static void test_history(void **state)
{
        struct fx *fx = *state;
        json_t *j, *p;
        int64_t records = 0, anomalous = 0, gaps = 0, missing = 0, prev = -1;
        uint64_t want_anomalous = 0;
        size_t i;
        int k, t;

        j = get_json(fx->port, "/api/v1/history", 200);
        assert_int_equal(jint(j, "minutes"), HTTP_HISTORY_MINUTES_DEFAULT);
        assert_int_equal(jint(j, "minute_ms"), 60000);
        assert_int_equal(jint(j, "retention_minutes"), 7 * 24 * 60);
        assert_int_equal(jint(j, "to_ms") - jint(j, "from_ms"),
                         HTTP_HISTORY_MINUTES_DEFAULT * 60000);
        assert_true(json_array_size(json_object_get(j, "points")) >= 1);
        json_array_foreach(json_object_get(j, "points"), i, p)
        {
                assert_true(jint(p, "minute_ms") > prev); /* oldest first */
                assert_true(jint(p, "minute_ms") >= jint(j, "from_ms"));
                assert_true(jint(p, "minute_ms") < jint(j, "to_ms"));
                prev = jint(p, "minute_ms");
                records += jint(p, "records");
                anomalous += jint(p, "anomalous_records");
                gaps += jint(p, "gaps");
                missing += jint(p, "missing_records");
        }
        for (t = 0; t < 2; t++)
                for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                        if (k != DEDUP_KIND_GAP)
                                want_anomalous += fx->sum[t].anomalies[k];
        assert_int_equal(records, fx->sum[0].records + fx->sum[1].records);
        assert_int_equal(anomalous, want_anomalous);
        assert_int_equal(gaps, fx->sum[0].anomalies[DEDUP_KIND_GAP] +
                                       fx->sum[1].anomalies[DEDUP_KIND_GAP]);
        assert_int_equal(missing, fx->sum[0].missing + fx->sum[1].missing);
        assert_true(records > 0 && anomalous > 0);
        json_decref(j);

        j = get_json(fx->port, "/api/v1/history?minutes=10080&topic=" T_ODD_Q,
                     200);
        records = 0;
        json_array_foreach(json_object_get(j, "points"), i, p)
                records += jint(p, "records");
        assert_int_equal(records, fx->sum[1].records);
        json_decref(j);

        json_decref(get_json(fx->port, "/api/v1/history?minutes=0", 400));
        json_decref(get_json(fx->port, "/api/v1/history?minutes=10081", 400));
        json_decref(get_json(fx->port, "/api/v1/history?limit=5", 400));
        json_decref(get_json(fx->port, "/api/v1/history?topic=nope", 404));
}

static void test_metrics(void **state)
{
        static const char *const families[] = {
                "eosaudit_ready gauge",
                "eosaudit_build_info gauge", "eosaudit_records_total counter",
                "eosaudit_anomalous_records_total counter",
                "eosaudit_anomaly_events_total counter",
                "eosaudit_missing_records_total counter",
                "eosaudit_unaudited_offsets_total counter",
                "eosaudit_recovered_records_total counter",
                "eosaudit_unknown_records gauge",
                "eosaudit_untracked_records_total counter",
                "eosaudit_open_gaps gauge", "eosaudit_producers gauge",
                "eosaudit_ids_checked_total counter",
                "eosaudit_id_window_ids gauge",
                "eosaudit_consumer_lag_records gauge",
                "eosaudit_record_latency_seconds histogram",
                "eosaudit_ledger_commit_duration_seconds histogram",
        };
        /* Redelivered records and the id windows, per topic. */
        static const char *const id_lines[] = {
                "eosaudit_anomalous_records_total{topic=\"" T_PLAIN
                "\",kind=\"redelivered\"} 2",
                "eosaudit_anomalous_records_total{topic=\"" T_ODD_LABEL
                "\",kind=\"redelivered\"} 0",
                "eosaudit_ids_checked_total{topic=\"" T_PLAIN "\"} 4",
                "eosaudit_ids_checked_total{topic=\"" T_ODD_LABEL "\"} 0",
                "eosaudit_id_window_ids{topic=\"" T_PLAIN "\"} 2",
                "eosaudit_id_window_ids{topic=\"" T_ODD_LABEL "\"} 0",
        };
        struct fx *fx = *state;
        struct resp r;
        char type[64], line[256];
        const char *p;
        size_t i;

        req(fx->port, "GET", "/metrics", NULL, &r);
        assert_int_equal(r.status, 200);
        assert_non_null(resp_header(&r, "Content-Type", type, sizeof(type)));
        assert_string_equal(type, "text/plain; version=0.0.4; charset=utf-8");
        for (i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
                snprintf(line, sizeof(line), "# TYPE %s", families[i]);
                assert_line(r.body, line);
                snprintf(line, sizeof(line), "# HELP %.*s ",
                         (int)(strchr(families[i], ' ') - families[i]),
                         families[i]);
                assert_non_null(strstr(r.body, line));
        }
        /* Prometheus's own up{} says whether the process answers. */
        assert_null(strstr(r.body, "eosaudit_up"));
        assert_line(r.body, "eosaudit_ready 1");
        assert_non_null(strstr(r.body, "eosaudit_build_info{version="
                                       "\"9.9.9-test\",librdkafka_version=\""));
        snprintf(line, sizeof(line), "eosaudit_records_total{topic=\"%s\"} "
                                     "%llu",
                 T_PLAIN, (unsigned long long)fx->sum[0].records);
        assert_line(r.body, line);
        /* The odd topic, escaped. */
        snprintf(line, sizeof(line),
                 "eosaudit_records_total{topic=\"" T_ODD_LABEL "\"} %llu",
                 (unsigned long long)fx->sum[1].records);
        assert_line(r.body, line);
        assert_line(r.body, "eosaudit_anomalous_records_total{topic=\""
                            T_ODD_LABEL "\",kind=\"duplicate\"} 2");
        /* One unit a family: gaps and coverage gaps are events, not
         * records; the old mixed family and malformed's copy are gone. */
        snprintf(line, sizeof(line),
                 "eosaudit_anomaly_events_total{topic=\"%s\",kind=\"gap\"} "
                 "%llu",
                 T_PLAIN,
                 (unsigned long long)fx->sum[0].anomalies[DEDUP_KIND_GAP]);
        assert_line(r.body, line);
        assert_line(r.body, "eosaudit_anomaly_events_total{topic=\"" T_PLAIN
                            "\",kind=\"coverage\"} 0");
        assert_null(strstr(r.body, "eosaudit_anomalous_records_total{topic=\""
                                   T_PLAIN "\",kind=\"gap\"}"));
        assert_null(strstr(r.body, "eosaudit_anomalies_total"));
        assert_null(strstr(r.body, "eosaudit_malformed_records_total"));
        for (i = 0; i < sizeof(id_lines) / sizeof(id_lines[0]); i++)
                assert_line(r.body, id_lines[i]);
        assert_line(r.body, "eosaudit_open_gaps{topic=\"" T_PLAIN "\"} 1");
        assert_line(r.body, "eosaudit_consumer_lag_records{topic=\"" T_PLAIN
                            "\",partition=\"1\"} 96");
        assert_line(r.body, "eosaudit_record_latency_seconds_bucket{topic=\""
                            T_ODD_LABEL "\",le=\"5\"} 0");
        assert_line(r.body, "eosaudit_record_latency_seconds_bucket{topic=\""
                            T_ODD_LABEL "\",le=\"10\"} 1");
        assert_line(r.body, "eosaudit_record_latency_seconds_bucket{topic=\""
                            T_ODD_LABEL "\",le=\"+Inf\"} 1");
        assert_line(r.body, "eosaudit_record_latency_seconds_count{topic=\""
                            T_ODD_LABEL "\"} 1");
        assert_line(r.body,
                    "eosaudit_ledger_commit_duration_seconds_count 1");
        /* Producer names and message ids are never labels. */
        assert_null(strstr(r.body, "producer="));
        assert_null(strstr(r.body, "it's"));
        assert_null(strstr(r.body, "msgid"));
        assert_null(strstr(r.body, ID1));
        /* Every sample line names an eosaudit_ family; no raw newline or
         * quote broke a line. */
        for (p = r.body; *p; p = strchr(p, '\n') + 1) {
                assert_true(!strncmp(p, "# HELP eosaudit_", 16) ||
                            !strncmp(p, "# TYPE eosaudit_", 16) ||
                            !strncmp(p, "eosaudit_", 9));
                assert_non_null(strchr(p, '\n'));
        }
        resp_free(&r);
}

/* The human report (scan's) of the same ledger: the redelivered count,
 * the id window, and each redelivered anomaly's evidence with its id
 * printed safely. */
static void test_report_text(void **state)
{
        struct fx *fx = *state;
        struct ledger *lg = NULL;
        char err[256], hex[2 * DEDUP_ID_EVIDENCE_MAX + 1], want[1024];
        char *text = NULL;
        size_t len = 0;
        FILE *f;

        assert_int_equal(ledger_open_reader(&lg, fx->db, err, sizeof(err)),
                         0);
        f = open_memstream(&text, &len);
        assert_non_null(f);
        if (report_summary_print(f, lg, topics, 2,
                                 &(struct report_opts){.examples = 50}, err,
                                 sizeof(err)))
                fail_msg("report_summary_print: %s", err);
        fclose(f);
        ledger_close(lg);

        assert_non_null(strstr(text, "\n  redelivered    2 records "
                                     "(4 message ids checked)\n"));
        assert_non_null(strstr(text, "\n  id window      2 ids in 1 "
                                     "generation, since "
                                     "1970-01-01T00:00:01Z\n"));
        assert_non_null(strstr(text, "\n  redelivered    0 records (no "
                                     "message id checked)\n"));
        if (!strstr(text, "\n    redelivered  " T_PLAIN " [1] producer '" PQ
                          "' epoch 0 seq 0 offset 0 is a copy of partition 0 "
                          "offset 0, id '" ID1 "', count 1\n"))
                fail_msg("no redelivered line of " T_PLAIN " [1] in:\n%s",
                         text);
        long_id_hex(hex, sizeof(hex));
        snprintf(want, sizeof(want),
                 "\n    redelivered  " T_PLAIN " [0] offset 5 is a "
                 "copy of partition 0 offset 1, id 0x%s..., count 1\n",
                 hex);
        if (!strstr(text, want))
                fail_msg("no line '%s' in:\n%s", want + 1, text);
        /* Each anomaly with the kcat commands that fetch it and, for a
         * duplicate, its first copy. */
        if (!strstr(text, "\n        fetch: kcat -C -b BROKER -t " T_PLAIN
                          " -p 0 -o 2 -c 1 -e -J\n        first: kcat -C "
                          "-b BROKER -t " T_PLAIN " -p 0 -o 1 -c 1 -e -J\n"))
                fail_msg("no kcat lines of the duplicate in:\n%s", text);
        assert_non_null(strstr(text, "\n  verdict        ANOMALIES FOUND\n"));
        free(text);
}

/* The verdicts: anomalies first, then "not audited" when nothing carried
 * the headers and no id was checked (an empty topic too), else clean;
 * several topics merge to the worst. */
static void test_report_verdict(void **state)
{
        struct ledger_summary s;

        (void)state;
        memset(&s, 0, sizeof(s));
        assert_int_equal(report_verdict(&s), REPORT_NOT_AUDITED);
        s.records = s.untracked = 500;
        assert_int_equal(report_verdict(&s), REPORT_NOT_AUDITED);
        assert_true(report_mostly_untracked(&s));
        assert_string_equal(report_verdict_name(report_verdict(&s)),
                            "not_audited");
        s.ids_checked = 500; /* --dedup-key key: ids were checked */
        assert_int_equal(report_verdict(&s), REPORT_CLEAN);
        s.ids_checked = 0;
        s.untracked = 400;
        assert_int_equal(report_verdict(&s), REPORT_CLEAN);
        assert_true(report_mostly_untracked(&s));
        s.untracked = 200;
        assert_false(report_mostly_untracked(&s));
        s.coverage_gaps = 1;
        assert_int_equal(report_verdict(&s), REPORT_ANOMALIES);
        assert_int_equal(report_anomaly_total(&s), 1);
        s.coverage_gaps = 0;
        s.records = s.untracked = 0;
        s.anomalies[DEDUP_KIND_MALFORMED] = 1;
        assert_int_equal(report_verdict(&s), REPORT_ANOMALIES);
        assert_int_equal(report_verdict_merge(REPORT_CLEAN,
                                              REPORT_NOT_AUDITED),
                         REPORT_NOT_AUDITED);
        assert_int_equal(report_verdict_merge(REPORT_ANOMALIES,
                                              REPORT_NOT_AUDITED),
                         REPORT_ANOMALIES);
        assert_string_equal(report_verdict_name(REPORT_CLEAN), "clean");
        assert_string_equal(report_verdict_name(REPORT_ANOMALIES),
                            "anomalies");
}

/* The kcat commands: the records, the first copies, quoting, and none
 * for a coverage gap (its offsets are gone). */
static void test_report_kcat(void **state)
{
        struct ledger_anomaly a;
        char cmd[REPORT_KCAT_MAX];

        (void)state;
        memset(&a, 0, sizeof(a));
        a.topic = "orders";
        a.partition = 2;
        a.kind = "duplicate";
        a.offset_lo = 10;
        a.offset_hi = 12;
        a.first_offset = 4;
        a.first_partition = -1;
        a.count = 3;
        assert_int_equal(report_kcat_format(&a, "b1:9092,b2:9092", 0, cmd,
                                            sizeof(cmd)),
                         0);
        assert_string_equal(cmd, "kcat -C -b b1:9092,b2:9092 -t orders -p 2 "
                                 "-o 10 -c 3 -e -J");
        assert_int_equal(report_kcat_format(&a, NULL, 1, cmd, sizeof(cmd)),
                         0);
        assert_string_equal(cmd, "kcat -C -b BROKER -t orders -p 2 -o 4 -c 3 "
                                 "-e -J");
        a.kind = "redelivered";
        a.first_partition = 0;
        a.first_offset_hi = 5;
        assert_int_equal(report_kcat_format(&a, "h:1", 1, cmd, sizeof(cmd)),
                         0);
        assert_string_equal(cmd, "kcat -C -b h:1 -t orders -p 0 -o 4 -c 2 "
                                 "-e -J");
        a.first_partition = -1; /* a live event: unknown */
        assert_int_equal(report_kcat_format(&a, "h:1", 1, cmd, sizeof(cmd)),
                         -1);
        assert_string_equal(cmd, "");
        assert_int_equal(report_kcat_format(&a, "it's here", 0, cmd,
                                            sizeof(cmd)),
                         0);
        assert_string_equal(cmd, "kcat -C -b 'it'\\''s here' -t orders -p 2 "
                                 "-o 10 -c 3 -e -J");
        a.kind = "coverage";
        assert_int_equal(report_kcat_format(&a, "h:1", 0, cmd, sizeof(cmd)),
                         -1);
        assert_int_equal(report_kcat_format(&a, "h:1", 0, cmd, 10), -1);
        a.kind = "gap";
        assert_int_equal(report_kcat_format(&a, "h:1", 0, cmd, 10), -1);
        assert_string_equal(cmd, "");
}

/* ------------------------------------------------------------------ */
/* Errors, methods, limits                                             */
/* ------------------------------------------------------------------ */

static void test_bad_requests(void **state)
{
        static const struct {
                const char *target;
                int status;
        } cases[] = {
                {"/api/v1/anomalies?limit=0", 400},
                {"/api/v1/anomalies?limit=1001", 400},
                {"/api/v1/anomalies?limit=abc", 400},
                {"/api/v1/anomalies?limit=-1", 400},
                {"/api/v1/anomalies?limit=1e3", 400},
                {"/api/v1/anomalies?limit=", 400},
                {"/api/v1/anomalies?limit=1&limit=2", 400},
                {"/api/v1/anomalies?since=yesterday", 400},
                {"/api/v1/anomalies?since=99999999999999999999", 400},
                {"/api/v1/anomalies?kind=expired", 400},
                {"/api/v1/anomalies?kind=Duplicate", 400},
                {"/api/v1/anomalies?kind=redelivered", 200},
                {"/api/v1/anomalies?kind=Redelivered", 400},
                {"/api/v1/anomalies?cursor=0", 400},
                {"/api/v1/anomalies?cursor=12abc", 400},
                {"/api/v1/anomalies?page=2", 400},
                {"/api/v1/anomalies?topic=%zz", 400},
                {"/api/v1/anomalies?topic=%00x", 400},
                {"/api/v1/anomalies?topic=%4", 400},
                {"/api/v1/producers?limit=10001", 400},
                {"/api/v1/producers?cursor=zz", 400},
                {"/api/v1/producers?cursor=6f.1", 400},
                {"/api/v1/producers?since=1", 400},
                {"/api/v1/partitions?limit=5", 400},
                {"/api/v1/summary?kind=gap", 400},
                {"/api/v1/nothing", 404},
                {"/nothing", 404},
                {"/api/v1/anomalies?limit=1000&kind=gap&since=0&cursor=5"
                 "&topic=&producer=",
                 200},
        };
        struct fx *fx = *state;
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                json_t *j = get_json(fx->port, cases[i].target,
                                     cases[i].status);
                if (cases[i].status != 200)
                        assert_true(json_is_string(
                                json_object_get(j, "error")));
                json_decref(j);
        }
}

static void test_methods(void **state)
{
        static const char *const methods[] = {"POST", "PUT", "DELETE",
                                              "PATCH", "OPTIONS"};
        struct fx *fx = *state;
        struct resp r, g;
        char allow[64], cl[32];
        size_t i;
        static const char post[] = "POST /api/v1/summary HTTP/1.1\r\n"
                                   "Host: 127.0.0.1\r\nContent-Length: 11"
                                   "\r\nConnection: close\r\n\r\n"
                                   "hello=world";

        for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
                req(fx->port, methods[i], "/metrics", NULL, &r);
                assert_int_equal(r.status, 405);
                assert_non_null(resp_header(&r, "Allow", allow,
                                            sizeof(allow)));
                assert_string_equal(allow, "GET, HEAD");
                resp_free(&r);
        }
        /* A body is never read. */
        request(fx->port, post, sizeof(post) - 1, &r);
        assert_int_equal(r.status, 405);
        resp_free(&r);
        req(fx->port, "GET", "/healthz", "Content-Length: 4\r\n", &r);
        assert_int_equal(r.status, 413);
        resp_free(&r);

        /* HEAD: the headers of GET, no body. */
        req(fx->port, "GET", "/api/v1/partitions", NULL, &g);
        req(fx->port, "HEAD", "/api/v1/partitions", NULL, &r);
        assert_int_equal(r.status, 200);
        assert_int_equal(r.body_len, 0);
        assert_non_null(resp_header(&r, "Content-Length", cl, sizeof(cl)));
        assert_int_equal(strtoull(cl, NULL, 10), g.body_len);
        resp_free(&r);
        resp_free(&g);
}

static void test_limits(void **state)
{
        struct fx *fx = *state;
        size_t sizes[] = {9000, 100000};
        char *big = malloc(200001);
        struct resp r;
        size_t i;

        assert_non_null(big);
        /* Long request targets: ours (414) up to the connection's memory,
         * libmicrohttpd's (414 too) past it. */
        for (i = 0; i < 2; i++) {
                memcpy(big, "/api/v1/anomalies?topic=", 24);
                memset(big + 24, 'a', sizes[i]);
                big[24 + sizes[i]] = '\0';
                req(fx->port, "GET", big, NULL, &r);
                assert_int_equal(r.status, 414);
                resp_free(&r);
        }
        /* Huge headers: 431. */
        memcpy(big, "X-Big: ", 7);
        memset(big + 7, 'b', 100000);
        memcpy(big + 100007, "\r\n", 3);
        req(fx->port, "GET", "/healthz", big, &r);
        assert_int_equal(r.status, 431);
        resp_free(&r);
        free(big);
        /* Still serving. */
        json_decref(get_json(fx->port, "/healthz", 200));
}

/* Two requests on one connection. */
static void test_keep_alive(void **state)
{
        static const char two[] = "GET /healthz HTTP/1.1\r\n"
                                  "Host: 127.0.0.1\r\n\r\n";
        struct fx *fx = *state;
        struct resp r;
        int fd = conn_open(fx->port), k;

        for (k = 0; k < 2; k++) {
                send_all(fd, two, sizeof(two) - 1);
                assert_int_equal(resp_read(fd, &r, 0), 0);
                assert_int_equal(r.status, 200);
                resp_free(&r);
        }
        close(fd);
}

static void test_auth(void **state)
{
        static const struct {
                const char *path, *header;
                int status;
        } cases[] = {
                {"/metrics", NULL, 401},
                {"/api/v1/summary", "Bearer s3cr3t-Token_4", 401},
                {"/api/v1/summary", "Bearer s3cr3t-Token_422", 401},
                {"/api/v1/summary", "Basic czNjcjN0LVRva2VuXzQy", 401},
                {"/readyz", "Bearer", 401},
                {"/api/v1/summary", "Bearer s3cr3t-Token_42", 200},
                {"/metrics", "bearer s3cr3t-Token_42", 200},
                /* Liveness and the page (it holds no data) stay open. */
                {"/healthz", NULL, 200},
                {"/", NULL, 200},
        };
        struct fx *fx = *state;
        struct http_server *hs = server_start(fx->db, fx->st, fx->token);
        struct resp r;
        char hdr[128], www[64];
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                snprintf(hdr, sizeof(hdr), "Authorization: %s\r\n",
                         cases[i].header ? cases[i].header : "");
                req(http_port(hs), "GET", cases[i].path,
                    cases[i].header ? hdr : NULL, &r);
                if (r.status != cases[i].status)
                        fail_msg("%s with '%s': %d, want %d", cases[i].path,
                                 cases[i].header ? cases[i].header : "",
                                 r.status, cases[i].status);
                if (r.status == 401) {
                        assert_non_null(resp_header(&r, "WWW-Authenticate",
                                                    www, sizeof(www)));
                        assert_string_equal(www, "Bearer realm=\"eosaudit\"");
                }
                resp_free(&r);
        }
        http_stop(hs);
}

static void test_start_errors(void **state)
{
        static const char *const bad_listen[] = {
                "127.0.0.1",     ":",            "[::1]80",
                "127.0.0.1:",    "1.2.3.4:65536", "::1:80",
                "example.com:80", "127.0.0.1:-1", "[::1:80",
                "127.0.0.1:08x", "[]:80",        "",
        };
        static const char *const good_listen[] = {
                "127.0.0.1:8080", "0.0.0.0:0", "[::1]:0", "[::]:65535",
                "localhost:1",    ":80",      ":0",
        };
        struct fx *fx = *state;
        struct sockaddr_storage ss;
        struct http_server *hs = NULL;
        struct http_conf c;
        char err[512], path[192];
        size_t len, i;
        FILE *f;

        for (i = 0; i < sizeof(bad_listen) / sizeof(bad_listen[0]); i++) {
                err[0] = '\0';
                if (!http_listen_parse(bad_listen[i], &ss, &len, err,
                                       sizeof(err)))
                        fail_msg("'%s' accepted", bad_listen[i]);
                assert_non_null(strstr(err, "invalid listen address"));
        }
        for (i = 0; i < sizeof(good_listen) / sizeof(good_listen[0]); i++)
                if (http_listen_parse(good_listen[i], &ss, &len, err,
                                      sizeof(err)))
                        fail_msg("'%s': %s", good_listen[i], err);

        http_conf_defaults(&c);
        c.db_path = fx->db;
        /* The port in use. */
        snprintf(path, sizeof(path), "127.0.0.1:%u", (unsigned)fx->port);
        c.listen = path;
        assert_int_equal(http_start(&hs, &c, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "cannot listen on 127.0.0.1:"));
        /* An empty token file. */
        c.listen = "127.0.0.1:0";
        snprintf(path, sizeof(path), "%s/empty", fx->dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("  \n", f);
        fclose(f);
        c.token_file = path;
        assert_int_equal(http_start(&hs, &c, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "no token"));
        unlink(path);
        c.token_file = "/nonexistent/token";
        assert_int_equal(http_start(&hs, &c, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "cannot read token file"));
        /* TLS needs both halves, and a key that parses. */
        c.token_file = NULL;
        c.tls_cert_file = fx->token;
        assert_int_equal(http_start(&hs, &c, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "both"));
        c.tls_key_file = fx->token;
        assert_int_equal(http_start(&hs, &c, err, sizeof(err)), -1);
        /* Still serving on the fixture's port after all that. */
        json_decref(get_json(fx->port, "/healthz", 200));
}

/* Without a ledger and a status: alive, not ready, 503 for data. */
static void test_not_ready(void **state)
{
        struct fx *fx = *state;
        char db[192];
        struct http_server *hs;
        struct resp r;
        json_t *j;

        snprintf(db, sizeof(db), "%s/none.db", fx->dir);
        hs = server_start(db, NULL, NULL);
        json_decref(get_json(http_port(hs), "/healthz", 200));
        j = get_json(http_port(hs), "/readyz", 503);
        assert_true(json_is_false(json_object_get(j, "ready")));
        assert_non_null(strstr(json_string_value(json_object_get(j, "error")),
                               "not started"));
        json_decref(j);
        j = get_json(http_port(hs), "/api/v1/summary", 503);
        assert_non_null(strstr(json_string_value(json_object_get(j, "error")),
                               "ledger not available"));
        json_decref(j);
        req(http_port(hs), "GET", "/metrics", NULL, &r);
        assert_int_equal(r.status, 200);
        /* Prometheus's own up{} says whether the process answers. */
        assert_null(strstr(r.body, "eosaudit_up"));
        assert_line(r.body, "eosaudit_ready 0");
        assert_line(r.body, "eosaudit_ledger_readable 0");
        assert_null(strstr(r.body, "eosaudit_records_total"));
        resp_free(&r);
        http_stop(hs);
}

/* Past the per-address limit, a connection is closed unanswered; the
 * server serves again once the others are gone. */
static void test_per_ip_limit(void **state)
{
        struct fx *fx = *state;
        struct http_server *hs = NULL;
        struct http_conf c;
        struct resp r;
        char err[512];
        int fds[4], fd;
        size_t i;

        http_conf_defaults(&c);
        c.listen = "127.0.0.1:0";
        c.db_path = fx->db;
        c.threads = 1;
        c.per_ip_limit = 4;
        if (http_start(&hs, &c, err, sizeof(err)))
                fail_msg("http_start: %s", err);
        for (i = 0; i < 4; i++)
                fds[i] = conn_open(http_port(hs));
        usleep(200 * 1000); /* let the server accept them */
        fd = conn_open(http_port(hs));
        send_all(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 34);
        assert_int_equal(resp_read(fd, &r, 0), -1);
        close(fd);
        for (i = 0; i < 4; i++)
                close(fds[i]);
        usleep(200 * 1000);
        json_decref(get_json(http_port(hs), "/healthz", 200));
        http_stop(hs);
}

static void test_ipv6(void **state)
{
        struct http_server *hs = NULL;
        struct http_conf c;
        struct fx *fx = *state;
        char err[512];
        int fd = socket(AF_INET6, SOCK_STREAM, 0);

        if (fd < 0)
                skip();
        close(fd);
        http_conf_defaults(&c);
        c.listen = "[::1]:0";
        c.db_path = fx->db;
        if (http_start(&hs, &c, err, sizeof(err))) {
                print_message("no IPv6 loopback here: %s\n", err);
                skip();
        }
        assert_non_null(strstr(http_url(hs), "http://[::1]:"));
        http_stop(hs);
}

/* ------------------------------------------------------------------ */
/* The page and the pure parsers                                       */
/* ------------------------------------------------------------------ */

/* The source of the page, next to this file's directory. */
static char *page_source(size_t *len)
{
        char path[512];
        const char *slash = strrchr(__FILE__, '/');
        FILE *f;
        char *buf;
        long n;

        snprintf(path, sizeof(path), "%.*s../http/index.html",
                 slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__);
        f = fopen(path, "rb");
        if (!f)
                fail_msg("cannot open %s", path);
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        n = ftell(f);
        assert_true(n > 0);
        rewind(f);
        buf = malloc((size_t)n);
        assert_non_null(buf);
        assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
        fclose(f);
        *len = (size_t)n;
        return buf;
}

static void test_page(void **state)
{
        struct fx *fx = *state;
        struct resp r;
        char type[64], csp[512], want[128];
        size_t len;
        int k;
        char *src = page_source(&len);

        req(fx->port, "GET", "/", NULL, &r);
        assert_int_equal(r.status, 200);
        assert_non_null(resp_header(&r, "Content-Type", type, sizeof(type)));
        assert_string_equal(type, "text/html; charset=utf-8");
        assert_non_null(resp_header(&r, "Content-Security-Policy", csp,
                                    sizeof(csp)));
        assert_non_null(strstr(csp, "connect-src 'self'"));
        /* The page served is http/index.html, byte for byte (the build
         * embeds it: see http/embed.sh). */
        assert_int_equal(r.body_len, len);
        assert_memory_equal(r.body, src, len);
        free(src);
        /* What the browser test reads. */
        assert_non_null(strstr(r.body, "id=\"chart\""));
        assert_non_null(strstr(r.body, "id=\"anomalies-table\""));
        assert_non_null(strstr(r.body, "data-field=\"records_total\""));
        /* Every kind has its count and its filter choice. */
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++) {
                const char *name = dedup_kind_name((enum dedup_kind)k);
                snprintf(want, sizeof(want), "data-field=\"anomalies.%s\"",
                         name);
                if (!strstr(r.body, want))
                        fail_msg("the page has no %s", want);
                snprintf(want, sizeof(want), "<option value=\"%s\">", name);
                if (!strstr(r.body, want))
                        fail_msg("the page has no %s", want);
        }
        assert_non_null(strstr(r.body, "data-field=\"ids_checked\""));
        assert_non_null(strstr(r.body, "data-field=\"window.ids\""));
        resp_free(&r);
}

static void test_query_parse(void **state)
{
        static const char a[] = "topic=a%2Bb+c&&kind=gap&producer=%ff%01x&"
                                "since=12&limit=1000&cursor=7&";
        struct http_query q;
        char err[256], cur[1200];
        size_t n;

        (void)state;
        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES, "", 0, err,
                                          sizeof(err)),
                         0);
        assert_null(q.topic);
        assert_int_equal(q.limit, HTTP_ANOMALIES_LIMIT_DEFAULT);
        assert_int_equal(q.since_ms, -1);
        assert_int_equal(q.cursor, -1);
        http_query_release(&q);

        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES, a,
                                          sizeof(a) - 1, err, sizeof(err)),
                         0);
        assert_string_equal(q.topic, "a+b c");
        assert_string_equal(q.kind, "gap");
        assert_int_equal(q.producer_len, 3);
        assert_memory_equal(q.producer, "\xff\x01x", 3);
        assert_int_equal(q.since_ms, 12);
        assert_int_equal(q.limit, 1000);
        assert_int_equal(q.cursor, 7);
        http_query_release(&q);

        /* Empty strings mean "any". */
        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES,
                                          "topic=&kind=&producer", 21, err,
                                          sizeof(err)),
                         0);
        assert_null(q.topic);
        assert_null(q.kind);
        assert_null(q.producer);
        http_query_release(&q);

        /* The producers cursor round-trips any bytes. */
        n = http_cursor_format(cur, sizeof(cur), T_ODD, 12345, PBIN,
                               sizeof(PBIN) - 1);
        assert_true(n > 0);
        memmove(cur + 7, cur, n + 1);
        memcpy(cur, "cursor=", 7);
        assert_int_equal(http_query_parse(&q, HTTP_EP_PRODUCERS, cur, n + 7,
                                          err, sizeof(err)),
                         0);
        assert_string_equal(q.after.topic, T_ODD);
        assert_int_equal(q.after.partition, 12345);
        assert_int_equal(q.after.producer_len, sizeof(PBIN) - 1);
        assert_memory_equal(q.after.producer, PBIN, sizeof(PBIN) - 1);
        assert_int_equal(q.limit, HTTP_PRODUCERS_LIMIT_DEFAULT);
        http_query_release(&q);
        assert_int_equal(http_cursor_format(cur, 8, T_ODD, 1, PBIN, 3), 0);

        /* Errors say which parameter. */
        assert_int_equal(http_query_parse(&q, HTTP_EP_PARTITIONS, "kind=gap",
                                          8, err, sizeof(err)),
                         -1);
        assert_string_equal(err, "unknown parameter 'kind'");
        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES, "limit=0",
                                          7, err, sizeof(err)),
                         -1);
        assert_string_equal(err, "limit must be a number from 1 to 1000");
        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES, "since=-1",
                                          8, err, sizeof(err)),
                         -1);
        assert_string_equal(err, "since must be milliseconds since the "
                                 "epoch (a number from 0 to "
                                 "9223372036854775807)");
        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES, "cursor=0",
                                          8, err, sizeof(err)),
                         -1);
        assert_string_equal(err, "cursor must be an anomaly id (a number "
                                 "from 1 to 9223372036854775807)");
        /* The kinds a filter takes, every one of them. */
        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES, "kind=dup",
                                          8, err, sizeof(err)),
                         -1);
        assert_string_equal(err, "unknown kind 'dup' (duplicate, gap, "
                                 "out_of_order, fenced, malformed, "
                                 "redelivered, torn, aborted_read, gap_unknown or "
                                 "coverage)");
        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES,
                                          "kind=redelivered", 16, err,
                                          sizeof(err)),
                         0);
        assert_string_equal(q.kind, "redelivered");
        http_query_release(&q);
}

/* The readiness and lag that /readyz, /metrics and the summary show
 * (auditor/status.c), without a server. */
static void test_status_ready_lag(void **state)
{
        static const char *const one[] = {T_PLAIN};
        struct status_view v, got;
        const char *why[8];
        struct status *st = status_new();

        (void)state;
        assert_non_null(st);
        assert_null(status_view_get(NULL, &got));
        assert_null(status_view_get(st, &got));
        assert_null(got.parts);
        assert_int_equal(status_ready_reasons(NULL, why, 8), 1);
        assert_string_equal(why[0], "the audit has not started yet");
        assert_int_equal(status_topic_lag(NULL, NULL), -1);

        assert_int_equal(status_view_init(&v, one, 1, 3), 0);
        assert_int_equal(status_ready_reasons(&v, why, 8), 3);
        assert_string_equal(why[0], "the ledger is not open");
        assert_string_equal(why[1],
                            "no partition is assigned to the consumer");
        assert_string_equal(why[2], "no broker is up");
        assert_int_equal(status_ready_reasons(&v, why, 1), 1);
        v.ledger_open = v.assigned = v.brokers_up = 1;
        assert_int_equal(status_ready_reasons(&v, why, 8), 0);
        v.ledger_paused = 1;
        assert_int_equal(status_ready_reasons(&v, why, 8), 1);
        assert_string_equal(why[0], "ledger commits are failing: the "
                                    "audit is paused");

        /* Unknown, behind, ahead of a stale high watermark (0, not < 0). */
        assert_int_equal(status_part_lag(&v.parts[0]), -1);
        assert_int_equal(status_topic_lag(&v, NULL), -1);
        v.parts[0].topic = strdup(T_PLAIN);
        v.parts[0].next_offset = 7;
        v.parts[0].high_watermark = 10;
        v.parts[1].topic = strdup(T_ODD);
        v.parts[1].next_offset = 1;
        v.parts[1].high_watermark = 5;
        v.parts[2].topic = strdup(T_PLAIN);
        v.parts[2].next_offset = 9;
        v.parts[2].high_watermark = 8;
        assert_int_equal(status_part_lag(&v.parts[0]), 3);
        assert_int_equal(status_part_lag(&v.parts[2]), 0);
        assert_int_equal(status_topic_lag(&v, T_PLAIN), 3);
        assert_int_equal(status_topic_lag(&v, T_ODD), 4);
        assert_int_equal(status_topic_lag(&v, NULL), 7);
        assert_int_equal(status_topic_lag(&v, "other"), -1);

        assert_int_equal(status_publish(st, &v), 0);
        assert_ptr_equal(status_view_get(st, &got), &got);
        assert_int_equal(status_topic_lag(&got, NULL), 7);
        status_view_release(&got);
        status_view_release(&v);
        status_free(st);
}

#define T(f) cmocka_unit_test(f)

int main(void)
{
        const struct CMUnitTest tests[] = {
                T(test_query_parse),
                T(test_status_ready_lag),
                T(test_healthz_readyz),
                T(test_summary),
                T(test_anomalies),
                T(test_anomalies_redelivered),
                T(test_ids),
                T(test_producers_and_partitions),
                T(test_metrics),
                T(test_history),
                T(test_report_text),
                T(test_report_verdict),
                T(test_report_kcat),
                T(test_bad_requests),
                T(test_methods),
                T(test_limits),
                T(test_keep_alive),
                T(test_auth),
                T(test_start_errors),
                T(test_not_ready),
                T(test_per_ip_limit),
                T(test_ipv6),
                T(test_page),
        };

        /* libmicrohttpd's words on refused requests are expected here. */
        log_set_level(LOG_ERROR);
        return cmocka_run_group_tests(tests, fx_setup, fx_teardown);
}
