/*
 * setup.c - audit_new() and audit_free(): the partitions of every topic,
 * the ledger and the engine loaded from it, the id windows, compaction;
 * audit_exit_guard() for a teardown that does not end.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../../base/clock.h"
#include "../../base/kafka_log.h"
#include "../../base/log.h"
#include "../../dedup/topic.h"
#include "internal.h"

void audit_conf_defaults(struct audit_conf *c)
{
        memset(c, 0, sizeof(*c));
        dedup_config_defaults(&c->dedup);
        c->dedup_key = "msgid";
        c->commit_interval_ms = 1000;
        c->commit_records = 100000;
        c->kafka_commit_interval_ms = 5000;
        c->stall_timeout_ms = 30000;
        c->metadata_refresh_ms = 60000;
        dedup_flow_config_defaults(&c->flow);
        c->flow_frontier_interval_ms = 2000;
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

void audit_part_init(struct ledger_part *lp, const char *topic,
                     int32_t partition, uint32_t part)
{
        memset(lp, 0, sizeof(*lp));
        lp->topic = topic;
        lp->partition = partition;
        lp->part = part;
        lp->next_offset = -1;
        lp->coverage_lo = lp->coverage_hi = -1;
        lp->fp.offset = lp->fp.ts_ms = -1;
}

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

                rd_kafka_t *rk = audit_rk_of(a, name);

                rkt = rd_kafka_topic_new(rk, name, NULL);
                if (!rkt) {
                        snprintf(errstr, errstr_size, "bad topic name '%s'",
                                 name);
                        return -1;
                }
                err = audit_metadata(a, rk, rkt, &md);
                rd_kafka_topic_destroy(rkt);
                if (err && access_watch_line(&a->watch, errstr, errstr_size)) {
                        a->refused = 1;
                        return -1;
                }
                if (err) {
                        char cause[512];
                        /* librdkafka's last logged error names the real
                         * cause ("Failed to resolve ..."). */
                        if (kafka_log_last_error(cause, sizeof(cause)))
                                snprintf(errstr, errstr_size,
                                         "cannot reach brokers '%s': %s (%s)",
                                         brokers, cause,
                                         rd_kafka_err2str(err));
                        else
                                snprintf(errstr, errstr_size,
                                         "cannot reach brokers '%s': %s",
                                         brokers, rd_kafka_err2str(err));
                        return -1;
                }
                if (md->topic_cnt == 1 &&
                    access_line(errstr, errstr_size, md->topics[0].err,
                                ACCESS_OP_DESCRIBE_TOPIC, name, NULL)) {
                        a->refused = 1;
                        rd_kafka_metadata_destroy(md);
                        return -1;
                }
                if (md->topic_cnt != 1 || md->topics[0].err ||
                    md->topics[0].partition_cnt <= 0) {
                        rd_kafka_resp_err_t terr = md->topic_cnt
                                                       ? md->topics[0].err
                                                       : err;
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
                a->topics[t].npart = md->topics[0].partition_cnt;
                a->topics[t].part_of = calloc((size_t)a->topics[t].npart,
                                              sizeof(uint32_t));
                if (!a->topics[t].part_of) {
                        rd_kafka_metadata_destroy(md);
                        goto oom;
                }
                total += (uint32_t)md->topics[0].partition_cnt;
                a->ntopics = t + 1;
                rd_kafka_metadata_destroy(md);
        }
        a->nparts = total;
        a->parts_cap = total;
        a->parts = calloc(total, sizeof(*a->parts));
        a->rt = calloc(total, sizeof(*a->rt));
        if (!a->parts || !a->rt)
                goto oom;
        total = 0;
        for (t = 0; t < a->ntopics; t++) {
                int32_t p;
                for (p = 0; p < a->topics[t].npart; p++) {
                        a->topics[t].part_of[p] = total;
                        audit_part_init(&a->parts[total], a->topics[t].name, p,
                                        total);
                        total++;
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
        rd_kafka_t *rk = audit_rk_of(a, topic);
        rd_kafka_ConfigResource_t *res =
            rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic);
        rd_kafka_AdminOptions_t *opt =
            rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
        rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
        rd_kafka_event_t *ev = NULL;
        const rd_kafka_DescribeConfigs_result_t *r;
        const rd_kafka_ConfigResource_t **rs;
        const rd_kafka_ConfigEntry_t **ce;
        size_t n = 0, nce = 0, i;
        int compacted = 0;
        char line[512];

        rd_kafka_AdminOptions_set_request_timeout(opt, AUDIT_ADMIN_TIMEOUT_MS,
                                                  NULL, 0);
        rd_kafka_DescribeConfigs(rk, &res, 1, opt, q);
        ev = rd_kafka_queue_poll(q, AUDIT_ADMIN_TIMEOUT_MS + 1000);
        r = ev ? rd_kafka_event_DescribeConfigs_result(ev) : NULL;
        if (!r || rd_kafka_event_error(ev)) {
                log_warn("cannot read the configuration of topic '%s' (%s): "
                         "assuming it is not compacted",
                         topic,
                         ev ? rd_kafka_event_error_string(ev) : "timed out");
                goto out;
        }
        rs = rd_kafka_DescribeConfigs_result_resources(r, &n);
        if (n == 1 && access_line(line, sizeof(line),
                                  rd_kafka_ConfigResource_error(rs[0]),
                                  ACCESS_OP_DESCRIBE_CONFIGS, topic, NULL)) {
                log_warn("%s; assuming it is not compacted", line);
                goto out;
        }
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
                                 (unsigned long long)
                                     a->conf.dedup.window.max_ids);
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
                        dedup_tracker_part_set_window(a->tr,
                                                      a->topics[t].part_of[p],
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

/* A new tracker with every part added, loaded from the ledger (parts
 * reset first: this runs again after a topic's new incarnation). */
static int audit_load(struct audit *a, char *errstr, size_t errstr_size)
{
        uint32_t i;
        size_t t;
        int32_t p;

        dedup_tracker_free(a->tr);
        a->tr = dedup_tracker_new(&a->conf.dedup);
        if (!a->tr) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        for (i = 0; i < a->nparts; i++) {
                audit_part_init(&a->parts[i], a->parts[i].topic,
                                a->parts[i].partition, i);
                if (dedup_tracker_part_add(a->tr, i, 0)) {
                        snprintf(errstr, errstr_size, "out of memory");
                        return -1;
                }
        }
        /* Topic-scoped streams are reconciled across a topic's parts:
         * topic t is the engine's topic t. */
        for (t = 0; t < a->ntopics; t++)
                for (p = 0; p < a->topics[t].npart; p++)
                        if (dedup_tracker_part_set_topic(
                                a->tr, a->topics[t].part_of[p], (uint32_t)t)) {
                                snprintf(errstr, errstr_size, "out of memory");
                                return -1;
                        }
        return ledger_load(a->lg, a->tr, a->parts, a->nparts, errstr,
                           errstr_size);
}

int audit_new(struct audit **out, const struct audit_conf *c,
              rd_kafka_conf_t *kconf, char *errstr, size_t errstr_size)
{
        char brokers[512] = "";
        size_t bsz = sizeof(brokers);
        struct audit *a;
        size_t t;
        int rc = -1, reload = 0;

        *out = NULL;
        /* Before anything connects: the audit's guarantees rest on these. */
        if (audit_kconf_check(kconf, errstr, errstr_size)) {
                rd_kafka_conf_destroy(kconf);
                return -1;
        }
        a = calloc(1, sizeof(*a));
        if (!a) {
                rd_kafka_conf_destroy(kconf);
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        access_watch_init(&a->watch);
        a->conf = *c;
        a->mode = c->mode ? c->mode : &audit_mode_single;
        if (c->group && !c->mode) {
                rd_kafka_conf_destroy(kconf);
                access_watch_destroy(&a->watch);
                free(a);
                snprintf(errstr, errstr_size,
                         "group %s: no group mode given (audit_conf.mode)",
                         c->group);
                return -1;
        }
        if (!a->conf.dedup_key)
                a->conf.dedup_key = "msgid";
        if (audit_dedup_key_parse(a->conf.dedup_key, &a->id_src, &a->id_header,
                                  errstr, errstr_size)) {
                rd_kafka_conf_destroy(kconf);
                access_watch_destroy(&a->watch);
                free(a);
                *out = NULL;
                return -1;
        }
        a->id_header_len = a->id_header ? strlen(a->id_header) : 0;
        if (audit_flow_topics(a, errstr, errstr_size)) {
                rd_kafka_conf_destroy(kconf);
                free(a);
                return -1;
        }
        if (rd_kafka_conf_get(kconf, "bootstrap.servers", brokers, &bsz) !=
            RD_KAFKA_CONF_OK)
                brokers[0] = '\0';

        /* The ledger first: one that cannot be written fails at once,
         * before any broker is asked anything. */
        if (ledger_open(&a->lg, c->db_path, errstr, errstr_size)) {
                rd_kafka_conf_destroy(kconf);
                goto out;
        }
        if (audit_trunc_init(a, kconf, errstr, errstr_size)) {
                rd_kafka_conf_destroy(kconf);
                goto out;
        }
        if (a->mode->conf && a->mode->conf(a, kconf, errstr, errstr_size)) {
                rd_kafka_conf_destroy(kconf);
                goto out;
        }
        rd_kafka_conf_set_opaque(kconf, a);
        rd_kafka_conf_set_error_cb(kconf, audit_error_cb);
        rd_kafka_conf_set_offset_commit_cb(kconf, audit_commit_cb);
        if (c->status) {
                rd_kafka_conf_set_stats_cb(kconf, audit_stats_cb);
                if (rd_kafka_conf_set(kconf, "statistics.interval.ms", "1000",
                                      errstr,
                                      errstr_size) != RD_KAFKA_CONF_OK) {
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

        if (audit_cluster_open(a, errstr, errstr_size) ||
            audit_txn_topics(a, errstr, errstr_size) ||
            audit_discover(a, brokers, errstr, errstr_size))
                goto out;
        if (audit_view_init(a)) {
                snprintf(errstr, errstr_size, "out of memory");
                goto out;
        }
        audit_failpoint_arm(a);
        if (audit_load(a, errstr, errstr_size))
                goto out;
        for (t = 0; t < a->ntopics; t++) {
                a->topics[t].compacted = !c->no_compaction_check &&
                                         audit_compacted(a, a->topics[t].name);
                if (a->topics[t].compacted)
                        log_info("topic '%s' is compacted: a seq that jumps "
                                 "ahead is a new baseline, not a gap",
                                 a->topics[t].name);
        }
        /* Before anything is applied to the logs: are they the ones the
         * ledger knows?  A topic that is not starts a new incarnation,
         * and its state is loaded again (none). */
        if (audit_resume_check(a, &reload, errstr, errstr_size))
                goto out;
        if (reload && audit_load(a, errstr, errstr_size))
                goto out;
        if (audit_windows(a, errstr, errstr_size) ||
            audit_flow_setup(a, errstr, errstr_size) ||
            audit_txn_setup(a, errstr, errstr_size))
                goto out;
        for (t = 0; t < a->ntopics; t++) {
                int32_t p;
                for (p = 0; p < a->topics[t].npart; p++)
                        dedup_tracker_part_set_compacted(
                            a->tr, a->topics[t].part_of[p],
                            a->topics[t].compacted);
        }
        /* The mode positions and assigns every part (single), or joins
         * the group, which assigns, each part positioned then from its
         * state (auditor/group/). */
        if (a->mode->start(a, audit_commit, errstr, errstr_size))
                goto out;
        a->stats.partitions = a->nparts;
        a->started_ms = a->last_commit_ms = a->last_tick_ms = clock_wall_ms();
        a->last_meta_ms = a->started_ms;
        a->last_kafka_commit_ms = a->started_ms;
        audit_publish(a, a->started_ms);
        rc = 0;
out:
        if (rc) {
                if (a->refused)
                        rc = AUDIT_E_ACCESS;
                audit_free(a);
                a = NULL;
        }
        *out = a;
        return rc;
}

static int exit_guard_code;

static void *exit_guard_main(void *unused)
{
        struct timespec ts = {AUDIT_EXIT_GUARD_MS / 1000,
                              (AUDIT_EXIT_GUARD_MS % 1000) * 1000000L};

        (void)unused;
        while (nanosleep(&ts, &ts))
                ;
        log_warn("librdkafka did not finish closing its clients in %d s "
                 "(everything is committed); the process ends",
                 AUDIT_EXIT_GUARD_MS / 1000);
        fflush(NULL);
        _exit(exit_guard_code);
        return NULL;
}

void audit_exit_guard(struct audit *a, int exit_code)
{
        pthread_attr_t at;
        pthread_t t;

        if (!a)
                return;
        exit_guard_code = exit_code;
        if (pthread_attr_init(&at))
                return;
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &at, exit_guard_main, NULL))
                log_warn("no guard thread: a librdkafka hang at exit "
                         "would hold the process");
        pthread_attr_destroy(&at);
}

void audit_free(struct audit *a)
{
        size_t t;

        if (!a)
                return;
        kafka_log_closing();
        /* (group: its view's thread asks the consumer its member id; its
         * ids consumer closes before this one.) */
        if (a->mode && a->mode->stop)
                a->mode->stop(a);
        audit_cluster_close(a);
        if (a->rkqu)
                rd_kafka_queue_destroy(a->rkqu);
        if (a->mode && a->mode->close)
                a->mode->close(a);
        if (a->rk) {
                rd_kafka_consumer_close(a->rk);
                rd_kafka_destroy(a->rk);
        }
        if (a->mode && a->mode->free)
                a->mode->free(a);
        audit_trunc_free(a);
        ledger_close(a->lg);
        dedup_tracker_free(a->tr);
        access_watch_destroy(&a->watch);
        audit_flow_free(a);
        status_view_release(&a->view);
        for (t = 0; t < a->ntopics; t++) {
                free(a->topics[t].name);
                free(a->topics[t].part_of);
        }
        free(a->topics);
        free(a->parts);
        free(a->rt);
        audit_txn_free(a);
        free(a);
}
