/*
 * cli.c - see cli.h.
 */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "../auditor/audit/audit.h"
#include "../auditor/group/group.h"
#include "../base/clock.h"
#include "../base/kafka_log.h"
#include "../base/kconf.h"
#include "../base/log.h"
#include "../base/secrets.h"
#include "cmd.h"

void cli_error(struct cli *c, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(c->error, sizeof(c->error), fmt, ap);
        va_end(ap);
        fprintf(stderr, "eosaudit: %s\n", c->error);
}

/* Whether flag is one of the arguments, before any "--". */
static int cli_argv_has(int argc, char **argv, const char *flag)
{
        int i;

        for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
                if (!strcmp(argv[i], flag))
                        return 1;
        return 0;
}

/* Whether the source cluster has a setting of its own. */
static int cli_source_cluster_set(const struct cli *c)
{
        size_t i;

        for (i = 0; i < c->conf.kafka_cnt; i++)
                if (c->conf.kafka[i].opt == CONF_SOURCE_KAFKA)
                        return 1;
        return conf_str(&c->conf, CONF_SOURCE_BOOTSTRAP) ||
               conf_str(&c->conf, CONF_SOURCE_PROPERTIES_FILE);
}

int cli_parse(struct cli *c, int argc, char **argv, int serve,
              void (*usage)(FILE *))
{
        char errstr[1024];
        int r, n;

        if (conf_init(&c->conf)) {
                fprintf(stderr, "eosaudit: out of memory\n");
                return -1;
        }
        r = conf_argv_parse(&c->conf, argc, argv, errstr, sizeof(errstr));
        if (r) {
                if (r < 0) {
                        cli_error(c, "%s", errstr);
                        /* --json anywhere before a "--": the error goes
                         * on stdout as JSON too, whether the parser got
                         * to the flag or stopped before it (a bad flag
                         * first, a bad line of the --config file). */
                        c->json = !serve && cli_argv_has(argc, argv, "--json");
                } else
                        usage(stdout);
                return r;
        }
        n = conf_list_split(conf_str(&c->conf, CONF_TOPICS), &c->topics_buf,
                            c->topics, CLI_TOPICS_MAX);
        if (n < 0) {
                fprintf(stderr, "eosaudit: out of memory\n");
                return -1;
        }
        c->ntopics = (size_t)n;
        if (conf_str(&c->conf, CONF_SOURCE)) {
                n = conf_list_split(conf_str(&c->conf, CONF_SOURCE),
                                    &c->sources_buf, c->sources,
                                    CLI_TOPICS_MAX);
                if (n < 0) {
                        fprintf(stderr, "eosaudit: out of memory\n");
                        return -1;
                }
                c->nsources = (size_t)n;
        }
        log_set_level((enum log_level)conf_int(&c->conf, CONF_LOG_LEVEL));
        c->quiet = conf_int(&c->conf, CONF_LOG_LEVEL) == LOG_ERROR;
        c->json = conf_int(&c->conf, CONF_JSON) > 0;
        c->progress = isatty(STDERR_FILENO) && !c->quiet &&
                      !conf_int(&c->conf, CONF_NO_PROGRESS);
        c->db = conf_str(&c->conf, CONF_DB);
        c->listen = conf_str(&c->conf, CONF_LISTEN);

        audit_conf_defaults(&c->ac);
        c->ac.follow = serve;
        c->ac.dedup.gap_grace_records = (uint64_t)
            conf_int(&c->conf, CONF_GAP_GRACE_RECORDS);
        c->ac.dedup.gap_grace_ms = conf_int(&c->conf, CONF_GAP_GRACE_MS);
        c->ac.dedup.idle_ttl_ms = conf_int(&c->conf, CONF_IDLE_TTL_MS);
        c->ac.dedup.max_open_gaps = (uint32_t)conf_int(&c->conf,
                                                       CONF_MAX_OPEN_GAPS);
        c->ac.dedup.window.max_ids = (uint64_t)conf_int(&c->conf,
                                                        CONF_ID_WINDOW);
        c->ac.dedup.window.max_age_ms = conf_int(&c->conf,
                                                 CONF_ID_WINDOW_AGE_MS);
        c->ac.dedup_key = conf_str(&c->conf, CONF_DEDUP_KEY);
        c->ac.commit_interval_ms = conf_int(&c->conf, CONF_COMMIT_INTERVAL_MS);
        c->ac.commit_records = (uint64_t)conf_int(&c->conf,
                                                  CONF_COMMIT_RECORDS);
        c->ac.threads = (unsigned)conf_int(&c->conf, CONF_THREADS);
        c->ac.stall_timeout_ms = conf_int(&c->conf, CONF_STALL_TIMEOUT_MS);
        c->ac.metadata_refresh_ms = conf_int(&c->conf,
                                             CONF_METADATA_REFRESH_MS);
        c->ac.sources = c->sources;
        c->ac.source_cnt = c->nsources;
        c->ac.processor_group = conf_str(&c->conf, CONF_PROCESSOR_GROUP);
        c->ac.processor_offsets_topic = conf_str(&c->conf,
                                                 CONF_PROCESSOR_OFFSETS_TOPIC);
        c->ac.flow.expect = (enum dedup_flow_expect)conf_int(&c->conf,
                                                             CONF_FLOW_EXPECT);
        c->ac.flow.due_records = (uint64_t)conf_int(&c->conf,
                                                    CONF_FLOW_DUE_RECORDS);
        c->ac.flow.due_ms = conf_int(&c->conf, CONF_FLOW_DUE_MS);
        c->ac.flow.max_ids = (uint64_t)conf_int(&c->conf, CONF_FLOW_MAX_IDS);
        if (c->nsources &&
            conf_int(&c->conf, CONF_ISOLATION) == 1 /* read_uncommitted */)
                log_warn("flow: the sinks are read under read_uncommitted: "
                         "the outputs of aborted transactions count as "
                         "copies (duplicated), and open ones too");
        if ((c->ac.processor_group || c->ac.processor_offsets_topic) &&
            !c->nsources) {
                fprintf(stderr, "eosaudit: --processor-group and "
                                "--processor-offsets-topic need --source\n");
                return -1;
        }
        if (c->ac.processor_group && c->ac.processor_offsets_topic) {
                fprintf(stderr, "eosaudit: --processor-group and "
                                "--processor-offsets-topic: one frontier "
                                "only\n");
                return -1;
        }
        if (cli_source_cluster_set(c) && !c->nsources) {
                fprintf(stderr, "eosaudit: --source-bootstrap, "
                                "--source-properties-file and --source-X "
                                "need --source\n");
                return -1;
        }
        c->ac.txn_manifests = conf_str(&c->conf, CONF_TXN_MANIFESTS);
        c->ac.group = conf_str(&c->conf, CONF_GROUP);
        c->ac.mode = c->ac.group ? &audit_mode_group : NULL;
        c->ac.group_member = conf_str(&c->conf, CONF_GROUP_MEMBER);
        c->ac.group_instance_id = conf_str(&c->conf, CONF_GROUP_INSTANCE_ID);
        c->ac.group_replication = (int)conf_int(&c->conf,
                                                CONF_GROUP_REPLICATION);
        c->ac.group_ids_partitions = (int)conf_int(&c->conf,
                                                   CONF_GROUP_IDS_PARTITIONS);

        http_conf_defaults(&c->hc);
        c->hc.token_file = conf_str(&c->conf, CONF_HTTP_TOKEN_FILE);
        c->hc.tls_cert_file = conf_str(&c->conf, CONF_TLS_CERT);
        c->hc.tls_key_file = conf_str(&c->conf, CONF_TLS_KEY);
        return 0;
}

/* Which consumer cli_kconf() configures: the one of the sinks (and of
 * every topic when the sources share their cluster), or the one of the
 * sources on the cluster --source-bootstrap names. */
struct cli_cluster {
        enum conf_id kafka;   /* its CONF_T_KAFKA option */
        enum conf_id props;   /* its properties file */
        enum conf_id brokers; /* its bootstrap brokers */
        const char *files;    /* where its secrets go, for a refusal */
        const char *prefix;   /* its configuration file keys' prefix */
        const char *need;     /* the flag without which it has none */
};

static const struct cli_cluster cli_sinks = {
    CONF_KAFKA,  CONF_KAFKA_PROPERTIES_FILE, CONF_BROKERS, "-F FILE", "kafka.",
    "-b BROKERS"};
static const struct cli_cluster cli_sources = {CONF_SOURCE_KAFKA,
                                               CONF_SOURCE_PROPERTIES_FILE,
                                               CONF_SOURCE_BOOTSTRAP,
                                               "--source-properties-file FILE",
                                               "source-kafka.",
                                               "--source-bootstrap"};

/* The consumer configuration: our defaults, then the properties file
 * (-F), then kafka.* lines of the configuration file, then -X, then
 * brokers and isolation, then what the audit's guarantees depend on;
 * for the sources' cluster the same from its own options. */
static rd_kafka_conf_t *cli_kconf(const struct cli *c,
                                  const struct cli_cluster *k, char *errstr,
                                  size_t errstr_size)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        const char *props, *brokers;
        char rderr[256];
        size_t i, secret_lines = 0;

        if (kconf_put(conf, "group.id", "eosaudit", errstr, errstr_size) ||
            kconf_put(conf, "client.id", "eosaudit", errstr, errstr_size) ||
            audit_kconf_defaults(conf, errstr, errstr_size))
                goto fail;
        props = conf_str(&c->conf, k->props);
        if (props && kconf_file_load(conf, props, errstr, errstr_size))
                goto fail;
        for (i = 0; i < c->conf.kafka_cnt; i++) {
                const struct conf_kv *kv = &c->conf.kafka[i];
                if (kv->opt != k->kafka)
                        continue;
                if (!kv->line &&
                    secrets_cli_check_for(kv->key, k->files, k->prefix, errstr,
                                          errstr_size))
                        goto fail;
                if (kv->line && secrets_key_is_secret(kv->key))
                        secret_lines++;
                if (kconf_put(conf, kv->key, kv->value, rderr,
                              sizeof(rderr))) {
                        if (kv->line)
                                snprintf(errstr, errstr_size, "%.200s:%u: %s",
                                         conf_str(&c->conf, CONF_CONFIG),
                                         kv->line, rderr);
                        else
                                snprintf(errstr, errstr_size, "%s", rderr);
                        goto fail;
                }
        }
        brokers = conf_str(&c->conf, k->brokers);
        if (brokers &&
            kconf_put(conf, "bootstrap.servers", brokers, errstr, errstr_size))
                goto fail;
        if (!kconf_has(conf, "bootstrap.servers")) {
                snprintf(errstr, errstr_size,
                         "%s is required (no bootstrap.servers in "
                         "%.200s either)",
                         k->need, props ? props : k->files);
                goto fail;
        }
        if (conf_isset(&c->conf, CONF_ISOLATION) &&
            kconf_put(conf, "isolation.level",
                      conf_str(&c->conf, CONF_ISOLATION), errstr, errstr_size))
                goto fail;
        if (audit_kconf_apply(conf, errstr, errstr_size))
                goto fail;
        if (secret_lines)
                secrets_file_check(conf_str(&c->conf, CONF_CONFIG),
                                   "the configuration file");
        secrets_kconf_check(conf);
        return conf;
fail:
        rd_kafka_conf_destroy(conf);
        return NULL;
}

void cli_free(struct cli *c)
{
        http_stop(c->hs);
        audit_free(c->a);
        if (c->src_kconf)
                rd_kafka_conf_destroy(c->src_kconf);
        status_free(c->st);
        free(c->topics_buf);
        free(c->sources_buf);
        conf_release(&c->conf);
        memset(c, 0, sizeof(*c));
}

/*
 * Starts the HTTP server of scan (only with --listen) or serve (on
 * 127.0.0.1:8080 unless told otherwise) and the status it reads.  serve's
 * default address is best effort: when it is taken, serve goes on without
 * HTTP.  Returns 0 (c->hs may stay NULL), or -1 after saying why.
 */
static int cli_http_start(struct cli *c, int serve)
{
        int optional = serve && !c->listen && !c->hc.token_file &&
                       !c->hc.tls_cert_file && !c->hc.tls_key_file;
        char errstr[512];

        if (c->listen && !strcmp(c->listen, "off"))
                return 0;
        if (!serve && !c->listen) {
                if (c->hc.token_file || c->hc.tls_cert_file ||
                    c->hc.tls_key_file) {
                        cli_error(c, "--http-token-file and --tls-* need "
                                     "--listen");
                        return -1;
                }
                return 0;
        }
        if (c->hc.token_file)
                secrets_file_check(c->hc.token_file, "the HTTP token file");
        if (c->hc.tls_key_file)
                secrets_file_check(c->hc.tls_key_file, "the TLS key file");
        c->st = status_new();
        if (!c->st) {
                fprintf(stderr, "eosaudit: out of memory\n");
                return -1;
        }
        c->ac.status = c->st;
        if (c->listen)
                c->hc.listen = c->listen;
        c->hc.db_path = c->db;
        {
                size_t i;
                for (i = 0; i < c->ntopics; i++)
                        c->http_topics[i] = c->topics[i];
                for (i = 0; i < c->nsources; i++)
                        c->http_topics[c->ntopics + i] = c->sources[i];
        }
        c->hc.topics = c->http_topics;
        c->hc.topic_cnt = c->ntopics + c->nsources;
        c->hc.flow_sinks = c->nsources ? c->ntopics : 0;
        c->hc.status = c->st;
        c->hc.group = c->ac.group;
        c->hc.version = EOSAUDIT_VERSION;
        c->hc.brokers = c->brokers[0] ? c->brokers : NULL;
        if (http_start(&c->hs, &c->hc, errstr, sizeof(errstr))) {
                c->hs = NULL;
                if (!optional) {
                        cli_error(c, "%s", errstr);
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
                         (unsigned)http_port(c->hs), http_url(c->hs));
        else
                log_info("http: listening on %s", http_url(c->hs));
        return 0;
}

/*
 * audit_new() and audit_run() with kconf (a template: each attempt gets
 * a copy; destroyed here).  A scan, or any failure that is not a refusal,
 * returns at once.  In follow mode a refusal (AUDIT_E_ACCESS) is logged
 * once per distinct line, published as the status's refusal (so /readyz
 * answers 503 with it), and the attempt is repeated every retry_ms until
 * one succeeds or *c->run is cleared.  *out is the last attempt's audit
 * (NULL when audit_new() failed), for the caller to free.  ready, when
 * not NULL, is called with opaque between audit_new() and audit_run()
 * (*out set); non-zero from it ends the attempt with -1 (it said why).
 * Returns what audit_run() returns, or audit_new()'s failure.
 */
static int cli_audit_run(struct audit **out, const struct audit_conf *c,
                         rd_kafka_conf_t *kconf, int64_t retry_ms,
                         int (*ready)(void *opaque), void *opaque,
                         char *errstr, size_t errstr_size)
{
        char last[512] = "";
        int rc;

        *out = NULL;
        for (;;) {
                rc = audit_new(out, c, rd_kafka_conf_dup(kconf), errstr,
                               errstr_size);
                if (!rc && ready && ready(opaque)) {
                        errstr[0] = '\0'; /* ready() said why */
                        rc = -1;
                        break;
                }
                if (!rc)
                        rc = audit_run(*out, errstr, errstr_size);
                if (rc != AUDIT_E_ACCESS || !c->follow || (c->run && !*c->run))
                        break;
                audit_free(*out);
                *out = NULL;
                if (strcmp(last, errstr)) {
                        log_error("%s (trying again every %lld s)", errstr,
                                  (long long)(retry_ms / 1000));
                        snprintf(last, sizeof(last), "%s", errstr);
                }
                if (c->status)
                        status_refusal_set(c->status, errstr);
                {
                        int64_t until = clock_mono_ms() + retry_ms;
                        struct timespec ts = {0, 100 * 1000 * 1000};
                        while ((!c->run || *c->run) && clock_mono_ms() < until)
                                nanosleep(&ts, NULL);
                }
                if (c->run && !*c->run) {
                        /* Stopped while refused: nothing ran, nothing to
                         * commit. */
                        rc = 0;
                        break;
                }
        }
        rd_kafka_conf_destroy(kconf);
        return rc;
}

/* cli_audit_run()'s ready: the command's on_ready between audit_new() and
 * audit_run(). */
static int cli_ready(void *opaque)
{
        struct cli *c = opaque;

        return c->on_ready(c);
}

int cli_audit(struct cli *c, int serve, volatile sig_atomic_t *run,
              audit_event_cb *on_event)
{
        rd_kafka_conf_t *kconf;
        char errstr[512] = "";

        kconf = cli_kconf(c, &cli_sinks, errstr, sizeof(errstr));
        if (!kconf) {
                cli_error(c, "%s", errstr);
                return -1;
        }
        if (cli_source_cluster_set(c)) {
                c->src_kconf = cli_kconf(c, &cli_sources, errstr,
                                         sizeof(errstr));
                if (!c->src_kconf) {
                        rd_kafka_conf_destroy(kconf);
                        cli_error(c, "%s", errstr);
                        return -1;
                }
                kafka_log_route(c->src_kconf);
                if (c->quiet)
                        rd_kafka_conf_set(c->src_kconf, "log_level", "3", NULL,
                                          0);
                c->ac.source_kconf = c->src_kconf;
        }
        /* librdkafka's lines through our logger and --log-level; its last
         * error names the cause when the brokers cannot be reached. */
        kafka_log_route(kconf);
        /* The consumer's version decides what it can see (KIP-320
         * truncation needs >= 2.1): serve's log says which one runs
         * (scan's stderr stays for findings; `eosaudit version` says it). */
        if (serve)
                log_info("eosaudit %s on librdkafka %s", EOSAUDIT_VERSION,
                         rd_kafka_version_str());
        {
                size_t bsz = sizeof(c->brokers);
                if (rd_kafka_conf_get(kconf, "bootstrap.servers", c->brokers,
                                      &bsz) != RD_KAFKA_CONF_OK)
                        c->brokers[0] = '\0';
        }
        if (c->quiet)
                rd_kafka_conf_set(kconf, "log_level", "3", NULL, 0);
        c->ac.topics = c->topics;
        c->ac.topic_cnt = c->ntopics;
        c->ac.db_path = c->db;
        c->ac.progress = c->progress && !serve;
        c->ac.run = run;
        c->ac.on_event = on_event;
        if (cli_http_start(c, serve)) {
                rd_kafka_conf_destroy(kconf);
                return -1;
        }
        /* serve waits out a refusal (not ready, retried every 10 s). */
        if (cli_audit_run(&c->a, &c->ac, kconf, 10000,
                          c->on_ready ? cli_ready : NULL, c, errstr,
                          sizeof(errstr))) {
                if (errstr[0])
                        cli_error(c, "%s", errstr);
                return -1;
        }
        /* scan serves only while it scans. */
        http_stop(c->hs);
        c->hs = NULL;
        return 0;
}

int cli_tmpdb_make(struct cli_tmpdb *t)
{
        const char *base = getenv("TMPDIR");

        if (!base || !*base)
                base = "/tmp";
        if (strlen(base) > CLI_TMPDIR_MAX) {
                errno = ENAMETOOLONG;
                return -1;
        }
        snprintf(t->dir, sizeof(t->dir), "%s/eosaudit-XXXXXX", base);
        if (!mkdtemp(t->dir))
                return -1;
        snprintf(t->path, sizeof(t->path), "%s/ledger.db", t->dir);
        return 0;
}

void cli_tmpdb_remove(struct cli_tmpdb *t)
{
        if (!t->path[0])
                return;
        ledger_remove(t->path);
        rmdir(t->dir);
}
