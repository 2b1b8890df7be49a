/*
 * flow_pack.c - an entry's fields in 60 bytes (flow_internal.h, struct
 * flow_ent), and the id bytes of the live entries in one byte ring.
 *
 * Narrow fields are 32-bit deltas from the flow's bases: seq and born
 * from one base each, times from one base (signed, +-24 days), offsets
 * from a base per part and side.  A base is set by the first value it
 * packs, 2^31 below it (the time's at it), so that older values revived
 * later still fit.  A value above its base's range moves the base up to
 * it and repacks every live entry (flow_rebase: once per 2^31 new values
 * at most); a value that still does not fit (below the base, a part past
 * 65534, a second copy on another offset than the first, ...) makes the
 * entry wide: its whole struct flow_rec in fl->wide, the index in
 * src_off.  Exact either way: unpack returns what pack was given.
 *
 * The arena holds, per live entry and in the entries' order, one byte
 * (the kept length, its high bit set when the whole length follows in 4
 * bytes) and min(id_len, DEDUP_FLOW_ID_KEEP) id bytes.  A record never
 * wraps: one that does not fit before the end starts again at 0.
 */
#include <stdlib.h>
#include <string.h>

#include "flow_internal.h"

#define HALF ((int64_t)1 << 31)
#define TS_NONE INT32_MIN
#define OFF_NONE UINT32_MAX
#define PART_NONE UINT16_MAX
/* Times and bases beyond this are kept wide (no overflow in a delta). */
#define TS_SANE ((int64_t)1 << 62)

enum { FIT = 0, WIDE, ABOVE };

/* Which base a value outgrew (flow_rebase). */
enum base_kind { B_SEQ, B_BORN, B_TS, B_SRC_OFF, B_SINK_OFF };

struct above {
        enum base_kind kind;
        uint32_t part;
        int64_t value;
};

/* ------------------------------------------------------------------ */
/* Fields                                                              */
/* ------------------------------------------------------------------ */

static int fit_u(uint64_t v, uint64_t *base, int *set, uint32_t *out)
{
        if (!*set) {
                *base = v > (uint64_t)HALF ? v - (uint64_t)HALF : 0;
                *set = 1;
        }
        if (v < *base)
                return WIDE;
        if (v - *base > UINT32_MAX)
                return ABOVE;
        *out = (uint32_t)(v - *base);
        return FIT;
}

static int fit_ts(struct flow_bases *b, int64_t v, int32_t *out)
{
        int64_t d;

        if (v == 0) {
                *out = TS_NONE;
                return FIT;
        }
        if (v >= TS_SANE || v <= -TS_SANE)
                return WIDE;
        if (!b->ts_set) {
                b->ts = v;
                b->ts_set = 1;
        }
        d = v - b->ts;
        if (d <= INT32_MIN)
                return WIDE;
        if (d > INT32_MAX)
                return ABOVE;
        *out = (int32_t)d;
        return FIT;
}

static int fit_off(int64_t v, int64_t *base, uint32_t *out)
{
        if (v == -1) {
                *out = OFF_NONE;
                return FIT;
        }
        if (v < 0)
                return WIDE;
        if (*base < 0)
                *base = v > HALF ? v - HALF : 0;
        if (v < *base)
                return WIDE;
        if (v - *base >= (int64_t)OFF_NONE)
                return ABOVE;
        *out = (uint32_t)(v - *base);
        return FIT;
}

static int grow_bases(int64_t **arr, uint32_t *n, uint32_t want)
{
        int64_t *a;
        uint32_t k, m;

        if (want <= *n)
                return 0;
        m = want > *n * 2 ? want : *n * 2;
        a = realloc(*arr, (size_t)m * sizeof(*a));
        if (!a)
                return -1;
        for (k = *n; k < m; k++)
                a[k] = -1;
        *arr = a;
        *n = m;
        return 0;
}

int dedup_flow_pack_parts(struct dedup_flow *fl, uint32_t nparts)
{
        return grow_bases(&fl->bases.src_off, &fl->bases.nsrc_off, nparts);
}

static int fit_part(uint32_t part, uint16_t *out)
{
        if (part == UINT32_MAX) {
                *out = PART_NONE;
                return FIT;
        }
        if (part >= PART_NONE)
                return WIDE;
        *out = (uint16_t)part;
        return FIT;
}

/* The offset of a part's side: fits its base (set or grown on demand). */
static int fit_part_off(struct dedup_flow *fl, int sink, uint32_t part,
                        int64_t v, uint32_t *out, struct above *ab)
{
        struct flow_bases *b = &fl->bases;
        int64_t **arr = sink ? &b->sink_off : &b->src_off;
        uint32_t *n = sink ? &b->nsink_off : &b->nsrc_off;
        int rc;

        if (part == UINT32_MAX)
                return v == -1 ? (*out = OFF_NONE, FIT) : WIDE;
        if (part >= PART_NONE || grow_bases(arr, n, part + 1))
                return WIDE;
        rc = fit_off(v, &(*arr)[part], out);
        if (rc == ABOVE) {
                ab->kind = sink ? B_SINK_OFF : B_SRC_OFF;
                ab->part = part;
                ab->value = v;
        }
        return rc;
}

/* r in narrow form into *n (the packed fields only); FIT, WIDE, or ABOVE
 * with the base that r outgrew in *ab. */
static int narrow(struct dedup_flow *fl, const struct flow_rec *r,
                  struct flow_ent *n, struct above *ab)
{
        struct flow_bases *b = &fl->bases;
        int rc;

        if (r->copies > UINT16_MAX || r->sink_part_last != r->sink_part ||
            r->sink_offset_last != r->sink_offset)
                return WIDE;
        n->copies = (uint16_t)r->copies;
        if (fit_part(r->src_part, &n->src_part) ||
            fit_part(r->sink_part, &n->sink_part))
                return WIDE;
        if ((rc = fit_u(r->seq, &b->seq, &b->seq_set, &n->seq)) != FIT) {
                ab->kind = B_SEQ;
                ab->value = (int64_t)r->seq;
                return r->seq > INT64_MAX ? WIDE : rc;
        }
        if ((rc = fit_u(r->born, &b->born, &b->born_set, &n->born)) != FIT) {
                ab->kind = B_BORN;
                ab->value = (int64_t)r->born;
                return r->born > INT64_MAX ? WIDE : rc;
        }
        if ((rc = fit_ts(b, r->src_ts, &n->src_ts)) != FIT) {
                ab->kind = B_TS;
                ab->value = r->src_ts;
                return rc;
        }
        if ((rc = fit_ts(b, r->sink_ts, &n->sink_ts)) != FIT) {
                ab->kind = B_TS;
                ab->value = r->sink_ts;
                return rc;
        }
        if ((rc = fit_part_off(fl, 0, r->src_part, r->src_offset,
                               &n->src_off, ab)) != FIT)
                return rc;
        return fit_part_off(fl, 1, r->sink_part, r->sink_offset,
                            &n->sink_off, ab);
}

static void unpack_with(const struct dedup_flow *fl,
                        const struct flow_bases *b, const struct flow_ent *e,
                        struct flow_rec *r)
{
        if (e->flags & F_WIDE) {
                *r = fl->wide[e->src_off];
                return;
        }
        r->seq = b->seq + e->seq;
        r->born = b->born + e->born;
        r->src_ts = e->src_ts == TS_NONE ? 0 : b->ts + e->src_ts;
        r->sink_ts = e->sink_ts == TS_NONE ? 0 : b->ts + e->sink_ts;
        r->src_part = e->src_part == PART_NONE ? UINT32_MAX : e->src_part;
        r->sink_part = e->sink_part == PART_NONE ? UINT32_MAX : e->sink_part;
        r->src_offset = e->src_off == OFF_NONE
                            ? -1
                            : b->src_off[e->src_part] + e->src_off;
        r->sink_offset = e->sink_off == OFF_NONE
                             ? -1
                             : b->sink_off[e->sink_part] + e->sink_off;
        r->sink_part_last = r->sink_part;
        r->sink_offset_last = r->sink_offset;
        r->copies = e->copies;
}

void dedup_flow_unpack(const struct dedup_flow *fl, uint32_t i,
                       struct flow_rec *r)
{
        unpack_with(fl, &fl->bases, &fl->ents[i], r);
}

int64_t dedup_flow_src_offset(const struct dedup_flow *fl, uint32_t i)
{
        const struct flow_ent *e = &fl->ents[i];

        if (e->flags & F_WIDE)
                return fl->wide[e->src_off].src_offset;
        return e->src_off == OFF_NONE
                   ? -1
                   : fl->bases.src_off[e->src_part] + e->src_off;
}

uint32_t dedup_flow_src_part(const struct dedup_flow *fl, uint32_t i)
{
        const struct flow_ent *e = &fl->ents[i];

        if (e->flags & F_WIDE)
                return fl->wide[e->src_off].src_part;
        return e->src_part == PART_NONE ? UINT32_MAX : e->src_part;
}

/* ------------------------------------------------------------------ */
/* Wide records                                                        */
/* ------------------------------------------------------------------ */

static uint32_t wide_alloc(struct dedup_flow *fl)
{
        uint32_t k;

        if (fl->wide_free != NIL) {
                k = fl->wide_free;
                fl->wide_free = (uint32_t)fl->wide[k].seq;
        } else {
                if (fl->nwide == fl->cap_wide) {
                        uint32_t n = fl->cap_wide ? fl->cap_wide * 2 : 64;
                        struct flow_rec *w;
                        if (fl->cap_wide >= NIL / 2)
                                return NIL;
                        w = realloc(fl->wide, (size_t)n * sizeof(*w));
                        if (!w)
                                return NIL;
                        fl->wide = w;
                        fl->cap_wide = n;
                }
                k = fl->nwide++;
        }
        fl->wide_live++;
        return k;
}

static void wide_release(struct dedup_flow *fl, struct flow_ent *e)
{
        if (!(e->flags & F_WIDE))
                return;
        fl->wide[e->src_off].seq = fl->wide_free;
        fl->wide_free = e->src_off;
        fl->wide_live--;
        e->flags &= ~F_WIDE;
}

void dedup_flow_pack_drop(struct dedup_flow *fl, uint32_t i)
{
        wide_release(fl, &fl->ents[i]);
}

/* Stores r into e: narrow when rc says it fits (n holds the fields), else
 * wide.  0, or -1 when out of memory. */
static int store(struct dedup_flow *fl, struct flow_ent *e, int rc,
                 const struct flow_ent *n, const struct flow_rec *r)
{
        uint32_t k;

        if (rc == FIT) {
                wide_release(fl, e);
                e->seq = n->seq;
                e->born = n->born;
                e->src_off = n->src_off;
                e->sink_off = n->sink_off;
                e->src_ts = n->src_ts;
                e->sink_ts = n->sink_ts;
                e->src_part = n->src_part;
                e->sink_part = n->sink_part;
                e->copies = n->copies;
                return 0;
        }
        if (!(e->flags & F_WIDE)) {
                if ((k = wide_alloc(fl)) == NIL)
                        return -1;
                e->src_off = k;
                e->flags |= F_WIDE;
        }
        fl->wide[e->src_off] = *r;
        return 0;
}

/* The base ab names, as a signed value (seq and born fit: they were
 * checked below INT64_MAX), and set. */
static int64_t base_get(const struct flow_bases *b, const struct above *ab)
{
        switch (ab->kind) {
        case B_SEQ: return (int64_t)b->seq;
        case B_BORN: return (int64_t)b->born;
        case B_TS: return b->ts;
        case B_SRC_OFF: return b->src_off[ab->part];
        case B_SINK_OFF: return b->sink_off[ab->part];
        }
        return 0;
}

static void base_set(struct flow_bases *b, const struct above *ab, int64_t v)
{
        switch (ab->kind) {
        case B_SEQ: b->seq = (uint64_t)v; break;
        case B_BORN: b->born = (uint64_t)v; break;
        case B_TS: b->ts = v; break;
        case B_SRC_OFF: b->src_off[ab->part] = v; break;
        case B_SINK_OFF: b->sink_off[ab->part] = v; break;
        }
}

/* The base ab names moves up to ab->value (the time's to 2^30 below it,
 * the others' to 2^31 below), and every live entry is repacked: those now
 * below it go wide, those wide that fit again go narrow. */
static int flow_rebase(struct dedup_flow *fl, const struct above *ab)
{
        struct flow_bases *b = &fl->bases;
        int64_t olds = base_get(b, ab), news;
        uint64_t k;
        uint32_t i;

        if (ab->kind == B_TS)
                news = ab->value - HALF / 2;
        else
                news = ab->value > HALF ? ab->value - HALF : 0;
        for (k = 0, i = fl->head; k < fl->live;
             k++, i = dedup_flow_next(fl, i)) {
                struct flow_ent *e = &fl->ents[i], n;
                struct flow_rec r;
                struct above dummy;
                int rc;

                unpack_with(fl, b, e, &r);
                base_set(b, ab, news);
                rc = narrow(fl, &r, &n, &dummy);
                base_set(b, ab, olds);
                if (store(fl, e, rc == FIT ? FIT : WIDE, &n, &r))
                        return -1;
        }
        base_set(b, ab, news);
        return 0;
}

int dedup_flow_pack(struct dedup_flow *fl, uint32_t i,
                    const struct flow_rec *r)
{
        struct flow_ent n;
        struct above ab;
        int rc, tries = 0;

        while ((rc = narrow(fl, r, &n, &ab)) == ABOVE && tries++ < 8)
                if (flow_rebase(fl, &ab)) {
                        fl->failed = 1;
                        return -1;
                }
        if (store(fl, &fl->ents[i], rc == FIT ? FIT : WIDE, &n, r)) {
                fl->failed = 1;
                return -1;
        }
        return 0;
}

/* ------------------------------------------------------------------ */
/* The ids' arena                                                      */
/* ------------------------------------------------------------------ */

/* Room for s more bytes: the arena grows by half; when wrapped, its
 * older part moves to the new end, and the entries' idpos with it. */
static int arena_grow(struct dedup_flow *fl, uint32_t s)
{
        uint64_t want = (uint64_t)fl->arena_cap + fl->arena_cap / 2;
        uint32_t n, oldh = fl->arena_head, delta, k, i;
        unsigned char *a;

        if (want < (uint64_t)fl->arena_cap + s + 64)
                want = (uint64_t)fl->arena_cap + s + 64;
        if (want < 4096)
                want = 4096;
        if (want > UINT32_MAX)
                return -1;
        n = (uint32_t)want;
        a = realloc(fl->arena, n);
        if (!a)
                return -1;
        fl->arena = a;
        if (fl->arena_wrapped) {
                delta = n - fl->arena_end;
                memmove(a + oldh + delta, a + oldh, fl->arena_end - oldh);
                /* The entries before the wrap come first, oldest first. */
                for (k = 0, i = fl->head;
                     k < fl->live && fl->ents[i].idpos >= oldh;
                     k++, i = dedup_flow_next(fl, i))
                        fl->ents[i].idpos += delta;
                fl->arena_head = oldh + delta;
                fl->arena_end = n;
        }
        fl->arena_cap = n;
        return 0;
}

static int arena_alloc(struct dedup_flow *fl, uint32_t s, uint32_t *pos)
{
        if (!fl->live) {
                fl->arena_head = fl->arena_tail = fl->arena_end = 0;
                fl->arena_wrapped = 0;
        }
        for (;;) {
                if (!fl->arena_wrapped) {
                        if (fl->arena_cap - fl->arena_tail >= s) {
                                *pos = fl->arena_tail;
                                fl->arena_tail += s;
                                return 0;
                        }
                        if (fl->live && fl->arena_head >= s) {
                                fl->arena_end = fl->arena_tail;
                                fl->arena_wrapped = 1;
                                *pos = 0;
                                fl->arena_tail = s;
                                return 0;
                        }
                } else if (fl->arena_head - fl->arena_tail >= s) {
                        *pos = fl->arena_tail;
                        fl->arena_tail += s;
                        return 0;
                }
                if (arena_grow(fl, s))
                        return -1;
        }
}

int dedup_flow_arena_put(struct dedup_flow *fl, uint32_t i, const void *idb,
                         size_t id_len)
{
        uint32_t k = id_len < DEDUP_FLOW_ID_KEEP ? (uint32_t)id_len
                                                 : DEDUP_FLOW_ID_KEEP;
        int wide = id_len > k;
        uint32_t s = 1 + (wide ? 4 : 0) + k, pos, len32;
        unsigned char *p;

        if (arena_alloc(fl, s, &pos)) {
                fl->failed = 1;
                return -1;
        }
        p = fl->arena + pos;
        *p++ = (unsigned char)(k | (wide ? 0x80u : 0));
        if (wide) {
                len32 = id_len > UINT32_MAX ? UINT32_MAX : (uint32_t)id_len;
                memcpy(p, &len32, 4);
                p += 4;
        }
        if (k)
                memcpy(p, idb, k);
        fl->ents[i].idpos = pos;
        return 0;
}

size_t dedup_flow_arena_get(const struct dedup_flow *fl, uint32_t i,
                            unsigned char out[DEDUP_FLOW_ID_KEEP])
{
        const unsigned char *p = fl->arena + fl->ents[i].idpos;
        uint32_t k = *p & 0x7fu, len32 = k;

        if (*p++ & 0x80u) {
                memcpy(&len32, p, 4);
                p += 4;
        }
        memcpy(out, p, k);
        return len32;
}

void dedup_flow_arena_pop(struct dedup_flow *fl)
{
        uint32_t nh;

        if (!fl->live) {
                fl->arena_head = fl->arena_tail = fl->arena_end = 0;
                fl->arena_wrapped = 0;
                return;
        }
        nh = fl->ents[fl->head].idpos;
        if (fl->arena_wrapped && nh < fl->arena_head)
                fl->arena_wrapped = 0;
        fl->arena_head = nh;
}

void dedup_flow_pack_free(struct dedup_flow *fl)
{
        free(fl->wide);
        free(fl->arena);
        free(fl->bases.src_off);
        free(fl->bases.sink_off);
}

size_t dedup_flow_pack_memory(const struct dedup_flow *fl)
{
        return (size_t)fl->cap_wide * sizeof(struct flow_rec) +
               fl->arena_cap +
               ((size_t)fl->bases.nsrc_off + fl->bases.nsink_off) *
                   sizeof(int64_t);
}
