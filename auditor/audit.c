/*
 * audit.c - see audit.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "../base/clock.h"
#include "audit.h"
#include "../base/log.h"

#define AUDIT_BATCH_MAX 10000 /* messages taken from the queue at once */
#define AUDIT_META_TIMEOUT_MS 10000
#define AUDIT_ADMIN_TIMEOUT_MS 5000

struct audit_topic {
        char *name;
        uint32_t base;  /* part index of partition 0 */
        int32_t npart;
        int compacted;  /* cleanup.policy includes compact */
};

/* Per-part state that is not persisted. */
struct audit_rt {
        int64_t end;         /* scan: high watermark at start */
        int64_t last_progress_ms;
        int eof;             /* at the end of what is readable now */
        int done;            /* scan: nothing more to audit */
        int paused;
};

struct audit {
        struct audit_conf conf;
        rd_kafka_t *rk;
        rd_kafka_queue_t *rkqu;
        struct ledger *lg;
        struct dedup_tracker *tr;
        struct audit_topic *topics;
        size_t ntopics;
        struct ledger_part *parts;
        struct audit_rt *rt;
        uint32_t nparts;
        const rd_kafka_topic_t *last_rkt; /* cache for topic lookup */
        size_t last_topic;
        size_t events_seen; /* events already passed to on_event */
        uint64_t uncommitted; /* records since the last ledger commit */
        int64_t last_commit_ms, last_kafka_commit_ms, last_tick_ms;
        int64_t last_progress_print_ms, started_ms;
        struct audit_stats stats;
        int commit_failing;
        struct status_view view; /* what status_publish() copies */
        int64_t last_publish_ms;
        int brokers_up;          /* from librdkafka statistics */
        enum audit_id_source id_src;
        const char *id_header;   /* AUDIT_ID_HEADER: points into conf */
        size_t id_header_len;
};

void audit_conf_defaults(struct audit_conf *c)
{
        memset(c, 0, sizeof(*c));
        dedup_config_defaults(&c->dedup);
        c->dedup_key = "msgid";
        c->commit_interval_ms = 1000;
        c->commit_records = 100000;
        c->kafka_commit_interval_ms = 5000;
        c->stall_timeout_ms = 30000;
}

/* librdkafka statistics (consumer thread): how many brokers are UP. */
static int audit_stats_cb(rd_kafka_t *rk, char *json, size_t json_len,
                          void *opaque)
{
        struct audit *a = opaque;
        json_t *root = json_loadb(json, json_len, 0, NULL);
        json_t *brokers, *b;
        const char *key;
        int up = 0;

        (void)rk;
        if (!root)
                return 0;
        brokers = json_object_get(root, "brokers");
        json_object_foreach(brokers, key, b) {
                const char *state =
                    json_string_value(json_object_get(b, "state"));
                const char *source =
                    json_string_value(json_object_get(b, "source"));
                json_int_t id =
                    json_integer_value(json_object_get(b, "nodeid"));
                /* Bootstrap entries (nodeid -1) are not real brokers, and
                 * neither is the logical "GroupCoordinator" entry: it
                 * carries the nodeid of a broker already counted. */
                if (id >= 0 && state && !strcmp(state, "UP") &&
                    !(source && !strcmp(source, "logical")))
                        up++;
        }
        a->brokers_up = up;
        json_decref(root);
        return 0; /* librdkafka frees json */
}

static void audit_publish(struct audit *a, int64_t now)
{
        uint32_t i;

        if (!a->conf.status)
                return;
        for (i = 0; i < a->nparts; i++) {
                int64_t lo = -1, hi = -1;
                rd_kafka_get_watermark_offsets(a->rk, a->parts[i].topic,
                                               a->parts[i].partition, &lo,
                                               &hi);
                /* librdkafka reports -1001 (invalid) until it knows. */
                if (hi >= 0)
                        a->view.parts[i].high_watermark = hi;
                else if (a->view.parts[i].high_watermark < 0)
                        a->view.parts[i].high_watermark = a->rt[i].end;
                a->view.parts[i].next_offset = a->parts[i].next_offset;
        }
        a->view.updated_ms = now;
        a->view.ledger_open = 1;
        a->view.assigned = 1;
        a->view.brokers_up = a->brokers_up;
        a->view.ledger_paused = a->commit_failing;
        a->view.records = a->stats.records;
        a->view.live_pairs = dedup_tracker_pairs(a->tr);
        a->view.live_open_gaps = dedup_tracker_open_gaps(a->tr);
        status_publish(a->conf.status, &a->view);
        a->last_publish_ms = now;
}

static int audit_view_init(struct audit *a)
{
        const char **names = calloc(a->ntopics, sizeof(*names));
        uint32_t i;
        size_t t;
        int rc;

        if (!names)
                return -1;
        for (t = 0; t < a->ntopics; t++)
                names[t] = a->topics[t].name;
        rc = status_view_init(&a->view, names, a->ntopics, a->nparts);
        free(names);
        if (rc)
                return -1;
        for (i = 0; i < a->nparts; i++) {
                a->view.parts[i].topic = strdup(a->parts[i].topic);
                a->view.parts[i].partition = a->parts[i].partition;
                if (!a->view.parts[i].topic)
                        return -1;
        }
        a->view.started_ms = clock_wall_ms();
        return 0;
}

/*
 * Failpoint for crash tests: EOSAUDIT_FAILPOINT_COMMIT=N makes the process
 * die (_exit, like kill -9: no cleanup, no COMMIT) inside the Nth ledger
 * commit, after all of its writes.  Unset in normal use.
 */
static unsigned long audit_failpoint_left;

static void audit_failpoint(void *opaque)
{
        (void)opaque;
        if (audit_failpoint_left && --audit_failpoint_left == 0) {
                log_error("failpoint: dying inside a ledger commit");
                _exit(137);
        }
}

static void audit_failpoint_arm(struct audit *a)
{
        const char *v = getenv("EOSAUDIT_FAILPOINT_COMMIT");
        char *end;
        unsigned long n;

        if (!v || !*v)
                return;
        n = strtoul(v, &end, 10);
        if (*end || n == 0) {
                log_warn("ignoring EOSAUDIT_FAILPOINT_COMMIT='%s'", v);
                return;
        }
        audit_failpoint_left = n;
        ledger_commit_hook_set(a->lg, audit_failpoint, NULL);
}

/* ------------------------------------------------------------------ */
/* Set-up                                                              */
/* ------------------------------------------------------------------ */

static int audit_discover(struct audit *a, const char *brokers, char *errstr,
                          size_t errstr_size)
{
        size_t t;
        uint32_t total = 0;

        a->topics = calloc(a->conf.topic_cnt, sizeof(*a->topics));
        if (!a->topics)
                goto oom;
        for (t = 0; t < a->conf.topic_cnt; t++) {
                const struct rd_kafka_metadata *md = NULL;
                rd_kafka_topic_t *rkt;
                rd_kafka_resp_err_t err;
                const char *name = a->conf.topics[t];

                rkt = rd_kafka_topic_new(a->rk, name, NULL);
                if (!rkt) {
                        snprintf(errstr, errstr_size, "bad topic name '%s'",
                                 name);
                        return -1;
                }
                err = rd_kafka_metadata(a->rk, 0, rkt, &md,
                                        AUDIT_META_TIMEOUT_MS);
                rd_kafka_topic_destroy(rkt);
                if (err) {
                        snprintf(errstr, errstr_size,
                                 "cannot reach brokers '%s': %s", brokers,
                                 rd_kafka_err2str(err));
                        return -1;
                }
                if (md->topic_cnt != 1 || md->topics[0].err ||
                    md->topics[0].partition_cnt <= 0) {
                        rd_kafka_resp_err_t terr =
                            md->topic_cnt ? md->topics[0].err : err;
                        snprintf(errstr, errstr_size,
                                 "topic '%s' not found: %s", name,
                                 terr ? rd_kafka_err2str(terr)
                                      : "no partitions");
                        rd_kafka_metadata_destroy(md);
                        return -1;
                }
                a->topics[t].name = strdup(name);
                if (!a->topics[t].name) {
                        rd_kafka_metadata_destroy(md);
                        goto oom;
                }
                a->topics[t].base = total;
                a->topics[t].npart = md->topics[0].partition_cnt;
                total += (uint32_t)md->topics[0].partition_cnt;
                a->ntopics = t + 1;
                rd_kafka_metadata_destroy(md);
        }
        a->nparts = total;
        a->parts = calloc(total, sizeof(*a->parts));
        a->rt = calloc(total, sizeof(*a->rt));
        if (!a->parts || !a->rt)
                goto oom;
        for (t = 0; t < a->ntopics; t++) {
                int32_t p;
                for (p = 0; p < a->topics[t].npart; p++) {
                        struct ledger_part *lp = &a->parts[a->topics[t].base + p];
                        lp->topic = a->topics[t].name;
                        lp->partition = p;
                        lp->part = a->topics[t].base + (uint32_t)p;
                        lp->next_offset = -1;
                        lp->coverage_lo = lp->coverage_hi = -1;
                }
        }
        return 0;
oom:
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
}

/*
 * Whether topic is compacted (cleanup.policy contains "compact").  When
 * the configuration cannot be read (an ACL, an old broker), says so and
 * assumes not: gaps are then reported as usual.
 */
static int audit_compacted(struct audit *a, const char *topic)
{
        rd_kafka_ConfigResource_t *res =
            rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic);
        rd_kafka_AdminOptions_t *opt = rd_kafka_AdminOptions_new(
            a->rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
        rd_kafka_queue_t *q = rd_kafka_queue_new(a->rk);
        rd_kafka_event_t *ev = NULL;
        const rd_kafka_DescribeConfigs_result_t *r;
        const rd_kafka_ConfigResource_t **rs;
        const rd_kafka_ConfigEntry_t **ce;
        size_t n = 0, nce = 0, i;
        int compacted = 0;

        rd_kafka_AdminOptions_set_request_timeout(opt, AUDIT_ADMIN_TIMEOUT_MS,
                                                  NULL, 0);
        rd_kafka_DescribeConfigs(a->rk, &res, 1, opt, q);
        ev = rd_kafka_queue_poll(q, AUDIT_ADMIN_TIMEOUT_MS + 1000);
        r = ev ? rd_kafka_event_DescribeConfigs_result(ev) : NULL;
        if (!r || rd_kafka_event_error(ev)) {
                log_warn("cannot read the configuration of topic '%s' (%s): "
                         "assuming it is not compacted",
                         topic, ev ? rd_kafka_event_error_string(ev)
                                   : "timed out");
                goto out;
        }
        rs = rd_kafka_DescribeConfigs_result_resources(r, &n);
        if (n != 1 || rd_kafka_ConfigResource_error(rs[0])) {
                log_warn("cannot read the configuration of topic '%s': "
                         "assuming it is not compacted",
                         topic);
                goto out;
        }
        ce = rd_kafka_ConfigResource_configs(rs[0], &nce);
        for (i = 0; i < nce; i++) {
                const char *v = rd_kafka_ConfigEntry_value(ce[i]);
                if (!strcmp(rd_kafka_ConfigEntry_name(ce[i]),
                            "cleanup.policy") &&
                    v && strstr(v, "compact"))
                        compacted = 1;
        }
out:
        if (ev)
                rd_kafka_event_destroy(ev);
        rd_kafka_queue_destroy(q);
        rd_kafka_AdminOptions_destroy(opt);
        rd_kafka_ConfigResource_destroy(res);
        return compacted;
}

/*
 * Decides where each part starts: from the ledger, or (never audited)
 * from the log start.  Offsets the ledger expected but retention deleted
 * become a coverage gap.
 */
static int audit_position(struct audit *a, struct ledger_part *lp,
                          char *errstr, size_t errstr_size)
{
        struct audit_rt *rt = &a->rt[lp->part];
        int64_t lo, hi;
        rd_kafka_resp_err_t err;

        err = rd_kafka_query_watermark_offsets(a->rk, lp->topic, lp->partition,
                                               &lo, &hi,
                                               AUDIT_META_TIMEOUT_MS);
        if (err) {
                snprintf(errstr, errstr_size,
                         "cannot read watermarks of %s [%d]: %s", lp->topic,
                         (int)lp->partition, rd_kafka_err2str(err));
                return -1;
        }
        rt->end = hi;
        if (lp->next_offset < 0) {
                lp->from_log_start = lo == 0;
                if (dedup_tracker_part_add(a->tr, lp->part, lo == 0)) {
                        snprintf(errstr, errstr_size, "out of memory");
                        return -1;
                }
                lp->next_offset = lo;
                lp->dirty = 1;
        } else if (lp->next_offset < lo) {
                log_warn("%s [%d]: offsets %lld..%lld were deleted by "
                         "retention before they were audited: recording a "
                         "coverage gap; producers restart from baselines",
                         lp->topic, (int)lp->partition,
                         (long long)lp->next_offset, (long long)(lo - 1));
                lp->coverage_lo = lp->next_offset;
                lp->coverage_hi = lo - 1;
                lp->next_offset = lo;
                lp->from_log_start = 0;
                lp->dirty = 1;
                dedup_tracker_part_rebaseline(a->tr, lp->part);
        } else if (lp->next_offset > hi) {
                snprintf(errstr, errstr_size,
                         "%s [%d]: the ledger expects offset %lld but the "
                         "partition ends at %lld (was the topic recreated? "
                         "use another --db)",
                         lp->topic, (int)lp->partition,
                         (long long)lp->next_offset, (long long)hi);
                return -1;
        }
        rt->last_progress_ms = clock_wall_ms();
        return 0;
}

static int audit_assign(struct audit *a, char *errstr, size_t errstr_size)
{
        rd_kafka_topic_partition_list_t *l =
            rd_kafka_topic_partition_list_new((int)a->nparts);
        rd_kafka_resp_err_t err;
        uint32_t i;

        for (i = 0; i < a->nparts; i++) {
                if (!a->conf.follow && a->parts[i].next_offset >= a->rt[i].end)
                        continue; /* nothing to scan */
                rd_kafka_topic_partition_list_add(l, a->parts[i].topic,
                                                  a->parts[i].partition)
                    ->offset = a->parts[i].next_offset;
        }
        err = rd_kafka_assign(a->rk, l);
        rd_kafka_topic_partition_list_destroy(l);
        if (err) {
                snprintf(errstr, errstr_size, "cannot assign partitions: %s",
                         rd_kafka_err2str(err));
                return -1;
        }
        return 0;
}

int audit_dedup_key_parse(const char *spec, enum audit_id_source *src,
                          const char **header, char *errstr,
                          size_t errstr_size)
{
        *header = NULL;
        if (!strcmp(spec, "msgid")) {
                *src = AUDIT_ID_MSGID;
        } else if (!strcmp(spec, "key")) {
                *src = AUDIT_ID_KEY;
        } else if (!strcmp(spec, "value-hash")) {
                *src = AUDIT_ID_VALUE_HASH;
        } else if (!strncmp(spec, "header:", 7) && spec[7] &&
                   strlen(spec + 7) <= 255) {
                *src = AUDIT_ID_HEADER;
                *header = spec + 7;
        } else {
                snprintf(errstr, errstr_size,
                         "bad --dedup-key '%s': expected msgid, "
                         "header:NAME (NAME 1 to 255 bytes), key or "
                         "value-hash",
                         spec);
                return -1;
        }
        return 0;
}

/* One id window per topic, loaded from the ledger. */
static int audit_windows(struct audit *a, char *errstr, size_t errstr_size)
{
        const char **names = NULL;
        uint32_t *windows = NULL;
        void *filters;
        size_t bytes;
        size_t t;
        int32_t p;
        int rc = -1;

        /* --id-window 0: no windows at all (what the ledger holds stays
         * for a later run with one). */
        if (!a->conf.dedup.window.max_ids)
                return 0;
        names = calloc(a->ntopics ? a->ntopics : 1, sizeof(*names));
        windows = calloc(a->ntopics ? a->ntopics : 1, sizeof(*windows));
        if (!names || !windows) {
                snprintf(errstr, errstr_size, "out of memory");
                goto out;
        }
        for (t = 0; t < a->ntopics; t++) {
                if (dedup_tracker_window_add(a->tr, &windows[t])) {
                        snprintf(errstr, errstr_size,
                                 "out of memory for the id window of %s "
                                 "(--id-window %llu)",
                                 a->topics[t].name,
                                 (unsigned long long)a->conf.dedup.window
                                     .max_ids);
                        goto out;
                }
                names[t] = a->topics[t].name;
                /* Huge pages for the filters where the kernel leaves it to
                 * us (transparent_hugepage=madvise): every check is a
                 * random access, a TLB miss on 4 KiB pages.  Advice only. */
                filters = dedup_tracker_window_filters(a->tr, windows[t],
                                                       &bytes);
                if (filters && bytes)
                        (void)madvise(filters, bytes, MADV_HUGEPAGE);
                for (p = 0; p < a->topics[t].npart; p++)
                        dedup_tracker_part_set_window(
                            a->tr, a->topics[t].base + (uint32_t)p,
                            windows[t]);
        }
        rc = ledger_windows_load(a->lg, a->tr, names, windows, a->ntopics,
                                 a->parts, a->nparts, a->conf.dedup_key,
                                 errstr, errstr_size);
out:
        free(names);
        free(windows);
        return rc;
}

int audit_new(struct audit **out, const struct audit_conf *c,
              rd_kafka_conf_t *kconf, char *errstr, size_t errstr_size)
{
        char brokers[512] = "";
        size_t bsz = sizeof(brokers);
        struct audit *a;
        uint32_t i;
        size_t t;
        int rc = -1;

        a = calloc(1, sizeof(*a));
        if (!a) {
                rd_kafka_conf_destroy(kconf);
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        a->conf = *c;
        if (!a->conf.dedup_key)
                a->conf.dedup_key = "msgid";
        if (audit_dedup_key_parse(a->conf.dedup_key, &a->id_src,
                                  &a->id_header, errstr, errstr_size)) {
                rd_kafka_conf_destroy(kconf);
                free(a);
                *out = NULL;
                return -1;
        }
        a->id_header_len = a->id_header ? strlen(a->id_header) : 0;
        if (rd_kafka_conf_get(kconf, "bootstrap.servers", brokers, &bsz) !=
            RD_KAFKA_CONF_OK)
                brokers[0] = '\0';

        if (c->status) {
                rd_kafka_conf_set_opaque(kconf, a);
                rd_kafka_conf_set_stats_cb(kconf, audit_stats_cb);
                if (rd_kafka_conf_set(kconf, "statistics.interval.ms", "1000",
                                      errstr, errstr_size) !=
                    RD_KAFKA_CONF_OK) {
                        rd_kafka_conf_destroy(kconf);
                        goto out;
                }
        }
        a->rk = rd_kafka_new(RD_KAFKA_CONSUMER, kconf, errstr, errstr_size);
        if (!a->rk) {
                rd_kafka_conf_destroy(kconf);
                goto out;
        }
        kconf = NULL; /* owned by the handle */
        rd_kafka_poll_set_consumer(a->rk);
        a->rkqu = rd_kafka_queue_get_consumer(a->rk);

        if (audit_discover(a, brokers, errstr, errstr_size))
                goto out;
        if (audit_view_init(a)) {
                snprintf(errstr, errstr_size, "out of memory");
                goto out;
        }
        if (ledger_open(&a->lg, c->db_path, errstr, errstr_size))
                goto out;
        audit_failpoint_arm(a);
        a->tr = dedup_tracker_new(&c->dedup);
        if (!a->tr) {
                snprintf(errstr, errstr_size, "out of memory");
                goto out;
        }
        for (i = 0; i < a->nparts; i++) {
                if (dedup_tracker_part_add(a->tr, i, 0)) {
                        snprintf(errstr, errstr_size, "out of memory");
                        goto out;
                }
        }
        if (ledger_load(a->lg, a->tr, a->parts, a->nparts, errstr,
                        errstr_size) ||
            audit_windows(a, errstr, errstr_size))
                goto out;
        for (i = 0; i < a->nparts; i++)
                if (audit_position(a, &a->parts[i], errstr, errstr_size))
                        goto out;
        for (t = 0; t < a->ntopics; t++) {
                int32_t p;
                a->topics[t].compacted =
                    !c->no_compaction_check &&
                    audit_compacted(a, a->topics[t].name);
                if (a->topics[t].compacted)
                        log_info("topic '%s' is compacted: a seq that jumps "
                                 "ahead is a new baseline, not a gap",
                                 a->topics[t].name);
                for (p = 0; p < a->topics[t].npart; p++)
                        dedup_tracker_part_set_compacted(
                            a->tr, a->topics[t].base + (uint32_t)p,
                            a->topics[t].compacted);
        }
        if (audit_assign(a, errstr, errstr_size))
                goto out;
        a->stats.partitions = a->nparts;
        a->started_ms = a->last_commit_ms = a->last_tick_ms = clock_wall_ms();
        a->last_kafka_commit_ms = a->started_ms;
        audit_publish(a, a->started_ms);
        rc = 0;
out:
        if (rc) {
                audit_free(a);
                a = NULL;
        }
        *out = a;
        return rc;
}

/* ------------------------------------------------------------------ */
/* The loop                                                            */
/* ------------------------------------------------------------------ */

static struct ledger_part *audit_part_of(struct audit *a,
                                         const rd_kafka_message_t *rkm)
{
        size_t t;

        if (rkm->rkt != a->last_rkt) {
                const char *name = rd_kafka_topic_name(rkm->rkt);
                for (t = 0; t < a->ntopics; t++)
                        if (!strcmp(a->topics[t].name, name))
                                break;
                if (t == a->ntopics)
                        return NULL;
                a->last_rkt = rkm->rkt;
                a->last_topic = t;
        }
        t = a->last_topic;
        if (rkm->partition < 0 || rkm->partition >= a->topics[t].npart)
                return NULL;
        return &a->parts[a->topics[t].base + (uint32_t)rkm->partition];
}

static void audit_pause(struct audit *a, struct ledger_part *lp)
{
        rd_kafka_topic_partition_list_t *l;

        if (a->rt[lp->part].paused)
                return;
        l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, lp->topic, lp->partition);
        rd_kafka_pause_partitions(a->rk, l);
        rd_kafka_topic_partition_list_destroy(l);
        a->rt[lp->part].paused = 1;
}

static void audit_mark_done(struct audit *a, struct ledger_part *lp)
{
        struct audit_rt *rt = &a->rt[lp->part];

        if (rt->done)
                return;
        rt->done = 1;
        a->stats.partitions_done++;
        audit_pause(a, lp);
}

/*
 * value-hash identity: 16 bytes, MurmurHash3 x64_128 of (flags, hash of
 * the key, hash of the value), flags telling a null key or value from an
 * empty one; the two inner hashes keep key and value apart, so that
 * ("ab", "c") and ("a", "bc") differ.
 */
#define AUDIT_VALUE_HASH_LEN 16

static void audit_value_hash(const rd_kafka_message_t *rkm,
                             unsigned char out[AUDIT_VALUE_HASH_LEN])
{
        unsigned char frame[1 + 16 + 16];
        struct dedup_id kh, vh, id;
        int i;

        dedup_id_hash(rkm->key ? rkm->key : "", rkm->key ? rkm->key_len : 0,
                      &kh);
        dedup_id_hash(rkm->payload ? rkm->payload : "",
                      rkm->payload ? rkm->len : 0, &vh);
        frame[0] = (unsigned char)((rkm->key ? 1 : 0) | (rkm->payload ? 2 : 0));
        for (i = 0; i < 8; i++) {
                frame[1 + i] = (unsigned char)(kh.lo >> (8 * i));
                frame[9 + i] = (unsigned char)(kh.hi >> (8 * i));
                frame[17 + i] = (unsigned char)(vh.lo >> (8 * i));
                frame[25 + i] = (unsigned char)(vh.hi >> (8 * i));
        }
        dedup_id_hash(frame, sizeof(frame), &id);
        for (i = 0; i < 8; i++) {
                out[i] = (unsigned char)(id.lo >> (8 * i));
                out[8 + i] = (unsigned char)(id.hi >> (8 * i));
        }
}

/* Points h->id at the record's identity per --dedup-key (the header case
 * is handled while the headers are read). */
static void audit_identity(const struct audit *a,
                           const rd_kafka_message_t *rkm,
                           struct dedup_hdrs *h,
                           unsigned char buf[AUDIT_VALUE_HASH_LEN])
{
        switch (a->id_src) {
        case AUDIT_ID_MSGID:
                h->id = h->msgid;
                h->id_len = h->msgid_len;
                break;
        case AUDIT_ID_HEADER:
                break;
        case AUDIT_ID_KEY:
                h->id = rkm->key && rkm->key_len ? rkm->key : NULL;
                h->id_len = rkm->key ? rkm->key_len : 0;
                break;
        case AUDIT_ID_VALUE_HASH:
                audit_value_hash(rkm, buf);
                h->id = buf;
                h->id_len = AUDIT_VALUE_HASH_LEN;
                break;
        }
}

static void audit_record(struct audit *a, struct ledger_part *lp,
                         const rd_kafka_message_t *rkm, int64_t now)
{
        struct audit_rt *rt = &a->rt[lp->part];
        rd_kafka_headers_t *hdrs;
        struct dedup_hdrs h;
        unsigned char id_buf[AUDIT_VALUE_HASH_LEN];

        /* Already in the ledger (a refetch after a seek), or past the
         * scan's end: neither is audited now. */
        if (rkm->offset < lp->next_offset)
                return;
        if (!a->conf.follow && rkm->offset >= rt->end) {
                audit_mark_done(a, lp);
                return;
        }
        dedup_hdrs_init(&h);
        if (rd_kafka_message_headers(rkm, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
                const char *name;
                const void *val;
                size_t size, i, name_len;
                for (i = 0; !rd_kafka_header_get_all(hdrs, i, &name, &val,
                                                     &size);
                     i++) {
                        name_len = strlen(name);
                        dedup_hdrs_feed(&h, name, name_len, val, size);
                        /* The last occurrence counts, as for eos.*; a
                         * null or empty value is no id. */
                        if (a->id_src == AUDIT_ID_HEADER &&
                            name_len == a->id_header_len &&
                            !memcmp(name, a->id_header, name_len)) {
                                h.id = val && size ? val : NULL;
                                h.id_len = val ? size : 0;
                        }
                }
        }
        audit_identity(a, rkm, &h, id_buf);
        /* Verdicts run on the records' time (-1: none, the wall clock). */
        h.ts_ms = rd_kafka_message_timestamp(rkm, NULL);
        dedup_tracker_observe(a->tr, lp->part, rkm->offset, &h);
        if (a->conf.status) {
                int64_t ts = rd_kafka_message_timestamp(rkm, NULL);
                if (ts > 0 && ts <= now)
                        status_hist_observe(
                            &a->view.topics[a->last_topic].latency,
                            (double)(now - ts) / 1000.0);
        }
        lp->next_offset = rkm->offset + 1;
        lp->dirty = 1;
        rt->eof = 0;
        rt->last_progress_ms = now;
        a->uncommitted++;
        a->stats.records++;
        if (!a->conf.follow && lp->next_offset >= rt->end)
                audit_mark_done(a, lp);
}

/* The fetch position fell outside the log: records were deleted. */
static int audit_out_of_range(struct audit *a, struct ledger_part *lp,
                              char *errstr, size_t errstr_size)
{
        rd_kafka_topic_partition_list_t *l;
        rd_kafka_error_t *error;

        if (audit_position(a, lp, errstr, errstr_size))
                return -1;
        l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, lp->topic, lp->partition)->offset =
            lp->next_offset;
        error = rd_kafka_seek_partitions(a->rk, l, AUDIT_META_TIMEOUT_MS);
        rd_kafka_topic_partition_list_destroy(l);
        if (error) {
                snprintf(errstr, errstr_size, "cannot seek %s [%d]: %s",
                         lp->topic, (int)lp->partition,
                         rd_kafka_error_string(error));
                rd_kafka_error_destroy(error);
                return -1;
        }
        return 0;
}

static void audit_message(struct audit *a, rd_kafka_message_t *rkm,
                          int64_t now, int *fatal, char *errstr,
                          size_t errstr_size)
{
        struct ledger_part *lp = rkm->rkt ? audit_part_of(a, rkm) : NULL;

        if (!rkm->err) {
                if (lp)
                        audit_record(a, lp, rkm, now);
                return;
        }
        if (rkm->err == RD_KAFKA_RESP_ERR__PARTITION_EOF && lp) {
                struct audit_rt *rt = &a->rt[lp->part];
                int64_t eof = rkm->offset;
                /* A scan drops records at or past its end unaudited
                 * (audit_record): never move past them. */
                if (!a->conf.follow && eof > rt->end)
                        eof = rt->end;
                /* Only markers or aborted records lie between the last
                 * record and here: nothing to audit, so move past them. */
                if (eof > lp->next_offset) {
                        lp->next_offset = eof;
                        lp->dirty = 1;
                        rt->last_progress_ms = now;
                }
                rt->eof = 1;
                if (!a->conf.follow && lp->next_offset >= rt->end)
                        audit_mark_done(a, lp);
                return;
        }
        if ((rkm->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET ||
             rkm->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE) &&
            lp) {
                if (audit_out_of_range(a, lp, errstr, errstr_size))
                        *fatal = 1;
                return;
        }
        if (rkm->err == RD_KAFKA_RESP_ERR__FATAL ||
            rkm->err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
            rkm->err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
            rkm->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
                snprintf(errstr, errstr_size, "consumer: %s",
                         rd_kafka_message_errstr(rkm));
                *fatal = 1;
                return;
        }
        /* Transport errors and the like: librdkafka retries by itself. */
        log_debug("consumer: %s", rd_kafka_message_errstr(rkm));
}

static void audit_report_events(struct audit *a)
{
        const struct dedup_event *ev;
        size_t n, i;

        ev = dedup_tracker_events(a->tr, &n);
        for (i = a->events_seen; i < n; i++) {
                const struct ledger_part *lp = &a->parts[ev[i].part];
                if (ev[i].kind == DEDUP_KIND_EXPIRED)
                        log_info("%s [%d]: producer '%.*s' idle for longer "
                                 "than the TTL: its state is expired",
                                 lp->topic, (int)lp->partition,
                                 (int)ev[i].producer_len, ev[i].producer);
                if (a->conf.on_event)
                        a->conf.on_event(a->conf.opaque, lp->topic,
                                         lp->partition, &ev[i]);
        }
        a->events_seen = n;
}

static void audit_kafka_commit(struct audit *a)
{
        rd_kafka_topic_partition_list_t *l =
            rd_kafka_topic_partition_list_new((int)a->nparts);
        rd_kafka_resp_err_t err;
        uint32_t i;

        for (i = 0; i < a->nparts; i++)
                if (a->parts[i].next_offset >= 0)
                        rd_kafka_topic_partition_list_add(
                            l, a->parts[i].topic, a->parts[i].partition)
                            ->offset = a->parts[i].next_offset;
        /* Only for lag visibility: failure changes nothing here. */
        err = rd_kafka_commit(a->rk, l, 1);
        if (err)
                log_debug("kafka offset commit: %s", rd_kafka_err2str(err));
        rd_kafka_topic_partition_list_destroy(l);
}

/* Commits the batch; on failure keeps it and retries later. */
static int audit_commit(struct audit *a, int64_t now)
{
        char errstr[512];
        int64_t us = 0;

        audit_report_events(a);
        if (ledger_commit(a->lg, a->tr, a->parts, a->nparts, &us, errstr,
                          sizeof(errstr))) {
                if (!a->commit_failing)
                        log_error("ledger commit failed, pausing the audit "
                                  "until it succeeds: %s",
                                  errstr);
                a->commit_failing = 1;
                return -1;
        }
        if (a->commit_failing)
                log_info("ledger commit succeeded again; the audit resumes");
        a->commit_failing = 0;
        a->events_seen = 0;
        a->uncommitted = 0;
        a->last_commit_ms = now;
        a->stats.commits++;
        a->stats.last_commit_us = us;
        if (a->conf.status) {
                status_hist_observe(&a->view.commit, (double)us / 1e6);
                audit_publish(a, now);
        }
        if (now - a->last_kafka_commit_ms >= a->conf.kafka_commit_interval_ms) {
                audit_kafka_commit(a);
                a->last_kafka_commit_ms = now;
        }
        return 0;
}

static int audit_pending(struct audit *a)
{
        size_t n;
        uint32_t i;

        if (a->uncommitted)
                return 1;
        dedup_tracker_events(a->tr, &n);
        if (n)
                return 1;
        for (i = 0; i < a->nparts; i++)
                if (a->parts[i].dirty)
                        return 1;
        return 0;
}

/* Scan: a partition at EOF below its start watermark for too long is
 * held back by an open transaction (read_committed stops at the LSO). */
static void audit_check_stalls(struct audit *a, int64_t now)
{
        uint32_t i;

        for (i = 0; i < a->nparts; i++) {
                struct audit_rt *rt = &a->rt[i];
                if (rt->done || !rt->eof ||
                    now - rt->last_progress_ms < a->conf.stall_timeout_ms)
                        continue;
                log_warn("%s [%d]: stopped at offset %lld below the start "
                         "high watermark %lld for %lld ms (an open "
                         "transaction?): the rest is not audited",
                         a->parts[i].topic, (int)a->parts[i].partition,
                         (long long)a->parts[i].next_offset,
                         (long long)rt->end,
                         (long long)a->conf.stall_timeout_ms);
                a->stats.partitions_stalled++;
                audit_mark_done(a, &a->parts[i]);
        }
}

static void audit_progress(struct audit *a, int64_t now, int final)
{
        double secs = (double)(now - a->started_ms) / 1000.0;

        if (!a->conf.progress ||
            (!final && now - a->last_progress_print_ms < 500))
                return;
        a->last_progress_print_ms = now;
        fprintf(stderr,
                "\rscan: %llu records, %u/%u partitions done, %.0f records/s ",
                (unsigned long long)a->stats.records, a->stats.partitions_done,
                a->nparts, secs > 0 ? (double)a->stats.records / secs : 0.0);
        if (final)
                fputc('\n', stderr);
}

static int audit_all_done(const struct audit *a)
{
        return a->stats.partitions_done == a->nparts;
}

/* Turns a follow-mode audit into a scan up to the watermarks of now. */
static int audit_drain(struct audit *a, char *errstr, size_t errstr_size)
{
        uint32_t i;

        a->conf.follow = 0;
        for (i = 0; i < a->nparts; i++) {
                struct ledger_part *lp = &a->parts[i];
                int64_t lo, hi;
                rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
                    a->rk, lp->topic, lp->partition, &lo, &hi,
                    AUDIT_META_TIMEOUT_MS);
                if (err) {
                        snprintf(errstr, errstr_size,
                                 "cannot read watermarks of %s [%d]: %s",
                                 lp->topic, (int)lp->partition,
                                 rd_kafka_err2str(err));
                        return -1;
                }
                a->rt[i].end = hi;
                if (lp->next_offset >= hi)
                        audit_mark_done(a, lp);
        }
        return 0;
}

int audit_run(struct audit *a, char *errstr, size_t errstr_size)
{
        rd_kafka_message_t **msgs;
        int fatal = 0, rc = -1;
        uint32_t i;

        msgs = malloc(AUDIT_BATCH_MAX * sizeof(*msgs));
        if (!msgs) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        for (i = 0; i < a->nparts; i++)
                if (!a->conf.follow && a->parts[i].next_offset >= a->rt[i].end)
                        audit_mark_done(a, &a->parts[i]);

        while (!fatal && (!a->conf.run || *a->conf.run)) {
                ssize_t n, k;
                int64_t now;

                if (a->conf.follow && a->conf.drain && *a->conf.drain &&
                    audit_drain(a, errstr, errstr_size)) {
                        fatal = 1;
                        break;
                }
                if (!a->conf.follow && audit_all_done(a))
                        break;
                if (a->commit_failing) {
                        /* Hold the batch: nothing is consumed until the
                         * ledger takes it. */
                        sleep(1);
                        audit_commit(a, clock_wall_ms());
                        audit_publish(a, clock_wall_ms());
                        continue;
                }
                n = rd_kafka_consume_batch_queue(a->rkqu, 100, msgs,
                                                 AUDIT_BATCH_MAX);
                now = clock_wall_ms();
                dedup_tracker_begin(a->tr, now);
                for (k = 0; k < n; k++) {
                        if (!fatal)
                                audit_message(a, msgs[k], now, &fatal, errstr,
                                              errstr_size);
                        rd_kafka_message_destroy(msgs[k]);
                }
                if (dedup_tracker_failed(a->tr)) {
                        snprintf(errstr, errstr_size,
                                 "out of memory in the engine");
                        fatal = 1;
                }
                if (fatal)
                        break;
                if (now - a->last_tick_ms >= 1000) {
                        dedup_tracker_tick(a->tr);
                        a->last_tick_ms = now;
                }
                if (audit_pending(a) &&
                    (a->uncommitted >= a->conf.commit_records ||
                     now - a->last_commit_ms >= a->conf.commit_interval_ms))
                        audit_commit(a, now);
                if (!a->conf.follow)
                        audit_check_stalls(a, now);
                if (a->conf.status && now - a->last_publish_ms >= 1000)
                        audit_publish(a, now);
                audit_progress(a, now, 0);
        }
        if (fatal)
                goto out;

        /* The last batch; a complete scan also confirms every open gap. */
        dedup_tracker_begin(a->tr, clock_wall_ms());
        dedup_tracker_tick(a->tr);
        if (!a->conf.follow && audit_all_done(a))
                dedup_tracker_confirm_all(a->tr);
        if (audit_pending(a) && audit_commit(a, clock_wall_ms())) {
                snprintf(errstr, errstr_size,
                         "the last batch could not be written to the ledger; "
                         "it will be audited again on the next run");
                goto out;
        }
        audit_kafka_commit(a);
        audit_progress(a, clock_wall_ms(), 1);
        if (!a->conf.follow && !audit_all_done(a)) {
                snprintf(errstr, errstr_size,
                         "interrupted before the end of the scan");
                goto out;
        }
        rc = 0;
out:
        free(msgs);
        return rc;
}

struct ledger *audit_ledger(struct audit *a)
{
        return a->lg;
}

void audit_stats_get(const struct audit *a, struct audit_stats *st)
{
        *st = a->stats;
}

void audit_free(struct audit *a)
{
        size_t t;

        if (!a)
                return;
        if (a->rkqu)
                rd_kafka_queue_destroy(a->rkqu);
        if (a->rk) {
                rd_kafka_consumer_close(a->rk);
                rd_kafka_destroy(a->rk);
        }
        ledger_close(a->lg);
        dedup_tracker_free(a->tr);
        status_view_release(&a->view);
        for (t = 0; t < a->ntopics; t++)
                free(a->topics[t].name);
        free(a->topics);
        free(a->parts);
        free(a->rt);
        free(a);
}
