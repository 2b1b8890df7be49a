/*
 * internal.h - what the files of group/ (serve --group) share: the
 * group's handles and the state topic's functions.  Everything runs on
 * the audit_run() thread, the rebalance callbacks included (they are
 * served by the consumers' polls), but group_view.c's thread (see there).
 *
 *   group_common.c  what the others call and that calls none of them:
 *                the member's failure, the consumers' fatal error, the
 *                end of both rebalance callbacks, the extra handles
 *   partstate.c  one partition's audit state as a JSON record, the
 *                unit a partition moves between members in
 *   grouprep.c   the group's figures from its state and events topics
 *                (pure: bounded parse, reference-counted snapshots)
 *   group.c      the consumer group, the rebalances, the state and
 *                events topics, each commit's Kafka transaction
 *   group_state.c  the state topic (created, checked, read at an
 *                assignment; a lost one refused)
 *   group_ids_window.c  the ids topic's records and a judge's window
 *   group_ids_pack.c   redeliveries across members through the ids
 *                topic (group_ids.h): entries noted, packed, produced
 *                in the transaction
 *   group_ids_judge.c  their judges: a record judged, a window rebuilt
 *   group_ids.c  their consumer: rebalances, polls, close, setup
 *   group_view.c the group view's thread: the state and events topics
 *                tailed into grouprep.c, the members listed, snapshots
 *                published (status.h)
 */
#ifndef EOSAUDIT_AUDIT_GROUP_H
#define EOSAUDIT_AUDIT_GROUP_H

#include "../audit/internal.h"
#include "group.h"

/* a dead member's open transaction is aborted after about this */
#define GROUP_TXN_TIMEOUT_MS 10000
#define GROUP_STATE_READ_MS 60000 /* longest wait for the state topic */
#define GROUP_OP_TIMEOUT_MS 30000
/* an idle member's look at the state topic: at most this often */
#define GROUP_WATCH_MS 1000
#define GROUP_WATCH_TIMEOUT_MS 2000 /* ... and its longest wait */
#define GROUP_WATCH_AWAY_MS 10000   /* no answer: the next look later */
#define GROUP_META_STEP_MS 200      /* a new topic's metadata asked again */

struct audit_group {
        audit_commit_fn *commit; /* the loop's (audit_mode_group.start) */
        rd_kafka_conf_t *base;   /* the consumer's settings, callbacks aside */
        rd_kafka_t *prod;        /* transactional: the state and the offsets */
        rd_kafka_t *reader;      /* reads the state topic (assign, no group) */
        rd_kafka_t *ids_rk;      /* the ids topic's consumer, group GROUP-ids
                                  (group_ids.c); NULL: no ids topic */
        char *state_topic;
        char *events_topic;          /* every anomaly event, in the same
                                  transactions */
        struct audit_group_ids *ids; /* group_ids.c; NULL: --id-window 0 */
        struct audit_group_trunc *truncs; /* 'truncated' events of the
                                             parts' truncations taken back
                                             since the last transaction
                                             (group_truncated()), owned */
        size_t ntruncs;
        char txn_id[512];
        char member[300]; /* --group-member, or host name and pid */
        struct audit_group_view *view; /* group_view.c: its thread */
        int failed;                    /* a fatal error: the loop stops */
        int64_t alive_ms;              /* the state topic last known to exist:
                                  a committed transaction, or a look
                                  (audit_group_watch()) */
        char err[1024];
};

/* A 'truncated' event for the events topic, written by the transaction
 * that carries the part's rewound state record. */
struct audit_group_trunc {
        uint32_t part;
        char *json; /* owned */
};

#define GERR(g, ...) snprintf((g)->err, sizeof((g)->err), __VA_ARGS__)

/* Records the group's first fatal error (one line, logged): the loop
 * stops at audit_group_failed(). */
void audit_group_fail(struct audit *a, const char *what, const char *why);

/* group.c: audit_mode_group's operations (../audit/mode.h says when
 * each runs): _conf, _start, _commit (before_commit), _consume, _failed,
 * _close, _free. */
int audit_group_conf(struct audit *a, rd_kafka_conf_t *kconf, char *errstr,
                     size_t errstr_size);
int audit_group_start(struct audit *a, char *errstr, size_t errstr_size);
int audit_group_commit(struct audit *a, char *errstr, size_t errstr_size);
/* The next batch of the consumer, one rd_kafka_consume_batch_queue()
 * (after the ids consumer's poll; the consumer's fatal error ends it). */
ssize_t audit_group_consume(struct audit *a, int timeout_ms,
                            rd_kafka_message_t **msgs, size_t max);
int audit_group_failed(const struct audit *a, char *errstr,
                       size_t errstr_size);
/* group_state.c: an idle member's look at its state topic, once per
 * commit interval: one deleted stops it (audit_group_failed()). */
void audit_group_watch(struct audit *a, int64_t now);
/* Before the consumer is closed: closes the ids topic's consumer (its
 * last revocation commits). */
void audit_group_close(struct audit *a);
void audit_group_free(struct audit *a);
/* group_view.c: stops the group view's thread (the members for
 * /api/v1/group and the group's figures, on a thread of its own); before
 * the consumer is closed.  A no-op without one. */
void audit_group_view_stop(struct audit *a);
/* group_ids.c: after the engine's verdict v on a record of lp (owned),
 * notes its id for the ids topic. */
void audit_group_ids_note(struct audit *a, const struct ledger_part *lp,
                          int64_t offset, const struct dedup_hdrs *h,
                          enum dedup_verdict v);

/* The end of both consumers' rebalance callbacks: takes l (assign) or
 * gives it back, incrementally (both are cooperative-sticky); a refused
 * assignment is audit_group_fail(a, what, ...), a refused unassignment
 * a warning. */
void audit_group_rebalance_apply(struct audit *a, rd_kafka_t *rk,
                                 rd_kafka_topic_partition_list_t *l,
                                 int assign, const char *what);
/* Both consumers' revocations: commits what is given up (the loop's
 * commit, handed to audit_mode_group.start), unless the assignment was
 * lost or the group failed; a failure is a warning ending with then. */
void audit_group_commit_revoked(struct audit *a, rd_kafka_t *rk,
                                const char *then);

/* group_view.c: the group view's thread (the member listing and the
 * group's figures), started at the end of audit_group_start() when there
 * is a status to publish to (0, or -1 with errstr); relist asks it to
 * list the members soon (a rebalance); stop joins it (before the
 * consumer is closed: the thread asks it its member id) and is a no-op
 * when it is not running. */
int audit_group_view_start(struct audit *a, char *errstr, size_t errstr_size);
void audit_group_view_relist(struct audit *a);

/* group_state.c: the state topic. */

/* Topic name exists with cleanup.policy policy ("compact" for the
 * state, "delete" for the events) and one partition, or is created so,
 * unless nocreate says why it must not be (then a missing topic is an
 * error that says so).  Returns 0, or -1 with errstr. */
int audit_group_topic(struct audit *a, const char *name, const char *policy,
                      const char *what, const char *nocreate, char *errstr,
                      size_t errstr_size);

/* The same with partitions partitions when it is created (the ids
 * topic); an existing topic keeps its count. */
int audit_group_topic_n(struct audit *a, const char *name, const char *policy,
                        const char *what, const char *nocreate, int partitions,
                        char *errstr, size_t errstr_size);

/* The partition count of topic name (what: "ids", ...) into *n, from
 * rk's metadata, asked again every GROUP_META_STEP_MS while a topic just
 * created is unknown or leaderless, up to timeout_ms in all.  0, or -1
 * with errstr. */
int audit_group_partitions(rd_kafka_t *rk, const char *name, const char *what,
                           int timeout_ms, int32_t *n, char *errstr,
                           size_t errstr_size);

/* The last committed state record of each part of want[0..n) into
 * vals[] (malloc'd; NULL: none).  Returns 0, or -1 with errstr. */
int audit_group_state_read(struct audit *a, const uint32_t *want, size_t n,
                           char **vals, size_t *lens, char *errstr,
                           size_t errstr_size);

/* The group's committed offsets of l's partitions into l (< 0: none).
 * Returns 0, or -1 with errstr. */
int audit_group_committed(struct audit *a, rd_kafka_topic_partition_list_t *l,
                          char *errstr, size_t errstr_size);

/* 1 when the cluster's metadata says the state topic does not exist
 * (0 too when that cannot be told). */
int audit_group_state_gone(struct audit *a);
/* group_state.c: 1 when the metadata says topic does not exist
 * (UNKNOWN_TOPIC_OR_PART), else 0 (also when it cannot be told). */
int audit_group_topic_gone(struct audit *a, const char *topic);

/* audit_group_fail() with the one line of a state topic deleted under
 * the running group. */
void audit_group_fail_gone(struct audit *a);

/* group_ids.c: redeliveries across members through the ids topic,
 * whose partitions are shared through a second consumer group,
 * GROUP-ids (its own consumer g->ids_rk), so that each member's share of
 * the audited partitions is balanced apart from its share of the ids
 * topic's.  _conf() from audit_group_conf() (takes the id window away
 * from the engine), _start() from audit_group_start() (the topic, then
 * the consumer: base is the group's consumer settings, rebalance_cb the
 * ids consumer's, served by _poll()), _forget() in the main rebalance
 * callback (drops the unsent ids records of parts no longer owned),
 * _poll() from audit_group_consume() (the ids consumer served without
 * blocking: its rebalances and messages, judged; returns how many),
 * _pending(), _txn() (its records, and the judges' positions into offs:
 * offsets of GROUP-ids) and _done() around each transaction, _close()
 * before the main consumer is closed (its last revocation commits). */
struct audit_group_ids;
int audit_group_ids_conf(struct audit *a, char *errstr, size_t errstr_size);
int audit_group_ids_start(struct audit *a, char *errstr, size_t errstr_size);
void audit_group_ids_forget(struct audit *a,
                            const rd_kafka_topic_partition_list_t *l);
int audit_group_ids_poll(struct audit *a, int max);
int audit_group_ids_pending(const struct audit *a);
int audit_group_ids_txn(struct audit *a, rd_kafka_topic_partition_list_t *offs,
                        char *errstr, size_t errstr_size);
void audit_group_ids_done(struct audit *a);
void audit_group_ids_close(struct audit *a);
void audit_group_ids_free(struct audit *a);

/* group.c: a handle of type from the group's consumer settings plus
 * props (pairs, NULL-ended), with rebalance_cb (NULL: none) set. */
rd_kafka_t *audit_group_handle(
    struct audit *a, rd_kafka_type_t type, const char *const *props,
    void (*rebalance_cb)(rd_kafka_t *, rd_kafka_resp_err_t,
                         rd_kafka_topic_partition_list_t *, void *),
    char *errstr, size_t errstr_size);

/* group.c: a consumer's fatal error (rk: either consumer), one line. */
void audit_group_consumer_fatal(struct audit *a, rd_kafka_t *rk);

#endif
