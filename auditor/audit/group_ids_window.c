/*
 * group_ids_window.c - the ids topic's records and a judge's window
 * (group_ids_window.h).  The window is a ring of entries in offset order
 * (the oldest dropped first, when it leaves [o - W, o) or the ring is
 * full) with a chained hash index over it, newest first in each chain.
 */
#include <stdlib.h>
#include <string.h>

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

static void put64(unsigned char *p, uint64_t v)
{
        int i;

        for (i = 0; i < 8; i++)
                p[i] = (unsigned char)(v >> (8 * i));
}

static void put32(unsigned char *p, uint32_t v)
{
        int i;

        for (i = 0; i < 4; i++)
                p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get64(const unsigned char *p)
{
        uint64_t v = 0;
        int i;

        for (i = 7; i >= 0; i--)
                v = (v << 8) | p[i];
        return v;
}

static uint32_t get32(const unsigned char *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
               (uint32_t)p[3] << 24;
}

size_t gids_encode(unsigned char *b, const struct gids_rec *r)
{
        size_t tl = r->topic_len > 255 ? 255 : r->topic_len;
        size_t pl = !r->producer ? 0
                    : r->producer_len > 255 ? 255
                                            : r->producer_len;

        b[0] = GIDS_VERSION;
        put64(b + 1, r->id.lo);
        put64(b + 9, r->id.hi);
        put32(b + 17, (uint32_t)r->partition);
        put64(b + 21, (uint64_t)r->offset);
        put64(b + 29, (uint64_t)r->ts_ms);
        put32(b + 37, (uint32_t)r->epoch);
        put64(b + 41, (uint64_t)r->seq);
        b[49] = (unsigned char)tl;
        memcpy(b + 50, r->topic, tl);
        b[50 + tl] = (unsigned char)pl;
        if (pl)
                memcpy(b + 51 + tl, r->producer, pl);
        return GIDS_FIXED + tl + pl;
}

int gids_parse(const void *v, size_t len, struct gids_rec *r)
{
        const unsigned char *p = v;
        size_t tl, pl;

        if (!p || len < GIDS_FIXED + 1 || p[0] != GIDS_VERSION)
                return -1;
        tl = p[49];
        if (!tl || GIDS_FIXED + tl > len)
                return -1;
        pl = p[50 + tl];
        if (GIDS_FIXED + tl + pl != len)
                return -1;
        r->id.lo = get64(p + 1);
        r->id.hi = get64(p + 9);
        r->partition = (int32_t)get32(p + 17);
        r->offset = (int64_t)get64(p + 21);
        r->ts_ms = (int64_t)get64(p + 29);
        r->epoch = (int32_t)get32(p + 37);
        r->seq = (int64_t)get64(p + 41);
        r->topic = (const char *)p + 50;
        r->topic_len = tl;
        r->producer = pl ? (const char *)p + 51 + tl : NULL;
        r->producer_len = pl;
        return 0;
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
        int64_t lo = o - (int64_t)w->window;
        struct gids_entry *e;
        int found = 0;

        if (t == NIL)
                return -1;
        while (w->n && w->ring[w->head].ids_offset < lo)
                drop_oldest(w);
        for (s = w->cap ? w->bucket[bucket_of(w, &r->id, t)] : NIL;
             s != NIL; s = w->ring[s].next) {
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
        /* Full at W entries: the oldest is o - W, out of every later
         * record's window. */
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
