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
 * entry wide: its whole struct flow_rec in fl->wide, the index in seq.
 * Exact either way: unpack returns what pack was given.  A queued entry's
 * empty side holds its list links (flow_internal.h): pack leaves it
 * alone, unpack reads it as empty.
 *
 * The arena holds, per live entry and in the entries' order, one byte
 * (the kept length; its high bit set when the whole length follows in 4
 * bytes and the 128-bit id in 16: an id longer than DEDUP_FLOW_ID_KEEP,
 * or whose kept bytes do not hash to it) and min(id_len, KEEP) id bytes.
 * A record never wraps: one that does not fit before the end starts
 * again at 0.
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

static int queued_src(const struct flow_ent *e)
{
        return (e->flags & (F_QUEUED | F_SRC)) == (F_QUEUED | F_SRC);
}

static int queued_sink(const struct flow_ent *e)
{
        return (e->flags & (F_QUEUED | F_SRC)) == F_QUEUED;
}

/* r in narrow form for entry e into *n (the packed fields only); FIT,
 * WIDE, or ABOVE with the base that r outgrew in *ab. */
static int narrow(struct dedup_flow *fl, const struct flow_ent *e,
                  const struct flow_rec *r, struct flow_ent *n,
                  struct above *ab)
{
        struct flow_bases *b = &fl->bases;
        int32_t ts;
        int rc;

        /* The side that holds the links must be empty. */
        if ((queued_src(e) && (r->sink_offset != -1 || r->sink_ts)) ||
            (queued_sink(e) && (r->src_offset != -1 || r->src_ts)))
                return WIDE;
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
        if ((rc = fit_ts(b, r->src_ts, &ts)) != FIT) {
                ab->kind = B_TS;
                ab->value = r->src_ts;
                return rc;
        }
        n->x[1] = (uint32_t)ts;
        if ((rc = fit_ts(b, r->sink_ts, &ts)) != FIT) {
                ab->kind = B_TS;
                ab->value = r->sink_ts;
                return rc;
        }
        n->y[1] = (uint32_t)ts;
        if ((rc = fit_part_off(fl, 0, r->src_part, r->src_offset, &n->x[0],
                               ab)) != FIT)
                return rc;
        return fit_part_off(fl, 1, r->sink_part, r->sink_offset, &n->y[0], ab);
}

static int64_t ts_of(const struct flow_bases *b, uint32_t v)
{
        int32_t d = (int32_t)v;

        return d == TS_NONE ? 0 : b->ts + d;
}

static void unpack_with(const struct dedup_flow *fl,
                        const struct flow_bases *b, const struct flow_ent *e,
                        struct flow_rec *r)
{
        if (e->flags & F_WIDE) {
                *r = fl->wide[e->seq];
                return;
        }
        r->seq = b->seq + e->seq;
        r->born = b->born + e->born;
        r->src_part = e->src_part == PART_NONE ? UINT32_MAX : e->src_part;
        r->sink_part = e->sink_part == PART_NONE ? UINT32_MAX : e->sink_part;
        if (queued_sink(e) || e->x[0] == OFF_NONE)
                r->src_offset = -1;
        else
                r->src_offset = b->src_off[e->src_part] + e->x[0];
        r->src_ts = queued_sink(e) ? 0 : ts_of(b, e->x[1]);
        if (queued_src(e) || e->y[0] == OFF_NONE)
                r->sink_offset = -1;
        else
                r->sink_offset = b->sink_off[e->sink_part] + e->y[0];
        r->sink_ts = queued_src(e) ? 0 : ts_of(b, e->y[1]);
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
                return fl->wide[e->seq].src_offset;
        if (queued_sink(e) || e->x[0] == OFF_NONE)
                return -1;
        return fl->bases.src_off[e->src_part] + e->x[0];
}

uint32_t dedup_flow_src_part(const struct dedup_flow *fl, uint32_t i)
{
        const struct flow_ent *e = &fl->ents[i];

        if (e->flags & F_WIDE)
                return fl->wide[e->seq].src_part;
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
        fl->wide[e->seq].seq = fl->wide_free;
        fl->wide_free = e->seq;
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
                if (!queued_sink(e))
                        memcpy(e->x, n->x, sizeof(e->x));
                if (!queued_src(e))
                        memcpy(e->y, n->y, sizeof(e->y));
                e->src_part = n->src_part;
                e->sink_part = n->sink_part;
                e->copies = n->copies;
                return 0;
        }
        if (!(e->flags & F_WIDE)) {
                if ((k = wide_alloc(fl)) == NIL)
                        return -1;
                e->seq = k;
                e->flags |= F_WIDE;
        }
        fl->wide[e->seq] = *r;
        return 0;
}

/* The base ab names, as a signed value (seq and born fit: they were
 * checked below INT64_MAX), and set. */
static int64_t base_get(const struct flow_bases *b, const struct above *ab)
{
        switch (ab->kind) {
        case B_SEQ:
                return (int64_t)b->seq;
        case B_BORN:
                return (int64_t)b->born;
        case B_TS:
                return b->ts;
        case B_SRC_OFF:
                return b->src_off[ab->part];
        case B_SINK_OFF:
                return b->sink_off[ab->part];
        }
        return 0;
}

static void base_set(struct flow_bases *b, const struct above *ab, int64_t v)
{
        switch (ab->kind) {
        case B_SEQ:
                b->seq = (uint64_t)v;
                break;
        case B_BORN:
                b->born = (uint64_t)v;
                break;
        case B_TS:
                b->ts = v;
                break;
        case B_SRC_OFF:
                b->src_off[ab->part] = v;
                break;
        case B_SINK_OFF:
                b->sink_off[ab->part] = v;
                break;
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
                rc = narrow(fl, e, &r, &n, &dummy);
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

        while ((rc = narrow(fl, &fl->ents[i], r, &n, &ab)) == ABOVE &&
               tries++ < 8)
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

/* Room for s more bytes: the arena grows by half, or to what the ring's
 * room holds at the records' mean size (with a sixteenth more) when that
 * is less: a ring at its bound takes no more than its ids need.  When
 * wrapped, its older part moves to the new end, and the entries' idpos
 * with it. */
static int arena_grow(struct dedup_flow *fl, uint32_t s)
{
        uint64_t want = (uint64_t)fl->arena_cap + fl->arena_cap / 2, used;
        uint64_t least = (uint64_t)fl->arena_cap + fl->arena_cap / 16 + s + 64;
        uint32_t n, oldh = fl->arena_head, delta, k, i;
        unsigned char *a;

        if (fl->live) {
                used = fl->arena_wrapped
                           ? (uint64_t)fl->arena_end - oldh + fl->arena_tail
                           : (uint64_t)fl->arena_tail - oldh;
                used = used / fl->live * fl->cap_ents;
                used += used / 16;
                if (used < want)
                        want = used;
        }
        if (want < least)
                want = least;
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

#define A_FULL 0x80u /* the whole length and the id follow */

int dedup_flow_arena_put(struct dedup_flow *fl, uint32_t i,
                         const struct dedup_id *id, const void *idb,
                         size_t id_len, int hashed)
{
        uint32_t k = id_len < DEDUP_FLOW_ID_KEEP ? (uint32_t)id_len
                                                 : DEDUP_FLOW_ID_KEEP;
        uint32_t s, pos, len32;
        struct dedup_id h;
        int full = id_len > k;
        unsigned char *p;

        if (!full && !hashed) {
                /* From a view: its bytes may not be all of it. */
                dedup_id_hash(idb, k, &h);
                full = !dedup_flow_id_eq(&h, id);
        }
        s = 1 + (full ? 4 + (uint32_t)sizeof(*id) : 0) + k;
        if (arena_alloc(fl, s, &pos)) {
                fl->failed = 1;
                return -1;
        }
        p = fl->arena + pos;
        *p++ = (unsigned char)(k | (full ? A_FULL : 0));
        if (full) {
                len32 = id_len > UINT32_MAX ? UINT32_MAX : (uint32_t)id_len;
                memcpy(p, &len32, 4);
                memcpy(p + 4, id, sizeof(*id));
                p += 4 + sizeof(*id);
        }
        if (k)
                memcpy(p, idb, k);
        fl->ents[i].idpos = pos;
        return 0;
}

size_t dedup_flow_arena_get(const struct dedup_flow *fl, uint32_t i,
                            struct dedup_id *id,
                            unsigned char out[DEDUP_FLOW_ID_KEEP])
{
        const unsigned char *p = fl->arena + fl->ents[i].idpos;
        uint32_t k = *p & ~A_FULL & 0xffu, len32 = k;

        if (*p++ & A_FULL) {
                memcpy(&len32, p, 4);
                memcpy(id, p + 4, sizeof(*id));
                p += 4 + sizeof(*id);
                memcpy(out, p, k);
                return len32;
        }
        memcpy(out, p, k);
        dedup_id_hash(p, k, id);
        return len32;
}

int dedup_flow_arena_is(const struct dedup_flow *fl, uint32_t i,
                        const struct dedup_id *id, const void *idb,
                        size_t id_len)
{
        const unsigned char *p = fl->arena + fl->ents[i].idpos;
        uint32_t k = *p & ~A_FULL & 0xffu;
        struct dedup_id h;

        if (*p & A_FULL) {
                memcpy(&h, p + 5, sizeof(h));
                return dedup_flow_id_eq(&h, id);
        }
        /* All of its bytes are here: the same bytes are the same id. */
        if (idb)
                return id_len == k && !memcmp(p + 1, idb, k);
        dedup_id_hash(p + 1, k, &h);
        return dedup_flow_id_eq(&h, id);
}

void dedup_flow_pack_unqueued(struct dedup_flow *fl, uint32_t i)
{
        uint32_t *l = dedup_flow_links(&fl->ents[i]);

        l[0] = OFF_NONE;
        l[1] = (uint32_t)TS_NONE;
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
        return (size_t)fl->cap_wide * sizeof(struct flow_rec) + fl->arena_cap +
               ((size_t)fl->bases.nsrc_off + fl->bases.nsink_off) *
                   sizeof(int64_t);
}
