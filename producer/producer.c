/*
 * producer.c - see producer.h.
 *
 * A run is one or two librdkafka handles ("instances"), each one session
 * with its own epoch and per-partition seq counters:
 *   plain:    the live instance produces records 0..count-1.
 *   --zombie: instance A produces the first half, instance B (the newer
 *             session) the second half, then A writes again: as a
 *             zombie, only to partitions where B has delivered, so every
 *             zombie write that lands is one the auditor must flag FENCED.
 *             Transactional: B's init_transactions() fences A at the
 *             broker and A's last transaction is expected to fail.
 *   --restart-every N: the live instance is replaced after every N records
 *             (a simulated crash: rd_kafka_destroy(), then a new handle);
 *             each new session first replays the last records delivered.
 *             A ring of the last restart_replay records sent, marked by
 *             their delivery reports, says which those are.
 */
#include "../base/clock.h"
#include "producer.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>

#include "../base/kconf.h"
#include "../dedup/eos_headers.h"

#define PRODUCER_KEY_MAX (PRODUCER_NAME_MAX + 24) /* "NAME-" + int64 */
#define PRODUCER_METADATA_WAIT_MS 10000
#define PRODUCER_UNKNOWN_TOPIC_WAIT_MS 2000
#define PRODUCER_STATS_WAIT_MS 10000
#define PRODUCER_STATS_INTERVAL "100" /* ms; how fast the epoch is learnt */
#define PRODUCER_INIT_TIMEOUT_MS 30000
#define PRODUCER_TXN_CALL_TRIES 10 /* retriable commit/abort errors */
#define PRODUCER_TXN_FAILURES 3    /* abortable failures of one txn */
#define PRODUCER_ZOMBIE_SKIPS 100000 /* keys tried per zombie record */

/* The message opaque of a write, read back in its delivery report: 0 for
 * writes nobody follows (zombie records, any record without restarts),
 * PRODUCER_TAG_REPLAY for a replayed copy, else producer_tag_record(n) for
 * record n and its injected duplicate. */
#define PRODUCER_TAG_NONE ((uintptr_t)0)
#define PRODUCER_TAG_REPLAY ((uintptr_t)1)

/* One librdkafka handle: one session of the producer. */
struct producer_inst {
        struct producer_ctx *ctx;
        const char *label; /* "zombie" or "live", for messages */
        rd_kafka_t *rk;
        rd_kafka_topic_t *rkt;
        int32_t epoch;
        int64_t pid; /* -1: no eos.pid header */
        char epoch_str[16];
        char pid_str[24];
        int64_t *next_seq;  /* per partition */
        uint64_t *part_ok;  /* delivered per partition */
        /* Delivery reports, counted by producer_dr_cb() on this thread. */
        uint64_t dr_ok, dr_err;
        uint64_t dr_replay_ok; /* of replayed copies; also in dr_ok */
        /* Set while waiting for a stats callback with the broker's ids. */
        int want_stats;
        int64_t stats_pid;
        int32_t stats_epoch;
};

/* A record sent by the live session, for the replay after a restart. */
struct producer_sent {
        int64_t n;     /* record number; -1: slot unused */
        int delivered; /* its last write has a successful delivery report */
};

struct producer_ctx {
        const struct producer_opts *o;
        struct producer_result *res;
        rd_kafka_conf_t *conf; /* template; each instance gets a copy */
        size_t name_len;
        int32_t partition_cnt;
        char *value; /* o->value_size bytes, shared by every record */
        int64_t *seq_saved; /* next_seq at the start of a transaction */
        uint64_t rng_gap, rng_dup;
        uint64_t txn_no;   /* transactions begun */
        uint64_t paced;    /* records produced under --rate */
        double t_start;    /* monotonic s at the first produce; 0 = none */
        /* Restarts: record n's last send is sent[n % restart_replay]
         * while it is one of the last restart_replay records; replay
         * holds the record numbers the new session writes again, in
         * order, replay_pos the next one.  NULL without replays. */
        struct producer_sent *sent;
        int64_t *replay;
        size_t replay_cnt, replay_pos;
};

enum producer_phase {
        PRODUCER_PHASE_LIVE,   /* injections on; records count */
        PRODUCER_PHASE_ZOMBIE, /* stale session; no injections */
};

/* What one phase or transaction enqueued. */
struct producer_tally {
        uint64_t records; /* distinct records enqueued */
        uint64_t sent;    /* records, duplicates and replays enqueued */
        uint64_t failed;  /* records librdkafka refused at once */
        uint64_t replay_failed; /* replays librdkafka refused at once */
        uint64_t dups, gaps;
};

enum producer_txn {
        PRODUCER_TXN_OK,
        PRODUCER_TXN_ABORTABLE, /* abort, then the transaction may retry */
        PRODUCER_TXN_FATAL,     /* the instance is unusable */
};

/* ------------------------------------------------------------------ */
/* Partitioning                                                        */
/* ------------------------------------------------------------------ */

uint32_t producer_murmur2(const void *key, size_t len)
{
        const unsigned char *d = key;
        const uint32_t m = 0x5bd1e995;
        uint32_t h = 0x9747b28cu ^ (uint32_t)len;
        size_t i;

        for (i = 0; i + 4 <= len; i += 4) {
                uint32_t k = (uint32_t)d[i] | (uint32_t)d[i + 1] << 8 |
                             (uint32_t)d[i + 2] << 16 |
                             (uint32_t)d[i + 3] << 24;

                k *= m;
                k ^= k >> 24;
                k *= m;
                h *= m;
                h ^= k;
        }
        switch (len & 3) {
        case 3:
                h ^= (uint32_t)d[i + 2] << 16;
                /* fall through */
        case 2:
                h ^= (uint32_t)d[i + 1] << 8;
                /* fall through */
        case 1:
                h ^= d[i];
                h *= m;
        }
        h ^= h >> 13;
        h *= m;
        h ^= h >> 15;
        return h;
}

int32_t producer_partition(const void *key, size_t len, int32_t partition_cnt)
{
        return (int32_t)((producer_murmur2(key, len) & 0x7fffffffu) %
                         (uint32_t)partition_cnt);
}

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

static int producer_running(const struct producer_ctx *c)
{
        return !c->o->run || *c->o->run;
}

/* splitmix64: small, seedable, and identical on every platform. */
static uint64_t producer_rng_next(uint64_t *s)
{
        uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

/* Draws even when p is 0, so one stream's decisions never depend on the
 * other's rate. */
static int producer_rng_hit(uint64_t *s, double p)
{
        double u = (double)(producer_rng_next(s) >> 11) * 0x1.0p-53;

        return u < p;
}

static void producer_warn(const struct producer_opts *o, const char *msg)
{
        if (!o->quiet)
                fprintf(stderr, "produce: warning: %s\n", msg);
}

/* Even and never 0 for 0 <= n < INT64_MAX (see PRODUCER_TAG_NONE). */
static uintptr_t producer_tag_record(int64_t n)
{
        return ((uintptr_t)n + 1) << 1;
}

static int producer_digits(uint64_t v)
{
        int d = 1;

        while (v >= 10) {
                v /= 10;
                d++;
        }
        return d;
}

static int producer_err_is_fenced(rd_kafka_resp_err_t err)
{
        return err == RD_KAFKA_RESP_ERR__FENCED ||
               err == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
               err == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH;
}

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

void producer_opts_init(struct producer_opts *o)
{
        memset(o, 0, sizeof(*o));
        o->count = 1000;
        o->value_size = 100;
        o->txn_size = 100;
        o->epoch = -1;
        o->seed = 1;
        o->msgid_from = PRODUCER_MSGID_KEY;
        o->msgid_header = PRODUCER_MSGID_HEADER;
        o->restart_replay = PRODUCER_REPLAY_DEFAULT;
}

/* The largest record number a run may stamp: count - 1, or a zombie's,
 * which may skip up to PRODUCER_ZOMBIE_SKIPS numbers per record (see
 * producer_next_key()).  Saturates at INT64_MAX. */
static uint64_t producer_max_index(const struct producer_opts *o)
{
        uint64_t count = o->count > 0 ? (uint64_t)o->count : 0;
        uint64_t zombies, top;

        if (!o->zombie)
                return count > 0 ? count - 1 : 0;
        zombies = count / 10 > 0 ? count / 10 : 1;
        if (zombies > (uint64_t)INT64_MAX / PRODUCER_ZOMBIE_SKIPS)
                return INT64_MAX;
        top = count + zombies * PRODUCER_ZOMBIE_SKIPS;
        return top > (uint64_t)INT64_MAX ? INT64_MAX : top;
}

/* The eos.* headers the producer stamps itself: an id under one of their
 * names would replace the real value for an auditor (the last header
 * wins). */
static int producer_header_reserved(const char *name)
{
        static const char *const own[] = {EOS_HDR_PRODUCER, EOS_HDR_EPOCH,
                                          EOS_HDR_SEQ, EOS_HDR_PID};
        size_t i;

        for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
                if (strcmp(name, own[i]) == 0)
                        return 1;
        return 0;
}

int producer_opts_check(const struct producer_opts *o, char *errstr,
                        size_t errstr_size)
{
        const char *why = NULL;
        size_t name_len = o->name ? strlen(o->name) : 0;
        char buf[PRODUCER_HEADER_NAME_MAX + 128]; /* formatted reasons */

        if (!o->topic || !*o->topic)
                why = "a topic is required (-t)";
        else if (name_len == 0)
                why = "a producer name is required (--producer)";
        else if (name_len > PRODUCER_NAME_MAX)
                why = "the producer name is longer than 255 bytes";
        else if (o->count < 0)
                why = "the record count must be >= 0";
        else if (!(o->rate >= 0 && isfinite(o->rate)))
                why = "the rate must be >= 0";
        else if (o->value_size < 0 || o->value_size > PRODUCER_VALUE_MAX)
                why = "the value size must be in 0..100000000";
        else if (o->txn_size < 1)
                why = "the transaction size must be >= 1";
        else if (o->abort_every < 0 || o->abort_every == 1)
                why = "--abort-every must be 0 or >= 2 (1 would never commit)";
        else if (o->abort_every && !o->transactional_id)
                why = "--abort-every needs --transactional-id";
        else if (o->transactional_id && !*o->transactional_id)
                why = "the transactional id is empty";
        else if (o->transactional_id && (o->state_path || o->epoch >= 0))
                why = "--state and --epoch do not apply with "
                      "--transactional-id (the broker sets the epoch)";
        else if (o->state_path && o->epoch >= 0)
                why = "--state and --epoch are mutually exclusive";
        else if (o->epoch < -1 || o->epoch > INT32_MAX)
                why = "the epoch must be in 0..2147483647";
        else if (o->zombie && o->epoch == INT32_MAX)
                why = "--zombie needs a second epoch above --epoch";
        else if (!(o->dup_rate >= 0 && o->dup_rate <= 1))
                why = "--inject-duplicates must be in 0..1";
        else if (!(o->gap_rate >= 0 && o->gap_rate <= 1))
                why = "--inject-gaps must be in 0..1";
        else if (o->conf_kv_cnt && !o->conf_kv)
                why = "conf_kv is NULL";
        else if (o->msgid_from != PRODUCER_MSGID_KEY &&
                 o->msgid_from != PRODUCER_MSGID_INDEX &&
                 o->msgid_from != PRODUCER_MSGID_NONE)
                why = "--msgid-from must be key, index or none";
        else if (o->msgid_from != PRODUCER_MSGID_NONE &&
                 (!o->msgid_header || !*o->msgid_header))
                why = "the message id header name is empty (--msgid-header)";
        else if (o->msgid_from != PRODUCER_MSGID_NONE &&
                 strlen(o->msgid_header) > PRODUCER_HEADER_NAME_MAX)
                why = "the message id header name is longer than 255 bytes";
        else if (o->msgid_from != PRODUCER_MSGID_NONE &&
                 producer_header_reserved(o->msgid_header)) {
                snprintf(buf, sizeof(buf),
                         "--msgid-header \"%s\" would replace a header the "
                         "producer stamps itself",
                         o->msgid_header);
                why = buf;
        } else if (o->msgid_from == PRODUCER_MSGID_KEY &&
                   name_len + 1 + (size_t)producer_digits(
                                          producer_max_index(o)) >
                           PRODUCER_MSGID_MAX) {
                snprintf(buf, sizeof(buf),
                         "--msgid-from key: the keys (NAME-%" PRIu64
                         " at most) would be longer than the %d bytes a "
                         "message id may have: shorten --producer, or use "
                         "--msgid-from index or none",
                         producer_max_index(o), PRODUCER_MSGID_MAX);
                why = buf;
        } else if (o->restart_every < 0)
                why = "--restart-every must be >= 0";
        else if (o->restart_replay < 0 ||
                 o->restart_replay > PRODUCER_REPLAY_MAX)
                why = "--restart-replay must be in 0..1000000";
        else if (o->restart_every && o->zombie)
                why = "--restart-every does not combine with --zombie";
        else if (o->restart_every && o->count > 0 &&
                 (o->count - 1) / o->restart_every >
                         INT32_MAX - (o->epoch > 0 ? o->epoch : 0)) {
                snprintf(buf, sizeof(buf),
                         "--restart-every: %" PRId64 " restarts from epoch "
                         "%" PRId64 " would take it past 2147483647",
                         (o->count - 1) / o->restart_every,
                         o->epoch > 0 ? o->epoch : 0);
                why = buf;
        }
        if (why) {
                snprintf(errstr, errstr_size, "%s", why);
                return -1;
        }
        return 0;
}

/* ------------------------------------------------------------------ */
/* Session counter (--state)                                           */
/* ------------------------------------------------------------------ */

/* *last = the epoch in the file, or -1 when there is no file. */
static int producer_state_read(const char *path, int64_t *last,
                               char *errstr, size_t errstr_size)
{
        FILE *fp;
        char buf[32];
        size_t n;
        int rc = -1;

        fp = fopen(path, "r");
        if (!fp) {
                if (errno == ENOENT) {
                        *last = -1;
                        return 0;
                }
                snprintf(errstr, errstr_size, "state \"%s\": %s", path,
                         strerror(errno));
                return -1;
        }
        n = fread(buf, 1, sizeof(buf) - 1, fp);
        if (ferror(fp)) {
                snprintf(errstr, errstr_size, "state \"%s\": read error",
                         path);
                goto out;
        }
        buf[n] = '\0';
        if (n > 0 && buf[n - 1] == '\n')
                buf[--n] = '\0';
        if (kconf_parse_i64(buf, 0, INT32_MAX, last) == -1) {
                snprintf(errstr, errstr_size,
                         "state \"%s\": expected one line with the last "
                         "epoch (0..2147483647)",
                         path);
                goto out;
        }
        rc = 0;
out:
        fclose(fp);
        return rc;
}

/* Replaces path with "EPOCH\n" through a temporary file and rename(). */
static int producer_state_write(const char *path, int64_t epoch,
                                char *errstr, size_t errstr_size)
{
        size_t tmp_size = strlen(path) + sizeof(".XXXXXX");
        char *tmp = malloc(tmp_size);
        char line[32];
        const char *slash;
        int fd = -1, len, rc = -1;

        if (!tmp) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        snprintf(tmp, tmp_size, "%s.XXXXXX", path);
        len = snprintf(line, sizeof(line), "%" PRId64 "\n", epoch);
        fd = mkstemp(tmp);
        if (fd == -1) {
                snprintf(errstr, errstr_size, "state \"%s\": %s", tmp,
                         strerror(errno));
                goto out;
        }
        if (write(fd, line, (size_t)len) != len || fsync(fd) == -1) {
                snprintf(errstr, errstr_size, "state \"%s\": %s", tmp,
                         strerror(errno ? errno : EIO));
                goto out;
        }
        if (close(fd) == -1) {
                fd = -1;
                snprintf(errstr, errstr_size, "state \"%s\": %s", tmp,
                         strerror(errno));
                goto out;
        }
        fd = -1;
        if (rename(tmp, path) == -1) {
                snprintf(errstr, errstr_size, "state \"%s\": %s", path,
                         strerror(errno));
                goto out;
        }
        /* Make the rename durable; a failure here only risks reusing an
         * epoch after a machine crash, so it is not an error. */
        slash = strrchr(path, '/');
        if (slash) {
                tmp[slash - path + 1] = '\0';
                memcpy(tmp, path, (size_t)(slash - path + 1));
        } else {
                snprintf(tmp, tmp_size, ".");
        }
        fd = open(tmp, O_RDONLY | O_DIRECTORY);
        if (fd != -1)
                fsync(fd);
        rc = 0;
out:
        if (fd != -1)
                close(fd);
        if (rc == -1)
                unlink(tmp);
        free(tmp);
        return rc;
}

/* Takes n consecutive epochs from the counter; *first is the lowest. */
static int producer_state_take(const char *path, int n, int64_t *first,
                               char *errstr, size_t errstr_size)
{
        int64_t last;

        if (producer_state_read(path, &last, errstr, errstr_size) == -1)
                return -1;
        if (last > (int64_t)INT32_MAX - n) {
                snprintf(errstr, errstr_size,
                         "state \"%s\": epochs exhausted at %" PRId64, path,
                         last);
                return -1;
        }
        if (producer_state_write(path, last + n, errstr, errstr_size) == -1)
                return -1;
        *first = last + 1;
        return 0;
}

/* ------------------------------------------------------------------ */
/* librdkafka callbacks (served on the producing thread)               */
/* ------------------------------------------------------------------ */

static void producer_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *rkm,
                           void *opaque)
{
        struct producer_inst *in = opaque;
        struct producer_ctx *c = in->ctx;
        uintptr_t tag = (uintptr_t)rkm->_private; /* the message opaque */

        (void)rk;
        if (rkm->err) {
                in->dr_err++;
                return;
        }
        in->dr_ok++;
        if (rkm->partition >= 0 &&
            rkm->partition < in->ctx->partition_cnt)
                in->part_ok[rkm->partition]++;
        if (tag == PRODUCER_TAG_REPLAY) {
                in->dr_replay_ok++;
        } else if (tag != PRODUCER_TAG_NONE && c->sent) {
                int64_t n = (int64_t)((tag >> 1) - 1);
                struct producer_sent *s =
                        &c->sent[n % c->o->restart_replay];

                /* A slot already reused by a later record is not n's. */
                if (producer_tag_record(s->n) == tag)
                        s->delivered = 1;
        }
}

static void producer_error_cb(rd_kafka_t *rk, int err, const char *reason,
                              void *opaque)
{
        struct producer_inst *in = opaque;

        (void)rk;
        /* Fatal errors surface through the produce and transaction calls,
         * which decide whether they are expected (a fenced zombie). */
        if (err == RD_KAFKA_RESP_ERR__FATAL || in->ctx->o->quiet)
                return;
        fprintf(stderr, "produce: %s: %s: %s\n", in->label,
                rd_kafka_err2name((rd_kafka_resp_err_t)err), reason);
}

/* Learns the broker's producer id and epoch: librdkafka has no call for
 * them, but its statistics carry them in "eos". */
static int producer_stats_cb(rd_kafka_t *rk, char *json, size_t json_len,
                             void *opaque)
{
        struct producer_inst *in = opaque;
        json_t *root, *eos, *pid, *epoch;

        (void)rk;
        if (!in->want_stats)
                return 0;
        root = json_loadb(json, json_len, 0, NULL);
        if (!root)
                return 0;
        eos = json_object_get(root, "eos");
        pid = json_object_get(eos, "producer_id");
        epoch = json_object_get(eos, "producer_epoch");
        if (json_is_integer(pid) && json_is_integer(epoch) &&
            json_integer_value(pid) >= 0 && json_integer_value(epoch) >= 0 &&
            json_integer_value(epoch) <= INT32_MAX) {
                in->stats_pid = json_integer_value(pid);
                in->stats_epoch = (int32_t)json_integer_value(epoch);
        }
        json_decref(root);
        return 0; /* librdkafka frees json */
}

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

static int producer_conf_put(rd_kafka_conf_t *conf, const char *name,
                             const char *value, char *errstr,
                             size_t errstr_size)
{
        char err[512];

        if (rd_kafka_conf_set(conf, name, value, err, sizeof(err)) !=
            RD_KAFKA_CONF_OK) {
                snprintf(errstr, errstr_size, "%s", err);
                return -1;
        }
        return 0;
}

/* Empty string when unset or unknown. */
static void producer_conf_value(const rd_kafka_conf_t *conf, const char *name,
                                char *buf, size_t size)
{
        if (rd_kafka_conf_get(conf, name, buf, &size) != RD_KAFKA_CONF_OK)
                buf[0] = '\0';
}

/* Defaults, then -F, then -X, then the flags that name a property. */
static rd_kafka_conf_t *producer_conf_new(const struct producer_opts *o,
                                          char *errstr, size_t errstr_size)
{
        static const char *const defaults[][2] = {
                {"client.id", "eosaudit-produce"},
                {"enable.idempotence", "true"},
                {"acks", "all"},
                {"max.in.flight.requests.per.connection", "5"},
                /* Unlimited within delivery.timeout.ms. */
                {"message.send.max.retries", "2147483647"},
                {"linger.ms", "5"},
        };
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char val[512];
        size_t i;

        for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
                if (producer_conf_put(conf, defaults[i][0], defaults[i][1],
                                      errstr, errstr_size) == -1)
                        goto fail;
        if (o->transactional_id &&
            producer_conf_put(conf, "statistics.interval.ms",
                              PRODUCER_STATS_INTERVAL, errstr,
                              errstr_size) == -1)
                goto fail;
        if (o->conf_file &&
            kconf_file_load(conf, o->conf_file, errstr, errstr_size) == -1)
                goto fail;
        for (i = 0; i < o->conf_kv_cnt; i++)
                if (kconf_set(conf, o->conf_kv[i], errstr, errstr_size) == -1)
                        goto fail;

        producer_conf_value(conf, "transactional.id", val, sizeof(val));
        if (*val) {
                snprintf(errstr, errstr_size,
                         "set the transactional id with --transactional-id, "
                         "not as a property");
                goto fail;
        }
        if (o->brokers &&
            producer_conf_put(conf, "bootstrap.servers", o->brokers, errstr,
                              errstr_size) == -1)
                goto fail;
        producer_conf_value(conf, "bootstrap.servers", val, sizeof(val));
        if (!*val) {
                snprintf(errstr, errstr_size,
                         "no brokers: give -b or bootstrap.servers");
                goto fail;
        }
        if (o->transactional_id) {
                if (producer_conf_put(conf, "transactional.id",
                                      o->transactional_id, errstr,
                                      errstr_size) == -1)
                        goto fail;
                producer_conf_value(conf, "statistics.interval.ms", val,
                                    sizeof(val));
                if (strcmp(val, "0") == 0) {
                        snprintf(errstr, errstr_size,
                                 "statistics.interval.ms must be > 0 with "
                                 "--transactional-id (the epoch is read "
                                 "from the statistics)");
                        goto fail;
                }
        } else {
                producer_conf_value(conf, "enable.idempotence", val,
                                    sizeof(val));
                if (strcmp(val, "true") != 0)
                        producer_warn(o, "enable.idempotence=false: retries "
                                         "may duplicate or reorder records");
        }
        if (o->quiet)
                rd_kafka_conf_set_log_cb(conf, NULL);
        rd_kafka_conf_set_dr_msg_cb(conf, producer_dr_cb);
        rd_kafka_conf_set_error_cb(conf, producer_error_cb);
        if (o->transactional_id)
                rd_kafka_conf_set_stats_cb(conf, producer_stats_cb);
        return conf;
fail:
        rd_kafka_conf_destroy(conf);
        return NULL;
}

/* ------------------------------------------------------------------ */
/* Instances                                                           */
/* ------------------------------------------------------------------ */

static int producer_metadata(struct producer_ctx *c, struct producer_inst *in,
                             char *errstr, size_t errstr_size)
{
        double start = clock_mono_s();
        rd_kafka_resp_err_t err;

        for (;;) {
                const struct rd_kafka_metadata *md;

                err = rd_kafka_metadata(in->rk, 0, in->rkt, &md,
                                        PRODUCER_METADATA_WAIT_MS);
                if (!err) {
                        int32_t cnt = 0;

                        if (md->topic_cnt == 1) {
                                err = md->topics[0].err;
                                cnt = md->topics[0].partition_cnt;
                        } else {
                                err = RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC;
                        }
                        rd_kafka_metadata_destroy(md);
                        if (!err && cnt > 0) {
                                c->partition_cnt = cnt;
                                return 0;
                        }
                        if (!err)
                                err = RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION;
                }
                /* A topic being created may be unknown for a moment and
                 * then have no leader yet: retry, briefly while unknown. */
                if (clock_mono_s() - start >=
                            (err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART
                                     ? PRODUCER_UNKNOWN_TOPIC_WAIT_MS
                                     : PRODUCER_METADATA_WAIT_MS) /
                                    1e3 ||
                    !producer_running(c))
                        break;
                rd_kafka_poll(in->rk, 200);
        }
        snprintf(errstr, errstr_size, "topic \"%s\": metadata: %s",
                 c->o->topic, rd_kafka_err2str(err));
        return -1;
}

/* Waits for statistics that show the id and epoch init_transactions()
 * obtained.  A stats event queued before the init shows -1 and is
 * skipped. */
static int producer_learn_epoch(struct producer_ctx *c,
                                struct producer_inst *in, char *errstr,
                                size_t errstr_size)
{
        double deadline = clock_mono_s() + PRODUCER_STATS_WAIT_MS / 1e3;

        in->want_stats = 1;
        while (in->stats_pid < 0 && clock_mono_s() < deadline &&
               producer_running(c))
                rd_kafka_poll(in->rk, 100);
        in->want_stats = 0;
        if (in->stats_pid < 0) {
                snprintf(errstr, errstr_size,
                         "%s: no producer id in the statistics after "
                         "init_transactions()",
                         in->label);
                return -1;
        }
        in->pid = in->stats_pid;
        in->epoch = in->stats_epoch;
        return 0;
}

/*
 * Starts in: handle, topic, transactions (learning the epoch) and, on the
 * first instance, the partition count.  Returns 0, PRODUCER_ERR_CONFIG
 * when librdkafka rejects the configuration, else PRODUCER_ERR_RUN.
 */
static int producer_inst_open(struct producer_ctx *c, struct producer_inst *in,
                              const char *label, int32_t epoch, char *errstr,
                              size_t errstr_size)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_dup(c->conf);
        char err[512];

        in->ctx = c;
        in->label = label;
        in->epoch = epoch;
        in->pid = -1;
        in->stats_pid = -1;
        in->stats_epoch = -1;
        rd_kafka_conf_set_opaque(conf, in);
        in->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
        if (!in->rk) {
                rd_kafka_conf_destroy(conf);
                snprintf(errstr, errstr_size, "%s", err);
                return PRODUCER_ERR_CONFIG;
        }
        conf = NULL; /* owned by in->rk */
        in->rkt = rd_kafka_topic_new(in->rk, c->o->topic, NULL);
        if (!in->rkt) {
                snprintf(errstr, errstr_size, "topic \"%s\": %s", c->o->topic,
                         rd_kafka_err2str(rd_kafka_last_error()));
                return PRODUCER_ERR_CONFIG;
        }
        if (c->o->transactional_id) {
                rd_kafka_error_t *error =
                        rd_kafka_init_transactions(in->rk,
                                                   PRODUCER_INIT_TIMEOUT_MS);

                if (error) {
                        snprintf(errstr, errstr_size,
                                 "%s: init_transactions: %s", label,
                                 rd_kafka_error_string(error));
                        rd_kafka_error_destroy(error);
                        return PRODUCER_ERR_RUN;
                }
                if (producer_learn_epoch(c, in, errstr, errstr_size) == -1)
                        return PRODUCER_ERR_RUN;
        }
        if (c->partition_cnt == 0 &&
            producer_metadata(c, in, errstr, errstr_size) == -1)
                return PRODUCER_ERR_RUN;
        in->next_seq = calloc((size_t)c->partition_cnt, sizeof(*in->next_seq));
        in->part_ok = calloc((size_t)c->partition_cnt, sizeof(*in->part_ok));
        if (!in->next_seq || !in->part_ok) {
                snprintf(errstr, errstr_size, "out of memory");
                return PRODUCER_ERR_RUN;
        }
        snprintf(in->epoch_str, sizeof(in->epoch_str), "%" PRId32, in->epoch);
        snprintf(in->pid_str, sizeof(in->pid_str), "%" PRId64, in->pid);
        return 0;
}

static void producer_inst_close(struct producer_inst *in)
{
        if (in->rkt)
                rd_kafka_topic_destroy(in->rkt);
        if (in->rk)
                rd_kafka_destroy(in->rk);
        free(in->next_seq);
        free(in->part_ok);
        memset(in, 0, sizeof(*in));
}

/* Waits for every outstanding delivery report; delivery.timeout.ms bounds
 * the wait. */
static void producer_flush(struct producer_inst *in)
{
        while (rd_kafka_flush(in->rk, 1000) == RD_KAFKA_RESP_ERR__TIMED_OUT)
                ;
}

/* Fills errstr from the instance's fatal error; returns its code. */
static rd_kafka_resp_err_t producer_fatal(struct producer_inst *in,
                                          char *errstr, size_t errstr_size)
{
        char reason[512];
        rd_kafka_resp_err_t err =
                rd_kafka_fatal_error(in->rk, reason, sizeof(reason));

        if (err)
                snprintf(errstr, errstr_size, "%s: fatal error: %s: %s",
                         in->label, rd_kafka_err2name(err), reason);
        return err;
}

/* ------------------------------------------------------------------ */
/* Producing                                                           */
/* ------------------------------------------------------------------ */

/* Holds the loop back to --rate, serving callbacks meanwhile. */
static void producer_pace(struct producer_ctx *c, struct producer_inst *in)
{
        double due;

        if (c->t_start == 0)
                c->t_start = clock_mono_s();
        if (c->o->rate <= 0)
                return;
        due = c->t_start + (double)c->paced++ / c->o->rate;
        for (;;) {
                double wait = due - clock_mono_s();

                if (wait <= 0 || !producer_running(c))
                        return;
                rd_kafka_poll(in->rk, wait > 0.1 ? 100 : (int)(wait * 1e3) + 1);
        }
}

/* One write: record n (key, partition) with seq; tag goes to its delivery
 * report (PRODUCER_TAG_*). */
struct producer_write {
        int64_t n;
        const char *key;
        size_t key_len;
        int32_t partition;
        int64_t seq;
        uintptr_t tag;
};

/* Enqueues one write, waiting while librdkafka's queue is full (unless
 * stopping, then __QUEUE_FULL is returned). */
static rd_kafka_resp_err_t producer_enqueue(struct producer_ctx *c,
                                            struct producer_inst *in,
                                            const struct producer_write *w)
{
        const struct producer_opts *o = c->o;
        char seq_str[24], index_str[24];
        int seq_len = snprintf(seq_str, sizeof(seq_str), "%" PRId64, w->seq);
        const char *id = NULL;
        size_t id_len = 0;

        /* Every copy of record n is stamped here, so all carry its id. */
        if (o->msgid_from == PRODUCER_MSGID_KEY) {
                id = w->key;
                id_len = w->key_len;
        } else if (o->msgid_from == PRODUCER_MSGID_INDEX) {
                id = index_str;
                id_len = (size_t)snprintf(index_str, sizeof(index_str),
                                          "%" PRId64, w->n);
        }
        for (;;) {
                rd_kafka_headers_t *hdrs = rd_kafka_headers_new(5);
                rd_kafka_resp_err_t err;

                rd_kafka_header_add(hdrs, EOS_HDR_PRODUCER, -1, o->name,
                                    (ssize_t)c->name_len);
                rd_kafka_header_add(hdrs, EOS_HDR_EPOCH, -1, in->epoch_str, -1);
                rd_kafka_header_add(hdrs, EOS_HDR_SEQ, -1, seq_str, seq_len);
                if (in->pid >= 0)
                        rd_kafka_header_add(hdrs, EOS_HDR_PID, -1, in->pid_str,
                                            -1);
                if (id)
                        rd_kafka_header_add(hdrs, o->msgid_header, -1, id,
                                            (ssize_t)id_len);
                /* No copy: c->value outlives the handle. */
                err = rd_kafka_producev(
                        in->rk, RD_KAFKA_V_RKT(in->rkt),
                        RD_KAFKA_V_PARTITION(w->partition),
                        RD_KAFKA_V_KEY(w->key, w->key_len),
                        RD_KAFKA_V_VALUE(c->value, (size_t)o->value_size),
                        RD_KAFKA_V_HEADERS(hdrs),
                        RD_KAFKA_V_OPAQUE((void *)w->tag), RD_KAFKA_V_END);
                if (!err)
                        return 0; /* hdrs owned by the message */
                rd_kafka_headers_destroy(hdrs);
                if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL ||
                    !producer_running(c))
                        return err;
                rd_kafka_poll(in->rk, 100);
        }
}

/*
 * Produces record n (key, partition) with in's next seq, injecting a gap
 * before it and a duplicate after it when inject says so (the live
 * session; it also follows the record for replays).  Returns 0, 1 when
 * stopping left it unsent, or -1 on a fatal error (errstr).
 */
static int producer_send(struct producer_ctx *c, struct producer_inst *in,
                         int64_t n, const char *key, size_t key_len,
                         int32_t partition, int inject,
                         struct producer_tally *t, char *errstr,
                         size_t errstr_size)
{
        const struct producer_opts *o = c->o;
        int gap = inject && producer_rng_hit(&c->rng_gap, o->gap_rate);
        int dup = inject && producer_rng_hit(&c->rng_dup, o->dup_rate);
        struct producer_write w = {
                .n = n,
                .key = key,
                .key_len = key_len,
                .partition = partition,
                .seq = in->next_seq[partition] + gap,
                .tag = PRODUCER_TAG_NONE,
        };
        rd_kafka_resp_err_t err;

        if (inject && c->sent) {
                struct producer_sent *s = &c->sent[n % o->restart_replay];

                /* Reset before the send: a retried transaction sends n
                 * again and only the last send's report counts. */
                s->n = n;
                s->delivered = 0;
                w.tag = producer_tag_record(n);
        }
        err = producer_enqueue(c, in, &w);
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                return 1;
        if (err && producer_fatal(in, errstr, errstr_size))
                return -1;
        /* The seq is spent even when the record fails: an auditor sees the
         * lost record as a gap. */
        in->next_seq[partition] = w.seq + 1;
        if (err) {
                t->failed++;
                return 0;
        }
        t->records++;
        t->sent++;
        t->gaps += (uint64_t)gap;
        if (!dup)
                return 0;
        /* Same tag: n is delivered when either copy is. */
        err = producer_enqueue(c, in, &w);
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                return 1;
        if (err && producer_fatal(in, errstr, errstr_size))
                return -1;
        if (!err) {
                t->sent++;
                t->dups++;
        }
        return 0;
}

/*
 * Writes record n again in in's session: same key, value, id and
 * partition, in's next seq, no injection.  Returns 0, 1 when stopping
 * left it unsent, or -1 on a fatal error (errstr).
 */
static int producer_send_replay(struct producer_ctx *c,
                                struct producer_inst *in, int64_t n,
                                struct producer_tally *t, char *errstr,
                                size_t errstr_size)
{
        char key[PRODUCER_KEY_MAX];
        struct producer_write w = {.n = n, .tag = PRODUCER_TAG_REPLAY};
        rd_kafka_resp_err_t err;

        w.key = key;
        w.key_len = (size_t)snprintf(key, sizeof(key), "%s-%" PRId64,
                                     c->o->name, n);
        w.partition = producer_partition(key, w.key_len, c->partition_cnt);
        w.seq = in->next_seq[w.partition];
        err = producer_enqueue(c, in, &w);
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                return 1;
        if (err && producer_fatal(in, errstr, errstr_size))
                return -1;
        in->next_seq[w.partition] = w.seq + 1; /* spent, as in send() */
        if (err) {
                t->replay_failed++;
                return 0;
        }
        t->sent++;
        return 0;
}

/* The next record's key and partition; a zombie skips keys of partitions
 * the live session has not delivered to.  Returns -1 if none is found. */
static int producer_next_key(struct producer_ctx *c, enum producer_phase ph,
                             const struct producer_inst *live, int64_t *n,
                             char *key, size_t *key_len, int32_t *partition)
{
        int skips;

        for (skips = 0; skips < PRODUCER_ZOMBIE_SKIPS; skips++) {
                int len = snprintf(key, PRODUCER_KEY_MAX, "%s-%" PRId64,
                                   c->o->name, *n);

                *key_len = (size_t)len;
                *partition = producer_partition(key, *key_len,
                                                c->partition_cnt);
                if (ph != PRODUCER_PHASE_ZOMBIE ||
                    live->part_ok[*partition] > 0)
                        return 0;
                (*n)++;
        }
        return -1;
}

/*
 * Produces the pending replays (live phase), then up to want records
 * (record numbers from *n on), without flushing.  Returns 0, or -1 on a
 * fatal error (errstr).
 */
static int producer_send_batch(struct producer_ctx *c,
                               struct producer_inst *in,
                               enum producer_phase ph,
                               const struct producer_inst *live, int64_t *n,
                               uint64_t want, struct producer_tally *t,
                               char *errstr, size_t errstr_size)
{
        char key[PRODUCER_KEY_MAX];
        size_t key_len;
        int32_t partition;

        while (producer_running(c)) {
                int r;

                if (ph == PRODUCER_PHASE_LIVE &&
                    c->replay_pos < c->replay_cnt) {
                        producer_pace(c, in);
                        r = producer_send_replay(c, in,
                                                 c->replay[c->replay_pos], t,
                                                 errstr, errstr_size);
                        if (r == -1)
                                return -1;
                        if (r == 1)
                                return 0;
                        c->replay_pos++;
                        rd_kafka_poll(in->rk, 0);
                        continue;
                }
                if (t->records + t->failed >= want)
                        break;
                if (producer_next_key(c, ph, live, n, key, &key_len,
                                      &partition) == -1)
                        return 0;
                producer_pace(c, in);
                r = producer_send(c, in, *n, key, key_len, partition,
                                  ph == PRODUCER_PHASE_LIVE, t, errstr,
                                  errstr_size);
                if (r == -1)
                        return -1;
                if (r == 1)
                        return 0;
                (*n)++;
                rd_kafka_poll(in->rk, 0);
        }
        return 0;
}

/* Delivery report counters of an instance at the start of a unit. */
struct producer_mark {
        uint64_t ok, err, replay_ok;
};

static struct producer_mark producer_mark_take(const struct producer_inst *in)
{
        struct producer_mark m = {in->dr_ok, in->dr_err, in->dr_replay_ok};

        return m;
}

/* Adds what one committed (or non-transactional) unit of in, begun at m,
 * achieved. */
static void producer_tally_add(struct producer_ctx *c, enum producer_phase ph,
                               const struct producer_tally *t,
                               const struct producer_inst *in,
                               const struct producer_mark *m)
{
        struct producer_result *res = c->res;
        uint64_t delivered = in->dr_ok - m->ok;

        res->delivered += delivered;
        res->failed += in->dr_err - m->err + t->failed + t->replay_failed;
        if (ph == PRODUCER_PHASE_ZOMBIE) {
                res->zombie_records += delivered;
                return;
        }
        res->records += t->records;
        res->duplicates_injected += t->dups;
        res->gaps_injected += t->gaps;
        res->redelivered_injected += in->dr_replay_ok - m->replay_ok;
}

static int producer_phase_idempotent(struct producer_ctx *c,
                                     struct producer_inst *in,
                                     enum producer_phase ph,
                                     const struct producer_inst *live,
                                     int64_t *n, uint64_t want, char *errstr,
                                     size_t errstr_size)
{
        struct producer_tally t = {0};
        struct producer_mark m = producer_mark_take(in);
        int rc;

        rc = producer_send_batch(c, in, ph, live, n, want, &t, errstr,
                                 errstr_size);
        producer_flush(in);
        producer_tally_add(c, ph, &t, in, &m);
        return rc;
}

/* Classifies a transaction call's error and destroys it. */
static enum producer_txn producer_txn_error(struct producer_inst *in,
                                            rd_kafka_error_t *error,
                                            const char *call,
                                            rd_kafka_resp_err_t *code,
                                            char *errstr, size_t errstr_size)
{
        enum producer_txn r;

        *code = RD_KAFKA_RESP_ERR_NO_ERROR;
        if (!error)
                return PRODUCER_TXN_OK;
        *code = rd_kafka_error_code(error);
        snprintf(errstr, errstr_size, "%s: %s: %s", in->label, call,
                 rd_kafka_error_string(error));
        r = rd_kafka_error_txn_requires_abort(error) ? PRODUCER_TXN_ABORTABLE
                                                     : PRODUCER_TXN_FATAL;
        rd_kafka_error_destroy(error);
        if (r == PRODUCER_TXN_FATAL && !producer_err_is_fenced(*code)) {
                rd_kafka_resp_err_t fatal = rd_kafka_fatal_error(in->rk,
                                                                 NULL, 0);

                if (fatal)
                        *code = fatal;
        }
        return r;
}

/* commit (abort == 0) or abort the open transaction, retrying retriable
 * errors. */
static enum producer_txn producer_txn_end(struct producer_inst *in, int abort,
                                          rd_kafka_resp_err_t *code,
                                          char *errstr, size_t errstr_size)
{
        rd_kafka_error_t *error = NULL;
        int tries;

        if (abort)
                producer_flush(in); /* so every report is in before */
        for (tries = 0; tries < PRODUCER_TXN_CALL_TRIES; tries++) {
                error = abort ? rd_kafka_abort_transaction(in->rk, -1)
                              : rd_kafka_commit_transaction(in->rk, -1);
                if (!error || !rd_kafka_error_is_retriable(error))
                        break;
                rd_kafka_error_destroy(error);
                error = NULL;
        }
        if (tries == PRODUCER_TXN_CALL_TRIES) {
                *code = RD_KAFKA_RESP_ERR__TIMED_OUT;
                snprintf(errstr, errstr_size, "%s: %s_transaction: %s",
                         in->label, abort ? "abort" : "commit",
                         "still failing after retries");
                return PRODUCER_TXN_FATAL;
        }
        return producer_txn_error(in, error,
                                  abort ? "abort_transaction"
                                        : "commit_transaction",
                                  code, errstr, errstr_size);
}

/*
 * Transactions of o->txn_size records until want records are committed.
 * A transaction aborted on purpose (--abort-every) or by an abortable
 * error is produced again with the same records and seqs.  A zombie
 * fenced by the broker is an expected outcome (res->zombie_fenced), not
 * an error.  Returns 0, or -1 with errstr.
 */
static int producer_phase_txn(struct producer_ctx *c, struct producer_inst *in,
                              enum producer_phase ph,
                              const struct producer_inst *live, int64_t *n,
                              uint64_t want, char *errstr,
                              size_t errstr_size)
{
        const struct producer_opts *o = c->o;
        struct producer_result *res = c->res;
        size_t seq_size = (size_t)c->partition_cnt * sizeof(*in->next_seq);
        rd_kafka_resp_err_t code = RD_KAFKA_RESP_ERR_NO_ERROR;
        enum producer_txn r = PRODUCER_TXN_OK;
        uint64_t done = 0, lost = 0;
        int failures = 0;

        while (done < want && producer_running(c)) {
                struct producer_tally t = {0};
                struct producer_mark m = producer_mark_take(in);
                uint64_t chunk = want - done;
                uint64_t rng_gap0 = c->rng_gap, rng_dup0 = c->rng_dup;
                size_t replay_pos0 = c->replay_pos;
                int64_t n0 = *n;
                int deliberate;

                if (chunk > (uint64_t)o->txn_size)
                        chunk = (uint64_t)o->txn_size;
                memcpy(c->seq_saved, in->next_seq, seq_size);
                r = producer_txn_error(in, rd_kafka_begin_transaction(in->rk),
                                       "begin_transaction", &code, errstr,
                                       errstr_size);
                if (r != PRODUCER_TXN_OK) {
                        r = PRODUCER_TXN_FATAL;
                        break;
                }
                c->txn_no++;
                if (producer_send_batch(c, in, ph, live, n, chunk, &t, errstr,
                                        errstr_size) == -1) {
                        code = producer_fatal(in, errstr, errstr_size);
                        r = PRODUCER_TXN_FATAL;
                        lost = t.records;
                        break;
                }
                /* A stop commits what was produced rather than abort it. */
                deliberate = ph == PRODUCER_PHASE_LIVE && o->abort_every &&
                             c->txn_no % (uint64_t)o->abort_every == 0 &&
                             producer_running(c);
                r = deliberate ? PRODUCER_TXN_ABORTABLE
                               : producer_txn_end(in, 0, &code, errstr,
                                                  errstr_size);
                if (r == PRODUCER_TXN_OK) {
                        failures = 0;
                        res->transactions++;
                        producer_tally_add(c, ph, &t, in, &m);
                        done += t.records + t.failed;
                        continue;
                }
                if (r == PRODUCER_TXN_ABORTABLE && !deliberate &&
                    ++failures >= PRODUCER_TXN_FAILURES) {
                        char last[512];

                        snprintf(last, sizeof(last), "%s", errstr);
                        (void)producer_txn_end(in, 1, &code, errstr,
                                               errstr_size);
                        snprintf(errstr, errstr_size,
                                 "transaction failed %d times; last: %s",
                                 failures, last);
                        res->failed += t.records;
                        return -1;
                }
                if (r == PRODUCER_TXN_ABORTABLE)
                        r = producer_txn_end(in, 1, &code, errstr,
                                             errstr_size);
                if (r != PRODUCER_TXN_OK) {
                        lost = t.records;
                        break;
                }
                /* The retry replays the very same writes, replayed
                 * copies included. */
                res->aborted += t.sent;
                res->aborted_transactions++;
                *n = n0;
                memcpy(in->next_seq, c->seq_saved, seq_size);
                c->rng_gap = rng_gap0;
                c->rng_dup = rng_dup0;
                c->replay_pos = replay_pos0;
        }
        if (r == PRODUCER_TXN_OK)
                return 0;
        if (ph == PRODUCER_PHASE_ZOMBIE && producer_err_is_fenced(code)) {
                res->zombie_fenced = 1;
                return 0;
        }
        res->failed += lost;
        return -1;
}

/*
 * A crash and restart of the application between two records (n is the
 * next one): in's units are flushed and committed, so every report is in.
 * Picks the records to replay, destroys in and opens a new session in its
 * place, with a strictly higher epoch: the next one of --state's counter,
 * the broker's when transactional (or the last one + 1 if the broker's is
 * not above it), else the last one + 1.  Returns 0 or PRODUCER_ERR_RUN
 * (errstr); in is left for producer_inst_close() either way.
 */
static int producer_restart(struct producer_ctx *c, struct producer_inst *in,
                            int64_t n, char *errstr, size_t errstr_size)
{
        const struct producer_opts *o = c->o;
        int64_t prev = in->epoch, epoch = prev + 1, i;

        if (prev >= INT32_MAX) {
                snprintf(errstr, errstr_size,
                         "restart: no epoch left above %" PRId64, prev);
                return PRODUCER_ERR_RUN;
        }
        /* The delivered ones among the last restart_replay records: a
         * record that was lost is not a redelivery when sent again. */
        c->replay_cnt = 0;
        c->replay_pos = 0;
        for (i = n > o->restart_replay ? n - o->restart_replay : 0;
             c->sent && i < n; i++) {
                const struct producer_sent *s =
                        &c->sent[i % o->restart_replay];

                if (s->n == i && s->delivered)
                        c->replay[c->replay_cnt++] = i;
        }

        producer_inst_close(in); /* the crash: rd_kafka_destroy() */
        if (o->state_path) {
                if (producer_state_take(o->state_path, 1, &epoch, errstr,
                                        errstr_size) == -1)
                        return PRODUCER_ERR_RUN;
                if (epoch <= prev) {
                        snprintf(errstr, errstr_size,
                                 "state \"%s\": the counter went back to "
                                 "%" PRId64 " below this run's epoch %" PRId64,
                                 o->state_path, epoch - 1, prev);
                        return PRODUCER_ERR_RUN;
                }
        }
        if (producer_inst_open(c, in, "producer", (int32_t)epoch, errstr,
                               errstr_size) != 0)
                return PRODUCER_ERR_RUN;
        if (in->epoch <= prev) {
                /* Transactional only: a broker that does not bump the
                 * epoch (librdkafka's mock cluster) or that gave a new
                 * producer id at epoch 0 (exhaustion). */
                char msg[160];

                snprintf(msg, sizeof(msg),
                         "restart: the broker's epoch %" PRId32
                         " is not above the last session's %" PRId64
                         ": stamping %" PRId64,
                         in->epoch, prev, prev + 1);
                producer_warn(o, msg);
                in->epoch = (int32_t)(prev + 1);
                snprintf(in->epoch_str, sizeof(in->epoch_str), "%" PRId32,
                         in->epoch);
        }
        c->res->restarts++;
        c->res->epoch = in->epoch;
        c->res->pid = in->pid;
        return 0;
}

int producer_run(const struct producer_opts *o, struct producer_result *res,
                 char *errstr, size_t errstr_size)
{
        struct producer_ctx c;
        struct producer_inst a, b; /* a: the only one, or the zombie */
        int (*phase)(struct producer_ctx *, struct producer_inst *,
                     enum producer_phase, const struct producer_inst *,
                     int64_t *, uint64_t, char *, size_t);
        uint64_t count = (uint64_t)o->count;
        int64_t epoch = o->epoch >= 0 ? o->epoch : 0;
        int64_t n = 0; /* the next record number */
        size_t i;
        int rc = PRODUCER_ERR_CONFIG;

        memset(&c, 0, sizeof(c));
        memset(&a, 0, sizeof(a));
        memset(&b, 0, sizeof(b));
        memset(res, 0, sizeof(*res));
        res->epoch = -1;
        res->zombie_epoch = -1;
        res->pid = -1;
        c.o = o;
        c.res = res;
        if (producer_opts_check(o, errstr, errstr_size) == -1)
                goto out;
        c.name_len = strlen(o->name);
        c.rng_gap = o->seed ^ 0x6761707367617073ull; /* independent streams */
        c.rng_dup = o->seed ^ 0x6475707364757073ull;
        c.conf = producer_conf_new(o, errstr, errstr_size);
        if (!c.conf)
                goto out;

        rc = PRODUCER_ERR_RUN;
        if (o->value_size > 0) {
                c.value = malloc((size_t)o->value_size);
                if (!c.value) {
                        snprintf(errstr, errstr_size, "out of memory");
                        goto out;
                }
                memset(c.value, 'x', (size_t)o->value_size);
        }
        if (o->state_path &&
            producer_state_take(o->state_path, o->zombie ? 2 : 1, &epoch,
                                errstr, errstr_size) == -1)
                goto out;

        rc = producer_inst_open(&c, &a, o->zombie ? "zombie" : "producer",
                                (int32_t)epoch, errstr, errstr_size);
        if (rc != 0)
                goto out;
        rc = PRODUCER_ERR_RUN;
        res->partition_cnt = c.partition_cnt;
        c.seq_saved = calloc((size_t)c.partition_cnt, sizeof(*c.seq_saved));
        if (!c.seq_saved) {
                snprintf(errstr, errstr_size, "out of memory");
                goto out;
        }
        if (o->restart_every > 0 && o->restart_replay > 0) {
                c.sent = malloc((size_t)o->restart_replay * sizeof(*c.sent));
                c.replay = malloc((size_t)o->restart_replay *
                                  sizeof(*c.replay));
                if (!c.sent || !c.replay) {
                        snprintf(errstr, errstr_size, "out of memory");
                        goto out;
                }
                for (i = 0; i < (size_t)o->restart_replay; i++)
                        c.sent[i].n = -1;
        }
        phase = o->transactional_id ? producer_phase_txn
                                    : producer_phase_idempotent;
        if (!o->zombie) {
                res->epoch = a.epoch;
                res->pid = a.pid;
                for (;;) {
                        /* n counts the records done, as -n counts them. */
                        uint64_t want = count - (uint64_t)n;

                        if (o->restart_every > 0 &&
                            want > (uint64_t)o->restart_every)
                                want = (uint64_t)o->restart_every;
                        if (phase(&c, &a, PRODUCER_PHASE_LIVE, NULL, &n,
                                  want, errstr, errstr_size) == -1)
                                goto out;
                        if (!o->restart_every || (uint64_t)n >= count ||
                            !producer_running(&c))
                                break;
                        if (producer_restart(&c, &a, n, errstr,
                                             errstr_size) != 0)
                                goto out;
                }
                rc = 0;
                goto out;
        }
        res->zombie_epoch = a.epoch;
        if (phase(&c, &a, PRODUCER_PHASE_LIVE, NULL, &n, count - count / 2,
                  errstr, errstr_size) == -1)
                goto out;
        /* Only now: B's init_transactions() fences A at the broker. */
        if (producer_running(&c) &&
            producer_inst_open(&c, &b, "producer", (int32_t)epoch + 1,
                               errstr, errstr_size) != 0)
                goto out;
        if (b.rk) {
                res->epoch = b.epoch;
                res->pid = b.pid;
                if (b.epoch <= a.epoch)
                        producer_warn(o, "the new session's epoch is not "
                                         "above the zombie's: the auditor "
                                         "cannot tell them apart");
                if (phase(&c, &b, PRODUCER_PHASE_LIVE, NULL, &n, count / 2,
                          errstr, errstr_size) == -1)
                        goto out;
                n = o->count;
                if (phase(&c, &a, PRODUCER_PHASE_ZOMBIE, &b, &n,
                          count / 10 > 0 ? count / 10 : 1, errstr,
                          errstr_size) == -1)
                        goto out;
        }
        rc = 0;
out:
        /* Every phase ends with a flush: this is the last report. */
        if (c.t_start > 0)
                res->elapsed_ms = (int64_t)((clock_mono_s() - c.t_start) *
                                            1e3);
        res->stopped = !producer_running(&c);
        producer_inst_close(&b);
        producer_inst_close(&a);
        if (c.conf)
                rd_kafka_conf_destroy(c.conf);
        free(c.seq_saved);
        free(c.sent);
        free(c.replay);
        free(c.value); /* after the handles: records point into it */
        return rc;
}

int producer_result_format(const struct producer_result *res, int json,
                           char *buf, size_t size)
{
        const struct {
                const char *name;
                int64_t value;
        } f[] = {
                {"delivered", (int64_t)res->delivered},
                {"failed", (int64_t)res->failed},
                {"aborted", (int64_t)res->aborted},
                {"duplicates_injected", (int64_t)res->duplicates_injected},
                {"gaps_injected", (int64_t)res->gaps_injected},
                {"epoch", res->epoch},
                {"records", (int64_t)res->records},
                {"partitions", res->partition_cnt},
                {"pid", res->pid},
                {"transactions", (int64_t)res->transactions},
                {"aborted_transactions", (int64_t)res->aborted_transactions},
                {"zombie_records", (int64_t)res->zombie_records},
                {"zombie_fenced", res->zombie_fenced},
                {"zombie_epoch", res->zombie_epoch},
                {"redelivered_injected", (int64_t)res->redelivered_injected},
                {"restarts", (int64_t)res->restarts},
                {"stopped", res->stopped},
                {"elapsed_ms", res->elapsed_ms},
        };
        size_t i, len = 0;
        int r;

        for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
                char *p = len < size ? buf + len : NULL;
                size_t left = len < size ? size - len : 0;

                if (json)
                        r = snprintf(p, left, "%s\"%s\":%" PRId64,
                                     i ? "," : "{", f[i].name, f[i].value);
                else
                        r = snprintf(p, left, "%s%s=%" PRId64, i ? " " : "",
                                     f[i].name, f[i].value);
                if (r < 0)
                        return r;
                len += (size_t)r;
        }
        if (json) {
                r = snprintf(len < size ? buf + len : NULL,
                             len < size ? size - len : 0, "}");
                if (r < 0)
                        return r;
                len += (size_t)r;
        }
        return (int)len;
}

/* ------------------------------------------------------------------ */
/* Command line                                                        */
/* ------------------------------------------------------------------ */

/* Two strings: C11 compilers need only take 4095 characters in one. */
static const char producer_usage[] =
        "usage: eosaudit produce -b BROKERS -t TOPIC --producer NAME "
        "[options]\n"
        "\n"
        "Writes records stamped with the eos.producer, eos.epoch and "
        "eos.seq headers\n"
        "(eos.pid too when transactional) and a message id (eos.msgid) "
        "with an\n"
        "idempotent producer (acks=all).\n"
        "Record n has key NAME-n and goes to partition "
        "murmur2(key) % partitions,\n"
        "as Kafka's Java default partitioner would put it; eos.seq "
        "counts per\n"
        "(producer, epoch, topic, partition) from 0.\n"
        "\n"
        "  -b, --brokers BROKERS      bootstrap servers (or "
        "bootstrap.servers via -X/-F)\n"
        "  -t, --topic TOPIC          topic to write (must exist or be "
        "auto-created)\n"
        "      --producer NAME        eos.producer value, 1..255 bytes "
        "(default: the\n"
        "                             transactional id, if any)\n"
        "  -n, --count COUNT          records to deliver (default 1000)\n"
        "      --rate N               records/s, 0 = unlimited (default 0)\n"
        "      --size BYTES           value size (default 100, max "
        "100000000)\n"
        "      --transactional-id ID  produce in transactions; the epoch "
        "and eos.pid\n"
        "                             come from the broker\n"
        "      --txn-size N           records per transaction (default 100)\n"
        "      --abort-every N        abort every Nth transaction, 0 = never "
        "(default 0,\n"
        "                             else >= 2); the next transaction "
        "reuses the\n"
        "                             aborted records and seqs\n"
        "      --state FILE           session counter: FILE holds one line, "
        "the last\n"
        "                             epoch used (decimal); each run (and "
        "restart)\n"
        "                             takes the next one and writes it back "
        "(temp\n"
        "                             file + rename) before producing; no "
        "FILE: epoch\n"
        "                             0, +1 per restart\n"
        "      --epoch N              use epoch N (0..2147483647; +1 per "
        "restart); not\n"
        "                             with --state\n"
        "      --inject-duplicates P  with probability P (0..1) write a "
        "record twice\n"
        "      --inject-gaps P        with probability P (0..1) skip the "
        "seq before a\n"
        "                             record\n"
        "      --zombie               a stale session writes after a newer "
        "one: session\n"
        "                             A writes the first half, B (epoch "
        "A+1) the rest,\n"
        "                             then A writes count/10 more (at "
        "least 1) to\n"
        "                             partitions B wrote; transactional: "
        "B fences A at\n"
        "                             the broker and A's last transaction "
        "must fail\n"
        "      --msgid-from WHAT      each record's message id, the same in "
        "every copy\n"
        "                             of it: key (NAME-n, the default), "
        "index (n, in\n"
        "                             decimal) or none (no id header)\n"
        "      --msgid-header NAME    header the id goes under (default "
        "eos.msgid),\n"
        "                             1..255 bytes, not one of the other "
        "eos.* headers\n"
        "      --restart-every N      after every N records (0 = never, the "
        "default):\n"
        "                             flush (commit when transactional), "
        "destroy the\n"
        "                             producer and start a new one: a new "
        "session, with\n"
        "                             a higher epoch and seqs from 0, that "
        "first writes\n"
        "                             again the last records delivered "
        "before; not\n"
        "                             with --zombie\n"
        "      --restart-replay M     records written again after each "
        "restart\n"
        "                             (0..1000000, default 10; never more "
        "than were\n"
        "                             delivered): same key, value, id and "
        "partition,\n"
        "                             a new seq; only the id tells them from "
        "new ones\n"
        "      --seed N               seed for the injections (default 1)\n"
        "  -X KEY=VALUE               librdkafka property (repeatable; after "
        "-F)\n"
        "  -F FILE                    librdkafka properties file: "
        "key=value lines, #\n"
        "                             comments\n"
        "      --json                 also print the summary as JSON on "
        "stdout\n"
        "  -q, --quiet                no warnings, no librdkafka log\n"
        "  -h, --help                 this help\n";

static const char producer_usage_notes[] =
        "\n"
        "Defaults before -F/-X: enable.idempotence=true acks=all\n"
        "max.in.flight.requests.per.connection=5 "
        "message.send.max.retries=2147483647\n"
        "linger.ms=5 (statistics.interval.ms=100 when transactional).\n"
        "\n"
        "Prints one summary line to stderr:\n"
        "  produce: delivered=N failed=M aborted=K duplicates_injected=D "
        "gaps_injected=G\n"
        "  epoch=E records=R partitions=P pid=I transactions=T "
        "aborted_transactions=A\n"
        "  zombie_records=Z zombie_fenced=0|1 zombie_epoch=E "
        "redelivered_injected=R\n"
        "  restarts=S stopped=0|1 elapsed_ms=MS\n"
        "delivered counts visible writes (records, duplicates, replayed "
        "copies,\n"
        "zombie writes); epoch and pid are the last session's.\n"
        "SIGINT/SIGTERM stop producing; the run still flushes and "
        "reports.\n"
        "Exit status: 0 all delivered, 1 some records not delivered or a "
        "run-time\n"
        "error, 2 usage or configuration error.\n";

enum {
        PRODUCER_OPT_PRODUCER = 256,
        PRODUCER_OPT_RATE,
        PRODUCER_OPT_SIZE,
        PRODUCER_OPT_TXID,
        PRODUCER_OPT_TXN_SIZE,
        PRODUCER_OPT_ABORT_EVERY,
        PRODUCER_OPT_STATE,
        PRODUCER_OPT_EPOCH,
        PRODUCER_OPT_DUPS,
        PRODUCER_OPT_GAPS,
        PRODUCER_OPT_ZOMBIE,
        PRODUCER_OPT_SEED,
        PRODUCER_OPT_JSON,
        PRODUCER_OPT_MSGID_FROM,
        PRODUCER_OPT_MSGID_HEADER,
        PRODUCER_OPT_RESTART_EVERY,
        PRODUCER_OPT_RESTART_REPLAY,
};

static volatile sig_atomic_t producer_signal_run = 1;

static void producer_on_signal(int sig)
{
        (void)sig;
        producer_signal_run = 0;
}

/* Parses a numeric option's value; on failure prints one line. */
static int producer_arg_i64(const char *opt, int64_t min, int64_t max,
                            int64_t *out)
{
        if (kconf_parse_i64(optarg, min, max, out) == 0)
                return 0;
        if (max == INT64_MAX)
                fprintf(stderr,
                        "produce: %s: expected an integer >= %" PRId64
                        ", got \"%s\"\n",
                        opt, min, optarg);
        else
                fprintf(stderr,
                        "produce: %s: expected an integer in %" PRId64
                        "..%" PRId64 ", got \"%s\"\n",
                        opt, min, max, optarg);
        return -1;
}

static int producer_arg_double(const char *opt, double min, double max,
                               double *out)
{
        if (kconf_parse_double(optarg, min, max, out) == 0)
                return 0;
        if (isinf(max))
                fprintf(stderr,
                        "produce: %s: expected a number >= %g, got "
                        "\"%s\"\n",
                        opt, min, optarg);
        else
                fprintf(stderr,
                        "produce: %s: expected a number in %g..%g, got "
                        "\"%s\"\n",
                        opt, min, max, optarg);
        return -1;
}

/* Parses the arguments into o (kv must hold argc pointers).  Returns 0,
 * 1 for --help, or -1 after printing one line. */
static int producer_args(int argc, char **argv, struct producer_opts *o,
                         const char **kv, int *json)
{
        static const struct option longopts[] = {
                {"brokers", required_argument, NULL, 'b'},
                {"topic", required_argument, NULL, 't'},
                {"producer", required_argument, NULL, PRODUCER_OPT_PRODUCER},
                {"count", required_argument, NULL, 'n'},
                {"rate", required_argument, NULL, PRODUCER_OPT_RATE},
                {"size", required_argument, NULL, PRODUCER_OPT_SIZE},
                {"transactional-id", required_argument, NULL,
                 PRODUCER_OPT_TXID},
                {"txn-size", required_argument, NULL, PRODUCER_OPT_TXN_SIZE},
                {"abort-every", required_argument, NULL,
                 PRODUCER_OPT_ABORT_EVERY},
                {"state", required_argument, NULL, PRODUCER_OPT_STATE},
                {"epoch", required_argument, NULL, PRODUCER_OPT_EPOCH},
                {"inject-duplicates", required_argument, NULL,
                 PRODUCER_OPT_DUPS},
                {"inject-gaps", required_argument, NULL, PRODUCER_OPT_GAPS},
                {"zombie", no_argument, NULL, PRODUCER_OPT_ZOMBIE},
                {"seed", required_argument, NULL, PRODUCER_OPT_SEED},
                {"msgid-from", required_argument, NULL,
                 PRODUCER_OPT_MSGID_FROM},
                {"msgid-header", required_argument, NULL,
                 PRODUCER_OPT_MSGID_HEADER},
                {"restart-every", required_argument, NULL,
                 PRODUCER_OPT_RESTART_EVERY},
                {"restart-replay", required_argument, NULL,
                 PRODUCER_OPT_RESTART_REPLAY},
                {"json", no_argument, NULL, PRODUCER_OPT_JSON},
                {"quiet", no_argument, NULL, 'q'},
                {"help", no_argument, NULL, 'h'},
                {NULL, 0, NULL, 0},
        };
        int txn_size_given = 0, header_given = 0, replay_given = 0;
        int opt;

        optind = 0; /* glibc: rescan from scratch, this may be a 2nd call */
        opterr = 0;
        while ((opt = getopt_long(argc, argv, ":b:t:n:X:F:qh", longopts,
                                  NULL)) != -1) {
                switch (opt) {
                case 'b':
                        o->brokers = optarg;
                        break;
                case 't':
                        o->topic = optarg;
                        break;
                case PRODUCER_OPT_PRODUCER:
                        o->name = optarg;
                        break;
                case 'n':
                        if (producer_arg_i64("--count", 0, INT64_MAX,
                                             &o->count) == -1)
                                return -1;
                        break;
                case PRODUCER_OPT_RATE:
                        if (producer_arg_double("--rate", 0, HUGE_VAL,
                                                &o->rate) == -1)
                                return -1;
                        break;
                case PRODUCER_OPT_SIZE:
                        if (producer_arg_i64("--size", 0, PRODUCER_VALUE_MAX,
                                             &o->value_size) == -1)
                                return -1;
                        break;
                case PRODUCER_OPT_TXID:
                        o->transactional_id = optarg;
                        break;
                case PRODUCER_OPT_TXN_SIZE:
                        if (producer_arg_i64("--txn-size", 1, INT64_MAX,
                                             &o->txn_size) == -1)
                                return -1;
                        txn_size_given = 1;
                        break;
                case PRODUCER_OPT_ABORT_EVERY:
                        if (producer_arg_i64("--abort-every", 0, INT64_MAX,
                                             &o->abort_every) == -1)
                                return -1;
                        break;
                case PRODUCER_OPT_STATE:
                        o->state_path = optarg;
                        break;
                case PRODUCER_OPT_EPOCH:
                        if (producer_arg_i64("--epoch", 0, INT32_MAX,
                                             &o->epoch) == -1)
                                return -1;
                        break;
                case PRODUCER_OPT_DUPS:
                        if (producer_arg_double("--inject-duplicates", 0, 1,
                                                &o->dup_rate) == -1)
                                return -1;
                        break;
                case PRODUCER_OPT_GAPS:
                        if (producer_arg_double("--inject-gaps", 0, 1,
                                                &o->gap_rate) == -1)
                                return -1;
                        break;
                case PRODUCER_OPT_ZOMBIE:
                        o->zombie = 1;
                        break;
                case PRODUCER_OPT_SEED:
                        if (kconf_parse_u64(optarg, 0, UINT64_MAX,
                                            &o->seed) == -1) {
                                fprintf(stderr,
                                        "produce: --seed: expected an "
                                        "integer >= 0, got \"%s\"\n",
                                        optarg);
                                return -1;
                        }
                        break;
                case PRODUCER_OPT_MSGID_FROM:
                        if (strcmp(optarg, "key") == 0) {
                                o->msgid_from = PRODUCER_MSGID_KEY;
                        } else if (strcmp(optarg, "index") == 0) {
                                o->msgid_from = PRODUCER_MSGID_INDEX;
                        } else if (strcmp(optarg, "none") == 0) {
                                o->msgid_from = PRODUCER_MSGID_NONE;
                        } else {
                                fprintf(stderr,
                                        "produce: --msgid-from: expected "
                                        "key, index or none, got \"%s\"\n",
                                        optarg);
                                return -1;
                        }
                        break;
                case PRODUCER_OPT_MSGID_HEADER:
                        o->msgid_header = optarg; /* checked with the rest */
                        header_given = 1;
                        break;
                case PRODUCER_OPT_RESTART_EVERY:
                        if (producer_arg_i64("--restart-every", 0, INT64_MAX,
                                             &o->restart_every) == -1)
                                return -1;
                        break;
                case PRODUCER_OPT_RESTART_REPLAY:
                        if (producer_arg_i64("--restart-replay", 0,
                                             PRODUCER_REPLAY_MAX,
                                             &o->restart_replay) == -1)
                                return -1;
                        replay_given = 1;
                        break;
                case 'X':
                        kv[o->conf_kv_cnt++] = optarg;
                        break;
                case 'F':
                        o->conf_file = optarg;
                        break;
                case PRODUCER_OPT_JSON:
                        *json = 1;
                        break;
                case 'q':
                        o->quiet = 1;
                        break;
                case 'h':
                        return 1;
                case ':':
                        fprintf(stderr,
                                "produce: option \"%s\" needs a value (see "
                                "--help)\n",
                                argv[optind - 1]);
                        return -1;
                default:
                        if (optopt)
                                fprintf(stderr,
                                        "produce: unknown option \"-%c\" "
                                        "(see --help)\n",
                                        optopt);
                        else
                                fprintf(stderr,
                                        "produce: unknown option \"%s\" "
                                        "(see --help)\n",
                                        argv[optind - 1]);
                        return -1;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "produce: unexpected argument \"%s\"\n",
                        argv[optind]);
                return -1;
        }
        if (!o->name)
                o->name = o->transactional_id; /* as schema/HEADERS.md says */
        if (txn_size_given && !o->transactional_id) {
                fprintf(stderr,
                        "produce: --txn-size needs --transactional-id\n");
                return -1;
        }
        if (header_given && o->msgid_from == PRODUCER_MSGID_NONE) {
                fprintf(stderr, "produce: --msgid-header needs --msgid-from "
                                "key or index\n");
                return -1;
        }
        if (replay_given && !o->restart_every) {
                fprintf(stderr, "produce: --restart-replay needs "
                                "--restart-every N (N > 0)\n");
                return -1;
        }
        o->conf_kv = kv;
        return 0;
}

int producer_main(int argc, char **argv)
{
        struct producer_opts o;
        struct producer_result res;
        struct sigaction sa, old_int, old_term;
        const char **kv = calloc((size_t)argc + 1, sizeof(*kv));
        char errstr[512];
        char line[1024];
        int json = 0, status = 2, r;

        if (!kv) {
                fprintf(stderr, "produce: out of memory\n");
                return 2;
        }
        producer_opts_init(&o);
        r = producer_args(argc, argv, &o, kv, &json);
        if (r == 1) {
                fputs(producer_usage, stdout);
                fputs(producer_usage_notes, stdout);
                status = 0;
                goto out;
        }
        if (r == -1)
                goto out;
        if (producer_opts_check(&o, errstr, sizeof(errstr)) == -1) {
                fprintf(stderr, "produce: %s\n", errstr);
                goto out;
        }

        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = producer_on_signal;
        sigemptyset(&sa.sa_mask);
        producer_signal_run = 1;
        o.run = &producer_signal_run;
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        r = producer_run(&o, &res, errstr, sizeof(errstr));
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);

        if (r == PRODUCER_ERR_CONFIG) {
                fprintf(stderr, "produce: %s\n", errstr);
                goto out;
        }
        if (r != 0)
                fprintf(stderr, "produce: %s\n", errstr);
        producer_result_format(&res, 0, line, sizeof(line));
        fprintf(stderr, "produce: %s\n", line);
        if (json) {
                producer_result_format(&res, 1, line, sizeof(line));
                printf("%s\n", line);
                fflush(stdout);
        }
        status = r != 0 || res.failed > 0 ? 1 : 0;
out:
        free(kv);
        return status;
}
