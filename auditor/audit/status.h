/*
 * status.h - the live figures of a running audit that the ledger does not
 * hold (lag, readiness, latency histograms), handed from the consumer
 * thread to HTTP threads under a lock.
 *
 * Invariants
 *  - The consumer thread is the only writer: it fills a struct status_view
 *    of its own and publishes a copy with status_publish().
 *  - Readers get a private deep copy with status_read(); nothing they hold
 *    points into the consumer's memory.
 *  - Histograms count since process start (Prometheus handles resets);
 *    counters that must survive a restart come from the ledger instead.
 */
#ifndef EOSAUDIT_STATUS_H
#define EOSAUDIT_STATUS_H

#include <stddef.h>
#include <stdint.h>

/* Upper bounds (seconds) of the histogram buckets, +Inf implied. */
#define STATUS_LATENCY_BUCKETS 14
#define STATUS_COMMIT_BUCKETS 12
extern const double status_latency_bounds[STATUS_LATENCY_BUCKETS];
extern const double status_commit_bounds[STATUS_COMMIT_BUCKETS];

struct status_hist {
        uint64_t *counts; /* nbuckets + 1 (the last is +Inf), not cumulative */
        size_t nbuckets;
        const double *bounds;
        double sum; /* seconds */
        uint64_t count;
};

struct status_part {
        char *topic; /* owned by the view */
        int32_t partition;
        int64_t next_offset;    /* -1 unknown */
        int64_t high_watermark; /* -1 unknown */
        int owned; /* audited by this process now (--group: assigned to
                      this member; otherwise always 1) */
};

/* One partition of a group member's assignment. */
struct status_tp {
        char *topic; /* owned */
        int32_t partition;
};

/* A member of the consumer group as the broker describes it. */
struct status_member {
        char *member_id, *client_id, *client_host; /* owned */
        struct status_tp *parts; /* its assignment, as the broker has it */
        size_t nparts;
        int bad_assignment; /* its assignment bytes did not parse */
        int self;           /* this process */
};

/*
 * serve --group: who this member is and the group as the broker last
 * described it.  The listing is made by the group view's thread
 * (auditor/audit/group_view.c: rd_kafka_list_groups() on that thread's
 * own handle, every few seconds and soon after each rebalance), never by
 * the audit thread, and published with status_group_publish(); HTTP
 * threads read the copy and never call librdkafka.  What this member owns now is in the view's
 * parts (status_part.owned).
 */
struct status_group {
        char *group;            /* owned: --group */
        char *member;           /* owned: --group-member, or host name-pid */
        char *txn_id;           /* owned: the transactional.id */
        char *instance_id;      /* owned; NULL: dynamic membership */
        char *state, *protocol; /* owned; NULL: not listed */
        struct status_member *members;
        size_t nmembers;
        int64_t listed_ms; /* wall time of the listing; -1: none yet */
        char error[256];   /* the last listing's error, or "" */
};

struct status_topic {
        char *name;                 /* owned by the view */
        struct status_hist latency; /* record timestamp -> audit time */
};

struct status_view {
        int64_t started_ms;
        int64_t updated_ms;
        int ledger_open;
        int assigned;      /* partitions assigned to the consumer */
        int brokers_up;    /* number of brokers the client sees as UP */
        int ledger_paused; /* commits are failing; ingest is held */
        uint64_t records;  /* read in this process */
        uint64_t live_pairs;
        uint64_t live_open_gaps;
        struct status_hist commit; /* ledger commit duration */
        struct status_part *parts;
        size_t nparts;
        struct status_topic *topics;
        size_t ntopics;
        /* A flow with --processor-group: the sources' records above the
         * group's committed offsets at the last read of them (summed over
         * the source partitions; one with no committed offset counts its
         * whole readable log); -1 when unknown or no group. */
        int64_t flow_lag;
        /* Why the brokers refuse the audit (access.h), or "": set by
         * status_refusal_set(), cleared by the next status_publish(). */
        char refused[512];
        /* serve --group: NULL without. */
        struct status_group *group;
};

struct status;

struct status *status_new(void);
void status_free(struct status *st);

/* Initializes v for topics and parts (copying names); -1 on OOM. */
int status_view_init(struct status_view *v, const char *const *topics,
                     size_t ntopics, size_t nparts);
void status_view_release(struct status_view *v);

/* Adds one observation of seconds to h. */
void status_hist_observe(struct status_hist *h, double seconds);

/* Publishes a copy of v (the consumer thread).  -1 on OOM (the previous
 * copy stays). */
int status_publish(struct status *st, const struct status_view *v);

/* Publishes that the brokers refuse the audit, with the operator's line
 * (the first reason /readyz gives); the rest of the last view stays.
 * The consumer thread, between attempts. */
void status_refusal_set(struct status *st, const char *line);

/* Copies the last published view into *out (HTTP threads); the caller
 * releases it with status_view_release().  Returns 0, or -1 when nothing
 * was published yet or on OOM. */
int status_read(struct status *st, struct status_view *out);

/* ------------------------------------------------------------------ */
/* Reading a view (any thread; pure but for status_view_get())         */
/* ------------------------------------------------------------------ */

/* The last published view copied into *v, or NULL (v then zeroed) when st
 * is NULL (no audit runs in this process) or nothing was published yet.
 * Release a non-NULL result with status_view_release(v). */
struct status_view *status_view_get(struct status *st, struct status_view *v);

/* Why the audit is not ready: up to max (at least 1) reasons, static
 * strings or v->refused, into why[]; returns how many (0: ready).  v may be NULL
 * (nothing published yet).  Ready means the ledger is open,
 * partitions are assigned, a broker is up and commits succeed. */
size_t status_ready_reasons(const struct status_view *v, const char **why,
                            size_t max);

/* The lag of p (high watermark minus next offset, never negative), or -1
 * when either is unknown. */
int64_t status_part_lag(const struct status_part *p);

/* The sum of the known lags of topic's partitions in v (topic NULL: of
 * every partition), or -1 when none is known or v is NULL. */
int64_t status_topic_lag(const struct status_view *v, const char *topic);

/* ------------------------------------------------------------------ */
/* Group mode (status_group.c)                                         */
/* ------------------------------------------------------------------ */

/* A deep copy of g (NULL on OOM); status_group_free() releases it. */
struct status_group *status_group_copy(const struct status_group *g);
void status_group_free(struct status_group *g);
/* Releases what m holds (not m itself). */
void status_member_release(struct status_member *m);

/*
 * The member listing, published by the group view's thread (auditor/
 * audit/group_view.c), which alone lists the group: a copy is kept and
 * status_read() hands a copy of it as the view's group.  -1 on OOM (the
 * previous listing stays).
 */
int status_group_publish(struct status *st, const struct status_group *g);

/*
 * One reference-counted snapshot another thread publishes (the group's
 * figures: grouprep.h's status_grouprep_publish() and _get() wrap these).
 * status_snap_publish() takes snap's reference and drops the previous
 * snapshot's with the put it was published with (status_free() drops the
 * last); status_snap_get() returns ref(snapshot) taken under the lock
 * (NULL: none yet, or st NULL).
 */
void status_snap_publish(struct status *st, void *snap, void (*put)(void *));
void *status_snap_get(struct status *st, void *(*ref)(void *));

/*
 * Parses a member's assignment as the broker hands it back (the consumer
 * protocol's MemberAssignment, big-endian: int16 version, int32 count of
 * topics, each an int16-length topic name and an int32 count of int32
 * partitions; the user data after it is not read) into m->parts.  Every
 * length is checked against len: truncated or inconsistent bytes give -1
 * with errstr and leave m->parts empty.  len 0 (no assignment yet) is an
 * empty assignment.
 */
int status_assignment_parse(const void *buf, size_t len,
                            struct status_member *m, char *errstr,
                            size_t errstr_size);

#endif /* EOSAUDIT_STATUS_H */
