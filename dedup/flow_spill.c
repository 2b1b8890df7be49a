/*
 * flow_spill.c - the retired entries of the flow engine (flow.h, "Bounded
 * memory"): the list of those retired since the last persistence, with an
 * id table to find them, and their revival on a miss, from that list or
 * from the caller's store (dedup_flow_set_lookup).
 */
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"

/* The retired list's id table (see struct dedup_flow). */
static size_t r_slot(const struct dedup_flow *fl, const struct dedup_id *id)
{
        size_t mask = fl->nrslots - 1, s = (size_t)id->lo & mask;

        while (fl->rslots[s] &&
               !dedup_flow_id_eq(&fl->retired[fl->rslots[s] - 1].id, id))
                s = (s + 1) & mask;
        return s;
}

/* Records view k of the retired list as its id's latest. */
static void r_put(struct dedup_flow *fl, size_t k)
{
        fl->rslots[r_slot(fl, &fl->retired[k].id)] = (uint32_t)k + 1;
}

static int r_grow(struct dedup_flow *fl, size_t n)
{
        uint32_t *ns, *old = fl->rslots;
        size_t k, oldn = fl->nrslots;

        if (n <= fl->nrslots)
                return 0;
        if (n > UINT32_MAX || !(ns = calloc(n, sizeof(*ns))))
                return -1;
        fl->rslots = ns;
        fl->nrslots = n;
        /* The old table holds one index per id, its latest. */
        for (k = 0; k < oldn; k++)
                if (old[k])
                        fl->rslots[r_slot(fl, &fl->retired[old[k] - 1].id)] =
                            old[k];
        free(old);
        return 0;
}

void dedup_flow_spill_push(struct dedup_flow *fl,
                           const struct dedup_flow_view *v)
{
        if (fl->nretired == fl->cap_retired) {
                size_t n = fl->cap_retired ? fl->cap_retired * 2 : 64;
                struct dedup_flow_view *r = realloc(fl->retired,
                                                    n * sizeof(*r));
                if (r)
                        fl->retired = r;
                if (!r || r_grow(fl, n * 2))
                        fl->failed = 1;
                else
                        fl->cap_retired = n;
        }
        if (fl->nretired < fl->cap_retired) {
                fl->retired[fl->nretired++] = *v;
                r_put(fl, fl->nretired - 1);
        }
}

void dedup_flow_spill_clear(struct dedup_flow *fl)
{
        if (fl->nretired)
                memset(fl->rslots, 0, fl->nrslots * sizeof(*fl->rslots));
        fl->nretired = 0;
}

static int retired_any(const struct dedup_flow *fl)
{
        unsigned o;

        for (o = 0; o < DEDUP_FLOW__OUTCOMES; o++)
                if (fl->st.retired.outcome[o])
                        return 1;
        return 0;
}

static void sub_clamp(uint64_t *c, uint64_t n)
{
        *c = *c > n ? *c - n : 0;
}

void dedup_flow_spill_count(struct dedup_flow *fl,
                            const struct dedup_flow_view *v, int sign)
{
        struct dedup_flow_counts *c = &fl->st.retired;
        uint64_t w = v->src_seen ? 1 : v->copies;
        uint64_t extra = v->outcome == DEDUP_FLOW_DUPLICATED && v->copies
                             ? v->copies - 1
                             : 0;

        if ((unsigned)v->outcome >= DEDUP_FLOW__OUTCOMES)
                return;
        if (sign > 0) {
                c->outcome[v->outcome] += w;
                c->duplicate_copies += extra;
        } else {
                sub_clamp(&c->outcome[v->outcome], w);
                sub_clamp(&c->duplicate_copies, extra);
        }
}

/* Takes a retired view's contribution out of the retired counters, by the
 * outcome it was counted with (stored in the view). */
static void retired_sub(struct dedup_flow *fl, const struct dedup_flow_view *v)
{
        dedup_flow_spill_count(fl, v, -1);
}

size_t dedup_flow_spill_at(const struct dedup_flow *fl,
                           const struct dedup_id *id)
{
        if (!fl->nretired)
                return 0;
        return fl->rslots[r_slot(fl, id)];
}

int dedup_flow_spill_find(struct dedup_flow *fl, const struct dedup_id *id,
                          struct dedup_flow_view *v)
{
        int rc;

        if (!retired_any(fl))
                return 0; /* nothing was ever retired: no lookup */
        if (fl->nretired) {
                size_t s = r_slot(fl, id);
                if (fl->rslots[s]) {
                        *v = fl->retired[fl->rslots[s] - 1];
                        /* That view is persisted first, with this batch:
                         * evidence when it is a bad verdict. */
                        if ((unsigned)v->outcome < DEDUP_FLOW__OUTCOMES &&
                            dedup_flow_outcome_bad(v->outcome))
                                v->evid = 1;
                        return 1;
                }
        }
        if (!fl->lookup)
                return 0;
        memset(v, 0, sizeof(*v));
        rc = fl->lookup(fl->lookup_opaque, id, v);
        if (rc < 0) {
                fl->failed = 1;
                return -1;
        }
        return rc > 0 && dedup_flow_id_eq(&v->id, id);
}

void dedup_flow_spill_revived(struct dedup_flow *fl,
                              const struct dedup_flow_view *v)
{
        retired_sub(fl, v);
}

const struct dedup_flow_view *dedup_flow_retired(const struct dedup_flow *fl,
                                                 size_t *n)
{
        *n = fl->nretired;
        return fl->retired;
}

void dedup_flow_set_lookup(struct dedup_flow *fl, dedup_flow_lookup_cb *cb,
                           void *opaque)
{
        fl->lookup = cb;
        fl->lookup_opaque = opaque;
}
