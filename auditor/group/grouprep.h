/*
 * grouprep.h - serve --group: the whole group's figures, aggregated from
 * the group's state topic (one record per audited partition, key
 * "topic/partition", the format of partstate.h) and events topic (one
 * JSON anomaly event per record, auditor/audit/group.c), for the
 * group-wide answers of /api/v1/summary, /api/v1/anomalies and /metrics.
 *
 * Two halves:
 *  - struct grouprep, the aggregation: fed record by record by the group
 *    view's thread (auditor/audit/group_view.c), the only thread that
 *    touches it.  Pure: no I/O, no clock, no librdkafka.  The last record
 *    of each key wins (a NULL value, a compaction tombstone, removes the
 *    key); a record that does not parse is counted and skipped, never
 *    trusted in part.  A state record is read boundedly: only its "v",
 *    "topic", "partition", "next_offset" and "counts" are parsed (with
 *    jansson, each value alone); its "pairs" are skipped by a scanner
 *    that only counts them and allocates nothing.
 *  - struct grouprep_snap, an immutable copy made by grouprep_snap_make()
 *    and published for HTTP threads (status.h: status_grouprep_publish,
 *    status_grouprep_get).  Reference-counted: readers hold a reference
 *    for one request and drop it with grouprep_snap_put(); nothing in it
 *    changes after it is made.
 *
 * What the figures mean: each partition's counters as of the last
 * committed transaction of its owner (the topics are read
 * read_committed), so they lag a member's own live view by up to the
 * owner's commit interval; events as far back as the events topic's
 * retention, the newest GROUPREP_EVENTS_MAX kept for listing.
 */
#ifndef EOSAUDIT_GROUPREP_H
#define EOSAUDIT_GROUPREP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../../dedup/dedup.h"

#define GROUPREP_EVENTS_MAX 1000
/* A "counts" object larger than this is not one partstate.c wrote. */
#define GROUPREP_COUNTS_MAX 4096
/* An event record larger than this is not one group.c wrote. */
#define GROUPREP_EVENT_MAX 16384

/* One partition's counters, as its state record carries them. */
struct grouprep_counts {
        uint64_t records, untracked, missing, recovered, unknown, ids;
        uint64_t anomalies[DEDUP_KIND__ANOMALY_CNT];
        /* From the events topic's 'truncated' events (grouprep_snap_sum()
         * only; a state record carries the rewound counts, not these). */
        uint64_t truncations, truncated_records;
};

/* What an audited partition's figures take from the events topic, not
 * from its state record: the redelivered records the ids topic's judges
 * found (the owners count none, in group mode), and the truncations its
 * owners took back. */
struct grouprep_evcounts {
        uint64_t redelivered, truncations, truncated_records;
};

/* The last state record of one audited partition. */
struct grouprep_part {
        char *topic; /* owned */
        int32_t partition;
        int64_t next_offset;
        uint64_t pairs; /* (partition, producer) pairs it tracks */
        struct grouprep_counts c;
        int64_t high_watermark; /* in a snapshot: its expected entry's,
                                   -1 unknown (not expected, not asked) */
};

/* One anomaly event of the events topic: the fields of
 * report_anomaly_json() (the one evidence format), "member", and for a
 * redelivery judged through the ids topic "first_topic".  Events topics
 * written by earlier versions are read too: "when_ms" for "detected_ms",
 * and a producer as {"hex": ...} (the ids topic's verdicts). */
struct grouprep_event {
        int64_t offset; /* in the events topic: the event's id */
        int32_t events_partition;
        char *topic; /* owned */
        int32_t partition;
        char kind[24];  /* dedup_kind_name(), or "truncated" */
        char *producer; /* owned, producer_len bytes; NULL unknown */
        size_t producer_len;
        int32_t epoch; /* -1 unknown */
        int64_t seq_lo, seq_hi, offset_lo, offset_hi, first_offset;
        int32_t first_partition; /* -1 unknown */
        int64_t first_offset_hi; /* -1 unknown */
        char *first_topic;       /* owned; NULL: topic's */
        char *msgid;             /* owned, msgid_stored bytes; NULL: none */
        size_t msgid_stored;
        int64_t msgid_len; /* the whole id's length; -1: none */
        char *reason;      /* owned; NULL: none */
        char *detail;      /* owned, a 'truncated' event's JSON object
                              (schema/0014_truncation.sql); NULL: none */
        uint64_t count;
        int64_t when_ms; /* detected */
        char *member;    /* owned: the transactional.id that wrote it */
};

/* An audited partition (expected) with no state record yet. */
struct grouprep_tp {
        char *topic; /* owned */
        int32_t partition;
};

struct grouprep_snap {
        atomic_uint refs;
        int64_t made_ms;
        uint64_t state_records;   /* state records read (every version) */
        uint64_t state_malformed; /* of them, skipped: did not parse */
        uint64_t events_read;
        uint64_t events_malformed;
        struct grouprep_part *parts; /* by topic then partition */
        size_t nparts;
        struct grouprep_tp *unstated; /* expected, no state record */
        size_t nunstated;
        struct grouprep_event *events; /* the newest, oldest first */
        size_t nevents;
        /* The audited partitions (grouprep_expect order; their high
         * watermarks are on their parts). */
        struct grouprep_tp *expected;
        /* Parallel to expected: what the events topic counts of each
         * (grouprep_snap_sum() adds it). */
        struct grouprep_evcounts *evc;
        size_t nexpected;
        char error[256]; /* the reader's last error, or "" */
};

struct grouprep;

/* ring: how many events to keep (1..GROUPREP_EVENTS_MAX).  NULL on OOM. */
struct grouprep *grouprep_new(size_t ring);
void grouprep_free(struct grouprep *g);

/* An audited partition (so that one without state is reported).  0, or
 * -1 on OOM. */
int grouprep_expect(struct grouprep *g, const char *topic, int32_t partition);

/* A state record: key[0..klen) "topic/partition", val[0..len) (NULL: a
 * tombstone, the key is removed).  Returns 0 taken, 1 malformed
 * (counted and skipped, nothing changed), -1 on OOM. */
int grouprep_state(struct grouprep *g, const void *key, size_t klen,
                   const void *val, size_t len);

/* An event record at offset of the events topic's partition.  0, 1
 * malformed (counted, skipped), -1 OOM. */
int grouprep_event(struct grouprep *g, int32_t partition, int64_t offset,
                   const void *val, size_t len);

/* The high watermark of an expected partition (-1 unknown); ignored for
 * one not expected. */
void grouprep_high_watermark(struct grouprep *g, const char *topic,
                             int32_t partition, int64_t hw);

/* The reader's last error ("" none), shown with the figures. */
void grouprep_error(struct grouprep *g, const char *line);

/* A new immutable snapshot (one reference), or NULL on OOM. */
struct grouprep_snap *grouprep_snap_make(const struct grouprep *g,
                                         int64_t now_ms);
/* Another reference to s (NULL stays NULL). */
struct grouprep_snap *grouprep_snap_ref(struct grouprep_snap *s);
/* Drops a reference; the last one frees it.  NULL is a no-op. */
void grouprep_snap_put(struct grouprep_snap *s);

/* s published for HTTP threads in st (its reference taken; the previous
 * snapshot's dropped), and a reference to the one published (NULL: none
 * yet, or st NULL), for the caller to drop with grouprep_snap_put().
 * Through status.h's snapshot slot. */
struct status;
void status_grouprep_publish(struct status *st, struct grouprep_snap *s);
struct grouprep_snap *status_grouprep_get(struct status *st);

/* Sums of the partitions of topic (NULL: all) in s into *out, and how
 * many partitions had state; the lag (high watermark minus next offset,
 * summed over the partitions known both ways, -1 when none is) into
 * *lag when not NULL. */
size_t grouprep_snap_sum(const struct grouprep_snap *s, const char *topic,
                         struct grouprep_counts *out, uint64_t *pairs,
                         int64_t *lag);

#endif /* EOSAUDIT_GROUPREP_H */
