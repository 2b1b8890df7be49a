/*
 * reply.c - bounded text buffers and replies (see internal.h): what every
 * handler builds its answer with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../auditor/report/report.h"
#include "internal.h"

void http_buf_init(struct http_buf *b, size_t max)
{
        memset(b, 0, sizeof(*b));
        b->max = max;
}

void http_buf_release(struct http_buf *b)
{
        free(b->p);
        http_buf_init(b, b->max);
}

/* Room for n more bytes and a NUL. */
static int http_buf_grow(struct http_buf *b, size_t n)
{
        size_t cap;
        char *p;

        if (b->failed)
                return -1;
        if (n < b->cap - b->len)
                return 0;
        if (n >= b->max - b->len) {
                b->failed = 1;
                return -1;
        }
        cap = b->cap ? b->cap : 4096;
        while (cap - b->len <= n)
                cap = cap > b->max / 2 ? b->max : cap * 2;
        p = realloc(b->p, cap);
        if (!p) {
                b->failed = 1;
                return -1;
        }
        b->p = p;
        b->cap = cap;
        return 0;
}

int http_buf_add(struct http_buf *b, const char *p, size_t len)
{
        if (http_buf_grow(b, len))
                return -1;
        memcpy(b->p + b->len, p, len);
        b->len += len;
        b->p[b->len] = '\0';
        return 0;
}

int http_buf_printf(struct http_buf *b, const char *fmt, ...)
{
        va_list ap;
        int n;

        if (http_buf_grow(b, 128))
                return -1;
        va_start(ap, fmt);
        n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n >= b->cap - b->len) {
                if (http_buf_grow(b, (size_t)n))
                        return -1;
                va_start(ap, fmt);
                n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
                va_end(ap);
        }
        if (n < 0) {
                b->failed = 1;
                return -1;
        }
        b->len += (size_t)n;
        return 0;
}

const char http_type_json[] = "application/json";

void http_reply_json(struct http_reply *r, unsigned status, json_t *j)
{
        char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

        json_decref(j);
        free(r->body);
        r->fixed = NULL;
        r->type = http_type_json;
        if (!s) {
                static const char oom[] = "{\"error\":\"out of memory\"}";
                r->status = 500;
                r->body = strdup(oom);
                r->len = r->body ? sizeof(oom) - 1 : 0;
                return;
        }
        r->status = status;
        r->body = s;
        r->len = strlen(s);
}

void http_reply_error(struct http_reply *r, unsigned status, const char *fmt,
                      ...)
{
        char msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        /* Messages may quote what the client sent: bytes, not UTF-8. */
        http_reply_json(r, status,
                        json_pack("{s:o}", "error",
                                  report_bytes_json(msg, strlen(msg), NULL)));
}

void http_reply_text(struct http_reply *r, unsigned status, const char *type,
                     struct http_buf *b)
{
        if (b->failed || !b->p) {
                http_buf_release(b);
                http_reply_error(r, 500,
                                 "response too large or out of "
                                 "memory");
                return;
        }
        free(r->body);
        r->fixed = NULL;
        r->status = status;
        r->type = type;
        r->body = b->p;
        r->len = b->len;
        b->p = NULL;
        http_buf_release(b);
}
