/*
 * flow_internal.h - what the flow engine's files share; not part of its
 * API (flow.h is).
 *
 *   flow_names.c  expectations and outcomes to and from their text
 *   flow_spill.c  the retired entries: the list awaiting persistence, its
 *                 id table, and finding a retired entry on a miss (the
 *                 list, then dedup_flow_set_lookup's store)
 *   flow.c        entries, lists, hash table, outcomes and counters,
 *                 revival of what flow_spill.c found, the API but for the
 *                 retired entries
 *
 * Each file calls only those listed before it.
 */
#ifndef EOSAUDIT_DEDUP_FLOW_INTERNAL_H
#define EOSAUDIT_DEDUP_FLOW_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "flow.h"

#define NIL UINT32_MAX

#define F_LIVE 0x01u
#define F_SRC 0x02u
#define F_DUE 0x04u
#define F_AGED 0x08u
#define F_DIRTY 0x10u
#define F_LAT 0x20u
#define F_QUEUED 0x40u /* in a part list or the awaiting list */
#define F_PRIOR 0x80u  /* delivered to a sink incarnation since retired */
#define F_EVID 0x100u  /* persisted lost, duplicated or unexpected */

struct flow_ent {
        struct dedup_id id;
        int64_t src_offset, src_ts;
        int64_t sink_offset, sink_offset_last, sink_ts;
        uint64_t seq, born;
        uint32_t src_part, sink_part, sink_part_last, copies;
        uint32_t aprev, anext; /* age list; anext: free list when dead */
        uint32_t qprev, qnext; /* part list or awaiting list */
        uint32_t id_len;
        unsigned flags;
        unsigned char id_bytes[DEDUP_FLOW_ID_KEEP];
};

struct flow_list {
        uint32_t head, tail;
};

struct dedup_flow {
        struct dedup_flow_config conf;
        struct flow_ent *ents;
        uint32_t nents, cap_ents, free_head;
        uint32_t *slots; /* index + 1; 0: empty */
        size_t nslots;   /* power of two */
        uint64_t live;
        struct flow_list age, awaiting;
        struct flow_list *plists; /* per source part */
        int64_t *frontier;        /* per source part; -1: none */
        uint32_t nparts;
        struct dedup_flow_counts cur; /* of live entries */
        struct dedup_flow_state st;
        uint32_t *dirty;
        size_t ndirty, cap_dirty;
        struct dedup_flow_view *retired;
        size_t nretired, cap_retired;
        /* The retired list's ids: index + 1 of an id's latest view; 0:
         * empty.  Emptied with the list (dedup_flow_dirty_clear). */
        uint32_t *rslots;
        size_t nrslots; /* power of two, >= 2 * cap_retired */
        dedup_flow_lookup_cb *lookup;
        void *lookup_opaque;
        int failed;
};

static inline int dedup_flow_id_eq(const struct dedup_id *a,
                                   const struct dedup_id *b)
{
        return a->lo == b->lo && a->hi == b->hi;
}

/* flow_spill.c */
/* Appends v, the view of an entry just retired, to the retired list
 * (fl->failed when out of memory). */
void dedup_flow_spill_push(struct dedup_flow *fl,
                           const struct dedup_flow_view *v);
/* A miss on id: was it retired?  The retired list (not yet persisted)
 * first, then the caller's store (dedup_flow_set_lookup).  1 with its
 * view in *v, 0 when not, -1 when the store failed (fl->failed). */
int dedup_flow_spill_find(struct dedup_flow *fl, const struct dedup_id *id,
                          struct dedup_flow_view *v);
/* v, found by dedup_flow_spill_find(), is live again: no longer counted
 * retired. */
void dedup_flow_spill_revived(struct dedup_flow *fl,
                              const struct dedup_flow_view *v);
/* Empties the retired list (persisted). */
void dedup_flow_spill_clear(struct dedup_flow *fl);

#endif /* EOSAUDIT_DEDUP_FLOW_INTERNAL_H */
