/*
 * flow_internal.h - what the flow engine's files share; not part of its
 * API (flow.h is).
 *
 *   flow_names.c  expectations and outcomes to and from their text
 *   flow_spill.c  the retired entries: the list awaiting persistence, its
 *                 id table, and finding a retired entry on a miss (the
 *                 list, then dedup_flow_set_lookup's store)
 *   flow_pack.c   an entry's fields packed into 32-bit deltas from the
 *                 flow's bases, the wide records of those that do not
 *                 fit, the bases moved when new values outgrow them, and
 *                 the id bytes' arena
 *   flow.c        the entries' ring, lists, hash table, outcomes and
 *                 counters, revival of what flow_spill.c found, the API
 *                 but for the retired entries
 *
 * Each file calls only those listed before it.
 *
 * Memory per live entry (the issue-35 layout): a 40-byte struct flow_ent,
 * its share of the hash table (4-byte slots, at most half full: 8 to 16
 * bytes), and its id in the arena: 1 byte and the id's bytes when it is
 * DEDUP_FLOW_ID_KEEP bytes or shorter (the 128-bit id is their hash,
 * computed again when wanted), else 21 bytes more (its length and its
 * 128-bit id) and the KEEP bytes kept.
 * An entry whose fields do not fit the narrow layout (an offset more than
 * 2^32 from its part's base, a time more than 24 days from the flow's, a
 * second copy elsewhere than the first, ...) keeps them in a wide record
 * (struct flow_rec, 72 bytes) in a pool beside the ring: exact, only
 * bigger.
 */
#ifndef EOSAUDIT_DEDUP_FLOW_INTERNAL_H
#define EOSAUDIT_DEDUP_FLOW_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
#define F_WIDE 0x200u  /* fields in fl->wide[src_off] (flow_pack.c) */
#define F_GONE 0x400u  /* its source record was truncated away uncopied */

/* An entry's fields, unpacked: what flow.c reads and writes. */
struct flow_rec {
        int64_t src_offset, src_ts; /* -1, 0: none */
        int64_t sink_offset, sink_offset_last, sink_ts;
        uint64_t seq, born;
        uint32_t src_part, sink_part, sink_part_last; /* UINT32_MAX: none */
        uint32_t copies;
};

/* One live entry, packed (flow_pack.c).  4-byte aligned, 40 bytes.  The
 * narrow fields are deltas from the flow's bases (struct flow_bases).
 * x holds the source side (offset, time), y the sink side, but for a
 * queued entry, whose other side is empty: a source record waiting in
 * its part list keeps its list links in y, a sink-only one waiting in
 * the awaiting list in x (flow_links()).  With F_WIDE, seq is the index
 * of its wide record and the narrow fields but lo32, idpos, flags and
 * the links mean nothing. */
struct flow_ent {
        uint32_t lo32;      /* the id's low 32 bits: its home slot */
        uint32_t seq, born; /* - bases.seq, bases.born */
        uint32_t idpos;     /* its id in the arena */
        uint16_t flags, copies;
        uint16_t src_part, sink_part; /* UINT16_MAX: none */
        uint32_t x[2];                /* src offset - its part's base
                                  * (UINT32_MAX: -1), src time - bases.ts
                                  * (INT32_MIN: 0); or links */
        uint32_t y[2];                /* the same of the first sink copy; or
                                  * links */
};

struct flow_list {
        uint32_t head, tail;
};

/* Where the narrow deltas count from; moved (every entry repacked) when a
 * new value outgrows them.  An offset base per part and side. */
struct flow_bases {
        uint64_t seq, born;
        int64_t ts;
        int seq_set, born_set, ts_set;
        int64_t *src_off, *sink_off; /* per part; -1: not set */
        uint32_t nsrc_off, nsink_off;
};

struct dedup_flow {
        struct dedup_flow_config conf;
        /* The live entries, a ring in arrival order: the oldest at head;
         * retired from the head, new and revived ones at the tail. */
        struct flow_ent *ents;
        uint32_t cap_ents, head;
        uint32_t *slots; /* index + 1; 0: empty */
        size_t nslots;   /* power of two */
        uint64_t live;
        struct flow_list awaiting;
        struct flow_list *plists; /* per source part */
        int64_t *frontier;        /* per source part; -1: none */
        uint32_t nparts;
        struct dedup_flow_counts cur; /* of live entries */
        struct dedup_flow_state st;
        uint32_t *dirty;
        size_t ndirty, cap_dirty;
        /* flow_pack.c: bases, wide records, the ids' arena */
        struct flow_bases bases;
        struct flow_rec *wide;
        uint32_t nwide, cap_wide, wide_free, wide_live;
        /* The arena: a byte ring parallel to the entries' ring, one record
         * per live entry in the same order; arena_head is the oldest's
         * idpos.  When wrapped, the records run from arena_head to
         * arena_end, then from 0 to arena_tail. */
        unsigned char *arena;
        uint32_t arena_cap, arena_head, arena_tail, arena_end;
        int arena_wrapped;
        /* flow_spill.c */
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

/* Where e's list links are while it is queued (F_QUEUED): [0] prev,
 * [1] next. */
static inline uint32_t *dedup_flow_links(struct flow_ent *e)
{
        return (e->flags & F_SRC) ? e->y : e->x;
}

/* The index after i in the ring. */
static inline uint32_t dedup_flow_next(const struct dedup_flow *fl, uint32_t i)
{
        return i + 1 == fl->cap_ents ? 0 : i + 1;
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
/* Adds (sign +1) or takes (-1) a retired view's contribution to the
 * retired counters, by the outcome stored in it. */
void dedup_flow_spill_count(struct dedup_flow *fl,
                            const struct dedup_flow_view *v, int sign);
/* Index + 1 of id's latest view in the retired list; 0: not there. */
size_t dedup_flow_spill_at(const struct dedup_flow *fl,
                           const struct dedup_id *id);

/* flow_pack.c */
/* Entry i's fields. */
void dedup_flow_unpack(const struct dedup_flow *fl, uint32_t i,
                       struct flow_rec *r);
/* Stores r as entry i's fields: narrow when they fit (the bases moved
 * first when a value outgrew them), else wide.  0, or -1 when out of
 * memory (fl->failed). */
int dedup_flow_pack(struct dedup_flow *fl, uint32_t i,
                    const struct flow_rec *r);
/* Entry i leaves the ring: its wide record, if any, is freed. */
void dedup_flow_pack_drop(struct dedup_flow *fl, uint32_t i);
/* What flow.c reads on its hot paths without a whole unpack. */
int64_t dedup_flow_src_offset(const struct dedup_flow *fl, uint32_t i);
uint32_t dedup_flow_src_part(const struct dedup_flow *fl, uint32_t i);
/* Room for a source part's offset base (with the part lists'). */
int dedup_flow_pack_parts(struct dedup_flow *fl, uint32_t nparts);
/* Stores the id of the new youngest entry i: id, and min(id_len, KEEP)
 * bytes of idb (hashed is 1 when id is their hash); 0, or -1 when out of
 * memory. */
int dedup_flow_arena_put(struct dedup_flow *fl, uint32_t i,
                         const struct dedup_id *id, const void *idb,
                         size_t id_len, int hashed);
/* Entry i's id: its whole length, the id into *id and up to KEEP bytes
 * into out. */
size_t dedup_flow_arena_get(const struct dedup_flow *fl, uint32_t i,
                            struct dedup_id *id,
                            unsigned char out[DEDUP_FLOW_ID_KEEP]);
/* Whether entry i's id is id (idb, id_len: its bytes, or NULL). */
int dedup_flow_arena_is(const struct dedup_flow *fl, uint32_t i,
                        const struct dedup_id *id, const void *idb,
                        size_t id_len);
/* Empties the side of entry i that held its links (it leaves its list). */
void dedup_flow_pack_unqueued(struct dedup_flow *fl, uint32_t i);
/* The oldest entry left the ring (fl->head already moved on). */
void dedup_flow_arena_pop(struct dedup_flow *fl);
void dedup_flow_pack_free(struct dedup_flow *fl);
size_t dedup_flow_pack_memory(const struct dedup_flow *fl);

#endif /* EOSAUDIT_DEDUP_FLOW_INTERNAL_H */
