/*
 * conf.c - see conf.h: the values of the options, the configuration file
 * and the command line.  The table is in conf_table.c, --help and the
 * documentation in conf_doc.c.
 */
#include "conf.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <librdkafka/rdkafka.h>

#include "../auditor/audit/audit.h"
#include "../http/http.h"
#include "../base/kconf.h"
#include "conf_internal.h"

#define CONF_LINE_MAX 65536
/* getopt_long codes of options without a short flag. */
#define CONF_OPT_BASE 256

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
                if (o->def &&
                    conf_set(c, o->id, o->def, o->key ? o->key : o->flag, err,
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

uint64_t conf_u64(const struct conf *c, enum conf_id id)
{
        return (uint64_t)c->num[id];
}

double conf_dbl(const struct conf *c, enum conf_id id)
{
        return c->dbl[id];
}

unsigned conf_cmd_by_name(const char *name)
{
        static const struct {
                const char *name;
                unsigned bit;
        } cmds[] = {{"scan", CONF_SCAN},
                    {"serve", CONF_SERVE},
                    {"produce", CONF_PRODUCE},
                    {"demo", CONF_DEMO},
                    {"process", CONF_PROCESS}};
        size_t i;

        for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
                if (!strcmp(cmds[i].name, name))
                        return cmds[i].bit;
        return 0;
}

int conf_isset(const struct conf *c, enum conf_id id)
{
        return c->src[id] != CONF_SRC_DEFAULT;
}

/* The length of a CONF_T_KAFKA option's key prefix ("kafka." of
 * "kafka.PROPERTY"). */
static size_t conf_kafka_prefix_len(const struct conf_option *o)
{
        const char *dot = strchr(o->key, '.');

        return dot ? (size_t)(dot - o->key) + 1 : strlen(o->key);
}

const struct conf_option *conf_option_by_key(const char *key)
{
        size_t i;

        for (i = 0; i < CONF__CNT; i++)
                if (conf_options[i].key &&
                    conf_options[i].type == CONF_T_KAFKA &&
                    !strncmp(key, conf_options[i].key,
                             conf_kafka_prefix_len(&conf_options[i])))
                        return &conf_options[i];
        for (i = 0; i < CONF__CNT; i++)
                if (conf_options[i].key &&
                    conf_options[i].type != CONF_T_KAFKA &&
                    !strcmp(conf_options[i].key, key))
                        return &conf_options[i];
        return NULL;
}

int conf_kafka_kv(const struct conf *c, char ***kv)
{
        size_t i, k = 0;

        *kv = calloc(c->kafka_cnt + 1, sizeof(**kv));
        if (!*kv)
                return -1;
        for (i = 0; i < c->kafka_cnt; i++) {
                size_t n = strlen(c->kafka[i].key) +
                           strlen(c->kafka[i].value) + 2;

                if (c->kafka[i].opt == CONF_SOURCE_KAFKA)
                        continue;
                (*kv)[k] = malloc(n);
                if (!(*kv)[k])
                        return -1;
                snprintf((*kv)[k++], n, "%s=%s", c->kafka[i].key,
                         c->kafka[i].value);
        }
        return 0;
}

void conf_kafka_kv_free(char **kv)
{
        size_t i;

        for (i = 0; kv && kv[i]; i++)
                free(kv[i]);
        free(kv);
}

int conf_list_split(const char *s, char **buf, const char **items, size_t max)
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

void conf_choices_text(const char *choices, char *buf, size_t size)
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
        uint64_t u;
        double d;
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
        case CONF_T_U64:
                if (!kconf_parse_u64(value, 0, UINT64_MAX, &u)) {
                        c->num[id] = (int64_t)u;
                        break;
                }
                snprintf(expect, sizeof(expect),
                         "an integer from 0 to %" PRIu64, UINT64_MAX);
                goto bad;
        case CONF_T_DOUBLE:
                if (!kconf_parse_double(value, o->dmin, o->dmax, &d)) {
                        c->dbl[id] = d;
                        break;
                }
                if (isinf(o->dmax))
                        snprintf(expect, sizeof(expect), "a number >= %g",
                                 o->dmin);
                else
                        snprintf(expect, sizeof(expect),
                                 "a number from %g to %g", o->dmin, o->dmax);
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
                         "off, ADDR:PORT with a numeric address, e.g. "
                         "127.0.0.1:8080 or [::1]:8080, or :PORT");
                goto bad;
        case CONF_T_KAFKA:
        case CONF_T_FLAG:
                snprintf(errstr, errstr_size, "%s takes no value here", what);
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

int conf_kafka_add(struct conf *c, enum conf_id opt, const char *key,
                   const char *value, unsigned line)
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
        kv->opt = opt;
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
                         " (librdkafka properties take the prefix kafka., "
                         "or source-kafka. for the source cluster: "
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
                size_t plen = conf_kafka_prefix_len(o);
                const char *prop = key + plen;

                if (!*prop) {
                        snprintf(errstr, errstr_size,
                                 "no property name after '%.*s'", (int)plen,
                                 o->key);
                        return -1;
                }
                for (i = 0; i < c->kafka_cnt; i++)
                        if (c->kafka[i].line && c->kafka[i].opt == o->id &&
                            !strcmp(c->kafka[i].key, prop)) {
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
                if (conf_kafka_add(c, o->id, prop, value, line)) {
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

/* The option of command cmd that getopt_long code stands for. */
static const struct conf_option *conf_by_code(unsigned cmd, int code)
{
        size_t i;

        for (i = 0; i < CONF__CNT; i++)
                if ((conf_options[i].where & cmd) &&
                    conf_opt_code(&conf_options[i]) == code)
                        return &conf_options[i];
        return NULL;
}

static void conf_getopt_tables(unsigned cmd, struct option *lo, char *optstr,
                               size_t size)
{
        size_t i, n = 0, k = 0;

        optstr[k++] = ':';
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];
                int arg = o->type == CONF_T_FLAG ? no_argument
                                                 : required_argument;

                if (!(o->where & cmd))
                        continue;
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
static void conf_flag_name(const struct conf_option *o, char *buf, size_t size)
{
        if (o->flag)
                snprintf(buf, size, "--%s", o->flag);
        else
                snprintf(buf, size, "-%c", o->short_flag);
}

/* -X KEY=VALUE: the key is everything before the first '=', the value
 * everything after it (it may hold '=' and may be empty). */
static int conf_kafka_arg(struct conf *c, enum conf_id opt, const char *kv,
                          char *errstr, size_t errstr_size)
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
        r = key ? conf_kafka_add(c, opt, key, eq + 1, 0) : -1;
        free(key);
        if (r)
                snprintf(errstr, errstr_size, "out of memory");
        return r;
}

/* Whether -X or kafka.* sets key (to anything but ""). */
static int conf_kafka_has(const struct conf *c, const char *key)
{
        size_t i;

        for (i = 0; i < c->kafka_cnt; i++)
                if (c->kafka[i].opt != CONF_SOURCE_KAFKA &&
                    !strcmp(c->kafka[i].key, key) && c->kafka[i].value[0])
                        return 1;
        return 0;
}

/* What scan and serve cannot run without. */
static int conf_audit_required(const struct conf *c, const char *config,
                               char *errstr, size_t errstr_size)
{
        if (!c->str[CONF_TOPICS]) {
                snprintf(errstr, errstr_size, "-t TOPIC is required%s",
                         config ? " (or topics in the configuration file)"
                                : "");
                return -1;
        }
        /* -F FILE is read later (cli_kconf() says when it has none). */
        if (!c->str[CONF_BROKERS] && !c->str[CONF_KAFKA_PROPERTIES_FILE] &&
            !conf_kafka_has(c, "bootstrap.servers") &&
            !conf_kafka_has(c, "metadata.broker.list")) {
                snprintf(errstr, errstr_size, "-b BROKERS is required%s",
                         config ? " (or brokers in the configuration file)"
                                : "");
                return -1;
        }
        return 0;
}

int conf_argv_parse(struct conf *c, int argc, char **argv, char *errstr,
                    size_t errstr_size)
{
        struct option lo[CONF__CNT + 1];
        const struct conf_option *o;
        const char *config = NULL, *cmd = argc > 0 ? argv[0] : "?";
        unsigned bit = conf_cmd_by_name(cmd);
        char optstr[2 * CONF__CNT + 2], what[64];
        int opt;

        if (!bit) {
                snprintf(errstr, errstr_size, "unknown command '%s'", cmd);
                return -1;
        }
        /* scan and serve share their settings (one configuration file
         * serves both), so either takes the other's flags too; --help
         * lists each command's own. */
        if (bit & (CONF_SCAN | CONF_SERVE))
                bit = CONF_SCAN | CONF_SERVE;
        conf_getopt_tables(bit, lo, optstr, sizeof(optstr));
        /* First --config (and --help), so that flags override the file
         * wherever they stand. */
        optind = 0;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, optstr, lo, NULL)) != -1) {
                o = opt == '?' || opt == ':' ? NULL : conf_by_code(bit, opt);
                if (o && o->id == CONF_HELP)
                        return 1;
                if (o && o->id == CONF_CONFIG)
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
                o = opt == '?' ? NULL : conf_by_code(bit, opt);
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
                default:
                        if (o->type == CONF_T_KAFKA) {
                                if (conf_kafka_arg(c, o->id, optarg, errstr,
                                                   errstr_size))
                                        return -1;
                                break;
                        }
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
        if (bit & CONF_SCAN)
                return conf_audit_required(c, config, errstr, errstr_size);
        return 0;
}
