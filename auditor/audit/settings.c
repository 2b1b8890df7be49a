/*
 * settings.c - the consumer settings the audit relies on, in one place (see
 * audit_kconf_defaults() in audit.h), and the check audit_new() makes.
 */
#include <stdio.h>
#include <string.h>

#include "../../base/kconf.h"
#include "../../base/log.h"
#include "internal.h"

/*
 * What the audit cannot do without.  audit_kconf_apply() puts these back
 * over the user's values (with a warning) and audit_new() refuses a
 * configuration that lacks one.
 */
static const char *const audit_kconf_required[][2] = {
    /* Kafka's committed offsets are written by the audit alone, from
         * the ledger, for lag tools (never read back). */
    {"enable.auto.commit", "false"},
    {"enable.auto.offset.store", "false"},
    /* The end of a partition moves a scan past transaction markers
         * and tells it where to stop. */
    {"enable.partition.eof", "true"},
    /* Offsets deleted before they were audited must come back as an
         * error, which becomes a coverage gap, never as a silent jump. */
    {"auto.offset.reset", "error"},
};

#define AUDIT_KCONF_REQUIRED_CNT                                              \
        (sizeof(audit_kconf_required) / sizeof(audit_kconf_required[0]))

/* The prefetch budget's Fetch size, raised to message.max.bytes when the
 * user's is larger (see audit_kconf_apply()). */
#define AUDIT_FETCH_MAX_BYTES 4194304
#define AUDIT_STR_(x) #x
#define AUDIT_STR(x) AUDIT_STR_(x)

/* Reads key into buf (size bytes); -1 when it is unset and has no
 * default (auto.offset.reset until someone sets it). */
static int audit_kconf_get(const rd_kafka_conf_t *conf, const char *key,
                           char *buf, size_t size)
{
        size_t n = size;

        return rd_kafka_conf_get(conf, key, buf, &n) == RD_KAFKA_CONF_OK ? 0
                                                                         : -1;
}

/* Sets the required settings; with warn, says which user value each one
 * replaces. */
static int audit_kconf_required_set(rd_kafka_conf_t *conf, int warn,
                                    char *errstr, size_t errstr_size)
{
        char got[64];
        size_t i;

        for (i = 0; i < AUDIT_KCONF_REQUIRED_CNT; i++) {
                const char *key = audit_kconf_required[i][0];
                const char *val = audit_kconf_required[i][1];
                if (warn && !audit_kconf_get(conf, key, got, sizeof(got)) &&
                    strcmp(got, val))
                        log_warn("ignoring %s=%s: the audit needs %s", key,
                                 got, val);
                if (kconf_put(conf, key, val, errstr, errstr_size))
                        return -1;
        }
        return 0;
}

int audit_kconf_defaults(rd_kafka_conf_t *conf, char *errstr,
                         size_t errstr_size)
{
        if (kconf_put(conf, "isolation.level", "read_committed", errstr,
                      errstr_size))
                return -1;
        /*
         * The prefetch budget.  librdkafka applies queued.min.messages and
         * queued.max.messages.kbytes to the ONE consumer queue that
         * rd_kafka_assign() forwards every partition to, not per
         * partition, so this is a constant.  A queued record costs its
         * wire size plus ~300 bytes (kbytes counts payload only), and one
         * Fetch response (fetch.max.bytes) may come on top of the cap.
         * Once the queue is over a threshold, librdkafka waits
         * fetch.queue.backoff.ms before it fetches again (librdkafka
         * before 2.2 had no such setting and slept up to 1 s; this build's
         * floor is 2.10), so a small queue needs a short one: 50 ms
         * (librdkafka's default is 1000; first measured on 2.0.2 with a
         * metadata request every 50 ms as the wake-up).  50, not 100:
         * while the consumer waits for a ledger commit the queue fills and
         * the fetcher stops; after it, the consumer drains the queue in
         * about 10 ms and then waited for the wake-up.  A 5M-record scan
         * took 3.5 s instead of 3.9 with ids, 2.1 instead of 2.5 without
         * (BENCHMARKS.md, section 1); 20, 10 ms did no better.  Measured
         * (BENCHMARKS.md): 1M pairs 505 -> 188 MiB max RSS, a 12-partition
         * 5M scan 395 -> 114 MiB at the same speed; before,
         * queued.min.messages was 1000000.  8 MiB, not 16: a scan also
         * holds up to about as much again read ahead while a commit runs
         * (loop.c, AUDIT_AHEAD_BYTES), which the queue's cap does not
         * count; with 16 MiB the 1M-pair scan reached 274 MiB, with 8 MiB
         * 244 MiB, at the same speed.
         */
        if (kconf_put(conf, "queued.min.messages", "150000", errstr,
                      errstr_size) ||
            kconf_put(conf, "queued.max.messages.kbytes", "8192", errstr,
                      errstr_size) ||
            kconf_put(conf, "fetch.max.bytes",
                      AUDIT_STR(AUDIT_FETCH_MAX_BYTES), errstr, errstr_size) ||
            kconf_put(conf, "fetch.wait.max.ms", "100", errstr, errstr_size))
                return -1;
        if (kconf_put(conf, "fetch.queue.backoff.ms", "50", errstr,
                      errstr_size))
                return -1;
        /* Set now and again by audit_kconf_apply(): a value that differs
         * then came from the user (librdkafka's own defaults are no
         * reason to warn). */
        return audit_kconf_required_set(conf, 0, errstr, errstr_size);
}

int audit_kconf_apply(rd_kafka_conf_t *conf, char *errstr, size_t errstr_size)
{
        char val[64], mmb[32];
        int64_t v;

        if (audit_kconf_required_set(conf, 1, errstr, errstr_size))
                return -1;
        /* librdkafka refuses fetch.max.bytes < message.max.bytes: follow a
         * user's larger message.max.bytes unless fetch.max.bytes is theirs
         * too. */
        if (!audit_kconf_get(conf, "fetch.max.bytes", val, sizeof(val)) &&
            !strcmp(val, AUDIT_STR(AUDIT_FETCH_MAX_BYTES)) &&
            !audit_kconf_get(conf, "message.max.bytes", mmb, sizeof(mmb)) &&
            !kconf_parse_i64(mmb, 0, INT64_MAX, &v) &&
            v > AUDIT_FETCH_MAX_BYTES &&
            kconf_put(conf, "fetch.max.bytes", mmb, errstr, errstr_size))
                return -1;
        if (!audit_kconf_get(conf, "isolation.level", val, sizeof(val)) &&
            strcmp(val, "read_committed"))
                log_warn("isolation.level=%s: aborted transactions will be "
                         "audited as if they were delivered",
                         val);
        return 0;
}

int audit_kconf_check(const rd_kafka_conf_t *conf, char *errstr,
                      size_t errstr_size)
{
        char got[64];
        size_t i;

        for (i = 0; i < AUDIT_KCONF_REQUIRED_CNT; i++) {
                const char *key = audit_kconf_required[i][0];
                const char *val = audit_kconf_required[i][1];
                if (audit_kconf_get(conf, key, got, sizeof(got)))
                        snprintf(got, sizeof(got), "(unset)");
                else if (!strcmp(got, val))
                        continue;
                snprintf(errstr, errstr_size,
                         "the audit needs the consumer setting %s=%s, not "
                         "%s (audit_kconf_apply() sets it)",
                         key, val, got);
                return -1;
        }
        return 0;
}
