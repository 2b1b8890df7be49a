/*
 * internal.h - what the files of http/ share.  Not for use outside http/.
 *
 *   server.c       libmicrohttpd: start and stop, limits, the header
 *                  deadline, the bearer token, the request loop (which
 *                  only checks a request, looks up its route and calls it)
 *   routes.c       the route table: {methods, path or prefix, handler,
 *                  flags}, and its lookup
 *   reply.c        bounded text buffers and replies
 *   readers.c      the pool of read-only ledger connections
 *   health.c       the page at /, /healthz and /readyz
 *   query.c        query strings and cursors (pure functions)
 *   api.c          what the endpoints under /api/v1/ share
 *   api_*.c        one endpoint each
 *   metrics.c      /metrics
 *   metrics_flow.c the flow audit's families on /metrics
 *
 * Every function here runs on a worker thread of libmicrohttpd unless it
 * says otherwise; nothing here keeps state between requests except the
 * ledger readers, which are handed out one request at a time.
 */
#ifndef EOSAUDIT_HTTP_INTERNAL_H
#define EOSAUDIT_HTTP_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>

#include <jansson.h>

#include "../auditor/ledger/ledger.h"
#include "../auditor/audit/status.h"
#include "http.h"

#define HTTP_THREADS_MAX 16
/* A reader per worker thread, and two spare while a broken one closes. */
#define HTTP_READERS_MAX (HTTP_THREADS_MAX + 2)

/* ------------------------------------------------------------------ */
/* A growable text buffer with a hard maximum (curl's dynbuf): reply.c */
/* ------------------------------------------------------------------ */

struct http_buf {
        char *p;
        size_t len, cap, max;
        int failed; /* an append failed (OOM or past max): p is incomplete */
};

void http_buf_init(struct http_buf *b, size_t max);
void http_buf_release(struct http_buf *b);
/* Each returns 0, or -1 and sets b->failed (later appends are no-ops). */
int http_buf_add(struct http_buf *b, const char *p, size_t len);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int http_buf_printf(struct http_buf *b, const char *fmt, ...);

/* ------------------------------------------------------------------ */
/* Replies: reply.c                                                    */
/* ------------------------------------------------------------------ */

#define HTTP_REPLY_AUTH 0x1u /* WWW-Authenticate: Bearer (a 401) */
/* the page's Content-Security-Policy and Referrer-Policy */
#define HTTP_REPLY_PAGE 0x2u

extern const char http_type_json[]; /* "application/json" */

/* What the request loop sends: a handler fills it in. */
struct http_reply {
        unsigned status;
        const char *type;  /* Content-Type */
        char *body;        /* malloc'd, owned by the reply */
        const void *fixed; /* instead of body: static storage, not freed */
        size_t len;        /* of body or fixed */
        unsigned flags;    /* HTTP_REPLY_* */
        char allow[32];    /* the Allow header (a 405); "": none */
};

/* Status and body from j (compact JSON; the reference is stolen).  A NULL j
 * or a failed dump becomes a 500. */
void http_reply_json(struct http_reply *r, unsigned status, json_t *j);
/* {"error": "..."} */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void http_reply_error(struct http_reply *r, unsigned status,
                      const char *fmt, ...);
/* Takes b's text (or a 500 if b failed); b is left empty. */
void http_reply_text(struct http_reply *r, unsigned status, const char *type,
                     struct http_buf *b);

/* ------------------------------------------------------------------ */
/* Ledger readers: readers.c                                           */
/* ------------------------------------------------------------------ */

struct http_reader {
        struct ledger *lg; /* NULL until first use or after an error */
        int busy;
};

/* Read-only ledger connections, opened on first use and reused. */
struct http_readers {
        const char *db_path;  /* borrowed from the server's conf */
        pthread_mutex_t lock; /* r[].busy, r[].lg */
        struct http_reader r[HTTP_READERS_MAX];
        size_t n;
};

/* The main thread, in http_start() and http_stop() (after the workers
 * stopped): n is clamped to HTTP_READERS_MAX; close closes every
 * connection still open. */
void http_readers_init(struct http_readers *rs, const char *db_path, size_t n);
void http_readers_close(struct http_readers *rs);

/* A read-only ledger connection for the calling thread's request, opened
 * on first use; NULL with errstr when the ledger cannot be opened (yet)
 * or every reader is busy.  Give it back with http_reader_put(); broken
 * != 0 closes it (after a failed query), so the next request opens a
 * fresh one. */
struct ledger *http_reader_get(struct http_readers *rs, char *errstr,
                               size_t errstr_size);
void http_reader_put(struct http_readers *rs, struct ledger *lg, int broken);

/* ------------------------------------------------------------------ */
/* Routes: routes.c                                                    */
/* ------------------------------------------------------------------ */

/* A request as a handler sees it; valid for the handler's call only. */
struct http_request {
        const struct http_conf *conf; /* the server's copy */
        struct http_readers *readers;
        const char *path;     /* decoded by libmicrohttpd */
        const char *raw_path; /* as the client sent it (before '?'); "" */
        const char *rest;     /* the path past a prefix route's prefix; "" */
        const char *query;    /* raw (percent-encoded) text after '?'; "" */
        size_t query_len;
};

typedef void http_handler_fn(const struct http_request *rq,
                             struct http_reply *r);

#define HTTP_M_GET 0x1u
#define HTTP_M_HEAD 0x2u

/* The id endpoint's prefix: routes.c routes on it, api_ids.c finds the id
 * after it in the raw path. */
#define HTTP_IDS_PATH "/api/v1/ids/"

#define HTTP_ROUTE_PREFIX 0x1u /* path is a prefix of the request's */
#define HTTP_ROUTE_PUBLIC 0x2u /* answered without the bearer token */

struct http_route {
        unsigned methods; /* HTTP_M_* */
        const char *path; /* the whole path, or a prefix */
        http_handler_fn *handle;
        unsigned flags; /* HTTP_ROUTE_* */
};

/* The route for path: the first in the table whose path equals it (or,
 * for a prefix route, starts it), and *rest what follows; NULL: none. */
const struct http_route *http_route_find(const char *path, const char **rest);

/* HTTP_M_* for a method name, 0 for one no route knows. */
unsigned http_method_bit(const char *method);
/* The methods of every route together. */
unsigned http_routes_methods(void);
/* "GET, HEAD": methods as an Allow header into buf. */
void http_methods_text(unsigned methods, char *buf, size_t size);

/* ------------------------------------------------------------------ */
/* Handlers (the route table names them all)                           */
/* ------------------------------------------------------------------ */

/* The dashboard: http/index.html as bytes (and a NUL past the last),
 * which the build generates with http/embed.sh into $(BUILD)/gen/. */
extern const unsigned char http_index_html[];
extern const size_t http_index_html_len;

/* health.c */
http_handler_fn http_page_handle;
http_handler_fn http_healthz_handle;
http_handler_fn http_readyz_handle;
/* {"ready": bool, "reasons": [...], ...} from v (NULL: none yet). */
json_t *http_live_json(const struct status_view *v);

/* metrics.c */
http_handler_fn http_metrics_handle;
/* metrics_flow.c: the flow audit's families onto b (none without one). */
void http_metrics_flow(const struct http_request *rq, struct http_buf *b);
/* eosaudit_flow_processor_lag_records from the live view, when a flow
 * with --processor-group has read it (metrics_flow.c). */
void http_metrics_flow_lag(struct http_buf *b, const struct status_view *v);

/* api_*.c, and api.c for any other path under /api/v1/ */
http_handler_fn http_api_summary_handle;
http_handler_fn http_api_anomalies_handle;
http_handler_fn http_api_producers_handle;
http_handler_fn http_api_partitions_handle;
http_handler_fn http_api_history_handle;
http_handler_fn http_api_ids_handle;
http_handler_fn http_api_flows_handle;
http_handler_fn http_api_group_handle;
http_handler_fn http_api_unknown_handle;

/* api_scope.c: ?scope= of summary and anomalies (serve --group).  The
 * scope of a's request: 0 this member (its ledger), 1 the group (*snap
 * then holds a reference to the group's figures, for the caller to drop
 * with grouprep_snap_put()), -1 with a->errstr and a->fail_status (404:
 * scope=group without --group; 503: not read yet). */
struct grouprep_snap;
struct http_api;
int http_api_scope(struct http_api *a, struct grouprep_snap **snap);
/* The summary's object for the group ("scope": "group"), from s. */
json_t *http_group_summary_json(struct http_api *a,
                                const struct grouprep_snap *s,
                                const char *const *topics, size_t n);
/* A page of the group's newest anomaly events from s, newest first;
 * an event's id is its offset in the events topic. */
json_t *http_group_anomalies_json(struct http_api *a,
                                  const struct grouprep_snap *s);

/* ------------------------------------------------------------------ */
/* What the API endpoints share: api.c                                 */
/* ------------------------------------------------------------------ */

/* What an endpoint needs; the ledger reader is taken for the request. */
struct http_api {
        const struct http_request *rq;
        struct ledger *lg;
        const struct http_query *q;
        const struct status_view *v; /* NULL: nothing published */
        unsigned fail_status;        /* of a NULL result; 500 unless set */
        char errstr[512];
};

/* Builds an endpoint's body; NULL with a->errstr (empty: out of memory)
 * and a->fail_status on failure. */
typedef json_t *http_api_fn(struct http_api *a);

/* Parses the query string for ep (400), takes a ledger reader (503) and
 * the status view, calls fn and replies with what it built. */
void http_api_run(const struct http_request *rq, struct http_reply *r,
                  enum http_endpoint ep, http_api_fn *fn);

/* The audited topics an endpoint covers: all of them, or only ?topic=
 * (404 with a->errstr when it is not audited here). 0, or -1. */
int http_api_topics(struct http_api *a, const char *const **topics, size_t *n);

/* A page of a newest-first or key-ordered walk: up to limit items, and
 * whether more follow (the walk asks for limit + 1). */
struct http_page {
        json_t *items;
        int64_t limit, n;
        int more;
        int64_t last_id; /* anomalies: id of the last item kept */
        int failed;      /* a cursor did not fit */
        /* producers: the cursor of the last item kept; Kafka topic names
         * have at most 249 bytes */
        char cursor[2 * (249 + DEDUP_PRODUCER_MAX) + 16];
};

/* Non-zero (and pg->more set) once pg holds limit items. */
int http_page_full(struct http_page *pg);
/* {name: items, "limit": ..., "next_cursor": next or null}, or NULL when
 * the walk failed; takes pg's items and the reference to next. */
json_t *http_page_json(struct http_page *pg, int failed, const char *name,
                       json_t *next);

/* {"topic": ..., "partition": ...}, the start of a per-partition row. */
json_t *http_where_json(const char *topic, int32_t partition);

#endif /* EOSAUDIT_HTTP_INTERNAL_H */
