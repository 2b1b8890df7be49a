/*
 * flow.c - lineage of a consume-transform-produce flow (see flow.h).
 *
 * Entries live in one array, linked by index (UINT32_MAX = none), found
 * through an open-addressing hash table of their 128-bit ids (linear
 * probing, backward-shift deletion: no tombstones).  Three kinds of list
 * thread through them:
 *   age      every live entry, in arrival order: what is retired first
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

static void age_push(struct dedup_flow *fl, uint32_t i)
{
        struct flow_ent *e = &fl->ents[i];

        e->anext = NIL;
        e->aprev = fl->age.tail;
        if (fl->age.tail != NIL)
                fl->ents[fl->age.tail].anext = i;
        else
                fl->age.head = i;
        fl->age.tail = i;
}

static void age_unlink(struct dedup_flow *fl, uint32_t i)
{
        struct flow_ent *e = &fl->ents[i];

        if (e->aprev != NIL)
                fl->ents[e->aprev].anext = e->anext;
        else
                fl->age.head = e->anext;
        if (e->anext != NIL)
                fl->ents[e->anext].aprev = e->aprev;
        else
                fl->age.tail = e->aprev;
}

static void q_push(struct dedup_flow *fl, struct flow_list *l, uint32_t i)
{
        struct flow_ent *e = &fl->ents[i];

        e->qnext = NIL;
        e->qprev = l->tail;
        if (l->tail != NIL)
                fl->ents[l->tail].qnext = i;
        else
                l->head = i;
        l->tail = i;
        e->flags |= F_QUEUED;
}

static struct flow_list *q_of(struct dedup_flow *fl, const struct flow_ent *e)
{
        return (e->flags & F_SRC) ? &fl->plists[e->src_part] : &fl->awaiting;
}

static void q_unlink(struct dedup_flow *fl, uint32_t i)
{
        struct flow_ent *e = &fl->ents[i];
        struct flow_list *l;

        if (!(e->flags & F_QUEUED))
                return;
        l = q_of(fl, e);
        if (e->qprev != NIL)
                fl->ents[e->qprev].qnext = e->qnext;
        else
                l->head = e->qnext;
        if (e->qnext != NIL)
                fl->ents[e->qnext].qprev = e->qprev;
        else
                l->tail = e->qprev;
        e->flags &= ~F_QUEUED;
}

/* ------------------------------------------------------------------ */
/* Hash table                                                          */
/* ------------------------------------------------------------------ */

static uint32_t h_find(const struct dedup_flow *fl, const struct dedup_id *id)
{
        size_t mask = fl->nslots - 1, s = (size_t)id->lo & mask;

        while (fl->slots[s]) {
                uint32_t i = fl->slots[s] - 1;
                if (dedup_flow_id_eq(&fl->ents[i].id, id))
                        return i;
                s = (s + 1) & mask;
        }
        return NIL;
}

static void h_put(uint32_t *slots, size_t nslots, const struct dedup_id *id,
                  uint32_t i)
{
        size_t mask = nslots - 1, s = (size_t)id->lo & mask;

        while (slots[s])
                s = (s + 1) & mask;
        slots[s] = i + 1;
}

static void h_del(struct dedup_flow *fl, uint32_t i)
{
        size_t mask = fl->nslots - 1, s = (size_t)fl->ents[i].id.lo & mask;
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
                home = (size_t)fl->ents[fl->slots[j] - 1].id.lo & mask;
                if (((j - home) & mask) >= ((j - s) & mask)) {
                        fl->slots[s] = fl->slots[j];
                        s = j;
                }
        }
        fl->slots[s] = 0;
}

static int h_grow(struct dedup_flow *fl)
{
        size_t n = fl->nslots * 2, k;
        uint32_t *ns = calloc(n, sizeof(*ns));

        if (!ns)
                return -1;
        for (k = 0; k < fl->nslots; k++)
                if (fl->slots[k])
                        h_put(ns, n, &fl->ents[fl->slots[k] - 1].id,
                              fl->slots[k] - 1);
        free(fl->slots);
        fl->slots = ns;
        fl->nslots = n;
        return 0;
}

/* ------------------------------------------------------------------ */
/* Outcomes and counters                                               */
/* ------------------------------------------------------------------ */

static enum dedup_flow_outcome outcome_of(const struct dedup_flow *fl,
                                          const struct flow_ent *e)
{
        if (!(e->flags & F_SRC))
                return (e->flags & F_AGED) ? DEDUP_FLOW_UNEXPECTED
                                           : DEDUP_FLOW_AWAITING;
        if (e->copies == 0) {
                if (e->flags & F_PRIOR)
                        return DEDUP_FLOW_DELIVERED;
                if (!(e->flags & F_DUE))
                        return DEDUP_FLOW_PENDING;
                return fl->conf.expect == DEDUP_FLOW_AT_MOST_ONE
                           ? DEDUP_FLOW_DELIVERED
                           : DEDUP_FLOW_LOST;
        }
        if (e->copies == 1 || fl->conf.expect == DEDUP_FLOW_AT_LEAST_ONE)
                return DEDUP_FLOW_DELIVERED;
        return DEDUP_FLOW_DUPLICATED;
}

/* Adds (sign +1) or removes (-1) e's contribution to c. */
static void dedup_flow_acct(const struct dedup_flow *fl,
                            const struct flow_ent *e,
                            struct dedup_flow_counts *c, int sign)
{
        enum dedup_flow_outcome o = outcome_of(fl, e);
        uint64_t w = (e->flags & F_SRC) ? 1 : e->copies;
        uint64_t extra = o == DEDUP_FLOW_DUPLICATED ? e->copies - 1 : 0;

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

static void latency(struct dedup_flow *fl, struct flow_ent *e)
{
        int64_t l;
        unsigned b;

        if ((e->flags & F_LAT) || !(e->flags & F_SRC) || !e->copies)
                return;
        e->flags |= F_LAT;
        if (e->src_ts <= 0 || e->sink_ts <= 0)
                return;
        l = e->sink_ts - e->src_ts;
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

/* The view of entry e, as the API and the retired list show it. */
static void dedup_flow_ent_view(const struct dedup_flow *fl,
                                const struct flow_ent *e,
                                struct dedup_flow_view *v)
{
        memset(v, 0, sizeof(*v));
        v->id = e->id;
        v->seq = e->seq;
        v->outcome = outcome_of(fl, e);
        v->src_seen = !!(e->flags & F_SRC);
        v->due = !!(e->flags & (F_DUE | F_AGED));
        v->src_part = e->src_part;
        v->src_offset = e->src_offset;
        v->src_ts = e->src_ts;
        v->copies = e->copies;
        v->sink_part = e->sink_part;
        v->sink_part_last = e->sink_part_last;
        v->sink_offset = e->sink_offset;
        v->sink_offset_last = e->sink_offset_last;
        v->sink_ts = e->sink_ts;
        v->born = e->born;
        v->latency_done = !!(e->flags & F_LAT);
        v->prior = !!(e->flags & F_PRIOR);
        v->evid = !!(e->flags & F_EVID);
        v->id_len = e->id_len;
        memcpy(v->id_bytes, e->id_bytes,
               e->id_len < DEDUP_FLOW_ID_KEEP ? e->id_len : DEDUP_FLOW_ID_KEEP);
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
        for (k = fl->nparts; k < n; k++) {
                pl[k].head = pl[k].tail = NIL;
                fr[k] = -1;
        }
        fl->nparts = n;
        return 0;
}

/* A new, zeroed, live entry for id, in the hash table and the age list. */
static uint32_t dedup_flow_ent_new(struct dedup_flow *fl,
                                   const struct dedup_id *id,
                                   const void *idb, size_t id_len)
{
        struct flow_ent *e;
        uint32_t i;

        if ((fl->live + 1) * 2 > fl->nslots && h_grow(fl))
                return NIL;
        if (fl->free_head != NIL) {
                i = fl->free_head;
                fl->free_head = fl->ents[i].anext;
        } else {
                if (fl->nents == fl->cap_ents) {
                        uint32_t n = fl->cap_ents ? fl->cap_ents * 2 : 1024;
                        struct flow_ent *ne;
                        if (fl->cap_ents >= NIL / 2)
                                return NIL;
                        ne = realloc(fl->ents, (size_t)n * sizeof(*ne));
                        if (!ne)
                                return NIL;
                        fl->ents = ne;
                        fl->cap_ents = n;
                }
                i = fl->nents++;
        }
        e = &fl->ents[i];
        memset(e, 0, sizeof(*e));
        e->id = *id;
        e->flags = F_LIVE;
        e->src_offset = e->sink_offset = e->sink_offset_last = -1;
        e->sink_part = e->sink_part_last = e->src_part = UINT32_MAX;
        e->id_len = id_len > UINT32_MAX ? UINT32_MAX : (uint32_t)id_len;
        if (idb)
                memcpy(e->id_bytes, idb,
                       id_len < DEDUP_FLOW_ID_KEEP ? id_len
                                                   : DEDUP_FLOW_ID_KEEP);
        h_put(fl->slots, fl->nslots, id, i);
        age_push(fl, i);
        fl->live++;
        return i;
}

/* Retires the oldest live entry: judged now, counted as retired. */
static void retire_oldest(struct dedup_flow *fl)
{
        uint32_t i = fl->age.head;
        struct flow_ent *e = &fl->ents[i];
        struct dedup_flow_view v;

        dedup_flow_acct(fl, e, &fl->cur, -1);
        q_unlink(fl, i);
        if (e->flags & F_SRC)
                e->flags |= F_DUE;
        else
                e->flags |= F_AGED;
        dedup_flow_acct(fl, e, &fl->st.retired, +1);
        dedup_flow_ent_view(fl, e, &v);
        dedup_flow_spill_push(fl, &v);
        h_del(fl, i);
        age_unlink(fl, i);
        e->flags = 0;
        e->anext = fl->free_head;
        fl->free_head = i;
        fl->live--;
}

static void retire_excess(struct dedup_flow *fl)
{
        while (fl->live > fl->conf.max_ids && fl->age.head != NIL)
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
        fl->free_head = NIL;
        fl->age.head = fl->age.tail = NIL;
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

/* Fills the new entry i (from ent_new) from v: fields and flags; queued
 * when not yet due.  Not counted. */
static void dedup_flow_ent_fill(struct dedup_flow *fl, uint32_t i,
                                const struct dedup_flow_view *v)
{
        struct flow_ent *e = &fl->ents[i];

        e->id_len = v->id_len > UINT32_MAX ? UINT32_MAX : (uint32_t)v->id_len;
        e->seq = v->seq;
        e->src_part = v->src_part;
        e->src_offset = v->src_offset;
        e->src_ts = v->src_ts;
        e->copies = v->copies;
        e->sink_part = v->sink_part;
        e->sink_part_last = v->sink_part_last;
        e->sink_offset = v->sink_offset;
        e->sink_offset_last = v->sink_offset_last;
        e->sink_ts = v->sink_ts;
        e->born = v->born;
        if (v->latency_done)
                e->flags |= F_LAT;
        if (v->prior && v->src_seen)
                e->flags |= F_PRIOR;
        if (v->evid)
                e->flags |= F_EVID;
        if (v->src_seen) {
                e->flags |= F_SRC;
                if (v->due)
                        e->flags |= F_DUE;
                else if (!e->copies)
                        q_push(fl, &fl->plists[e->src_part], i);
        } else if (v->due) {
                e->flags |= F_AGED;
        } else {
                q_push(fl, &fl->awaiting, i);
        }
}

/* The entry of an id read on either side: *fresh and a new numbered entry
 * when the id is unseen, *revived when it was retired and is live again;
 * NIL (the flow failed) when out of memory or a lookup failed. */
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
        if ((v.src_seen && dedup_flow_parts_ensure(fl, v.src_part)) ||
            (i = dedup_flow_ent_new(fl, id, v.id_bytes, v.id_len)) == NIL) {
                fl->failed = 1;
                return NIL;
        }
        dedup_flow_ent_fill(fl, i, &v);
        dedup_flow_spill_revived(fl, &v);
        dedup_flow_acct(fl, &fl->ents[i], &fl->cur, +1);
        return i;
}

static uint32_t ent_get(struct dedup_flow *fl, const void *idb,
                        size_t id_len, int *fresh, int *revived)
{
        struct dedup_id id;
        uint32_t i;

        dedup_id_hash(idb, id_len, &id);
        i = h_find(fl, &id);
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
        i = dedup_flow_ent_new(fl, &id, idb, id_len);
        if (i == NIL) {
                fl->failed = 1;
                return NIL;
        }
        fl->ents[i].seq = fl->st.next_seq++;
        return i;
}

/* Ends a read on either side: entry i, updated, counts again where it
 * stands now, becomes the youngest, and the oldest retire if over the
 * bound. */
static int ent_settle(struct dedup_flow *fl, uint32_t i)
{
        struct flow_ent *e = &fl->ents[i];

        latency(fl, e);
        dedup_flow_acct(fl, e, &fl->cur, +1);
        touch(fl, i);
        retire_excess(fl);
        return fl->failed ? -1 : 0;
}

int dedup_flow_source(struct dedup_flow *fl, uint32_t part, int64_t offset,
                      int64_t ts_ms, const void *idb, size_t id_len)
{
        struct flow_ent *e;
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
        if (!fresh) {
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
        e->flags |= F_SRC;
        e->flags &= ~F_AGED;
        e->src_part = part;
        e->src_offset = offset;
        e->src_ts = ts_ms;
        e->born = fl->st.sink_reads;
        if (fl->frontier[part] > offset)
                e->flags |= F_DUE;
        else if (!e->copies)
                q_push(fl, &fl->plists[part], i);
        return ent_settle(fl, i);
}

int dedup_flow_sink(struct dedup_flow *fl, uint32_t part, int64_t offset,
                    int64_t ts_ms, const void *idb, size_t id_len)
{
        struct flow_ent *e;
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
        if (fresh) {
                e->born = fl->st.source_reads;
                q_push(fl, &fl->awaiting, i);
        } else {
                dedup_flow_acct(fl, e, &fl->cur, -1);
                /* A source record leaves its part list with its first
                 * copy: due no longer matters to it. */
                if (e->flags & F_SRC)
                        q_unlink(fl, i);
        }
        if (!e->copies) {
                e->sink_part = part;
                e->sink_offset = offset;
                e->sink_ts = ts_ms;
        }
        e->copies++;
        e->sink_part_last = part;
        e->sink_offset_last = offset;
        return ent_settle(fl, i);
}

void dedup_flow_frontier(struct dedup_flow *fl, uint32_t part,
                         int64_t committed)
{
        struct flow_list *l;

        if (fl->failed || dedup_flow_parts_ensure(fl, part)) {
                fl->failed = 1;
                return;
        }
        if (committed <= fl->frontier[part])
                return;
        fl->frontier[part] = committed;
        l = &fl->plists[part];
        while (l->head != NIL && fl->ents[l->head].src_offset < committed)
                make_due(fl, l->head);
}

static int src_aged(const struct dedup_flow *fl, const struct flow_ent *e)
{
        return (fl->conf.due_records &&
                fl->st.sink_reads - e->born >= fl->conf.due_records) ||
               (fl->conf.due_ms && e->src_ts > 0 &&
                fl->st.sink_clock - e->src_ts >= fl->conf.due_ms);
}

static int sink_aged(const struct dedup_flow *fl, const struct flow_ent *e)
{
        return (fl->conf.due_records &&
                fl->st.source_reads - e->born >= fl->conf.due_records) ||
               (fl->conf.due_ms && e->sink_ts > 0 &&
                fl->st.source_clock - e->sink_ts >= fl->conf.due_ms);
}

void dedup_flow_tick(struct dedup_flow *fl)
{
        uint32_t p;

        if (fl->failed)
                return;
        if (!fl->conf.by_frontier)
                for (p = 0; p < fl->nparts; p++)
                        while (fl->plists[p].head != NIL &&
                               src_aged(fl, &fl->ents[fl->plists[p].head]))
                                make_due(fl, fl->plists[p].head);
        while (fl->awaiting.head != NIL &&
               sink_aged(fl, &fl->ents[fl->awaiting.head]))
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

static int64_t lat_pct(const struct dedup_flow_state *s, uint64_t n,
                       double q)
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
                st->c.outcome[o] =
                    fl->cur.outcome[o] + fl->st.retired.outcome[o];
        st->c.duplicate_copies =
            fl->cur.duplicate_copies + fl->st.retired.duplicate_copies;
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

int dedup_flow_foreach(const struct dedup_flow *fl,
                       enum dedup_flow_outcome o, dedup_flow_cb *cb,
                       void *opaque)
{
        struct dedup_flow_view v;
        uint32_t i;
        int rc;

        for (i = fl->age.head; i != NIL; i = fl->ents[i].anext) {
                if (o != DEDUP_FLOW__OUTCOMES &&
                    outcome_of(fl, &fl->ents[i]) != o)
                        continue;
                dedup_flow_ent_view(fl, &fl->ents[i], &v);
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
                dedup_flow_ent_view(fl, e, &v);
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
        uint32_t i;

        if (h_find(fl, &v->id) != NIL)
                return -1;
        if (v->src_seen && dedup_flow_parts_ensure(fl, v->src_part))
                return -1;
        i = dedup_flow_ent_new(fl, &v->id, v->id_bytes, v->id_len);
        if (i == NIL)
                return -1;
        dedup_flow_ent_fill(fl, i, v);
        dedup_flow_acct(fl, &fl->ents[i], &fl->cur, +1);
        return 0;
}

size_t dedup_flow_entry_bytes(void)
{
        /* The table doubles at half load: up to 4 slots per entry. */
        return sizeof(struct flow_ent) + 4 * sizeof(uint32_t);
}

size_t dedup_flow_memory(const struct dedup_flow *fl)
{
        return sizeof(*fl) + (size_t)fl->cap_ents * sizeof(struct flow_ent) +
               fl->nslots * sizeof(uint32_t) +
               (size_t)fl->nparts *
                   (sizeof(struct flow_list) + sizeof(int64_t)) +
               fl->cap_dirty * sizeof(uint32_t) +
               fl->cap_retired * sizeof(struct dedup_flow_view) +
               fl->nrslots * sizeof(uint32_t);
}
