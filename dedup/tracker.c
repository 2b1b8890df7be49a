/*
 * tracker.c - per-(part, producer) sequence tracking.
 *
 * Layout: producer names are interned once (struct dedup_name, refcounted
 * by the pairs that use them); pairs live in a slab indexed by uint32 and
 * are found through a per-part open-addressing index keyed by name id.
 * A consumer delivers a batch of one partition at a time, so each part's
 * index and pairs are kept together (pairs are taken from per-part chunks
 * of the slab) and a batch touches little memory beyond its own part.
 * Each part also caches its last pair: records come in producer runs.
 * Slots freed by expiry are reused only after
 * dedup_tracker_dirty_clear(), so indices in the dirty list stay valid for
 * one batch; names freed by expiry outlive the events that point to them
 * until dedup_tracker_events_clear().
 */
#include <stdlib.h>
#include <string.h>

#include "dedup.h"
#include "internal.h"

#define NONE UINT32_MAX

#define PAIR_LIVE 0x1u
#define PAIR_DIRTY 0x2u
#define PAIR_REBASELINE 0x4u
#define PAIR_GAPLIST 0x8u

struct dedup_name {
        uint64_t hash;
        uint32_t refcnt;
        uint32_t len;
        char bytes[];
};

struct dedup_gapset {
        uint32_t n, cap;
        struct dedup_gap g[];
};

struct dedup_pair {
        uint32_t part;
        uint32_t name;
        int32_t epoch;
        uint32_t flags;
        int64_t last_seq; /* -1: none accepted in this epoch yet */
        int64_t last_ms;
        uint64_t records;
        struct dedup_gapset *gaps;
        /* The DEDUP_HISTORY_RUNS latest runs, newest first, as arrays so
         * that no padding is paid per run; run 0 ends at the last accepted
         * record, so its offset needs no field of its own. */
        int64_t run_seq[DEDUP_HISTORY_RUNS];
        int64_t run_off[DEDUP_HISTORY_RUNS];
        uint32_t run_len[DEDUP_HISTORY_RUNS];
};

/* The slab grows by blocks, never by realloc: no copy of the whole slab,
 * and at most one block of slack. */
#define PAIR_BLOCK_SHIFT 12
#define PAIR_BLOCK ((uint32_t)1 << PAIR_BLOCK_SHIFT)

struct dedup_part {
        struct dedup_counts counts;
        uint32_t *idx;  /* pair slot + 1 by name id, 0 = empty */
        uint32_t mask;
        uint32_t live;  /* pairs of this part */
        uint32_t chunk_next, chunk_end; /* slab slots reserved for it */
        uint32_t cache; /* last pair seen on this part, or NONE */
        uint32_t window; /* id window, or NONE */
        int added;
        int from_log_start;
        int compacted;
};

struct u32vec {
        uint32_t *v;
        size_t n, cap;
};

struct dedup_tracker {
        struct dedup_config conf;
        int64_t now_ms;
        int64_t last_expire_ms;
        int failed;
        size_t mem;

        struct dedup_part *parts;
        uint32_t nparts;

        struct dedup_pair **blocks; /* slab: PAIR_BLOCK pairs each */
        size_t nblocks, blocks_cap;
        uint32_t npairs_slab;       /* slots handed out so far */
        size_t live_pairs;
        struct u32vec pair_free;    /* reusable now */
        struct u32vec pair_pending; /* reusable after dirty_clear */

        struct dedup_name **names;
        uint32_t nnames_slab, names_cap;
        size_t live_names;
        struct u32vec name_free;
        uint32_t *name_idx;
        uint32_t name_idx_mask;
        struct dedup_name **graveyard; /* freed at events_clear */
        size_t ngrave, grave_cap;

        struct u32vec dirty;
        struct u32vec gap_pairs; /* pairs with open gaps */
        size_t open_gaps;

        struct dedup_event *ev;
        size_t nev, ev_cap;

        struct dedup_ids *ids;
        uint64_t redeliv_rec; /* part record count at the last redelivered
                                 record (to coalesce the next one) */
};

static struct dedup_pair *pair_at(const struct dedup_tracker *tr,
                                  uint32_t slot)
{
        return &tr->blocks[slot >> PAIR_BLOCK_SHIFT][slot & (PAIR_BLOCK - 1)];
}

/* ------------------------------------------------------------------ */
/* Allocation with accounting                                          */
/* ------------------------------------------------------------------ */

static void *tr_realloc(struct dedup_tracker *tr, void *p, size_t old_sz,
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

static void tr_free(struct dedup_tracker *tr, void *p, size_t sz)
{
        if (!p)
                return;
        tr->mem -= sz;
        free(p);
}

/* Grows an array of elem-sized items to hold at least need items. */
int dedup_grow(void **arr, size_t *cap, size_t need, size_t elem,
               size_t first, size_t *mem)
{
        size_t ncap;
        void *p;

        if (need <= *cap)
                return 0;
        ncap = *cap ? *cap * 2 : first;
        while (ncap < need)
                ncap *= 2;
        p = realloc(*arr, ncap * elem);
        if (!p)
                return -1;
        *mem += (ncap - *cap) * elem;
        *arr = p;
        *cap = ncap;
        return 0;
}

static int tr_grow(struct dedup_tracker *tr, void **arr, size_t *cap,
                   size_t need, size_t elem)
{
        if (dedup_grow(arr, cap, need, elem, 16, &tr->mem)) {
                tr->failed = 1;
                return -1;
        }
        return 0;
}

static int u32vec_push(struct dedup_tracker *tr, struct u32vec *vec,
                       uint32_t x)
{
        if (tr_grow(tr, (void **)&vec->v, &vec->cap, vec->n + 1,
                    sizeof(*vec->v)))
                return -1;
        vec->v[vec->n++] = x;
        return 0;
}

/* ------------------------------------------------------------------ */
/* Hashing                                                             */
/* ------------------------------------------------------------------ */

static uint64_t hash_bytes(const char *p, size_t len)
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

static uint64_t pair_key_hash(uint32_t name)
{
        return dedup_fmix64(name);
}

/* Open-addressing index of uint32 (slot + 1), linear probing. */
static int idx_resize(struct dedup_tracker *tr, uint32_t **idx,
                      uint32_t *mask, size_t live,
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
        nidx = tr_realloc(tr, NULL, 0, ncap * sizeof(*nidx));
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
        tr_free(tr, *idx, cap * sizeof(**idx));
        *idx = nidx;
        *mask = (uint32_t)(ncap - 1);
        return 0;
}

/* Removes slot from the index (backward-shift deletion, no tombstones). */
static void idx_remove(struct dedup_tracker *tr, uint32_t *idx, uint32_t mask,
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

static uint64_t pair_keyhash(struct dedup_tracker *tr, uint32_t slot)
{
        return pair_key_hash(pair_at(tr, slot)->name);
}

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */

static uint32_t name_find(struct dedup_tracker *tr, const char *p, size_t len,
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

/* Returns the name id with one more reference, or NONE on failure. */
static uint32_t name_ref(struct dedup_tracker *tr, const char *p, size_t len)
{
        uint64_t h = hash_bytes(p, len);
        uint32_t id = name_find(tr, p, len, h), i;
        struct dedup_name *nm;

        if (id != NONE) {
                tr->names[id]->refcnt++;
                return id;
        }
        if (idx_resize(tr, &tr->name_idx, &tr->name_idx_mask, tr->live_names,
                       name_keyhash))
                return NONE;
        nm = tr_realloc(tr, NULL, 0, sizeof(*nm) + len);
        if (!nm)
                return NONE;
        nm->hash = h;
        nm->refcnt = 1;
        nm->len = (uint32_t)len;
        memcpy(nm->bytes, p, len);
        if (tr->name_free.n) {
                id = tr->name_free.v[--tr->name_free.n];
        } else {
                size_t cap = tr->names_cap;
                if (tr_grow(tr, (void **)&tr->names, &cap,
                            (size_t)tr->nnames_slab + 1, sizeof(*tr->names))) {
                        tr_free(tr, nm, sizeof(*nm) + len);
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

static void name_unref(struct dedup_tracker *tr, uint32_t id)
{
        struct dedup_name *nm = tr->names[id];

        if (--nm->refcnt)
                return;
        idx_remove(tr, tr->name_idx, tr->name_idx_mask, id, nm->hash,
                   name_keyhash);
        tr->live_names--;
        /* Events of this batch may still point at the bytes. */
        if (tr_grow(tr, (void **)&tr->graveyard, &tr->grave_cap,
                    tr->ngrave + 1, sizeof(*tr->graveyard)) == 0)
                tr->graveyard[tr->ngrave++] = nm;
        else
                tr_free(tr, nm, sizeof(*nm) + nm->len);
        tr->names[id] = NULL;
        u32vec_push(tr, &tr->name_free, id);
}

/* ------------------------------------------------------------------ */
/* Pairs                                                               */
/* ------------------------------------------------------------------ */

static uint32_t pair_find(struct dedup_tracker *tr, uint32_t part,
                          uint32_t name)
{
        const struct dedup_part *p = &tr->parts[part];
        uint32_t i, s;

        if (!p->idx)
                return NONE;
        for (i = (uint32_t)pair_key_hash(name) & p->mask; (s = p->idx[i]);
             i = (i + 1) & p->mask) {
                if (pair_at(tr, s - 1)->name == name)
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
                if (tr_grow(tr, (void **)&tr->blocks, &tr->blocks_cap,
                            tr->nblocks + 1, sizeof(*tr->blocks)))
                        return -1;
                b = tr_realloc(tr, NULL, 0, PAIR_BLOCK * sizeof(*b));
                if (!b)
                        return -1;
                memset(b, 0, PAIR_BLOCK * sizeof(*b));
                tr->blocks[tr->nblocks++] = b;
        }
        return 0;
}

/* Creates a pair for (part, producer); takes a name reference. */
static uint32_t pair_new(struct dedup_tracker *tr, uint32_t part,
                         const char *producer, size_t len)
{
        struct dedup_part *p = &tr->parts[part];
        uint32_t name, slot, i;
        struct dedup_pair *pr;

        if (idx_resize(tr, &p->idx, &p->mask, p->live, pair_keyhash))
                return NONE;
        name = name_ref(tr, producer, len);
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
                        name_unref(tr, name);
                        return NONE;
                }
                slot = tr->npairs_slab;
                p->chunk_next = slot + 1;
                p->chunk_end = slot + chunk;
                tr->npairs_slab += chunk;
        }
        pr = pair_at(tr, slot);
        memset(pr, 0, sizeof(*pr));
        pr->part = part;
        pr->name = name;
        pr->flags = PAIR_LIVE;
        pr->last_seq = -1;
        tr->live_pairs++;
        p->live++;
        for (i = (uint32_t)pair_key_hash(name) & p->mask; p->idx[i];
             i = (i + 1) & p->mask)
                ;
        p->idx[i] = slot + 1;
        return slot;
}

static void pair_dirty(struct dedup_tracker *tr, uint32_t slot)
{
        struct dedup_pair *pr = pair_at(tr, slot);

        if (pr->flags & PAIR_DIRTY)
                return;
        if (u32vec_push(tr, &tr->dirty, slot) == 0)
                pr->flags |= PAIR_DIRTY;
}

static size_t gapset_size(uint32_t cap)
{
        return sizeof(struct dedup_gapset) + cap * sizeof(struct dedup_gap);
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

static struct dedup_event *event_new(struct dedup_tracker *tr,
                                     enum dedup_kind kind, uint32_t part)
{
        struct dedup_event *ev;

        if (tr_grow(tr, (void **)&tr->ev, &tr->ev_cap, tr->nev + 1,
                    sizeof(*tr->ev)))
                return NULL;
        ev = &tr->ev[tr->nev++];
        memset(ev, 0, sizeof(*ev));
        ev->kind = kind;
        ev->part = part;
        ev->epoch = -1;
        ev->seq_lo = ev->seq_hi = -1;
        ev->offset_lo = ev->offset_hi = -1;
        ev->first_offset = -1;
        ev->when_ms = tr->now_ms;
        return ev;
}

static void pair_event_fill(struct dedup_tracker *tr, struct dedup_event *ev,
                            const struct dedup_pair *pr)
{
        const struct dedup_name *nm = tr->names[pr->name];

        ev->producer = nm->bytes;
        ev->producer_len = nm->len;
}

/*
 * Reports one record of kind (duplicate, out_of_order, fenced) for pair,
 * extending the previous event when it is the same run.
 */
static void record_event(struct dedup_tracker *tr, enum dedup_kind kind,
                         const struct dedup_pair *pr, int32_t epoch,
                         int64_t seq, int64_t offset, int64_t first_offset)
{
        const struct dedup_name *nm = tr->names[pr->name];
        struct dedup_event *ev = tr->nev ? &tr->ev[tr->nev - 1] : NULL;

        if (ev && ev->kind == kind && ev->part == pr->part &&
            ev->producer == nm->bytes && ev->epoch == epoch &&
            seq - 1 == ev->seq_hi && ev->offset_hi < offset) {
                ev->seq_hi = seq;
                ev->offset_hi = offset;
                ev->count++;
                return;
        }
        ev = event_new(tr, kind, pr->part);
        if (!ev)
                return;
        pair_event_fill(tr, ev, pr);
        ev->epoch = epoch;
        ev->seq_lo = ev->seq_hi = seq;
        ev->offset_lo = ev->offset_hi = offset;
        ev->first_offset = first_offset;
        ev->count = 1;
}

static void malformed_event(struct dedup_tracker *tr, uint32_t part,
                            int64_t offset, unsigned bits)
{
        struct dedup_event *ev = tr->nev ? &tr->ev[tr->nev - 1] : NULL;

        /* Malformed records at consecutive offsets of a part become one
         * event; a record in between that is not malformed splits them,
         * so the range names only malformed records. */
        if (ev && ev->kind == DEDUP_KIND_MALFORMED && ev->part == part &&
            offset - 1 == ev->offset_hi) {
                ev->offset_hi = offset;
                ev->count++;
                ev->malformed_bits |= bits;
                return;
        }
        ev = event_new(tr, DEDUP_KIND_MALFORMED, part);
        if (!ev)
                return;
        ev->offset_lo = ev->offset_hi = offset;
        ev->count = 1;
        ev->malformed_bits = bits;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* ------------------------------------------------------------------ */
/* Gaps                                                                */
/* ------------------------------------------------------------------ */

static void gap_confirm(struct dedup_tracker *tr, struct dedup_pair *pr,
                        const struct dedup_gap *g)
{
        struct dedup_counts *c = &tr->parts[pr->part].counts;
        uint64_t missing = (uint64_t)(g->hi - g->lo) + 1;
        struct dedup_event *ev = event_new(tr, DEDUP_KIND_GAP, pr->part);

        c->anomalies[DEDUP_KIND_GAP]++;
        c->missing = sat_add(c->missing, missing);
        if (!ev)
                return;
        pair_event_fill(tr, ev, pr);
        ev->epoch = g->epoch;
        ev->seq_lo = g->lo;
        ev->seq_hi = g->hi;
        ev->offset_lo = ev->offset_hi = g->opened_offset;
        ev->count = missing;
}

static void gap_remove_at(struct dedup_tracker *tr, struct dedup_pair *pr,
                          uint32_t i)
{
        struct dedup_gapset *gs = pr->gaps;

        memmove(&gs->g[i], &gs->g[i + 1], (gs->n - i - 1) * sizeof(gs->g[0]));
        gs->n--;
        tr->open_gaps--;
}

/* Inserts a gap at position i (gaps are kept in the order they opened,
 * except that split halves stay next to each other). */
static int gap_insert_at(struct dedup_tracker *tr, uint32_t slot, uint32_t i,
                         const struct dedup_gap *g)
{
        struct dedup_pair *pr = pair_at(tr, slot);
        struct dedup_gapset *gs = pr->gaps;

        if (gs && gs->n >= tr->conf.max_open_gaps) {
                /* Bound memory: the oldest gap is confirmed early. */
                gap_confirm(tr, pr, &gs->g[0]);
                gap_remove_at(tr, pr, 0);
                if (i > 0)
                        i--;
        }
        if (!gs || gs->n == gs->cap) {
                uint32_t ocap = gs ? gs->cap : 0;
                uint32_t ncap = ocap ? ocap * 2 : 2;
                struct dedup_gapset *ngs =
                    tr_realloc(tr, gs, gs ? gapset_size(ocap) : 0,
                               gapset_size(ncap));
                if (!ngs)
                        return -1;
                if (!gs)
                        ngs->n = 0;
                ngs->cap = ncap;
                pr->gaps = gs = ngs;
        }
        memmove(&gs->g[i + 1], &gs->g[i], (gs->n - i) * sizeof(gs->g[0]));
        gs->g[i] = *g;
        gs->n++;
        tr->open_gaps++;
        if (!(pr->flags & PAIR_GAPLIST) &&
            u32vec_push(tr, &tr->gap_pairs, slot) == 0)
                pr->flags |= PAIR_GAPLIST;
        return 0;
}

static int gap_open(struct dedup_tracker *tr, uint32_t slot, int32_t epoch,
                    int64_t lo, int64_t hi, int64_t offset)
{
        struct dedup_pair *pr = pair_at(tr, slot);
        struct dedup_gap g = {
            .epoch = epoch,
            .lo = lo,
            .hi = hi,
            .opened_offset = offset,
            .opened_ms = tr->now_ms,
            .opened_rec = tr->parts[pr->part].counts.records,
        };

        return gap_insert_at(tr, slot, pr->gaps ? pr->gaps->n : 0, &g);
}

/* If seq of epoch lies in an open gap, fills it and returns 1. */
static int gap_fill(struct dedup_tracker *tr, uint32_t slot, int32_t epoch,
                    int64_t seq)
{
        struct dedup_pair *pr = pair_at(tr, slot);
        struct dedup_gapset *gs = pr->gaps;
        uint32_t i;

        if (!gs)
                return 0;
        for (i = 0; i < gs->n; i++) {
                struct dedup_gap *g = &gs->g[i];
                struct dedup_gap upper;
                if (g->epoch != epoch || seq < g->lo || seq > g->hi)
                        continue;
                if (g->lo == g->hi) {
                        gap_remove_at(tr, pr, i);
                } else if (seq == g->lo) {
                        g->lo++;
                } else if (seq == g->hi) {
                        g->hi--;
                } else {
                        upper = *g;
                        upper.lo = seq + 1;
                        g->hi = seq - 1;
                        if (gap_insert_at(tr, slot, i + 1, &upper))
                                return 1;
                }
                return 1;
        }
        return 0;
}

/* Frees the gap set if empty; the gap list entry is dropped in tick. */
static void gaps_trim(struct dedup_tracker *tr, struct dedup_pair *pr)
{
        if (pr->gaps && pr->gaps->n == 0) {
                tr_free(tr, pr->gaps, gapset_size(pr->gaps->cap));
                pr->gaps = NULL;
        }
}

/* ------------------------------------------------------------------ */
/* Public API                                                          */
/* ------------------------------------------------------------------ */

static const char *const kind_names[DEDUP_KIND__CNT] = {
    [DEDUP_KIND_DUPLICATE] = "duplicate",
    [DEDUP_KIND_GAP] = "gap",
    [DEDUP_KIND_OUT_OF_ORDER] = "out_of_order",
    [DEDUP_KIND_FENCED] = "fenced",
    [DEDUP_KIND_MALFORMED] = "malformed",
    [DEDUP_KIND_REDELIVERED] = "redelivered",
    [DEDUP_KIND_EXPIRED] = "expired",
};

const char *dedup_kind_name(enum dedup_kind kind)
{
        if ((unsigned)kind >= DEDUP_KIND__CNT)
                return NULL;
        return kind_names[kind];
}

int dedup_kind_parse(const char *name, enum dedup_kind *out)
{
        unsigned i;

        for (i = 0; i < DEDUP_KIND__CNT; i++) {
                if (!strcmp(kind_names[i], name)) {
                        *out = (enum dedup_kind)i;
                        return 0;
                }
        }
        return -1;
}

void dedup_config_defaults(struct dedup_config *conf)
{
        /* 5 minutes exceeds the default delivery.timeout.ms (2 min) of
         * Kafka producers: past it no retry can still fill the hole. */
        conf->gap_grace_ms = 300000;
        conf->gap_grace_records = 1000000;
        conf->idle_ttl_ms = 7LL * 24 * 3600 * 1000;
        conf->max_open_gaps = 1024;
        /* 4 MB of filters and up to 62,500 ids of the open generation
         * in memory; a producer that restarts resends within minutes, far
         * inside a day. */
        conf->window.max_ids = 1000000;
        conf->window.max_age_ms = 24LL * 3600 * 1000;
}

struct dedup_tracker *dedup_tracker_new(const struct dedup_config *conf)
{
        struct dedup_tracker *tr = calloc(1, sizeof(*tr));

        if (!tr)
                return NULL;
        tr->conf = *conf;
        if (tr->conf.max_open_gaps < 1)
                tr->conf.max_open_gaps = 1;
        tr->mem = sizeof(*tr);
        tr->ids = ids_new(&tr->conf.window);
        if (!tr->ids) {
                free(tr);
                return NULL;
        }
        return tr;
}

void dedup_tracker_free(struct dedup_tracker *tr)
{
        uint32_t i;

        if (!tr)
                return;
        for (i = 0; i < tr->npairs_slab; i++)
                free(pair_at(tr, i)->flags & PAIR_LIVE ? pair_at(tr, i)->gaps
                                                    : NULL);
        for (i = 0; i < tr->nnames_slab; i++)
                free(tr->names[i]);
        for (i = 0; i < tr->ngrave; i++)
                free(tr->graveyard[i]);
        free(tr->graveyard);
        free(tr->names);
        free(tr->name_idx);
        free(tr->name_free.v);
        for (i = 0; i < tr->nblocks; i++)
                free(tr->blocks[i]);
        free(tr->blocks);
        free(tr->pair_free.v);
        free(tr->pair_pending.v);
        free(tr->dirty.v);
        free(tr->gap_pairs.v);
        free(tr->ev);
        for (i = 0; i < tr->nparts; i++)
                free(tr->parts[i].idx);
        free(tr->parts);
        ids_free(tr->ids);
        free(tr);
}

int dedup_tracker_part_add(struct dedup_tracker *tr, uint32_t part,
                           int from_log_start)
{
        if (part == NONE)
                return -1;
        if (part >= tr->nparts) {
                size_t cap = tr->nparts;
                struct dedup_part *p;
                uint32_t i;
                p = tr_realloc(tr, tr->parts, cap * sizeof(*p),
                               ((size_t)part + 1) * sizeof(*p));
                if (!p)
                        return -1;
                for (i = tr->nparts; i <= part; i++) {
                        memset(&p[i], 0, sizeof(p[i]));
                        p[i].cache = NONE;
                        p[i].window = NONE;
                }
                tr->parts = p;
                tr->nparts = part + 1;
        }
        tr->parts[part].added = 1;
        tr->parts[part].from_log_start = !!from_log_start;
        return 0;
}

int dedup_tracker_part_from_log_start(const struct dedup_tracker *tr,
                                      uint32_t part)
{
        return part < tr->nparts && tr->parts[part].from_log_start;
}

void dedup_tracker_part_rebaseline(struct dedup_tracker *tr, uint32_t part)
{
        uint32_t i;

        if (part >= tr->nparts)
                return;
        tr->parts[part].from_log_start = 0;
        for (i = 0; i < tr->npairs_slab; i++) {
                struct dedup_pair *pr = pair_at(tr, i);
                if ((pr->flags & PAIR_LIVE) && pr->part == part) {
                        pr->flags |= PAIR_REBASELINE;
                        pair_dirty(tr, i);
                }
        }
}

void dedup_tracker_part_set_compacted(struct dedup_tracker *tr, uint32_t part,
                                      int compacted)
{
        if (part < tr->nparts)
                tr->parts[part].compacted = !!compacted;
}

struct dedup_counts *dedup_tracker_part_counts(struct dedup_tracker *tr,
                                               uint32_t part)
{
        return part < tr->nparts ? &tr->parts[part].counts : NULL;
}

void dedup_tracker_begin(struct dedup_tracker *tr, int64_t now_ms)
{
        tr->now_ms = now_ms;
}

int dedup_tracker_failed(const struct dedup_tracker *tr)
{
        return tr->failed;
}

static void run_note(struct dedup_pair *pr, int64_t seq, int64_t offset)
{
        uint32_t len = pr->run_len[0];

        /* Differences, not sums: seq may be near INT64_MAX. */
        if (len && len < UINT32_MAX && seq - pr->run_seq[0] == len &&
            offset - pr->run_off[0] == len) {
                pr->run_len[0]++;
                return;
        }
        memmove(&pr->run_seq[1], &pr->run_seq[0],
                (DEDUP_HISTORY_RUNS - 1) * sizeof(pr->run_seq[0]));
        memmove(&pr->run_off[1], &pr->run_off[0],
                (DEDUP_HISTORY_RUNS - 1) * sizeof(pr->run_off[0]));
        memmove(&pr->run_len[1], &pr->run_len[0],
                (DEDUP_HISTORY_RUNS - 1) * sizeof(pr->run_len[0]));
        pr->run_seq[0] = seq;
        pr->run_off[0] = offset;
        pr->run_len[0] = 1;
}

static void runs_reset(struct dedup_pair *pr)
{
        memset(pr->run_len, 0, sizeof(pr->run_len));
}

static int64_t run_offset_of(const struct dedup_pair *pr, int64_t seq)
{
        unsigned i;

        for (i = 0; i < DEDUP_HISTORY_RUNS; i++) {
                if (pr->run_len[i] && seq >= pr->run_seq[i] &&
                    seq - pr->run_seq[i] < pr->run_len[i])
                        return pr->run_off[i] + (seq - pr->run_seq[i]);
        }
        return -1;
}

/* Offset of the last accepted record, -1 when none in this epoch. */
static int64_t pair_last_offset(const struct dedup_pair *pr)
{
        return pr->run_len[0] ? pr->run_off[0] + pr->run_len[0] - 1 : -1;
}

static uint32_t pair_lookup(struct dedup_tracker *tr, struct dedup_part *p,
                            uint32_t part, const struct dedup_hdrs *h,
                            int *created)
{
        uint32_t slot = p->cache, name;

        *created = 0;
        if (slot != NONE) {
                const struct dedup_pair *pr = pair_at(tr, slot);
                const struct dedup_name *nm = tr->names[pr->name];
                if (nm->len == h->producer_len &&
                    !memcmp(nm->bytes, h->producer, nm->len))
                        return slot;
        }
        name = name_find(tr, h->producer, h->producer_len,
                         hash_bytes(h->producer, h->producer_len));
        slot = name == NONE ? NONE : pair_find(tr, part, name);
        if (slot == NONE) {
                slot = pair_new(tr, part, h->producer, h->producer_len);
                if (slot == NONE)
                        return NONE;
                *created = 1;
        }
        p->cache = slot;
        return slot;
}

static enum dedup_verdict observe_seq(struct dedup_tracker *tr,
                                      uint32_t part, int64_t offset,
                                      const struct dedup_hdrs *h)
{
        struct dedup_part *p = &tr->parts[part];
        struct dedup_counts *c = &p->counts;
        enum dedup_verdict v = DEDUP_V_OK;
        struct dedup_pair *pr;
        int created;
        uint32_t slot;
        int64_t seq;

        c->records++;
        switch (dedup_hdrs_status(h)) {
        case DEDUP_HDR_UNTRACKED:
                c->untracked++;
                return DEDUP_V_UNTRACKED;
        case DEDUP_HDR_MALFORMED:
                c->anomalies[DEDUP_KIND_MALFORMED]++;
                malformed_event(tr, part, offset,
                                h->bad | (DEDUP_HDR_REQUIRED & ~h->seen));
                return DEDUP_V_MALFORMED;
        case DEDUP_HDR_TRACKED:
                break;
        }

        slot = pair_lookup(tr, p, part, h, &created);
        if (slot == NONE) {
                c->anomalies[DEDUP_KIND_MALFORMED]++;
                return DEDUP_V_MALFORMED; /* tr->failed is set */
        }
        pr = pair_at(tr, slot);
        pr->records++;
        pr->last_ms = tr->now_ms;
        pair_dirty(tr, slot);
        seq = h->seq;

        if (created || (pr->flags & PAIR_REBASELINE)) {
                pr->flags &= ~PAIR_REBASELINE;
                pr->epoch = h->epoch;
                if (created && p->from_log_start && !p->compacted &&
                    seq > 0) {
                        /* The whole log was audited: records 0..seq-1 of
                         * this session never appeared. */
                        gap_open(tr, slot, h->epoch, 0, seq - 1, offset);
                        v = DEDUP_V_GAP_OPENED;
                } else if (!(created && p->from_log_start)) {
                        v = DEDUP_V_BASELINE;
                }
                goto accept;
        }

        if (h->epoch < pr->epoch) {
                c->anomalies[DEDUP_KIND_FENCED]++;
                record_event(tr, DEDUP_KIND_FENCED, pr, h->epoch, seq, offset,
                             -1);
                return DEDUP_V_FENCED;
        }
        if (h->epoch > pr->epoch) {
                /* A new session: numbering restarts; gaps of the old
                 * session stay open until confirmed. */
                pr->epoch = h->epoch;
                pr->last_seq = -1;
                runs_reset(pr);
        }

        /* Compared as seq - 1 against last_seq so that seq = INT64_MAX
         * needs no next_seq beyond the range. */
        if (seq - 1 == pr->last_seq)
                goto accept;
        if (seq - 1 > pr->last_seq && p->compacted) {
                v = DEDUP_V_BASELINE; /* the cleaner removed records */
                goto accept;
        }
        if (seq - 1 > pr->last_seq) {
                gap_open(tr, slot, pr->epoch, pr->last_seq + 1, seq - 1,
                         offset);
                v = DEDUP_V_GAP_OPENED;
                goto accept;
        }
        if (gap_fill(tr, slot, pr->epoch, seq)) {
                gaps_trim(tr, pr);
                c->anomalies[DEDUP_KIND_OUT_OF_ORDER]++;
                record_event(tr, DEDUP_KIND_OUT_OF_ORDER, pr, pr->epoch, seq,
                             offset, -1);
                return DEDUP_V_OUT_OF_ORDER;
        }
        c->anomalies[DEDUP_KIND_DUPLICATE]++;
        record_event(tr, DEDUP_KIND_DUPLICATE, pr, pr->epoch, seq, offset,
                     run_offset_of(pr, seq));
        return DEDUP_V_DUPLICATE;

accept:
        pr->last_seq = seq;
        run_note(pr, seq, offset);
        return v;
}

/*
 * Reports one redelivered record, extending the previous event when it is
 * the part's previous record too, from the same producer (and the next
 * seq), and its first copy is at the offset right after the previous
 * one's: both ranges are then true ranges of records.
 */
static void redelivered_event(struct dedup_tracker *tr, uint32_t part,
                              const struct dedup_hdrs *h, int64_t offset,
                              uint32_t first_part, int64_t first_offset)
{
        struct dedup_part *p = &tr->parts[part];
        struct dedup_event *ev = tr->nev ? &tr->ev[tr->nev - 1] : NULL;
        const char *producer = NULL;
        size_t producer_len = 0;

        /* After observe_seq(), the part's cached pair is the record's. */
        if (dedup_hdrs_status(h) == DEDUP_HDR_TRACKED && p->cache != NONE) {
                const struct dedup_name *nm =
                    tr->names[pair_at(tr, p->cache)->name];
                if (nm->len == h->producer_len &&
                    !memcmp(nm->bytes, h->producer, nm->len)) {
                        producer = nm->bytes;
                        producer_len = nm->len;
                }
        }
        if (ev && ev->kind == DEDUP_KIND_REDELIVERED && ev->part == part &&
            tr->redeliv_rec + 1 == p->counts.records &&
            ev->producer == producer && ev->first_part == first_part &&
            ev->first_offset_hi >= 0 &&
            ev->first_offset_hi + 1 == first_offset &&
            (!producer || (ev->epoch == h->epoch && ev->seq_hi + 1 == h->seq))) {
                ev->offset_hi = offset;
                ev->first_offset_hi = first_offset;
                if (producer)
                        ev->seq_hi = h->seq;
                ev->count++;
                tr->redeliv_rec = p->counts.records;
                return;
        }
        ev = event_new(tr, DEDUP_KIND_REDELIVERED, part);
        if (!ev)
                return;
        if (producer) {
                ev->producer = producer;
                ev->producer_len = producer_len;
                ev->epoch = h->epoch;
                ev->seq_lo = ev->seq_hi = h->seq;
        }
        ev->offset_lo = ev->offset_hi = offset;
        ev->first_part = first_part;
        ev->first_offset = ev->first_offset_hi = first_offset;
        ev->id_len = h->id_len;
        memcpy(ev->id, h->id,
               h->id_len < DEDUP_ID_EVIDENCE_MAX ? h->id_len
                                                 : DEDUP_ID_EVIDENCE_MAX);
        ev->count = 1;
        tr->redeliv_rec = p->counts.records;
}

enum dedup_verdict dedup_tracker_observe(struct dedup_tracker *tr,
                                         uint32_t part, int64_t offset,
                                         const struct dedup_hdrs *h)
{
        struct dedup_part *p = &tr->parts[part];
        int check = h->id && p->window != NONE && tr->conf.window.max_ids;
        enum dedup_verdict v;
        struct dedup_id id;
        uint32_t first_part;
        int64_t first_offset;
        int rc;

        /* The filter block is a cache miss: start it before the sequence
         * check, which then runs while it loads. */
        if (check) {
                dedup_id_hash(h->id, h->id_len, &id);
                ids_prefetch(tr->ids, p->window, &id);
        }
        v = observe_seq(tr, part, offset, h);
        /* An in-session repeat is reported once, by its sequence. */
        if (!check || v == DEDUP_V_DUPLICATE || v == DEDUP_V_FENCED)
                return v;
        p->counts.ids++;
        rc = ids_check(tr->ids, p->window, &id, part, offset, tr->now_ms,
                       &first_part, &first_offset);
        if (rc < 0) {
                tr->failed = 1;
                return v;
        }
        if (rc == 0 || (first_part == part && first_offset == offset))
                return v;
        p->counts.anomalies[DEDUP_KIND_REDELIVERED]++;
        redelivered_event(tr, part, h, offset, first_part, first_offset);
        return DEDUP_V_REDELIVERED;
}

/* Confirms the gaps of pair slot that pass the test (all when force). */
static void pair_gaps_sweep(struct dedup_tracker *tr, uint32_t slot, int force)
{
        struct dedup_pair *pr = pair_at(tr, slot);
        const struct dedup_counts *c = &tr->parts[pr->part].counts;
        uint32_t i = 0;

        while (pr->gaps && i < pr->gaps->n) {
                const struct dedup_gap *g = &pr->gaps->g[i];
                int due = force ||
                          (tr->conf.gap_grace_records &&
                           c->records - g->opened_rec >=
                               tr->conf.gap_grace_records) ||
                          (tr->conf.gap_grace_ms &&
                           tr->now_ms - g->opened_ms >= tr->conf.gap_grace_ms);
                if (!due) {
                        i++;
                        continue;
                }
                gap_confirm(tr, pr, g);
                gap_remove_at(tr, pr, i);
                pair_dirty(tr, slot);
        }
        gaps_trim(tr, pr);
}

static void gaps_sweep_all(struct dedup_tracker *tr, int force)
{
        size_t i = 0;

        while (i < tr->gap_pairs.n) {
                uint32_t slot = tr->gap_pairs.v[i];
                struct dedup_pair *pr = pair_at(tr, slot);
                if (pr->flags & PAIR_LIVE)
                        pair_gaps_sweep(tr, slot, force);
                if (!(pr->flags & PAIR_LIVE) || !pr->gaps) {
                        pr->flags &= ~PAIR_GAPLIST;
                        tr->gap_pairs.v[i] = tr->gap_pairs.v[--tr->gap_pairs.n];
                        continue;
                }
                i++;
        }
}

static void pair_expire(struct dedup_tracker *tr, uint32_t slot)
{
        struct dedup_pair *pr = pair_at(tr, slot);
        struct dedup_event *ev;

        pair_gaps_sweep(tr, slot, 1);
        ev = event_new(tr, DEDUP_KIND_EXPIRED, pr->part);
        if (ev) {
                pair_event_fill(tr, ev, pr);
                ev->epoch = pr->epoch;
                ev->seq_lo = ev->seq_hi = pr->last_seq;
                ev->offset_lo = ev->offset_hi = pair_last_offset(pr);
                ev->count = pr->records;
        }
        if (tr->parts[pr->part].cache == slot)
                tr->parts[pr->part].cache = NONE;
        idx_remove(tr, tr->parts[pr->part].idx, tr->parts[pr->part].mask,
                   slot, pair_key_hash(pr->name), pair_keyhash);
        tr->parts[pr->part].live--;
        name_unref(tr, pr->name);
        pr->flags = 0; /* not live, not dirty: dirty_foreach skips it */
        tr->live_pairs--;
        u32vec_push(tr, &tr->pair_pending, slot);
}

void dedup_tracker_tick(struct dedup_tracker *tr)
{
        int64_t ttl = tr->conf.idle_ttl_ms;
        int64_t every;
        uint32_t i;

        gaps_sweep_all(tr, 0);
        ids_tick(tr->ids, tr->now_ms);
        if (ttl <= 0)
                return;
        /* A full walk costs O(pairs): do it a few times per TTL only. */
        every = ttl / 8 < 1000 ? 1000 : ttl / 8;
        if (tr->now_ms - tr->last_expire_ms < every && ttl >= 1000)
                return;
        tr->last_expire_ms = tr->now_ms;
        for (i = 0; i < tr->npairs_slab; i++) {
                struct dedup_pair *pr = pair_at(tr, i);
                if ((pr->flags & PAIR_LIVE) && tr->now_ms - pr->last_ms > ttl)
                        pair_expire(tr, i);
        }
        gaps_sweep_all(tr, 0); /* drop expired pairs from the gap list */
}

void dedup_tracker_confirm_all(struct dedup_tracker *tr)
{
        gaps_sweep_all(tr, 1);
}

const struct dedup_event *dedup_tracker_events(const struct dedup_tracker *tr,
                                               size_t *n)
{
        *n = tr->nev;
        return tr->ev;
}

void dedup_tracker_events_clear(struct dedup_tracker *tr)
{
        size_t i;

        tr->nev = 0;
        for (i = 0; i < tr->ngrave; i++)
                tr_free(tr, tr->graveyard[i],
                        sizeof(*tr->graveyard[i]) + tr->graveyard[i]->len);
        tr->ngrave = 0;
}

static void pair_view(const struct dedup_tracker *tr, uint32_t slot,
                      struct dedup_pair_view *pv)
{
        const struct dedup_pair *pr = pair_at(tr, slot);
        const struct dedup_name *nm = tr->names[pr->name];
        unsigned i;

        pv->part = pr->part;
        pv->producer = nm->bytes;
        pv->producer_len = nm->len;
        pv->epoch = pr->epoch;
        pv->last_seq = pr->last_seq;
        pv->last_offset = pair_last_offset(pr);
        pv->last_ms = pr->last_ms;
        pv->records = pr->records;
        pv->rebaseline = !!(pr->flags & PAIR_REBASELINE);
        for (i = 0; i < DEDUP_HISTORY_RUNS; i++) {
                pv->runs[i].seq = pr->run_len[i] ? pr->run_seq[i] : -1;
                pv->runs[i].offset = pr->run_len[i] ? pr->run_off[i] : -1;
                pv->runs[i].len = pr->run_len[i];
        }
        pv->gaps = pr->gaps ? pr->gaps->g : NULL;
        pv->ngaps = pr->gaps ? pr->gaps->n : 0;
}

int dedup_tracker_dirty_foreach(struct dedup_tracker *tr, dedup_pair_cb *cb,
                                void *opaque)
{
        struct dedup_pair_view pv;
        size_t i;
        int r;

        for (i = 0; i < tr->dirty.n; i++) {
                uint32_t slot = tr->dirty.v[i];
                if (!(pair_at(tr, slot)->flags & PAIR_DIRTY))
                        continue; /* expired since */
                pair_view(tr, slot, &pv);
                if ((r = cb(opaque, &pv)))
                        return r;
        }
        return 0;
}

void dedup_tracker_dirty_clear(struct dedup_tracker *tr)
{
        size_t i;

        for (i = 0; i < tr->dirty.n; i++)
                pair_at(tr, tr->dirty.v[i])->flags &= ~PAIR_DIRTY;
        tr->dirty.n = 0;
        for (i = 0; i < tr->pair_pending.n; i++)
                u32vec_push(tr, &tr->pair_free, tr->pair_pending.v[i]);
        tr->pair_pending.n = 0;
        ids_batch_clear(tr->ids);
}

int dedup_tracker_foreach(struct dedup_tracker *tr, dedup_pair_cb *cb,
                          void *opaque)
{
        struct dedup_pair_view pv;
        uint32_t i;
        int r;

        for (i = 0; i < tr->npairs_slab; i++) {
                if (!(pair_at(tr, i)->flags & PAIR_LIVE))
                        continue;
                pair_view(tr, i, &pv);
                if ((r = cb(opaque, &pv)))
                        return r;
        }
        return 0;
}

int dedup_tracker_restore(struct dedup_tracker *tr,
                          const struct dedup_pair_view *pv)
{
        struct dedup_pair *pr;
        uint32_t slot, name, i;
        size_t nev;

        if (pv->part >= tr->nparts || !tr->parts[pv->part].added ||
            !pv->producer || pv->producer_len < 1 ||
            pv->producer_len > DEDUP_PRODUCER_MAX || pv->epoch < 0 ||
            pv->last_seq < -1)
                return -1;
        name = name_find(tr, pv->producer, pv->producer_len,
                         hash_bytes(pv->producer, pv->producer_len));
        if (name != NONE && pair_find(tr, pv->part, name) != NONE)
                return -1; /* restored twice */
        slot = pair_new(tr, pv->part, pv->producer, pv->producer_len);
        if (slot == NONE)
                return -1;
        pr = pair_at(tr, slot);
        pr->epoch = pv->epoch;
        pr->last_seq = pv->last_seq;
        pr->last_ms = pv->last_ms;
        pr->records = pv->records;
        if (pv->rebaseline)
                pr->flags |= PAIR_REBASELINE;
        for (i = 0; i < DEDUP_HISTORY_RUNS; i++) {
                pr->run_seq[i] = pv->runs[i].seq;
                pr->run_off[i] = pv->runs[i].offset;
                pr->run_len[i] = pv->runs[i].len;
        }
        nev = tr->nev;
        for (i = 0; i < pv->ngaps; i++) {
                if (pv->gaps[i].lo < 0 || pv->gaps[i].hi < pv->gaps[i].lo)
                        return -1;
                if (gap_insert_at(tr, slot, pr->gaps ? pr->gaps->n : 0,
                                  &pv->gaps[i]))
                        return -1;
        }
        /* A lower max_open_gaps than when it was stored confirmed some:
         * the ledger must learn that they are no longer open. */
        if (tr->nev != nev)
                pair_dirty(tr, slot);
        return 0;
}

size_t dedup_tracker_pairs(const struct dedup_tracker *tr)
{
        return tr->live_pairs;
}

size_t dedup_tracker_open_gaps(const struct dedup_tracker *tr)
{
        return tr->open_gaps;
}

size_t dedup_tracker_memory(const struct dedup_tracker *tr)
{
        return tr->mem + ids_memory(tr->ids);
}

/* ------------------------------------------------------------------ */
/* Id windows (window.c)                                               */
/* ------------------------------------------------------------------ */

int dedup_tracker_window_add(struct dedup_tracker *tr, uint32_t *window)
{
        return ids_window_add(tr->ids, window);
}

void *dedup_tracker_window_filters(const struct dedup_tracker *tr,
                                   uint32_t window, size_t *bytes)
{
        return ids_window_filters(tr->ids, window, bytes);
}

void dedup_tracker_part_set_window(struct dedup_tracker *tr, uint32_t part,
                                   uint32_t window)
{
        if (part < tr->nparts && window < ids_windows(tr->ids))
                tr->parts[part].window = window;
}

void dedup_tracker_set_id_lookup(struct dedup_tracker *tr,
                                 dedup_id_lookup_cb *cb, void *opaque)
{
        ids_set_lookup(tr->ids, cb, opaque);
}

const struct dedup_id_row *dedup_tracker_ids_new(const struct dedup_tracker *tr,
                                                 size_t *n)
{
        return ids_new_rows(tr->ids, n);
}

int dedup_tracker_gens_dirty_foreach(struct dedup_tracker *tr,
                                     dedup_gen_cb *cb, void *opaque)
{
        return ids_gens_dirty_foreach(tr->ids, cb, opaque);
}

const uint64_t *dedup_tracker_gens_dropped(const struct dedup_tracker *tr,
                                           size_t *n)
{
        return ids_gens_dropped(tr->ids, n);
}

int dedup_tracker_gen_restore(struct dedup_tracker *tr,
                              const struct dedup_gen_view *gv)
{
        return ids_gen_restore(tr->ids, gv);
}

int dedup_tracker_id_restore(struct dedup_tracker *tr, uint32_t window,
                             uint64_t gen, const struct dedup_id *id)
{
        return ids_id_restore(tr->ids, window, gen, id);
}

int dedup_tracker_row_restore(struct dedup_tracker *tr,
                              const struct dedup_id_row *row)
{
        return ids_row_restore(tr->ids, row);
}

int dedup_tracker_gen_open(const struct dedup_tracker *tr, uint32_t window,
                           uint64_t gen)
{
        return ids_gen_open(tr->ids, window, gen);
}

int dedup_tracker_gens_closed_foreach(struct dedup_tracker *tr,
                                      dedup_gen_rows_cb *cb, void *opaque)
{
        return ids_gens_closed_foreach(tr->ids, cb, opaque);
}

uint64_t dedup_tracker_window_ids(const struct dedup_tracker *tr,
                                  uint32_t window)
{
        return ids_window_ids(tr->ids, window);
}
