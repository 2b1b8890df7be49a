/*
 * main.c - argv, signals and wiring of the eosaudit subcommands.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "../http/http.h"
#include "../producer/producer.h"
#include "../auditor/audit.h"
#include "conf.h"
#include "demo.h"
#include "../base/kconf.h"
#include "../base/log.h"
#include "../auditor/report.h"

#ifndef EOSAUDIT_VERSION
#define EOSAUDIT_VERSION "0.1.0"
#endif

#define EXIT_CLEAN 0
#define EXIT_ANOMALIES 1
#define EXIT_ERROR 2
#define TOPICS_MAX 64

static volatile sig_atomic_t run = 1;

static void on_signal(int sig)
{
        (void)sig;
        run = 0;
}

static void signals_install(void)
{
        struct sigaction sa;

        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
}

/* Options shared by scan and serve: the values of conf's table, and
 * what is derived from them. */
struct cli {
        struct conf conf;
        char *topics_buf;
        const char *topics[TOPICS_MAX];
        size_t ntopics;
        const char *db;
        int json;
        int quiet;
        int progress;
        struct audit_conf ac;
        const char *listen; /* NULL: serve's default, scan none; "off" */
        struct http_conf hc;
};

static void usage_scan(FILE *f)
{
        fputs("usage: eosaudit scan -b BROKERS -t TOPIC[,TOPIC...] [options]\n"
              "       eosaudit scan --config FILE [options]\n"
              "\n"
              "Audits every partition of TOPIC from its start (or from where "
              "--db left\n"
              "off) up to the high watermark that held when the scan began, "
              "then exits.\n"
              "\n",
              f);
        conf_usage_print(f, CONF_SCAN);
        fputs("\n"
              "Settings may come from --config FILE (`eosaudit config-help` "
              "lists its keys);\n"
              "flags override it.  See `eosaudit serve --help` for the HTTP "
              "endpoints.\n"
              "\n"
              "Exit status: 0 no anomaly, 1 anomalies found (duplicate, gap,\n"
              "out_of_order, fenced, malformed, redelivered, or a coverage\n"
              "gap), 2 error.\n",
              f);
}

static void usage_serve(FILE *f)
{
        fputs("usage: eosaudit serve -b BROKERS -t TOPIC[,TOPIC...] [options]\n"
              "       eosaudit serve --config FILE [options]\n"
              "\n"
              "The long-running audit: resumes from the ledger, follows new "
              "records,\n"
              "confirms gaps after the grace period and expires idle "
              "producers.\n"
              "SIGTERM/SIGINT finish the current batch, commit it and exit "
              "0.\n"
              "\n",
              f);
        conf_usage_print(f, CONF_SERVE);
        fputs("\n"
              "Settings may come from --config FILE (`eosaudit config-help` "
              "lists its keys);\n"
              "flags override it.\n"
              "\n"
              "HTTP endpoints (GET and HEAD only):\n"
              "  /                         the dashboard (one self-contained "
              "page)\n"
              "  /metrics                  Prometheus text format: counters "
              "from the\n"
              "                            ledger (they survive restarts), "
              "lag per\n"
              "                            partition, latency and commit "
              "histograms\n"
              "  /api/v1/summary           what `scan --json` prints, plus "
              "live figures\n"
              "  /api/v1/anomalies         newest first with evidence; "
              "?topic= &kind=\n"
              "                            &producer= &since=MS &limit=N "
              "(50, max 1000)\n"
              "                            &cursor=ID (the previous page's "
              "next_cursor)\n"
              "  /api/v1/producers         per (partition, producer) state; "
              "?topic=\n"
              "                            &producer= &limit=N (1000, max "
              "10000) &cursor=\n"
              "  /api/v1/partitions        per partition counters, offsets "
              "and lag\n"
              "  /healthz                  200 while the process is up\n"
              "  /readyz                   200 when the ledger is open, "
              "partitions are\n"
              "                            assigned, a broker is up and "
              "commits succeed;\n"
              "                            503 with the reasons otherwise\n",
              f);
}

static void usage_main(FILE *f)
{
        fprintf(f,
"usage: eosaudit COMMAND [options]\n"
"\n"
"Audits Kafka topics end to end: every record's eos.producer, eos.epoch\n"
"and eos.seq headers are tracked per partition, and duplicates, gaps,\n"
"reordering and fenced (zombie) writes are reported with evidence.\n"
"\n"
"commands:\n"
"  scan      audit topics up to their current end, report, exit\n"
"  serve     audit topics continuously\n"
"  produce   the reference producer (stamps the header contract)\n"
"  demo      an embedded demo on librdkafka's mock cluster (with\n"
"            --listen, a dashboard to look at)\n"
"  config-help [--markdown|--example|--check FILE]\n"
"            the keys of the configuration file (--config FILE) of scan\n"
"            and serve, their types, ranges and defaults; --check FILE\n"
"            validates a file\n"
"  version   print the version\n"
"\n"
"`eosaudit COMMAND --help` describes each command.\n");
}

/* Parses scan/serve options (and --config); returns 0, 1 for --help, or
 * -1 after saying why. */
static int cli_parse(struct cli *c, int argc, char **argv, int serve)
{
        char errstr[1024];
        int r, n;

        r = conf_argv_parse(&c->conf, argc, argv, errstr, sizeof(errstr));
        if (r) {
                if (r < 0)
                        fprintf(stderr, "eosaudit: %s\n", errstr);
                return r;
        }
        n = conf_list_split(conf_str(&c->conf, CONF_TOPICS), &c->topics_buf,
                            c->topics, TOPICS_MAX);
        if (n < 0) {
                fprintf(stderr, "eosaudit: out of memory\n");
                return -1;
        }
        c->ntopics = (size_t)n;
        log_set_level((enum log_level)conf_int(&c->conf, CONF_LOG_LEVEL));
        c->quiet = conf_int(&c->conf, CONF_LOG_LEVEL) == LOG_ERROR;
        c->json = conf_int(&c->conf, CONF_JSON) > 0;
        c->progress = isatty(STDERR_FILENO) && !c->quiet &&
                      !conf_int(&c->conf, CONF_NO_PROGRESS);
        c->db = conf_str(&c->conf, CONF_DB);
        c->listen = conf_str(&c->conf, CONF_LISTEN);

        audit_conf_defaults(&c->ac);
        c->ac.follow = serve;
        c->ac.dedup.gap_grace_records =
            (uint64_t)conf_int(&c->conf, CONF_GAP_GRACE_RECORDS);
        c->ac.dedup.gap_grace_ms = conf_int(&c->conf, CONF_GAP_GRACE_MS);
        c->ac.dedup.idle_ttl_ms = conf_int(&c->conf, CONF_IDLE_TTL_MS);
        c->ac.dedup.max_open_gaps =
            (uint32_t)conf_int(&c->conf, CONF_MAX_OPEN_GAPS);
        c->ac.dedup.window.max_ids =
            (uint64_t)conf_int(&c->conf, CONF_ID_WINDOW);
        c->ac.dedup.window.max_age_ms =
            conf_int(&c->conf, CONF_ID_WINDOW_AGE_MS);
        c->ac.dedup_key = conf_str(&c->conf, CONF_DEDUP_KEY);
        c->ac.commit_interval_ms =
            conf_int(&c->conf, CONF_COMMIT_INTERVAL_MS);
        c->ac.commit_records =
            (uint64_t)conf_int(&c->conf, CONF_COMMIT_RECORDS);
        c->ac.stall_timeout_ms = conf_int(&c->conf, CONF_STALL_TIMEOUT_MS);

        http_conf_defaults(&c->hc);
        c->hc.token_file = conf_str(&c->conf, CONF_HTTP_TOKEN_FILE);
        c->hc.tls_cert_file = conf_str(&c->conf, CONF_TLS_CERT);
        c->hc.tls_key_file = conf_str(&c->conf, CONF_TLS_KEY);
        return 0;
}

static int kset(rd_kafka_conf_t *conf, const char *key, const char *val,
                char *errstr, size_t errstr_size)
{
        return rd_kafka_conf_set(conf, key, val, errstr, errstr_size) ==
                       RD_KAFKA_CONF_OK
                   ? 0
                   : -1;
}

/* The consumer configuration: our defaults, then the properties file
 * (-F), then kafka.* lines of the configuration file, then -X, then
 * brokers and isolation, then what the audit's guarantees depend on. */
static rd_kafka_conf_t *cli_kconf(const struct cli *c, char *errstr,
                                  size_t errstr_size)
{
        static const char *const forced[][2] = {
            {"enable.auto.commit", "false"},
            {"enable.auto.offset.store", "false"},
            {"enable.partition.eof", "true"},
            {"auto.offset.reset", "error"},
        };
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        const char *props, *brokers;
        char val[64], rderr[256];
        size_t i, vsz;

        if (kset(conf, "group.id", "eosaudit", errstr, errstr_size) ||
            kset(conf, "client.id", "eosaudit", errstr, errstr_size) ||
            kset(conf, "isolation.level", "read_committed", errstr,
                     errstr_size))
                goto fail;
        /*
         * The prefetch budget.  librdkafka applies queued.min.messages and
         * queued.max.messages.kbytes to the ONE consumer queue that
         * rd_kafka_assign() forwards every partition to, not per
         * partition, so this is a constant.  A queued record costs its
         * wire size plus ~300 bytes (kbytes counts payload only), and one
         * Fetch response (fetch.max.bytes) may come on top of the cap.
         * Once the queue is over a threshold, librdkafka < 2.2 sleeps up to
         * 1 s before it fetches again (rd_kafka_max_block_ms;
         * fetch.error.backoff.ms does not apply), so a small queue needs a
         * wake-up: fetch.queue.backoff.ms where it exists, else a metadata
         * request every 100 ms, whose reply wakes the broker thread (on
         * librdkafka's 3-broker mock cluster too: partitions of every
         * leader kept pace).  Measured (BENCHMARKS.md): 1M pairs 505 ->
         * 188 MiB max RSS, a 12-partition 5M scan 395 -> 114 MiB at the
         * same speed; before, queued.min.messages was 1000000.
         */
        if (kset(conf, "queued.min.messages", "150000", errstr,
                 errstr_size) ||
            kset(conf, "queued.max.messages.kbytes", "16384", errstr,
                 errstr_size) ||
            kset(conf, "fetch.max.bytes", "4194304", errstr, errstr_size) ||
            kset(conf, "fetch.wait.max.ms", "100", errstr, errstr_size))
                goto fail;
        if (rd_kafka_conf_set(conf, "fetch.queue.backoff.ms", "100", rderr,
                              sizeof(rderr)) != RD_KAFKA_CONF_OK &&
            (kset(conf, "topic.metadata.refresh.interval.ms", "100", errstr,
                  errstr_size) ||
             /* else librdkafka makes it 3 x the interval, 300 ms */
             kset(conf, "metadata.max.age.ms", "900000", errstr,
                  errstr_size)))
                goto fail;
        /* Set now and again below: a value that differs then came from the
         * user (librdkafka's own defaults are no reason to warn). */
        for (i = 0; i < sizeof(forced) / sizeof(forced[0]); i++)
                if (kset(conf, forced[i][0], forced[i][1], errstr,
                             errstr_size))
                        goto fail;
        props = conf_str(&c->conf, CONF_KAFKA_PROPERTIES_FILE);
        if (props && kconf_file_load(conf, props, errstr, errstr_size))
                goto fail;
        for (i = 0; i < c->conf.kafka_cnt; i++) {
                const struct conf_kv *kv = &c->conf.kafka[i];
                if (kset(conf, kv->key, kv->value, rderr, sizeof(rderr))) {
                        if (kv->line)
                                snprintf(errstr, errstr_size, "%.200s:%u: %s",
                                         conf_str(&c->conf, CONF_CONFIG),
                                         kv->line, rderr);
                        else
                                snprintf(errstr, errstr_size, "%s", rderr);
                        goto fail;
                }
        }
        brokers = conf_str(&c->conf, CONF_BROKERS);
        if (brokers && kset(conf, "bootstrap.servers", brokers, errstr,
                            errstr_size))
                goto fail;
        if (conf_isset(&c->conf, CONF_ISOLATION) &&
            kset(conf, "isolation.level", conf_str(&c->conf, CONF_ISOLATION),
                 errstr, errstr_size))
                goto fail;
        for (i = 0; i < sizeof(forced) / sizeof(forced[0]); i++) {
                vsz = sizeof(val);
                if (rd_kafka_conf_get(conf, forced[i][0], val, &vsz) ==
                        RD_KAFKA_CONF_OK &&
                    strcmp(val, forced[i][1]))
                        log_warn("ignoring %s=%s: the audit needs %s",
                                 forced[i][0], val, forced[i][1]);
                if (kset(conf, forced[i][0], forced[i][1], errstr,
                             errstr_size))
                        goto fail;
        }
        /* librdkafka refuses fetch.max.bytes < message.max.bytes: follow a
         * user's larger message.max.bytes unless fetch.max.bytes is theirs
         * too. */
        vsz = sizeof(val);
        if (rd_kafka_conf_get(conf, "fetch.max.bytes", val, &vsz) ==
                RD_KAFKA_CONF_OK &&
            !strcmp(val, "4194304")) {
                char mmb[32];
                size_t msz = sizeof(mmb);
                int64_t v;
                if (rd_kafka_conf_get(conf, "message.max.bytes", mmb, &msz) ==
                        RD_KAFKA_CONF_OK &&
                    !kconf_parse_i64(mmb, 0, INT64_MAX, &v) && v > 4194304 &&
                    kset(conf, "fetch.max.bytes", mmb, errstr, errstr_size))
                        goto fail;
        }
        vsz = sizeof(val);
        if (rd_kafka_conf_get(conf, "isolation.level", val, &vsz) ==
                RD_KAFKA_CONF_OK &&
            strcmp(val, "read_committed"))
                log_warn("isolation.level=%s: aborted transactions will be "
                         "audited as if they were delivered",
                         val);
        return conf;
fail:
        rd_kafka_conf_destroy(conf);
        return NULL;
}

static void cli_free(struct cli *c)
{
        free(c->topics_buf);
        conf_release(&c->conf);
}

/* A temporary ledger for a scan without --db. */
struct tmpdb {
        char dir[64];
        char path[96];
};

static int tmpdb_make(struct tmpdb *t)
{
        const char *base = getenv("TMPDIR");

        if (!base || !*base || strlen(base) > 40)
                base = "/tmp";
        snprintf(t->dir, sizeof(t->dir), "%s/eosaudit-XXXXXX", base);
        if (!mkdtemp(t->dir))
                return -1;
        snprintf(t->path, sizeof(t->path), "%s/ledger.db", t->dir);
        return 0;
}

static void tmpdb_remove(struct tmpdb *t)
{
        static const char *const suffix[] = {"", "-wal", "-shm", "-lock",
                                             "-journal"};
        char p[128];
        size_t i;

        if (!t->path[0])
                return;
        for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
                snprintf(p, sizeof(p), "%s%s", t->path, suffix[i]);
                unlink(p);
        }
        rmdir(t->dir);
}

static void serve_event(void *opaque, const char *topic, int32_t partition,
                        const struct dedup_event *ev)
{
        (void)opaque;
        if (ev->kind == DEDUP_KIND_EXPIRED)
                return;
        log_warn("%s: %s [%d] producer '%.*s' epoch %d seq %lld..%lld "
                 "offsets %lld..%lld count %llu",
                 dedup_kind_name(ev->kind), topic, (int)partition,
                 ev->producer ? (int)ev->producer_len : 1,
                 ev->producer ? ev->producer : "?", (int)ev->epoch,
                 (long long)ev->seq_lo, (long long)ev->seq_hi,
                 (long long)ev->offset_lo, (long long)ev->offset_hi,
                 (unsigned long long)ev->count);
}

/*
 * Starts the HTTP server of scan (only with --listen) or serve (on
 * 127.0.0.1:8080 unless told otherwise) and the status it reads.  serve's
 * default address is best effort: when it is taken, serve goes on without
 * HTTP.  Returns 0 (*hs may stay NULL), or -1 after saying why.
 */
static int cli_http_start(struct cli *c, int serve, struct status **st,
                          struct http_server **hs)
{
        int optional = serve && !c->listen && !c->hc.token_file &&
                       !c->hc.tls_cert_file && !c->hc.tls_key_file;
        char errstr[512];

        if (c->listen && !strcmp(c->listen, "off"))
                return 0;
        if (!serve && !c->listen) {
                if (c->hc.token_file || c->hc.tls_cert_file ||
                    c->hc.tls_key_file) {
                        fprintf(stderr, "eosaudit: --http-token-file and "
                                        "--tls-* need --listen\n");
                        return -1;
                }
                return 0;
        }
        *st = status_new();
        if (!*st) {
                fprintf(stderr, "eosaudit: out of memory\n");
                return -1;
        }
        c->ac.status = *st;
        if (c->listen)
                c->hc.listen = c->listen;
        c->hc.db_path = c->db;
        c->hc.topics = c->topics;
        c->hc.topic_cnt = c->ntopics;
        c->hc.status = *st;
        c->hc.version = EOSAUDIT_VERSION;
        if (http_start(hs, &c->hc, errstr, sizeof(errstr))) {
                *hs = NULL;
                if (!optional) {
                        fprintf(stderr, "eosaudit: %s\n", errstr);
                        return -1;
                }
                log_warn("%s: serving no HTTP (--listen picks another "
                         "address)",
                         errstr);
                return 0;
        }
        /* http_url() names a wildcard as loopback (an address to browse);
         * the log says what is bound, or a container looks closed. */
        if (!strncmp(c->hc.listen, "0.0.0.0:", 8) ||
            !strncmp(c->hc.listen, "[::]:", 5))
                log_info("http: listening on %s%u, every interface (%s "
                         "from this host)",
                         c->hc.listen[0] == '[' ? "[::]:" : "0.0.0.0:",
                         (unsigned)http_port(*hs), http_url(*hs));
        else
                log_info("http: listening on %s", http_url(*hs));
        return 0;
}

static int cmd_audit(int argc, char **argv, int serve)
{
        struct cli c;
        struct tmpdb tmp;
        struct audit *a = NULL;
        struct status *st = NULL;
        struct http_server *hs = NULL;
        rd_kafka_conf_t *kconf;
        char errstr[512] = "";
        int rc = EXIT_ERROR, r;

        memset(&c, 0, sizeof(c));
        memset(&tmp, 0, sizeof(tmp));
        if (conf_init(&c.conf)) {
                fprintf(stderr, "eosaudit: out of memory\n");
                return EXIT_ERROR;
        }
        r = cli_parse(&c, argc, argv, serve);
        if (r) {
                if (r > 0) {
                        (serve ? usage_serve : usage_scan)(stdout);
                        rc = EXIT_CLEAN;
                }
                goto out;
        }
        if (!c.db && serve)
                c.db = "eosaudit.db";
        if (!c.db) {
                if (tmpdb_make(&tmp)) {
                        fprintf(stderr, "eosaudit: cannot create a temporary "
                                        "ledger: %s\n",
                                strerror(errno));
                        goto out;
                }
                c.db = tmp.path;
        }
        kconf = cli_kconf(&c, errstr, sizeof(errstr));
        if (!kconf) {
                fprintf(stderr, "eosaudit: %s\n", errstr);
                goto out;
        }
        if (c.quiet)
                rd_kafka_conf_set(kconf, "log_level", "3", NULL, 0);
        c.ac.topics = c.topics;
        c.ac.topic_cnt = c.ntopics;
        c.ac.db_path = c.db;
        c.ac.progress = c.progress && !serve;
        c.ac.run = &run;
        if (serve) {
                c.ac.on_event = serve_event;
                log_info("auditing %zu topic(s) into ledger %s", c.ntopics,
                         c.db);
        }
        if (cli_http_start(&c, serve, &st, &hs)) {
                rd_kafka_conf_destroy(kconf);
                goto out;
        }
        if (audit_new(&a, &c.ac, kconf, errstr, sizeof(errstr))) {
                fprintf(stderr, "eosaudit: %s\n", errstr);
                goto out;
        }
        if (audit_run(a, errstr, sizeof(errstr))) {
                fprintf(stderr, "eosaudit: %s\n", errstr);
                goto out;
        }
        /* scan serves only while it scans. */
        http_stop(hs);
        hs = NULL;
        if (serve) {
                log_info("stopped; the ledger is committed");
                rc = EXIT_CLEAN;
                goto out;
        }
        if (c.json) {
                json_t *j = report_summary_json(audit_ledger(a), c.topics,
                                                c.ntopics, 20, errstr,
                                                sizeof(errstr));
                if (!j) {
                        fprintf(stderr, "eosaudit: report: %s\n", errstr);
                        goto out;
                }
                json_dumpf(j, stdout, JSON_COMPACT);
                fputc('\n', stdout);
                rc = json_integer_value(json_object_get(j, "anomalies_total"))
                         ? EXIT_ANOMALIES
                         : EXIT_CLEAN;
                json_decref(j);
        } else {
                struct ledger_summary s;
                uint64_t bad = 0;
                size_t i;
                if (report_summary_print(stdout, audit_ledger(a), c.topics,
                                         c.ntopics, 10, errstr,
                                         sizeof(errstr))) {
                        fprintf(stderr, "eosaudit: report: %s\n", errstr);
                        goto out;
                }
                for (i = 0; i < c.ntopics; i++) {
                        if (ledger_summary(audit_ledger(a), c.topics[i], &s,
                                           errstr, sizeof(errstr))) {
                                fprintf(stderr, "eosaudit: report: %s\n",
                                        errstr);
                                goto out;
                        }
                        bad += report_anomaly_total(&s);
                }
                rc = bad ? EXIT_ANOMALIES : EXIT_CLEAN;
        }
out:
        http_stop(hs);
        audit_free(a);
        status_free(st);
        tmpdb_remove(&tmp);
        cli_free(&c);
        return rc;
}

static void usage_config_help(FILE *f)
{
        fputs("usage: eosaudit config-help [--markdown | --example | --check "
              "FILE]\n"
              "\n"
              "Describes the configuration file of scan and serve (--config "
              "FILE): as\n"
              "text, as docs/CONFIG.md (--markdown), or as an example file "
              "with every\n"
              "key at its default, commented out (--example).  --check FILE "
              "reads FILE\n"
              "as serve would and says whether it is valid (exit status 0) "
              "or which\n"
              "line is not (FILE:LINE: message, exit status 2).\n",
              f);
}

/* --check FILE: FILE as `serve --config FILE` would read it. */
static int config_check(const char *path)
{
        char *argv[] = {(char *)"serve", (char *)"--config", (char *)path,
                        NULL};
        char errstr[1024];
        struct conf c;
        int r;

        if (conf_init(&c)) {
                fprintf(stderr, "eosaudit: out of memory\n");
                return EXIT_ERROR;
        }
        r = conf_argv_parse(&c, 3, argv, errstr, sizeof(errstr));
        conf_release(&c);
        if (r) {
                fprintf(stderr, "eosaudit: %s\n", errstr);
                return EXIT_ERROR;
        }
        printf("%s: ok\n", path);
        return EXIT_CLEAN;
}

/* eosaudit config-help [--markdown | --example | --check FILE] */
static int cmd_config_help(int argc, char **argv)
{
        enum conf_doc fmt = CONF_DOC_TEXT;
        const char *opt = argc > 1 ? argv[1] : NULL;

        if (opt && !strcmp(opt, "--check") && argc == 3)
                return config_check(argv[2]);
        if (opt && (!strcmp(opt, "--help") || !strcmp(opt, "-h")) &&
            argc == 2) {
                usage_config_help(stdout);
                return EXIT_CLEAN;
        }
        if (opt && !strcmp(opt, "--markdown") && argc == 2) {
                fmt = CONF_DOC_MARKDOWN;
        } else if (opt && !strcmp(opt, "--example") && argc == 2) {
                fmt = CONF_DOC_EXAMPLE;
        } else if (opt) {
                fprintf(stderr, "eosaudit: bad arguments to config-help (see "
                                "`eosaudit config-help --help`)\n");
                return EXIT_ERROR;
        }
        conf_doc_print(stdout, fmt);
        if (fflush(stdout) || ferror(stdout)) {
                fprintf(stderr, "eosaudit: cannot write: %s\n",
                        strerror(errno));
                return EXIT_ERROR;
        }
        return EXIT_CLEAN;
}

int main(int argc, char **argv)
{
        const char *cmd = argc > 1 ? argv[1] : NULL;

        signals_install();
        if (!cmd || !strcmp(cmd, "--help") || !strcmp(cmd, "-h") ||
            !strcmp(cmd, "help")) {
                usage_main(cmd ? stdout : stderr);
                return cmd ? EXIT_CLEAN : EXIT_ERROR;
        }
        if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
                printf("eosaudit %s (librdkafka %s)\n", EOSAUDIT_VERSION,
                       rd_kafka_version_str());
                return EXIT_CLEAN;
        }
        if (!strcmp(cmd, "scan"))
                return cmd_audit(argc - 1, argv + 1, 0);
        if (!strcmp(cmd, "serve"))
                return cmd_audit(argc - 1, argv + 1, 1);
        if (!strcmp(cmd, "produce"))
                return producer_main(argc - 1, argv + 1);
        if (!strcmp(cmd, "config-help"))
                return cmd_config_help(argc - 1, argv + 1);
        if (!strcmp(cmd, "demo"))
                return demo_main(argc - 1, argv + 1, &run, EOSAUDIT_VERSION);
        fprintf(stderr, "eosaudit: unknown command '%s' (see `eosaudit "
                        "--help`)\n",
                cmd);
        return EXIT_ERROR;
}
