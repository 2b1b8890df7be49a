/*
 * internal.h - what was private to audit.c before it became this folder:
 * struct audit and the functions its files call in one another.  Not part
 * of the API (../audit.h is); include it only from auditor/audit/.
 *
 * The files, one job each:
 *   setup.c   audit_new() and audit_free(): topics and partitions from
 *             the brokers, the ledger and the engine loaded, compaction
 *   settings.c the consumer settings the audit relies on, and their check
 *   parts.c   partition and offset bookkeeping: where each partition
 *             starts, assignment, pausing, the end of a scan, stalls
 *   record.c  one consumed message: its headers, its identity, its
 *             verdict, or what its error means
 *   loop.c    audit_run(): the consumer loop and the ledger commits
 *   txn.c     --txn-manifests: the manifest topic and eos.txn, for the
 *             engine's transaction check
 *   view.c    the live figures for HTTP threads (status.h) and
 *             librdkafka's statistics
 *
 * Everything here runs on the thread that calls audit_run(), but for
 * audit_stats_cb() (librdkafka's thread, see there).
 */
#ifndef EOSAUDIT_AUDIT_INTERNAL_H
#define EOSAUDIT_AUDIT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../audit.h"

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
        /* --txn-manifests (txn.c) */
        const char **txn_topics; /* conf.topics and the manifest topic,
                                    when it was not among them */
        size_t txn_topic;        /* its index in topics; SIZE_MAX: off */
        uint64_t txn_bad;        /* its records that are no manifest */
};

/* settings.c: 0 when conf holds every required setting of
 * audit_kconf_apply(), else -1 with errstr naming the first that is not. */
int audit_kconf_check(const rd_kafka_conf_t *conf, char *errstr,
                      size_t errstr_size);

/* parts.c */
int audit_position(struct audit *a, struct ledger_part *lp, char *errstr,
                   size_t errstr_size);
int audit_assign(struct audit *a, char *errstr, size_t errstr_size);
void audit_mark_done(struct audit *a, struct ledger_part *lp);
int audit_out_of_range(struct audit *a, struct ledger_part *lp, char *errstr,
                       size_t errstr_size);
void audit_check_stalls(struct audit *a, int64_t now);
int audit_all_done(const struct audit *a);
int audit_drain(struct audit *a, char *errstr, size_t errstr_size);

/* record.c */
void audit_message(struct audit *a, rd_kafka_message_t *rkm, int64_t now,
                   int *fatal, char *errstr, size_t errstr_size);

/* txn.c: --txn-manifests.  audit_txn_topics() before the topics are
 * discovered, audit_txn_setup() once the ledger is loaded,
 * audit_txn_record() for every record after the engine observed it. */
int audit_txn_topics(struct audit *a, char *errstr, size_t errstr_size);
int audit_txn_setup(struct audit *a, char *errstr, size_t errstr_size);
void audit_txn_record(struct audit *a, struct ledger_part *lp,
                      const rd_kafka_message_t *rkm,
                      const struct dedup_hdrs *h);
void audit_txn_free(struct audit *a);

/* view.c */
int audit_stats_cb(rd_kafka_t *rk, char *json, size_t json_len,
                   void *opaque);
void audit_publish(struct audit *a, int64_t now);
int audit_view_init(struct audit *a);

#endif /* EOSAUDIT_AUDIT_INTERNAL_H */
