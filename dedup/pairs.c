/*
 * pairs.c - the tracker's tables: producer names (interned once, refcounted
 * by the pairs that use them), the slab of pairs and the per-part indexes
 * that find them, with the heap accounting of all of it.
 *
 * Pairs live in a slab indexed by uint32 and are found through a per-part
 * open-addressing index keyed by name id.  A consumer delivers a batch of
 * one partition at a time, so each part's index and pairs are kept
 * together (pairs are taken from per-part chunks of the slab) and a batch
 * touches little memory beyond its own part.  Each part also caches its
 * last pair: records come in producer runs.
 */
#include <stdlib.h>
#include <string.h>

#include "../base/grow.h"
#include "dedup.h"
#include "internal.h"

/* ------------------------------------------------------------------ */
/* Allocation with accounting                                          */
/* ------------------------------------------------------------------ */

void *dedup_mem_realloc(struct dedup_tracker *tr, void *p, size_t old_sz,
                        size_t new_sz)
{
        void *q = realloc(p, new_sz);

        if (!q) {
                tr->failed = 1;
                return NULL;
        }
        tr->mem = tr->mem - old_sz + new_sz;
        return q;
}

void dedup_mem_free(struct dedup_tracker *tr, void *p, size_t sz)
{
        if (!p)
                return;
        tr->mem -= sz;
        free(p);
}

uint64_t dedup_sat_add(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Grows an array of elem-sized items to hold at least need items. */
int dedup_mem_grow(struct dedup_tracker *tr, void **arr, size_t *cap,
                   size_t need, size_t elem)
{
        if (grow_array(arr, cap, need, elem, 16, &tr->mem)) {
                tr->failed = 1;
                return -1;
        }
        return 0;
}

int dedup_u32vec_push(struct dedup_tracker *tr, struct u32vec *vec, uint32_t x)
{
        if (dedup_mem_grow(tr, (void **)&vec->v, &vec->cap, vec->n + 1,
                           sizeof(*vec->v)))
                return -1;
        vec->v[vec->n++] = x;
        return 0;
}

/* ------------------------------------------------------------------ */
/* Hashing                                                             */
/* ------------------------------------------------------------------ */

uint64_t dedup_hash_bytes(const char *p, size_t len)
{
        uint64_t h = 0x9e3779b97f4a7c15ULL ^ len;
        uint64_t w;

        while (len >= 8) {
                memcpy(&w, p, 8);
                h = (h ^ dedup_fmix64(w)) * 0x100000001b3ULL;
                p += 8;
                len -= 8;
        }
        w = 0;
        memcpy(&w, p, len);
        return dedup_fmix64(h ^ w);
}

uint64_t dedup_pair_key_hash(uint32_t name)
{
        return dedup_fmix64(name);
}

/* Open-addressing index of uint32 (slot + 1), linear probing. */
static int idx_resize(struct dedup_tracker *tr, uint32_t **idx, uint32_t *mask,
                      size_t live,
                      uint64_t (*keyhash)(struct dedup_tracker *, uint32_t))
{
        size_t cap = *idx ? (size_t)*mask + 1 : 0;
        size_t ncap = cap ? cap : 64;
        uint32_t *nidx;
        size_t i;

        while ((live + 1) * 2 > ncap)
                ncap *= 2;
        if (ncap == cap)
                return 0;
        nidx = dedup_mem_realloc(tr, NULL, 0, ncap * sizeof(*nidx));
        if (!nidx)
                return -1;
        memset(nidx, 0, ncap * sizeof(*nidx));
        for (i = 0; i < cap; i++) {
                uint32_t s = (*idx)[i];
                size_t j;
                if (!s)
                        continue;
                j = keyhash(tr, s - 1) & (ncap - 1);
                while (nidx[j])
                        j = (j + 1) & (ncap - 1);
                nidx[j] = s;
        }
        dedup_mem_free(tr, *idx, cap * sizeof(**idx));
        *idx = nidx;
        *mask = (uint32_t)(ncap - 1);
        return 0;
}

/* Removes slot from the index (backward-shift deletion, no tombstones). */
void dedup_idx_remove(struct dedup_tracker *tr, uint32_t *idx, uint32_t mask,
                      uint32_t slot, uint64_t h,
                      uint64_t (*keyhash)(struct dedup_tracker *, uint32_t))
{
        uint32_t i = (uint32_t)h & mask, j;

        while (idx[i] != slot + 1)
                i = (i + 1) & mask;
        j = i;
        for (;;) {
                uint32_t k;
                j = (j + 1) & mask;
                if (!idx[j])
                        break;
                k = (uint32_t)keyhash(tr, idx[j] - 1) & mask;
                /* Move idx[j] into the hole at i unless its home k lies
                 * cyclically in (i, j]. */
                if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
                        continue;
                idx[i] = idx[j];
                i = j;
        }
        idx[i] = 0;
}

static uint64_t name_keyhash(struct dedup_tracker *tr, uint32_t slot)
{
        return tr->names[slot]->hash;
}

uint64_t dedup_pair_keyhash(struct dedup_tracker *tr, uint32_t slot)
{
        return dedup_pair_key_hash(dedup_pair_at(tr, slot)->name);
}

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */

uint32_t dedup_name_find(struct dedup_tracker *tr, const char *p, size_t len,
                         uint64_t h)
{
        uint32_t i, s;

        if (!tr->name_idx)
                return NONE;
        for (i = (uint32_t)h & tr->name_idx_mask; (s = tr->name_idx[i]);
             i = (i + 1) & tr->name_idx_mask) {
                const struct dedup_name *nm = tr->names[s - 1];
                if (nm->hash == h && nm->len == len &&
                    !memcmp(nm->bytes, p, len))
                        return s - 1;
        }
        return NONE;
}

uint32_t dedup_name_ref(struct dedup_tracker *tr, const char *p, size_t len)
{
        uint64_t h = dedup_hash_bytes(p, len);
        uint32_t id = dedup_name_find(tr, p, len, h), i;
        struct dedup_name *nm;

        if (id != NONE) {
                tr->names[id]->refcnt++;
                return id;
        }
        if (idx_resize(tr, &tr->name_idx, &tr->name_idx_mask, tr->live_names,
                       name_keyhash))
                return NONE;
        nm = dedup_mem_realloc(tr, NULL, 0, sizeof(*nm) + len);
        if (!nm)
                return NONE;
        memset(nm, 0, sizeof(*nm));
        nm->hash = h;
        nm->refcnt = 1;
        nm->epoch = -1;
        nm->pid = -1;
        for (i = 0; i < DEDUP_RETIRED_PIDS; i++)
                nm->retired[i] = -1;
        nm->session_ms = -1;
        nm->session_offset = -1;
        nm->pid_ms = -1;
        nm->len = (uint32_t)len;
        memcpy(nm->bytes, p, len);
        if (tr->name_free.n) {
                id = tr->name_free.v[--tr->name_free.n];
        } else {
                size_t cap = tr->names_cap;
                if (dedup_mem_grow(tr, (void **)&tr->names, &cap,
                                   (size_t)tr->nnames_slab + 1,
                                   sizeof(*tr->names))) {
                        dedup_mem_free(tr, nm, sizeof(*nm) + len);
                        return NONE;
                }
                tr->names_cap = (uint32_t)cap;
                id = tr->nnames_slab++;
        }
        tr->names[id] = nm;
        tr->live_names++;
        for (i = (uint32_t)h & tr->name_idx_mask; tr->name_idx[i];
             i = (i + 1) & tr->name_idx_mask)
                ;
        tr->name_idx[i] = id + 1;
        return id;
}

void dedup_name_unref(struct dedup_tracker *tr, uint32_t id)
{
        struct dedup_name *nm = tr->names[id];

        if (--nm->refcnt)
                return;
        dedup_idx_remove(tr, tr->name_idx, tr->name_idx_mask, id, nm->hash,
                         name_keyhash);
        tr->live_names--;
        /* Events of this batch may still point at the bytes. */
        if (dedup_mem_grow(tr, (void **)&tr->graveyard, &tr->grave_cap,
                           tr->ngrave + 1, sizeof(*tr->graveyard)) == 0)
                tr->graveyard[tr->ngrave++] = nm;
        else
                dedup_mem_free(tr, nm, sizeof(*nm) + nm->len);
        tr->names[id] = NULL;
        dedup_u32vec_push(tr, &tr->name_free, id);
}

/* ------------------------------------------------------------------ */
/* Pairs                                                               */
/* ------------------------------------------------------------------ */

uint32_t dedup_pair_find(struct dedup_tracker *tr, uint32_t part,
                         uint32_t name)
{
        const struct dedup_part *p = &tr->parts[part];
        uint32_t i, s;

        if (!p->idx)
                return NONE;
        for (i = (uint32_t)dedup_pair_key_hash(name) & p->mask;
             (s = p->idx[i]); i = (i + 1) & p->mask) {
                if (dedup_pair_at(tr, s - 1)->name == name)
                        return s - 1;
        }
        return NONE;
}

/* Makes slots [0, n) addressable; new blocks are zeroed (not live). */
static int slab_reserve(struct dedup_tracker *tr, size_t n)
{
        while (tr->nblocks << PAIR_BLOCK_SHIFT < n) {
                struct dedup_pair *b;
                if (n > (size_t)UINT32_MAX - PAIR_BLOCK)
                        return -1;
                if (dedup_mem_grow(tr, (void **)&tr->blocks, &tr->blocks_cap,
                                   tr->nblocks + 1, sizeof(*tr->blocks)))
                        return -1;
                b = dedup_mem_realloc(tr, NULL, 0, PAIR_BLOCK * sizeof(*b));
                if (!b)
                        return -1;
                memset(b, 0, PAIR_BLOCK * sizeof(*b));
                tr->blocks[tr->nblocks++] = b;
        }
        return 0;
}

/* Creates a pair for (part, producer); takes a name reference. */
uint32_t dedup_pair_new(struct dedup_tracker *tr, uint32_t part,
                        const char *producer, size_t len)
{
        struct dedup_part *p = &tr->parts[part];
        uint32_t name, slot, i;
        struct dedup_pair *pr;

        if (idx_resize(tr, &p->idx, &p->mask, p->live, dedup_pair_keyhash))
                return NONE;
        name = dedup_name_ref(tr, producer, len);
        if (name == NONE)
                return NONE;
        if (p->chunk_next < p->chunk_end) {
                slot = p->chunk_next++;
        } else if (tr->pair_free.n) {
                slot = tr->pair_free.v[--tr->pair_free.n];
        } else {
                /* A new chunk for this part: 4..64 slots, so that parts
                 * with few producers waste little. */
                uint32_t chunk = p->live < 4 ? 4 : p->live > 64 ? 64 : p->live;
                if (slab_reserve(tr, tr->npairs_slab + chunk)) {
                        dedup_name_unref(tr, name);
                        return NONE;
                }
                slot = tr->npairs_slab;
                p->chunk_next = slot + 1;
                p->chunk_end = slot + chunk;
                tr->npairs_slab += chunk;
        }
        pr = dedup_pair_at(tr, slot);
        memset(pr, 0, sizeof(*pr));
        pr->part = part;
        pr->name = name;
        pr->flags = PAIR_LIVE;
        pr->last_seq = -1;
        pr->pid = -1;
        tr->live_pairs++;
        p->live++;
        for (i = (uint32_t)dedup_pair_key_hash(name) & p->mask; p->idx[i];
             i = (i + 1) & p->mask)
                ;
        p->idx[i] = slot + 1;
        return slot;
}

void dedup_pair_dirty(struct dedup_tracker *tr, uint32_t slot)
{
        struct dedup_pair *pr = dedup_pair_at(tr, slot);

        if (pr->flags & PAIR_DIRTY)
                return;
        if (dedup_u32vec_push(tr, &tr->dirty, slot) == 0)
                pr->flags |= PAIR_DIRTY;
}

size_t dedup_gapset_size(uint32_t cap)
{
        return sizeof(struct dedup_gapset) + cap * sizeof(struct dedup_gap);
}
int64_t dedup_pair_last_offset(const struct dedup_pair *pr)
{
        return pr->run_len[0] ? pr->run_off[0] + pr->run_len[0] - 1 : -1;
}

uint32_t dedup_pair_lookup(struct dedup_tracker *tr, struct dedup_part *p,
                           uint32_t part, const struct dedup_hdrs *h,
                           int *created)
{
        uint32_t slot = p->cache, name;

        *created = 0;
        if (slot != NONE) {
                const struct dedup_pair *pr = dedup_pair_at(tr, slot);
                const struct dedup_name *nm = tr->names[pr->name];
                if (nm->len == h->producer_len &&
                    !memcmp(nm->bytes, h->producer, nm->len))
                        return slot;
        }
        name = dedup_name_find(tr, h->producer, h->producer_len,
                               dedup_hash_bytes(h->producer, h->producer_len));
        slot = name == NONE ? NONE : dedup_pair_find(tr, part, name);
        if (slot == NONE) {
                slot = dedup_pair_new(tr, part, h->producer, h->producer_len);
                if (slot == NONE)
                        return NONE;
                *created = 1;
        }
        p->cache = slot;
        return slot;
}
