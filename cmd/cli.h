/*
 * cli.h - what `scan` and `serve` share: their options (the values of
 * the option table and what is derived from them), the consumer's
 * configuration, the HTTP server, and the audit run itself.
 *
 * Invariants
 *  - A struct cli is zeroed, then cli_parse()d, then (maybe) cli_audit()ed,
 *    and always cli_free()d, whatever failed on the way.
 *  - Every function that fails has said why on stderr ("eosaudit: ...").
 */
#ifndef EOSAUDIT_CLI_H
#define EOSAUDIT_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "../auditor/audit/audit.h"
#include "../http/http.h"
#include "conf.h"

#define CLI_TOPICS_MAX 64

/* Options shared by scan and serve: the values of conf's table, and
 * what is derived from them. */
struct cli {
        struct conf conf;
        char *topics_buf;
        const char *topics[CLI_TOPICS_MAX];
        size_t ntopics;
        char *sources_buf; /* --source: the flow audit */
        const char *sources[CLI_TOPICS_MAX];
        size_t nsources;
        /* What HTTP reports: the topics, then the sources (a flow's
         * sinks first: http_conf.flow_sinks). */
        const char *http_topics[2 * CLI_TOPICS_MAX];
        const char *db;
        int json;
        int quiet;
        int progress;
        struct audit_conf ac;
        const char *listen; /* NULL: serve's default, scan none; "off" */
        struct http_conf hc;
        struct status *st;      /* with HTTP only */
        struct http_server *hs; /* NULL: no HTTP */
        struct audit *a;        /* after cli_audit() */
        /* --source-bootstrap: the source cluster's consumer settings,
         * the template audit_new() copies (ac.source_kconf); NULL: the
         * sources are on the sinks' cluster. */
        rd_kafka_conf_t *src_kconf;
        /* Called once the ledger is open, before the audit runs (scan
         * reads the previous run's totals there); NULL: none.  Returns 0,
         * or -1 after saying why. */
        int (*on_ready)(struct cli *c);
        void *opaque;    /* the command's, for on_ready */
        char error[512]; /* the last error said, for --json */
        /* bootstrap.servers as the consumer has it (-b, -F, kafka.*), for
         * the kcat commands of the evidence; set by cli_audit() */
        char brokers[512];
};

/* Says why on stderr ("eosaudit: MESSAGE") and keeps MESSAGE in
 * c->error. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void cli_error(struct cli *c, const char *fmt, ...);

/* Parses the options of scan (serve = 0) or serve (argv[0] is the
 * command's name) and applies the log level.  Returns 0, 1 after printing
 * usage() on stdout for --help, or -1 after saying why. */
int cli_parse(struct cli *c, int argc, char **argv, int serve,
              void (*usage)(FILE *));

/*
 * Audits c->db (set by the caller) until the end of the topics (scan) or
 * until *run is cleared (serve), with HTTP as cli_http_start() says and
 * on_event (may be NULL) called for every anomaly.  The audit stays in
 * c->a for the report; HTTP is stopped when it returns.  Returns 0, or -1
 * after saying why.
 */
int cli_audit(struct cli *c, int serve, volatile sig_atomic_t *run,
              audit_event_cb *on_event);

/* A temporary ledger (scan without --db, the demo): a fresh directory
 * under $TMPDIR (or /tmp) holding ledger.db.  Zero it first. */
#define CLI_TMPDIR_MAX 1024

struct cli_tmpdb {
        char dir[CLI_TMPDIR_MAX + 32];
        char path[CLI_TMPDIR_MAX + 64]; /* "": none made */
};

/* Makes the directory, under $TMPDIR (or /tmp when it is unset or empty).
 * Returns 0, or -1 with errno set (ENAMETOOLONG: $TMPDIR is longer than
 * CLI_TMPDIR_MAX bytes). */
int cli_tmpdb_make(struct cli_tmpdb *t);
/* Removes the ledger, its SQLite side files and the directory, if made. */
void cli_tmpdb_remove(struct cli_tmpdb *t);

/* Releases everything c holds (c may be partly set up). */
void cli_free(struct cli *c);

#endif /* EOSAUDIT_CLI_H */
