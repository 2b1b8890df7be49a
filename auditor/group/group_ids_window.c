/*
 * group_ids_window.c - the ids topic's records and a judge's window
 * (group_ids_window.h).  The window is a ring of the last W entries in
 * (offset, index) order (the oldest dropped first when it is full) with
 * a chained hash index over it, newest first in each chain.
 */
#include <stdlib.h>
#include <string.h>

#include "../../base/le.h"
#include "group_ids_window.h"

#define NIL UINT32_MAX

struct gids_entry {
        struct dedup_id id;
        int64_t ids_offset;
        int64_t offset, ts_ms;
        int32_t partition;
        uint32_t next;  /* chain: ring slot, or NIL */
        uint32_t topic; /* index in topics */
};

struct gids_window {
        uint64_t window;
        int64_t max_age_ms;
        struct gids_entry *ring;
        uint32_t cap, head, n;
        uint32_t *bucket;
        uint32_t mask;
        char **topics;
        uint32_t ntopics;
};

size_t gids_entry_encode(unsigned char *b, const struct gids_rec *r)
{
        size_t tl = r->topic_len > 255 ? 255 : r->topic_len;
        size_t pl = !r->producer            ? 0
                    : r->producer_len > 255 ? 255
                                            : r->producer_len;

        le64_put(b, r->id.lo);
        le64_put(b + 8, r->id.hi);
        le32_put(b + 16, (uint32_t)r->partition);
        le64_put(b + 20, (uint64_t)r->offset);
        le64_put(b + 28, (uint64_t)r->ts_ms);
        le32_put(b + 36, (uint32_t)r->epoch);
        le64_put(b + 40, (uint64_t)r->seq);
        b[48] = (unsigned char)tl;
        memcpy(b + 49, r->topic, tl);
        b[49 + tl] = (unsigned char)pl;
        if (pl)
                memcpy(b + 50 + tl, r->producer, pl);
        return GIDS_ENTRY_FIXED + tl + pl;
}

size_t gids_encode(unsigned char *b, const struct gids_rec *r)
{
        b[0] = GIDS_VERSION;
        return 1 + gids_entry_encode(b + 1, r);
}

/* The length of the entry at p (avail bytes there), or 0 when it is not
 * one entry within avail. */
static size_t entry_len(const unsigned char *p, size_t avail)
{
        size_t tl;

        if (avail < GIDS_ENTRY_FIXED)
                return 0;
        tl = p[48];
        if (!tl || GIDS_ENTRY_FIXED + tl > avail)
                return 0;
        if (GIDS_ENTRY_FIXED + tl + p[49 + tl] > avail)
                return 0;
        return GIDS_ENTRY_FIXED + tl + p[49 + tl];
}

static void entry_parse(const unsigned char *p, struct gids_rec *r)
{
        size_t tl = p[48], pl = p[49 + tl];

        r->id.lo = le64_get(p);
        r->id.hi = le64_get(p + 8);
        r->partition = (int32_t)le32_get(p + 16);
        r->offset = (int64_t)le64_get(p + 20);
        r->ts_ms = (int64_t)le64_get(p + 28);
        r->epoch = (int32_t)le32_get(p + 36);
        r->seq = (int64_t)le64_get(p + 40);
        r->topic = (const char *)p + 49;
        r->topic_len = tl;
        r->producer = pl ? (const char *)p + 50 + tl : NULL;
        r->producer_len = pl;
}

void gids_pack_init(struct gids_pack *pk)
{
        memset(pk, 0, sizeof(*pk));
}

int gids_pack_add(struct gids_pack *pk, const void *entry, size_t len)
{
        size_t head = pk->n ? 0 : GIDS_PACK_HEAD, need = pk->len + head + len;
        size_t c = pk->cap ? pk->cap : 4096;
        unsigned char *q;

        if (need > pk->cap) {
                while (c < need)
                        c *= 2;
                if (!(q = realloc(pk->buf, c)))
                        return -1;
                pk->buf = q;
                pk->cap = c;
        }
        if (!pk->n) {
                pk->buf[0] = GIDS_PACK_VERSION;
                pk->len = GIDS_PACK_HEAD;
        }
        memcpy(pk->buf + pk->len, entry, len);
        pk->len += len;
        pk->n++;
        return 0;
}

int gids_pack_full(const struct gids_pack *pk)
{
        return pk->n >= GIDS_PACK_MAX_ENTRIES ||
               pk->len >= GIDS_PACK_MAX_BYTES;
}

const unsigned char *gids_pack_finish(struct gids_pack *pk, size_t *len)
{
        if (!pk->n)
                return NULL;
        le32_put(pk->buf + 1, pk->n);
        *len = pk->len;
        return pk->buf;
}

void gids_pack_reset(struct gids_pack *pk)
{
        pk->len = 0;
        pk->n = 0;
}

void gids_pack_free(struct gids_pack *pk)
{
        free(pk->buf);
        gids_pack_init(pk);
}

long gids_iter_open(struct gids_iter *it, const void *v, size_t len)
{
        const unsigned char *p = v, *q, *end;
        uint32_t n, i;
        size_t el;

        memset(it, 0, sizeof(*it));
        if (!p || !len)
                return -1;
        if (p[0] == GIDS_VERSION) {
                if (entry_len(p + 1, len - 1) != len - 1)
                        return -1;
                it->p = p + 1;
                it->end = p + len;
                it->left = 1;
                return 1;
        }
        if (p[0] != GIDS_PACK_VERSION || len < GIDS_PACK_HEAD)
                return -1;
        n = le32_get(p + 1);
        /* A count the bytes cannot hold is refused before any walk. */
        if (!n || n > (len - GIDS_PACK_HEAD) / GIDS_ENTRY_FIXED)
                return -1;
        end = p + len;
        for (q = p + GIDS_PACK_HEAD, i = 0; i < n; i++, q += el)
                if (!(el = entry_len(q, (size_t)(end - q))))
                        return -1;
        if (q != end)
                return -1;
        it->p = p + GIDS_PACK_HEAD;
        it->end = end;
        it->left = n;
        return (long)n;
}

int gids_iter_next(struct gids_iter *it, struct gids_rec *r)
{
        size_t el;

        /* Checked by gids_iter_open(); entry_len() again so that a cursor
         * never leaves the record whatever was done to it. */
        if (!it->left || !(el = entry_len(it->p, (size_t)(it->end - it->p))))
                return 0;
        entry_parse(it->p, r);
        it->p += el;
        it->left--;
        return 1;
}

struct gids_window *gids_window_new(uint64_t window, int64_t max_age_ms)
{
        struct gids_window *w = calloc(1, sizeof(*w));

        if (!w)
                return NULL;
        w->window = window ? window : 1;
        if (w->window > UINT32_MAX / 4)
                w->window = UINT32_MAX / 4;
        w->max_age_ms = max_age_ms;
        return w;
}

void gids_window_free(struct gids_window *w)
{
        uint32_t i;

        if (!w)
                return;
        for (i = 0; i < w->ntopics; i++)
                free(w->topics[i]);
        free(w->topics);
        free(w->ring);
        free(w->bucket);
        free(w);
}

size_t gids_window_ids(const struct gids_window *w)
{
        return w->n;
}

static uint32_t topic_index(struct gids_window *w, const char *t, size_t len)
{
        uint32_t i;
        char **v;

        for (i = 0; i < w->ntopics; i++)
                if (strlen(w->topics[i]) == len &&
                    !memcmp(w->topics[i], t, len))
                        return i;
        v = realloc(w->topics, (w->ntopics + 1) * sizeof(*v));
        if (!v)
                return NIL;
        w->topics = v;
        v[w->ntopics] = malloc(len + 1);
        if (!v[w->ntopics])
                return NIL;
        memcpy(v[w->ntopics], t, len);
        v[w->ntopics][len] = '\0';
        return w->ntopics++;
}

static uint32_t bucket_of(const struct gids_window *w,
                          const struct dedup_id *id, uint32_t topic)
{
        return (uint32_t)((id->hi ^ (id->lo >> 32) ^ topic) & w->mask);
}

static void link_slot(struct gids_window *w, uint32_t s)
{
        uint32_t b = bucket_of(w, &w->ring[s].id, w->ring[s].topic);

        w->ring[s].next = w->bucket[b];
        w->bucket[b] = s;
}

/* Doubles the ring, up to W, its entries moved to slots 0..n-1 and linked
 * again oldest first (so each chain stays newest first).  Returns 0, or
 * -1 at W or out of memory. */
static int grow(struct gids_window *w)
{
        uint64_t cap = w->cap ? (uint64_t)w->cap * 2 : 1024;
        uint32_t i, nb;
        struct gids_entry *r;
        uint32_t *bk;

        if (cap > w->window)
                cap = w->window;
        if (cap <= w->cap)
                return -1;
        for (nb = 1; nb < cap * 2; nb *= 2)
                ;
        r = malloc((size_t)cap * sizeof(*r));
        bk = malloc((size_t)nb * sizeof(*bk));
        if (!r || !bk) {
                free(r);
                free(bk);
                return -1;
        }
        for (i = 0; i < w->n; i++)
                r[i] = w->ring[(w->head + i) % w->cap];
        free(w->ring);
        free(w->bucket);
        w->ring = r;
        w->bucket = bk;
        w->cap = (uint32_t)cap;
        w->head = 0;
        w->mask = nb - 1;
        memset(bk, 0xff, (size_t)nb * sizeof(*bk));
        for (i = 0; i < w->n; i++)
                link_slot(w, i);
        return 0;
}

static void drop_oldest(struct gids_window *w)
{
        uint32_t s = w->head;
        uint32_t *pp =
            &w->bucket[bucket_of(w, &w->ring[s].id, w->ring[s].topic)];

        while (*pp != NIL && *pp != s)
                pp = &w->ring[*pp].next;
        if (*pp == s)
                *pp = w->ring[s].next;
        w->head = (w->head + 1) % w->cap;
        w->n--;
}

int gids_window_judge(struct gids_window *w, int64_t o,
                      const struct gids_rec *r, struct gids_first *first)
{
        uint32_t t = topic_index(w, r->topic, r->topic_len), s;
        struct gids_entry *e;
        int found = 0;

        if (t == NIL)
                return -1;
        for (s = w->cap ? w->bucket[bucket_of(w, &r->id, t)] : NIL; s != NIL;
             s = w->ring[s].next) {
                e = &w->ring[s];
                if (e->id.lo != r->id.lo || e->id.hi != r->id.hi ||
                    e->topic != t)
                        continue;
                if (e->partition == r->partition && e->offset == r->offset)
                        continue; /* the same record, not a copy */
                if (w->max_age_ms > 0 && r->ts_ms > 0 && e->ts_ms > 0 &&
                    r->ts_ms - e->ts_ms > w->max_age_ms)
                        continue;
                first->topic = w->topics[e->topic];
                first->partition = e->partition;
                first->offset = e->offset;
                first->ts_ms = e->ts_ms;
                first->ids_offset = e->ids_offset;
                found = 1;
                break;
        }
        /* Full at W entries: the oldest is out of every later entry's
         * window (the last W before it). */
        if (w->n == w->cap && grow(w)) {
                if (w->cap < w->window)
                        return -1; /* out of memory */
                drop_oldest(w);
        }
        s = (w->head + w->n) % w->cap;
        e = &w->ring[s];
        e->id = r->id;
        e->ids_offset = o;
        e->offset = r->offset;
        e->ts_ms = r->ts_ms;
        e->partition = r->partition;
        e->topic = t;
        w->n++;
        link_slot(w, s);
        return found;
}
