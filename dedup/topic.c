/*
 * topic.c - topic-scoped streams (topic.h): per (producer, topic, epoch) a
 * window of seen seqs, settled from its low end as every part of the
 * topic is read past their time.
 *
 * A stream keeps [base, next): base is the lowest seq not yet settled
 * (every seq below it was seen, or confirmed missing, or lies below the
 * floor), next is one past the highest seen.  The window is a ring of
 * words of 64 seqs (a bitmap) with, per word, the latest record time
 * that showed one of its seqs or skipped past them: no seq of the word
 * was stamped later than that (the stamper numbers in order), so once
 * every part of the topic is read past that time plus the grace, a seq
 * of the word not seen is missing.  The ring grows by doubling up to
 * conf.topic_window seqs.  Seen seqs at base move it up at once, so in
 * a steady state the window holds only the seqs still in flight on
 * slower parts.  The last DEDUP_TOPIC_LOCS seqs keep where they were seen
 * (part + 1 << 48 | offset; 0: not seen or unknown), the evidence of a
 * duplicate's first copy.
 *
 * Streams are found through an open-addressing index and listed in an
 * array; a removed (expired) one stays allocated until dirty_clear, so
 * the dirty walk can report its removal.
 */
#include <stdlib.h>
#include <string.h>

#include "dedup.h"
#include "internal.h"
#include "topic.h"

#define TS_DIRTY 0x1u
#define TS_STORED 0x2u
#define TS_DEAD 0x4u

#define LOC_PART_MAX 0xfffeu
#define LOC_OFF_MAX (((int64_t)1 << 48) - 1)

struct tstream {
        uint64_t hash;
        uint32_t name; /* one reference */
        uint32_t topic;
        int32_t epoch;
        unsigned flags;
        int64_t floor, base, next;
        int64_t top_word; /* highest word initialised in the ring */
        int64_t last_ms;
        uint64_t records;
        uint32_t cap; /* words in the ring, a power of two; 0: none */
        uint64_t *bits;
        int64_t *wms;
        uint64_t *locs; /* DEDUP_TOPIC_LOCS, by seq % DEDUP_TOPIC_LOCS */
        uint32_t ndone;
        struct dedup_topic_gap done[DEDUP_TOPIC_DONE]; /* oldest first */
};

struct topic_parts {
        uint32_t *v;
        size_t n, cap;
};

struct dedup_topics {
        uint32_t max_words;         /* conf.topic_window / 64 */
        struct topic_parts *topics; /* parts of each topic */
        size_t ntopics;
        struct tstream **all; /* live and dead-until-clear */
        size_t nall, all_cap;
        uint32_t *idx; /* index into all + 1; 0 empty */
        uint32_t mask;
        size_t live;
        struct tstream **dirty;
        size_t ndirty, dirty_cap;
        /* dirty_foreach's scratch: a stream's words, locs, done. */
        uint64_t *sw;
        int64_t *sms;
        size_t scap;
        struct dedup_topic_loc *sl;
};

/* ------------------------------------------------------------------ */
/* Topics and parts                                                    */
/* ------------------------------------------------------------------ */

static struct dedup_topics *topics_get(struct dedup_tracker *tr)
{
        struct dedup_topics *t = tr->topics;
        uint32_t w;

        if (t)
                return t;
        t = dedup_mem_realloc(tr, NULL, 0, sizeof(*t));
        if (!t)
                return NULL;
        memset(t, 0, sizeof(*t));
        w = tr->conf.topic_window ? tr->conf.topic_window
                                  : DEDUP_TOPIC_WINDOW_DEFAULT;
        if (w < DEDUP_TOPIC_WINDOW_MIN)
                w = DEDUP_TOPIC_WINDOW_MIN;
        if (w > DEDUP_TOPIC_WINDOW_MAX)
                w = DEDUP_TOPIC_WINDOW_MAX;
        t->max_words = 1;
        while ((uint64_t)t->max_words * 64 < w)
                t->max_words *= 2;
        tr->topics = t;
        return t;
}

int dedup_tracker_part_set_topic(struct dedup_tracker *tr, uint32_t part,
                                 uint32_t topic)
{
        struct dedup_topics *t;
        struct topic_parts *tp;
        size_t i;

        if (part >= tr->nparts || !tr->parts[part].added || topic == NONE)
                return -1;
        if (tr->parts[part].topic == topic)
                return 0;
        if (tr->parts[part].topic != NONE || !(t = topics_get(tr)))
                return -1;
        if (topic >= t->ntopics) {
                size_t cap = t->ntopics;
                if (dedup_mem_grow(tr, (void **)&t->topics, &cap,
                                   (size_t)topic + 1, sizeof(*t->topics)))
                        return -1;
                for (i = t->ntopics; i < cap; i++)
                        memset(&t->topics[i], 0, sizeof(t->topics[i]));
                t->ntopics = cap;
        }
        tp = &t->topics[topic];
        if (dedup_mem_grow(tr, (void **)&tp->v, &tp->cap, tp->n + 1,
                           sizeof(*tp->v)))
                return -1;
        tp->v[tp->n++] = part;
        tr->parts[part].topic = topic;
        return 0;
}

void dedup_tracker_part_at_end(struct dedup_tracker *tr, uint32_t part,
                               int at_end)
{
        if (part < tr->nparts)
                tr->parts[part].at_end = !!at_end;
}

/* The time every part of topic has been read past (INT64_MIN: one part
 * has given nothing yet and is not at its end). */
static int64_t topic_past_ms(const struct dedup_tracker *tr, uint32_t topic)
{
        const struct topic_parts *tp = &tr->topics->topics[topic];
        int64_t past = INT64_MAX;
        size_t i;

        for (i = 0; i < tp->n; i++) {
                const struct dedup_part *p = &tr->parts[tp->v[i]];
                int64_t t = p->read_ms;
                if (p->at_end && tr->clock_ms > t)
                        t = tr->clock_ms;
                if (t < past)
                        past = t;
        }
        return tp->n ? past : INT64_MIN;
}

static int topic_from_log_start(const struct dedup_tracker *tr, uint32_t topic)
{
        const struct topic_parts *tp = &tr->topics->topics[topic];
        size_t i;

        for (i = 0; i < tp->n; i++)
                if (!tr->parts[tp->v[i]].from_log_start ||
                    tr->parts[tp->v[i]].compacted)
                        return 0;
        return tp->n > 0;
}

/* ------------------------------------------------------------------ */
/* Streams: the index                                                  */
/* ------------------------------------------------------------------ */

static uint64_t stream_hash(const char *p, size_t len, uint32_t topic,
                            int32_t epoch)
{
        return dedup_fmix64(dedup_hash_bytes(p, len) ^
                            ((uint64_t)topic << 32 | (uint32_t)epoch));
}

static int stream_is(const struct dedup_tracker *tr, const struct tstream *s,
                     uint64_t h, const char *p, size_t len, uint32_t topic,
                     int32_t epoch)
{
        const struct dedup_name *nm = tr->names[s->name];

        return s->hash == h && s->topic == topic && s->epoch == epoch &&
               nm->len == len && !memcmp(nm->bytes, p, len);
}

static struct tstream *stream_find(struct dedup_tracker *tr, const char *p,
                                   size_t len, uint32_t topic, int32_t epoch)
{
        struct dedup_topics *t = tr->topics;
        uint64_t h = stream_hash(p, len, topic, epoch);
        uint32_t i, s;

        if (!t->idx)
                return NULL;
        for (i = (uint32_t)h & t->mask; (s = t->idx[i]); i = (i + 1) & t->mask)
                if (!(t->all[s - 1]->flags & TS_DEAD) &&
                    stream_is(tr, t->all[s - 1], h, p, len, topic, epoch))
                        return t->all[s - 1];
        return NULL;
}

/* Rebuilds the index over the live streams, sized for one more. */
static int index_rebuild(struct dedup_tracker *tr)
{
        struct dedup_topics *t = tr->topics;
        size_t cap = 64, old = t->idx ? (size_t)t->mask + 1 : 0, i;
        uint32_t *idx;

        while ((t->live + 1) * 2 > cap)
                cap *= 2;
        idx = dedup_mem_realloc(tr, NULL, 0, cap * sizeof(*idx));
        if (!idx)
                return -1;
        memset(idx, 0, cap * sizeof(*idx));
        for (i = 0; i < t->nall; i++) {
                size_t j;
                if (t->all[i]->flags & TS_DEAD)
                        continue;
                j = t->all[i]->hash & (cap - 1);
                while (idx[j])
                        j = (j + 1) & (cap - 1);
                idx[j] = (uint32_t)i + 1;
        }
        dedup_mem_free(tr, t->idx, old * sizeof(*t->idx));
        t->idx = idx;
        t->mask = (uint32_t)(cap - 1);
        return 0;
}

static void stream_dirty(struct dedup_tracker *tr, struct tstream *s)
{
        struct dedup_topics *t = tr->topics;

        if (s->flags & TS_DIRTY)
                return;
        if (dedup_mem_grow(tr, (void **)&t->dirty, &t->dirty_cap,
                           t->ndirty + 1, sizeof(*t->dirty)))
                return;
        t->dirty[t->ndirty++] = s;
        s->flags |= TS_DIRTY;
}

/* A new stream of name (whose reference it takes) on topic. */
static struct tstream *stream_new(struct dedup_tracker *tr, uint32_t name,
                                  uint32_t topic, int32_t epoch)
{
        struct dedup_topics *t = tr->topics;
        const struct dedup_name *nm = tr->names[name];
        struct tstream *s;

        if (dedup_mem_grow(tr, (void **)&t->all, &t->all_cap, t->nall + 1,
                           sizeof(*t->all)))
                return NULL;
        if ((!t->idx || (t->live + 1) * 2 > (size_t)t->mask + 1) &&
            index_rebuild(tr))
                return NULL;
        s = dedup_mem_realloc(tr, NULL, 0, sizeof(*s));
        if (!s)
                return NULL;
        memset(s, 0, sizeof(*s));
        s->name = name;
        s->topic = topic;
        s->epoch = epoch;
        s->hash = stream_hash(nm->bytes, nm->len, topic, epoch);
        s->top_word = -1;
        t->all[t->nall++] = s;
        {
                uint32_t i = (uint32_t)s->hash & t->mask;
                while (t->idx[i])
                        i = (i + 1) & t->mask;
                t->idx[i] = (uint32_t)t->nall;
        }
        t->live++;
        return s;
}

static void stream_free(struct dedup_tracker *tr, struct tstream *s)
{
        dedup_mem_free(tr, s->bits, (size_t)s->cap * sizeof(*s->bits));
        dedup_mem_free(tr, s->wms, (size_t)s->cap * sizeof(*s->wms));
        dedup_mem_free(tr, s->locs, DEDUP_TOPIC_LOCS * sizeof(*s->locs));
        dedup_mem_free(tr, s, sizeof(*s));
}

/* ------------------------------------------------------------------ */
/* The window                                                          */
/* ------------------------------------------------------------------ */

static uint32_t word_slot(const struct tstream *s, int64_t w)
{
        return (uint32_t)((uint64_t)w & (s->cap - 1));
}

static int seen(const struct tstream *s, int64_t seq)
{
        return (s->bits[word_slot(s, seq >> 6)] >> (seq & 63)) & 1;
}

/* Makes the ring hold words base/64 .. w.  Returns 0 or -1. */
static int ring_fit(struct dedup_tracker *tr, struct tstream *s, int64_t w)
{
        int64_t lo = s->base >> 6, hi = s->top_word > w ? s->top_word : w;
        uint64_t need = (uint64_t)(hi - lo) + 1;
        uint32_t ncap = s->cap ? s->cap : 1;
        uint64_t *bits;
        int64_t *wms, x;

        if (need <= s->cap)
                return 0;
        while (ncap < need)
                ncap *= 2;
        bits = dedup_mem_realloc(tr, NULL, 0, (size_t)ncap * sizeof(*bits));
        wms = bits
                  ? dedup_mem_realloc(tr, NULL, 0, (size_t)ncap * sizeof(*wms))
                  : NULL;
        if (!wms) {
                dedup_mem_free(tr, bits, (size_t)ncap * sizeof(*bits));
                return -1;
        }
        for (x = lo; x <= s->top_word && s->cap; x++) {
                bits[(uint64_t)x & (ncap - 1)] = s->bits[word_slot(s, x)];
                wms[(uint64_t)x & (ncap - 1)] = s->wms[word_slot(s, x)];
        }
        dedup_mem_free(tr, s->bits, (size_t)s->cap * sizeof(*s->bits));
        dedup_mem_free(tr, s->wms, (size_t)s->cap * sizeof(*s->wms));
        s->bits = bits;
        s->wms = wms;
        s->cap = ncap;
        return 0;
}

static uint64_t loc_pack(uint32_t part, int64_t offset)
{
        if (part > LOC_PART_MAX || offset < 0 || offset > LOC_OFF_MAX)
                return 0;
        return ((uint64_t)part + 1) << 48 | (uint64_t)offset;
}

/* Where seq was seen, when it is among the last DEDUP_TOPIC_LOCS. */
static int loc_get(const struct tstream *s, int64_t seq, uint32_t *part,
                   int64_t *offset)
{
        uint64_t l;

        if (!s->locs || seq >= s->next || s->next - seq > DEDUP_TOPIC_LOCS)
                return 0;
        l = s->locs[(uint64_t)seq % DEDUP_TOPIC_LOCS];
        if (!l)
                return 0;
        *part = (uint32_t)(l >> 48) - 1;
        *offset = (int64_t)(l & (uint64_t)LOC_OFF_MAX);
        return 1;
}

/* Forgets the locations of seqs [lo, hi) (they are about to be reused). */
static void locs_clear(struct tstream *s, int64_t lo, int64_t hi)
{
        if (!s->locs)
                return;
        if (hi - lo > DEDUP_TOPIC_LOCS)
                lo = hi - DEDUP_TOPIC_LOCS;
        for (; lo < hi; lo++)
                s->locs[(uint64_t)lo % DEDUP_TOPIC_LOCS] = 0;
}

/* The part a gap [lo, hi] is counted on: the record above it's, else the
 * topic's first part. */
static uint32_t gap_part(const struct dedup_tracker *tr,
                         const struct tstream *s, int64_t hi, int64_t *offset)
{
        uint32_t part;

        if (loc_get(s, hi + 1, &part, offset) && part < tr->nparts)
                return part;
        *offset = -1;
        return tr->topics->topics[s->topic].v[0];
}

static void done_add(struct tstream *s, const struct dedup_gap *g,
                     uint32_t part, int64_t offset, int unknown)
{
        struct dedup_topic_gap *d = s->ndone ? &s->done[s->ndone - 1] : NULL;

        if (d && d->hi + 1 == g->lo && d->part == part &&
            d->unknown == unknown) {
                d->hi = g->hi;
                return;
        }
        if (s->ndone == DEDUP_TOPIC_DONE) {
                memmove(&s->done[0], &s->done[1],
                        (DEDUP_TOPIC_DONE - 1) * sizeof(s->done[0]));
                s->ndone--;
        }
        d = &s->done[s->ndone++];
        d->lo = g->lo;
        d->hi = g->hi;
        d->part = part;
        d->offset = offset;
        d->unknown = unknown;
}

/* Seqs [lo, hi] of s were never seen: confirmed missing (kind GAP), or
 * unknown (GAP_UNKNOWN: a coverage hole may have taken them). */
static void gap_settle(struct dedup_tracker *tr, struct tstream *s, int64_t lo,
                       int64_t hi, enum dedup_kind kind)
{
        const struct dedup_name *nm = tr->names[s->name];
        uint64_t n = (uint64_t)(hi - lo) + 1;
        struct dedup_event *ev = tr->nev ? &tr->ev[tr->nev - 1] : NULL;
        struct dedup_gap g = {.epoch = s->epoch, .lo = lo, .hi = hi};
        struct dedup_counts *c;
        int64_t offset;
        uint32_t part = gap_part(tr, s, hi, &offset);

        c = &tr->parts[part].counts;
        if (kind == DEDUP_KIND_GAP)
                c->missing = dedup_sat_add(c->missing, n);
        else
                c->unknown = dedup_sat_add(c->unknown, n);
        done_add(s, &g, part, offset, kind != DEDUP_KIND_GAP);
        /* A gap that continues the last one (across a word) extends it. */
        if (ev && ev->kind == kind && ev->part == part &&
            ev->producer == nm->bytes && ev->epoch == s->epoch &&
            ev->seq_hi + 1 == lo && ev->offset_lo == offset) {
                ev->seq_hi = hi;
                ev->count += n;
                return;
        }
        if (kind == DEDUP_KIND_GAP)
                c->anomalies[DEDUP_KIND_GAP]++;
        ev = dedup_event_new(tr, kind, part);
        if (!ev)
                return;
        ev->producer = nm->bytes;
        ev->producer_len = nm->len;
        ev->epoch = s->epoch;
        ev->seq_lo = lo;
        ev->seq_hi = hi;
        ev->offset_lo = ev->offset_hi = offset;
        ev->count = n;
}

/* Settles seqs [base, to): those not seen are gaps of kind.  Seqs from
 * next on are all unseen (to may lie past next: the window bound). */
static void settle_to(struct dedup_tracker *tr, struct tstream *s, int64_t to,
                      enum dedup_kind kind)
{
        int64_t seq = s->base, end = to < s->next ? to : s->next;

        while (seq < end) {
                int64_t lo;
                if (seen(s, seq)) {
                        seq++;
                        continue;
                }
                lo = seq;
                while (seq < end && !seen(s, seq))
                        seq++;
                gap_settle(tr, s, lo, seq - 1, kind);
        }
        if (to > s->next) {
                gap_settle(tr, s, s->next, to - 1, kind);
                locs_clear(s, s->next, to);
                s->next = to;
        }
        if (to > s->base) {
                s->base = to;
                if ((to >> 6) - 1 > s->top_word)
                        s->top_word = (to >> 6) - 1;
        }
        stream_dirty(tr, s);
}

/* Moves base over the seqs seen at it. */
static void base_advance(struct tstream *s)
{
        while (s->base < s->next) {
                uint64_t w = s->bits[word_slot(s, s->base >> 6)] >>
                             (s->base & 63);
                int64_t run;
                if (!(w & 1))
                        return;
                /* The seen seqs from base to the word's end or first hole. */
                run = ~w ? __builtin_ctzll(~w) : 64 - (s->base & 63);
                if (s->base + run > s->next)
                        run = s->next - s->base;
                s->base += run;
        }
}

/* Settles what every part of the topic has been read past (all when
 * force), from base up. */
static void stream_sweep(struct dedup_tracker *tr, struct tstream *s,
                         int64_t past, int force)
{
        while (s->base < s->next) {
                int64_t w = s->base >> 6;
                int64_t end = (w + 1) << 6;
                if (!force && s->wms[word_slot(s, w)] > past)
                        return;
                settle_to(tr, s, end < s->next ? end : s->next,
                          DEDUP_KIND_GAP);
        }
}

/* ------------------------------------------------------------------ */
/* Classification                                                      */
/* ------------------------------------------------------------------ */

/* A record of a confirmed gap of s: takes seq out of it; returns the gap
 * (as it was) in *out and 1, or 0 when seq lies in none. */
static int done_fill(struct tstream *s, int64_t seq,
                     struct dedup_topic_gap *out)
{
        uint32_t i;

        for (i = 0; i < s->ndone; i++) {
                struct dedup_topic_gap *d = &s->done[i];
                if (seq < d->lo || seq > d->hi)
                        continue;
                *out = *d;
                if (d->lo == d->hi) {
                        memmove(d, d + 1, (s->ndone - i - 1) * sizeof(*d));
                        s->ndone--;
                } else if (seq == d->lo) {
                        d->lo++;
                } else if (seq == d->hi) {
                        d->hi--;
                } else if (s->ndone < DEDUP_TOPIC_DONE) {
                        memmove(d + 2, d + 1, (s->ndone - i - 1) * sizeof(*d));
                        s->ndone++;
                        d[1] = *d;
                        d[1].lo = seq + 1;
                        d->hi = seq - 1;
                } else {
                        /* Full: the upper half is forgotten. */
                        d->hi = seq - 1;
                }
                return 1;
        }
        return 0;
}

/* The record's stream, created when new; NULL on allocation failure (or
 * a fenced record: *fenced is set). */
static struct tstream *stream_of(struct dedup_tracker *tr, uint32_t part,
                                 int64_t offset, const struct dedup_hdrs *h,
                                 int *fenced, uint32_t *name_out)
{
        uint32_t topic = tr->parts[part].topic;
        struct dedup_name *nm;
        struct tstream *s;
        uint32_t name;
        int zombie;

        *fenced = 0;
        name = dedup_name_ref(tr, h->producer, h->producer_len);
        if (name == NONE)
                return NULL;
        nm = tr->names[name];
        *name_out = name;
        zombie = dedup_producer_session(tr, nm, h, part, offset);
        s = stream_find(tr, h->producer, h->producer_len, topic, h->epoch);
        if (zombie && nm->session_ms >= 0 && h->ts_ms > 0 &&
            tr->rec_ms > nm->session_ms) {
                /* Written from an older session after the producer's
                 * current one began, by record time: a zombie.  An older
                 * epoch's record written before that is only read late
                 * (another partition's pace) and counts in its stream. */
                *fenced = 1;
                if (s)
                        dedup_name_unref(tr, name);
                return s;
        }
        if (s) {
                dedup_name_unref(tr, name);
                return s;
        }
        s = stream_new(tr, name, topic, h->epoch);
        if (!s) {
                dedup_name_unref(tr, name);
                return NULL;
        }
        /* From the log start of every part, the stream starts at 0;
         * else where the audit first met it. */
        s->floor = topic_from_log_start(tr, topic) ? 0 : h->seq;
        s->base = s->next = s->floor;
        s->top_word = (s->base >> 6) - 1;
        return s;
}

/* seq (>= next) was seen: the seqs between are holes revealed now. */
static int extend(struct dedup_tracker *tr, struct tstream *s, int64_t seq)
{
        struct dedup_topics *t = tr->topics;
        int64_t w = seq >> 6, x;

        /* Past the window: the lowest seqs are settled early. */
        if (w - (s->base >> 6) >= (int64_t)t->max_words)
                settle_to(tr, s, (w - (int64_t)t->max_words + 1) << 6,
                          DEDUP_KIND_GAP);
        if (ring_fit(tr, s, w))
                return -1;
        for (x = s->top_word + 1; x <= w; x++) {
                s->bits[word_slot(s, x)] = 0;
                s->wms[word_slot(s, x)] = tr->rec_ms;
        }
        if (w > s->top_word)
                s->top_word = w;
        /* Each word with a hole revealed now: its seqs were stamped
         * before this record. */
        for (x = s->next >> 6; x <= w; x++)
                if (s->wms[word_slot(s, x)] < tr->rec_ms)
                        s->wms[word_slot(s, x)] = tr->rec_ms;
        locs_clear(s, s->next, seq);
        s->next = seq + 1;
        return 0;
}

enum dedup_verdict dedup_topic_observe(struct dedup_tracker *tr, uint32_t part,
                                       int64_t offset,
                                       const struct dedup_hdrs *h)
{
        struct dedup_part *p = &tr->parts[part];
        struct dedup_counts *c = &p->counts;
        struct dedup_topic_gap done;
        struct tstream *s;
        uint32_t name, first_part;
        int64_t seq = h->seq, first_offset;
        int fenced;

        if (p->topic == NONE || !tr->topics) {
                c->anomalies[DEDUP_KIND_MALFORMED]++;
                /* Cannot be reconciled: say which header. */
                {
                        struct dedup_event *ev =
                            dedup_event_new(tr, DEDUP_KIND_MALFORMED, part);
                        if (ev) {
                                ev->offset_lo = ev->offset_hi = offset;
                                ev->count = 1;
                                ev->malformed_bits = DEDUP_HDR_SCOPE;
                        }
                }
                return DEDUP_V_MALFORMED;
        }
        s = stream_of(tr, part, offset, h, &fenced, &name);
        if (fenced) {
                struct dedup_name *nm = tr->names[name];
                c->anomalies[DEDUP_KIND_FENCED]++;
                dedup_record_event(tr, DEDUP_KIND_FENCED, part, name, h->epoch,
                                   seq, offset, nm->session_part,
                                   nm->session_offset, 0);
                if (!s)
                        dedup_name_unref(tr, name);
                return DEDUP_V_FENCED;
        }
        if (!s) {
                c->anomalies[DEDUP_KIND_MALFORMED]++;
                return DEDUP_V_MALFORMED; /* tr->failed is set */
        }
        s->records++;
        s->last_ms = tr->rec_ms;
        stream_dirty(tr, s);
        if (seq < s->floor)
                return DEDUP_V_BASELINE;
        if (seq >= s->base && seq < s->next && !seen(s, seq))
                goto accept; /* a hole filled: no order is asserted */
        if (seq >= s->next) {
                if (extend(tr, s, seq))
                        return DEDUP_V_MALFORMED; /* tr->failed is set */
                goto accept;
        }
        if (seq < s->base && done_fill(s, seq, &done)) {
                /* Late, after its gap was confirmed: not lost after all. */
                struct dedup_counts *gc = &tr->parts[done.part].counts;
                c->anomalies[DEDUP_KIND_OUT_OF_ORDER]++;
                if (done.unknown) {
                        if (gc->unknown)
                                gc->unknown--;
                } else {
                        gc->recovered++;
                        if (gc->missing)
                                gc->missing--;
                }
                dedup_record_event(tr, DEDUP_KIND_OUT_OF_ORDER, part, name,
                                   s->epoch, seq, offset, done.part,
                                   done.offset, 0);
                return DEDUP_V_OUT_OF_ORDER;
        }
        if (!loc_get(s, seq, &first_part, &first_offset)) {
                first_part = part;
                first_offset = -1;
        }
        c->anomalies[DEDUP_KIND_DUPLICATE]++;
        dedup_record_event(tr, DEDUP_KIND_DUPLICATE, part, name, s->epoch, seq,
                           offset, first_part, first_offset, 1);
        return DEDUP_V_DUPLICATE;

accept:
        s->bits[word_slot(s, seq >> 6)] |= (uint64_t)1 << (seq & 63);
        if (s->next - seq <= DEDUP_TOPIC_LOCS) {
                if (!s->locs) {
                        s->locs = dedup_mem_realloc(tr, NULL, 0,
                                                    DEDUP_TOPIC_LOCS *
                                                        sizeof(*s->locs));
                        if (s->locs)
                                memset(s->locs, 0,
                                       DEDUP_TOPIC_LOCS * sizeof(*s->locs));
                }
                if (s->locs)
                        s->locs[(uint64_t)seq % DEDUP_TOPIC_LOCS] =
                            loc_pack(part, offset);
        }
        base_advance(s);
        return DEDUP_V_OK;
}

/* ------------------------------------------------------------------ */
/* Sweeps, coverage holes, the batch                                   */
/* ------------------------------------------------------------------ */

static void stream_remove(struct dedup_tracker *tr, struct tstream *s)
{
        struct dedup_topics *t = tr->topics;

        s->flags |= TS_DEAD;
        t->live--;
        stream_dirty(tr, s);
        /* Out of the index now; freed, its name let go, at dirty_clear,
         * once the dirty walk has reported it. */
        index_rebuild(tr);
}

void dedup_topics_sweep(struct dedup_tracker *tr, int force)
{
        struct dedup_topics *t = tr->topics;
        int64_t ttl = tr->conf.idle_ttl_ms, grace = tr->conf.gap_grace_ms;
        size_t i;

        if (!t)
                return;
        for (i = 0; i < t->nall; i++) {
                struct tstream *s = t->all[i];
                int64_t past;
                if (s->flags & TS_DEAD)
                        continue;
                if (force) {
                        stream_sweep(tr, s, 0, 1);
                } else if (grace > 0) {
                        past = topic_past_ms(tr, s->topic);
                        if (past != INT64_MIN)
                                stream_sweep(tr, s, past - grace, 0);
                }
                if (ttl > 0 && tr->clock_ms - s->last_ms > ttl) {
                        stream_sweep(tr, s, 0, 1);
                        stream_remove(tr, s);
                }
        }
}

void dedup_topics_rebaseline(struct dedup_tracker *tr, uint32_t part)
{
        struct dedup_topics *t = tr->topics;
        uint32_t topic;
        size_t i;

        if (!t || part >= tr->nparts ||
            (topic = tr->parts[part].topic) == NONE)
                return;
        /* Records of the topic were deleted unread: any seq not seen yet
         * may have been among them. */
        for (i = 0; i < t->nall; i++) {
                struct tstream *s = t->all[i];
                if (!(s->flags & TS_DEAD) && s->topic == topic)
                        settle_to(tr, s, s->next, DEDUP_KIND_GAP_UNKNOWN);
        }
}

void dedup_topics_dirty_clear(struct dedup_tracker *tr)
{
        struct dedup_topics *t = tr->topics;
        size_t i, j;

        if (!t)
                return;
        for (i = 0; i < t->ndirty; i++)
                t->dirty[i]->flags = (t->dirty[i]->flags & ~TS_DIRTY) |
                                     TS_STORED;
        t->ndirty = 0;
        for (i = j = 0; i < t->nall; i++) {
                if (t->all[i]->flags & TS_DEAD) {
                        dedup_name_unref(tr, t->all[i]->name);
                        stream_free(tr, t->all[i]);
                } else
                        t->all[j++] = t->all[i];
        }
        if (j != t->nall) {
                t->nall = j;
                index_rebuild(tr);
        }
}

void dedup_topics_free(struct dedup_tracker *tr)
{
        struct dedup_topics *t = tr->topics;
        size_t i;

        if (!t)
                return;
        for (i = 0; i < t->nall; i++) {
                free(t->all[i]->bits);
                free(t->all[i]->wms);
                free(t->all[i]->locs);
                free(t->all[i]);
        }
        for (i = 0; i < t->ntopics; i++)
                free(t->topics[i].v);
        free(t->topics);
        free(t->all);
        free(t->idx);
        free(t->dirty);
        free(t->sw);
        free(t->sms);
        free(t->sl);
        free(t);
        tr->topics = NULL;
}

/* ------------------------------------------------------------------ */
/* Persistence                                                         */
/* ------------------------------------------------------------------ */

/* v for s, its arrays in the scratch buffers.  Returns 0 or -1. */
static int stream_view(struct dedup_tracker *tr, const struct tstream *s,
                       struct dedup_topic_view *v)
{
        struct dedup_topics *t = tr->topics;
        const struct dedup_name *nm = tr->names[s->name];
        size_t nw = s->base < s->next
                        ? (size_t)(((s->next - 1) >> 6) - (s->base >> 6) + 1)
                        : 0;
        size_t need = nw > DEDUP_TOPIC_LOCS ? nw : DEDUP_TOPIC_LOCS, i;
        uint32_t nl = 0;
        int64_t seq;

        if (need > t->scap) {
                uint64_t *sw = realloc(t->sw, need * sizeof(*sw));
                int64_t *sms;
                struct dedup_topic_loc *sl;
                if (sw)
                        t->sw = sw;
                sms = sw ? realloc(t->sms, need * sizeof(*sms)) : NULL;
                if (sms)
                        t->sms = sms;
                sl = sms ? realloc(t->sl, need * sizeof(*sl)) : NULL;
                if (!sl)
                        return -1;
                t->sl = sl;
                t->scap = need;
        }
        memset(v, 0, sizeof(*v));
        v->part = t->topics[s->topic].v[0];
        v->producer = nm->bytes;
        v->producer_len = nm->len;
        v->epoch = s->epoch;
        v->removed = !!(s->flags & TS_DEAD);
        v->floor = s->floor;
        v->base = s->base;
        v->next = s->next;
        v->last_ms = s->last_ms;
        v->records = s->records;
        for (i = 0; i < nw; i++) {
                t->sw[i] = s->bits[word_slot(s, (s->base >> 6) + (int64_t)i)];
                t->sms[i] = s->wms[word_slot(s, (s->base >> 6) + (int64_t)i)];
        }
        v->words = t->sw;
        v->word_ms = t->sms;
        v->nwords = (uint32_t)nw;
        for (seq = s->next - DEDUP_TOPIC_LOCS; s->locs && seq < s->next;
             seq++) {
                uint32_t part;
                int64_t off;
                if (seq < 0 || !loc_get(s, seq, &part, &off))
                        continue;
                t->sl[nl].seq = seq;
                t->sl[nl].part = part;
                t->sl[nl++].offset = off;
        }
        v->locs = t->sl;
        v->nlocs = nl;
        v->done = s->done;
        v->ndone = s->ndone;
        return 0;
}

/* Walks the dirty streams (a removed one the ledger may hold included),
 * or every live one. */
static int topic_walk(struct dedup_tracker *tr, int dirty, dedup_topic_cb *cb,
                      void *opaque)
{
        struct dedup_topics *t = tr->topics;
        struct dedup_topic_view v;
        size_t i, n = !t ? 0 : dirty ? t->ndirty : t->nall;
        int r;

        for (i = 0; i < n; i++) {
                const struct tstream *s = dirty ? t->dirty[i] : t->all[i];
                if (dirty ? (s->flags & TS_DEAD) && !(s->flags & TS_STORED)
                          : (s->flags & TS_DEAD) != 0)
                        continue;
                if (stream_view(tr, s, &v))
                        return -1;
                if ((r = cb(opaque, &v)))
                        return r;
        }
        return 0;
}

int dedup_topic_dirty_foreach(struct dedup_tracker *tr, dedup_topic_cb *cb,
                              void *opaque)
{
        return topic_walk(tr, 1, cb, opaque);
}

int dedup_topic_foreach(struct dedup_tracker *tr, dedup_topic_cb *cb,
                        void *opaque)
{
        return topic_walk(tr, 0, cb, opaque);
}

int dedup_topic_restore(struct dedup_tracker *tr,
                        const struct dedup_topic_view *v)
{
        struct dedup_topics *t = tr->topics;
        struct tstream *s;
        uint32_t name, topic, i;
        int64_t x;

        if (!t || v->part >= tr->nparts ||
            (topic = tr->parts[v->part].topic) == NONE || !v->producer ||
            v->producer_len < 1 || v->producer_len > DEDUP_PRODUCER_MAX ||
            v->epoch < 0 || v->floor < 0 || v->base < v->floor ||
            v->next < v->base ||
            v->nwords != (v->base < v->next ? (uint64_t)(((v->next - 1) >> 6) -
                                                         (v->base >> 6) + 1)
                                            : 0) ||
            v->nwords > t->max_words || v->ndone > DEDUP_TOPIC_DONE)
                return -1;
        if (stream_find(tr, v->producer, v->producer_len, topic, v->epoch))
                return -1; /* restored twice */
        name = dedup_name_ref(tr, v->producer, v->producer_len);
        if (name == NONE)
                return -1;
        s = stream_new(tr, name, topic, v->epoch);
        if (!s) {
                dedup_name_unref(tr, name);
                return -1;
        }
        s->flags = TS_STORED;
        s->floor = v->floor;
        s->base = v->base;
        s->next = v->next;
        s->top_word = (s->base >> 6) - 1;
        s->last_ms = v->last_ms;
        s->records = v->records;
        if (v->last_ms > tr->clock_ms)
                tr->clock_ms = v->last_ms;
        if (v->nwords) {
                if (ring_fit(tr, s, (s->base >> 6) + v->nwords - 1))
                        return -1;
                for (i = 0; i < v->nwords; i++) {
                        x = (s->base >> 6) + i;
                        s->bits[word_slot(s, x)] = v->words[i];
                        s->wms[word_slot(s, x)] = v->word_ms[i];
                }
                s->top_word = (s->base >> 6) + v->nwords - 1;
        }
        {
                struct dedup_name *nm = tr->names[name];
                if (v->epoch > nm->epoch)
                        nm->epoch = v->epoch;
        }
        for (i = 0; i < v->nlocs; i++) {
                const struct dedup_topic_loc *l = &v->locs[i];
                if (l->seq >= s->next || s->next - l->seq > DEDUP_TOPIC_LOCS ||
                    l->part >= tr->nparts)
                        continue;
                if (!s->locs) {
                        s->locs = dedup_mem_realloc(tr, NULL, 0,
                                                    DEDUP_TOPIC_LOCS *
                                                        sizeof(*s->locs));
                        if (!s->locs)
                                return -1;
                        memset(s->locs, 0,
                               DEDUP_TOPIC_LOCS * sizeof(*s->locs));
                }
                s->locs[(uint64_t)l->seq % DEDUP_TOPIC_LOCS] =
                    loc_pack(l->part, l->offset);
        }
        for (i = 0; i < v->ndone; i++) {
                if (v->done[i].lo < 0 || v->done[i].hi < v->done[i].lo ||
                    v->done[i].part >= tr->nparts)
                        continue;
                s->done[s->ndone++] = v->done[i];
        }
        return 0;
}

size_t dedup_topic_streams(const struct dedup_tracker *tr)
{
        return tr->topics ? tr->topics->live : 0;
}

uint64_t dedup_topic_unsettled(const struct dedup_tracker *tr)
{
        const struct dedup_topics *t = tr->topics;
        uint64_t n = 0;
        size_t i;

        for (i = 0; t && i < t->nall; i++)
                if (!(t->all[i]->flags & TS_DEAD))
                        n += (uint64_t)(t->all[i]->next - t->all[i]->base);
        return n;
}
