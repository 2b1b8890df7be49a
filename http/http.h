/*
 * http.h - the HTTP side of eosaudit: Prometheus /metrics, the JSON API
 * under /api/v1/, /healthz, /readyz and the dashboard page at /.
 *
 * Invariants
 *  - Handlers never touch the consumer's live state.  Live figures (lag,
 *    latency, readiness) come from status_view_get(), a private copy, and
 *    the auditor's status module says what they mean (status_ready_reasons,
 *    status_part_lag); counters
 *    and evidence come from the ledger through read-only connections that
 *    the server opens itself (ledger_open_reader, at most one per worker
 *    thread, reopened after an error) and uses for short read
 *    transactions.  Counters therefore survive a restart.
 *  - Only GET and HEAD are served (405 otherwise); request bodies are never
 *    read.  Every JSON body is built with jansson.
 *  - A request's line and headers must arrive within header_timeout_s
 *    (shorter when the server is nearly full), or a watchdog thread shuts
 *    the connection down: clients that send slowly cannot hold every
 *    connection.
 *  - With a token, every path but /healthz and the static page at / needs
 *    "Authorization: Bearer <token>" (compared in constant time).  The page
 *    holds no data: it asks for the token and sends it with its requests.
 *  - Threads: http_start() and http_stop() are called by one thread (main);
 *    requests are answered on libmicrohttpd's worker threads.  The pure
 *    parsers below (http_listen_parse, http_query_parse, ...) keep no state
 *    and may be called from any thread.
 *  - The page at / is http/index.html, embedded by the build
 *    (http/embed.sh into $(BUILD)/gen/index_html.c); it is not read from
 *    disk at run time.
 *  - Which handler answers which path is the route table in http/routes.c
 *    (see http/internal.h for the files of this module).
 */
#ifndef EOSAUDIT_HTTP_H
#define EOSAUDIT_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "../auditor/ledger/ledger.h"
#include "../auditor/audit/status.h"

#define HTTP_LISTEN_DEFAULT "127.0.0.1:8080"

/*
 * Everything borrowed here must outlive the server; files are read by
 * http_start() and not kept open.
 */
struct http_conf {
        const char *listen;  /* "ADDR:PORT" or "[V6ADDR]:PORT"; port 0
                                   picks a free one (see http_port()) */
        const char *db_path; /* the ledger; opened read-only on demand, so
                                   it may not exist yet when the server
                                   starts (the API answers 503 until it
                                   does) */
        const char *const *topics; /* the audited topics: summary, metrics */
        size_t topic_cnt;
        size_t flow_sinks;         /* topics[0..flow_sinks) are the sinks of a
                                   flow (--source), judged by lineage in
                                   the summary's verdicts; 0: no flow */
        struct status *status;     /* live figures; NULL: none (not ready) */
        const char *group;         /* serve --group's group; NULL: off
                                   (/api/v1/group answers 404) */
        const char *token_file;    /* NULL: no authentication */
        const char *tls_cert_file; /* PEM; both or neither */
        const char *tls_key_file;
        const char *version;       /* for eosaudit_build_info */
        const char *brokers;       /* for the anomalies' kcat commands; NULL:
                                   "BROKER" */
        unsigned threads;          /* worker threads (1..16) */
        unsigned conn_limit;       /* connections at once */
        unsigned per_ip_limit;     /* connections at once from one address */
        unsigned timeout_s;        /* idle connection timeout */
        unsigned header_timeout_s; /* a request's line and headers must
                                   arrive within this many seconds of the
                                   connection opening or of the previous
                                   response, however slowly they trickle
                                   in; a fifth of it (at least 1 s) once
                                   3/4 of conn_limit are open.  0: no
                                   limit (slow clients can then hold every
                                   connection) */
        size_t conn_memory;        /* per connection, bounds request line and
                                   headers (bytes) */
};

/* Defaults: 127.0.0.1:8080, 2 threads, 64 connections, 16 per address,
 * 30 s timeout, 10 s for a request's headers, 32 KiB per connection. */
void http_conf_defaults(struct http_conf *c);

struct http_server;

/*
 * Reads the token and TLS files, binds conf->listen and starts the worker
 * threads.  Returns 0 and *out, or -1 with errstr ("cannot listen on
 * 127.0.0.1:8080: Address already in use", "token file x: empty", ...).
 * The server copies nothing from conf but the files' contents: the rest is
 * borrowed.
 */
int http_start(struct http_server **out, const struct http_conf *conf,
               char *errstr, size_t errstr_size);

/* The bound port (the chosen one when conf->listen asked for port 0). */
uint16_t http_port(const struct http_server *s);

/* "http://127.0.0.1:8080/" (https with TLS): where a person points a
 * browser.  Valid until http_stop(). */
const char *http_url(const struct http_server *s);

/* Stops accepting, finishes the requests in flight, joins the threads and
 * closes the ledger readers.  NULL is a no-op. */
void http_stop(struct http_server *s);

/* ------------------------------------------------------------------ */
/* Pure parsers, exposed for tests and fuzzing                         */
/* ------------------------------------------------------------------ */

/* "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:0": numeric addresses only, no
 * name lookup.  Fills *addr (a struct sockaddr_in or sockaddr_in6) and
 * *addr_len.  Returns 0, or -1 with errstr. */
int http_listen_parse(const char *s, struct sockaddr_storage *addr,
                      size_t *addr_len, char *errstr, size_t errstr_size);

/* The JSON endpoints that take a query string. */
enum http_endpoint {
        HTTP_EP_SUMMARY,    /* topic scope */
        HTTP_EP_ANOMALIES,  /* topic kind producer since limit cursor
                               scope */
        HTTP_EP_PRODUCERS,  /* topic producer limit cursor */
        HTTP_EP_PARTITIONS, /* topic */
        HTTP_EP_HISTORY,    /* topic minutes */
        HTTP_EP_FLOWS,      /* limit cursor (api_flows.c) */
        HTTP_EP_GROUP,      /* none (api_group.c) */
};

#define HTTP_ANOMALIES_LIMIT_DEFAULT 50
#define HTTP_ANOMALIES_LIMIT_MAX 1000
#define HTTP_PRODUCERS_LIMIT_DEFAULT 1000
#define HTTP_PRODUCERS_LIMIT_MAX 10000
/* /api/v1/history: minutes back from now; at most what the ledger keeps
 * (LEDGER_HISTORY_MINUTES, 7 days). */
#define HTTP_HISTORY_MINUTES_DEFAULT 60
#define HTTP_HISTORY_MINUTES_MAX (7 * 24 * 60)
#define HTTP_FLOWS_LIMIT_DEFAULT 100
#define HTTP_FLOWS_LIMIT_MAX 1000

/* ?scope= of /api/v1/summary and /api/v1/anomalies: absent (the
 * default: the group with serve --group, else this process), the whole
 * group (serve --group only: a 404 without), or this member's own
 * partitions from its ledger. */
enum http_scope { HTTP_SCOPE_DEFAULT, HTTP_SCOPE_GROUP, HTTP_SCOPE_MEMBER };

/*
 * A parsed query string.  Strings point into buf (decoded, NUL-terminated;
 * producer may hold any byte but NUL, so use producer_len).  Absent
 * parameters (or empty string parameters) are NULL / -1.
 */
struct http_query {
        char *buf; /* owned; http_query_release() frees it */
        const char *topic;
        const char *kind; /* a dedup kind name or "coverage" */
        const char *producer;
        size_t producer_len;
        int64_t since_ms; /* -1: any */
        int64_t limit;    /* the endpoint's default when absent */
        int64_t cursor;   /* anomalies: id of the last item seen; -1 */
        int64_t minutes;  /* history: the endpoint's default when
                                 absent */
        enum http_scope scope;
        /* producers: the pair after which the page starts (after.topic is
         * NULL when absent); strings point into buf */
        struct {
                const char *topic;
                int32_t partition;
                const char *producer;
                size_t producer_len;
        } after;
};

/*
 * Parses the raw query string q[0..len) (what follows '?', percent-encoded,
 * '+' for space) for endpoint ep: known names only, each at most once,
 * numbers plain decimal within range, kind a known anomaly kind, no NUL
 * byte (raw or %00) anywhere.  Returns 0
 * and fills *out (release it with http_query_release()), or -1 with errstr
 * saying which parameter is wrong (*out then needs no release).
 */
int http_query_parse(struct http_query *out, enum http_endpoint ep,
                     const char *q, size_t len, char *errstr,
                     size_t errstr_size);
void http_query_release(struct http_query *q);

/*
 * Percent-decodes a path segment in[0..len) into out (at least len + 1
 * bytes; '+' stays '+'), NUL-terminated.  Returns the decoded length, or
 * -1 for a malformed escape or a NUL byte, raw or %00.  libmicrohttpd's
 * own decoding leaves a bad escape as it is and cuts the path at a %00.
 */
long http_path_decode(const char *in, size_t len, char *out);

/*
 * The producers cursor: "<hex topic>.<partition>.<hex producer>".
 * http_cursor_format() writes it into buf (NUL-terminated) and returns its
 * length, or 0 when buf is too small.
 */
size_t http_cursor_format(char *buf, size_t size, const char *topic,
                          int32_t partition, const char *producer,
                          size_t producer_len);

/*
 * The ledger filters for a parsed query: one page plus one row, so the
 * caller can tell whether another page follows.  after (caller storage)
 * holds the producers cursor; f points into q and after, so both must
 * outlive f.
 */
void http_query_anomaly_filter(const struct http_query *q,
                               struct ledger_anomaly_filter *f);
void http_query_pair_filter(const struct http_query *q,
                            struct ledger_pair_key *after,
                            struct ledger_pair_filter *f);

#endif /* EOSAUDIT_HTTP_H */
