/*
 * test_conf.c - the option table of scan and serve (cmd/conf.c): the
 * table itself, every option read from a configuration file, ranges,
 * unknown and repeated keys, bad numbers, line numbers in errors, the
 * command line over the file, and the generated documentation.
 *
 * Configuration files are written into a temporary directory, removed
 * afterwards; error messages are compared whole, path and line included.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../auditor/audit/audit.h"
#include "../cmd/conf.h"
#include "../base/log.h"
#include "../http/http.h"

#define ARGS_MAX 64

static char tmpdir[64];
static char path[128];

static int group_setup(void **state)
{
        (void)state;
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_conf-XXXXXX");
        if (!mkdtemp(tmpdir))
                return -1;
        snprintf(path, sizeof(path), "%s/eosaudit.conf", tmpdir);
        return 0;
}

static int group_teardown(void **state)
{
        (void)state;
        unlink(path);
        rmdir(tmpdir);
        return 0;
}

/* Writes text (len bytes) to path. */
static void file_write(const char *text, size_t len)
{
        FILE *fp = fopen(path, "w");

        assert_non_null(fp);
        assert_int_equal(fwrite(text, 1, len, fp), len);
        assert_int_equal(fclose(fp), 0);
}

/* Loads text as a configuration file into a fresh *c; returns what
 * conf_file_load() returned, errstr holding its message. */
static int load(struct conf *c, const char *text, char *errstr,
                size_t errstr_size)
{
        file_write(text, strlen(text));
        assert_int_equal(conf_init(c), 0);
        errstr[0] = '\0';
        return conf_file_load(c, path, errstr, errstr_size);
}

/* ------------------------------------------------------------------ */
/* The table                                                           */
/* ------------------------------------------------------------------ */

/* The commands that take an option's flags (scan and serve share). */
static unsigned conf_family(unsigned where)
{
        where &= ~CONF_FILE;
        return where & (CONF_SCAN | CONF_SERVE)
                   ? where | CONF_SCAN | CONF_SERVE
                   : where;
}

static void test_table_is_sane(void **state)
{
        size_t i, j;

        (void)state;
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];

                assert_int_equal(o->id, i);
                assert_non_null(o->help);
                assert_true(strlen(o->help) > 5);
                /* Every option can be given somehow. */
                assert_true(o->key || o->flag || o->short_flag);
                assert_true(o->where & (CONF_SCAN | CONF_SERVE | CONF_PRODUCE |
                                        CONF_DEMO | CONF_PROCESS));
                if (o->where & CONF_FILE) {
                        /* ... and every setting has a default. */
                        assert_non_null(o->key);
                        assert_true(o->def || o->def_doc);
                        assert_true(o->def || o->example);
                        assert_ptr_equal(conf_option_by_key(o->key), o);
                } else {
                        assert_null(o->key);
                }
                if (o->type == CONF_T_INT || o->type == CONF_T_STRING ||
                    o->type == CONF_T_LIST)
                        assert_true(o->min <= o->max);
                if (o->type == CONF_T_ENUM) {
                        assert_non_null(o->choices);
                        assert_non_null(o->def);
                }
                if (o->type != CONF_T_FLAG)
                        assert_non_null(o->metavar);
                if (o->type == CONF_T_DOUBLE)
                        assert_true(o->dmin <= o->dmax);
                for (j = 0; j < i; j++) {
                        const struct conf_option *p = &conf_options[j];
                        if (o->key && p->key)
                                assert_string_not_equal(o->key, p->key);
                        /* A flag names one option within a command (scan
                         * and serve take each other's). */
                        if (!(conf_family(o->where) & conf_family(p->where)))
                                continue;
                        if (o->flag && p->flag)
                                assert_string_not_equal(o->flag, p->flag);
                        if (o->short_flag)
                                assert_int_not_equal(o->short_flag,
                                                     p->short_flag);
                }
        }
        assert_null(conf_option_by_key("json"));
        assert_null(conf_option_by_key("config"));
        assert_null(conf_option_by_key("nope"));
        assert_ptr_equal(conf_option_by_key("kafka.acks"),
                         &conf_options[CONF_KAFKA]);
        assert_ptr_equal(conf_option_by_key("source-kafka.acks"),
                         &conf_options[CONF_SOURCE_KAFKA]);
        assert_ptr_equal(conf_option_by_key("source-kafka-properties-file"),
                         &conf_options[CONF_SOURCE_PROPERTIES_FILE]);
}

/* The table's defaults are the ones the audit and the server use. */
static void test_defaults_match_modules(void **state)
{
        struct audit_conf ac;
        struct conf c;

        (void)state;
        assert_int_equal(conf_init(&c), 0);
        audit_conf_defaults(&ac);
        assert_int_equal(conf_int(&c, CONF_GAP_GRACE_RECORDS),
                         ac.dedup.gap_grace_records);
        assert_int_equal(conf_int(&c, CONF_GAP_GRACE_MS),
                         ac.dedup.gap_grace_ms);
        assert_int_equal(conf_int(&c, CONF_IDLE_TTL_MS), ac.dedup.idle_ttl_ms);
        assert_int_equal(conf_int(&c, CONF_MAX_OPEN_GAPS),
                         ac.dedup.max_open_gaps);
        assert_int_equal(conf_int(&c, CONF_COMMIT_INTERVAL_MS),
                         ac.commit_interval_ms);
        assert_int_equal(conf_int(&c, CONF_COMMIT_RECORDS), ac.commit_records);
        assert_int_equal(conf_int(&c, CONF_STALL_TIMEOUT_MS),
                         ac.stall_timeout_ms);
        assert_int_equal(conf_int(&c, CONF_METADATA_REFRESH_MS),
                         ac.metadata_refresh_ms);
        assert_string_equal(conf_str(&c, CONF_ISOLATION), "read_committed");
        assert_string_equal(conf_str(&c, CONF_LOG_LEVEL), "info");
        assert_int_equal(conf_int(&c, CONF_LOG_LEVEL), LOG_INFO);
        assert_non_null(
            strstr(conf_options[CONF_LISTEN].def_doc, HTTP_LISTEN_DEFAULT));
        assert_null(conf_str(&c, CONF_BROKERS));
        assert_null(conf_str(&c, CONF_TOPICS));
        assert_null(conf_str(&c, CONF_DB));
        assert_null(conf_str(&c, CONF_LISTEN));
        assert_false(conf_isset(&c, CONF_ISOLATION));
        conf_release(&c);
}

/* main.c passes the index of log-level to log_set_level(). */
static void test_log_levels_in_enum_order(void **state)
{
        static const struct {
                const char *name;
                enum log_level level;
        } cases[] = {
            {"error", LOG_ERROR},
            {"warn", LOG_WARN},
            {"info", LOG_INFO},
            {"debug", LOG_DEBUG},
        };
        char errstr[256];
        struct conf c;
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                assert_int_equal(conf_init(&c), 0);
                assert_int_equal(conf_set(&c, CONF_LOG_LEVEL, cases[i].name,
                                          "log-level", errstr, sizeof(errstr)),
                                 0);
                assert_int_equal(conf_int(&c, CONF_LOG_LEVEL), cases[i].level);
                conf_release(&c);
        }
}

/* ------------------------------------------------------------------ */
/* Every option from a file                                            */
/* ------------------------------------------------------------------ */

/* One line per case; want_str NULL: an integer setting, want_num. */
static const struct {
        enum conf_id id;
        const char *line;
        const char *want_str;
        int64_t want_num;
} set_cases[] = {
    {CONF_BROKERS, "brokers = k1:9092,k2:9092", "k1:9092,k2:9092", 0},
    {CONF_TOPICS, "topics=orders,,payments", "orders,,payments", 0},
    {CONF_DB, "  db\t=  /var/lib/eosaudit/a b.db  ",
     "/var/lib/eosaudit/a b.db", 0},
    {CONF_ISOLATION, "isolation = read_uncommitted", "read_uncommitted", 1},
    {CONF_GAP_GRACE_RECORDS, "gap-grace-records = 0", NULL, 0},
    {CONF_GAP_GRACE_MS, "gap-grace-ms = 9223372036854775807", NULL, INT64_MAX},
    {CONF_IDLE_TTL_MS, "idle-ttl-ms = 60000", NULL, 60000},
    {CONF_MAX_OPEN_GAPS, "max-open-gaps = 1000000", NULL, 1000000},
    {CONF_DEDUP_KEY, "dedup-key = header:ce_id", "header:ce_id", 0},
    {CONF_ID_WINDOW, "id-window = 10000000", NULL, 10000000},
    {CONF_ID_WINDOW_AGE_MS, "id-window-age-ms = 0", NULL, 0},
    {CONF_SOURCE, "source = orders,payments", "orders,payments", 0},
    {CONF_PROCESSOR_GROUP, "processor-group = enricher", "enricher", 0},
    {CONF_FLOW_EXPECT, "flow-expect = at-least-one", "at-least-one", 2},
    {CONF_FLOW_DUE_RECORDS, "flow-due-records = 0", NULL, 0},
    {CONF_FLOW_DUE_MS, "flow-due-ms = 5000", NULL, 5000},
    {CONF_FLOW_MAX_IDS, "flow-max-ids = 1000000000", NULL, 1000000000},
    {CONF_PROCESSOR_OFFSETS_TOPIC,
     "processor-offsets-topic = mm2-offsets.a.internal",
     "mm2-offsets.a.internal", 0},
    {CONF_SOURCE_BOOTSTRAP, "source-bootstrap = p1:9092,p2:9092",
     "p1:9092,p2:9092", 0},
    {CONF_SOURCE_PROPERTIES_FILE,
     "source-kafka-properties-file = p.properties", "p.properties", 0},
    {CONF_SOURCE_KAFKA, "source-kafka.sasl.password = s3cr#t",
     "sasl.password=s3cr#t", 0},
    {CONF_COMMIT_INTERVAL_MS, "commit-interval-ms = 1", NULL, 1},
    {CONF_COMMIT_RECORDS, "commit-records = 5000", NULL, 5000},
    {CONF_THREADS, "threads = 0", NULL, 0},
    {CONF_THREADS, "threads = 64", NULL, 64},
    {CONF_STALL_TIMEOUT_MS, "stall-timeout-ms = 86400000", NULL, 86400000},
    {CONF_METADATA_REFRESH_MS, "metadata-refresh-ms = 0", NULL, 0},
    {CONF_METADATA_REFRESH_MS, "metadata-refresh-ms = 5000", NULL, 5000},
    {CONF_LISTEN, "listen = [::1]:0", "[::1]:0", 0},
    {CONF_LISTEN, "listen = off", "off", 0},
    {CONF_LISTEN, "listen = 0.0.0.0:9100", "0.0.0.0:9100", 0},
    {CONF_HTTP_TOKEN_FILE, "http-token-file = /run/credentials/token",
     "/run/credentials/token", 0},
    {CONF_TLS_CERT, "tls-cert = cert.pem", "cert.pem", 0},
    {CONF_TLS_KEY, "tls-key = key.pem", "key.pem", 0},
    {CONF_LOG_LEVEL, "log-level = warn", "warn", LOG_WARN},
    {CONF_KAFKA_PROPERTIES_FILE, "kafka-properties-file = k.properties",
     "k.properties", 0},
    {CONF_KAFKA, "kafka.sasl.password = p#ss = word",
     "sasl.password=p#ss = word", 0},
    {CONF_TXN_MANIFESTS, "txn-manifests = eos-txn", "eos-txn", 0},
    {CONF_GROUP, "group = auditors", "auditors", 0},
    {CONF_GROUP_MEMBER, "group-member = a-1", "a-1", 0},
    {CONF_GROUP_INSTANCE_ID, "group-instance-id = auditor-1", "auditor-1", 0},
    {CONF_GROUP_REPLICATION, "group-replication = 3", NULL, 3},
    {CONF_GROUP_IDS_PARTITIONS, "group-ids-partitions = 6", NULL, 6},
};

static void test_every_option_from_file(void **state)
{
        char errstr[512], text[512];
        int covered[CONF__CNT] = {0};
        struct conf c;
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(set_cases) / sizeof(set_cases[0]); i++) {
                enum conf_id id = set_cases[i].id;

                /* Line 3, after a comment and a blank line. */
                snprintf(text, sizeof(text), "# eosaudit\n\n%s\n",
                         set_cases[i].line);
                if (load(&c, text, errstr, sizeof(errstr))) {
                        print_error("case %zu (%s): %s\n", i,
                                    set_cases[i].line, errstr);
                        fail();
                }
                covered[id] = 1;
                if (conf_options[id].type == CONF_T_KAFKA) {
                        char kv[256];
                        assert_int_equal(c.kafka_cnt, 1);
                        assert_int_equal(c.kafka[0].line, 3);
                        assert_int_equal(c.kafka[0].opt, id);
                        snprintf(kv, sizeof(kv), "%s=%s", c.kafka[0].key,
                                 c.kafka[0].value);
                        assert_string_equal(kv, set_cases[i].want_str);
                } else {
                        assert_int_equal(c.line[id], 3);
                        assert_true(conf_isset(&c, id));
                        assert_int_equal(c.src[id], CONF_SRC_FILE);
                        if (set_cases[i].want_str)
                                assert_string_equal(conf_str(&c, id),
                                                    set_cases[i].want_str);
                        if (conf_options[id].type == CONF_T_INT ||
                            conf_options[id].type == CONF_T_ENUM)
                                assert_int_equal(conf_int(&c, id),
                                                 set_cases[i].want_num);
                }
                conf_release(&c);
        }
        for (i = 0; i < CONF__CNT; i++)
                if ((conf_options[i].where & CONF_FILE) && !covered[i]) {
                        print_error("no case sets '%s'\n",
                                    conf_options[i].key);
                        fail();
                }
}

/* A command-line-only INT option one below its minimum and one above
 * its maximum, as its flag would set it. */
static void flag_out_of_range(const struct conf_option *o)
{
        char errstr[512], flag[64], want[512], bad[2][32];
        struct conf c;
        size_t k;

        snprintf(flag, sizeof(flag), "--%s", o->flag);
        snprintf(bad[0], sizeof(bad[0]), "%" PRId64, o->min - 1);
        if (o->max == INT64_MAX)
                snprintf(bad[1], sizeof(bad[1]), "9223372036854775808");
        else
                snprintf(bad[1], sizeof(bad[1]), "%" PRId64, o->max + 1);
        for (k = 0; k < 2; k++) {
                assert_int_equal(conf_init(&c), 0);
                assert_int_equal(conf_set(&c, o->id, bad[k], flag, errstr,
                                          sizeof(errstr)),
                                 -1);
                snprintf(want, sizeof(want),
                         "invalid value '%s' for %s (expected an integer "
                         "from %" PRId64 " to %" PRId64 ")",
                         bad[k], flag, o->min, o->max);
                assert_string_equal(errstr, want);
                assert_false(conf_isset(&c, o->id));
                conf_release(&c);
        }
}

/* Each INT option one below its minimum and one above its maximum,
 * generated from the table. */
static void test_int_out_of_range(void **state)
{
        char errstr[512], text[256], want[512], bad[2][32];
        struct conf c;
        size_t i, k;

        (void)state;
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];

                if (o->type != CONF_T_INT)
                        continue;
                if (!o->key) {
                        flag_out_of_range(o);
                        continue;
                }
                snprintf(bad[0], sizeof(bad[0]), "%" PRId64, o->min - 1);
                if (o->max == INT64_MAX)
                        snprintf(bad[1], sizeof(bad[1]),
                                 "9223372036854775808");
                else
                        snprintf(bad[1], sizeof(bad[1]), "%" PRId64,
                                 o->max + 1);
                for (k = 0; k < 2; k++) {
                        snprintf(text, sizeof(text), "%s = %s\n", o->key,
                                 bad[k]);
                        assert_int_equal(load(&c, text, errstr,
                                              sizeof(errstr)),
                                         -1);
                        snprintf(want, sizeof(want),
                                 "%s:1: invalid value '%s' for %s (expected "
                                 "an integer from %" PRId64 " to %" PRId64 ")",
                                 path, bad[k], o->key, o->min, o->max);
                        assert_string_equal(errstr, want);
                        assert_false(conf_isset(&c, o->id));
                        conf_release(&c);
                }
        }
}

/* Whole files that must fail, and the message after "PATH:". */
static const struct {
        const char *text;
        const char *want;
} bad_files[] = {
    {"brokers = a\nfoo = 1\n", "2: unknown key 'foo'"},
    {"dedup-key = header:\n",
     "1: invalid value 'header:' for dedup-key (expected msgid, "
     "header:NAME, key or value-hash)"},
    {"dedup-key = Key\n",
     "1: invalid value 'Key' for dedup-key (expected msgid, "
     "header:NAME, key or value-hash)"},
    {"# x\nbrokers = a\n\nbrokers = b\n",
     "4: duplicate key 'brokers' (first on line 2)"},
    {"commit-records = 10k\n",
     "1: invalid value '10k' for commit-records (expected an integer "
     "from 1 to 100000000)"},
    {"commit-records = 1000 # every 1000\n",
     "1: invalid value '1000 # every 1000' for commit-records (expected "
     "an integer from 1 to 100000000)"},
    {"commit-records = 0x10\n",
     "1: invalid value '0x10' for commit-records (expected an integer "
     "from 1 to 100000000)"},
    {"commit-records = -1\n",
     "1: invalid value '-1' for commit-records (expected an integer "
     "from 1 to 100000000)"},
    {"commit-records = \n",
     "1: invalid value '' for commit-records (expected an integer from "
     "1 to 100000000)"},
    {"gap-grace-ms = 99999999999999999999\n",
     "1: invalid value '99999999999999999999' for gap-grace-ms (expected "
     "an integer from 0 to 9223372036854775807)"},
    {"\n\nbrokers\n", "3: expected key = value"},
    {" = x\n", "1: no key before '='"},
    {"db =\n", "1: invalid value '' for db (expected 1 to 4095 bytes)"},
    {"topics = ,,\n",
     "1: invalid value ',,' for topics (expected 1 to 64 comma-separated "
     "names)"},
    {"isolation = READ_COMMITTED\n",
     "1: invalid value 'READ_COMMITTED' for isolation (expected "
     "read_committed or read_uncommitted)"},
    {"log-level = trace\n",
     "1: invalid value 'trace' for log-level (expected error, warn, info "
     "or debug)"},
    {"listen = localhost\n",
     "1: invalid value 'localhost' for listen (expected off, ADDR:PORT "
     "with a numeric address, e.g. 127.0.0.1:8080 or [::1]:8080, or "
     ":PORT)"},
    {"listen = example.com:80\n",
     "1: invalid value 'example.com:80' for listen (expected off, "
     "ADDR:PORT with a numeric address, e.g. 127.0.0.1:8080 or "
     "[::1]:8080, or :PORT)"},
    {"gap_grace_ms = 1\n",
     "1: unknown key 'gap_grace_ms' (did you mean 'gap-grace-ms'?)"},
    {"bootstrap.servers = a:1\n",
     "1: unknown key 'bootstrap.servers' (librdkafka properties take the "
     "prefix kafka., or source-kafka. for the source cluster: "
     "kafka.bootstrap.servers)"},
    {"json = true\n",
     "1: unknown key 'json' (a command-line flag, not a setting)"},
    {"config = other.conf\n",
     "1: unknown key 'config' (a command-line flag, not a setting)"},
    {"kafka. = 1\n", "1: no property name after 'kafka.'"},
    {"source-kafka. = 1\n", "1: no property name after 'source-kafka.'"},
    {"source-kafka.acks = all\nsource-kafka.acks = 1\n",
     "2: duplicate key 'source-kafka.acks' (first on line 1)"},
    {"kafka.no.such.property = 1\n",
     "1: kafka.no.such.property: No such configuration property: "
     "\"no.such.property\""},
    {"kafka.acks = all\nkafka.acks = 1\n",
     "2: duplicate key 'kafka.acks' (first on line 1)"},
    {"kafka.fetch.wait.max.ms = lots\n",
     "1: kafka.fetch.wait.max.ms: Invalid value for configuration "
     "property \"fetch.wait.max.ms\""},
    /* CRLF files count lines the same. */
    {"brokers = a\r\n# c\r\nmax-open-gaps = 0\r\n",
     "3: invalid value '0' for max-open-gaps (expected an integer from 1 "
     "to 1000000)"},
};

static void test_bad_files(void **state)
{
        char errstr[512], want[512];
        struct conf c;
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
                if (load(&c, bad_files[i].text, errstr, sizeof(errstr)) !=
                    -1) {
                        print_error("case %zu loaded: %s", i,
                                    bad_files[i].text);
                        fail();
                }
                snprintf(want, sizeof(want), "%s:%s", path, bad_files[i].want);
                if (strncmp(errstr, want, strlen(want))) {
                        print_error("case %zu:\n got  %s\n want %s\n", i,
                                    errstr, want);
                        fail();
                }
                conf_release(&c);
        }
}

static void test_file_edge_cases(void **state)
{
        static const char nul[] = "brokers = a\ntopics = b\0c\n";
        char errstr[512], want[512], *longline;
        struct conf c;
        size_t n = 70000;

        (void)state;
        /* An empty file, comments only, no trailing newline. */
        assert_int_equal(load(&c, "", errstr, sizeof(errstr)), 0);
        conf_release(&c);
        assert_int_equal(load(&c, "  # only\n\t\n#x = 1", errstr,
                              sizeof(errstr)),
                         0);
        conf_release(&c);
        assert_int_equal(load(&c, "topics = t", errstr, sizeof(errstr)), 0);
        assert_string_equal(conf_str(&c, CONF_TOPICS), "t");
        conf_release(&c);

        /* A NUL byte. */
        file_write(nul, sizeof(nul) - 1);
        assert_int_equal(conf_init(&c), 0);
        assert_int_equal(conf_file_load(&c, path, errstr, sizeof(errstr)), -1);
        snprintf(want, sizeof(want), "%s:2: NUL byte", path);
        assert_string_equal(errstr, want);
        conf_release(&c);

        /* An absurdly long line. */
        longline = malloc(n + 16);
        assert_non_null(longline);
        memcpy(longline, "db = ", 5);
        memset(longline + 5, 'x', n);
        memcpy(longline + 5 + n, "\n", 2);
        assert_int_equal(load(&c, longline, errstr, sizeof(errstr)), -1);
        snprintf(want, sizeof(want), "%s:1: line longer than 65536 bytes",
                 path);
        assert_string_equal(errstr, want);
        conf_release(&c);
        free(longline);

        /* A file that is not there: the path, no line. */
        assert_int_equal(conf_init(&c), 0);
        assert_int_equal(conf_file_load(&c, "/nonexistent/eosaudit.conf",
                                        errstr, sizeof(errstr)),
                         -1);
        assert_string_equal(errstr,
                            "/nonexistent/eosaudit.conf: No such file or "
                            "directory");
        conf_release(&c);
}

/* STRING and LIST bounds through conf_set(), as a flag would. */
static void test_string_and_list_bounds(void **state)
{
        char errstr[512], list[1024];
        struct conf c;
        size_t i, len = 0;

        (void)state;
        assert_int_equal(conf_init(&c), 0);
        for (i = 0; i < 65; i++)
                len += (size_t)snprintf(list + len, sizeof(list) - len,
                                        "%st%zu", i ? "," : "", i);
        assert_int_equal(conf_set(&c, CONF_TOPICS, list, "--topic", errstr,
                                  sizeof(errstr)),
                         -1);
        assert_non_null(strstr(errstr, "for --topic (expected 1 to 64 "
                                       "comma-separated names)"));
        /* 64 topics are fine. */
        *strrchr(list, ',') = '\0';
        assert_int_equal(conf_set(&c, CONF_TOPICS, list, "--topic", errstr,
                                  sizeof(errstr)),
                         0);
        assert_int_equal(conf_set(&c, CONF_DB, "", "--db", errstr,
                                  sizeof(errstr)),
                         -1);
        assert_string_equal(errstr,
                            "invalid value '' for --db (expected 1 to 4095 "
                            "bytes)");
        conf_release(&c);
}

/* ------------------------------------------------------------------ */
/* The command line                                                    */
/* ------------------------------------------------------------------ */

/* Runs conf_argv_parse() on a NULL-terminated list of arguments after
 * the command name "serve". */
static int parse(struct conf *c, char *errstr, size_t errstr_size, ...)
{
        char *argv[ARGS_MAX + 1];
        int argc = 0;
        va_list ap;
        const char *a;

        argv[argc++] = (char *)"serve";
        va_start(ap, errstr_size);
        while ((a = va_arg(ap, const char *)) && argc < ARGS_MAX)
                argv[argc++] = (char *)a;
        va_end(ap);
        argv[argc] = NULL;
        assert_int_equal(conf_init(c), 0);
        errstr[0] = '\0';
        return conf_argv_parse(c, argc, argv, errstr, errstr_size);
}

/* Every flag the commands had before the table, as tests and scripts
 * call them. */
static void test_every_flag(void **state)
{
        char errstr[512];
        struct conf c;
        int r;

        (void)state;
        r = parse(&c, errstr, sizeof(errstr), "-b", "h:1", "-t", "a,b", "--db",
                  "x.db", "--json", "--isolation", "read_uncommitted",
                  "--gap-grace-records", "7", "--gap-grace-ms", "8",
                  "--idle-ttl-ms", "9", "--max-open-gaps", "10",
                  "--commit-interval-ms", "11", "--commit-records", "12",
                  "--stall-timeout-ms", "13", "--no-progress", "--listen",
                  "127.0.0.1:0", "--http-token-file", "tok", "--tls-cert",
                  "c.pem", "--tls-key", "k.pem", "-X", "acks=all", "-F",
                  "p.props", "-q", "--log-level", "warn", NULL);
        if (r)
                print_error("%s\n", errstr);
        assert_int_equal(r, 0);
        assert_string_equal(conf_str(&c, CONF_BROKERS), "h:1");
        assert_string_equal(conf_str(&c, CONF_TOPICS), "a,b");
        assert_string_equal(conf_str(&c, CONF_DB), "x.db");
        assert_int_equal(conf_int(&c, CONF_JSON), 1);
        assert_int_equal(conf_int(&c, CONF_ISOLATION), 1);
        assert_int_equal(conf_int(&c, CONF_GAP_GRACE_RECORDS), 7);
        assert_int_equal(conf_int(&c, CONF_GAP_GRACE_MS), 8);
        assert_int_equal(conf_int(&c, CONF_IDLE_TTL_MS), 9);
        assert_int_equal(conf_int(&c, CONF_MAX_OPEN_GAPS), 10);
        assert_int_equal(conf_int(&c, CONF_COMMIT_INTERVAL_MS), 11);
        assert_int_equal(conf_int(&c, CONF_COMMIT_RECORDS), 12);
        assert_int_equal(conf_int(&c, CONF_STALL_TIMEOUT_MS), 13);
        assert_int_equal(conf_int(&c, CONF_NO_PROGRESS), 1);
        assert_string_equal(conf_str(&c, CONF_LISTEN), "127.0.0.1:0");
        assert_string_equal(conf_str(&c, CONF_HTTP_TOKEN_FILE), "tok");
        assert_string_equal(conf_str(&c, CONF_TLS_CERT), "c.pem");
        assert_string_equal(conf_str(&c, CONF_TLS_KEY), "k.pem");
        assert_int_equal(c.kafka_cnt, 1);
        assert_string_equal(c.kafka[0].key, "acks");
        assert_string_equal(c.kafka[0].value, "all");
        assert_int_equal(c.kafka[0].line, 0);
        assert_string_equal(conf_str(&c, CONF_KAFKA_PROPERTIES_FILE),
                            "p.props");
        /* -q then --log-level warn: the last wins. */
        assert_int_equal(conf_int(&c, CONF_LOG_LEVEL), LOG_WARN);
        conf_release(&c);

        /* Long forms with '=' and the short -v. */
        r = parse(&c, errstr, sizeof(errstr), "--brokers=h:2", "--topic=t",
                  "--db=y.db", "-v", NULL);
        assert_int_equal(r, 0);
        assert_string_equal(conf_str(&c, CONF_BROKERS), "h:2");
        assert_string_equal(conf_str(&c, CONF_DB), "y.db");
        assert_int_equal(conf_int(&c, CONF_LOG_LEVEL), LOG_DEBUG);
        conf_release(&c);
}

/* The file, then flags over it, wherever --config stands. */
static void test_flags_override_file(void **state)
{
        char errstr[512];
        struct conf c;
        int r;

        (void)state;
        file_write("brokers = file:1\ntopics = from-file\n"
                   "commit-records = 500\ngap-grace-ms = 1000\n"
                   "log-level = warn\nkafka.acks = 1\nkafka.linger.ms = 5\n",
                   strlen("brokers = file:1\ntopics = from-file\n"
                          "commit-records = 500\ngap-grace-ms = 1000\n"
                          "log-level = warn\nkafka.acks = 1\n"
                          "kafka.linger.ms = 5\n"));
        r = parse(&c, errstr, sizeof(errstr), "--commit-records", "7", "-X",
                  "acks=all", "--config", path, "-b", "cli:2", NULL);
        if (r)
                print_error("%s\n", errstr);
        assert_int_equal(r, 0);
        assert_string_equal(conf_str(&c, CONF_CONFIG), path);
        assert_string_equal(conf_str(&c, CONF_BROKERS), "cli:2");
        assert_int_equal(c.src[CONF_BROKERS], CONF_SRC_CLI);
        assert_int_equal(c.line[CONF_BROKERS], 0);
        assert_string_equal(conf_str(&c, CONF_TOPICS), "from-file");
        assert_int_equal(c.src[CONF_TOPICS], CONF_SRC_FILE);
        assert_int_equal(conf_int(&c, CONF_COMMIT_RECORDS), 7);
        assert_int_equal(conf_int(&c, CONF_GAP_GRACE_MS), 1000);
        assert_int_equal(conf_int(&c, CONF_LOG_LEVEL), LOG_WARN);
        /* File lines first, -X after them: librdkafka applies them in this
         * order, so -X wins. */
        assert_int_equal(c.kafka_cnt, 3);
        assert_string_equal(c.kafka[0].key, "acks");
        assert_string_equal(c.kafka[0].value, "1");
        assert_int_equal(c.kafka[0].line, 6);
        assert_string_equal(c.kafka[1].key, "linger.ms");
        assert_string_equal(c.kafka[2].key, "acks");
        assert_string_equal(c.kafka[2].value, "all");
        assert_int_equal(c.kafka[2].line, 0);
        conf_release(&c);

        /* -q over the file's log-level. */
        r = parse(&c, errstr, sizeof(errstr), "--config", path, "-q", NULL);
        assert_int_equal(r, 0);
        assert_int_equal(conf_int(&c, CONF_LOG_LEVEL), LOG_ERROR);
        conf_release(&c);
}

/* Command lines that must fail, and their message. */
static const struct {
        const char *args[8];
        const char *want;
} bad_args[] = {
    {{"-b", "h", NULL}, "-t TOPIC is required"},
    {{"-t", "a", NULL}, "-b BROKERS is required"},
    /* Any -X used to count as brokers: the scan then failed later,
         * trying to reach "". */
    {{"-t", "a", "-X", "client.id=foo", NULL}, "-b BROKERS is required"},
    {{"-t", "a", "-X", "bootstrap.servers=", NULL}, "-b BROKERS is required"},
    {{"-t", "a", "--bogus", NULL},
     "unknown option '--bogus' (see `eosaudit serve --help`)"},
    {{"-t", "a", "--db", NULL}, "option '--db' needs a value"},
    {{"-t", "a", "-b", "h", "stray", NULL}, "unexpected argument 'stray'"},
    {{"-t", "a", "-b", "h", "--max-open-gaps", "0", NULL},
     "invalid value '0' for --max-open-gaps (expected an integer from 1 "
     "to 1000000)"},
    {{"-t", "a", "-b", "h", "--commit-interval-ms", "1e3", NULL},
     "invalid value '1e3' for --commit-interval-ms (expected an integer "
     "from 1 to 3600000)"},
    {{"-t", "a", "-b", "h", "--isolation", "none", NULL},
     "invalid value 'none' for --isolation (expected read_committed or "
     "read_uncommitted)"},
    {{"-t", "a", "-b", "h", "-X", "acks", NULL},
     "\"acks\": expected key=value"},
    {{"-t", "a", "-b", "h", "-X", "=1", NULL}, "empty property name"},
    {{"-t", "a", "-b", "h", "--config", "/nonexistent.conf", NULL},
     "/nonexistent.conf: No such file or directory"},
    {{"-t", "a", "-b", "h", "--config", NULL},
     "option '--config' needs a value"},
};

static void test_bad_args(void **state)
{
        char errstr[512];
        struct conf c;
        size_t i;
        int r;

        (void)state;
        for (i = 0; i < sizeof(bad_args) / sizeof(bad_args[0]); i++) {
                const char *const *a = bad_args[i].args;
                r = parse(&c, errstr, sizeof(errstr), a[0], a[1], a[2], a[3],
                          a[4], a[5], a[6], a[7]);
                if (r != -1 || strcmp(errstr, bad_args[i].want)) {
                        print_error("case %zu: r %d\n got  %s\n want %s\n", i,
                                    r, errstr, bad_args[i].want);
                        fail();
                }
                conf_release(&c);
        }
}

static void test_required_settings(void **state)
{
        char errstr[512];
        struct conf c;

        (void)state;
        /* Brokers may come from -X, -F or kafka.* instead of -b. */
        assert_int_equal(parse(&c, errstr, sizeof(errstr), "-t", "a", "-X",
                               "bootstrap.servers=h:1", NULL),
                         0);
        conf_release(&c);
        assert_int_equal(parse(&c, errstr, sizeof(errstr), "-t", "a", "-X",
                               "metadata.broker.list=h:1", NULL),
                         0);
        conf_release(&c);
        assert_int_equal(parse(&c, errstr, sizeof(errstr), "-t", "a", "-F",
                               "k.properties", NULL),
                         0);
        conf_release(&c);
        file_write("kafka.bootstrap.servers = h:1\n",
                   strlen("kafka.bootstrap.servers = h:1\n"));
        assert_int_equal(parse(&c, errstr, sizeof(errstr), "--config", path,
                               "-t", "a", NULL),
                         0);
        conf_release(&c);
        /* With a file, the message names the key too. */
        assert_int_equal(parse(&c, errstr, sizeof(errstr), "--config", path,
                               NULL),
                         -1);
        assert_string_equal(errstr, "-t TOPIC is required (or topics in the "
                                    "configuration file)");
        conf_release(&c);
        /* --help wins, before the file is read. */
        assert_int_equal(parse(&c, errstr, sizeof(errstr), "--config",
                               "/nonexistent.conf", "--help", NULL),
                         1);
        conf_release(&c);
}

/* A bad line of the file is reported as such even with flags around. */
static void test_file_error_through_argv(void **state)
{
        char errstr[512], want[512];
        struct conf c;

        (void)state;
        file_write("brokers = h:1\ntopics = a\n\nidle-ttl-ms = soon\n",
                   strlen("brokers = h:1\ntopics = a\n\nidle-ttl-ms = "
                          "soon\n"));
        assert_int_equal(parse(&c, errstr, sizeof(errstr), "--idle-ttl-ms",
                               "5", "--config", path, NULL),
                         -1);
        snprintf(want, sizeof(want),
                 "%s:4: invalid value 'soon' for idle-ttl-ms (expected an "
                 "integer from 0 to 9223372036854775807)",
                 path);
        assert_string_equal(errstr, want);
        conf_release(&c);
}

/* ------------------------------------------------------------------ */
/* Documentation                                                       */
/* ------------------------------------------------------------------ */

static char *doc(enum conf_doc fmt, size_t *len)
{
        char *buf = NULL;
        FILE *f = open_memstream(&buf, len);

        assert_non_null(f);
        conf_doc_print(f, fmt);
        assert_int_equal(fclose(f), 0);
        return buf;
}

static void test_docs_name_every_setting(void **state)
{
        static const enum conf_doc fmts[] = {CONF_DOC_TEXT, CONF_DOC_MARKDOWN,
                                             CONF_DOC_EXAMPLE};
        char needle[128], *text = NULL;
        size_t f, i, len;
        FILE *fp;

        (void)state;
        for (f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
                text = doc(fmts[f], &len);
                for (i = 0; i < CONF__CNT; i++) {
                        const struct conf_option *o = &conf_options[i];
                        if (!(o->where & CONF_FILE) || o->type == CONF_T_KAFKA)
                                continue;
                        snprintf(needle, sizeof(needle),
                                 fmts[f] == CONF_DOC_MARKDOWN ? "\n## %s\n"
                                 : fmts[f] == CONF_DOC_TEXT   ? "\n%s = "
                                                              : "\n#%s = ",
                                 o->key);
                        if (!strstr(text, needle)) {
                                print_error("format %zu lacks '%s'\n", f,
                                            needle);
                                fail();
                        }
                }
                free(text);
        }
        /* Every flag in --help of the command that uses it. */
        text = NULL;
        fp = open_memstream(&text, &len);
        assert_non_null(fp);
        conf_usage_print(fp, CONF_SCAN | CONF_SERVE | CONF_PRODUCE |
                                 CONF_DEMO | CONF_PROCESS);
        assert_int_equal(fclose(fp), 0);
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];
                if (o->flag)
                        snprintf(needle, sizeof(needle), "--%s", o->flag);
                else
                        snprintf(needle, sizeof(needle), "-%c", o->short_flag);
                assert_non_null(strstr(text, needle));
        }
        free(text);
}

/* Whether [from, to) holds a table row of flags doc for o: a line that
 * starts with o's flags and ends with its help. */
static int flags_doc_has_row(const char *from, const char *to,
                             const struct conf_option *o)
{
        char head[160], tail[1100];
        const char *p = from;
        size_t hl, tl;

        if (o->flag && o->short_flag)
                snprintf(head, sizeof(head), "\n| `-%c`, `--%s`",
                         o->short_flag, o->flag);
        else if (o->flag)
                snprintf(head, sizeof(head), "\n| `--%s`", o->flag);
        else
                snprintf(head, sizeof(head), "\n| `-%c`", o->short_flag);
        snprintf(tail, sizeof(tail), " | %s |\n", o->help);
        hl = strlen(head);
        tl = strlen(tail);
        while ((p = strstr(p, head)) && p < to) {
                const char *eol = strchr(p + 1, '\n');

                if (eol && (size_t)(eol + 1 - p) >= hl + tl &&
                    !memcmp(eol + 1 - tl, tail, tl) &&
                    (p[hl] == ' ' || p[hl] == '|'))
                        return 1;
                p += hl;
        }
        return 0;
}

/* docs/FLAGS.md: every option is a row of the table of each command
 * that takes it, and only there, and a file key links to its CONFIG.md
 * entry. */
static void test_flags_doc_names_every_flag(void **state)
{
        static const struct {
                unsigned which;
                const char *heading;
        } sections[] = {{CONF_SCAN | CONF_SERVE, "\n## scan and serve\n"},
                        {CONF_PRODUCE, "\n## produce\n"},
                        {CONF_PROCESS, "\n## process\n"},
                        {CONF_DEMO, "\n## demo\n"}};
        enum { N = sizeof(sections) / sizeof(sections[0]) };
        const char *start[N], *end[N];
        char needle[160], *text;
        size_t i, k, len;

        (void)state;
        text = doc(CONF_DOC_FLAGS, &len);
        for (k = 0; k < N; k++) {
                start[k] = strstr(text, sections[k].heading);
                assert_non_null(start[k]);
        }
        for (k = 0; k < N; k++) {
                end[k] = k + 1 < N ? start[k + 1] : text + len;
                assert_true(end[k] > start[k]);
        }
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];

                for (k = 0; k < N; k++) {
                        int in = flags_doc_has_row(start[k], end[k], o);

                        if (in != !!(o->where & sections[k].which)) {
                                print_error("option %zu (--%s) %s section "
                                            "%zu\n",
                                            i, o->flag ? o->flag : "",
                                            in ? "wrongly in" : "missing from",
                                            k);
                                fail();
                        }
                }
                if (o->where & CONF_FILE) {
                        snprintf(needle, sizeof(needle), "[`%s`](CONFIG.md#",
                                 o->key);
                        assert_non_null(strstr(text, needle));
                }
        }
        free(text);
}

/* in with every '-' escaped as roff writes it ("\-"), into out. */
static const char *roff_escaped(const char *in, char *out, size_t size)
{
        size_t n = 0;

        for (; *in && n + 3 < size; in++) {
                if (*in == '-')
                        out[n++] = '\\';
                out[n++] = *in;
        }
        out[n] = '\0';
        return out;
}

/* The man page's OPTIONS sections: one per command, and every option in
 * them as a roff tag, with its file key in brackets. */
static void test_man_options_name_every_flag(void **state)
{
        static const char *const sections[] = {
            ".SH OPTIONS OF SCAN AND SERVE\n", ".SH OPTIONS OF PRODUCE\n",
            ".SH OPTIONS OF PROCESS\n", ".SH OPTIONS OF DEMO\n"};
        char needle[200], esc[80], *text;
        size_t i, k, len;

        (void)state;
        text = doc(CONF_DOC_MAN, &len);
        for (k = 0; k < sizeof(sections) / sizeof(sections[0]); k++)
                assert_non_null(strstr(text, sections[k]));
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];

                if (o->flag && o->short_flag)
                        snprintf(needle, sizeof(needle),
                                 "\n.TP\n\\fB\\-%c\\fR, \\fB\\-\\-%s\\fR",
                                 o->short_flag,
                                 roff_escaped(o->flag, esc, sizeof(esc)));
                else if (o->flag)
                        snprintf(needle, sizeof(needle),
                                 "\n.TP\n\\fB\\-\\-%s\\fR",
                                 roff_escaped(o->flag, esc, sizeof(esc)));
                else
                        snprintf(needle, sizeof(needle),
                                 "\n.TP\n\\fB\\-%c\\fR", o->short_flag);
                if (!strstr(text, needle)) {
                        print_error("man page lacks '%s'\n", needle + 5);
                        fail();
                }
                if (o->where & CONF_FILE) {
                        snprintf(needle, sizeof(needle), "\n[%s] ",
                                 roff_escaped(o->key, esc, sizeof(esc)));
                        assert_non_null(strstr(text, needle));
                }
        }
        free(text);
}

/* The example file, uncommented, is a valid configuration whose values
 * are the defaults. */
static void test_example_loads(void **state)
{
        char *text, *out, *p, *line, errstr[512];
        struct conf c, d;
        size_t len, n = 0;

        (void)state;
        text = doc(CONF_DOC_EXAMPLE, &len);
        out = calloc(1, len + 1);
        assert_non_null(out);
        for (p = text; (line = strsep(&p, "\n"));) {
                const char *s = line;
                /* "#key = value" lines are settings; "# text" is prose. */
                if (s[0] == '#' && s[1] >= 'a' && s[1] <= 'z')
                        s++;
                n += (size_t)snprintf(out + n, len + 1 - n, "%s\n", s);
        }
        assert_int_equal(load(&c, out, errstr, sizeof(errstr)), 0);
        assert_int_equal(conf_init(&d), 0);
        assert_int_equal(conf_int(&c, CONF_GAP_GRACE_MS),
                         conf_int(&d, CONF_GAP_GRACE_MS));
        assert_int_equal(conf_int(&c, CONF_COMMIT_RECORDS),
                         conf_int(&d, CONF_COMMIT_RECORDS));
        assert_string_equal(conf_str(&c, CONF_ISOLATION),
                            conf_str(&d, CONF_ISOLATION));
        assert_non_null(conf_str(&c, CONF_BROKERS));
        assert_true(c.kafka_cnt >= 1);
        conf_release(&c);
        conf_release(&d);
        free(out);
        free(text);
}

#define T(f) cmocka_unit_test(f)

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_table_is_sane),
            T(test_defaults_match_modules),
            T(test_log_levels_in_enum_order),
            T(test_every_option_from_file),
            T(test_int_out_of_range),
            T(test_bad_files),
            T(test_file_edge_cases),
            T(test_string_and_list_bounds),
            T(test_every_flag),
            T(test_flags_override_file),
            T(test_bad_args),
            T(test_required_settings),
            T(test_file_error_through_argv),
            T(test_docs_name_every_setting),
            T(test_flags_doc_names_every_flag),
            T(test_man_options_name_every_flag),
            T(test_example_loads),
        };

        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
