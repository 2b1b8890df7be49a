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
 * dedup_windows_tick().
 *
 * The current generation is open: its ids are also held in memory (rows,
 * with a hash index), so a "maybe" there is settled without the store.  A
 * generation closed during a batch stays in memory until the batch is
 * persisted, when the store receives it whole and sorted.  Only closed
 * generations are asked of the store.  This way the store only ever
 * appends: a batch of ids to the open generation, a sorted run for a
 * closed one (random inserts into an index cost SQLite 3 us per id).
 *
 * Each generation has a Bloom filter; the filters are interleaved so that
 * one id touches one block of DEDUP_WINDOW_GENS 64-bit words (one word per
 * generation, 128 contiguous bytes: two cache lines) and sets or tests K
 * bits in its generation's word.  With 64 bits (8 bytes) per id and K = 8,
 * about 0.04% of new ids find a "maybe" somewhere in a full window of 16
 * generations (tests/test_window.c measures it); 32 bits gave 0.4%, whose
 * store lookups took 6% of a scan's consumer thread (about 22,000 per 5M
 * records), 24 bits 1%, and 32 generations of 24 bits 2.5%, since
 * one-word blocks fill unevenly.  A "no" in every generation needs neither
 * memory nor store.
 */
#include <stdlib.h>
#include <string.h>

#include "../base/grow.h"
#include "internal.h"

#define GENS DEDUP_WINDOW_GENS
#define BITS_PER_ID 64
#define K 8
#define NONE UINT32_MAX
#define WINDOW_ALIGN ((size_t)2 << 20)

struct gen_slot {
        uint64_t gen; /* 0: empty */
        int64_t first_ms, last_ms;
        uint64_t ids;
        int dirty;
        int closed;    /* no longer the current generation */
        int in_memory; /* its ids are among the rows */
};

struct window {
        struct gen_slot slot[GENS];
        uint32_t cur;    /* slot of the current generation, or NONE */
        uint64_t *bloom; /* nblocks * GENS words; (block, slot) at
                            block * GENS + slot */
        uint64_t nblocks;
        size_t bloom_bytes;
};

struct closed_gen {
        uint32_t window;
        uint64_t gen;
};

struct dedup_windows {
        struct dedup_window_config conf;
        uint64_t gen_cap;
        uint64_t next_gen;
        size_t mem;

        struct window *win;
        uint32_t nwin;

        dedup_id_lookup_cb *lookup;
        void *lookup_opaque;

        /* Ids of the generations in memory, in arrival order; rows from
         * persisted on are new.  An index over them by id (row + 1,
         * linear probing). */
        struct dedup_id_row *rows;
        size_t nrows, rows_cap, persisted;
        uint32_t *rindex;
        size_t rindex_cap; /* power of two, or 0 */
        int compact;       /* rows of generations no longer open remain */

        /* This batch: closed and dropped generations. */
        struct closed_gen *closed;
        size_t nclosed, closed_cap;
        uint64_t *dropped;
        size_t ndropped, dropped_cap;
};

static int grow(struct dedup_windows *ws, void **arr, size_t *cap, size_t need,
                size_t elem)
{
        return grow_array(arr, cap, need, elem, 64, &ws->mem);
}

struct dedup_windows *dedup_windows_new(const struct dedup_window_config *conf)
{
        struct dedup_windows *ws = calloc(1, sizeof(*ws));

        if (!ws)
                return NULL;
        ws->conf = *conf;
        ws->gen_cap = conf->max_ids / GENS + (conf->max_ids % GENS != 0);
        if (!ws->gen_cap)
                ws->gen_cap = 1;
        ws->next_gen = 1;
        ws->mem = sizeof(*ws);
        return ws;
}

void dedup_windows_free(struct dedup_windows *ws)
{
        uint32_t i;

        if (!ws)
                return;
        for (i = 0; i < ws->nwin; i++)
                free(ws->win[i].bloom);
        free(ws->win);
        free(ws->rows);
        free(ws->rindex);
        free(ws->closed);
        free(ws->dropped);
        free(ws);
}

int dedup_windows_add(struct dedup_windows *ws, uint32_t *window)
{
        struct window *w, *nw;
        uint64_t nblocks = (ws->gen_cap * BITS_PER_ID + 63) / 64;
        size_t align;

        if (nblocks > SIZE_MAX / (GENS * sizeof(uint64_t)))
                return -1;
        nw = realloc(ws->win, (ws->nwin + 1) * sizeof(*nw));
        if (!nw)
                return -1;
        ws->win = nw;
        w = &nw[ws->nwin];
        memset(w, 0, sizeof(*w));
        w->cur = NONE;
        w->nblocks = nblocks;
        /* From 2 MiB up, aligned to 2 MiB and rounded up to it, so that
         * the caller may back it with huge pages
         * (dedup_tracker_window_filters()): each check is a random access,
         * a TLB miss on 4 KiB pages.  Smaller: cache-line aligned. */
        w->bloom_bytes = (size_t)nblocks * GENS * sizeof(uint64_t);
        align = w->bloom_bytes >= WINDOW_ALIGN ? WINDOW_ALIGN : 64;
        w->bloom_bytes = (w->bloom_bytes + align - 1) / align * align;
        w->bloom = aligned_alloc(align, w->bloom_bytes);
        if (!w->bloom)
                return -1;
        memset(w->bloom, 0, w->bloom_bytes);
        ws->mem += sizeof(*w) + w->bloom_bytes;
        *window = ws->nwin++;
        return 0;
}

void *dedup_windows_filters(const struct dedup_windows *ws, uint32_t window,
                            size_t *bytes)
{
        if (window >= ws->nwin)
                return NULL;
        *bytes = ws->win[window].bloom_bytes;
        return ws->win[window].bloom;
}

uint32_t dedup_windows_count(const struct dedup_windows *ws)
{
        return ws->nwin;
}

void dedup_windows_set_lookup(struct dedup_windows *ws, dedup_id_lookup_cb *cb,
                              void *opaque)
{
        ws->lookup = cb;
        ws->lookup_opaque = opaque;
}

/* ------------------------------------------------------------------ */
/* Filters                                                             */
/* ------------------------------------------------------------------ */

/* The block of id: lo scaled to [0, nblocks) by a multiply (its high
 * bits), not lo % nblocks: a 64-bit division was a tenth of the cost of
 * a check and its prefetch.  The filters are not stored (they are rebuilt
 * from the ids at load), so the mapping may change between versions. */
static uint64_t *block_of(const struct window *w, const struct dedup_id *id)
{
        __extension__ typedef unsigned __int128 u128;

        return &w->bloom[(uint64_t)(((u128)id->lo * w->nblocks) >> 64) * GENS];
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

static uint32_t slot_of_gen(const struct window *w, uint64_t gen)
{
        uint32_t s;

        for (s = 0; s < GENS; s++)
                if (gen && w->slot[s].gen == gen)
                        return s;
        return NONE;
}

static void slot_drop(struct dedup_windows *ws, struct window *w, uint32_t s)
{
        uint64_t b;

        if (!w->slot[s].gen)
                return;
        if (!grow(ws, (void **)&ws->dropped, &ws->dropped_cap,
                  ws->ndropped + 1, sizeof(*ws->dropped)))
                ws->dropped[ws->ndropped++] = w->slot[s].gen;
        /* On failure the generation's ids stay in the store; they can do
         * no harm: no filter points at them any more. */
        for (b = 0; b < w->nblocks; b++)
                w->bloom[b * GENS + s] = 0;
        if (w->slot[s].in_memory)
                ws->compact = 1;
        memset(&w->slot[s], 0, sizeof(w->slot[s]));
        if (w->cur == s)
                w->cur = NONE;
}

/* The current generation of window is no longer open. */
static void gen_close(struct dedup_windows *ws, uint32_t window)
{
        struct window *w = &ws->win[window];
        struct gen_slot *g;

        if (w->cur == NONE)
                return;
        g = &w->slot[w->cur];
        if (g->closed)
                return;
        g->closed = 1;
        g->dirty = 1;
        ws->compact = 1;
        if (!grow(ws, (void **)&ws->closed, &ws->closed_cap, ws->nclosed + 1,
                  sizeof(*ws->closed))) {
                ws->closed[ws->nclosed].window = window;
                ws->closed[ws->nclosed].gen = g->gen;
                ws->nclosed++;
        }
        /* On failure the generation is never persisted sorted: its batch
         * rows stay where they are, still found through their filter
         * only while this process runs.  The tracker is not failed for
         * it: losing an index costs detections, not correctness. */
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

static void gen_open(struct dedup_windows *ws, uint32_t window, int64_t now)
{
        struct window *w = &ws->win[window];
        uint32_t s;

        gen_close(ws, window);
        s = slot_next(w);
        slot_drop(ws, w, s);
        w->slot[s].gen = ws->next_gen++;
        w->slot[s].first_ms = w->slot[s].last_ms = now;
        w->slot[s].ids = 0;
        w->slot[s].dirty = 1;
        w->slot[s].closed = 0;
        w->slot[s].in_memory = 1;
        w->cur = s;
}

static int gen_full(const struct dedup_windows *ws, const struct window *w,
                    int64_t now)
{
        const struct gen_slot *g = &w->slot[w->cur];
        int64_t span = ws->conf.max_age_ms / GENS;

        if (g->ids >= ws->gen_cap)
                return 1;
        return ws->conf.max_age_ms > 0 &&
               now - g->first_ms >= (span ? span : 1);
}

/* ------------------------------------------------------------------ */
/* Rows in memory                                                      */
/* ------------------------------------------------------------------ */

static void rindex_insert(uint32_t *idx, size_t cap, uint64_t key, size_t row)
{
        size_t i, mask = cap - 1;

        for (i = key & mask; idx[i]; i = (i + 1) & mask)
                ;
        idx[i] = (uint32_t)(row + 1);
}

/* Rebuilds the index for the rows, at least twice their number. */
static int rindex_build(struct dedup_windows *ws, size_t need)
{
        size_t ncap = ws->rindex_cap ? ws->rindex_cap : 1024, r;
        uint32_t *n;

        while (ncap < need * 2)
                ncap *= 2;
        if (ncap > UINT32_MAX)
                return -1;
        if (ncap != ws->rindex_cap) {
                n = calloc(ncap, sizeof(*n));
                if (!n)
                        return -1;
                ws->mem = ws->mem + ncap * sizeof(*n) -
                          ws->rindex_cap * sizeof(*n);
                free(ws->rindex);
                ws->rindex = n;
                ws->rindex_cap = ncap;
        } else {
                memset(ws->rindex, 0, ncap * sizeof(*ws->rindex));
        }
        for (r = 0; r < ws->nrows; r++)
                rindex_insert(ws->rindex, ws->rindex_cap, ws->rows[r].id.lo,
                              r);
        return 0;
}

static uint32_t slot_of_gen(const struct window *w, uint64_t gen);

/*
 * The row of id in window, of a generation still live there.  The index
 * holds the rows of every window (the same id may be in several, one per
 * topic, and in a generation dropped during this batch): probing goes on
 * past rows of other windows and of dropped generations, or a repeat in
 * one topic would hide behind another topic's row.
 */
static const struct dedup_id_row *rindex_find(const struct dedup_windows *ws,
                                              uint32_t window,
                                              const struct dedup_id *id)
{
        const struct window *w = &ws->win[window];
        size_t i, mask = ws->rindex_cap - 1;

        if (!ws->rindex_cap)
                return NULL;
        for (i = id->lo & mask; ws->rindex[i]; i = (i + 1) & mask) {
                const struct dedup_id_row *r = &ws->rows[ws->rindex[i] - 1];
                if (r->id.lo == id->lo && r->id.hi == id->hi &&
                    r->window == window && slot_of_gen(w, r->gen) != NONE)
                        return r;
        }
        return NULL;
}

static int row_add(struct dedup_windows *ws, uint32_t window, uint64_t gen,
                   const struct dedup_id *id, uint32_t part, int64_t offset)
{
        struct dedup_id_row *r;

        if (ws->nrows >= UINT32_MAX - 1 ||
            grow(ws, (void **)&ws->rows, &ws->rows_cap, ws->nrows + 1,
                 sizeof(*ws->rows)))
                return -1;
        r = &ws->rows[ws->nrows];
        r->gen = gen;
        r->id = *id;
        r->window = window;
        r->part = part;
        r->offset = offset;
        ws->nrows++;
        if ((ws->nrows + 1) * 2 > ws->rindex_cap)
                return rindex_build(ws, ws->nrows);
        rindex_insert(ws->rindex, ws->rindex_cap, id->lo, ws->nrows - 1);
        return 0;
}

int dedup_windows_gen_open(const struct dedup_windows *ws, uint32_t window,
                           uint64_t gen)
{
        const struct window *w;

        if (window >= ws->nwin)
                return 0;
        w = &ws->win[window];
        return w->cur != NONE && w->slot[w->cur].gen == gen &&
               !w->slot[w->cur].closed;
}

/* Whether row r belongs to a generation still open in its window. */
static int row_open(const struct dedup_windows *ws,
                    const struct dedup_id_row *r)
{
        return dedup_windows_gen_open(ws, r->window, r->gen);
}

/* ------------------------------------------------------------------ */
/* Checking                                                            */
/* ------------------------------------------------------------------ */

void dedup_windows_prefetch(const struct dedup_windows *ws, uint32_t window,
                            const struct dedup_id *id)
{
        const uint64_t *blk = block_of(&ws->win[window], id);

        __builtin_prefetch(blk);
        __builtin_prefetch(blk + GENS - 1);
        /* The open generation's index slot: row_add() writes it, a
         * "maybe" reads it (rindex_find); a miss of its own, as large as
         * the filters' once the index outgrows the cache. */
        if (ws->rindex_cap)
                __builtin_prefetch(&ws->rindex[id->lo & (ws->rindex_cap - 1)],
                                   1);
}

/* What a window keeps of an id (DEDUP_WINDOW_HI_MASK).  The filters
 * read only these bits: lo for the block, hi's low 48 for the mask. */
static struct dedup_id id_cut(const struct dedup_id *id)
{
        struct dedup_id c = {.lo = id->lo,
                             .hi = id->hi & DEDUP_WINDOW_HI_MASK};

        return c;
}

int dedup_windows_check(struct dedup_windows *ws, uint32_t window,
                        const struct dedup_id *whole, uint32_t part,
                        int64_t offset, int64_t now_ms, uint32_t *first_part,
                        int64_t *first_offset)
{
        struct window *w = &ws->win[window];
        const struct dedup_id cut = id_cut(whole), *id = &cut;
        uint64_t *blk = block_of(w, id);
        uint64_t m = mask_of(id);
        uint32_t maybe = 0; /* bit s: slot s says "maybe" */
        uint32_t s, i;

        for (s = 0; s < GENS; s++)
                if ((blk[s] & m) == m && w->slot[s].gen)
                        maybe |= (uint32_t)1 << s;
        if (maybe) {
                const struct dedup_id_row *r = rindex_find(ws, window, id);
                if (r) {
                        *first_part = r->part;
                        *first_offset = r->offset;
                        return 1;
                }
                /* Newest generation first: it is the likeliest.  The
                 * rows answered for the ones in memory. */
                for (i = 0; i < GENS && ws->lookup; i++) {
                        int rc;
                        s = (w->cur == NONE ? 0 : w->cur + GENS - i) % GENS;
                        if (!(maybe & ((uint32_t)1 << s)) ||
                            w->slot[s].in_memory)
                                continue;
                        rc = ws->lookup(ws->lookup_opaque, window,
                                        w->slot[s].gen, id, first_part,
                                        first_offset);
                        if (rc)
                                return rc < 0 ? -1 : 1;
                }
        }

        if (w->cur == NONE || gen_full(ws, w, now_ms))
                gen_open(ws, window, now_ms);
        s = w->cur;
        if (row_add(ws, window, w->slot[s].gen, id, part, offset))
                return -1;
        blk[s] |= m;
        w->slot[s].ids++;
        w->slot[s].last_ms = now_ms;
        w->slot[s].dirty = 1;
        return 0;
}

void dedup_windows_tick(struct dedup_windows *ws, int64_t now_ms)
{
        uint32_t i, s;

        if (ws->conf.max_age_ms <= 0)
                return;
        for (i = 0; i < ws->nwin; i++)
                for (s = 0; s < GENS; s++) {
                        struct gen_slot *g = &ws->win[i].slot[s];
                        if (g->gen &&
                            now_ms - g->last_ms > ws->conf.max_age_ms)
                                slot_drop(ws, &ws->win[i], s);
                }
}

/* ------------------------------------------------------------------ */
/* Persistence                                                         */
/* ------------------------------------------------------------------ */

void dedup_windows_batch_clear(struct dedup_windows *ws)
{
        uint32_t i, s;
        size_t r, k;

        for (i = 0; i < ws->nwin; i++)
                for (s = 0; s < GENS; s++) {
                        struct gen_slot *g = &ws->win[i].slot[s];
                        g->dirty = 0;
                        if (g->closed)
                                g->in_memory = 0;
                }
        if (ws->compact) {
                /* Keep the rows of open generations only. */
                for (r = k = 0; r < ws->nrows; r++)
                        if (row_open(ws, &ws->rows[r]))
                                ws->rows[k++] = ws->rows[r];
                ws->nrows = k;
                ws->compact = 0;
                /* Without memory for the index, rows are not found until
                 * the next rebuild: detections lost, nothing else. */
                (void)rindex_build(ws, ws->nrows);
        }
        ws->persisted = ws->nrows;
        ws->nclosed = 0;
        ws->ndropped = 0;
}

const struct dedup_id_row *
dedup_windows_new_rows(const struct dedup_windows *ws, size_t *n)
{
        *n = ws->nrows - ws->persisted;
        return ws->rows ? ws->rows + ws->persisted : NULL;
}

static void gen_view(const struct gen_slot *g, uint32_t window,
                     struct dedup_gen_view *gv)
{
        gv->window = window;
        gv->gen = g->gen;
        gv->first_ms = g->first_ms;
        gv->last_ms = g->last_ms;
        gv->ids = g->ids;
        gv->closed = g->closed;
}

int dedup_windows_gens_dirty_foreach(struct dedup_windows *ws,
                                     dedup_gen_cb *cb, void *opaque)
{
        struct dedup_gen_view gv;
        uint32_t i, s;
        int rc;

        for (i = 0; i < ws->nwin; i++)
                for (s = 0; s < GENS; s++) {
                        const struct gen_slot *g = &ws->win[i].slot[s];
                        if (!g->gen || !g->dirty)
                                continue;
                        gen_view(g, i, &gv);
                        if ((rc = cb(opaque, &gv)))
                                return rc;
                }
        return 0;
}

static int row_less(const struct dedup_id_row *x, const struct dedup_id_row *y)
{
        return x->id.lo < y->id.lo ||
               (x->id.lo == y->id.lo && x->id.hi < y->id.hi);
}

/*
 * Copies the rows of gen into out (n of them), sorted by id.  Ids are
 * hashes, uniform in lo: one counting pass on lo's top bits spreads them
 * over about n buckets, and insertion sort finishes each (a few rows).
 * qsort() cost a tenth of the audit's time here.
 */
static int rows_sort(const struct dedup_windows *ws, uint64_t gen,
                     struct dedup_id_row *out, size_t n)
{
        size_t nb = 256, r, b, i;
        unsigned shift = 56;
        size_t *start;

        while (nb < n && nb < ((size_t)1 << 20)) {
                nb <<= 1;
                shift--;
        }
        start = calloc(nb + 1, sizeof(*start));
        if (!start)
                return -1;
        for (r = 0; r < ws->nrows; r++)
                if (ws->rows[r].gen == gen)
                        start[(ws->rows[r].id.lo >> shift) + 1]++;
        for (b = 0; b < nb; b++)
                start[b + 1] += start[b];
        for (r = 0; r < ws->nrows; r++)
                if (ws->rows[r].gen == gen)
                        out[start[ws->rows[r].id.lo >> shift]++] = ws->rows[r];
        /* start[b] is now the end of bucket b: sort each run. */
        for (b = 0, i = 0; b < nb; i = start[b++]) {
                size_t j, k;
                for (j = i + 1; j < start[b]; j++) {
                        struct dedup_id_row x = out[j];
                        for (k = j; k > i && row_less(&x, &out[k - 1]); k--)
                                out[k] = out[k - 1];
                        out[k] = x;
                }
        }
        free(start);
        return 0;
}

int dedup_windows_gens_closed_foreach(struct dedup_windows *ws,
                                      dedup_gen_rows_cb *cb, void *opaque)
{
        struct dedup_id_row *sorted = NULL;
        struct dedup_gen_view gv;
        size_t c, r, n;
        int rc = 0;

        for (c = 0; c < ws->nclosed && !rc; c++) {
                const struct closed_gen *cg = &ws->closed[c];
                const struct window *w = &ws->win[cg->window];
                uint32_t s = slot_of_gen(w, cg->gen);
                if (s == NONE || !w->slot[s].in_memory)
                        continue; /* dropped since */
                for (r = n = 0; r < ws->nrows; r++)
                        n += ws->rows[r].gen == cg->gen;
                free(sorted);
                sorted = malloc((n ? n : 1) * sizeof(*sorted));
                if (!sorted || rows_sort(ws, cg->gen, sorted, n)) {
                        free(sorted);
                        return -1;
                }
                gen_view(&w->slot[s], cg->window, &gv);
                rc = cb(opaque, &gv, sorted, n);
        }
        free(sorted);
        return rc;
}

size_t dedup_windows_gens_closed(const struct dedup_windows *ws)
{
        return ws->nclosed;
}

const uint64_t *dedup_windows_gens_dropped(const struct dedup_windows *ws,
                                           size_t *n)
{
        *n = ws->ndropped;
        return ws->dropped;
}

int dedup_windows_gen_restore(struct dedup_windows *ws,
                              const struct dedup_gen_view *gv)
{
        struct window *w;
        uint32_t s;

        if (gv->window >= ws->nwin || !gv->gen)
                return -1;
        w = &ws->win[gv->window];
        if (slot_of_gen(w, gv->gen) != NONE ||
            (w->cur != NONE && w->slot[w->cur].gen > gv->gen))
                return -1; /* not oldest first */
        /* Only the newest generation can be open: one before it that is
         * still open (its closing was never persisted) closes now. */
        gen_close(ws, gv->window);
        s = slot_next(w);
        slot_drop(ws, w, s);
        w->slot[s].gen = gv->gen;
        w->slot[s].first_ms = gv->first_ms;
        w->slot[s].last_ms = gv->last_ms;
        w->slot[s].ids = gv->ids;
        w->slot[s].dirty = 0;
        w->slot[s].closed = !!gv->closed;
        w->slot[s].in_memory = !gv->closed;
        w->cur = s;
        if (gv->gen >= ws->next_gen)
                ws->next_gen = gv->gen + 1;
        return 0;
}

int dedup_windows_id_restore(struct dedup_windows *ws, uint32_t window,
                             uint64_t gen, const struct dedup_id *whole)
{
        const struct dedup_id cut = id_cut(whole), *id = &cut;
        struct window *w;
        uint32_t s;

        if (window >= ws->nwin)
                return -1;
        w = &ws->win[window];
        s = slot_of_gen(w, gen);
        if (s == NONE || w->slot[s].in_memory)
                return -1;
        block_of(w, id)[s] |= mask_of(id);
        return 0;
}

int dedup_windows_row_restore(struct dedup_windows *ws,
                              const struct dedup_id_row *row)
{
        struct dedup_id cut;
        struct window *w;
        uint32_t s;

        if (row->window >= ws->nwin)
                return -1;
        w = &ws->win[row->window];
        s = slot_of_gen(w, row->gen);
        if (s == NONE || !w->slot[s].in_memory)
                return -1;
        cut = id_cut(&row->id);
        if (row_add(ws, row->window, row->gen, &cut, row->part, row->offset))
                return -1;
        ws->persisted = ws->nrows; /* it came from the store */
        block_of(w, &cut)[s] |= mask_of(&cut);
        return 0;
}

uint64_t dedup_windows_ids(const struct dedup_windows *ws, uint32_t window)
{
        uint64_t n = 0;
        uint32_t s;

        if (window >= ws->nwin)
                return 0;
        for (s = 0; s < GENS; s++)
                n += ws->win[window].slot[s].gen ? ws->win[window].slot[s].ids
                                                 : 0;
        return n;
}

size_t dedup_windows_memory(const struct dedup_windows *ws)
{
        return ws ? ws->mem : 0;
}
