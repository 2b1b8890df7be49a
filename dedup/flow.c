/*
 * flow.c - lineage of a consume-transform-produce flow (see flow.h).
 *
 * Entries live in one ring, in arrival order (an entry leaves it only
 * when retired, and the oldest is retired first: the ring is the age
 * list), packed by flow_pack.c, found through an open-addressing hash
 * table of their 128-bit ids (linear probing, backward-shift deletion: no
 * tombstones; 4-byte slots holding a ring index, rebuilt from the ring
 * when the table or the ring grows).  Two kinds of list thread through
 * them, linked by ring index (UINT32_MAX = none):
 *   part     per source part, the source records still waiting for their
 *            first copy and not yet due, in offset order: what a frontier
 *            or the records' progress makes due
 *   awaiting sink-only entries not yet aged, in arrival order
 * The retired entries (the list awaiting persistence, revival on a miss)
 * are flow_spill.c's; what the two files share is flow_internal.h.
 */
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"

const int64_t dedup_flow_lat_bounds[DEDUP_FLOW_LAT_BUCKETS] = {
    1,    2,    5,     10,    20,    50,    100,    200,    500,    1000,
    2000, 5000, 10000, 20000, 30000, 60000, 120000, 300000, 600000, INT64_MAX};

void dedup_flow_config_defaults(struct dedup_flow_config *c)
{
        memset(c, 0, sizeof(*c));
        c->expect = DEDUP_FLOW_EXACTLY_ONE;
        c->max_ids = 1000000;
        c->due_records = 100000;
        c->due_ms = 60000;
}

/* ------------------------------------------------------------------ */
/* Lists                                                               */
/* ------------------------------------------------------------------ */

/* Queues entry i (its F_SRC set already: it says where its links go). */
static void q_push(struct dedup_flow *fl, struct flow_list *l, uint32_t i)
{
        struct flow_ent *e = &fl->ents[i];
        uint32_t *q;

        e->flags |= F_QUEUED;
        q = dedup_flow_links(e);
        q[1] = NIL;
        q[0] = l->tail;
        if (l->tail != NIL)
                dedup_flow_links(&fl->ents[l->tail])[1] = i;
        else
                l->head = i;
        l->tail = i;
}

static struct flow_list *q_of(struct dedup_flow *fl, const struct flow_ent *e)
{
        return (e->flags & F_SRC)
                   ? &fl->plists[dedup_flow_src_part(fl,
                                                     (uint32_t)(e - fl->ents))]
                   : &fl->awaiting;
}

static void q_unlink(struct dedup_flow *fl, uint32_t i)
{
        struct flow_ent *e = &fl->ents[i];
        struct flow_list *l;
        uint32_t *q;

        if (!(e->flags & F_QUEUED))
                return;
        l = q_of(fl, e);
        q = dedup_flow_links(e);
        if (q[0] != NIL)
                dedup_flow_links(&fl->ents[q[0]])[1] = q[1];
        else
                l->head = q[1];
        if (q[1] != NIL)
                dedup_flow_links(&fl->ents[q[1]])[0] = q[0];
        else
                l->tail = q[0];
        dedup_flow_pack_unqueued(fl, i);
        e->flags &= ~F_QUEUED;
}

/* ------------------------------------------------------------------ */
/* Hash table                                                          */
/* ------------------------------------------------------------------ */

static size_t h_home(const struct flow_ent *e, size_t mask)
{
        return (size_t)e->lo32 & mask;
}

/* The entry of id (idb, id_len: its bytes, or NULL), or NIL.  An entry
 * keeps 32 bits of its id: the rest is checked in the arena. */
static uint32_t h_find(const struct dedup_flow *fl, const struct dedup_id *id,
                       const void *idb, size_t id_len)
{
        size_t mask = fl->nslots - 1, s = (size_t)id->lo & mask;
        uint32_t lo32 = (uint32_t)id->lo;

        while (fl->slots[s]) {
                uint32_t i = fl->slots[s] - 1;
                if (fl->ents[i].lo32 == lo32 &&
                    dedup_flow_arena_is(fl, i, id, idb, id_len))
                        return i;
                s = (s + 1) & mask;
        }
        return NIL;
}

void dedup_flow_prefetch(const struct dedup_flow *fl,
                         const struct dedup_id *id, int stage)
{
        size_t s;
        uint32_t v;

        if (!fl->nslots)
                return;
        s = (size_t)id->lo & (fl->nslots - 1);
        if (!stage) {
                __builtin_prefetch(&fl->slots[s]);
                return;
        }
        v = fl->slots[s];
        if (!v)
                return;
        if (stage == 1)
                __builtin_prefetch(&fl->ents[v - 1]);
        else
                __builtin_prefetch(fl->arena + fl->ents[v - 1].idpos);
}

static void h_put(struct dedup_flow *fl, uint32_t i)
{
        size_t mask = fl->nslots - 1, s = h_home(&fl->ents[i], mask);

        while (fl->slots[s])
                s = (s + 1) & mask;
        fl->slots[s] = i + 1;
}

static void h_del(struct dedup_flow *fl, uint32_t i)
{
        size_t mask = fl->nslots - 1, s = h_home(&fl->ents[i], mask);
        size_t j, home;

        while (fl->slots[s] != i + 1)
                s = (s + 1) & mask;
        /* Backward shift: move later members of the run into the hole
         * when their home slot does not lie between the hole and them. */
        j = s;
        for (;;) {
                j = (j + 1) & mask;
                if (!fl->slots[j])
                        break;
                home = h_home(&fl->ents[fl->slots[j] - 1], mask);
                if (((j - home) & mask) >= ((j - s) & mask)) {
                        fl->slots[s] = fl->slots[j];
                        s = j;
                }
        }
        fl->slots[s] = 0;
}

/* The table at n slots, rebuilt from the ring (the old one freed first:
 * no two tables at once). */
static int h_rebuild(struct dedup_flow *fl, size_t n)
{
        uint64_t k;
        uint32_t i;

        free(fl->slots);
        fl->slots = calloc(n, sizeof(*fl->slots));
        fl->nslots = fl->slots ? n : 0;
        if (!fl->slots)
                return -1;
        for (k = 0, i = fl->head; k < fl->live;
             k++, i = dedup_flow_next(fl, i))
                h_put(fl, i);
        return 0;
}

/* ------------------------------------------------------------------ */
/* Outcomes and counters                                               */
/* ------------------------------------------------------------------ */

/* e's copies: narrow, or its wide record's. */
static uint32_t copies_of(const struct dedup_flow *fl,
                          const struct flow_ent *e)
{
        return (e->flags & F_WIDE) ? fl->wide[e->seq].copies : e->copies;
}

static enum dedup_flow_outcome outcome_of(const struct dedup_flow *fl,
                                          const struct flow_ent *e)
{
        uint32_t copies = copies_of(fl, e);

        if (!(e->flags & F_SRC))
                return (e->flags & F_AGED) ? DEDUP_FLOW_UNEXPECTED
                                           : DEDUP_FLOW_AWAITING;
        if (copies == 0) {
                if (e->flags & F_PRIOR)
                        return DEDUP_FLOW_DELIVERED;
                if (e->flags & (F_GONE) || !(e->flags & F_DUE))
                        return DEDUP_FLOW_PENDING;
                return fl->conf.expect == DEDUP_FLOW_AT_MOST_ONE
                           ? DEDUP_FLOW_DELIVERED
                           : DEDUP_FLOW_LOST;
        }
        if (copies == 1 || fl->conf.expect == DEDUP_FLOW_AT_LEAST_ONE)
                return DEDUP_FLOW_DELIVERED;
        return DEDUP_FLOW_DUPLICATED;
}

/* Adds (sign +1) or removes (-1) e's contribution to c. */
static void dedup_flow_acct(const struct dedup_flow *fl,
                            const struct flow_ent *e,
                            struct dedup_flow_counts *c, int sign)
{
        enum dedup_flow_outcome o = outcome_of(fl, e);
        uint32_t copies = copies_of(fl, e);
        uint64_t w = (e->flags & F_SRC) ? 1 : copies;
        uint64_t extra = o == DEDUP_FLOW_DUPLICATED ? copies - 1 : 0;

        if (sign > 0) {
                c->outcome[o] += w;
                c->duplicate_copies += extra;
        } else {
                c->outcome[o] -= w;
                c->duplicate_copies -= extra;
        }
}

static void touch(struct dedup_flow *fl, uint32_t i)
{
        struct flow_ent *e = &fl->ents[i];

        if (e->flags & F_DIRTY)
                return;
        if (fl->ndirty == fl->cap_dirty) {
                size_t n = fl->cap_dirty ? fl->cap_dirty * 2 : 256;
                uint32_t *d = realloc(fl->dirty, n * sizeof(*d));
                if (!d) {
                        fl->failed = 1;
                        return;
                }
                fl->dirty = d;
                fl->cap_dirty = n;
        }
        fl->dirty[fl->ndirty++] = i;
        e->flags |= F_DIRTY;
}

static void latency(struct dedup_flow *fl, struct flow_ent *e,
                    const struct flow_rec *r)
{
        int64_t l;
        unsigned b;

        if ((e->flags & F_LAT) || !(e->flags & F_SRC) || !r->copies)
                return;
        e->flags |= F_LAT;
        if (r->src_ts <= 0 || r->sink_ts <= 0)
                return;
        l = r->sink_ts - r->src_ts;
        if (l < 0)
                l = 0; /* clocks of two producers: no negative latency */
        for (b = 0; b < DEDUP_FLOW_LAT_BUCKETS - 1; b++)
                if (l <= dedup_flow_lat_bounds[b])
                        break;
        fl->st.lat[b]++;
        fl->st.lat_sum_ms += (uint64_t)l;
        if (l > fl->st.lat_max_ms)
                fl->st.lat_max_ms = l;
}

/* ------------------------------------------------------------------ */
/* Life of an entry                                                    */
/* ------------------------------------------------------------------ */

/* A record's copies (count, first and last place, first time) into v. */
static void view_copies_of_rec(struct dedup_flow_view *v,
                               const struct flow_rec *r)
{
        v->copies = r->copies;
        v->sink_part = r->sink_part;
        v->sink_part_last = r->sink_part_last;
        v->sink_offset = r->sink_offset;
        v->sink_offset_last = r->sink_offset_last;
        v->sink_ts = r->sink_ts;
}

/* The view of entry i, as the API and the retired list show it. */
static void dedup_flow_ent_view(const struct dedup_flow *fl, uint32_t i,
                                struct dedup_flow_view *v)
{
        const struct flow_ent *e = &fl->ents[i];
        struct flow_rec r;

        dedup_flow_unpack(fl, i, &r);
        memset(v, 0, sizeof(*v));
        v->seq = r.seq;
        v->outcome = outcome_of(fl, e);
        v->src_seen = !!(e->flags & F_SRC);
        v->due = !!(e->flags & (F_DUE | F_AGED));
        v->src_part = r.src_part;
        v->src_offset = r.src_offset;
        v->src_ts = r.src_ts;
        view_copies_of_rec(v, &r);
        v->born = r.born;
        v->latency_done = !!(e->flags & F_LAT);
        v->prior = !!(e->flags & F_PRIOR);
        v->gone = !!(e->flags & F_GONE);
        v->evid = !!(e->flags & F_EVID);
        v->id_len = dedup_flow_arena_get(fl, i, &v->id, v->id_bytes);
}

/* A view's fields as a record. */
static void rec_of_view(const struct dedup_flow_view *v, struct flow_rec *r)
{
        r->seq = v->seq;
        r->src_part = v->src_part;
        r->src_offset = v->src_offset;
        r->src_ts = v->src_ts;
        r->copies = v->copies;
        r->sink_part = v->sink_part;
        r->sink_part_last = v->sink_part_last;
        r->sink_offset = v->sink_offset;
        r->sink_offset_last = v->sink_offset_last;
        r->sink_ts = v->sink_ts;
        r->born = v->born;
}

/* Room for part in the per-part lists and frontiers.  0, or -1. */
static int dedup_flow_parts_ensure(struct dedup_flow *fl, uint32_t part)
{
        uint32_t n, k;
        struct flow_list *pl;
        int64_t *fr;

        if (part < fl->nparts)
                return 0;
        if (part == UINT32_MAX)
                return -1;
        n = part + 1 > fl->nparts * 2 ? part + 1 : fl->nparts * 2;
        pl = realloc(fl->plists, (size_t)n * sizeof(*pl));
        if (!pl)
                return -1;
        fl->plists = pl;
        fr = realloc(fl->frontier, (size_t)n * sizeof(*fr));
        if (!fr)
                return -1;
        fl->frontier = fr;
        if (dedup_flow_pack_parts(fl, n))
                return -1;
        for (k = fl->nparts; k < n; k++) {
                pl[k].head = pl[k].tail = NIL;
                fr[k] = -1;
        }
        fl->nparts = n;
        return 0;
}

/* The ring grows by half (to the bound at most, max_ids + 1 entries
 * being the most it holds but for a restore past a lowered bound).  Full
 * when it grows, so when its head is not at 0 it wraps: the part from
 * the head moves to the new end, and every index into it with it. */
static int ring_grow(struct dedup_flow *fl)
{
        uint64_t want = (uint64_t)fl->cap_ents + fl->cap_ents / 2;
        uint64_t lim = fl->conf.max_ids + 1, k;
        uint32_t n, old = fl->cap_ents, h = fl->head, delta, p;
        struct flow_ent *ne;
        size_t d;

        if (want < 1024)
                want = 1024;
        if (want > lim && lim > old)
                want = lim;
        if (want >= NIL)
                return -1;
        n = (uint32_t)want;
        ne = realloc(fl->ents, (size_t)n * sizeof(*ne));
        if (!ne)
                return -1;
        fl->ents = ne;
        fl->cap_ents = n;
        if (!fl->live || !h)
                return 0;
        delta = n - old;
        memmove(ne + h + delta, ne + h, (size_t)(old - h) * sizeof(*ne));
        fl->head = h + delta;
#define MOVED(x) ((x) != NIL && (x) >= h ? (x) + delta : (x))
        for (k = 0, p = fl->head; k < fl->live;
             k++, p = dedup_flow_next(fl, p)) {
                uint32_t *q = dedup_flow_links(&ne[p]);
                if (!(ne[p].flags & F_QUEUED))
                        continue;
                q[0] = MOVED(q[0]);
                q[1] = MOVED(q[1]);
        }
        for (p = 0; p < fl->nparts; p++) {
                fl->plists[p].head = MOVED(fl->plists[p].head);
                fl->plists[p].tail = MOVED(fl->plists[p].tail);
        }
        fl->awaiting.head = MOVED(fl->awaiting.head);
        fl->awaiting.tail = MOVED(fl->awaiting.tail);
        for (d = 0; d < fl->ndirty; d++)
                fl->dirty[d] = MOVED(fl->dirty[d]);
#undef MOVED
        return h_rebuild(fl, fl->nslots);
}

/* A new live entry for id with fields r, the youngest: in the ring, the
 * arena and the hash table; flags but F_LIVE are the caller's.  idb,
 * id_len: its bytes (hashed: id is their hash; else from a view, whose
 * bytes may be cut). */
static uint32_t dedup_flow_ent_new(struct dedup_flow *fl,
                                   const struct dedup_id *id, const void *idb,
                                   size_t id_len, int hashed,
                                   const struct flow_rec *r)
{
        struct flow_ent *e;
        uint64_t at;
        uint32_t i;

        if ((fl->live + 1) * 2 > fl->nslots && h_rebuild(fl, fl->nslots * 2))
                return NIL;
        if (fl->live == fl->cap_ents && ring_grow(fl))
                return NIL;
        at = (uint64_t)fl->head + fl->live;
        i = (uint32_t)(at >= fl->cap_ents ? at - fl->cap_ents : at);
        e = &fl->ents[i];
        memset(e, 0, sizeof(*e));
        e->lo32 = (uint32_t)id->lo;
        e->flags = F_LIVE;
        /* Packed before it counts live: a rebase or the arena's growth
         * walks the live entries only. */
        if (dedup_flow_arena_put(fl, i, id, idb, id_len, hashed) ||
            dedup_flow_pack(fl, i, r))
                return NIL;
        h_put(fl, i);
        fl->live++;
        return i;
}

/* The fields of an entry before any record applies. */
static void rec_blank(struct flow_rec *r, uint64_t seq)
{
        memset(r, 0, sizeof(*r));
        r->seq = seq;
        r->src_offset = r->sink_offset = r->sink_offset_last = -1;
        r->src_part = r->sink_part = r->sink_part_last = UINT32_MAX;
}

/* Retires the oldest live entry: judged now, counted as retired. */
static void retire_oldest(struct dedup_flow *fl)
{
        uint32_t i = fl->head;
        struct flow_ent *e = &fl->ents[i];
        struct dedup_flow_view v;

        dedup_flow_acct(fl, e, &fl->cur, -1);
        q_unlink(fl, i);
        if (e->flags & F_SRC)
                e->flags |= F_DUE;
        else
                e->flags |= F_AGED;
        dedup_flow_acct(fl, e, &fl->st.retired, +1);
        dedup_flow_ent_view(fl, i, &v);
        dedup_flow_spill_push(fl, &v);
        h_del(fl, i);
        dedup_flow_pack_drop(fl, i);
        e->flags = 0;
        fl->head = dedup_flow_next(fl, i);
        fl->live--;
        dedup_flow_arena_pop(fl);
}

static void retire_excess(struct dedup_flow *fl)
{
        while (fl->live > fl->conf.max_ids)
                retire_oldest(fl);
}

static void make_due(struct dedup_flow *fl, uint32_t i)
{
        struct flow_ent *e = &fl->ents[i];

        dedup_flow_acct(fl, e, &fl->cur, -1);
        q_unlink(fl, i);
        if (e->flags & F_SRC)
                e->flags |= F_DUE;
        else
                e->flags |= F_AGED;
        dedup_flow_acct(fl, e, &fl->cur, +1);
        touch(fl, i);
}

/* ------------------------------------------------------------------ */
/* API                                                                 */
/* ------------------------------------------------------------------ */

struct dedup_flow *dedup_flow_new(const struct dedup_flow_config *conf)
{
        struct dedup_flow *fl = calloc(1, sizeof(*fl));

        if (!fl)
                return NULL;
        fl->conf = *conf;
        if (!fl->conf.max_ids)
                fl->conf.max_ids = 1;
        fl->nslots = 1024;
        fl->slots = calloc(fl->nslots, sizeof(*fl->slots));
        if (!fl->slots) {
                free(fl);
                return NULL;
        }
        fl->wide_free = NIL;
        fl->awaiting.head = fl->awaiting.tail = NIL;
        fl->st.lat_max_ms = -1;
        fl->st.next_seq = 1; /* 0 is "before the first" for readers */
        return fl;
}

void dedup_flow_free(struct dedup_flow *fl)
{
        if (!fl)
                return;
        free(fl->ents);
        free(fl->slots);
        dedup_flow_pack_free(fl);
        free(fl->plists);
        free(fl->frontier);
        free(fl->dirty);
        free(fl->retired);
        free(fl->rslots);
        free(fl);
}

int dedup_flow_failed(const struct dedup_flow *fl)
{
        return fl->failed;
}

/* Sets the flags of the new entry i (from ent_new, with v's fields)
 * from v; queued when not yet due.  Not counted. */
static void dedup_flow_ent_fill(struct dedup_flow *fl, uint32_t i,
                                const struct dedup_flow_view *v)
{
        struct flow_ent *e = &fl->ents[i];

        if (v->latency_done)
                e->flags |= F_LAT;
        /* A sink-only entry is prior too when a truncation may have
         * left copies it no longer counts (dedup_flow_truncated()). */
        if (v->prior)
                e->flags |= F_PRIOR;
        if (v->evid)
                e->flags |= F_EVID;
        if (v->src_seen) {
                e->flags |= F_SRC;
                if (v->gone)
                        e->flags |= F_GONE;
                if (v->due)
                        e->flags |= F_DUE;
                else if (!v->copies && !v->gone)
                        q_push(fl, &fl->plists[v->src_part], i);
        } else if (v->due) {
                e->flags |= F_AGED;
        } else {
                q_push(fl, &fl->awaiting, i);
        }
}

/* A new entry from view v (revived or restored): fields, flags, queued
 * when not yet due; counted live.  Its index, or NIL (out of memory). */
static uint32_t ent_from_view(struct dedup_flow *fl,
                              const struct dedup_flow_view *v)
{
        struct flow_rec r;
        uint32_t i;

        if (v->src_seen && dedup_flow_parts_ensure(fl, v->src_part))
                return NIL;
        rec_of_view(v, &r);
        i = dedup_flow_ent_new(fl, &v->id, v->id_bytes, v->id_len, 0, &r);
        if (i == NIL)
                return NIL;
        dedup_flow_ent_fill(fl, i, v);
        dedup_flow_acct(fl, &fl->ents[i], &fl->cur, +1);
        return i;
}

/* A miss on id: revived when it was retired (dedup_flow_spill_find()):
 * live again with its seq and fields, counted live instead of retired,
 * the youngest entry (not yet dirty: the read that follows touches it).
 * Returns its index; NIL when not found, or on failure (fl->failed). */
static uint32_t ent_revive(struct dedup_flow *fl, const struct dedup_id *id)
{
        struct dedup_flow_view v;
        uint32_t i;

        if (dedup_flow_spill_find(fl, id, &v) <= 0)
                return NIL;
        if ((i = ent_from_view(fl, &v)) == NIL) {
                fl->failed = 1;
                return NIL;
        }
        dedup_flow_spill_revived(fl, &v);
        return i;
}

/* The entry of an id read on either side: *fresh and a new numbered entry
 * when the id is unseen, *revived when it was retired and is live again;
 * NIL (the flow failed) when out of memory or a lookup failed. */
static uint32_t ent_get(struct dedup_flow *fl, const void *idb, size_t id_len,
                        int *fresh, int *revived)
{
        struct dedup_id id;
        struct flow_rec r;
        uint32_t i;

        dedup_id_hash(idb, id_len, &id);
        i = h_find(fl, &id, idb, id_len);
        *revived = 0;
        if (i == NIL) {
                i = ent_revive(fl, &id);
                if (fl->failed)
                        return NIL;
                *revived = i != NIL;
        }
        *fresh = i == NIL;
        if (i != NIL)
                return i;
        rec_blank(&r, fl->st.next_seq);
        i = dedup_flow_ent_new(fl, &id, idb, id_len, 1, &r);
        if (i == NIL) {
                fl->failed = 1;
                return NIL;
        }
        fl->st.next_seq++;
        return i;
}

/* Ends a read on either side: entry i, its fields r stored, counts again
 * where it stands now, and the oldest retire if over the bound. */
static int ent_settle(struct dedup_flow *fl, uint32_t i,
                      const struct flow_rec *r)
{
        if (dedup_flow_pack(fl, i, r))
                return -1;
        latency(fl, &fl->ents[i], r);
        dedup_flow_acct(fl, &fl->ents[i], &fl->cur, +1);
        touch(fl, i);
        retire_excess(fl);
        return fl->failed ? -1 : 0;
}

int dedup_flow_source(struct dedup_flow *fl, uint32_t part, int64_t offset,
                      int64_t ts_ms, const void *idb, size_t id_len)
{
        struct flow_ent *e;
        struct flow_rec r;
        uint32_t i;
        int fresh, revived;

        if (fl->failed)
                return -1;
        if (dedup_flow_parts_ensure(fl, part)) {
                fl->failed = 1;
                return -1;
        }
        if (!idb || !id_len) {
                fl->st.source_no_id++;
                return 0;
        }
        fl->st.source_reads++;
        if (ts_ms > fl->st.source_clock)
                fl->st.source_clock = ts_ms;
        if ((i = ent_get(fl, idb, id_len, &fresh, &revived)) == NIL)
                return -1;
        e = &fl->ents[i];
        if (!fresh && (e->flags & F_GONE)) {
                /* Its record was truncated from the source: written
                 * again, it is a source record again (not a repeat). */
                dedup_flow_acct(fl, e, &fl->cur, -1);
                e->flags &= ~(F_GONE | F_DUE);
        } else if (!fresh) {
                if (e->flags & F_SRC) {
                        /* The source's own repeat: its audit says so.  A
                         * revived entry is live again: persisted so, and
                         * the bound holds. */
                        fl->st.source_repeats++;
                        if (revived) {
                                touch(fl, i);
                                retire_excess(fl);
                        }
                        return fl->failed ? -1 : 0;
                }
                dedup_flow_acct(fl, e, &fl->cur, -1);
                q_unlink(fl, i);
        }
        dedup_flow_unpack(fl, i, &r);
        e->flags |= F_SRC;
        e->flags &= ~F_AGED;
        r.src_part = part;
        r.src_offset = offset;
        r.src_ts = ts_ms;
        r.born = fl->st.sink_reads;
        if (fl->frontier[part] > offset)
                e->flags |= F_DUE;
        else if (!r.copies)
                q_push(fl, &fl->plists[part], i);
        return ent_settle(fl, i, &r);
}

int dedup_flow_sink(struct dedup_flow *fl, uint32_t part, int64_t offset,
                    int64_t ts_ms, const void *idb, size_t id_len)
{
        struct flow_ent *e;
        struct flow_rec r;
        uint32_t i;
        int fresh, revived;

        if (fl->failed)
                return -1;
        if (!idb || !id_len) {
                fl->st.sink_no_id++;
                return 0;
        }
        fl->st.sink_reads++;
        if (ts_ms > fl->st.sink_clock)
                fl->st.sink_clock = ts_ms;
        if ((i = ent_get(fl, idb, id_len, &fresh, &revived)) == NIL)
                return -1;
        e = &fl->ents[i];
        dedup_flow_unpack(fl, i, &r);
        if (fresh) {
                r.born = fl->st.source_reads;
                q_push(fl, &fl->awaiting, i);
        } else {
                dedup_flow_acct(fl, e, &fl->cur, -1);
                /* A source record leaves its part list with its first
                 * copy: due no longer matters to it. */
                if (e->flags & F_SRC)
                        q_unlink(fl, i);
        }
        if (!r.copies) {
                r.sink_part = part;
                r.sink_offset = offset;
                r.sink_ts = ts_ms;
        }
        r.copies++;
        r.sink_part_last = part;
        r.sink_offset_last = offset;
        return ent_settle(fl, i, &r);
}

void dedup_flow_frontier(struct dedup_flow *fl, uint32_t part,
                         int64_t committed)
{
        struct flow_list *l;

        if (fl->failed || dedup_flow_parts_ensure(fl, part)) {
                fl->failed = 1;
                return;
        }
        /* The same frontier again walks the list again: a source record
         * a sink truncation put back (dedup_flow_truncated()) is due
         * at the next frontier applied, not only at a higher one. */
        if (committed < fl->frontier[part])
                return;
        fl->frontier[part] = committed;
        l = &fl->plists[part];
        while (l->head != NIL &&
               dedup_flow_src_offset(fl, l->head) < committed)
                make_due(fl, l->head);
}

static int src_aged(const struct dedup_flow *fl, uint32_t i)
{
        struct flow_rec r;

        dedup_flow_unpack(fl, i, &r);
        return (fl->conf.due_records &&
                fl->st.sink_reads - r.born >= fl->conf.due_records) ||
               (fl->conf.due_ms && r.src_ts > 0 &&
                fl->st.sink_clock - r.src_ts >= fl->conf.due_ms);
}

static int sink_aged(const struct dedup_flow *fl, uint32_t i)
{
        struct flow_rec r;

        dedup_flow_unpack(fl, i, &r);
        return (fl->conf.due_records &&
                fl->st.source_reads - r.born >= fl->conf.due_records) ||
               (fl->conf.due_ms && r.sink_ts > 0 &&
                fl->st.source_clock - r.sink_ts >= fl->conf.due_ms);
}

void dedup_flow_tick(struct dedup_flow *fl)
{
        uint32_t p;

        if (fl->failed)
                return;
        if (!fl->conf.by_frontier)
                for (p = 0; p < fl->nparts; p++)
                        while (fl->plists[p].head != NIL &&
                               src_aged(fl, fl->plists[p].head))
                                make_due(fl, fl->plists[p].head);
        while (!fl->conf.sinks_at_finish && fl->awaiting.head != NIL &&
               sink_aged(fl, fl->awaiting.head))
                make_due(fl, fl->awaiting.head);
}

void dedup_flow_finish(struct dedup_flow *fl, int sources_due)
{
        uint32_t p;

        if (fl->failed)
                return;
        while (fl->awaiting.head != NIL)
                make_due(fl, fl->awaiting.head);
        if (sources_due)
                for (p = 0; p < fl->nparts; p++)
                        while (fl->plists[p].head != NIL)
                                make_due(fl, fl->plists[p].head);
}

/* ------------------------------------------------------------------ */
/* Truncation (flow.h, dedup_flow_truncated())                        */
/* ------------------------------------------------------------------ */

/* Queues entry i, a source record of part at offset without a copy and
 * not due, in its part's list in offset order: from the tail back (the
 * records put back by a sink truncation are older than most waiting
 * ones, which are the processor's lag). */
static void q_insert_src(struct dedup_flow *fl, uint32_t i, uint32_t part,
                         int64_t offset)
{
        struct flow_list *l = &fl->plists[part];
        struct flow_ent *e = &fl->ents[i];
        uint32_t after = l->tail, *q;

        while (after != NIL && dedup_flow_src_offset(fl, after) > offset)
                after = dedup_flow_links(&fl->ents[after])[0];
        e->flags |= F_QUEUED;
        q = dedup_flow_links(e);
        q[0] = after;
        q[1] = after == NIL ? l->head : dedup_flow_links(&fl->ents[after])[1];
        if (q[1] != NIL)
                dedup_flow_links(&fl->ents[q[1]])[0] = i;
        else
                l->tail = i;
        if (after != NIL)
                dedup_flow_links(&fl->ents[after])[1] = i;
        else
                l->head = i;
}

/*
 * The copies of r once sink part was truncated at d: those on part at or
 * past d are gone.  The engine keeps the first and the last copy and a
 * count; copies read on one part come in offset order, so a copy read
 * between them on part lies below the last one when that one is on part,
 * above the first one when that one is on part.  Known: one copy; two
 * (the first and the last are both); more, with the last on part below d
 * (none gone but the first, which cannot be then).  Unknown: the copies
 * between (more than two, the last elsewhere or gone), which may lie on
 * part past d or elsewhere: *unsure is then set and r keeps the copies
 * surely left (the first, the last, or none): a lower bound.  Returns 1
 * when r changed.
 */
static int cut_copies(struct flow_rec *r, uint32_t part, int64_t d,
                      int *unsure)
{
        uint32_t c = r->copies;
        int fg, lg, mid;

        *unsure = 0;
        if (!c)
                return 0;
        fg = r->sink_part == part && r->sink_offset >= d;
        lg = r->sink_part_last == part && r->sink_offset_last >= d;
        mid = c > 2 && !(r->sink_part_last == part && r->sink_offset_last < d);
        if (c == 1) { /* the first copy is the last */
                lg = fg;
                mid = 0;
        }
        if (!fg && !lg && !mid)
                return 0;
        *unsure = mid;
        if (fg && lg) {
                r->copies = 0;
                r->sink_part = r->sink_part_last = UINT32_MAX;
                r->sink_offset = r->sink_offset_last = -1;
                r->sink_ts = 0;
        } else if (fg) {
                /* The last one is left (its time is not kept: the first
                 * copy's stays, latency was counted with it). */
                r->copies = 1;
                r->sink_part = r->sink_part_last;
                r->sink_offset = r->sink_offset_last;
        } else if (lg) {
                r->copies = 1;
                r->sink_part_last = r->sink_part;
                r->sink_offset_last = r->sink_offset;
        } else {
                r->copies = 2; /* the first and the last; between: unsure */
        }
        return 1;
}

/* Entry i after a truncation of side's part at d: 1 when it changed,
 * 0 when not, -1 when out of memory. */
static int trunc_ent(struct dedup_flow *fl, uint32_t i,
                     enum dedup_flow_side side, uint32_t part, int64_t d)
{
        struct flow_ent *e = &fl->ents[i];
        struct flow_rec r;
        int unsure, back = 0;

        dedup_flow_unpack(fl, i, &r);
        if (side == DEDUP_FLOW_SIDE_SOURCE) {
                /* An outstanding source record (pending or lost) no
                 * longer is: never due.  A copied one keeps its verdict. */
                if (!(e->flags & F_SRC) || (e->flags & (F_GONE | F_PRIOR)) ||
                    r.copies || r.src_part != part || r.src_offset < d)
                        return 0;
                dedup_flow_acct(fl, e, &fl->cur, -1);
                q_unlink(fl, i);
                e->flags &= ~F_DUE;
                e->flags |= F_GONE;
                dedup_flow_acct(fl, e, &fl->cur, +1);
                touch(fl, i);
                return fl->failed ? -1 : 1;
        }
        if (!cut_copies(&r, part, d, &unsure))
                return 0;
        dedup_flow_acct(fl, e, &fl->cur, -1);
        if (unsure)
                e->flags |= F_PRIOR;
        if ((e->flags & F_SRC) && !r.copies &&
            !(e->flags & (F_PRIOR | F_GONE))) {
                /* Outstanding again: due by the rules, due_records
                 * counted from now. */
                e->flags &= ~F_DUE;
                r.born = fl->st.sink_reads;
                back = 1;
        }
        if (dedup_flow_pack(fl, i, &r))
                return -1;
        if (back)
                q_insert_src(fl, i, r.src_part, r.src_offset);
        dedup_flow_acct(fl, e, &fl->cur, +1);
        touch(fl, i);
        return fl->failed ? -1 : 1;
}

/* The outcome of a retired view as the engine counts it (outcome_of()). */
static enum dedup_flow_outcome view_outcome(const struct dedup_flow *fl,
                                            const struct dedup_flow_view *v)
{
        if (!v->src_seen)
                return v->due ? DEDUP_FLOW_UNEXPECTED : DEDUP_FLOW_AWAITING;
        if (!v->copies) {
                if (v->prior)
                        return DEDUP_FLOW_DELIVERED;
                if (v->gone || !v->due)
                        return DEDUP_FLOW_PENDING;
                return fl->conf.expect == DEDUP_FLOW_AT_MOST_ONE
                           ? DEDUP_FLOW_DELIVERED
                           : DEDUP_FLOW_LOST;
        }
        if (v->copies == 1 || fl->conf.expect == DEDUP_FLOW_AT_LEAST_ONE)
                return DEDUP_FLOW_DELIVERED;
        return DEDUP_FLOW_DUPLICATED;
}

/* v, a retired view (judged: due), after the truncation: 1 when it
 * changed (outcome and evid too). */
static int trunc_view(const struct dedup_flow *fl, struct dedup_flow_view *v,
                      enum dedup_flow_side side, uint32_t part, int64_t d)
{
        struct flow_rec r;
        int unsure, bad = (unsigned)v->outcome < DEDUP_FLOW__OUTCOMES &&
                          dedup_flow_outcome_bad(v->outcome);

        if (side == DEDUP_FLOW_SIDE_SOURCE) {
                if (!v->src_seen || v->gone || v->prior || v->copies ||
                    v->src_part != part || v->src_offset < d)
                        return 0;
                v->gone = 1;
        } else {
                rec_of_view(v, &r);
                if (!cut_copies(&r, part, d, &unsure))
                        return 0;
                view_copies_of_rec(v, &r);
                if (unsure)
                        v->prior = 1;
        }
        /* Its evidence, if it had any, is taken back by the caller when
         * the new verdict is none. */
        v->evid = v->evid || bad;
        v->outcome = view_outcome(fl, v);
        return 1;
}

/* v, retired, changed: its new view goes to the retired list (persisted
 * with the next batch, the later view of the id) and the retired
 * counters move from the old to the new. */
static void trunc_view_push(struct dedup_flow *fl,
                            const struct dedup_flow_view *old,
                            const struct dedup_flow_view *v)
{
        dedup_flow_spill_count(fl, old, -1);
        dedup_flow_spill_count(fl, v, +1);
        dedup_flow_spill_push(fl, v);
}

int dedup_flow_truncated(struct dedup_flow *fl, enum dedup_flow_side side,
                         uint32_t part, int64_t d, uint64_t *changed)
{
        uint64_t k, live = fl->live, n = 0;
        size_t nret = fl->nretired, j;
        uint32_t i;
        int r;

        if (changed)
                *changed = 0;
        if (fl->failed)
                return -1;
        if (side == DEDUP_FLOW_SIDE_SOURCE) {
                if (dedup_flow_parts_ensure(fl, part)) {
                        fl->failed = 1;
                        return -1;
                }
                /* The processor's offsets were of the old log: a record
                 * written at d or past it again is due by a frontier
                 * applied from now on. */
                if (fl->frontier[part] > d)
                        fl->frontier[part] = d;
        }
        for (k = 0, i = fl->head; k < live; k++, i = dedup_flow_next(fl, i)) {
                if ((r = trunc_ent(fl, i, side, part, d)) < 0) {
                        fl->failed = 1;
                        return -1;
                }
                n += (uint64_t)r;
        }
        /* Retired since the last batch, not yet persisted: their latest
         * views, but those live again (their live entry is newer). */
        for (j = 0; j < nret; j++) {
                struct dedup_flow_view old = fl->retired[j], v;
                if (dedup_flow_spill_at(fl, &old.id) != j + 1 ||
                    h_find(fl, &old.id, NULL, 0) != NIL)
                        continue;
                v = old;
                if (!trunc_view(fl, &v, side, part, d))
                        continue;
                trunc_view_push(fl, &old, &v);
                n++;
        }
        if (changed)
                *changed = n;
        return fl->failed ? -1 : 0;
}

int dedup_flow_retired_truncated(struct dedup_flow *fl,
                                 enum dedup_flow_side side, uint32_t part,
                                 int64_t d, const struct dedup_flow_view *v)
{
        struct dedup_flow_view nv = *v;

        if (fl->failed)
                return -1;
        /* The engine's own view is newer: dedup_flow_truncated() did it. */
        if (dedup_flow_spill_at(fl, &v->id) ||
            h_find(fl, &v->id, NULL, 0) != NIL)
                return 0;
        if (!trunc_view(fl, &nv, side, part, d))
                return 0;
        trunc_view_push(fl, v, &nv);
        return fl->failed ? -1 : 1;
}

static int64_t lat_pct(const struct dedup_flow_state *s, uint64_t n, double q)
{
        uint64_t want = (uint64_t)((double)n * q), cum = 0;
        unsigned b;

        if (!n)
                return -1;
        if (want < 1)
                want = 1;
        if (want > n)
                want = n;
        for (b = 0; b < DEDUP_FLOW_LAT_BUCKETS; b++) {
                cum += s->lat[b];
                if (cum >= want)
                        break;
        }
        /* A bucket's upper bound, never above the largest seen. */
        if (b >= DEDUP_FLOW_LAT_BUCKETS - 1 ||
            dedup_flow_lat_bounds[b] > s->lat_max_ms)
                return s->lat_max_ms;
        return dedup_flow_lat_bounds[b];
}

void dedup_flow_stats_get(const struct dedup_flow *fl,
                          struct dedup_flow_stats *st)
{
        unsigned o, b;

        memset(st, 0, sizeof(*st));
        for (o = 0; o < DEDUP_FLOW__OUTCOMES; o++)
                st->c.outcome[o] = fl->cur.outcome[o] +
                                   fl->st.retired.outcome[o];
        st->c.duplicate_copies = fl->cur.duplicate_copies +
                                 fl->st.retired.duplicate_copies;
        st->source_records = st->c.outcome[DEDUP_FLOW_PENDING] +
                             st->c.outcome[DEDUP_FLOW_DELIVERED] +
                             st->c.outcome[DEDUP_FLOW_LOST] +
                             st->c.outcome[DEDUP_FLOW_DUPLICATED];
        st->source_repeats = fl->st.source_repeats;
        st->source_no_id = fl->st.source_no_id;
        st->sink_no_id = fl->st.sink_no_id;
        st->sink_records = fl->st.sink_reads;
        st->live = fl->live;
        for (b = 0; b < DEDUP_FLOW_LAT_BUCKETS; b++)
                st->lat_count += fl->st.lat[b];
        st->lat_sum_ms = fl->st.lat_sum_ms;
        st->lat_p50_ms = lat_pct(&fl->st, st->lat_count, 0.50);
        st->lat_p99_ms = lat_pct(&fl->st, st->lat_count, 0.99);
        st->lat_max_ms = st->lat_count ? fl->st.lat_max_ms : -1;
}

void dedup_flow_outstanding(const struct dedup_flow *fl, uint64_t *pending,
                            uint64_t *awaiting)
{
        /* Live + retired, as in dedup_flow_stats_get() (a retired entry
         * is judged: neither outcome counts any). */
        if (pending)
                *pending = fl->cur.outcome[DEDUP_FLOW_PENDING] +
                           fl->st.retired.outcome[DEDUP_FLOW_PENDING];
        if (awaiting)
                *awaiting = fl->cur.outcome[DEDUP_FLOW_AWAITING] +
                            fl->st.retired.outcome[DEDUP_FLOW_AWAITING];
}

int dedup_flow_foreach(const struct dedup_flow *fl, enum dedup_flow_outcome o,
                       dedup_flow_cb *cb, void *opaque)
{
        struct dedup_flow_view v;
        uint64_t k;
        uint32_t i;
        int rc;

        for (k = 0, i = fl->head; k < fl->live;
             k++, i = dedup_flow_next(fl, i)) {
                if (o != DEDUP_FLOW__OUTCOMES &&
                    outcome_of(fl, &fl->ents[i]) != o)
                        continue;
                dedup_flow_ent_view(fl, i, &v);
                rc = cb(opaque, &v);
                if (rc)
                        return rc;
        }
        return 0;
}

int dedup_flow_dirty_foreach(const struct dedup_flow *fl, dedup_flow_cb *cb,
                             void *opaque)
{
        struct dedup_flow_view v;
        size_t k;
        int rc;

        for (k = 0; k < fl->ndirty; k++) {
                const struct flow_ent *e = &fl->ents[fl->dirty[k]];
                /* Retired since (flags cleared), or listed twice after
                 * its slot was reused: written once, as it is now. */
                if (!(e->flags & F_LIVE) || !(e->flags & F_DIRTY))
                        continue;
                dedup_flow_ent_view(fl, fl->dirty[k], &v);
                rc = cb(opaque, &v);
                if (rc)
                        return rc;
        }
        return 0;
}

int dedup_flow_dirty(const struct dedup_flow *fl)
{
        return fl->ndirty > 0 || fl->nretired > 0;
}

void dedup_flow_dirty_clear(struct dedup_flow *fl)
{
        size_t k;

        for (k = 0; k < fl->ndirty; k++) {
                struct flow_ent *e = &fl->ents[fl->dirty[k]];
                if (!(e->flags & F_LIVE) || !(e->flags & F_DIRTY))
                        continue;
                e->flags &= ~(F_DIRTY | F_EVID);
                if (dedup_flow_outcome_bad(outcome_of(fl, e)))
                        e->flags |= F_EVID;
        }
        fl->ndirty = 0;
        dedup_flow_spill_clear(fl);
}

void dedup_flow_state_get(const struct dedup_flow *fl,
                          struct dedup_flow_state *s)
{
        *s = fl->st;
}

void dedup_flow_state_set(struct dedup_flow *fl,
                          const struct dedup_flow_state *s)
{
        fl->st = *s;
}

int dedup_flow_restore(struct dedup_flow *fl, const struct dedup_flow_view *v)
{
        if (h_find(fl, &v->id, NULL, 0) != NIL)
                return -1;
        return ent_from_view(fl, v) == NIL ? -1 : 0;
}

size_t dedup_flow_entry_bytes(void)
{
        /* The table doubles at half load: up to 4 slots per entry; an id
         * of DEDUP_FLOW_ID_KEEP bytes or less: its bytes and one. */
        return sizeof(struct flow_ent) + 4 * sizeof(uint32_t) + 1 +
               DEDUP_FLOW_ID_KEEP;
}

size_t dedup_flow_memory(const struct dedup_flow *fl)
{
        return sizeof(*fl) + (size_t)fl->cap_ents * sizeof(struct flow_ent) +
               fl->nslots * sizeof(uint32_t) +
               (size_t)fl->nparts *
                   (sizeof(struct flow_list) + sizeof(int64_t)) +
               fl->cap_dirty * sizeof(uint32_t) +
               fl->cap_retired * sizeof(struct dedup_flow_view) +
               fl->nrslots * sizeof(uint32_t) + dedup_flow_pack_memory(fl);
}
