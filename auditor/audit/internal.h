/*
 * internal.h - what was private to audit.c before it became this folder:
 * struct audit and the functions its files call in one another.  Not part
 * of the API (audit.h is); include it only from auditor/audit/ and from
 * auditor/group/, whose mode (mode.h) works on struct audit.
 *
 * The files, one job each:
 *   setup.c   audit_new() and audit_free(): topics and partitions from
 *             the brokers, the ledger and the engine loaded, compaction
 *   settings.c the consumer settings the audit relies on, and their check
 *   parts.c   partition and offset bookkeeping: where each partition
 *             starts, assignment, pausing, the end of a scan, stalls
 *   record.c  one consumed message: its headers, its identity, its
 *             verdict, or what its error means
 *   loop.c    audit_run(): the consumer loop and the ledger commits; it
 *             calls the mode (mode.h) and never asks which it is
 *   mode.c    the single-process mode: every partition assigned from
 *             the ledger, offsets committed to Kafka for lag tools, new
 *             partitions in follow mode (the group's is auditor/group/)
 *   frontier_connect.c a flow's frontier from a Kafka Connect offsets
 *             topic (MirrorMaker 2), for a processor without a group
 *   flow.c    the flow audit: sources and sinks, the processor's
 *             committed offsets as the frontier, the lineage engine
 *   txn.c     --txn-manifests: the manifest topic and eos.txn, for the
 *             engine's transaction check
 *   view.c    the live figures for HTTP threads (status.h) and
 *             librdkafka's statistics
 *   refusal.c when the brokers refuse the audit (access.h): the
 *             error and commit callbacks, the metadata wait
 *   cluster.c which consumer reads a topic: the sources' own on
 *             another cluster (--source-bootstrap), else the one; both
 *             queues consumed as one
 *   refresh.c partitions added while the audit runs (follow mode)
 *   resume.c  the topic id and fingerprint check when the audit
 *             resumes: a topic recreated or a log truncated starts a new
 *             incarnation
 *   topic_id.c the topics' ids from the brokers (DescribeTopics), and
 *             what a changed one means while the audit runs
 *   pool.c    --threads: helper threads that parse each batch's records
 *             (audit_record_parse) and destroy the last batch's messages
 *   access.c  refusals (a missing ACL, credentials no longer accepted)
 *             as operator lines, and the watch that keeps the last one
 *   status.c  the live figures handed to HTTP threads under a lock
 *             (status.h), and the slot of the group view's snapshot
 *   status_group.c  the member listing in those figures (copy, free)
 *             and the parser of a member's assignment bytes
 *   fpmsg.c   a record's fingerprint hashed from its message (the
 *             batch's last records; a truncation's probe)
 *   trunc_note.c a log truncated under the audit (an unclean leader
 *             election), as it shows while the loop reads: noted
 *   trunc_detect.c ... handled after the batch: where the log diverged
 *   trunc_unaudit.c ... what the audit accepted from there taken back
 *
 * Threads (audit.h says which four kinds there are): the consumer's
 * thread, the one that calls audit_run(), owns everything here but for
 * audit_stats_cb() (librdkafka's thread, see there), the pool's helpers,
 * which run audit_record_parse() and rd_kafka_message_destroy() only, and
 * the commit thread (loop.c), which writes one batch while the consumer's
 * thread only reads ahead.  The engine, the ledger and every verdict stay
 * in each partition's order: the audit gives the same counts with any
 * number of threads.
 */
#ifndef EOSAUDIT_AUDIT_INTERNAL_H
#define EOSAUDIT_AUDIT_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "access.h"
#include "audit.h"
#include "mode.h"
#include "pool.h"

#define AUDIT_META_TIMEOUT_MS 10000
/* Metadata is asked for in steps of this; once this long has passed with
 * a broker's name unresolved or its connection refused, the audit gives
 * up (a broker that is starting takes longer than the whole wait). */
#define AUDIT_META_STEP_MS 500
#define AUDIT_META_SURE_MS 2000
#define AUDIT_ADMIN_TIMEOUT_MS 5000

struct audit_topic {
        char *name;
        uint32_t *part_of; /* partition -> part index; partitions found
                              later (refresh.c) get parts at the end */
        int32_t npart;
        int compacted; /* cleanup.policy includes compact */
        int flow_role; /* AUDIT_FLOW_* */
        /* Its topic id (topic_id.c): the ledger's, or the first the
         * brokers gave; "" none yet.  id_said: that none can be had was
         * logged. */
        char id[LEDGER_TOPIC_ID_MAX];
        int id_said;
};

enum { AUDIT_FLOW_NONE = 0, AUDIT_FLOW_SINK, AUDIT_FLOW_SOURCE };

/* Per-part state that is not persisted. */
struct audit_rt {
        int64_t end; /* scan: high watermark at start */
        int64_t last_progress_ms;
        int eof;  /* at the end of what is readable now */
        int done; /* scan: nothing more to audit */
        int paused;
        int fp_stale;        /* parts[].fp.offset is set, its hash not yet
                                (audit_fingerprint_batch) */
        int flow_held;       /* paused by the flow's pacing (flow.c) */
        int flow_ts_held;    /* a sink part paused by the flow's pacing
                                in the records' time (flow.c) */
        int64_t flow_ts;     /* the time of the last record read in it
                                (ms; 0: none yet), for that pacing */
        int flow_role;       /* AUDIT_FLOW_*: its topic's, set once
                                (audit_flow_setup, audit_part_new) */
        int owned;           /* audited by this process now (single:
                                every part; --group: assigned here) */
        int state_dirty;     /* --group: its state goes to the next
                                transaction */
        int64_t trunc_floor; /* the ledger's runs and fingerprints of the
                                part answer for what this process
                                accepted from this offset on (--group:
                                where it took the part over; 0: all): a
                                truncation is located no lower
                                (trunc_detect.c) */
};

/* Where a flow's frontier comes from (flow.c): the processor's committed
 * offsets, per source part, into pend[] (-1: none committed).  open
 * (may be NULL) once the parts' roles are set: 0, or -1 with errstr;
 * read: 0 with *committed set when one at least is, or -1 after logging
 * why (the next read tries again); close (may be NULL) frees what open
 * made, whether it succeeded or not. */
struct audit_frontier {
        const char *what; /* for the log, before the name given */
        int (*open)(struct audit *a, char *errstr, size_t errstr_size);
        int (*read)(struct audit *a, int64_t *pend, int *committed);
        void (*close)(struct audit *a);
};
/* frontier_connect.c: --processor-offsets-topic, a Kafka Connect offsets
 * topic on the sinks' cluster (MirrorMaker 2's mm2-offsets.*.internal). */
extern const struct audit_frontier audit_frontier_connect;

/* The flow audit's state beside its engine (flow.c). */
struct audit_flow_state {
        const struct audit_frontier *fr; /* NULL: due by flow.due_* */
        const char *fr_name;             /* the group or the topic it reads */
        void *fr_state;                  /* the frontier's own (fr->open) */
        const char **all_topics; /* sinks, then sources: what is read */
        int64_t *pend;           /* per part, of the frontier being read:
                                    source: the group's committed offset;
                                    sink: the high watermark to reach */
        int pending;             /* a frontier waits for the sinks */
        int64_t last_read_ms;
        struct audit_flow_info info;
        uint64_t said[3]; /* lost, duplicated, unexpected logged */
        uint64_t early0;  /* retired lost + unexpected at load */
        int early_said;   /* the bound's warning was given */
        int held_role;    /* AUDIT_FLOW_*: the side held back */
        int64_t said_ms;
};

/* --txn-manifests' state (txn.c). */
struct audit_txn_state {
        const char **topics; /* conf.topics and the manifest topic, when
                                it was not among them */
        size_t topic;        /* its index in topics; SIZE_MAX: off */
        uint64_t bad;        /* its records that are no manifest */
};

/* Figures of the run so far (the progress log line). */
struct audit_stats {
        uint64_t records; /* records read in this run */
        uint64_t commits;
        int64_t last_commit_us;
        uint32_t partitions;
        uint32_t partitions_done; /* scan: reached their end */
        uint32_t partitions_stalled;
};

struct audit {
        struct audit_conf conf;
        rd_kafka_t *rk;
        rd_kafka_queue_t *rkqu;
        /* conf.source_kconf: the consumer of the sources' cluster
         * (cluster.c) and its queue; NULL: rk reads every topic. */
        rd_kafka_t *rk_src;
        rd_kafka_queue_t *rkqu_src;
        struct ledger *lg;
        struct dedup_tracker *tr;
        struct audit_topic *topics;
        size_t ntopics;
        struct ledger_part *parts;
        struct audit_rt *rt;
        uint32_t nparts;
        uint32_t parts_cap;               /* allocated parts and rt */
        int64_t last_meta_ms;             /* last look for new partitions */
        const rd_kafka_topic_t *last_rkt; /* cache for topic lookup */
        size_t last_topic;
        size_t events_seen;   /* events already passed to on_event */
        uint64_t uncommitted; /* records since the last ledger commit */
        int64_t last_commit_ms, last_kafka_commit_ms, last_tick_ms;
        int64_t last_progress_print_ms, started_ms;
        struct audit_stats stats;
        int commit_failing;
        struct status_view view; /* what status_publish() copies */
        int64_t last_publish_ms;
        int brokers_up; /* from librdkafka statistics */
        enum audit_id_source id_src;
        const char *id_header; /* AUDIT_ID_HEADER: points into conf */
        size_t id_header_len;
        struct access_watch watch; /* refusals from error_cb */
        int refused;               /* the fatal error was a refusal */
        int group_refused;         /* no lag commits any more (refusal.c) */
        int64_t rec_lag_ms;        /* wall clock minus the last record's
                                    timestamp, when it was read */
        /* The flow audit (flow.c): its engine (NULL: none), and its
         * state. */
        struct dedup_flow *flow;
        struct audit_flow_state fls;
        /* --txn-manifests (txn.c) */
        struct audit_txn_state txs;
        /* --threads: the helpers that parse records and destroy messages
         * (pool.h; loop.c) */
        struct audit_pool *pool;
        /* The ledger commit in flight on its own thread (loop.c): it
         * reads tr, parts, flow and lg while this thread only polls and
         * parses the next batch, touching none of them until the join. */
        pthread_t commit_thr;
        int commit_inflight;
        int commit_done; /* set by the commit's thread as it ends */
        int commit_rc;
        int64_t commit_us, commit_now;
        char commit_err[512];
        /* How the partitions are shared (mode.c), and the group mode's
         * own state (auditor/group/; NULL in the single-process mode). */
        const struct audit_mode *mode;
        struct audit_group *grp;
        /* A log truncated under the audit (trunc_detect.c) */
        struct audit_trunc *trunc;
};

/* settings.c: 0 when conf holds every required setting of
 * audit_kconf_apply(), else -1 with errstr naming the first that is not. */
int audit_kconf_check(const rd_kafka_conf_t *conf, char *errstr,
                      size_t errstr_size);

/* setup.c: a part never audited (next_offset -1, no fingerprint). */
void audit_part_init(struct ledger_part *lp, const char *topic,
                     int32_t partition, uint32_t part);

/* parts.c: audit_position() returns 0, 1 (a truncation noted, see
 * audit_trunc_beyond()) or -1 with errstr. */
int audit_position(struct audit *a, struct ledger_part *lp, char *errstr,
                   size_t errstr_size);
int audit_assign(struct audit *a, char *errstr, size_t errstr_size);
/* Assigns the partitions of l (destroyed here) to the audit's consumer. */
int audit_assign_list(struct audit *a, rd_kafka_topic_partition_list_t *l,
                      char *errstr, size_t errstr_size);
void audit_mark_done(struct audit *a, struct ledger_part *lp);
int audit_out_of_range(struct audit *a, struct ledger_part *lp, char *errstr,
                       size_t errstr_size);
void audit_check_stalls(struct audit *a, int64_t now);
int audit_all_done(const struct audit *a);
int audit_caught_up(const struct audit *a);
int audit_drain(struct audit *a, char *errstr, size_t errstr_size);

/* record.c */
#define AUDIT_VALUE_HASH_LEN 16
/* One record as read from its message (audit_record_parse()): what the
 * engine needs, computed by any thread; the verdict is the consumer
 * thread's (audit_message()).  h's pointers are into the message's
 * headers (and id_buf): valid while both live, and the struct must not
 * be copied. */
struct audit_rec {
        struct dedup_hdrs h;
        uint32_t part; /* AUDIT_REC_NONE: an error or no part of ours */
        uint32_t topic;
        unsigned char id_buf[AUDIT_VALUE_HASH_LEN];
};
#define AUDIT_REC_NONE UINT32_MAX
/* Parses rkm into r.  Reads only what no thread changes while a batch is
 * classified (topics, the --dedup-key settings): safe on any thread. */
void audit_record_parse(const struct audit *a, const rd_kafka_message_t *rkm,
                        struct audit_rec *r);
/* Starts loading the id window's memory that classifying r will read
 * (and the flow's: its slot). */
void audit_record_prefetch(const struct audit *a, const struct audit_rec *r);
/* Without helpers: before the verdict of msgs[k] (of n), parses the
 * record a few ahead of it into recs (at k = 0 the first few) and starts
 * loading what the verdicts of the next ones will read.  Every record is
 * parsed by the time its verdict comes. */
void audit_record_ahead(const struct audit *a, rd_kafka_message_t **msgs,
                        struct audit_rec *recs, size_t n, size_t k);
/* The verdict of rkm, parsed into r (NULL: parsed here). */
void audit_message(struct audit *a, rd_kafka_message_t *rkm,
                   struct audit_rec *r, int64_t now, int *fatal, char *errstr,
                   size_t errstr_size);
struct ledger_part *audit_part_of(struct audit *a,
                                  const rd_kafka_message_t *rkm);
/* The fingerprint of rkm (fingerprint.h). */
void audit_fingerprint_msg(const rd_kafka_message_t *rkm,
                           struct fingerprint *out);
/* Hashes the last audited record of each part that msgs[0..n) advanced
 * (before they are destroyed and the batch committed). */
void audit_fingerprint_batch(struct audit *a, rd_kafka_message_t **msgs,
                             size_t n);

/* refresh.c: looks for partitions added to the topics and audits them
 * from their log start.  Returns 0, or -1 with errstr (fatal). */
int audit_refresh(struct audit *a, int64_t now, char *errstr,
                  size_t errstr_size);
/* Adds partition p of topic t, the topic's next (p == its npart), as a
 * new part at the end of the arrays, not positioned (next_offset -1).
 * --group: a partition added to the topic since the start, assigned.
 * Returns 0, or -1 (out of memory). */
int audit_part_add(struct audit *a, size_t t, int32_t p);

/* resume.c: checks each part's fingerprint against its log; a topic
 * recreated or truncated starts a new incarnation in the ledger and sets
 * *reload (the caller loads the ledger again).  Returns 0, or -1. */
int audit_resume_check(struct audit *a, int *reload, char *errstr,
                       size_t errstr_size);

/* topic_id.c: each audited topic's id as the brokers give it now: id
 * "" and why set when none could be had. */
struct audit_topic_id {
        char id[LEDGER_TOPIC_ID_MAX];
        char why[256];
};
/* One DescribeTopics for every topic into out[0..ntopics); never fails
 * (a topic whose id cannot be had has why set). */
void audit_topic_ids_read(struct audit *a, struct audit_topic_id *out);
/* Logs, once per topic, that topic t has no id (why): the fingerprint
 * decides alone. */
void audit_topic_id_unknown(struct audit *a, size_t t, const char *why);
/* While the audit runs: reads the ids again and returns 1 with errstr
 * (fatal) when a topic (only that one, when only is not NULL) has
 * another id than the one the audit began with; else 0, topics[].id set
 * where it was none; -1 with errstr (out of memory). */
int audit_topic_ids_check(struct audit *a, const char *only, char *errstr,
                          size_t errstr_size);

/* refusal.c: the handle's error_cb and offset_commit_cb (opaque: the
 * audit); the group warning for err (a refusal) on the audit's group;
 * rd_kafka_metadata() that a refusal ends early. */
void audit_error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque);
void audit_commit_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                     rd_kafka_topic_partition_list_t *offsets, void *opaque);
void audit_group_refused(struct audit *a, rd_kafka_resp_err_t err);
rd_kafka_resp_err_t audit_metadata(struct audit *a, rd_kafka_t *rk,
                                   rd_kafka_topic_t *rkt,
                                   const struct rd_kafka_metadata **md);

/* cluster.c: the sources' own consumer when they are on another cluster
 * (conf.source_kconf).  audit_cluster_open() makes it (0, or -1 with
 * errstr); audit_rk_of() is the handle that reads topic (every one but
 * a source's is rk); audit_cluster_split() moves the elements of l that
 * the sources' handle reads into a list it returns (NULL when there is
 * no such handle: l keeps them all); audit_consume() takes up to max
 * messages from both queues within timeout_ms; audit_cluster_close()
 * closes and destroys it. */
int audit_cluster_open(struct audit *a, char *errstr, size_t errstr_size);
rd_kafka_t *audit_rk_of(const struct audit *a, const char *topic);
rd_kafka_topic_partition_list_t *
audit_cluster_split(const struct audit *a, rd_kafka_topic_partition_list_t *l);
ssize_t audit_consume(struct audit *a, int timeout_ms,
                      rd_kafka_message_t **msgs, size_t max);
void audit_cluster_close(struct audit *a);

/* flow.c */
int audit_flow_topics(struct audit *a, char *errstr, size_t errstr_size);
int audit_flow_setup(struct audit *a, char *errstr, size_t errstr_size);
int audit_flow_record(struct audit *a, const struct ledger_part *lp,
                      int64_t offset, const struct dedup_hdrs *h);
/* lp, a flow's source or sink part (else nothing), was truncated at d
 * (trunc_unaudit.c): its entries corrected (ledger_flow_truncated()),
 * written by the next commit with the truncation.  0, or -1 with
 * errstr. */
int audit_flow_truncated(struct audit *a, const struct ledger_part *lp,
                         int64_t d, char *errstr, size_t errstr_size);
void audit_flow_poll(struct audit *a, int64_t now);
void audit_flow_end(struct audit *a);
void audit_flow_free(struct audit *a);

/* txn.c: --txn-manifests.  audit_txn_topics() before the topics are
 * discovered, audit_txn_setup() once the ledger is loaded,
 * audit_txn_record() for every record after the engine observed it. */
int audit_txn_topics(struct audit *a, char *errstr, size_t errstr_size);
int audit_txn_setup(struct audit *a, char *errstr, size_t errstr_size);
void audit_txn_record(struct audit *a, struct ledger_part *lp,
                      const rd_kafka_message_t *rkm,
                      const struct dedup_hdrs *h);
void audit_txn_free(struct audit *a);

/* loop.c: commits the batch (the mode's before_commit first: the group's
 * Kafka transaction); on failure keeps it (commit_failing) and returns
 * -1.  The group mode gets it as its start()'s commit callback. */
int audit_commit(struct audit *a, int64_t now);

/* mode.c: the mode's failure, when it has failed for good (errstr). */
int audit_mode_failed(struct audit *a, char *errstr, size_t errstr_size);
/* mode.c: what the single-process mode commits to Kafka for lag tools:
 * every part's next offset (a failure changes nothing). */
void audit_kafka_commit(struct audit *a);

/* trunc_note.c: what a truncation seen while the loop runs leaves for
 * trunc_detect.c, made by audit_trunc_init() (a->trunc). */
struct audit_trunc {
        rd_kafka_conf_t *kconf; /* the probe's settings */
        rd_kafka_t *probe;      /* made at first use */
        int64_t *beyond;        /* per part: the log end of a truncation
                                   seen and not yet handled, else -1 */
        const char **how;       /* per part: how it showed */
        size_t nbeyond;
};

/* trunc_note.c and trunc_detect.c: a log truncated under the audit.  audit_trunc_init()
 * with the consumer's settings before the handle takes them;
 * audit_trunc_beyond() when lp's fetch position is past the log end hi
 * (parts.c): while the loop runs, noted for audit_trunc_run() (returns
 * 1), else an error (-1 with errstr); audit_trunc_run() after each batch
 * handles what was noted (-1: fatal, errstr); audit_trunc_locate() looks
 * for where lp's log diverged below hi and un-audits from there: 1 done
 * (the next commit writes it), 0 no record of the ledger's is still
 * there (another log), -1 error. */
int audit_trunc_init(struct audit *a, const rd_kafka_conf_t *kconf,
                     char *errstr, size_t errstr_size);
void audit_trunc_free(struct audit *a);
int audit_trunc_beyond(struct audit *a, struct ledger_part *lp, int64_t hi,
                       char *errstr, size_t errstr_size);
int audit_trunc_run(struct audit *a, int64_t now, audit_commit_fn *commit,
                    char *errstr, size_t errstr_size);
/* Whether err is librdkafka's report of a truncated log (KIP-320;
 * librdkafka >= 2.1), and its handling: lp noted for audit_trunc_run(). */
int audit_trunc_signal(rd_kafka_resp_err_t err);
int audit_trunc_kip320(struct audit *a, struct ledger_part *lp, char *errstr,
                       size_t errstr_size);
int audit_trunc_locate(struct audit *a, struct ledger_part *lp, int64_t hi,
                       const char *how, char *errstr, size_t errstr_size);
/* trunc_unaudit.c: audit_trunc_note() after the engine's verdict v on a
 * record of lp; audit_trunc_unaudit() takes back lp's records from
 * offset d (match: the last record still there, hi the log end). */
void audit_trunc_note(struct audit *a, const struct ledger_part *lp,
                      int64_t offset, const struct dedup_hdrs *h,
                      enum dedup_verdict v);
int audit_trunc_unaudit(struct audit *a, struct ledger_part *lp, int64_t d,
                        const struct fingerprint *match, int64_t hi,
                        const char *how, char *errstr, size_t errstr_size);

/* view.c */
int audit_stats_cb(rd_kafka_t *rk, char *json, size_t json_len, void *opaque);
void audit_publish(struct audit *a, int64_t now);
int audit_view_init(struct audit *a);
/* Adds part lp (the last one) to the live figures; -1 on OOM. */
int audit_view_part_add(struct audit *a, const struct ledger_part *lp);

#endif /* EOSAUDIT_AUDIT_INTERNAL_H */
