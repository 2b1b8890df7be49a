/*
 * group_ids.h - serve --group: redeliveries across members, through the
 * ids topic eosaudit-GROUP-ids (the Kafka Streams repartition pattern;
 * docs/GROUP.md).
 *
 * In group mode the tracker has no id window (audit_group_ids_conf():
 * window.max_ids is taken away from the engine before the tracker is
 * made), so the local engine never says redelivered.  Instead:
 *
 *   - The owner of an audited partition notes, for each record whose id
 *     the audit takes (an id, and a sequence verdict other than
 *     duplicate or fenced: exactly the records the single process's
 *     window checks, so an in-session repeat stays what its sequence
 *     says and is never also a redelivery), one small binary entry (the
 *     id's 128-bit hash, topic, partition, offset, timestamp, producer,
 *     epoch, seq) for ids partition k = hash mod N.  In the member's next
 *     transaction, with its state records and offsets, the entries of
 *     each k are packed, in the order noted, into records of up to
 *     GIDS_PACK_MAX_ENTRIES entries (group_ids_window.h): librdkafka's
 *     costs are per message, and a record per id cost more than the audit
 *     itself.
 *   - The ids topic's partitions are owned through a second consumer
 *     group, GROUP-ids (a second consumer per member, cooperative-sticky
 *     too, group.instance.id suffixed "-ids"): each topic set is balanced
 *     on its own, so that no member holds only ids partitions and audits
 *     nothing.  The owner of ids
 *     partition k judges every id hashing to k, entry by entry in
 *     (record offset, index in the record) order: an entry whose id (same
 *     topic) is among the last W entries of partition k before it, and
 *     not older than --id-window-age-ms by record time, is redelivered,
 *     the evidence naming both copies (the latest earlier one as first_*,
 *     ids_offset the offset of the record holding the entry).
 *     Its verdicts go to the events topic, and its position on k to
 *     GROUP-ids' offsets, in its next transaction (the member's one
 *     transaction sends the offsets of both groups, each with its
 *     consumer's group metadata).  W = ceil(--id-window /
 *     N) times the number of audited topics: about the single process's
 *     window, spread over the N partitions.  W counts entries, not
 *     offsets: a record holds up to GIDS_PACK_MAX_ENTRIES of them.
 *   - On assignment of k its window is rebuilt by reading k (read
 *     committed) from max(log start, committed - span) to the committed
 *     offset without verdicts, span growing until the read held >= W
 *     entries or began at the log start (ids_assign(): transaction
 *     markers and aborted records take offsets too, so no span fixed
 *     beforehand is sure to), then judging goes on from the committed
 *     offset.
 *
 * Exactly once, across kill -9 and rebalances: a verdict is a function
 * of ids partition k's committed records alone.  The entries judged
 * before it are the committed records' entries in (offset, index) order
 * (read_committed; a pack is judged whole, and a judge's position is
 * always a record boundary), and the window is the last W of them.  A
 * read from c' < c that held >= W entries before c leaves the last W
 * entries before c, the live window's (one that had to begin at the log
 * start differs only if retention deleted entries the live window still
 * held: the ids topic's retention must stay well above W entries).  So
 * a rebuilt window equals the live one, and the match rule
 * picks the latest earlier copy, which both have.  The ids records of
 * an audited batch commit with the offsets of that batch, or not at
 * all: a batch audited again by a partition's next owner writes them
 * again, and the aborted first copies are never read (read_committed).
 * A judge's verdicts commit with its position on k, or not at all: its
 * successor rebuilds the window up to that position and judges the same
 * records again, to the same verdicts.  So each redelivered record is
 * one event on the events topic, across the group.
 *
 * Which copy is the redelivery: the one whose ids record comes later on
 * k, that is, whose owner committed it later (within one member, the
 * order read, like the single process).
 *
 * The files, by job (each calls only those before it):
 *   group_ids_pack.c   the owner's side: ids entries noted, then packed
 *                      and produced in the member's transaction with the
 *                      verdicts and the judges' positions
 *   group_ids_judge.c  the judges: an ids record judged, a window rebuilt
 *                      on assignment
 *   group_ids.c        its consumer: the ids group's rebalances, polls,
 *                      close, setup
 */
#ifndef EOSAUDIT_GROUP_IDS_H
#define EOSAUDIT_GROUP_IDS_H

#include <stddef.h>
#include <stdint.h>

#include "group_ids_window.h"
#include "internal.h"

#define IDS_DEFAULT_PARTITIONS 12

/* A judge: ids partition k, owned. */
struct ids_judge {
        int owned;
        int64_t next; /* next offset of k to judge (-1: from its start) */
        int64_t sent; /* the position committed last */
        struct gids_window *w; /* NULL until its first record */
};

/* A record to produce in the next transaction (for ids: an entry, packed
 * by audit_group_ids_txn()). */
struct ids_out {
        uint32_t part;   /* the audited part (ids entries) */
        int32_t k;       /* ids partition (verdicts: the judge's) */
        size_t off, len; /* in the arena */
};

struct audit_group_ids {
        char *topic;
        int32_t nparts;  /* the ids topic's partitions */
        uint64_t window; /* W: entries of k a judge remembers */
        int64_t max_age_ms;
        struct ids_judge *j; /* nparts */
        /* The packs being filled, one per ids partition (nparts): only
         * inside audit_group_ids_txn(), their buffers kept between
         * transactions. */
        struct gids_pack *packs;
        /* Pending: ids entries (recs) and verdicts (evs), their bytes in
         * one arena each.  The entries stay apart until the transaction
         * (not packed at once) so that audit_group_ids_forget() can drop
         * those of a revoked audited partition. */
        struct ids_out *recs, *evs;
        size_t nrecs, caprecs, nevs, capevs;
        unsigned char *arena, *earena;
        size_t alen, acap, elen, ecap;
        /* Written (committed): records, entries, bytes; judged entries.
         * txn_*: what the open transaction holds. */
        uint64_t produced, entries, bytes, judged, verdicts;
        uint64_t txn_recs, txn_entries, txn_bytes;
        int closing; /* inside audit_group_ids_close() */
};

/* group_ids_pack.c: the ids topic deleted under the running member (the
 * member stops with one line); appends one record's bytes to a pending list (its
 * arena grown); 0, or -1 out of memory. */
void group_ids_topic_gone(struct audit *a);
int group_ids_push(struct ids_out **v, size_t *n, size_t *cap,
                   unsigned char **arena, size_t *alen, size_t *acap,
                   uint32_t part, int32_t k, const void *bytes, size_t len);

/* group_ids_judge.c: a judge emptied; one message of the ids consumer
 * judged and destroyed; the judges of l assigned, their windows rebuilt
 * (0, or -1 with errstr). */
void group_ids_judge_clear(struct ids_judge *j);
void group_ids_message(struct audit *a, rd_kafka_message_t *m);
int group_ids_assign(struct audit *a, rd_kafka_topic_partition_list_t *l,
                     char *errstr, size_t errstr_size);

#endif /* EOSAUDIT_GROUP_IDS_H */
