/*
 * window.c - id windows: which message ids a topic has already shown.
 *
 * A window is a ring of DEDUP_WINDOW_GENS generations.  New ids go into
 * the current generation; it is closed when it holds gen_cap ids
 * (max_ids / DEDUP_WINDOW_GENS, rounded up) or has been open for
 * max_age / DEDUP_WINDOW_GENS, and the next one takes the oldest slot,
 * dropping that generation whole.  So a window holds at most about
 * max_ids ids and always the last max_ids * (GENS-1)/GENS of them, and a
 * generation whose newest id is older than max_age is dropped by
 * ids_tick().
 *
 * Each generation has a Bloom filter; the filters are interleaved so that
 * one id touches one block of DEDUP_WINDOW_GENS 64-bit words (one word per
 * generation, 128 contiguous bytes: two cache lines) and sets or tests K
 * bits in its generation's word.  With 32 bits (4 bytes) per id and K = 8,
 * about 0.4% of new ids find a "maybe" somewhere in a full window of 16
 * generations (tests/test_window.c measures it); 24 bits gave 1%, and 32
 * generations of 24 bits 2.5%, since one-word blocks fill unevenly.  A "maybe" is settled by the ids of the
 * current batch (an index over them) and then by the caller's store,
 * asked for that one generation; a "no" in every generation needs neither.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define GENS DEDUP_WINDOW_GENS
#define BITS_PER_ID 32
#define K 8
#define NONE UINT32_MAX

struct gen_slot {
        uint64_t gen; /* 0: empty */
        int64_t first_ms, last_ms;
        uint64_t ids;
        int dirty;
};

struct window {
        struct gen_slot slot[GENS];
        uint32_t cur; /* slot of the current generation, or NONE */
        uint64_t *bloom; /* nblocks * GENS words; (block, slot) at
                            block * GENS + slot */
        uint64_t nblocks;
};

struct dedup_ids {
        struct dedup_window_config conf;
        uint64_t gen_cap;
        uint64_t next_gen;
        size_t mem;

        struct window *win;
        uint32_t nwin;

        dedup_id_lookup_cb *lookup;
        void *lookup_opaque;

        /* This batch: new ids, an index over them by id (row + 1, linear
         * probing), dropped generations. */
        struct dedup_id_row *rows;
        size_t nrows, rows_cap;
        uint32_t *rindex;
        size_t rindex_cap; /* power of two, or 0 */
        uint64_t *dropped;
        size_t ndropped, dropped_cap;
};

static int grow(struct dedup_ids *ids, void **arr, size_t *cap, size_t need,
                size_t elem)
{
        size_t ncap;
        void *p;

        if (need <= *cap)
                return 0;
        ncap = *cap ? *cap * 2 : 64;
        while (ncap < need)
                ncap *= 2;
        p = realloc(*arr, ncap * elem);
        if (!p)
                return -1;
        ids->mem += (ncap - *cap) * elem;
        *arr = p;
        *cap = ncap;
        return 0;
}

struct dedup_ids *ids_new(const struct dedup_window_config *conf)
{
        struct dedup_ids *ids = calloc(1, sizeof(*ids));

        if (!ids)
                return NULL;
        ids->conf = *conf;
        ids->gen_cap = conf->max_ids / GENS + (conf->max_ids % GENS != 0);
        if (!ids->gen_cap)
                ids->gen_cap = 1;
        ids->next_gen = 1;
        ids->mem = sizeof(*ids);
        return ids;
}

void ids_free(struct dedup_ids *ids)
{
        uint32_t i;

        if (!ids)
                return;
        for (i = 0; i < ids->nwin; i++)
                free(ids->win[i].bloom);
        free(ids->win);
        free(ids->rows);
        free(ids->rindex);
        free(ids->dropped);
        free(ids);
}

int ids_window_add(struct dedup_ids *ids, uint32_t *window)
{
        struct window *w, *nw;
        uint64_t nblocks = (ids->gen_cap * BITS_PER_ID + 63) / 64;

        if (nblocks > SIZE_MAX / (GENS * sizeof(uint64_t)))
                return -1;
        nw = realloc(ids->win, (ids->nwin + 1) * sizeof(*nw));
        if (!nw)
                return -1;
        ids->win = nw;
        w = &nw[ids->nwin];
        memset(w, 0, sizeof(*w));
        w->cur = NONE;
        w->nblocks = nblocks;
        w->bloom = calloc((size_t)nblocks * GENS, sizeof(uint64_t));
        if (!w->bloom)
                return -1;
        ids->mem += sizeof(*w) + (size_t)nblocks * GENS * sizeof(uint64_t);
        *window = ids->nwin++;
        return 0;
}

uint32_t ids_windows(const struct dedup_ids *ids)
{
        return ids->nwin;
}

void ids_set_lookup(struct dedup_ids *ids, dedup_id_lookup_cb *cb,
                    void *opaque)
{
        ids->lookup = cb;
        ids->lookup_opaque = opaque;
}

/* ------------------------------------------------------------------ */
/* Filters                                                             */
/* ------------------------------------------------------------------ */

static uint64_t *block_of(const struct window *w, const struct dedup_id *id)
{
        return &w->bloom[(id->lo % w->nblocks) * GENS];
}

/* K bit positions of 6 bits each from the high half (the block index
 * comes from the low half). */
static uint64_t mask_of(const struct dedup_id *id)
{
        uint64_t m = 0, h = id->hi;
        int i;

        for (i = 0; i < K; i++, h >>= 6)
                m |= (uint64_t)1 << (h & 63);
        return m;
}

static void slot_drop(struct dedup_ids *ids, struct window *w, uint32_t s)
{
        uint64_t b;

        if (!w->slot[s].gen)
                return;
        if (!grow(ids, (void **)&ids->dropped, &ids->dropped_cap,
                  ids->ndropped + 1, sizeof(*ids->dropped)))
                ids->dropped[ids->ndropped++] = w->slot[s].gen;
        /* On failure the generation's rows stay in the store; they can do
         * no harm: no filter points at them any more. */
        for (b = 0; b < w->nblocks; b++)
                w->bloom[b * GENS + s] = 0;
        memset(&w->slot[s], 0, sizeof(w->slot[s]));
        if (w->cur == s)
                w->cur = NONE;
}

/* The slot that follows the current one (or the first empty one). */
static uint32_t slot_next(const struct window *w)
{
        uint32_t s;

        if (w->cur != NONE)
                return (w->cur + 1) % GENS;
        for (s = 0; s < GENS; s++)
                if (!w->slot[s].gen)
                        return s;
        return 0; /* every slot live but none current: cannot happen */
}

static void gen_open(struct dedup_ids *ids, struct window *w, int64_t now)
{
        uint32_t s = slot_next(w);

        slot_drop(ids, w, s);
        w->slot[s].gen = ids->next_gen++;
        w->slot[s].first_ms = w->slot[s].last_ms = now;
        w->slot[s].ids = 0;
        w->slot[s].dirty = 1;
        w->cur = s;
}

static int gen_full(const struct dedup_ids *ids, const struct window *w,
                    int64_t now)
{
        const struct gen_slot *g = &w->slot[w->cur];
        int64_t span = ids->conf.max_age_ms / GENS;

        if (g->ids >= ids->gen_cap)
                return 1;
        return ids->conf.max_age_ms > 0 && now - g->first_ms >= (span ? span : 1);
}

/* ------------------------------------------------------------------ */
/* This batch's ids                                                    */
/* ------------------------------------------------------------------ */

static int rindex_put(struct dedup_ids *ids, size_t row)
{
        size_t i, mask;

        if ((ids->nrows + 1) * 2 > ids->rindex_cap) {
                size_t ncap = ids->rindex_cap ? ids->rindex_cap * 2 : 1024;
                uint32_t *n = calloc(ncap, sizeof(*n));
                size_t r;
                if (!n || ncap > UINT32_MAX) {
                        free(n);
                        return -1;
                }
                ids->mem += (ncap - ids->rindex_cap) * sizeof(*n);
                free(ids->rindex);
                ids->rindex = n;
                ids->rindex_cap = ncap;
                /* Re-index every row but the new one. */
                for (r = 0; r < row; r++) {
                        mask = ncap - 1;
                        for (i = ids->rows[r].id.lo & mask; n[i];
                             i = (i + 1) & mask)
                                ;
                        n[i] = (uint32_t)(r + 1);
                }
        }
        mask = ids->rindex_cap - 1;
        for (i = ids->rows[row].id.lo & mask; ids->rindex[i];
             i = (i + 1) & mask)
                ;
        ids->rindex[i] = (uint32_t)(row + 1);
        return 0;
}

static const struct dedup_id_row *rindex_find(const struct dedup_ids *ids,
                                              const struct dedup_id *id)
{
        size_t i, mask = ids->rindex_cap - 1;

        if (!ids->rindex_cap)
                return NULL;
        for (i = id->lo & mask; ids->rindex[i]; i = (i + 1) & mask) {
                const struct dedup_id_row *r = &ids->rows[ids->rindex[i] - 1];
                if (r->id.lo == id->lo && r->id.hi == id->hi)
                        return r;
        }
        return NULL;
}

static int row_add(struct dedup_ids *ids, uint64_t gen,
                   const struct dedup_id *id, uint32_t part, int64_t offset)
{
        struct dedup_id_row *r;

        if (ids->nrows >= UINT32_MAX - 1 ||
            grow(ids, (void **)&ids->rows, &ids->rows_cap, ids->nrows + 1,
                 sizeof(*ids->rows)))
                return -1;
        r = &ids->rows[ids->nrows];
        r->gen = gen;
        r->id = *id;
        r->part = part;
        r->offset = offset;
        if (rindex_put(ids, ids->nrows))
                return -1;
        ids->nrows++;
        return 0;
}

/* ------------------------------------------------------------------ */
/* Checking                                                            */
/* ------------------------------------------------------------------ */

static uint32_t slot_of_gen(const struct window *w, uint64_t gen)
{
        uint32_t s;

        for (s = 0; s < GENS; s++)
                if (gen && w->slot[s].gen == gen)
                        return s;
        return NONE;
}

int ids_check(struct dedup_ids *ids, uint32_t window,
              const struct dedup_id *id, uint32_t part, int64_t offset,
              int64_t now_ms, uint32_t *first_part, int64_t *first_offset)
{
        struct window *w = &ids->win[window];
        uint64_t *blk = block_of(w, id);
        uint64_t m = mask_of(id);
        uint32_t maybe = 0; /* bit s: slot s says "maybe" */
        uint32_t s, i;

        for (s = 0; s < GENS; s++)
                if ((blk[s] & m) == m && w->slot[s].gen)
                        maybe |= (uint32_t)1 << s;
        if (maybe) {
                const struct dedup_id_row *r = rindex_find(ids, id);
                if (r && slot_of_gen(w, r->gen) != NONE) {
                        *first_part = r->part;
                        *first_offset = r->offset;
                        return 1;
                }
                /* Newest generation first: it is the likeliest. */
                for (i = 0; i < GENS && ids->lookup; i++) {
                        int rc;
                        s = (w->cur == NONE ? 0 : w->cur + GENS - i) % GENS;
                        if (!(maybe & ((uint32_t)1 << s)))
                                continue;
                        rc = ids->lookup(ids->lookup_opaque, window,
                                         w->slot[s].gen, id, first_part,
                                         first_offset);
                        if (rc)
                                return rc < 0 ? -1 : 1;
                }
        }

        if (w->cur == NONE || gen_full(ids, w, now_ms))
                gen_open(ids, w, now_ms);
        s = w->cur;
        if (row_add(ids, w->slot[s].gen, id, part, offset))
                return -1;
        blk[s] |= m;
        w->slot[s].ids++;
        w->slot[s].last_ms = now_ms;
        w->slot[s].dirty = 1;
        return 0;
}

void ids_tick(struct dedup_ids *ids, int64_t now_ms)
{
        uint32_t i, s;

        if (ids->conf.max_age_ms <= 0)
                return;
        for (i = 0; i < ids->nwin; i++)
                for (s = 0; s < GENS; s++) {
                        struct gen_slot *g = &ids->win[i].slot[s];
                        if (g->gen && now_ms - g->last_ms > ids->conf.max_age_ms)
                                slot_drop(ids, &ids->win[i], s);
                }
}

/* ------------------------------------------------------------------ */
/* Persistence                                                         */
/* ------------------------------------------------------------------ */

void ids_batch_clear(struct dedup_ids *ids)
{
        uint32_t i, s;

        for (i = 0; i < ids->nwin; i++)
                for (s = 0; s < GENS; s++)
                        ids->win[i].slot[s].dirty = 0;
        if (ids->nrows && ids->rindex)
                memset(ids->rindex, 0, ids->rindex_cap * sizeof(*ids->rindex));
        ids->nrows = 0;
        ids->ndropped = 0;
}

const struct dedup_id_row *ids_new_rows(const struct dedup_ids *ids,
                                        size_t *n)
{
        *n = ids->nrows;
        return ids->rows;
}

int ids_gens_dirty_foreach(struct dedup_ids *ids, dedup_gen_cb *cb,
                           void *opaque)
{
        struct dedup_gen_view gv;
        uint32_t i, s;
        int rc;

        for (i = 0; i < ids->nwin; i++)
                for (s = 0; s < GENS; s++) {
                        const struct gen_slot *g = &ids->win[i].slot[s];
                        if (!g->gen || !g->dirty)
                                continue;
                        gv.window = i;
                        gv.gen = g->gen;
                        gv.first_ms = g->first_ms;
                        gv.last_ms = g->last_ms;
                        gv.ids = g->ids;
                        if ((rc = cb(opaque, &gv)))
                                return rc;
                }
        return 0;
}

const uint64_t *ids_gens_dropped(const struct dedup_ids *ids, size_t *n)
{
        *n = ids->ndropped;
        return ids->dropped;
}

int ids_gen_restore(struct dedup_ids *ids, const struct dedup_gen_view *gv)
{
        struct window *w;
        uint32_t s;

        if (gv->window >= ids->nwin || !gv->gen)
                return -1;
        w = &ids->win[gv->window];
        if (slot_of_gen(w, gv->gen) != NONE ||
            (w->cur != NONE && w->slot[w->cur].gen > gv->gen))
                return -1; /* not oldest first */
        s = slot_next(w);
        slot_drop(ids, w, s);
        w->slot[s].gen = gv->gen;
        w->slot[s].first_ms = gv->first_ms;
        w->slot[s].last_ms = gv->last_ms;
        w->slot[s].ids = gv->ids;
        w->slot[s].dirty = 0;
        w->cur = s;
        if (gv->gen >= ids->next_gen)
                ids->next_gen = gv->gen + 1;
        return 0;
}

int ids_id_restore(struct dedup_ids *ids, uint32_t window, uint64_t gen,
                   const struct dedup_id *id)
{
        struct window *w;
        uint32_t s;

        if (window >= ids->nwin)
                return -1;
        w = &ids->win[window];
        s = slot_of_gen(w, gen);
        if (s == NONE)
                return -1;
        block_of(w, id)[s] |= mask_of(id);
        return 0;
}

uint64_t ids_window_ids(const struct dedup_ids *ids, uint32_t window)
{
        uint64_t n = 0;
        uint32_t s;

        if (window >= ids->nwin)
                return 0;
        for (s = 0; s < GENS; s++)
                n += ids->win[window].slot[s].gen ? ids->win[window].slot[s].ids
                                                  : 0;
        return n;
}

size_t ids_memory(const struct dedup_ids *ids)
{
        return ids ? ids->mem : 0;
}
