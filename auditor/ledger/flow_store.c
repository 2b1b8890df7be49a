/*
 * flow_store.c - the flow engine's entries, packed (schema/0016_flow_store
 * .sql, 0018_flow_log.sql): each commit appends the views it changed to
 * the batches' log ("<log>.flowlog", made durable before the transaction
 * that records its new length in flow_log commits); once the batches hold
 * LEDGER_FLOW_GEN_VIEWS views, their latest views go, sorted by id, to a
 * file of their own ("<gen>.flow", written once by idfiles.c's code, as
 * the id windows' closed generations), and the next commit starts a new
 * log.  A ledger from before the log may still have batches as blobs in
 * flow_batches: they are read before the log's views.
 *
 * A view, 128 bytes, little-endian:
 *     0 id.lo   8 id.hi   16 seq   24 born
 *    32 src key   36 sink key   40 last sink key   44 copies  (u32 each;
 *       a key is flow_topics.tid << 20 | partition, KEY_NONE: none)
 *    48 src offset   56 src ts   64 sink offset   72 last sink offset
 *    80 sink ts
 *    88 bits (u32): outcome (4 bits), live << 4 (2 bits: 1 held by the
 *       engine, 0 retired, 2 judged in an old incarnation, 3 dropped with
 *       one), src_seen << 6, due << 7, latency_done << 8, prior << 9,
 *       gone << 10 (a source record truncated away: dedup/flow.h)
 *    92 id length (u32)   96 up to 32 bytes of the id
 * The latest view of an id counts: a later batch's over an earlier one's,
 * the batches' over the files', a newer file's over an older one's.
 *
 * The writer keeps in memory the views of the batches (to close them into
 * a file, and to find a retired one: a hash table of their ids), and per
 * file a sparse index (8 bytes per LEDGER_FLOW_STEP views) and a Bloom
 * filter (16 bits per view), so that a miss (an id the engine does not
 * hold) costs one probe per file and a hit one pread().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/le.h"
#include "../../base/log.h"
#include "ledger_flow.h"
#include "internal.h"

#define VIEW LEDGER_FLOW_VIEW
#define KEY_NONE UINT32_MAX
#define PART_BITS 20
#define TID_MAX ((UINT32_MAX >> PART_BITS) - 1)

enum { LIVE_RETIRED = 0, LIVE_HELD = 1, LIVE_OLD = 2, LIVE_GONE = 3 };

struct flow_gen {
        uint64_t gen;
        size_t n, bytes;
        uint64_t *lo;    /* sparse index */
        uint64_t *bloom; /* nbloom words, a power of two */
        size_t nbloom;
        int fd; /* open for lookups; -1: not yet */
};

struct flow_key {
        uint32_t key, part;
};

struct view_key {
        uint64_t lo, hi;
        size_t k; /* its place in the batches */
};

struct ledger_flow_store {
        /* tid -> topic, as flow_topics holds them */
        char **topics;
        size_t ntopics;
        /* the attached flow's parts: key of each, and back (sorted) */
        uint32_t *key_of;
        struct flow_key *keys;
        size_t nkeys;
        /* the batches' views (flow_batches', then the log's), in order,
         * and their ids' latest */
        unsigned char *b;
        size_t bn, bcap;
        uint32_t *bslots; /* index + 1; 0: empty */
        size_t nbslots;
        /* the files, oldest first */
        struct flow_gen *gens;
        size_t ngens, gcap;
        /* one Bloom filter over every file's ids (8 bits per view;
         * nfb words, a power of two; 0: none), so that an id in no file,
         * every new one, costs one probe, not one per file; fbviews: the
         * views in it */
        uint64_t *fb;
        size_t nfb, fbviews;
        /* what the open transaction adds (committed: kept) */
        unsigned char *w;
        size_t wn, wcap;
        int closing; /* the transaction closes the batches into a file */
        struct flow_gen wgen;
        /* b_latest()'s views and keys: kept for the next close (fresh
         * pages for each were 3 % of a flow scan's samples) */
        unsigned char *lv;
        struct view_key *lk;
        size_t lcap;
        /* the batches' log: its number (0: none yet) and the length its
         * flow_log row says; what the open transaction makes them
         * (wlogged: it wrote the row) */
        uint64_t log, wlog;
        size_t logbytes, wlogbytes;
        int wlogged;
};

/* ------------------------------------------------------------------ */
/* Views                                                               */
/* ------------------------------------------------------------------ */

static uint64_t v_lo(const unsigned char *p)
{
        return le64_get(p);
}

static uint64_t v_hi(const unsigned char *p)
{
        return le64_get(p + 8);
}

static unsigned v_live(const unsigned char *p)
{
        return (le32_get(p + 88) >> 4) & 3u;
}

static uint32_t key_of_part(const struct ledger_flow_store *fs, uint32_t part)
{
        return fs->key_of && part < fs->nkeys ? fs->key_of[part] : KEY_NONE;
}

static uint32_t part_of_key(const struct ledger_flow_store *fs, uint32_t key)
{
        size_t a = 0, b = fs->nkeys;

        if (key == KEY_NONE)
                return UINT32_MAX;
        while (a < b) {
                size_t mid = a + (b - a) / 2;
                if (fs->keys[mid].key < key)
                        a = mid + 1;
                else
                        b = mid;
        }
        return a < fs->nkeys && fs->keys[a].key == key ? fs->keys[a].part
                                                       : UINT32_MAX;
}

static void view_pack(const struct ledger_flow_store *fs,
                      const struct dedup_flow_view *v, unsigned live,
                      unsigned char *p)
{
        size_t kept = v->id_len < DEDUP_FLOW_ID_KEEP ? v->id_len
                                                     : DEDUP_FLOW_ID_KEEP;
        uint32_t bits = ((uint32_t)v->outcome & 15u) | (live & 3u) << 4 |
                        (uint32_t) !!v->src_seen << 6 |
                        (uint32_t) !!v->due << 7 |
                        (uint32_t) !!v->latency_done << 8 |
                        (uint32_t) !!v->prior << 9 |
                        (uint32_t) !!v->gone << 10;

        memset(p, 0, VIEW);
        le64_put(p, v->id.lo);
        le64_put(p + 8, v->id.hi);
        le64_put(p + 16, v->seq);
        le64_put(p + 24, v->born);
        le32_put(p + 32,
                 v->src_seen ? key_of_part(fs, v->src_part) : KEY_NONE);
        le32_put(p + 36, v->copies ? key_of_part(fs, v->sink_part) : KEY_NONE);
        le32_put(p + 40,
                 v->copies ? key_of_part(fs, v->sink_part_last) : KEY_NONE);
        le32_put(p + 44, v->copies);
        le64_put(p + 48, (uint64_t)v->src_offset);
        le64_put(p + 56, (uint64_t)v->src_ts);
        le64_put(p + 64, (uint64_t)v->sink_offset);
        le64_put(p + 72, (uint64_t)v->sink_offset_last);
        le64_put(p + 80, (uint64_t)v->sink_ts);
        le32_put(p + 88, bits);
        le32_put(p + 92,
                 v->id_len > UINT32_MAX ? UINT32_MAX : (uint32_t)v->id_len);
        memcpy(p + 96, v->id_bytes, kept);
}

/* p into *v for the attached flow.  Returns 0, or 1 when it names a part
 * the flow does not know. */
static int view_unpack(const struct ledger_flow_store *fs,
                       const unsigned char *p, struct dedup_flow_view *v)
{
        uint32_t bits = le32_get(p + 88);
        size_t kept;

        memset(v, 0, sizeof(*v));
        v->id.lo = v_lo(p);
        v->id.hi = v_hi(p);
        v->seq = le64_get(p + 16);
        v->born = le64_get(p + 24);
        v->copies = le32_get(p + 44);
        v->src_offset = (int64_t)le64_get(p + 48);
        v->src_ts = (int64_t)le64_get(p + 56);
        v->sink_offset = (int64_t)le64_get(p + 64);
        v->sink_offset_last = (int64_t)le64_get(p + 72);
        v->sink_ts = (int64_t)le64_get(p + 80);
        v->outcome = (enum dedup_flow_outcome)(bits & 15u);
        if ((unsigned)v->outcome >= DEDUP_FLOW__OUTCOMES)
                v->outcome = DEDUP_FLOW__OUTCOMES; /* counted by nothing */
        v->src_seen = !!(bits & 1u << 6);
        v->due = !!(bits & 1u << 7);
        v->latency_done = !!(bits & 1u << 8);
        v->prior = !!(bits & 1u << 9);
        v->gone = !!(bits & 1u << 10);
        v->evid = v->outcome != DEDUP_FLOW__OUTCOMES &&
                  dedup_flow_outcome_bad(v->outcome);
        v->id_len = le32_get(p + 92);
        kept = v->id_len < DEDUP_FLOW_ID_KEEP ? v->id_len : DEDUP_FLOW_ID_KEEP;
        memcpy(v->id_bytes, p + 96, kept);
        v->src_part = v->src_seen ? part_of_key(fs, le32_get(p + 32))
                                  : UINT32_MAX;
        v->sink_part = v->copies ? part_of_key(fs, le32_get(p + 36))
                                 : UINT32_MAX;
        v->sink_part_last = v->copies ? part_of_key(fs, le32_get(p + 40))
                                      : UINT32_MAX;
        if ((v->src_seen && v->src_part == UINT32_MAX) ||
            (v->copies &&
             (v->sink_part == UINT32_MAX || v->sink_part_last == UINT32_MAX)))
                return 1;
        return 0;
}

/* Orders views by id, then by their place (a later one after). */
static int id_cmp(const unsigned char *x, const unsigned char *y)
{
        uint64_t a = v_lo(x), b = v_lo(y);

        if (a != b)
                return a < b ? -1 : 1;
        a = v_hi(x);
        b = v_hi(y);
        return a < b ? -1 : a > b;
}

/* ------------------------------------------------------------------ */
/* The batches' views                                                  */
/* ------------------------------------------------------------------ */

static size_t b_slot(const struct ledger_flow_store *fs, uint64_t lo,
                     uint64_t hi)
{
        size_t mask = fs->nbslots - 1, s = (size_t)lo & mask;

        while (fs->bslots[s]) {
                const unsigned char *p = fs->b + (fs->bslots[s] - 1) * VIEW;
                if (v_lo(p) == lo && v_hi(p) == hi)
                        break;
                s = (s + 1) & mask;
        }
        return s;
}

static int b_grow(struct ledger_flow_store *fs, size_t need)
{
        size_t k, n;
        unsigned char *b;

        if (need > fs->bcap) {
                n = fs->bcap ? fs->bcap : 4096;
                while (n < need)
                        n *= 2;
                if (n > UINT32_MAX - 1 || !(b = realloc(fs->b, n * VIEW)))
                        return -1;
                fs->b = b;
                fs->bcap = n;
        }
        if (need * 2 <= fs->nbslots)
                return 0;
        n = fs->nbslots ? fs->nbslots : 8192;
        while (need * 2 > n)
                n *= 2;
        free(fs->bslots);
        if (!(fs->bslots = calloc(n, sizeof(*fs->bslots))))
                return -1;
        fs->nbslots = n;
        for (k = 0; k < fs->bn; k++)
                fs->bslots[b_slot(fs, v_lo(fs->b + k * VIEW),
                                  v_hi(fs->b + k * VIEW))] = (uint32_t)k + 1;
        return 0;
}

/* Appends n views to the batches' (in memory). */
static int b_add(struct ledger_flow_store *fs, const unsigned char *v,
                 size_t n)
{
        size_t k;

        if (b_grow(fs, fs->bn + n))
                return -1;
        memcpy(fs->b + fs->bn * VIEW, v, n * VIEW);
        for (k = 0; k < n; k++, fs->bn++)
                fs->bslots[b_slot(fs, v_lo(fs->b + fs->bn * VIEW),
                                  v_hi(fs->b + fs->bn * VIEW))] =
                    (uint32_t)fs->bn + 1;
        return 0;
}

static void b_clear(struct ledger_flow_store *fs)
{
        fs->bn = 0;
        if (fs->bslots)
                memset(fs->bslots, 0, fs->nbslots * sizeof(*fs->bslots));
}

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

static uint64_t bloom_bits(uint64_t hi)
{
        return 1ull << (hi & 63) | 1ull << ((hi >> 6) & 63) |
               1ull << ((hi >> 12) & 63) | 1ull << ((hi >> 18) & 63);
}

/* Indexes g from its n sorted views at p. */
static int gen_index(struct flow_gen *g, const unsigned char *p, size_t n)
{
        size_t k = (n + LEDGER_FLOW_STEP - 1) / LEDGER_FLOW_STEP, i;

        g->n = n;
        g->fd = -1;
        g->nbloom = 1;
        while (g->nbloom * 4 < n)
                g->nbloom *= 2;
        g->lo = malloc((k ? k : 1) * sizeof(*g->lo));
        g->bloom = calloc(g->nbloom, sizeof(*g->bloom));
        if (!g->lo || !g->bloom)
                return -1;
        for (i = 0; i < k; i++)
                g->lo[i] = v_lo(p + i * LEDGER_FLOW_STEP * VIEW);
        for (i = 0; i < n; i++)
                g->bloom[v_lo(p + i * VIEW) & (g->nbloom - 1)] |= bloom_bits(
                    v_hi(p + i * VIEW) >> 24);
        return 0;
}

/* The files' filter: its word and bits for (lo, hi), apart from the
 * files' own (gen_index()). */
static uint64_t fb_bits(uint64_t lo)
{
        return bloom_bits(lo >> 40);
}

static int fb_maybe(const struct ledger_flow_store *fs, uint64_t lo,
                    uint64_t hi)
{
        uint64_t want = fb_bits(lo);

        return !fs->nfb || (fs->fb[hi & (fs->nfb - 1)] & want) == want;
}

static void fb_put(struct ledger_flow_store *fs, const unsigned char *v,
                   size_t n)
{
        size_t k;

        for (k = 0; k < n; k++)
                fs->fb[v_hi(v + k * VIEW) & (fs->nfb - 1)] |= fb_bits(
                    v_lo(v + k * VIEW));
        fs->fbviews += n;
}

/* Adds the n views at v, a file's, to the files' filter: made larger (and
 * filled again from the files) when they pass 8 bits a view.  When it
 * cannot be (out of memory, a file unreadable), there is none: every
 * file's own filter is probed again, nothing is missed. */
static void fb_add(struct ledger *lg, const unsigned char *v, size_t n)
{
        struct ledger_flow_store *fs = lg->fs;
        size_t want = fs->fbviews + n, nw = 1, g;
        char err[256];

        if (fs->nfb && want <= fs->nfb * 8) {
                fb_put(fs, v, n);
                return;
        }
        if (fs->fbviews && !fs->nfb)
                return; /* given up */
        while (nw * 8 < want * 2)
                nw *= 2;
        free(fs->fb);
        fs->fbviews = 0;
        if (!(fs->fb = calloc(nw, sizeof(*fs->fb))))
                goto none;
        fs->nfb = nw;
        for (g = 0; g < fs->ngens; g++) {
                const unsigned char *map;
                if (!fs->gens[g].bytes)
                        continue;
                map = ledger_idfile_map(lg, LEDGER_IDFILE_FLOW,
                                        fs->gens[g].gen, fs->gens[g].bytes,
                                        err, sizeof(err));
                if (!map)
                        goto none;
                fb_put(fs, map, fs->gens[g].n);
                ledger_idfile_unmap((void *)map, fs->gens[g].bytes);
        }
        fb_put(fs, v, n);
        return;
none:
        free(fs->fb);
        fs->fb = NULL;
        fs->nfb = 0;
        fs->fbviews = 1; /* given up */
}

static void gen_release(struct flow_gen *g)
{
        if (g->fd >= 0 && g->lo)
                close(g->fd);
        g->fd = -1;
        free(g->lo);
        free(g->bloom);
        g->lo = g->bloom = NULL;
}

static int gen_push(struct ledger_flow_store *fs, const struct flow_gen *g)
{
        if (fs->ngens == fs->gcap) {
                size_t n = fs->gcap ? fs->gcap * 2 : 16;
                struct flow_gen *ng = realloc(fs->gens, n * sizeof(*ng));
                if (!ng)
                        return -1;
                fs->gens = ng;
                fs->gcap = n;
        }
        fs->gens[fs->ngens++] = *g;
        return 0;
}

/* gen's view of id into out (VIEW bytes): 1, 0 (none), -1 with errstr. */
static int gen_find(struct ledger *lg, struct flow_gen *g, uint64_t lo,
                    uint64_t hi, unsigned char *out, char *errstr,
                    size_t errstr_size)
{
        unsigned char buf[2 * LEDGER_FLOW_STEP * VIEW];
        uint64_t want = bloom_bits(hi >> 24);
        size_t first, cnt, i, done = 0, part;

        if (!g->n || (g->bloom[lo & (g->nbloom - 1)] & want) != want)
                return 0;
        ledger_idfile_span(g->lo, g->n, LEDGER_FLOW_STEP, lo, &first, &cnt);
        if (g->fd < 0 &&
            (g->fd = ledger_idfile_open(lg, LEDGER_IDFILE_FLOW, g->gen, errstr,
                                        errstr_size)) < 0)
                return -1;
        /* The id lies in the step that starts below it, or is the next
         * step's first: one step and one view are read, the rest of the
         * span only if that view has the same lo (2 KiB instead of 4 per
         * revival; the copy was 7 % of a reviving scan's samples). */
        part = cnt < LEDGER_FLOW_STEP + 1 ? cnt : LEDGER_FLOW_STEP + 1;
        while (done < cnt) {
                if (ledger_idfile_pread_fd(g->fd, (first + done) * VIEW, buf,
                                           part * VIEW)) {
                        snprintf(errstr, errstr_size,
                                 "cannot read the ledger's flow file %llu: "
                                 "%s",
                                 (unsigned long long)g->gen, strerror(errno));
                        return -1;
                }
                for (i = 0; i < part; i++) {
                        const unsigned char *p = buf + i * VIEW;
                        if (v_lo(p) == lo && v_hi(p) == hi) {
                                memcpy(out, p, VIEW);
                                return 1;
                        }
                        if (v_lo(p) > lo)
                                return 0;
                }
                done += part;
                part = cnt - done;
        }
        return 0;
}

/* ------------------------------------------------------------------ */
/* Latest views, in id order                                           */
/* ------------------------------------------------------------------ */

static int key_less(const struct view_key *x, const struct view_key *y)
{
        return x->lo < y->lo || (x->lo == y->lo && x->hi < y->hi);
}

/* Sorts the n keys at a by id, with tmp (room for n): a counting pass on
 * the top 16 bits of lo (ids are hashes: a few keys per bucket), then
 * insertion within each bucket.  0, or -1 (out of memory). */
static int keys_sort(struct view_key *a, struct view_key *tmp, size_t n)
{
        size_t *at, k, b;

        if (!n)
                return 0;
        if (!(at = calloc(65537, sizeof(*at))))
                return -1;
        for (k = 0; k < n; k++)
                at[(a[k].lo >> 48) + 1]++;
        for (b = 1; b <= 65536; b++)
                at[b] += at[b - 1];
        for (k = 0; k < n; k++)
                tmp[at[a[k].lo >> 48]++] = a[k];
        /* at[b] is now where bucket b ends. */
        for (b = 0, k = 0; b < 65536; b++) {
                size_t end = at[b], i;
                for (i = k + 1; i < end; i++) {
                        struct view_key x = tmp[i];
                        size_t j = i;
                        for (; j > k && key_less(&x, &tmp[j - 1]); j--)
                                tmp[j] = tmp[j - 1];
                        tmp[j] = x;
                }
                k = end;
        }
        memcpy(a, tmp, n * sizeof(*a));
        free(at);
        return 0;
}

/* The batches' latest views, copied and sorted by id, into *out (the
 * store's: valid until the next call).  Sorted as keys, then copied once:
 * qsort moving the 128-byte views themselves was 12 % of a flow scan's
 * samples (view_cmp, msort, memmove), qsort of the keys still 5 %. */
static int b_latest(struct ledger_flow_store *fs, unsigned char **out,
                    size_t *n)
{
        size_t k, m = 0;

        if (fs->bn > fs->lcap) {
                unsigned char *v = realloc(fs->lv, fs->bn * VIEW);
                struct view_key *keys;
                if (v)
                        fs->lv = v;
                keys = realloc(fs->lk, fs->bn * 2 * sizeof(*keys));
                if (!v || !keys)
                        return -1;
                fs->lk = keys;
                fs->lcap = fs->bn;
        }
        for (k = 0; k < fs->bn; k++) {
                const unsigned char *p = fs->b + k * VIEW;
                uint64_t lo = v_lo(p), hi = v_hi(p);
                if (fs->bslots[b_slot(fs, lo, hi)] == k + 1) {
                        fs->lk[m].lo = lo;
                        fs->lk[m].hi = hi;
                        fs->lk[m++].k = k;
                }
        }
        if (keys_sort(fs->lk, fs->lk + fs->bn, m))
                return -1;
        for (k = 0; k < m; k++)
                memcpy(fs->lv + k * VIEW, fs->b + fs->lk[k].k * VIEW, VIEW);
        *out = fs->lv;
        *n = m;
        return 0;
}

typedef int(view_cb)(void *opaque, const unsigned char *v);

/* Calls cb with the latest view of every id in the store, in id order
 * (the files mapped, for this walk only).  0, or -1 with errstr; cb's
 * non-zero return (positive: out of memory) stops it and is returned. */
static int latest_foreach(struct ledger *lg, view_cb *cb, void *opaque,
                          char *errstr, size_t errstr_size)
{
        struct ledger_flow_store *fs = lg->fs;
        size_t ng = fs->ngens, k, nb = 0, bi = 0;
        const unsigned char **map = calloc(ng + 1, sizeof(*map));
        size_t *at = calloc(ng + 1, sizeof(*at));
        unsigned char *bv = NULL;
        int rc = -1;

        if (!map || !at || b_latest(fs, &bv, &nb)) {
                snprintf(errstr, errstr_size, "out of memory");
                goto out;
        }
        for (k = 0; k < ng; k++)
                if (fs->gens[k].bytes &&
                    !(map[k] = ledger_idfile_map(lg, LEDGER_IDFILE_FLOW,
                                                 fs->gens[k].gen,
                                                 fs->gens[k].bytes, errstr,
                                                 errstr_size)))
                        goto out;
        for (;;) {
                const unsigned char *best = NULL;
                size_t g;
                int c;
                /* The smallest id among the cursors; among equal ids the
                 * batches', then the newest file's. */
                if (bi < nb)
                        best = bv + bi * VIEW;
                for (g = ng; g-- > 0;) {
                        const unsigned char *p;
                        if (at[g] >= fs->gens[g].n)
                                continue;
                        p = map[g] + at[g] * VIEW;
                        if (!best || id_cmp(p, best) < 0)
                                best = p;
                }
                if (!best)
                        break;
                c = cb(opaque, best);
                if (c) {
                        rc = c;
                        goto out;
                }
                /* Past every cursor's view of that id. */
                while (bi < nb && !id_cmp(bv + bi * VIEW, best))
                        bi++;
                for (g = 0; g < ng; g++)
                        while (at[g] < fs->gens[g].n &&
                               !id_cmp(map[g] + at[g] * VIEW, best))
                                at[g]++;
        }
        rc = 0;
out:
        for (k = 0; map && k < ng; k++)
                if (map[k])
                        ledger_idfile_unmap((void *)map[k], fs->gens[k].bytes);
        free(map);
        free(at);
        return rc;
}

/* ------------------------------------------------------------------ */
/* Opening                                                             */
/* ------------------------------------------------------------------ */

void ledger_flow_store_free(struct ledger *lg)
{
        struct ledger_flow_store *fs = lg->fs;
        size_t k;

        if (!fs)
                return;
        for (k = 0; k < fs->ntopics; k++)
                free(fs->topics[k]);
        free(fs->topics);
        free(fs->key_of);
        free(fs->keys);
        free(fs->b);
        free(fs->bslots);
        for (k = 0; k < fs->ngens; k++)
                gen_release(&fs->gens[k]);
        free(fs->gens);
        gen_release(&fs->wgen);
        free(fs->w);
        free(fs->lv);
        free(fs->lk);
        free(fs->fb);
        free(fs);
        lg->fs = NULL;
}

static int topics_load(struct ledger *lg, char *errstr, size_t errstr_size)
{
        struct ledger_flow_store *fs = lg->fs;
        sqlite3_stmt *st = NULL;
        int rc = -1, src;

        if (ledger_prepare(lg, "SELECT tid, topic FROM flow_topics", &st,
                           errstr, errstr_size))
                return -1;
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
                int64_t tid = sqlite3_column_int64(st, 0);
                const char *t = (const char *)sqlite3_column_text(st, 1);
                if (tid < 0 || (uint64_t)tid > TID_MAX || !t) {
                        snprintf(errstr, errstr_size,
                                 "the ledger's flow topics are damaged");
                        goto out;
                }
                if ((size_t)tid >= fs->ntopics) {
                        char **n = realloc(fs->topics,
                                           ((size_t)tid + 1) * sizeof(*n));
                        if (!n)
                                goto oom;
                        memset(n + fs->ntopics, 0,
                               ((size_t)tid + 1 - fs->ntopics) * sizeof(*n));
                        fs->topics = n;
                        fs->ntopics = (size_t)tid + 1;
                }
                free(fs->topics[tid]);
                if (!(fs->topics[tid] = strdup(t)))
                        goto oom;
        }
        if (src != SQLITE_DONE) {
                ledger_err(lg, "cannot read the flow topics", errstr,
                           errstr_size);
                goto out;
        }
        rc = 0;
        goto out;
oom:
        snprintf(errstr, errstr_size, "out of memory");
out:
        sqlite3_finalize(st);
        return rc;
}

/* The views of the batches' log, up to the length flow_log says (past it:
 * a commit that did not complete). */
static int log_load(struct ledger *lg, char *errstr, size_t errstr_size)
{
        struct ledger_flow_store *fs = lg->fs;
        sqlite3_stmt *st = NULL;
        unsigned char *buf = NULL;
        size_t at, bytes, chunk = 4096 * VIEW;
        int64_t log = 0, len = 0;
        int rc = -1, src;

        if (ledger_prepare(lg, "SELECT log, bytes FROM flow_log", &st, errstr,
                           errstr_size))
                return -1;
        src = sqlite3_step(st);
        if (src == SQLITE_ROW) {
                log = sqlite3_column_int64(st, 0);
                len = sqlite3_column_int64(st, 1);
        } else if (src != SQLITE_DONE) {
                ledger_err(lg, "cannot read the flow log's row", errstr,
                           errstr_size);
                goto out;
        }
        if (log < 0 || len < 0 || (size_t)len % VIEW) {
                snprintf(errstr, errstr_size,
                         "the ledger's flow log row is damaged");
                goto out;
        }
        bytes = (size_t)len;
        if (bytes && !(buf = malloc(chunk))) {
                snprintf(errstr, errstr_size, "out of memory");
                goto out;
        }
        for (at = 0; at < bytes; at += chunk) {
                size_t n = bytes - at < chunk ? bytes - at : chunk;
                if (ledger_idfile_pread(lg, LEDGER_IDFILE_FLOWLOG,
                                        (uint64_t)log, at, buf, n, errstr,
                                        errstr_size))
                        goto out;
                if (b_add(fs, buf, n / VIEW)) {
                        snprintf(errstr, errstr_size, "out of memory");
                        goto out;
                }
        }
        fs->log = (uint64_t)log;
        fs->logbytes = bytes;
        rc = 0;
out:
        free(buf);
        sqlite3_finalize(st);
        return rc;
}

/* The files of flow_gens, indexed; then the batches' views. */
static int gens_load(struct ledger *lg, char *errstr, size_t errstr_size)
{
        struct ledger_flow_store *fs = lg->fs;
        sqlite3_stmt *st = NULL;
        int rc = -1, src;

        if (ledger_prepare(lg,
                           "SELECT gen, views, file_bytes FROM flow_gens "
                           "ORDER BY gen",
                           &st, errstr, errstr_size))
                return -1;
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
                struct flow_gen g;
                void *map = NULL;
                int64_t n = sqlite3_column_int64(st, 1);
                int bad;
                memset(&g, 0, sizeof(g));
                g.gen = (uint64_t)sqlite3_column_int64(st, 0);
                g.bytes = (size_t)sqlite3_column_int64(st, 2);
                if (n < 0 || g.bytes != (size_t)n * VIEW) {
                        snprintf(errstr, errstr_size,
                                 "the ledger's flow file %llu is damaged",
                                 (unsigned long long)g.gen);
                        goto out;
                }
                if (g.bytes &&
                    !(map = ledger_idfile_map(lg, LEDGER_IDFILE_FLOW, g.gen,
                                              g.bytes, errstr, errstr_size)))
                        goto out;
                bad = gen_index(&g, map, (size_t)n);
                if (!bad) /* before the push: a refill reads the others */
                        fb_add(lg, map, (size_t)n);
                if (bad || gen_push(fs, &g)) {
                        ledger_idfile_unmap(map, g.bytes);
                        gen_release(&g);
                        snprintf(errstr, errstr_size, "out of memory");
                        goto out;
                }
                ledger_idfile_unmap(map, g.bytes);
        }
        if (src != SQLITE_DONE) {
                ledger_err(lg, "cannot read the flow files", errstr,
                           errstr_size);
                goto out;
        }
        sqlite3_finalize(st);
        st = NULL;
        if (ledger_prepare(lg, "SELECT views FROM flow_batches ORDER BY seq",
                           &st, errstr, errstr_size))
                goto out;
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
                size_t len = (size_t)sqlite3_column_bytes(st, 0);
                if (len % VIEW) {
                        snprintf(errstr, errstr_size,
                                 "the ledger's flow batches are damaged");
                        goto out;
                }
                if (len && b_add(fs, sqlite3_column_blob(st, 0), len / VIEW)) {
                        snprintf(errstr, errstr_size, "out of memory");
                        goto out;
                }
        }
        if (src != SQLITE_DONE) {
                ledger_err(lg, "cannot read the flow batches", errstr,
                           errstr_size);
                goto out;
        }
        rc = log_load(lg, errstr, errstr_size);
out:
        sqlite3_finalize(st);
        return rc;
}

int ledger_flow_store_open(struct ledger *lg, char *errstr, size_t errstr_size)
{
        ledger_flow_store_free(lg);
        lg->fs = calloc(1, sizeof(*lg->fs));
        if (!lg->fs) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        if (topics_load(lg, errstr, errstr_size) ||
            gens_load(lg, errstr, errstr_size) ||
            (!lg->readonly && (ledger_idfiles_sweep(lg, LEDGER_IDFILE_FLOW,
                                                    errstr, errstr_size) ||
                               ledger_idfiles_sweep(lg, LEDGER_IDFILE_FLOWLOG,
                                                    errstr, errstr_size)))) {
                ledger_flow_store_free(lg);
                return -1;
        }
        return 0;
}

/* topic's tid, added to flow_topics when new. */
static int tid_get(struct ledger *lg, const char *topic, uint32_t *tid,
                   char *errstr, size_t errstr_size)
{
        struct ledger_flow_store *fs = lg->fs;
        sqlite3_stmt *st = NULL;
        size_t k;
        int rc;

        for (k = 0; k < fs->ntopics; k++)
                if (fs->topics[k] && !strcmp(fs->topics[k], topic)) {
                        *tid = (uint32_t)k;
                        return 0;
                }
        if (fs->ntopics > TID_MAX) {
                snprintf(errstr, errstr_size, "too many flow topics");
                return -1;
        }
        if (ledger_prepare(lg,
                           "INSERT INTO flow_topics (tid, topic) VALUES "
                           "(?1, ?2)",
                           &st, errstr, errstr_size))
                return -1;
        rc = ledger_step_done(lg, st,
                              sqlite3_bind_int64(st, 1, (int64_t)fs->ntopics) |
                                  sqlite3_bind_text(st, 2, topic, -1,
                                                    SQLITE_STATIC),
                              "cannot write a flow topic", errstr,
                              errstr_size);
        sqlite3_finalize(st);
        if (rc)
                return -1;
        return topics_load(lg, errstr, errstr_size) ||
                       tid_get(lg, topic, tid, errstr, errstr_size)
                   ? -1
                   : 0;
}

static int key_cmp(const void *a, const void *b)
{
        const struct flow_key *x = a, *y = b;

        return x->key < y->key ? -1 : x->key > y->key;
}

int ledger_flow_store_attach(struct ledger *lg, char *errstr,
                             size_t errstr_size)
{
        struct ledger_flow_store *fs = lg->fs;
        size_t i, n = lg->flow_nparts;

        free(fs->key_of);
        free(fs->keys);
        fs->key_of = calloc(n ? n : 1, sizeof(*fs->key_of));
        fs->keys = calloc(n ? n : 1, sizeof(*fs->keys));
        fs->nkeys = 0;
        if (!fs->key_of || !fs->keys) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        for (i = 0; i < n; i++) {
                const struct ledger_part *p = &lg->flow_parts[i];
                uint32_t tid;
                if (p->partition < 0 ||
                    (uint32_t)p->partition >= 1u << PART_BITS) {
                        snprintf(errstr, errstr_size,
                                 "flow: partition %d of '%s' is beyond what "
                                 "the ledger stores",
                                 (int)p->partition, p->topic);
                        return -1;
                }
                if (tid_get(lg, p->topic, &tid, errstr, errstr_size))
                        return -1;
                fs->key_of[i] = tid << PART_BITS | (uint32_t)p->partition;
                fs->keys[i].key = fs->key_of[i];
                fs->keys[i].part = (uint32_t)i;
        }
        fs->nkeys = n;
        qsort(fs->keys, n, sizeof(*fs->keys), key_cmp);
        return 0;
}

/* ------------------------------------------------------------------ */
/* Restoring the live entries                                          */
/* ------------------------------------------------------------------ */

struct restore_ctx {
        struct ledger *lg;
        unsigned char *v; /* the live views, then sorted by seq */
        size_t n, cap, dropped;
};

static int restore_collect(void *opaque, const unsigned char *p)
{
        struct restore_ctx *rc = opaque;

        if (v_live(p) != LIVE_HELD)
                return 0;
        if (rc->n == rc->cap) {
                size_t n = rc->cap ? rc->cap * 2 : 4096;
                unsigned char *v = realloc(rc->v, n * VIEW);
                if (!v)
                        return 1; /* out of memory */
                rc->v = v;
                rc->cap = n;
        }
        memcpy(rc->v + rc->n++ * VIEW, p, VIEW);
        return 0;
}

static int seq_cmp(const void *a, const void *b)
{
        uint64_t x = le64_get((const unsigned char *)a + 16);
        uint64_t y = le64_get((const unsigned char *)b + 16);

        return x < y ? -1 : x > y;
}

int ledger_flow_store_restore(struct ledger *lg, struct dedup_flow *fl,
                              size_t *dropped, char *errstr,
                              size_t errstr_size)
{
        struct restore_ctx c = {lg, NULL, 0, 0, 0};
        struct dedup_flow_view v;
        size_t k;
        int rc = -1, r;

        *dropped = 0;
        r = latest_foreach(lg, restore_collect, &c, errstr, errstr_size);
        if (r) {
                if (r > 0)
                        snprintf(errstr, errstr_size,
                                 "cannot restore the flow: out of memory");
                goto out;
        }
        if (c.n)
                qsort(c.v, c.n, VIEW, seq_cmp);
        for (k = 0; k < c.n; k++) {
                /* A topic no longer in the flow: its entry cannot be
                 * judged by this run. */
                if (view_unpack(lg->fs, c.v + k * VIEW, &v)) {
                        (*dropped)++;
                        continue;
                }
                if (dedup_flow_restore(fl, &v)) {
                        snprintf(errstr, errstr_size,
                                 "cannot restore the flow: out of memory or "
                                 "a damaged entry (seq %" PRIu64 ")",
                                 v.seq);
                        goto out;
                }
        }
        rc = 0;
out:
        free(c.v);
        return rc;
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */
/* ------------------------------------------------------------------ */

static int w_room(struct ledger_flow_store *fs, size_t n)
{
        if (fs->wn + n > fs->wcap) {
                size_t c = fs->wcap ? fs->wcap : 1024;
                unsigned char *w;
                while (c < fs->wn + n)
                        c *= 2;
                if (!(w = realloc(fs->w, c * VIEW)))
                        return -1;
                fs->w = w;
                fs->wcap = c;
        }
        return 0;
}

void ledger_flow_store_begin(struct ledger *lg)
{
        struct ledger_flow_store *fs = lg->fs;

        fs->wn = 0;
        fs->closing = 0;
        fs->wlogged = 0;
        gen_release(&fs->wgen);
}

int ledger_flow_store_put(struct ledger *lg, const struct dedup_flow_view *v,
                          int live)
{
        struct ledger_flow_store *fs = lg->fs;

        if (w_room(fs, 1))
                return -1;
        view_pack(fs, v, live ? LIVE_HELD : LIVE_RETIRED,
                  fs->w + fs->wn++ * VIEW);
        return 0;
}

/* Closes the batches into the next file: its latest views, sorted, written
 * and made durable; flow_gens names it and the batches go, in the open
 * transaction.  The memory follows at ledger_flow_store_committed(). */
static int gen_close(struct ledger *lg, char *errstr, size_t errstr_size)
{
        struct ledger_flow_store *fs = lg->fs;
        struct flow_gen *g = &fs->wgen;
        unsigned char *v = NULL;
        sqlite3_stmt *st = NULL;
        size_t n = 0;
        int rc = -1;

        memset(g, 0, sizeof(*g));
        g->gen = fs->ngens ? fs->gens[fs->ngens - 1].gen + 1 : 1;
        if (b_latest(fs, &v, &n) || gen_index(g, v, n)) {
                snprintf(errstr, errstr_size, "out of memory");
                goto out;
        }
        /* Before it commits: if it does not, the filter only says "maybe"
         * for ids no file has. */
        fb_add(lg, v, n);
        g->bytes = n * VIEW;
        if (ledger_idfile_create(lg, LEDGER_IDFILE_FLOW, g->gen, v, g->bytes,
                                 errstr, errstr_size) ||
            ledger_prepare(lg,
                           "INSERT INTO flow_gens (gen, views, file_bytes) "
                           "VALUES (?1, ?2, ?3)",
                           &st, errstr, errstr_size) ||
            ledger_step_done(lg, st,
                             sqlite3_bind_int64(st, 1, (int64_t)g->gen) |
                                 sqlite3_bind_int64(st, 2, (int64_t)n) |
                                 sqlite3_bind_int64(st, 3, (int64_t)g->bytes),
                             "cannot write a flow file's row", errstr,
                             errstr_size) ||
            ledger_exec(lg, "DELETE FROM flow_batches",
                        "cannot delete the flow batches", errstr, errstr_size))
                goto out;
        fs->closing = 1;
        rc = 0;
out:
        sqlite3_finalize(st);
        return rc;
}

/* Appends the transaction's views to the batches' log (a new one when
 * the transaction closes the batches into a file, or there is none), made
 * durable, and records its length in flow_log. */
static int log_put(struct ledger *lg, char *errstr, size_t errstr_size)
{
        struct ledger_flow_store *fs = lg->fs;
        sqlite3_stmt *st = NULL;
        size_t at = fs->closing || !fs->log ? 0 : fs->logbytes;
        uint64_t log = fs->closing || !fs->log ? fs->log + 1 : fs->log;
        int rc;

        if (fs->wn &&
            ledger_idfile_append(lg, LEDGER_IDFILE_FLOWLOG, log, at, fs->w,
                                 fs->wn * VIEW, errstr, errstr_size))
                return -1;
        if (ledger_prepare(lg,
                           "INSERT OR REPLACE INTO flow_log (one, log, bytes) "
                           "VALUES (1, ?1, ?2)",
                           &st, errstr, errstr_size))
                return -1;
        rc = ledger_step_done(
            lg, st,
            sqlite3_bind_int64(st, 1, (int64_t)log) |
                sqlite3_bind_int64(st, 2, (int64_t)(at + fs->wn * VIEW)),
            "cannot write the flow log's row", errstr, errstr_size);
        sqlite3_finalize(st);
        if (rc)
                return -1;
        fs->wlog = log;
        fs->wlogbytes = at + fs->wn * VIEW;
        fs->wlogged = 1;
        return 0;
}

int ledger_flow_store_flush(struct ledger *lg, char *errstr,
                            size_t errstr_size)
{
        struct ledger_flow_store *fs = lg->fs;

        if (!fs->wn)
                return 0;
        if (fs->bn >= (lg->flow_gen_views ? lg->flow_gen_views
                                          : LEDGER_FLOW_GEN_VIEWS) &&
            gen_close(lg, errstr, errstr_size))
                return -1;
        return log_put(lg, errstr, errstr_size);
}

void ledger_flow_store_committed(struct ledger *lg)
{
        struct ledger_flow_store *fs = lg->fs;

        if (fs->closing) {
                if (gen_push(fs, &fs->wgen))
                        gen_release(&fs->wgen); /* found by no lookup */
                memset(&fs->wgen, 0, sizeof(fs->wgen));
                b_clear(fs);
                fs->closing = 0;
        }
        if (fs->wlogged) {
                /* The batches closed into a file: their log goes. */
                if (fs->log && fs->log != fs->wlog)
                        ledger_idfile_unlink(lg, LEDGER_IDFILE_FLOWLOG,
                                             fs->log);
                fs->log = fs->wlog;
                fs->logbytes = fs->wlogbytes;
                fs->wlogged = 0;
        }
        if (fs->wn && b_add(fs, fs->w, fs->wn))
                /* Out of memory: lookups would miss these, so the next
                 * load finds them instead (they are committed). */
                log_warn("flow: out of memory keeping a committed batch");
        fs->wn = 0;
}

/* ------------------------------------------------------------------ */
/* Finding a retired entry                                             */
/* ------------------------------------------------------------------ */

int ledger_flow_store_find(struct ledger *lg, const struct dedup_id *id,
                           struct dedup_flow_view *out, char *errstr,
                           size_t errstr_size)
{
        struct ledger_flow_store *fs = lg->fs;
        unsigned char p[VIEW];
        const unsigned char *hit = NULL;
        size_t g;
        int r;

        if (fs->bn) {
                size_t s = b_slot(fs, id->lo, id->hi);
                if (fs->bslots[s])
                        hit = fs->b + (fs->bslots[s] - 1) * VIEW;
        }
        for (g = fb_maybe(fs, id->lo, id->hi) ? fs->ngens : 0;
             !hit && g-- > 0;) {
                r = gen_find(lg, &fs->gens[g], id->lo, id->hi, p, errstr,
                             errstr_size);
                if (r < 0)
                        return -1;
                if (r)
                        hit = p;
        }
        /* Only a retired entry comes back (an old incarnation's never). */
        if (!hit || v_live(hit) != LIVE_RETIRED)
                return 0;
        return view_unpack(fs, hit, out) ? 0 : 1;
}

/* ------------------------------------------------------------------ */
/* The retired views                                                   */
/* ------------------------------------------------------------------ */

struct ret_ctx {
        struct ledger_flow_store *fs;
        ledger_flow_view_fn *cb;
        void *opaque;
};

static int ret_cb(void *opaque, const unsigned char *p)
{
        struct ret_ctx *c = opaque;
        struct dedup_flow_view v;

        /* Held ones are the engine's; an old incarnation's never come
         * back; one naming a part the flow no longer has neither. */
        if (v_live(p) != LIVE_RETIRED || view_unpack(c->fs, p, &v))
                return 0;
        return c->cb(c->opaque, &v) ? 1 : 0;
}

int ledger_flow_store_retired_foreach(struct ledger *lg,
                                      ledger_flow_view_fn *cb, void *opaque,
                                      char *errstr, size_t errstr_size)
{
        struct ret_ctx c = {lg->fs, cb, opaque};
        int x;

        if (!lg->fs) {
                snprintf(errstr, errstr_size, "the flow store is not open");
                return -1;
        }
        x = latest_foreach(lg, ret_cb, &c, errstr, errstr_size);
        if (x > 0)
                snprintf(errstr, errstr_size, "out of memory");
        return x ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* A topic's new incarnation                                           */
/* ------------------------------------------------------------------ */

struct inc_ctx {
        struct ledger *lg;
        uint32_t tid;
        struct ledger_flow_inc *r;
};

static int key_in(uint32_t key, uint32_t tid)
{
        return key != KEY_NONE && key >> PART_BITS == tid;
}

/* p with its copies forgotten: a delivered record whose copies were in
 * the old log (prior). */
static void view_prior(unsigned char *p)
{
        le32_put(p + 36, KEY_NONE);
        le32_put(p + 40, KEY_NONE);
        le32_put(p + 44, 0);
        le64_put(p + 64, (uint64_t)-1);
        le64_put(p + 72, (uint64_t)-1);
        le64_put(p + 80, 0);
        le32_put(p + 88, le32_get(p + 88) | 1u << 7 | 1u << 9);
}

static void view_live_set(unsigned char *p, unsigned live)
{
        le32_put(p + 88, (le32_get(p + 88) & ~(3u << 4)) | live << 4);
}

static int inc_cb(void *opaque, const unsigned char *p)
{
        struct inc_ctx *c = opaque;
        struct ledger_flow_store *fs = c->lg->fs;
        struct ledger_flow_inc *r = c->r;
        uint32_t bits = le32_get(p + 88), copies = le32_get(p + 44);
        unsigned live = v_live(p), o = bits & 15u;
        int has_src = !!(bits & 1u << 6);
        int src_in = has_src && key_in(le32_get(p + 32), c->tid);
        int sink_in = copies && (key_in(le32_get(p + 36), c->tid) ||
                                 key_in(le32_get(p + 40), c->tid));
        unsigned char *w;

        if ((live != LIVE_HELD && live != LIVE_RETIRED) ||
            (!src_in && !sink_in) || o >= DEDUP_FLOW__OUTCOMES)
                return 0;
        if (w_room(fs, 1))
                return 1; /* out of memory */
        w = fs->w + fs->wn++ * VIEW;
        memcpy(w, p, VIEW);
        if (live == LIVE_RETIRED) {
                /* Retired past the bound: the same rules, so that a
                 * revival cannot reach into the old log; their verdicts
                 * and the retired counters stay as they are. */
                if (o == DEDUP_FLOW_DELIVERED && has_src && !src_in)
                        view_prior(w);
                else
                        view_live_set(w, LIVE_OLD);
                return 0;
        }
        if (o == DEDUP_FLOW_PENDING || o == DEDUP_FLOW_AWAITING) {
                /* Not judged, and never can be: what it waited for was in
                 * the old log.  Part of the incarnation's coverage gap. */
                if (o == DEDUP_FLOW_PENDING)
                        r->gone_pending++;
                else
                        r->gone_awaiting += copies;
                r->unjudged++;
                view_live_set(w, LIVE_GONE);
        } else if (has_src && !src_in && o == DEDUP_FLOW_DELIVERED) {
                /* Its source is still the same log: a delivered record
                 * whose copies went with the sink, so that a re-delivery
                 * is its first copy in the new one, not a duplicate. */
                r->prior++;
                view_prior(w);
                return 0;
        } else {
                /* Judged in the old incarnation: the verdict stands, the
                 * entry leaves the live set, as the memory bound retires
                 * one; kept as evidence when it is one. */
                r->retired.outcome[o] += has_src ? 1 : copies;
                if (o == DEDUP_FLOW_DUPLICATED && copies)
                        r->retired.duplicate_copies += copies - 1;
                r->judged++;
                view_live_set(w, o == DEDUP_FLOW_DELIVERED ? LIVE_GONE
                                                           : LIVE_OLD);
        }
        r->gone++;
        return 0;
}

int ledger_flow_store_incarnate(struct ledger *lg, const char *topic,
                                struct ledger_flow_inc *r, char *errstr,
                                size_t errstr_size)
{
        struct inc_ctx c = {lg, 0, r};
        struct ledger_flow_store *fs;
        size_t k;
        int rc = -1, x;

        memset(r, 0, sizeof(*r));
        if (lg->flow) {
                /* The store is read again by the next load, not here. */
                snprintf(errstr, errstr_size,
                         "topic '%s': a new incarnation is recorded before "
                         "the flow is loaded",
                         topic);
                return -1;
        }
        if (!lg->fs && ledger_flow_store_open(lg, errstr, errstr_size))
                return -1;
        fs = lg->fs;
        for (k = 0; k < fs->ntopics; k++)
                if (fs->topics[k] && !strcmp(fs->topics[k], topic))
                        break;
        if (k == fs->ntopics) {
                rc = 0; /* never in a flow */
                goto out;
        }
        c.tid = (uint32_t)k;
        ledger_flow_store_begin(lg);
        x = latest_foreach(lg, inc_cb, &c, errstr, errstr_size);
        if (x) {
                if (x > 0)
                        snprintf(errstr, errstr_size, "out of memory");
                goto out;
        }
        if (fs->wn && log_put(lg, errstr, errstr_size))
                goto out;
        rc = 0;
out:
        /* What this wrote is read again by the next load. */
        ledger_flow_store_free(lg);
        return rc;
}

/* ------------------------------------------------------------------ */
/* A ledger from before the store                                      */
/* ------------------------------------------------------------------ */

int ledger_flow_store_legacy(struct ledger *lg,
                             int (*row)(struct ledger *, sqlite3_stmt *,
                                        struct dedup_flow_view *),
                             const char *sql, char *errstr, size_t errstr_size)
{
        struct ledger_flow_store *fs = lg->fs;
        struct dedup_flow_view v;
        sqlite3_stmt *st = NULL;
        size_t dropped = 0;
        int rc = -1, src, in_txn = 0;

        if (fs->ngens || fs->bn)
                return 0;
        ledger_flow_store_begin(lg);
        if (ledger_prepare(lg, sql, &st, errstr, errstr_size))
                return -1;
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
                int live = sqlite3_column_int(st, 22);
                if (row(lg, st, &v)) {
                        dropped++;
                        continue;
                }
                if (ledger_flow_store_put(lg, &v, live == 1)) {
                        snprintf(errstr, errstr_size, "out of memory");
                        goto out;
                }
        }
        if (src != SQLITE_DONE) {
                ledger_err(lg, "cannot read the flow entries", errstr,
                           errstr_size);
                goto out;
        }
        sqlite3_finalize(st);
        st = NULL;
        if (!fs->wn && !dropped) {
                rc = 0;
                goto out;
        }
        if (ledger_txn(lg, LEDGER_ST_BEGIN, "cannot convert the flow entries",
                       errstr, errstr_size))
                goto out;
        in_txn = 1;
        if (log_put(lg, errstr, errstr_size) ||
            ledger_exec(lg,
                        "DELETE FROM flow_entries WHERE live IN (0, 1) AND "
                        "outcome NOT IN ('lost', 'duplicated', "
                        "'unexpected')",
                        "cannot convert the flow entries", errstr,
                        errstr_size) ||
            ledger_txn(lg, LEDGER_ST_COMMIT, "cannot convert the flow entries",
                       errstr, errstr_size))
                goto out;
        in_txn = 0;
        log_info("flow: %zu entries of this ledger converted to packed "
                 "views (schema/0016_flow_store.sql)",
                 fs->wn);
        if (dropped)
                log_warn("flow: %zu stored entries name a topic or partition "
                         "that is not in this flow; they are left out",
                         dropped);
        ledger_flow_store_committed(lg);
        rc = 0;
out:
        if (in_txn)
                ledger_rollback(lg);
        sqlite3_finalize(st);
        return rc;
}

void ledger_flow_gen_views_set(struct ledger *lg, size_t views)
{
        lg->flow_gen_views = views;
}
