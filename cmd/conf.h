/*
 * conf.h - the options of every command (scan, serve, produce, demo): ONE
 * option table (name, short flag, type, default, range, the commands it
 * applies to, configuration file key, help), in the style of Redis's
 * config.c, from which the command line of each command, the
 * configuration file of scan and serve (--config FILE) and the
 * documentation (`eosaudit config-help`, docs/CONFIG.md,
 * deploy/eosaudit.conf.example, the options part of each --help) all come.
 * A new command takes a bit in `where`; a new option, an entry.
 *
 * Invariants
 *  - Every setting has a default (conf_init()) and a range; a value is
 *    checked against both the same way whether it comes from a flag or a
 *    file line, so a file cannot hold what a flag would refuse.
 *  - Precedence, later wins: the table's default, the configuration file,
 *    the command line.  librdkafka properties apply in this order: the
 *    properties file (-F or kafka-properties-file), the file's kafka.*
 *    lines, -X flags; brokers and isolation, when set, come after all of
 *    them.
 *  - Configuration file errors read "PATH:LINE: message" ("PATH: message"
 *    when the file cannot be read); errstr is written only on failure.
 *  - A flag (long or short) names one option within a command; two
 *    commands may give the same flag different options (produce's -t is
 *    one topic, scan's a list).  scan and serve share one set of
 *    settings: each takes the other's flags (their --help lists only its
 *    own).
 *  - Nothing here touches global state but getopt's (conf_argv_parse());
 *    the caller applies the log level and everything else.
 */
#ifndef EOSAUDIT_CONF_H
#define EOSAUDIT_CONF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CONF_PATH_MAX 4095 /* bytes in a path option */

/* The options, in the order the documentation and --help list them. */
enum conf_id {
        CONF_CONFIG,
        CONF_BROKERS,
        CONF_TOPICS,
        CONF_DB,
        CONF_ISOLATION,
        CONF_GAP_GRACE_RECORDS,
        CONF_GAP_GRACE_MS,
        CONF_IDLE_TTL_MS,
        CONF_MAX_OPEN_GAPS,
        CONF_DEDUP_KEY,
        CONF_ID_WINDOW,
        CONF_ID_WINDOW_AGE_MS,
        CONF_SOURCE, /* the flow audit */
        CONF_PROCESSOR_GROUP,
        CONF_PROCESSOR_OFFSETS_TOPIC,
        CONF_FLOW_EXPECT,
        CONF_FLOW_DUE_RECORDS,
        CONF_FLOW_DUE_MS,
        CONF_FLOW_MAX_IDS,
        CONF_SOURCE_BOOTSTRAP, /* a source on another cluster */
        CONF_SOURCE_PROPERTIES_FILE,
        CONF_SOURCE_KAFKA,
        CONF_COMMIT_INTERVAL_MS,
        CONF_COMMIT_RECORDS,
        CONF_THREADS,
        CONF_STALL_TIMEOUT_MS,
        CONF_METADATA_REFRESH_MS,
        CONF_LISTEN,
        CONF_HTTP_TOKEN_FILE,
        CONF_TLS_CERT,
        CONF_TLS_KEY,
        CONF_LOG_LEVEL,
        CONF_KAFKA_PROPERTIES_FILE,
        CONF_KAFKA,
        CONF_TXN_MANIFESTS,
        CONF_GROUP, /* serve --group: group mode (auditor/audit/group.c) */
        CONF_GROUP_MEMBER,
        CONF_GROUP_INSTANCE_ID,
        CONF_GROUP_REPLICATION,
        CONF_GROUP_IDS_PARTITIONS,
        /* produce */
        CONF_PRODUCE_TOPIC,
        CONF_PRODUCER,
        CONF_PRODUCE_COUNT,
        CONF_PRODUCE_RATE,
        CONF_SIZE,
        CONF_TRANSACTIONAL_ID,
        CONF_TXN_SIZE,
        CONF_ABORT_EVERY,
        CONF_STATE,
        CONF_EPOCH,
        CONF_INJECT_DUPLICATES,
        CONF_INJECT_GAPS,
        CONF_ZOMBIE,
        CONF_MSGID_FROM,
        CONF_MSGID_HEADER,
        CONF_RESTART_EVERY,
        CONF_RESTART_REPLAY,
        CONF_SCOPE,
        CONF_UNKEYED,
        /* process */
        CONF_PROC_SOURCE,
        CONF_PROC_SINK,
        CONF_PROC_GROUP,
        CONF_PROC_TXN_ID,
        CONF_PROC_MODE,
        CONF_PROC_BATCH,
        CONF_PROC_CRASH_AFTER,
        CONF_PROC_ABORT_EVERY,
        CONF_PROC_DROP_EVERY,
        CONF_PROC_REKEY,
        CONF_PROC_IDLE_EXIT_MS,
        CONF_PRODUCE_TXN_MANIFESTS,
        /* demo */
        CONF_DEMO_COUNT,
        CONF_DEMO_RATE,
        CONF_DEMO_DB,
        CONF_DEMO_LISTEN,
        CONF_NO_LINGER,
        /* produce and demo */
        CONF_SEED,
        CONF_PRODUCE_KAFKA,
        CONF_PRODUCE_PROPERTIES_FILE,
        CONF_PROCESS_KAFKA,
        /* flags */
        CONF_JSON,
        CONF_PRODUCE_JSON,
        CONF_NO_PROGRESS,
        CONF_QUIET,
        CONF_VERBOSE,
        CONF_HELP,
        CONF__CNT
};

enum conf_type {
        CONF_T_STRING, /* min..max bound its length in bytes */
        CONF_T_LIST,   /* comma-separated; min..max bound the number of
                          non-empty items (empty items are skipped) */
        CONF_T_INT,    /* plain decimal within [min, max] */
        CONF_T_U64,    /* plain decimal, 0..2^64-1 (min, max unused);
                          conf_u64() gives it */
        CONF_T_DOUBLE, /* a finite number within [dmin, dmax] (dmax may be
                          HUGE_VAL); conf_dbl() gives it */
        CONF_T_ENUM,   /* one of choices; conf_int() gives its index */
        CONF_T_ADDR,   /* "off", ADDR:PORT or [V6ADDR]:PORT, numeric */
        CONF_T_KAFKA,  /* file: kafka.PROPERTY = VALUE (the key's part
                          up to its '.' is the prefix: source-kafka. for
                          the source's); flag: -X P=V */
        CONF_T_FLAG,   /* command line only, takes no value */
};

/* Where an option applies (bits of conf_option.where): the commands
 * that take it (and list it in their --help), and the file. */
#define CONF_SCAN 0x1u     /* eosaudit scan */
#define CONF_SERVE 0x2u    /* eosaudit serve */
#define CONF_FILE 0x4u     /* may be set in a configuration file */
#define CONF_PRODUCE 0x8u  /* eosaudit produce */
#define CONF_DEMO 0x10u    /* eosaudit demo */
#define CONF_PROCESS 0x20u /* eosaudit process */

struct conf_option {
        enum conf_id id;  /* its index in the table */
        const char *key;  /* in the file; NULL: command line only */
        const char *flag; /* long flag without "--"; NULL: none */
        char short_flag;  /* 'b' for -b; 0: none */
        enum conf_type type;
        const char *metavar; /* what the flag's value is called */
        const char *def;     /* default as the parser reads it; NULL:
                                 unset, def_doc says what that means */
        const char *def_doc; /* the default for people, when def is NULL */
        int64_t min, max;    /* range (see enum conf_type) */
        const char *choices; /* ENUM: "a|b|c", in index order */
        const char *example; /* a value for the example file */
        unsigned where;      /* commands (CONF_SCAN, ...) | CONF_FILE */
        const char *help;    /* one sentence or two, no trailing period
                                 needed: the printers wrap it */
        double dmin, dmax;   /* DOUBLE: range */
};

/* The table, CONF__CNT entries indexed by enum conf_id. */
extern const struct conf_option conf_options[CONF__CNT];

/* A librdkafka property, from a kafka.* line (line > 0) or -X (line 0);
 * opt is the CONF_T_KAFKA option that set it (CONF_SOURCE_KAFKA: the
 * source cluster's consumer; any other: the command's own client). */
struct conf_kv {
        enum conf_id opt;
        char *key;
        char *value;
        unsigned line;
};

/* Where a value came from. */
enum conf_source {
        CONF_SRC_DEFAULT,
        CONF_SRC_FILE,
        CONF_SRC_CLI,
};

/* The values; read them with conf_str() and conf_int(). */
struct conf {
        unsigned char src[CONF__CNT]; /* enum conf_source */
        char *str[CONF__CNT];     /* STRING, LIST, ENUM, ADDR; NULL: unset */
        int64_t num[CONF__CNT];   /* INT; ENUM index; FLAG: times given;
                                     U64 (as its bits) */
        double dbl[CONF__CNT];    /* DOUBLE */
        unsigned line[CONF__CNT]; /* set on this line of the file; 0:
                                     default or command line */
        struct conf_kv *kafka;    /* file lines first, then -X flags */
        size_t kafka_cnt, kafka_cap;
};

/* Every option at its default.  Returns 0, or -1 when memory ran out
 * (c then needs no release).  Release with conf_release(). */
int conf_init(struct conf *c);
void conf_release(struct conf *c);

/* The string value of a STRING, LIST, ENUM or ADDR option (NULL when
 * unset); valid until the option is set again or c is released. */
const char *conf_str(const struct conf *c, enum conf_id id);
/* The value of an INT, the index of an ENUM, the count of a FLAG. */
int64_t conf_int(const struct conf *c, enum conf_id id);
/* The value of a U64 or a DOUBLE option. */
uint64_t conf_u64(const struct conf *c, enum conf_id id);
double conf_dbl(const struct conf *c, enum conf_id id);

/* The command bit (CONF_SCAN, ...) of a command name; 0 for none. */
unsigned conf_cmd_by_name(const char *name);

/* The option a configuration file key names (any "kafka.*" key names
 * CONF_KAFKA); NULL when there is none or it is command line only. */
const struct conf_option *conf_option_by_key(const char *key);

/* Whether option id was set by the file or a flag (not its default). */
int conf_isset(const struct conf *c, enum conf_id id);

/*
 * Checks value against option id's type and range and stores a copy
 * (marked as set by the command line; conf_file_load() marks its own).
 * what names it in a message ("--db", "db").  Returns 0, or -1 with
 * errstr "invalid value 'x' for WHAT (expected ...)".  Not for
 * CONF_KAFKA and CONF_T_FLAG options.
 */
int conf_set(struct conf *c, enum conf_id id, const char *value,
             const char *what, char *errstr, size_t errstr_size);

/* Appends a librdkafka property of option opt (copied).  Returns 0 or -1
 * (memory). */
int conf_kafka_add(struct conf *c, enum conf_id opt, const char *key,
                   const char *value, unsigned line);

/*
 * Reads a configuration file: "key = value" lines, blanks around both
 * trimmed; empty lines and lines whose first non-blank character is '#'
 * are skipped ('#' elsewhere is part of the value, as in a password).
 * Each key at most once.  kafka.* values are checked by librdkafka now,
 * so that a bad one is reported with its line.  Stops at the first error:
 * returns 0, or -1 with errstr "PATH:LINE: message".
 */
int conf_file_load(struct conf *c, const char *path, char *errstr,
                   size_t errstr_size);

/*
 * Parses the arguments of a command (argv[0] is its name: scan, serve,
 * produce or demo), with the options the table gives that command: first
 * --config FILE (scan, serve), whose settings are loaded, then every flag,
 * which overrides the file.  -q is --log-level error, -v --log-level
 * debug; the last of them wins.  scan and serve: checks that topics are
 * set and that bootstrap brokers come from somewhere; the other commands
 * check what they need themselves.  Returns 0, 1 when --help was asked
 * for, or -1 with errstr (without an "eosaudit: " prefix).  Uses
 * getopt_long (not thread-safe).
 */
int conf_argv_parse(struct conf *c, int argc, char **argv, char *errstr,
                    size_t errstr_size);

/*
 * The -X settings again as "KEY=VALUE" strings, in order, for the
 * producer and the processor: *kv holds those of c->kafka that are not
 * CONF_SOURCE_KAFKA's, and a NULL.
 * Returns 0, or -1 when memory ran out (*kv is then what was made: give
 * it to conf_kafka_kv_free() all the same).
 */
int conf_kafka_kv(const struct conf *c, char ***kv);
void conf_kafka_kv_free(char **kv);

/*
 * Splits a LIST value: copies s into *buf (owned by the caller, free()
 * it) and points items[] into it, skipping empty items.  Returns how many
 * (at most max), or -1 when there are more or memory ran out.
 */
int conf_list_split(const char *s, char **buf, const char **items, size_t max);

/* The options part of a command's --help (which = CONF_SCAN, ...; the
 * options of any command in which), wrapped to 79 columns. */
void conf_usage_print(FILE *f, unsigned which);

enum conf_doc {
        CONF_DOC_TEXT,     /* `eosaudit config-help` */
        CONF_DOC_MARKDOWN, /* docs/CONFIG.md */
        CONF_DOC_EXAMPLE,  /* deploy/eosaudit.conf.example */
        CONF_DOC_FLAGS,    /* docs/FLAGS.md: every command's flags */
        CONF_DOC_MAN,      /* the OPTIONS sections of docs/eosaudit.1 */
};

/* The documentation of the configuration file, or of every flag. */
void conf_doc_print(FILE *f, enum conf_doc fmt);

#endif /* EOSAUDIT_CONF_H */
