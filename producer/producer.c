/*
 * producer.c - see producer.h: options, the session counter, the
 * librdkafka configuration and callbacks, instances and the summary;
 * producing itself is in run.c.
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
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <librdkafka/rdkafka.h>

#include "../base/clock.h"
#include "../base/kconf.h"
#include "../base/secrets.h"
#include "../dedup/eos_headers.h"
#include "internal.h"

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

int producer_running(const struct producer_ctx *c)
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
int producer_rng_hit(uint64_t *s, double p)
{
        double u = (double)(producer_rng_next(s) >> 11) * 0x1.0p-53;

        return u < p;
}

void producer_warn(const struct producer_opts *o, const char *msg)
{
        if (!o->quiet)
                fprintf(stderr, "produce: warning: %s\n", msg);
}

/* Even and never 0 for 0 <= n < INT64_MAX (see PRODUCER_TAG_NONE). */
uintptr_t producer_tag_record(int64_t n)
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

int producer_err_is_fenced(rd_kafka_resp_err_t err)
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
        else if (o->txn_manifests && !o->transactional_id)
                why = "--txn-manifests needs --transactional-id";
        else if (o->txn_manifests && !*o->txn_manifests)
                why = "--txn-manifests: the topic is empty";
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
                   name_len + 1 +
                           (size_t)producer_digits(producer_max_index(o)) >
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
        else if (o->scope_topic && (o->transactional_id || o->zombie))
                why = "--scope topic stamps a producer that does not know "
                      "its partitions: not with --transactional-id or "
                      "--zombie";
        else if (o->unkeyed && !o->scope_topic)
                why = "--unkeyed needs --scope topic (the partition of a "
                      "record without a key is librdkafka's choice)";
        else if (o->unkeyed && o->msgid_from == PRODUCER_MSGID_KEY)
                why = "--unkeyed needs --msgid-from index or none";
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
static int producer_state_read(const char *path, int64_t *last, char *errstr,
                               size_t errstr_size)
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
static int producer_state_write(const char *path, int64_t epoch, char *errstr,
                                size_t errstr_size)
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
int producer_state_take(const char *path, int n, int64_t *first, char *errstr,
                        size_t errstr_size)
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
        /* A manifest is no record: a failed one fails the commit. */
        if (tag == PRODUCER_TAG_MANIFEST)
                return;
        if (rkm->err) {
                in->dr_err++;
                return;
        }
        /*
         * Idempotent, a successful report carries the record's offset,
         * but for the records librdkafka acks implicitly: an earlier
         * batch failed, a later one to the partition succeeded, and it
         * takes the earlier records as written (the broker keeps a
         * producer's batches in seq order).  Not so when the broker had
         * no state of the producer on the partition: it takes a first
         * batch at any seq, the later one was written first, and the
         * earlier records never are (rd_kafka_dr_implicit_ack(); a topic
         * produced to before its partitions' logs exist, t_84).  Such a
         * record may or may not be in the log: not counted delivered.
         */
        if (c->idempotent && rkm->offset < 0) {
                in->dr_unconfirmed++;
                return;
        }
        in->dr_ok++;
        if (rkm->partition >= 0 && rkm->partition < in->ctx->partition_cnt)
                in->part_ok[rkm->partition]++;
        if (tag == PRODUCER_TAG_REPLAY) {
                in->dr_replay_ok++;
        } else if (tag != PRODUCER_TAG_NONE && c->sent) {
                int64_t n = (int64_t)((tag >> 1) - 1);
                struct producer_sent *s = &c->sent[n % c->o->restart_replay];

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

int producer_conf_idempotent(const rd_kafka_conf_t *conf)
{
        char val[16];

        producer_conf_value(conf, "enable.idempotence", val, sizeof(val));
        return strcmp(val, "true") == 0;
}

/* Defaults, then -F, then -X, then the flags that name a property. */
rd_kafka_conf_t *producer_conf_new(const struct producer_opts *o, char *errstr,
                                   size_t errstr_size)
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

        if (kconf_has(conf, "transactional.id")) {
                snprintf(errstr, errstr_size,
                         "set the transactional id with --transactional-id, "
                         "not as a property");
                goto fail;
        }
        if (o->brokers &&
            producer_conf_put(conf, "bootstrap.servers", o->brokers, errstr,
                              errstr_size) == -1)
                goto fail;
        if (!kconf_has(conf, "bootstrap.servers")) {
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
        if (!o->quiet)
                secrets_kconf_check(conf);
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
int producer_inst_open(struct producer_ctx *c, struct producer_inst *in,
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
                rd_kafka_error_t *error = rd_kafka_init_transactions(
                    in->rk, PRODUCER_INIT_TIMEOUT_MS);

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

void producer_inst_close(struct producer_inst *in)
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
void producer_flush(struct producer_inst *in)
{
        while (rd_kafka_flush(in->rk, 1000) == RD_KAFKA_RESP_ERR__TIMED_OUT)
                ;
}

/* Fills errstr from the instance's fatal error; returns its code. */
rd_kafka_resp_err_t producer_fatal(struct producer_inst *in, char *errstr,
                                   size_t errstr_size)
{
        char reason[512];
        rd_kafka_resp_err_t err = rd_kafka_fatal_error(in->rk, reason,
                                                       sizeof(reason));

        if (err)
                snprintf(errstr, errstr_size, "%s: fatal error: %s: %s",
                         in->label, rd_kafka_err2name(err), reason);
        return err;
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
            {"unconfirmed", (int64_t)res->unconfirmed},
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
