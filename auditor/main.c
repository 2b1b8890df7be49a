/*
 * main.c - argv, signals and wiring of the eosaudit subcommands.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "../http/http.h"
#include "../producer/producer.h"
#include "audit.h"
#include "demo.h"
#include "kconf.h"
#include "log.h"
#include "report.h"

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

/* Options shared by scan and serve. */
struct cli {
        const char *brokers;
        char *topics_buf;
        const char *topics[TOPICS_MAX];
        size_t ntopics;
        const char *db;
        const char *isolation;
        const char *conf_file;
        const char **kv;
        size_t nkv;
        int json;
        int quiet;
        int progress;
        struct audit_conf ac;
        const char *listen; /* NULL: serve's default, scan none; "off" */
        struct http_conf hc;
};

enum {
        OPT_DB = 256,
        OPT_JSON,
        OPT_ISOLATION,
        OPT_GRACE_RECORDS,
        OPT_GRACE_MS,
        OPT_IDLE_TTL,
        OPT_MAX_GAPS,
        OPT_COMMIT_MS,
        OPT_COMMIT_RECORDS,
        OPT_STALL_MS,
        OPT_NO_PROGRESS,
        OPT_LISTEN,
        OPT_TOKEN_FILE,
        OPT_TLS_CERT,
        OPT_TLS_KEY,
        OPT_HELP,
};

static const struct option audit_longopts[] = {
    {"brokers", required_argument, NULL, 'b'},
    {"topic", required_argument, NULL, 't'},
    {"db", required_argument, NULL, OPT_DB},
    {"json", no_argument, NULL, OPT_JSON},
    {"isolation", required_argument, NULL, OPT_ISOLATION},
    {"gap-grace-records", required_argument, NULL, OPT_GRACE_RECORDS},
    {"gap-grace-ms", required_argument, NULL, OPT_GRACE_MS},
    {"idle-ttl-ms", required_argument, NULL, OPT_IDLE_TTL},
    {"max-open-gaps", required_argument, NULL, OPT_MAX_GAPS},
    {"commit-interval-ms", required_argument, NULL, OPT_COMMIT_MS},
    {"commit-records", required_argument, NULL, OPT_COMMIT_RECORDS},
    {"stall-timeout-ms", required_argument, NULL, OPT_STALL_MS},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"listen", required_argument, NULL, OPT_LISTEN},
    {"http-token-file", required_argument, NULL, OPT_TOKEN_FILE},
    {"tls-cert", required_argument, NULL, OPT_TLS_CERT},
    {"tls-key", required_argument, NULL, OPT_TLS_KEY},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static void usage_scan(FILE *f)
{
        fprintf(f,
"usage: eosaudit scan -b BROKERS -t TOPIC[,TOPIC...] [options]\n"
"\n"
"Audits every partition of TOPIC from its start (or from where --db left\n"
"off) up to the high watermark that held when the scan began, then exits.\n"
"\n"
"  -b, --brokers LIST        bootstrap brokers, host:port[,host:port...]\n"
"  -t, --topic TOPIC[,...]   topic(s) to audit\n"
"      --db FILE             ledger file; a later scan with the same file\n"
"                            audits only what is new (default: a temporary\n"
"                            ledger, removed at exit)\n"
"      --json                print one JSON object on stdout\n"
"      --isolation LEVEL     read_committed (default) or read_uncommitted\n"
"      --commit-interval-ms N  ledger commit at least every N ms (1000)\n"
"      --commit-records N    ... or every N records (100000)\n"
"      --stall-timeout-ms N  give up on a partition held below its end by\n"
"                            an open transaction after N ms (30000)\n"
"      --no-progress         no progress line on stderr\n"
"      --listen ADDR:PORT    serve /metrics, /api/v1/... and the dashboard\n"
"                            while the scan runs (e.g. 127.0.0.1:8080,\n"
"                            [::1]:8080; port 0 picks a free one); see\n"
"                            `eosaudit serve --help` for the endpoints\n"
"      --http-token-file F   require 'Authorization: Bearer <token>', the\n"
"                            token being the first line of F\n"
"      --tls-cert F, --tls-key F  serve HTTPS with this PEM pair\n"
"  -X KEY=VALUE              any librdkafka property (security.protocol,\n"
"                            sasl.*, ssl.*, ...); repeatable\n"
"  -F FILE                   librdkafka properties file (key=value lines)\n"
"  -q, --quiet               only errors on stderr\n"
"  -v, --verbose             debug logging\n"
"      --help                this text\n"
"\n"
"Exit status: 0 no anomaly, 1 anomalies found (duplicate, gap,\n"
"out_of_order, fenced, malformed, or a coverage gap), 2 error.\n");
}

static void usage_serve(FILE *f)
{
        fprintf(f,
"usage: eosaudit serve -b BROKERS -t TOPIC[,TOPIC...] [options]\n"
"\n"
"The long-running audit: resumes from the ledger, follows new records,\n"
"confirms gaps after the grace period and expires idle producers.\n"
"SIGTERM/SIGINT finish the current batch, commit it and exit 0.\n"
"\n"
"  -b, --brokers LIST        bootstrap brokers, host:port[,host:port...]\n"
"  -t, --topic TOPIC[,...]   topic(s) to audit\n"
"      --db FILE             ledger file (default: eosaudit.db)\n"
"      --isolation LEVEL     read_committed (default) or read_uncommitted\n"
"      --gap-grace-records N confirm an open gap after N later records on\n"
"                            its partition (1000000; 0 = never by records)\n"
"      --gap-grace-ms N      ... or after N ms, whichever first (300000;\n"
"                            0 = never by time)\n"
"      --idle-ttl-ms N       forget a producer idle on a partition for N ms\n"
"                            (604800000 = 7 days; 0 = never)\n"
"      --max-open-gaps N     open gaps kept per producer and partition;\n"
"                            past it the oldest is confirmed (1024)\n"
"      --commit-interval-ms N  ledger commit at least every N ms (1000)\n"
"      --commit-records N    ... or every N records (100000)\n"
"      --listen ADDR:PORT    HTTP address (default 127.0.0.1:8080; if that\n"
"                            is taken, serve goes on without HTTP and says\n"
"                            so; an explicit address must be free); IPv6 as\n"
"                            [::1]:8080; port 0 picks a free one; 'off'\n"
"                            serves no HTTP\n"
"      --http-token-file F   require 'Authorization: Bearer <token>' (the\n"
"                            first line of F) on everything but /healthz\n"
"                            and the dashboard page itself\n"
"      --tls-cert F, --tls-key F  serve HTTPS with this PEM certificate\n"
"                            and key\n"
"  -X KEY=VALUE              any librdkafka property; repeatable\n"
"  -F FILE                   librdkafka properties file\n"
"  -q, --quiet               only errors on stderr\n"
"  -v, --verbose             debug logging\n"
"      --help                this text\n"
"\n"
"HTTP endpoints (GET and HEAD only):\n"
"  /                         the dashboard (one self-contained page)\n"
"  /metrics                  Prometheus text format: counters from the\n"
"                            ledger (they survive restarts), lag per\n"
"                            partition, latency and commit histograms\n"
"  /api/v1/summary           what `scan --json` prints, plus live figures\n"
"  /api/v1/anomalies         newest first with evidence; ?topic= &kind=\n"
"                            &producer= &since=MS &limit=N (50, max 1000)\n"
"                            &cursor=ID (the previous page's next_cursor)\n"
"  /api/v1/producers         per (partition, producer) state; ?topic=\n"
"                            &producer= &limit=N (1000, max 10000) &cursor=\n"
"  /api/v1/partitions        per partition counters, offsets and lag\n"
"  /healthz                  200 while the process is up\n"
"  /readyz                   200 when the ledger is open, partitions are\n"
"                            assigned, a broker is up and commits succeed;\n"
"                            503 with the reasons otherwise\n");
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
"  version   print the version\n"
"\n"
"`eosaudit COMMAND --help` describes each command.\n");
}

static int opt_i64(const char *opt, const char *val, int64_t min, int64_t max,
                   int64_t *out)
{
        if (kconf_parse_i64(val, min, max, out)) {
                fprintf(stderr,
                        "eosaudit: invalid value '%s' for --%s (expected an "
                        "integer from %lld to %lld)\n",
                        val, opt, (long long)min, (long long)max);
                return -1;
        }
        return 0;
}

/* Splits "a,b,,c" into topics a, b, c (empty items are skipped). */
static int cli_topics(struct cli *c, const char *arg)
{
        char *tok, *comma;

        free(c->topics_buf);
        c->topics_buf = strdup(arg);
        c->ntopics = 0;
        if (!c->topics_buf)
                return -1;
        for (tok = c->topics_buf; tok; tok = comma ? comma + 1 : NULL) {
                comma = strchr(tok, ',');
                if (comma)
                        *comma = '\0';
                if (!*tok)
                        continue;
                if (c->ntopics == TOPICS_MAX) {
                        fprintf(stderr, "eosaudit: at most %d topics\n",
                                TOPICS_MAX);
                        return -1;
                }
                c->topics[c->ntopics++] = tok;
        }
        if (!c->ntopics) {
                fprintf(stderr, "eosaudit: empty topic list '%s'\n", arg);
                return -1;
        }
        return 0;
}

/* Parses scan/serve options; returns 0, 1 for --help, or -1. */
static int cli_parse(struct cli *c, int argc, char **argv, int serve)
{
        const char **kv;
        int64_t v;
        int opt;

        kv = calloc((size_t)argc, sizeof(*kv));
        if (!kv)
                return -1;
        c->kv = kv;
        c->progress = isatty(STDERR_FILENO);
        audit_conf_defaults(&c->ac);
        http_conf_defaults(&c->hc);
        c->ac.follow = serve;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, ":b:t:X:F:qv", audit_longopts,
                                  NULL)) != -1) {
                const char *name = optind > 0 && optind <= argc
                                       ? argv[optind - 1]
                                       : "?";
                switch (opt) {
                case 'b':
                        c->brokers = optarg;
                        break;
                case 't':
                        if (cli_topics(c, optarg))
                                return -1;
                        break;
                case 'X':
                        kv[c->nkv++] = optarg;
                        break;
                case 'F':
                        c->conf_file = optarg;
                        break;
                case 'q':
                        c->quiet = 1;
                        log_set_level(LOG_ERROR);
                        break;
                case 'v':
                        log_set_level(LOG_DEBUG);
                        break;
                case OPT_DB:
                        c->db = optarg;
                        break;
                case OPT_JSON:
                        c->json = 1;
                        break;
                case OPT_ISOLATION:
                        if (strcmp(optarg, "read_committed") &&
                            strcmp(optarg, "read_uncommitted")) {
                                fprintf(stderr,
                                        "eosaudit: invalid --isolation '%s' "
                                        "(read_committed or "
                                        "read_uncommitted)\n",
                                        optarg);
                                return -1;
                        }
                        c->isolation = optarg;
                        break;
                case OPT_GRACE_RECORDS:
                        if (opt_i64("gap-grace-records", optarg, 0, INT64_MAX,
                                    &v))
                                return -1;
                        c->ac.dedup.gap_grace_records = (uint64_t)v;
                        break;
                case OPT_GRACE_MS:
                        if (opt_i64("gap-grace-ms", optarg, 0, INT64_MAX,
                                    &c->ac.dedup.gap_grace_ms))
                                return -1;
                        break;
                case OPT_IDLE_TTL:
                        if (opt_i64("idle-ttl-ms", optarg, 0, INT64_MAX,
                                    &c->ac.dedup.idle_ttl_ms))
                                return -1;
                        break;
                case OPT_MAX_GAPS:
                        if (opt_i64("max-open-gaps", optarg, 1, 1000000, &v))
                                return -1;
                        c->ac.dedup.max_open_gaps = (uint32_t)v;
                        break;
                case OPT_COMMIT_MS:
                        if (opt_i64("commit-interval-ms", optarg, 1,
                                    3600000, &c->ac.commit_interval_ms))
                                return -1;
                        break;
                case OPT_COMMIT_RECORDS:
                        if (opt_i64("commit-records", optarg, 1, 100000000,
                                    &v))
                                return -1;
                        c->ac.commit_records = (uint64_t)v;
                        break;
                case OPT_STALL_MS:
                        if (opt_i64("stall-timeout-ms", optarg, 1,
                                    86400000, &c->ac.stall_timeout_ms))
                                return -1;
                        break;
                case OPT_NO_PROGRESS:
                        c->progress = 0;
                        break;
                case OPT_LISTEN:
                        c->listen = optarg;
                        break;
                case OPT_TOKEN_FILE:
                        c->hc.token_file = optarg;
                        break;
                case OPT_TLS_CERT:
                        c->hc.tls_cert_file = optarg;
                        break;
                case OPT_TLS_KEY:
                        c->hc.tls_key_file = optarg;
                        break;
                case OPT_HELP:
                        return 1;
                case ':':
                        fprintf(stderr, "eosaudit: option '%s' needs a "
                                        "value\n", name);
                        return -1;
                default:
                        fprintf(stderr,
                                "eosaudit: unknown option '%s' (see "
                                "`eosaudit %s --help`)\n",
                                name, serve ? "serve" : "scan");
                        return -1;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "eosaudit: unexpected argument '%s'\n",
                        argv[optind]);
                return -1;
        }
        if (!c->ntopics) {
                fprintf(stderr, "eosaudit: -t TOPIC is required\n");
                return -1;
        }
        if (!c->brokers && !c->conf_file && !c->nkv) {
                fprintf(stderr, "eosaudit: -b BROKERS is required\n");
                return -1;
        }
        if (c->quiet)
                c->progress = 0;
        return 0;
}

static int conf_set(rd_kafka_conf_t *conf, const char *key, const char *val,
                    char *errstr, size_t errstr_size)
{
        return rd_kafka_conf_set(conf, key, val, errstr, errstr_size) ==
                       RD_KAFKA_CONF_OK
                   ? 0
                   : -1;
}

/* The consumer configuration: our defaults, then -F, then -X, then the
 * flags, then what the audit's guarantees depend on. */
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
        char val[64];
        size_t i, vsz;

        if (conf_set(conf, "group.id", "eosaudit", errstr, errstr_size) ||
            conf_set(conf, "client.id", "eosaudit", errstr, errstr_size) ||
            conf_set(conf, "isolation.level", "read_committed", errstr,
                     errstr_size) ||
            conf_set(conf, "queued.min.messages", "1000000", errstr,
                     errstr_size) ||
            conf_set(conf, "fetch.wait.max.ms", "100", errstr, errstr_size))
                goto fail;
        /* Set now and again below: a value that differs then came from the
         * user (librdkafka's own defaults are no reason to warn). */
        for (i = 0; i < sizeof(forced) / sizeof(forced[0]); i++)
                if (conf_set(conf, forced[i][0], forced[i][1], errstr,
                             errstr_size))
                        goto fail;
        if (c->conf_file && kconf_file_load(conf, c->conf_file, errstr,
                                            errstr_size))
                goto fail;
        for (i = 0; i < c->nkv; i++)
                if (kconf_set(conf, c->kv[i], errstr, errstr_size))
                        goto fail;
        if (c->brokers && conf_set(conf, "bootstrap.servers", c->brokers,
                                   errstr, errstr_size))
                goto fail;
        if (c->isolation && conf_set(conf, "isolation.level", c->isolation,
                                     errstr, errstr_size))
                goto fail;
        for (i = 0; i < sizeof(forced) / sizeof(forced[0]); i++) {
                vsz = sizeof(val);
                if (rd_kafka_conf_get(conf, forced[i][0], val, &vsz) ==
                        RD_KAFKA_CONF_OK &&
                    strcmp(val, forced[i][1]))
                        log_warn("ignoring %s=%s: the audit needs %s",
                                 forced[i][0], val, forced[i][1]);
                if (conf_set(conf, forced[i][0], forced[i][1], errstr,
                             errstr_size))
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
        free(c->kv);
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
        if (!strcmp(cmd, "demo"))
                return demo_main(argc - 1, argv + 1, &run, EOSAUDIT_VERSION);
        fprintf(stderr, "eosaudit: unknown command '%s' (see `eosaudit "
                        "--help`)\n",
                cmd);
        return EXIT_ERROR;
}
