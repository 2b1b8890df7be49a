/*
 * conf.c - see conf.h.  The table below is the one place where an option
 * of scan or serve is declared.
 */
#include "conf.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <librdkafka/rdkafka.h>

#include "../auditor/audit.h"
#include "../http/http.h"
#include "../base/kconf.h"

#define CONF_PATH_MAX 4095
#define CONF_LINE_MAX 65536
#define CONF_KAFKA_PREFIX "kafka."
#define CONF_SV (CONF_SCAN | CONF_SERVE)
#define CONF_ALL (CONF_SCAN | CONF_SERVE | CONF_FILE)
/* getopt_long codes of options without a short flag. */
#define CONF_OPT_BASE 256
/* --help: where an option's help starts. */
#define CONF_HELP_COL 28
static const char conf_help_indent[] = "                            ";

const struct conf_option conf_options[CONF__CNT] = {
    [CONF_CONFIG] = {CONF_CONFIG, NULL, "config", 0, CONF_T_STRING, "FILE",
                     NULL, NULL, 1, CONF_PATH_MAX, NULL, NULL, CONF_SV,
                     "read settings from FILE, `key = value` lines (see "
                     "`eosaudit config-help`); flags given here override "
                     "them"},
    [CONF_BROKERS] = {CONF_BROKERS, "brokers", "brokers", 'b', CONF_T_STRING,
                      "LIST", NULL,
                      "none; required unless bootstrap.servers comes from "
                      "`kafka.*`, -X or -F",
                      1, 65535, NULL, "kafka1:9092,kafka2:9092", CONF_ALL,
                      "bootstrap brokers, host:port[,host:port...]"},
    [CONF_TOPICS] = {CONF_TOPICS, "topics", "topic", 't', CONF_T_LIST,
                     "TOPIC[,...]", NULL, "none; required", 1, 64, NULL,
                     "orders,payments", CONF_ALL,
                     "the topic(s) to audit, comma-separated"},
    [CONF_DB] = {CONF_DB, "db", "db", 0, CONF_T_STRING, "FILE", NULL,
                 "serve: eosaudit.db in the working directory; scan: a "
                 "temporary ledger, removed at exit",
                 1, CONF_PATH_MAX, NULL, "/var/lib/eosaudit/eosaudit.db",
                 CONF_ALL,
                 "the ledger (SQLite): audit state, counters and evidence; "
                 "a later run with the same file audits only what is new; "
                 "one process at a time"},
    [CONF_ISOLATION] = {CONF_ISOLATION, "isolation", "isolation", 0,
                        CONF_T_ENUM, "LEVEL", "read_committed", NULL, 0, 1,
                        "read_committed|read_uncommitted", NULL, CONF_ALL,
                        "the consumer's isolation.level; read_uncommitted also "
                        "audits the records of aborted and open transactions, "
                        "as if they were delivered"},
    [CONF_GAP_GRACE_RECORDS] = {CONF_GAP_GRACE_RECORDS, "gap-grace-records",
                                "gap-grace-records", 0, CONF_T_INT, "N",
                                "1000000", NULL, 0, INT64_MAX, NULL, NULL,
                                CONF_SERVE | CONF_FILE,
                                "serve: confirm an open gap in eos.seq after "
                                "N later records on its partition; 0 = never "
                                "by records"},
    [CONF_GAP_GRACE_MS] = {CONF_GAP_GRACE_MS, "gap-grace-ms", "gap-grace-ms",
                           0, CONF_T_INT, "N", "300000", NULL, 0, INT64_MAX,
                           NULL, NULL, CONF_SERVE | CONF_FILE,
                           "serve: ... or after N ms, whichever comes first; "
                           "0 = never by time; keep it above the producers' "
                           "delivery.timeout.ms, so that a retried record "
                           "can still fill the gap (it is then out_of_order)"},
    [CONF_IDLE_TTL_MS] = {CONF_IDLE_TTL_MS, "idle-ttl-ms", "idle-ttl-ms", 0,
                          CONF_T_INT, "N", "604800000", NULL, 0, INT64_MAX,
                          NULL, NULL, CONF_SERVE | CONF_FILE,
                          "forget a producer idle on a partition for N ms "
                          "(7 days; logged); 0 = never"},
    [CONF_MAX_OPEN_GAPS] = {CONF_MAX_OPEN_GAPS, "max-open-gaps",
                            "max-open-gaps", 0, CONF_T_INT, "N", "1024", NULL,
                            1, 1000000, NULL, NULL, CONF_SERVE | CONF_FILE,
                            "open gaps kept per producer and partition; past "
                            "it the oldest is confirmed"},
    [CONF_DEDUP_KEY] = {CONF_DEDUP_KEY, "dedup-key", "dedup-key", 0,
                        CONF_T_STRING, "ID", "msgid", NULL, 1, 262, NULL,
                        "header:ce_id", CONF_ALL,
                        "what identifies a message for redelivery checks "
                        "across producer sessions: msgid (the eos.msgid "
                        "header), header:NAME (any header, e.g. "
                        "header:message-id or header:ce_id), key (the record "
                        "key) or value-hash (a 128-bit hash of key and "
                        "value); records without it are not checked"},
    [CONF_ID_WINDOW] = {CONF_ID_WINDOW, "id-window", "id-window", 0,
                        CONF_T_INT, "N", "1000000", NULL, 0, 1000000000,
                        NULL, NULL, CONF_ALL,
                        "ids remembered per topic for redelivery checks "
                        "(about 12 bytes of memory and 34 of ledger each); "
                        "the oldest 1/16 is dropped at a time; 0 = no "
                        "redelivery checks"},
    [CONF_ID_WINDOW_AGE_MS] = {CONF_ID_WINDOW_AGE_MS, "id-window-age-ms",
                               "id-window-age-ms", 0, CONF_T_INT, "N",
                               "86400000", NULL, 0, INT64_MAX, NULL, NULL,
                               CONF_ALL,
                               "... and forget ids first seen more than N ms "
                               "ago (1 day; by the auditor's clock, in 1/16 "
                               "steps); 0 = by count only"},
    [CONF_COMMIT_INTERVAL_MS] = {CONF_COMMIT_INTERVAL_MS,
                                 "commit-interval-ms", "commit-interval-ms",
                                 0, CONF_T_INT, "N", "1000", NULL, 1, 3600000,
                                 NULL, NULL, CONF_ALL,
                                 "commit the ledger at least every N ms"},
    [CONF_COMMIT_RECORDS] = {CONF_COMMIT_RECORDS, "commit-records",
                             "commit-records", 0, CONF_T_INT, "N", "100000",
                             NULL, 1, 100000000, NULL, NULL, CONF_ALL,
                             "... or every N records, whichever comes first"},
    [CONF_STALL_TIMEOUT_MS] = {CONF_STALL_TIMEOUT_MS, "stall-timeout-ms",
                               "stall-timeout-ms", 0, CONF_T_INT, "N",
                               "30000", NULL, 1, 86400000, NULL, NULL,
                               CONF_SCAN | CONF_FILE,
                               "scan: give up on a partition held below its "
                               "end by an open transaction after N ms"},
    [CONF_LISTEN] = {CONF_LISTEN, "listen", "listen", 0, CONF_T_ADDR,
                     "ADDR:PORT", NULL,
                     "serve: " HTTP_LISTEN_DEFAULT ", and when that is taken "
                     "serve goes on without HTTP and says so; scan: off",
                     0, 0, NULL, HTTP_LISTEN_DEFAULT, CONF_ALL,
                     "serve /metrics, /healthz, /readyz, `/api/v1/...` and "
                     "the dashboard on this address (numeric, "
                     "e.g. 127.0.0.1:8080 or [::1]:8080; port 0 picks a "
                     "free one); an address given here must be free; 'off' "
                     "serves no HTTP; scan serves only while it scans"},
    [CONF_HTTP_TOKEN_FILE] = {CONF_HTTP_TOKEN_FILE, "http-token-file",
                              "http-token-file", 0, CONF_T_STRING, "FILE",
                              NULL, "none: no authentication", 1,
                              CONF_PATH_MAX, NULL, "/etc/eosaudit/http-token",
                              CONF_ALL,
                              "require `Authorization: Bearer <token>`, the "
                              "token being the first line of FILE, on "
                              "everything but /healthz and the dashboard "
                              "page itself"},
    [CONF_TLS_CERT] = {CONF_TLS_CERT, "tls-cert", "tls-cert", 0,
                       CONF_T_STRING, "FILE", NULL, "none: plain HTTP", 1,
                       CONF_PATH_MAX, NULL, "/etc/eosaudit/tls/cert.pem",
                       CONF_ALL,
                       "serve HTTPS with this PEM certificate (chain); needs "
                       "tls-key"},
    [CONF_TLS_KEY] = {CONF_TLS_KEY, "tls-key", "tls-key", 0, CONF_T_STRING,
                      "FILE", NULL, "none: plain HTTP", 1, CONF_PATH_MAX,
                      NULL, "/etc/eosaudit/tls/key.pem", CONF_ALL,
                      "the PEM private key of tls-cert"},
    [CONF_LOG_LEVEL] = {CONF_LOG_LEVEL, "log-level", "log-level", 0,
                        CONF_T_ENUM, "LEVEL", "info", NULL, 0, 3,
                        "error|warn|info|debug", NULL, CONF_ALL,
                        "what is logged on stderr; error also quiets "
                        "librdkafka's log and scan's progress line"},
    [CONF_KAFKA_PROPERTIES_FILE] = {CONF_KAFKA_PROPERTIES_FILE,
                                    "kafka-properties-file", NULL, 'F',
                                    CONF_T_STRING, "FILE", NULL, "none", 1,
                                    CONF_PATH_MAX, NULL,
                                    "/etc/eosaudit/kafka.properties",
                                    CONF_ALL,
                                    "librdkafka properties file, kcat-style "
                                    "key=value lines with # comments; keeps "
                                    "secrets out of the main file"},
    [CONF_KAFKA] = {CONF_KAFKA, "kafka.PROPERTY", NULL, 'X', CONF_T_KAFKA,
                    "KEY=VALUE", NULL,
                    "librdkafka's, but group.id=eosaudit, client.id=eosaudit "
                    "and isolation.level=read_committed",
                    0, 0, NULL,
                    "security.protocol = SASL_SSL\n"
                    "sasl.mechanisms = SCRAM-SHA-512\n"
                    "sasl.username = eosaudit\n"
                    "sasl.password = secret\n"
                    "ssl.ca.location = /etc/eosaudit/kafka-ca.pem",
                    CONF_ALL,
                    "any librdkafka property (security.protocol, `sasl.*`, "
                    "`ssl.*`, ...), repeatable; enable.auto.commit, "
                    "enable.auto.offset.store, enable.partition.eof and "
                    "auto.offset.reset stay as the audit needs them"},
    [CONF_JSON] = {CONF_JSON, NULL, "json", 0, CONF_T_FLAG, NULL, NULL, NULL,
                   0, 0, NULL, NULL, CONF_SCAN,
                   "print one JSON object on stdout"},
    [CONF_NO_PROGRESS] = {CONF_NO_PROGRESS, NULL, "no-progress", 0,
                          CONF_T_FLAG, NULL, NULL, NULL, 0, 0, NULL, NULL,
                          CONF_SCAN, "no progress line on stderr"},
    [CONF_QUIET] = {CONF_QUIET, NULL, "quiet", 'q', CONF_T_FLAG, NULL, NULL,
                    NULL, 0, 0, NULL, NULL, CONF_SV,
                    "only errors on stderr (--log-level error)"},
    [CONF_VERBOSE] = {CONF_VERBOSE, NULL, "verbose", 'v', CONF_T_FLAG, NULL,
                      NULL, NULL, 0, 0, NULL, NULL, CONF_SV,
                      "debug logging (--log-level debug)"},
    [CONF_HELP] = {CONF_HELP, NULL, "help", 0, CONF_T_FLAG, NULL, NULL, NULL,
                   0, 0, NULL, NULL, CONF_SV, "this text"},
};

/* The introduction of the documentation, one paragraph per string. */
static const char *const conf_doc_intro[] = {
    "`eosaudit serve --config FILE` (and `scan --config FILE`) read their "
    "settings from FILE. It holds `key = value` lines; blanks around key and "
    "value are trimmed, and empty lines and lines whose first non-blank "
    "character is `#` are comments (a `#` anywhere else belongs to the "
    "value, so a password may hold one).",
    "Each key may appear once. Values are checked as the flags' values are: "
    "an unknown or repeated key, a bad number or a value out of range stops "
    "eosaudit with `FILE:LINE: message`. Flags on the command line override "
    "the file; the table's defaults apply to what neither sets. Relative "
    "paths are relative to the working directory, not to the file.",
    "librdkafka properties go as `kafka.PROPERTY = VALUE` lines. They apply "
    "after kafka-properties-file (or -F) and before -X flags; brokers and "
    "isolation, when set, override bootstrap.servers and isolation.level.",
};

/* ------------------------------------------------------------------ */
/* Values                                                              */
/* ------------------------------------------------------------------ */

int conf_init(struct conf *c)
{
        const struct conf_option *o;
        char err[256];
        size_t i;

        memset(c, 0, sizeof(*c));
        for (i = 0; i < CONF__CNT; i++) {
                o = &conf_options[i];
                /* The defaults are valid (tests/test_conf.c checks each),
                 * so only memory can fail here. */
                if (o->def && conf_set(c, o->id, o->def, o->key, err,
                                       sizeof(err))) {
                        conf_release(c);
                        return -1;
                }
        }
        memset(c->src, CONF_SRC_DEFAULT, sizeof(c->src));
        return 0;
}

void conf_release(struct conf *c)
{
        size_t i;

        for (i = 0; i < CONF__CNT; i++)
                free(c->str[i]);
        for (i = 0; i < c->kafka_cnt; i++) {
                free(c->kafka[i].key);
                free(c->kafka[i].value);
        }
        free(c->kafka);
        memset(c, 0, sizeof(*c));
}

const char *conf_str(const struct conf *c, enum conf_id id)
{
        return c->str[id];
}

int64_t conf_int(const struct conf *c, enum conf_id id)
{
        return c->num[id];
}

int conf_isset(const struct conf *c, enum conf_id id)
{
        return c->src[id] != CONF_SRC_DEFAULT;
}

const struct conf_option *conf_option_by_key(const char *key)
{
        size_t i;

        if (!strncmp(key, CONF_KAFKA_PREFIX, strlen(CONF_KAFKA_PREFIX)))
                return &conf_options[CONF_KAFKA];
        for (i = 0; i < CONF__CNT; i++)
                if (conf_options[i].key && conf_options[i].type != CONF_T_KAFKA &&
                    !strcmp(conf_options[i].key, key))
                        return &conf_options[i];
        return NULL;
}

int conf_list_split(const char *s, char **buf, const char **items,
                    size_t max)
{
        char *tok, *comma;
        size_t n = 0;

        *buf = strdup(s);
        if (!*buf)
                return -1;
        for (tok = *buf; tok; tok = comma ? comma + 1 : NULL) {
                comma = strchr(tok, ',');
                if (comma)
                        *comma = '\0';
                if (!*tok)
                        continue;
                if (n == max)
                        return -1;
                items[n++] = tok;
        }
        return (int)n;
}

/* "a, b or c" from "a|b|c" into buf. */
static void conf_choices_text(const char *choices, char *buf, size_t size)
{
        size_t n = 0, len = 0, i, k;
        const char *p;

        for (p = choices; *p; p++)
                n += *p == '|';
        buf[0] = '\0';
        for (i = 0, p = choices; i <= n && len + 1 < size; i++) {
                const char *bar = strchr(p, '|');
                size_t w = bar ? (size_t)(bar - p) : strlen(p);
                const char *sep = i == 0 ? "" : i == n ? " or " : ", ";

                for (k = 0; sep[k] && len + 1 < size; k++)
                        buf[len++] = sep[k];
                for (k = 0; k < w && len + 1 < size; k++)
                        buf[len++] = p[k];
                p += w + (bar ? 1 : 0);
        }
        buf[len] = '\0';
}

/* The index of value among choices ("a|b|c"), or -1. */
static int conf_choice_index(const char *choices, const char *value)
{
        size_t vlen = strlen(value);
        const char *p = choices;
        int i = 0;

        for (;;) {
                const char *bar = strchr(p, '|');
                size_t w = bar ? (size_t)(bar - p) : strlen(p);

                if (w == vlen && !strncmp(p, value, w))
                        return i;
                if (!bar)
                        return -1;
                p = bar + 1;
                i++;
        }
}

static int conf_store(struct conf *c, enum conf_id id, const char *value)
{
        char *copy = strdup(value);

        if (!copy)
                return -1;
        free(c->str[id]);
        c->str[id] = copy;
        c->src[id] = CONF_SRC_CLI;
        return 0;
}

int conf_set(struct conf *c, enum conf_id id, const char *value,
             const char *what, char *errstr, size_t errstr_size)
{
        const struct conf_option *o = &conf_options[id];
        char expect[320], choices[256], err[256], *buf = NULL;
        const char *items[256];
        struct sockaddr_storage ss;
        size_t ss_len, len = strlen(value);
        size_t max_items = sizeof(items) / sizeof(items[0]);
        int64_t v;
        int n;

        switch (o->type) {
        case CONF_T_STRING:
                if ((int64_t)len < o->min || (int64_t)len > o->max) {
                        snprintf(expect, sizeof(expect),
                                 "%" PRId64 " to %" PRId64 " bytes", o->min,
                                 o->max);
                        goto bad;
                }
                if (id == CONF_DEDUP_KEY) {
                        enum audit_id_source src;
                        const char *hdr;
                        if (audit_dedup_key_parse(value, &src, &hdr, err,
                                                  sizeof(err))) {
                                snprintf(expect, sizeof(expect),
                                         "msgid, header:NAME, key or "
                                         "value-hash");
                                goto bad;
                        }
                }
                break;
        case CONF_T_LIST:
                if ((size_t)o->max < max_items)
                        max_items = (size_t)o->max;
                n = conf_list_split(value, &buf, items, max_items);
                free(buf);
                if (n >= o->min)
                        break;
                snprintf(expect, sizeof(expect),
                         "%" PRId64 " to %" PRId64 " comma-separated names",
                         o->min, o->max);
                goto bad;
        case CONF_T_INT:
                if (!kconf_parse_i64(value, o->min, o->max, &v)) {
                        c->num[id] = v;
                        break;
                }
                snprintf(expect, sizeof(expect),
                         "an integer from %" PRId64 " to %" PRId64, o->min,
                         o->max);
                goto bad;
        case CONF_T_ENUM:
                n = conf_choice_index(o->choices, value);
                if (n >= 0) {
                        c->num[id] = n;
                        break;
                }
                conf_choices_text(o->choices, choices, sizeof(choices));
                snprintf(expect, sizeof(expect), "%s", choices);
                goto bad;
        case CONF_T_ADDR:
                if (!strcmp(value, "off") ||
                    !http_listen_parse(value, &ss, &ss_len, err, sizeof(err)))
                        break;
                snprintf(expect, sizeof(expect),
                         "off or ADDR:PORT with a numeric address, e.g. "
                         "127.0.0.1:8080 or [::1]:8080");
                goto bad;
        case CONF_T_KAFKA:
        case CONF_T_FLAG:
                snprintf(errstr, errstr_size, "%s takes no value here",
                         what);
                return -1;
        }
        if (conf_store(c, id, value)) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        return 0;
bad:
        snprintf(errstr, errstr_size,
                 "invalid value '%.64s%s' for %s (expected %s)", value,
                 len > 64 ? "..." : "", what, expect);
        return -1;
}

int conf_kafka_add(struct conf *c, const char *key, const char *value,
                   unsigned line)
{
        struct conf_kv *kv;

        if (c->kafka_cnt == c->kafka_cap) {
                size_t cap = c->kafka_cap ? 2 * c->kafka_cap : 8;
                kv = realloc(c->kafka, cap * sizeof(*kv));
                if (!kv)
                        return -1;
                c->kafka = kv;
                c->kafka_cap = cap;
        }
        kv = &c->kafka[c->kafka_cnt];
        kv->key = strdup(key);
        kv->value = strdup(value);
        kv->line = line;
        if (!kv->key || !kv->value) {
                free(kv->key);
                free(kv->value);
                return -1;
        }
        c->kafka_cnt++;
        return 0;
}

/* ------------------------------------------------------------------ */
/* The configuration file                                              */
/* ------------------------------------------------------------------ */

/* A hint for an unknown key, or "". */
static const char *conf_unknown_hint(const char *key, char *buf, size_t size)
{
        char alt[128];
        size_t i, len = strlen(key);

        for (i = 0; i < CONF__CNT; i++)
                if (!conf_options[i].key && conf_options[i].flag &&
                    !strcmp(conf_options[i].flag, key))
                        return " (a command-line flag, not a setting)";
        if (len < sizeof(alt) && strchr(key, '_')) {
                memcpy(alt, key, len + 1);
                for (i = 0; i < len; i++)
                        if (alt[i] == '_')
                                alt[i] = '-';
                if (conf_option_by_key(alt)) {
                        snprintf(buf, size, " (did you mean '%s'?)", alt);
                        return buf;
                }
        }
        if (strchr(key, '.')) {
                snprintf(buf, size,
                         " (librdkafka properties take the prefix kafka.: "
                         "kafka.%.64s)",
                         key);
                return buf;
        }
        return "";
}

/* One "key = value" line (s, NUL-terminated, trimmed). */
static int conf_line(struct conf *c, rd_kafka_conf_t *scratch, char *s,
                     unsigned line, char *errstr, size_t errstr_size)
{
        const struct conf_option *o;
        char *eq, *key, *value, hint[256], rderr[512];
        size_t i;

        eq = strchr(s, '=');
        if (!eq) {
                snprintf(errstr, errstr_size, "expected key = value");
                return -1;
        }
        *eq = '\0';
        key = kconf_trim(s);
        value = kconf_trim(eq + 1);
        if (!*key) {
                snprintf(errstr, errstr_size, "no key before '='");
                return -1;
        }
        o = conf_option_by_key(key);
        if (!o) {
                snprintf(errstr, errstr_size, "unknown key '%.128s'%s", key,
                         conf_unknown_hint(key, hint, sizeof(hint)));
                return -1;
        }
        if (o->type == CONF_T_KAFKA) {
                const char *prop = key + strlen(CONF_KAFKA_PREFIX);

                if (!*prop) {
                        snprintf(errstr, errstr_size,
                                 "no property name after 'kafka.'");
                        return -1;
                }
                for (i = 0; i < c->kafka_cnt; i++)
                        if (c->kafka[i].line && !strcmp(c->kafka[i].key, prop)) {
                                snprintf(errstr, errstr_size,
                                         "duplicate key '%.128s' (first on "
                                         "line %u)",
                                         key, c->kafka[i].line);
                                return -1;
                        }
                if (rd_kafka_conf_set(scratch, prop, value, rderr,
                                      sizeof(rderr)) != RD_KAFKA_CONF_OK) {
                        snprintf(errstr, errstr_size, "%.128s: %s", key,
                                 rderr);
                        return -1;
                }
                if (conf_kafka_add(c, prop, value, line)) {
                        snprintf(errstr, errstr_size, "out of memory");
                        return -1;
                }
                return 0;
        }
        if (c->line[o->id]) {
                snprintf(errstr, errstr_size,
                         "duplicate key '%s' (first on line %u)", key,
                         c->line[o->id]);
                return -1;
        }
        if (conf_set(c, o->id, value, o->key, errstr, errstr_size))
                return -1;
        c->line[o->id] = line;
        c->src[o->id] = CONF_SRC_FILE;
        return 0;
}

struct conf_file_ctx {
        struct conf *c;
        rd_kafka_conf_t *scratch;
};

/* kconf_line_cb of conf_file_load(). */
static int conf_file_line(void *opaque, char *s, unsigned lineno, char *err,
                          size_t err_size)
{
        struct conf_file_ctx *fc = opaque;

        return conf_line(fc->c, fc->scratch, s, lineno, err, err_size);
}

int conf_file_load(struct conf *c, const char *path, char *errstr,
                   size_t errstr_size)
{
        struct conf_file_ctx fc = {c, rd_kafka_conf_new()};
        int rc;

        rc = kconf_file_lines(path, CONF_LINE_MAX, conf_file_line, &fc, errstr,
                              errstr_size);
        rd_kafka_conf_destroy(fc.scratch);
        return rc;
}

/* ------------------------------------------------------------------ */
/* The command line                                                    */
/* ------------------------------------------------------------------ */

static int conf_opt_code(const struct conf_option *o)
{
        return o->short_flag ? o->short_flag : CONF_OPT_BASE + (int)o->id;
}

static const struct conf_option *conf_by_code(int code)
{
        size_t i;

        for (i = 0; i < CONF__CNT; i++)
                if (conf_opt_code(&conf_options[i]) == code)
                        return &conf_options[i];
        return NULL;
}

static void conf_getopt_tables(struct option *lo, char *optstr, size_t size)
{
        size_t i, n = 0, k = 0;

        optstr[k++] = ':';
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];
                int arg = o->type == CONF_T_FLAG ? no_argument
                                                 : required_argument;

                if (o->flag)
                        lo[n++] = (struct option){o->flag, arg, NULL,
                                                  conf_opt_code(o)};
                if (o->short_flag && k + 3 < size) {
                        optstr[k++] = o->short_flag;
                        if (arg == required_argument)
                                optstr[k++] = ':';
                }
        }
        optstr[k] = '\0';
        lo[n] = (struct option){NULL, 0, NULL, 0};
}

/* "--db" or "-X": how a message names option o. */
static void conf_flag_name(const struct conf_option *o, char *buf,
                           size_t size)
{
        if (o->flag)
                snprintf(buf, size, "--%s", o->flag);
        else
                snprintf(buf, size, "-%c", o->short_flag);
}

/* -X KEY=VALUE: the key is everything before the first '=', the value
 * everything after it (it may hold '=' and may be empty). */
static int conf_kafka_arg(struct conf *c, const char *kv, char *errstr,
                          size_t errstr_size)
{
        const char *eq = strchr(kv, '=');
        char *key;
        int r;

        if (!eq) {
                snprintf(errstr, errstr_size, "\"%s\": expected key=value",
                         kv);
                return -1;
        }
        if (eq == kv) {
                snprintf(errstr, errstr_size, "empty property name");
                return -1;
        }
        key = strndup(kv, (size_t)(eq - kv));
        r = key ? conf_kafka_add(c, key, eq + 1, 0) : -1;
        free(key);
        if (r)
                snprintf(errstr, errstr_size, "out of memory");
        return r;
}

int conf_argv_parse(struct conf *c, int argc, char **argv, char *errstr,
                    size_t errstr_size)
{
        struct option lo[CONF__CNT + 1];
        const struct conf_option *o;
        const char *config = NULL, *cmd = argc > 0 ? argv[0] : "?";
        char optstr[64], what[64];
        int opt;

        conf_getopt_tables(lo, optstr, sizeof(optstr));
        /* First --config (and --help), so that flags override the file
         * wherever they stand. */
        optind = 0;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, optstr, lo, NULL)) != -1) {
                if (opt == conf_opt_code(&conf_options[CONF_HELP]))
                        return 1;
                if (opt == conf_opt_code(&conf_options[CONF_CONFIG]))
                        config = optarg;
        }
        if (config) {
                if (conf_set(c, CONF_CONFIG, config, "--config", errstr,
                             errstr_size) ||
                    conf_file_load(c, config, errstr, errstr_size))
                        return -1;
        }
        optind = 0;
        while ((opt = getopt_long(argc, argv, optstr, lo, NULL)) != -1) {
                const char *name = optind > 0 && optind <= argc
                                       ? argv[optind - 1]
                                       : "?";

                if (opt == ':') {
                        snprintf(errstr, errstr_size,
                                 "option '%s' needs a value", name);
                        return -1;
                }
                o = opt == '?' ? NULL : conf_by_code(opt);
                if (!o) {
                        snprintf(errstr, errstr_size,
                                 "unknown option '%s' (see `eosaudit %s "
                                 "--help`)",
                                 name, cmd);
                        return -1;
                }
                switch (o->id) {
                case CONF_CONFIG:
                        break;
                case CONF_QUIET:
                case CONF_VERBOSE:
                        c->num[o->id]++;
                        if (conf_set(c, CONF_LOG_LEVEL,
                                     o->id == CONF_QUIET ? "error" : "debug",
                                     "--log-level", errstr, errstr_size))
                                return -1;
                        break;
                case CONF_KAFKA:
                        if (conf_kafka_arg(c, optarg, errstr, errstr_size))
                                return -1;
                        break;
                default:
                        if (o->type == CONF_T_FLAG) {
                                c->num[o->id]++;
                                break;
                        }
                        conf_flag_name(o, what, sizeof(what));
                        if (conf_set(c, o->id, optarg, what, errstr,
                                     errstr_size))
                                return -1;
                        /* The command line overrides the file's line. */
                        c->line[o->id] = 0;
                        break;
                }
        }
        if (optind < argc) {
                snprintf(errstr, errstr_size, "unexpected argument '%s'",
                         argv[optind]);
                return -1;
        }
        if (!c->str[CONF_TOPICS]) {
                snprintf(errstr, errstr_size, "-t TOPIC is required%s",
                         config ? " (or topics in the configuration file)"
                                : "");
                return -1;
        }
        if (!c->str[CONF_BROKERS] && !c->str[CONF_KAFKA_PROPERTIES_FILE] &&
            !c->kafka_cnt) {
                snprintf(errstr, errstr_size, "-b BROKERS is required%s",
                         config ? " (or brokers in the configuration file)"
                                : "");
                return -1;
        }
        return 0;
}

/* ------------------------------------------------------------------ */
/* Documentation                                                       */
/* ------------------------------------------------------------------ */

/* Prints text word-wrapped to width: the first line continues a line
 * already at column col, the others start with prefix.  Backticks are
 * dropped unless markdown.  Returns the column reached. */
static size_t conf_wrap(FILE *f, const char *text, size_t col,
                        const char *prefix, size_t width, int markdown)
{
        const char *p = text;
        size_t plen = strlen(prefix);

        while (*p) {
                const char *w;
                size_t wl = 0, vis = 0, i;

                while (*p == ' ')
                        p++;
                w = p;
                while (p[wl] && p[wl] != ' ')
                        wl++;
                if (!wl)
                        break;
                for (i = 0; i < wl; i++)
                        vis += markdown || w[i] != '`';
                if (col > plen && col + 1 + vis > width) {
                        fprintf(f, "\n%s", prefix);
                        col = plen;
                } else if (col > plen) {
                        fputc(' ', f);
                        col++;
                }
                for (i = 0; i < wl; i++)
                        if (markdown || w[i] != '`')
                                fputc(w[i], f);
                col += vis;
                p = w + wl;
        }
        return col;
}

/* help with its first letter in upper case, into buf: a sentence. */
static const char *conf_sentence(const char *help, char *buf, size_t size)
{
        snprintf(buf, size, "%s", help);
        if (buf[0] >= 'a' && buf[0] <= 'z')
                buf[0] = (char)(buf[0] - 'a' + 'A');
        return buf;
}

/* The default of o as people read it. */
static const char *conf_default_text(const struct conf_option *o)
{
        return o->def ? o->def : o->def_doc;
}

/* The range of o as people read it, into buf. */
static const char *conf_range_text(const struct conf_option *o, char *buf,
                                   size_t size)
{
        switch (o->type) {
        case CONF_T_STRING:
                snprintf(buf, size, "%" PRId64 "..%" PRId64 " bytes", o->min,
                         o->max);
                break;
        case CONF_T_LIST:
                snprintf(buf, size, "%" PRId64 "..%" PRId64 " names", o->min,
                         o->max);
                break;
        case CONF_T_INT:
                if (o->max == INT64_MAX)
                        snprintf(buf, size, "%" PRId64 "..2^63-1", o->min);
                else
                        snprintf(buf, size, "%" PRId64 "..%" PRId64, o->min,
                                 o->max);
                break;
        case CONF_T_ENUM:
                conf_choices_text(o->choices, buf, size);
                break;
        case CONF_T_ADDR:
                snprintf(buf, size, "off, ADDR:PORT, [V6ADDR]:PORT");
                break;
        case CONF_T_KAFKA:
                snprintf(buf, size, "what librdkafka accepts");
                break;
        case CONF_T_FLAG:
                buf[0] = '\0';
                break;
        }
        return buf;
}

static const char *conf_type_name(enum conf_type t)
{
        static const char *const names[] = {"string", "list", "integer",
                                            "enum",   "address", "property",
                                            "flag"};
        return names[t];
}

void conf_usage_print(FILE *f, unsigned which)
{
        char left[64], text[1024];
        size_t i, col;

        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];
                const char *def = conf_default_text(o);
                const char *meta = o->metavar ? o->metavar : "";
                const char *sp = o->metavar ? " " : "";

                if (!(o->where & which))
                        continue;
                if (o->flag && o->short_flag)
                        snprintf(left, sizeof(left), "  -%c, --%s%s%s",
                                 o->short_flag, o->flag, sp, meta);
                else if (o->flag)
                        snprintf(left, sizeof(left), "      --%s%s%s",
                                 o->flag, sp, meta);
                else
                        snprintf(left, sizeof(left), "  -%c%s%s",
                                 o->short_flag, sp, meta);
                if (def && o->type != CONF_T_KAFKA)
                        snprintf(text, sizeof(text), "%s (default: %s)",
                                 o->help, def);
                else
                        snprintf(text, sizeof(text), "%s", o->help);
                fputs(left, f);
                col = strlen(left);
                if (col + 2 > CONF_HELP_COL)
                        fprintf(f, "\n%*s", CONF_HELP_COL, "");
                else
                        fprintf(f, "%*s", (int)(CONF_HELP_COL - col), "");
                conf_wrap(f, text, CONF_HELP_COL, conf_help_indent, 79, 0);
                fputc('\n', f);
        }
}

static void conf_doc_text(FILE *f)
{
        char range[256];
        size_t i;

        fputs("eosaudit configuration file (scan and serve --config FILE)\n"
              "\n",
              f);
        for (i = 0; i < sizeof(conf_doc_intro) / sizeof(conf_doc_intro[0]);
             i++) {
                conf_wrap(f, conf_doc_intro[i], 0, "", 76, 0);
                fputs("\n\n", f);
        }
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];
                const char *def = conf_default_text(o);

                if (!(o->where & CONF_FILE))
                        continue;
                fprintf(f, "%s = %s", o->key,
                        o->type == CONF_T_KAFKA ? "VALUE" : o->metavar);
                if (o->flag || o->short_flag) {
                        fputs("    (", f);
                        if (o->short_flag)
                                fprintf(f, "-%c%s", o->short_flag,
                                        o->flag ? ", " : "");
                        if (o->flag)
                                fprintf(f, "--%s", o->flag);
                        fputs(")", f);
                }
                fputs("\n    ", f);
                conf_wrap(f, o->help, 4, "    ", 76, 0);
                fprintf(f, "\n    type: %s; range: %s\n    default:",
                        conf_type_name(o->type),
                        conf_range_text(o, range, sizeof(range)));
                conf_wrap(f, def ? def : "none", 12, "    ", 76, 0);
                fputs("\n\n", f);
        }
}

/* The GitHub anchor of a heading: lower case, alphanumerics, '-' and
 * '_' kept, blanks to '-', everything else dropped. */
static void conf_md_anchor(const char *heading, char *buf, size_t size)
{
        size_t n = 0;
        const char *p;

        for (p = heading; *p && n + 1 < size; p++) {
                char ch = *p;
                if (ch >= 'A' && ch <= 'Z')
                        buf[n++] = (char)(ch - 'A' + 'a');
                else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                         ch == '-' || ch == '_')
                        buf[n++] = ch;
                else if (ch == ' ')
                        buf[n++] = '-';
        }
        buf[n] = '\0';
}

/* "`-b`, `--brokers`" into f. */
static void conf_md_flags(FILE *f, const struct conf_option *o)
{
        if (o->short_flag)
                fprintf(f, "`-%c`%s", o->short_flag, o->flag ? ", " : "");
        if (o->flag)
                fprintf(f, "`--%s`", o->flag);
        if (!o->short_flag && !o->flag)
                fputs("none", f);
}

static void conf_doc_markdown(FILE *f)
{
        char range[256], anchor[64], text[1024];
        size_t i;

        fputs("# The configuration file\n"
              "\n"
              "<!-- Generated by `eosaudit config-help --markdown` from the "
              "option table in\n"
              "     cmd/conf.c; tests/integration/t_93_deploy_lint.sh "
              "fails when they\n"
              "     differ. Do not edit by hand. -->\n"
              "\n",
              f);
        for (i = 0; i < sizeof(conf_doc_intro) / sizeof(conf_doc_intro[0]);
             i++) {
                conf_wrap(f, conf_doc_intro[i], 0, "", 76, 1);
                fputs("\n\n", f);
        }
        fputs("Every key, commented out at its default, is in\n"
              "[deploy/eosaudit.conf.example](../deploy/eosaudit.conf.example)"
              "\n(`eosaudit config-help --example`).\n\n"
              "| key | flag | type | range | default |\n"
              "| --- | --- | --- | --- | --- |\n",
              f);
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];
                const char *def = conf_default_text(o);

                if (!(o->where & CONF_FILE))
                        continue;
                conf_md_anchor(o->key, anchor, sizeof(anchor));
                fprintf(f, "| [`%s`](#%s) | ", o->key, anchor);
                conf_md_flags(f, o);
                fprintf(f, " | %s | %s | %s |\n", conf_type_name(o->type),
                        conf_range_text(o, range, sizeof(range)),
                        def ? def : "none");
        }
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];
                const char *def = conf_default_text(o);

                if (!(o->where & CONF_FILE))
                        continue;
                fprintf(f, "\n## %s\n\n", o->key);
                conf_wrap(f, conf_sentence(o->help, text, sizeof(text)), 0,
                          "", 76, 1);
                fputs(".\n\n- flag: ", f);
                conf_md_flags(f, o);
                fprintf(f, "\n- type: %s; range: %s\n- default: %s\n",
                        conf_type_name(o->type),
                        conf_range_text(o, range, sizeof(range)),
                        def ? def : "none");
        }
}

static void conf_doc_example(FILE *f)
{
        size_t i;

        fputs("# eosaudit.conf: the settings of `eosaudit serve --config "
              "FILE` (and scan).\n"
              "# Generated by `eosaudit config-help --example` from "
              "cmd/conf.c: every\n"
              "# key at its default (or an example value), commented out.\n"
              "#\n# ",
              f);
        for (i = 0; i < sizeof(conf_doc_intro) / sizeof(conf_doc_intro[0]);
             i++) {
                conf_wrap(f, conf_doc_intro[i], 2, "# ", 76, 0);
                fputs(i + 1 < sizeof(conf_doc_intro) /
                                      sizeof(conf_doc_intro[0])
                          ? "\n#\n# "
                          : "\n",
                      f);
        }
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];
                const char *def = conf_default_text(o);
                char range[256], text[1024];
                int n;

                if (!(o->where & CONF_FILE))
                        continue;
                fputs("\n# ", f);
                conf_wrap(f, conf_sentence(o->help, text, sizeof(text)), 2,
                          "# ", 76, 0);
                fputs(".\n", f);
                n = fprintf(f, "# Range: %s. Default:",
                            conf_range_text(o, range, sizeof(range)));
                conf_wrap(f, def ? def : "none", n > 0 ? (size_t)n : 0,
                          "# ", 76, 0);
                fputs(".\n", f);
                if (o->type == CONF_T_KAFKA) {
                        const char *p = o->example;

                        while (p && *p) {
                                const char *nl = strchr(p, '\n');
                                int w = nl ? (int)(nl - p) : (int)strlen(p);

                                fprintf(f, "#kafka.%.*s\n", w, p);
                                p = nl ? nl + 1 : NULL;
                        }
                } else {
                        fprintf(f, "#%s = %s\n", o->key,
                                o->def ? o->def : o->example);
                }
        }
}

void conf_doc_print(FILE *f, enum conf_doc fmt)
{
        switch (fmt) {
        case CONF_DOC_TEXT:
                conf_doc_text(f);
                break;
        case CONF_DOC_MARKDOWN:
                conf_doc_markdown(f);
                break;
        case CONF_DOC_EXAMPLE:
                conf_doc_example(f);
                break;
        }
}
