/*
 * audit.h - the consumer loop that feeds Kafka records through the engine
 * into the ledger.  Shared by `scan` (up to the high watermarks that held
 * at start, then stop), `serve` and `demo` (follow forever).
 *
 * Invariants
 *  - Partitions are assigned from the ledger's offsets, never from Kafka's
 *    committed offsets (those are written only so that lag tools see us).
 *  - A record's offset advances in the same ledger transaction as its
 *    verdict; malformed and untracked records advance it too.
 *  - Offsets that retention deleted before they were audited become an
 *    explicit coverage gap (and the partition restarts from baselines),
 *    never a silent reset.
 *  - Transaction markers leave holes in offsets; gaps are inferred from
 *    eos.seq only, never from offsets.
 *  - Four kinds of thread run an audit.  The consumer's thread (the one
 *    that calls audit_run()) owns the live state: the engine, every
 *    verdict, the ledger writes' order.  The parse helpers (pool.c:
 *    --threads - 1 of them) parse headers and hash ids of a batch into
 *    per-record descriptors and free the previous batch's messages,
 *    touching no audit state.  The commit thread (loop.c,
 *    audit_commit_start()) writes one batch's ledger transaction while
 *    the consumer's thread only reads ahead, and is joined before the
 *    state is touched again.  With serve --group, the group view thread
 *    (group_view.c) tails the group's topics with a consumer of its own
 *    and publishes snapshots through status.h.  HTTP threads never call
 *    in here: they read the ledger or what status.h publishes.
 */
#ifndef EOSAUDIT_AUDIT_H
#define EOSAUDIT_AUDIT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "../../dedup/dedup.h"
struct audit_mode;
#include "../../dedup/flow.h"
#include "../ledger/ledger.h"
#include "status.h"

struct audit;

/* audit_new() and audit_run() return this (with errstr the operator's
 * line, access.h) when the brokers refuse the client: authentication,
 * TLS or a missing ACL. */
#define AUDIT_E_ACCESS (-2)

/* Called for every anomaly (and expiry) before its batch is committed,
 * once per event. */
typedef void(audit_event_cb)(void *opaque, const char *topic,
                             int32_t partition, const struct dedup_event *ev);

/* What identifies a message for the id windows (--dedup-key). */
enum audit_id_source {
        AUDIT_ID_MSGID,      /* the eos.msgid header */
        AUDIT_ID_HEADER,     /* the header id_header (its last occurrence) */
        AUDIT_ID_KEY,        /* the record key (a null key: none) */
        AUDIT_ID_VALUE_HASH, /* a 128-bit hash of key and value */
};

/*
 * Parses a --dedup-key value: "msgid", "header:NAME" (NAME 1..255 bytes),
 * "key" or "value-hash".  *header points into spec.  Returns 0, or -1
 * with errstr.
 */
int audit_dedup_key_parse(const char *spec, enum audit_id_source *src,
                          const char **header, char *errstr,
                          size_t errstr_size);

struct audit_conf {
        const char *const *topics;
        size_t topic_cnt;
        const char *db_path; /* ledger file; must be set */
        int follow;          /* 0: scan to the start watermarks and stop */
        struct dedup_config dedup;
        const char *dedup_key; /* --dedup-key, as given; "msgid" default */
        int64_t commit_interval_ms; /* ledger commit at least this often */
        uint64_t commit_records;    /* ... or after this many records */
        int64_t kafka_commit_interval_ms; /* lag-visibility commits */
        /* follow mode: look for partitions added to the topics this
         * often (0: never); they are audited from their log start. */
        int64_t metadata_refresh_ms;
        int64_t stall_timeout_ms; /* scan: give up on a partition whose
                                     position stays below its start
                                     watermark (an open transaction) */
        int progress;             /* scan: progress line on stderr */
        audit_event_cb *on_event;
        /* Called about once a second from the loop (after the batch's
         * events), e.g. to end quiet groups of events; may be NULL. */
        void (*on_tick)(void *opaque, int64_t now_ms);
        void *opaque;
        volatile sig_atomic_t *run; /* cleared by a signal: finish the batch
                                       and return */
        /* follow mode: once *drain is set, the audit turns into a scan up
         * to the high watermarks of that moment and returns at its end
         * (the demo sets it when its producer is done).  May be NULL. */
        volatile sig_atomic_t *drain;
        /* Where live figures are published for HTTP threads (after each
         * commit and at least every second); NULL: none. */
        struct status *status;
        /* Do not ask the brokers for each topic's cleanup.policy (the
         * mock cluster never answers DescribeConfigs): topics are taken
         * as not compacted. */
        int no_compaction_check;
        /* The flow audit (dedup/flow.h, auditor/audit/flow.c): when
         * source_cnt > 0, topics are the sinks of a processor that reads
         * sources.  Sink records are judged by lineage only (their eos.*
         * headers are the source writer's, forwarded: no sequence
         * audit, no id window); sources keep their full audit. */
        const char *const *sources;
        size_t source_cnt;
        const char *processor_group; /* NULL: due by flow.due_* */
        /* ... or the topic, on the sinks' cluster, where a Kafka Connect
         * source connector records how far it copied (MirrorMaker 2:
         * mm2-offsets.SOURCE.internal): the frontier as a group's
         * committed offsets are (frontier_connect.c).  NULL: none; not
         * with processor_group. */
        const char *processor_offsets_topic;
        /* The sources' cluster, when it is not the sinks' (a copy
         * between clusters: MirrorMaker 2, a replicator): the settings
         * of a consumer of its own, a template audit_new() copies (it
         * must pass audit_kconf_check() as kconf does); the processor
         * group is read there.  NULL: one consumer reads every topic. */
        const rd_kafka_conf_t *source_kconf;
        struct dedup_flow_config flow;
        int64_t flow_frontier_interval_ms; /* serve: read the group's
                                              committed offsets this often */
        /* --txn-manifests: the topic of the transactions' manifests
         * (audited too, added to topics when not among them); every
         * committed manifest's records must be visible, no record of an
         * aborted transaction may be (dedup/txn.h).  NULL: off. */
        const char *txn_manifests;
        /* --threads: the audit's threads, the consumer's included (0: one
         * per core, at most AUDIT_THREADS_MAX).  The others parse records
         * and free messages; verdicts and the ledger stay on the
         * consumer's, so the counts do not depend on it. */
        unsigned threads;
        /* serve --group (auditor/audit/group.c): NULL = off.  The
         * consumer subscribes to the topics in consumer group `group`
         * instead of assigning every partition; each partition's state
         * comes from and goes to the compacted topic
         * eosaudit-<group>-state, in Kafka transactions of the
         * transactional.id eosaudit-<group>-<group_member> (NULL: host
         * name and pid).  group_replication: the state, events
         * and ids topics' replication factor when they are created (0:
         * the broker's).
         * group_instance_id: the consumer's group.instance.id (static
         * membership; NULL: dynamic); a member fenced by a newer one
         * with the same id stops. */
        const char *group;
        const char *group_member;
        const char *group_instance_id;
        int group_replication;
        int group_ids_partitions; /* the ids topic's, when created
                                     (group_ids.c); 0: 12 */
        /* How the partitions are shared (mode.h): NULL, this process
         * alone; with group set, auditor/group/group.h's
         * audit_mode_group. */
        const struct audit_mode *mode;
};

#define AUDIT_THREADS_MAX 64

void audit_conf_defaults(struct audit_conf *c);

/*
 * The consumer settings the audit relies on are set here and nowhere
 * else.  On a new configuration: audit_kconf_defaults(), then the caller's
 * own properties (files, -X, brokers, isolation), then
 * audit_kconf_apply(); then audit_new().  Both return 0, or -1 with errstr
 * (a property librdkafka refuses).
 *
 * Required, and put back by audit_kconf_apply() over any other value with
 * a warning; audit_new() refuses a configuration without them:
 *   enable.auto.commit=false, enable.auto.offset.store=false
 *                            Kafka's committed offsets are written by the
 *                            audit alone, from the ledger, for lag tools
 *   enable.partition.eof=true
 *                            a scan moves past transaction markers at the
 *                            end of a partition and knows where to stop
 *   auto.offset.reset=error  offsets deleted before they were audited
 *                            become a coverage gap, not a silent jump
 *
 * Defaults the caller may change between the two calls:
 *   isolation.level=read_committed (read_uncommitted is supported:
 *                            audit_kconf_apply() warns that aborted
 *                            transactions then count as delivered)
 *   the prefetch budget: queued.min.messages=150000,
 *                            queued.max.messages.kbytes=8192,
 *                            fetch.max.bytes=4194304 (raised by
 *                            audit_kconf_apply() to a larger
 *                            message.max.bytes unless the caller set it),
 *                            fetch.wait.max.ms=100, fetch.queue.backoff.ms
 *                            =50 (or, where librdkafka lacks it, a 50 ms
 *                            topic.metadata.refresh.interval.ms)
 */
int audit_kconf_defaults(rd_kafka_conf_t *conf, char *errstr,
                         size_t errstr_size);
int audit_kconf_apply(rd_kafka_conf_t *conf, char *errstr, size_t errstr_size);

/*
 * Connects with kconf (ownership passes to the audit on success and on
 * failure), discovers the partitions of every topic, opens the ledger and
 * loads it.  Returns 0, AUDIT_E_ACCESS with errstr, or -1 with errstr
 * (a kconf without the required settings of audit_kconf_apply(),
 * unreachable broker, unknown topic, ledger in use...).
 */
int audit_new(struct audit **out, const struct audit_conf *c,
              rd_kafka_conf_t *kconf, char *errstr, size_t errstr_size);

/*
 * Runs until the scan is complete (follow = 0), *run is cleared, or a
 * fatal error.  At the end of a scan every open gap is confirmed.  Returns
 * 0, AUDIT_E_ACCESS with errstr (refused: a missing ACL, credentials or
 * certificates no longer accepted), or -1 with errstr.
 */
int audit_run(struct audit *a, char *errstr, size_t errstr_size);

/* The ledger, for reports after audit_run(). */
struct ledger *audit_ledger(struct audit *a);

struct audit_flow_info {
        int group;           /* a processor group was given */
        int group_committed; /* it has a committed offset on a source */
        uint64_t frontiers;  /* frontiers applied */
        uint64_t holds;      /* times pacing held one side back */
        uint64_t ts_holds;   /* times pacing held sink parts back in the
                                records' time */
        int64_t lag;         /* records of the sources above the group's
                                committed offsets at the last read; -1 */
};
void audit_flow_info_get(const struct audit *a, struct audit_flow_info *fi);

void audit_free(struct audit *a);

/*
 * serve, before audit_free(): should the rest of the process's teardown
 * not end within AUDIT_EXIT_GUARD_MS, it ends with exit_code and one
 * line.  rd_kafka_consumer_close() of a consumer with a group.id waits
 * for its group coordinator, and while no broker answers it asks for one
 * again without end (librdkafka issue 3740, open; seen on 2.14.2: a
 * serve stopped 5 s after its only broker went down ended by this guard
 * 20 s later): a serve stopped while its brokers are unreachable.
 * (librdkafka before 2.1.0 also hung destroying a consumer of a deleted
 * topic, issue 4187, and before 2.4.0 closing a cooperative one that an
 * assignment reached, issue 4527: this build's floor is 2.10.)  By then
 * the audit has committed all it owes (the ledger, and with --group the
 * Kafka transactions); what a close would still commit is Kafka's copy
 * of the offsets, for lag tools only, or with --group what the
 * partitions' next owner audits again from the committed state: ending
 * loses nothing.
 */
#define AUDIT_EXIT_GUARD_MS 20000
void audit_exit_guard(struct audit *a, int exit_code);

#endif /* EOSAUDIT_AUDIT_H */
