/*
 * server.c - libmicrohttpd wiring (see http.h): the listen socket, limits,
 * the header deadline, method and size checks, the bearer token, and the
 * request loop, which looks a request's path up in the route table
 * (routes.c) and calls the handler it names.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "../base/clock.h"
#include "../base/log.h"
#include "../auditor/report/report.h"
#include "../dedup/dedup.h"
#include "internal.h"

#define HTTP_FILE_MAX (1024 * 1024) /* certificate, key */
#define HTTP_TOKEN_MAX 4096
#define HTTP_URI_MAX 8192 /* longer request targets get 414 */
#define HTTP_BACKLOG 64
#define HTTP_WATCHDOG_MS 250 /* how often the header deadline is checked */

/* Per request: what the URI log callback saw before MHD decoded it. */
struct http_req {
        char *path;  /* raw text before '?'; NULL: out of memory */
        char *query; /* raw text after '?'; NULL: none */
        size_t query_len;
        int too_long;     /* the request target exceeds HTTP_URI_MAX */
        int headers_done; /* the handler saw the request once */
};

/*
 * One open connection, from accept to close, for the header deadline:
 * libmicrohttpd's own timeout only notices a connection that sends
 * nothing, so a client trickling a byte a second would hold its slot for
 * ever, and enough of them hold every slot ("slowloris").  Linked in
 * http_server.conns; the socket is only shut down (never closed) and only
 * under conn_lock while linked, and libmicrohttpd unlinks it (CLOSED
 * notification) before it closes the socket, so a reused descriptor is
 * never touched.
 */
struct http_conn {
        struct http_conn *prev, *next;
        int fd;
        int waiting;      /* reading a request's line and headers */
        int cut;          /* shut down by the watchdog */
        int64_t since_ms; /* when waiting began (CLOCK_MONOTONIC) */
};

struct http_server {
        struct MHD_Daemon *d;
        struct http_conf conf;
        char *token; /* NULL: no authentication */
        size_t token_len;
        char *cert, *key; /* PEM, NUL-terminated */
        uint16_t port;
        char url[INET6_ADDRSTRLEN + 32];
        atomic_int started; /* read by the logger on any thread */
        struct http_readers readers;
        /* The header deadline (see struct http_conn). */
        pthread_mutex_t conn_lock; /* conns, nconns, watchdog_stop */
        pthread_cond_t conn_cond;
        struct http_conn *conns;
        size_t nconns;
        pthread_t watchdog;
        int watchdog_started;
        int watchdog_stop;
};

void http_conf_defaults(struct http_conf *c)
{
        memset(c, 0, sizeof(*c));
        c->listen = HTTP_LISTEN_DEFAULT;
        c->threads = 2;
        c->conn_limit = 64;
        c->per_ip_limit = 16;
        c->timeout_s = 30;
        c->header_timeout_s = 10;
        c->conn_memory = 32 * 1024;
}

/* ------------------------------------------------------------------ */
/* The header deadline                                                 */
/* ------------------------------------------------------------------ */

/* libmicrohttpd's connection notifications: link on accept, unlink on
 * close.  A connection that cannot be tracked (no memory) just has no
 * deadline. */
static void http_conn_notify(void *cls, struct MHD_Connection *c,
                             void **socket_context,
                             enum MHD_ConnectionNotificationCode toe)
{
        struct http_server *s = cls;
        struct http_conn *hc = *socket_context;
        const union MHD_ConnectionInfo *ci;

        if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
                ci = MHD_get_connection_info(
                    c, MHD_CONNECTION_INFO_CONNECTION_FD);
                hc = ci ? calloc(1, sizeof(*hc)) : NULL;
                if (!hc)
                        return;
                hc->fd = ci->connect_fd;
                hc->waiting = 1;
                hc->since_ms = clock_mono_ms();
                pthread_mutex_lock(&s->conn_lock);
                hc->next = s->conns;
                if (s->conns)
                        s->conns->prev = hc;
                s->conns = hc;
                s->nconns++;
                pthread_mutex_unlock(&s->conn_lock);
                *socket_context = hc;
                return;
        }
        if (!hc)
                return;
        pthread_mutex_lock(&s->conn_lock);
        if (hc->prev)
                hc->prev->next = hc->next;
        else
                s->conns = hc->next;
        if (hc->next)
                hc->next->prev = hc->prev;
        s->nconns--;
        pthread_mutex_unlock(&s->conn_lock);
        free(hc);
        *socket_context = NULL;
}

/* The connection's request has arrived (waiting 0), or its response is
 * done and the next request may come (waiting 1). */
static void http_conn_waiting(struct http_server *s, struct MHD_Connection *c,
                              int waiting)
{
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        struct http_conn *hc = ci ? ci->socket_context : NULL;

        if (!hc)
                return;
        pthread_mutex_lock(&s->conn_lock);
        hc->waiting = waiting;
        hc->since_ms = clock_mono_ms();
        pthread_mutex_unlock(&s->conn_lock);
}

/* Shuts down the connections that have been waiting for a request longer
 * than the deadline; libmicrohttpd then sees the end of the stream and
 * closes them.  The deadline shrinks when the server is nearly full, so
 * that slow clients give way to the others quickly. */
static void *http_watchdog(void *arg)
{
        struct http_server *s = arg;
        const int64_t full_ms = (int64_t)s->conf.header_timeout_s * 1000;
        const int64_t busy_ms = full_ms / 5 > 1000 ? full_ms / 5 : 1000;
        struct http_conn *hc;
        struct timespec ts;
        int64_t now, limit;
        size_t cut;

        pthread_mutex_lock(&s->conn_lock);
        while (!s->watchdog_stop) {
                now = clock_mono_ms();
                limit = s->nconns * 4 >= (size_t)s->conf.conn_limit * 3
                            ? busy_ms
                            : full_ms;
                cut = 0;
                for (hc = s->conns; hc; hc = hc->next) {
                        if (!hc->waiting || hc->cut ||
                            now - hc->since_ms < limit)
                                continue;
                        shutdown(hc->fd, SHUT_RDWR);
                        hc->cut = 1;
                        cut++;
                }
                if (cut) {
                        pthread_mutex_unlock(&s->conn_lock);
                        log_info("http: closed %zu connection(s) that sent "
                                 "no complete request within %lld ms",
                                 cut, (long long)limit);
                        pthread_mutex_lock(&s->conn_lock);
                }
                ts = clock_mono_deadline(HTTP_WATCHDOG_MS);
                if (!s->watchdog_stop)
                        pthread_cond_timedwait(&s->conn_cond, &s->conn_lock,
                                               &ts);
        }
        pthread_mutex_unlock(&s->conn_lock);
        return NULL;
}

/* ------------------------------------------------------------------ */
/* Requests                                                            */
/* ------------------------------------------------------------------ */

/* libmicrohttpd hands the raw request target here, before it decodes it;
 * the return value becomes the request's context. */
static void *http_uri_cb(void *cls, const char *uri, struct MHD_Connection *c)
{
        struct http_req *req = calloc(1, sizeof(*req));
        const char *q;
        size_t len = strlen(uri);

        (void)cls;
        (void)c;
        if (!req)
                return NULL;
        if (len > HTTP_URI_MAX) {
                req->too_long = 1;
                return req;
        }
        q = strchr(uri, '?');
        req->path = strndup(uri, q ? (size_t)(q - uri) : len);
        if (q) {
                req->query_len = len - (size_t)(q + 1 - uri);
                req->query = strndup(q + 1, req->query_len);
                if (!req->query) {
                        free(req->path);
                        free(req);
                        return NULL;
                }
        }
        return req;
}

static void http_done_cb(void *cls, struct MHD_Connection *c, void **ctx,
                         enum MHD_RequestTerminationCode toe)
{
        struct http_req *req = *ctx;

        (void)toe;
        /* The next request on this connection has a deadline of its own. */
        http_conn_waiting(cls, c, 1);
        if (req) {
                free(req->path);
                free(req->query);
                free(req);
                *ctx = NULL;
        }
}

/* Compares in time that depends on the token's length only. */
static int http_token_ok(const struct http_server *s, const char *hdr)
{
        static const char scheme[] = "Bearer ";
        const unsigned char *got, *want = (const unsigned char *)s->token;
        volatile unsigned char diff;
        size_t glen, i;

        if (!hdr || strncasecmp(hdr, scheme, sizeof(scheme) - 1))
                return 0;
        got = (const unsigned char *)hdr + sizeof(scheme) - 1;
        glen = strlen((const char *)got);
        diff = glen != s->token_len;
        for (i = 0; i < s->token_len; i++)
                diff |= want[i] ^ (i < glen ? got[i] : 0);
        return diff == 0;
}

static int http_header_add(struct MHD_Response *rsp, const char *name,
                           const char *value)
{
        return MHD_add_response_header(rsp, name, value) == MHD_YES ? 0 : -1;
}

static enum MHD_Result http_send(struct MHD_Connection *c,
                                 struct http_reply *r)
{
        /* The page draws with inline script and style, and talks to us
         * only. */
        static const char csp[] =
            "default-src 'none'; script-src 'unsafe-inline'; "
            "style-src 'unsafe-inline'; connect-src 'self'; "
            "img-src 'self' data:; frame-ancestors 'none'; "
            "base-uri 'none'; form-action 'none'";
        struct MHD_Response *rsp;
        enum MHD_Result ret;
        int hrc;

        if (r->fixed)
                rsp = MHD_create_response_from_buffer(r->len, (void *)r->fixed,
                                                      MHD_RESPMEM_PERSISTENT);
        else
                rsp = MHD_create_response_from_buffer(r->len, r->body,
                                                      MHD_RESPMEM_MUST_FREE);
        if (!rsp)
                return MHD_NO;
        if (!r->fixed)
                r->body = NULL; /* owned by the response */
        hrc = http_header_add(rsp, MHD_HTTP_HEADER_CONTENT_TYPE, r->type);
        hrc |= http_header_add(rsp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        hrc |= http_header_add(rsp, "X-Content-Type-Options", "nosniff");
        if (r->flags & HTTP_REPLY_PAGE) {
                hrc |= http_header_add(rsp, "Content-Security-Policy", csp);
                hrc |= http_header_add(rsp, "Referrer-Policy", "no-referrer");
        }
        if (r->allow[0])
                hrc |= http_header_add(rsp, MHD_HTTP_HEADER_ALLOW, r->allow);
        if (r->flags & HTTP_REPLY_AUTH)
                hrc |= http_header_add(rsp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                       "Bearer realm=\"eosaudit\"");
        ret = hrc ? MHD_NO : MHD_queue_response(c, r->status, rsp);
        MHD_destroy_response(rsp);
        return ret;
}

/* Non-zero for a method that no route takes. */
static int http_method_refused(const char *method)
{
        return !(http_method_bit(method) & http_routes_methods());
}

/* The route table's answer to a request that passed the checks common to
 * every path. */
static void http_dispatch(struct http_server *s, struct MHD_Connection *c,
                          const char *url, const char *method,
                          const struct http_req *req, struct http_reply *r)
{
        struct http_request rq = {
            .conf = &s->conf,
            .readers = &s->readers,
            .path = url,
            .raw_path = req->path ? req->path : "",
            .query = req->query ? req->query : "",
            .query_len = req->query_len,
        };
        const struct http_route *rt = http_route_find(url, &rq.rest);

        /* Unknown paths need the token too: without it, nobody learns
         * which paths exist. */
        if (!(rt && (rt->flags & HTTP_ROUTE_PUBLIC)) && s->token &&
            !http_token_ok(s, MHD_lookup_connection_value(
                                  c, MHD_HEADER_KIND,
                                  MHD_HTTP_HEADER_AUTHORIZATION))) {
                r->flags |= HTTP_REPLY_AUTH;
                http_reply_error(r, 401, "missing or wrong bearer token");
        } else if (!rt) {
                http_reply_error(r, 404, "no such path: %s", url);
        } else if (!(rt->methods & http_method_bit(method))) {
                http_methods_text(rt->methods, r->allow, sizeof(r->allow));
                http_reply_error(r, 405, "method %s not allowed", method);
        } else {
                rt->handle(&rq, r);
        }
}

static int http_has_body(struct MHD_Connection *c)
{
        const char *cl = MHD_lookup_connection_value(
            c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

        return (cl && strcmp(cl, "0")) ||
               MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                           MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

static enum MHD_Result http_handler(void *cls, struct MHD_Connection *c,
                                    const char *url, const char *method,
                                    const char *version,
                                    const char *upload_data,
                                    size_t *upload_data_size, void **ctx)
{
        static const struct http_req none = {0};
        struct http_server *s = cls;
        struct http_req *first = *ctx;
        const struct http_req *req = first ? first : &none;
        struct http_reply r = {.status = 200, .type = http_type_json};
        enum MHD_Result ret;

        (void)version;
        (void)upload_data;
        /*
         * The first call comes with the headers.  Bodies are never read:
         * libmicrohttpd 0.9.75 takes a reply only before the body, so a
         * request that is refused, or has a body, is answered now (and the
         * connection closes).  Any other waits for the second call, after
         * which the connection may stay open for the next request.
         */
        if (first && !first->headers_done) {
                first->headers_done = 1;
                http_conn_waiting(s, c, 0);
                if (!http_method_refused(method) && !http_has_body(c))
                        return MHD_YES;
        }
        *upload_data_size = 0;
        if (!first) {
                http_reply_error(&r, 500, "out of memory");
        } else if (http_method_refused(method)) {
                http_methods_text(http_routes_methods(), r.allow,
                                  sizeof(r.allow));
                http_reply_error(&r, 405, "method %s not allowed", method);
        } else if (http_has_body(c)) {
                http_reply_error(&r, 413, "request bodies are not accepted");
        } else if (req->too_long) {
                http_reply_error(&r, 414,
                                 "request target longer than %d "
                                 "bytes",
                                 HTTP_URI_MAX);
        } else {
                http_dispatch(s, c, url, method, req, &r);
        }
        ret = http_send(c, &r);
        free(r.body);
        return ret;
}

/* ------------------------------------------------------------------ */
/* Start and stop                                                      */
/* ------------------------------------------------------------------ */

int http_listen_parse(const char *s, struct sockaddr_storage *addr,
                      size_t *addr_len, char *errstr, size_t errstr_size)
{
        char host[INET6_ADDRSTRLEN];
        const char *h = s, *end, *port;
        uint64_t pnum;
        size_t hlen;
        int v6 = 0;

        if (s[0] == '[') {
                h = s + 1;
                end = strchr(h, ']');
                if (!end || end[1] != ':')
                        goto bad;
                port = end + 2;
                v6 = 1;
        } else {
                end = strchr(s, ':');
                if (!end || strchr(end + 1, ':'))
                        goto bad;
                port = end + 1;
        }
        hlen = (size_t)(end - h);
        if ((!hlen && v6) || hlen >= sizeof(host) ||
            dedup_parse_decimal(port, strlen(port), 65535, &pnum))
                goto bad;
        memcpy(host, h, hlen);
        host[hlen] = '\0';
        /* ":PORT", as Prometheus and Go servers take it: every IPv4
         * interface. */
        if (!hlen)
                snprintf(host, sizeof(host), "0.0.0.0");
        memset(addr, 0, sizeof(*addr));
        if (v6) {
                struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)addr;
                a6->sin6_family = AF_INET6;
                a6->sin6_port = htons((uint16_t)pnum);
                if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
                        goto bad;
                *addr_len = sizeof(*a6);
        } else {
                struct sockaddr_in *a4 = (struct sockaddr_in *)addr;
                a4->sin_family = AF_INET;
                a4->sin_port = htons((uint16_t)pnum);
                if (!strcmp(host, "localhost"))
                        snprintf(host, sizeof(host), "127.0.0.1");
                if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
                        goto bad;
                *addr_len = sizeof(*a4);
        }
        return 0;
bad:
        snprintf(errstr, errstr_size,
                 "invalid listen address '%s' (expected ADDR:PORT with a "
                 "numeric address or localhost, e.g. 127.0.0.1:8080 or "
                 "[::1]:8080, or :PORT for every interface)",
                 s);
        return -1;
}

/* The whole of a small file, NUL-terminated. */
static char *http_file_read(const char *what, const char *path, size_t max,
                            size_t *len, char *errstr, size_t errstr_size)
{
        struct stat st;
        char *buf = NULL;
        size_t n = 0;
        ssize_t got;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0 || fstat(fd, &st)) {
                snprintf(errstr, errstr_size, "cannot read %s '%s': %s", what,
                         path, strerror(errno));
                goto fail;
        }
        if (!S_ISREG(st.st_mode) || st.st_size < 0 ||
            (uintmax_t)st.st_size > max) {
                snprintf(errstr, errstr_size,
                         "%s '%s': not a regular file of at most %zu bytes",
                         what, path, max);
                goto fail;
        }
        buf = malloc((size_t)st.st_size + 1);
        if (!buf) {
                snprintf(errstr, errstr_size, "cannot read %s '%s': %s", what,
                         path, strerror(ENOMEM));
                goto fail;
        }
        while (n < (size_t)st.st_size &&
               (got = read(fd, buf + n, (size_t)st.st_size - n)) != 0) {
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0) {
                        snprintf(errstr, errstr_size,
                                 "cannot read %s '%s': %s", what, path,
                                 strerror(errno));
                        goto fail;
                }
                n += (size_t)got;
        }
        buf[n] = '\0';
        close(fd);
        *len = n;
        return buf;
fail:
        if (fd >= 0)
                close(fd);
        free(buf);
        return NULL;
}

/* The token: the file's first line without surrounding blanks, visible
 * ASCII only (RFC 6750 allows no more). */
static int http_token_load(struct http_server *s, const char *path,
                           char *errstr, size_t errstr_size)
{
        size_t len, i, start = 0;
        char *t = http_file_read("token file", path, HTTP_TOKEN_MAX, &len,
                                 errstr, errstr_size);

        if (!t)
                return -1;
        while (start < len && (t[start] == ' ' || t[start] == '\t'))
                start++;
        for (i = start; i < len && t[i] != '\n' && t[i] != '\r'; i++)
                ;
        while (i > start && (t[i - 1] == ' ' || t[i - 1] == '\t'))
                i--;
        len = i - start;
        memmove(t, t + start, len);
        t[len] = '\0';
        for (i = 0; i < len; i++) {
                if (t[i] < 0x21 || t[i] > 0x7e) {
                        snprintf(errstr, errstr_size,
                                 "token file '%s': the token may hold only "
                                 "visible ASCII characters",
                                 path);
                        free(t);
                        return -1;
                }
        }
        if (!len) {
                snprintf(errstr, errstr_size, "token file '%s': no token",
                         path);
                free(t);
                return -1;
        }
        s->token = t;
        s->token_len = len;
        return 0;
}

static int http_listen_socket(const struct sockaddr_storage *addr,
                              size_t addr_len, const char *listen_s,
                              uint16_t *port, char *errstr, size_t errstr_size)
{
        struct sockaddr_storage bound;
        socklen_t blen = sizeof(bound);
        int fd, on = 1;

        fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ||
            (addr->ss_family == AF_INET6 &&
             setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on))) ||
            bind(fd, (const struct sockaddr *)addr, (socklen_t)addr_len) ||
            listen(fd, HTTP_BACKLOG) ||
            getsockname(fd, (struct sockaddr *)&bound, &blen) ||
            fcntl(fd, F_SETFL, O_NONBLOCK)) {
                snprintf(errstr, errstr_size, "cannot listen on %s: %s",
                         listen_s, strerror(errno));
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        *port = ntohs(bound.ss_family == AF_INET6
                          ? ((struct sockaddr_in6 *)&bound)->sin6_port
                          : ((struct sockaddr_in *)&bound)->sin_port);
        return fd;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 0)))
#endif
static void
http_mhd_log(void *cls, const char *fmt, va_list ap)
{
        struct http_server *s = cls;
        char msg[512];
        size_t n;

        vsnprintf(msg, sizeof(msg), fmt, ap);
        n = strlen(msg);
        while (n && msg[n - 1] == '\n')
                msg[--n] = '\0';
        /* Why the start failed matters; once running, what the library
         * says is about single connections (refused, too big, reset). */
        if (atomic_load(&s->started))
                log_info("http: %s", msg);
        else
                log_warn("http: %s", msg);
}

static void http_url_set(struct http_server *s,
                         const struct sockaddr_storage *addr)
{
        char host[INET6_ADDRSTRLEN] = "127.0.0.1";
        const char *scheme = s->cert ? "https" : "http";
        int v6 = addr->ss_family == AF_INET6;

        if (v6)
                inet_ntop(AF_INET6,
                          &((const struct sockaddr_in6 *)addr)->sin6_addr,
                          host, sizeof(host));
        else
                inet_ntop(AF_INET,
                          &((const struct sockaddr_in *)addr)->sin_addr, host,
                          sizeof(host));
        /* A wildcard is no place to point a browser at. */
        if (!strcmp(host, "0.0.0.0"))
                snprintf(host, sizeof(host), "127.0.0.1");
        else if (!strcmp(host, "::"))
                snprintf(host, sizeof(host), "::1");
        v6 = strchr(host, ':') != NULL;
        snprintf(s->url, sizeof(s->url), "%s://%s%s%s:%u/", scheme,
                 v6 ? "[" : "", host, v6 ? "]" : "", (unsigned)s->port);
}

int http_start(struct http_server **out, const struct http_conf *conf,
               char *errstr, size_t errstr_size)
{
        struct http_server *s = calloc(1, sizeof(*s));
        struct sockaddr_storage addr;
        struct MHD_OptionItem ops[16];
        unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
        size_t addr_len, len, n = 1;
        int fd = -1;

        if (!s) {
                snprintf(errstr, errstr_size,
                         "cannot start the HTTP server: "
                         "%s",
                         strerror(ENOMEM));
                return -1;
        }
        /* The logger first, or libmicrohttpd logs on stderr meanwhile. */
        ops[0] = (struct MHD_OptionItem){MHD_OPTION_EXTERNAL_LOGGER,
                                         (intptr_t)http_mhd_log, s};
        s->conf = *conf;
        if (!s->conf.listen)
                s->conf.listen = HTTP_LISTEN_DEFAULT;
        http_readers_init(&s->readers, s->conf.db_path,
                          (size_t)conf->threads + 2);
        pthread_mutex_init(&s->conn_lock, NULL);
        {
                /* The watchdog waits on CLOCK_MONOTONIC. */
                pthread_condattr_t ca;
                pthread_condattr_init(&ca);
                pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
                pthread_cond_init(&s->conn_cond, &ca);
                pthread_condattr_destroy(&ca);
        }
        if (!conf->db_path || !conf->threads ||
            conf->threads > HTTP_THREADS_MAX || !conf->conn_limit ||
            !conf->per_ip_limit || conf->conn_memory < 4096) {
                snprintf(errstr, errstr_size,
                         "bad HTTP configuration: a ledger, 1..%d threads "
                         "and non-zero limits are needed",
                         HTTP_THREADS_MAX);
                goto fail;
        }
        if (http_listen_parse(s->conf.listen, &addr, &addr_len, errstr,
                              errstr_size))
                goto fail;
        if (conf->token_file &&
            http_token_load(s, conf->token_file, errstr, errstr_size))
                goto fail;
        if (!conf->tls_cert_file != !conf->tls_key_file) {
                snprintf(errstr, errstr_size,
                         "TLS needs both a certificate and a key file");
                goto fail;
        }
        if (conf->tls_cert_file) {
                if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
                        snprintf(errstr, errstr_size,
                                 "this libmicrohttpd was built without TLS");
                        goto fail;
                }
                s->cert = http_file_read("TLS certificate",
                                         conf->tls_cert_file, HTTP_FILE_MAX,
                                         &len, errstr, errstr_size);
                s->key = s->cert
                             ? http_file_read("TLS key", conf->tls_key_file,
                                              HTTP_FILE_MAX, &len, errstr,
                                              errstr_size)
                             : NULL;
                if (!s->key)
                        goto fail;
                flags |= MHD_USE_TLS;
                ops[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT,
                                                   0, s->cert};
                ops[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0,
                                                   s->key};
        }
        fd = http_listen_socket(&addr, addr_len, s->conf.listen, &s->port,
                                errstr, errstr_size);
        if (fd < 0)
                goto fail;
        if (addr.ss_family == AF_INET6)
                flags |= MHD_USE_IPv6;
        ops[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, fd, NULL};
        if (conf->threads > 1)
                ops[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE,
                                                   conf->threads, NULL};
        ops[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT,
                                           conf->conn_limit, NULL};
        ops[n++] = (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                                           conf->per_ip_limit, NULL};
        ops[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT,
                                           conf->timeout_s, NULL};
        ops[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                                           (intptr_t)conf->conn_memory, NULL};
        ops[n++] = (struct MHD_OptionItem){MHD_OPTION_STRICT_FOR_CLIENT, 1,
                                           NULL};
        ops[n++] = (struct MHD_OptionItem){MHD_OPTION_URI_LOG_CALLBACK,
                                           (intptr_t)http_uri_cb, s};
        ops[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED,
                                           (intptr_t)http_done_cb, s};
        ops[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION,
                                           (intptr_t)http_conn_notify, s};
        ops[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
        /* libmicrohttpd 0.9.75 closes the socket at stop, and also when it
         * fails to start: it is the daemon's from here on. */
        fd = -1;
        s->d = MHD_start_daemon(flags, 0, NULL, NULL, http_handler, s,
                                MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
        if (!s->d) {
                snprintf(errstr, errstr_size,
                         "cannot start the HTTP server on %s (bad TLS "
                         "certificate or key?)",
                         s->conf.listen);
                goto fail;
        }
        if (conf->header_timeout_s) {
                if (pthread_create(&s->watchdog, NULL, http_watchdog, s)) {
                        snprintf(errstr, errstr_size,
                                 "cannot start the HTTP server: no thread "
                                 "for the header deadline");
                        goto fail;
                }
                s->watchdog_started = 1;
        }
        atomic_store(&s->started, 1);
        http_url_set(s, &addr);
        *out = s;
        return 0;
fail:
        if (fd >= 0)
                close(fd);
        http_stop(s);
        return -1;
}

uint16_t http_port(const struct http_server *s)
{
        return s->port;
}

const char *http_url(const struct http_server *s)
{
        return s->url;
}

void http_stop(struct http_server *s)
{
        if (!s)
                return;
        if (s->watchdog_started) {
                pthread_mutex_lock(&s->conn_lock);
                s->watchdog_stop = 1;
                pthread_cond_signal(&s->conn_cond);
                pthread_mutex_unlock(&s->conn_lock);
                pthread_join(s->watchdog, NULL);
        }
        /* Closes every connection: each CLOSED notification frees its
         * struct http_conn. */
        if (s->d)
                MHD_stop_daemon(s->d);
        http_readers_close(&s->readers);
        pthread_mutex_destroy(&s->conn_lock);
        pthread_cond_destroy(&s->conn_cond);
        free(s->token);
        free(s->cert);
        free(s->key);
        free(s);
}
