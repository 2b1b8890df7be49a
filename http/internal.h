/*
 * internal.h - what the files of http/ share: the server as its handlers
 * see it, replies, a bounded text buffer.  Not for use outside http/.
 *
 * Every function here runs on a worker thread of libmicrohttpd unless it
 * says otherwise; nothing here keeps state between requests except the
 * ledger readers, which are handed out one request at a time.
 */
#ifndef EOSAUDIT_HTTP_INTERNAL_H
#define EOSAUDIT_HTTP_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include <jansson.h>

#include "../auditor/ledger.h"
#include "../auditor/status.h"
#include "http.h"

/* ------------------------------------------------------------------ */
/* A growable text buffer with a hard maximum (curl's dynbuf)           */
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
/* Replies                                                             */
/* ------------------------------------------------------------------ */

struct http_reply {
        unsigned status;
        const char *type;   /* Content-Type */
        char *body;         /* malloc'd, owned by the reply */
        size_t len;
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
/* The server, as handlers see it (server.c)                           */
/* ------------------------------------------------------------------ */

struct http_server;

const struct http_conf *http_server_conf(const struct http_server *s);

/* A read-only ledger connection for the calling thread's request, opened
 * on first use; NULL with errstr when the ledger cannot be opened (yet).
 * Give it back with http_reader_put(); broken != 0 closes it (after a
 * failed query), so the next request opens a fresh one. */
struct ledger *http_reader_get(struct http_server *s, char *errstr,
                               size_t errstr_size);
void http_reader_put(struct http_server *s, struct ledger *lg, int broken);

/* ------------------------------------------------------------------ */
/* Endpoints                                                           */
/* ------------------------------------------------------------------ */

/* api.c: path is what follows "/api/v1/"; q the raw query string. */
void http_api_handle(struct http_server *s, const char *path, const char *q,
                     size_t qlen, struct http_reply *r);
void http_readyz_handle(struct http_server *s, struct http_reply *r);

/* metrics.c: the Prometheus text exposition. */
void http_metrics_handle(struct http_server *s, struct http_reply *r);

#endif /* EOSAUDIT_HTTP_INTERNAL_H */
