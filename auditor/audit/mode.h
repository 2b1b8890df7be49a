/*
 * mode.h - how the audited partitions are shared, as a table of
 * operations (as curl's struct Curl_handler): by this process alone
 * (audit_mode_single, mode.c) or by the members of a consumer group
 * (audit_mode_group, auditor/group/).  audit_new() takes the one
 * audit_conf names (NULL: single); the loop calls through it and never
 * asks which.  Every operation runs on the consumer's thread; a NULL
 * one is skipped.
 */
#ifndef EOSAUDIT_AUDIT_MODE_H
#define EOSAUDIT_AUDIT_MODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <librdkafka/rdkafka.h>

#include "../../dedup/dedup.h"

struct audit;
struct ledger_part;
struct ledger_anomaly;

/* The loop's commit, handed to the mode (its rebalance callbacks commit
 * what they give up from inside a poll): 0, or -1 (the batch stays). */
typedef int(audit_commit_fn)(struct audit *a, int64_t now);

struct audit_mode {
        const char *name;
        /* The consumer's settings, before its handle is made.  0, or -1
         * with errstr. */
        int (*conf)(struct audit *a, rd_kafka_conf_t *kconf, char *errstr,
                    size_t errstr_size);
        /* Once the ledger is loaded: the partitions positioned and
         * assigned, or the group joined (each positioned as it is
         * assigned).  A part is audited only while a->rt[part].owned.
         * 0, or -1 with errstr. */
        int (*start)(struct audit *a, audit_commit_fn *commit, char *errstr,
                     size_t errstr_size);
        /* Up to max messages within timeout_ms: how many, or -1. */
        ssize_t (*consume)(struct audit *a, int timeout_ms,
                           rd_kafka_message_t **msgs, size_t max);
        /* Before each ledger commit; -1 keeps the batch (errstr).  A mode
         * with one commits in line, never on the commit thread: what it
         * writes first must be written before the next poll. */
        int (*before_commit)(struct audit *a, char *errstr,
                             size_t errstr_size);
        /* After a ledger commit succeeded, at now. */
        void (*after_commit)(struct audit *a, int64_t now);
        /* After the engine's verdict v on the record at offset of lp
         * (before lp->next_offset moves past it). */
        void (*after_record)(struct audit *a, struct ledger_part *lp,
                             int64_t offset, const struct dedup_hdrs *h,
                             enum dedup_verdict v);
        /* A truncation of lp was taken back (trunc_unaudit.c, the one
         * handler): an is the 'truncated' anomaly the ledger's next commit
         * writes, lp already at the divergence point and its rewound
         * pairs dirty, so that the mode's own record of the partition
         * (--group: its state record and the events topic) carries it
         * from the same commit.  Strings are the caller's, valid during
         * the call.  0, or -1 with errstr (the loop stops). */
        int (*truncated)(struct audit *a, const struct ledger_part *lp,
                         const struct ledger_anomaly *an, char *errstr,
                         size_t errstr_size);
        /* Once a turn of the loop.  0, or -1 with errstr (fatal). */
        int (*tick)(struct audit *a, int64_t now, char *errstr,
                    size_t errstr_size);
        /* 1 with errstr when the mode failed for good (the loop stops). */
        int (*failed)(const struct audit *a, char *errstr, size_t errstr_size);
        /* The last batch's commit failed but the ledger did not: 1 when
         * that loses nothing (said why), 0 when it is an error. */
        int (*last_commit_lost)(struct audit *a);
        /* The run ended (its last batch committed or not). */
        void (*finish)(struct audit *a);
        /* audit_free(): stop before the consumer's queue goes, close
         * before the consumer closes, free after. */
        void (*stop)(struct audit *a);
        void (*close)(struct audit *a);
        void (*free)(struct audit *a);
};

extern const struct audit_mode audit_mode_single;

#endif /* EOSAUDIT_AUDIT_MODE_H */
