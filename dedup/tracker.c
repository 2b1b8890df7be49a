/*
 * tracker.c - the tracker's life: configuration, parts, the clock, ticks
 * (gap confirmation, idle expiry), persistence views and restore, and the
 * tracker's face of the id windows (window.c).
 *
 * Slots freed by expiry are reused only after
 * dedup_tracker_dirty_clear(), so indices in the dirty list stay valid for
 * one batch; names freed by expiry outlive the events that point to them
 * until dedup_tracker_events_clear().
 */
#include <stdlib.h>
#include <string.h>

#include "dedup.h"
#include "internal.h"
#include "topic.h"

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
    [DEDUP_KIND_TORN] = "torn",
    [DEDUP_KIND_ABORTED_READ] = "aborted_read",
    [DEDUP_KIND_EXPIRED] = "expired",
    [DEDUP_KIND_GAP_UNKNOWN] = "gap_unknown",
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
        conf->topic_window = DEDUP_TOPIC_WINDOW_DEFAULT;
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
        tr->wins = dedup_windows_new(&tr->conf.window);
        if (!tr->wins) {
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
        dedup_txns_free(tr);
        dedup_topics_free(tr);
        for (i = 0; i < tr->npairs_slab; i++) {
                struct dedup_pair *pr = dedup_pair_at(tr, i);
                free(pr->flags & PAIR_LIVE ? pr->gaps : NULL);
                free(pr->flags & PAIR_LIVE ? pr->done : NULL);
        }
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
        dedup_windows_free(tr->wins);
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
                p = dedup_mem_realloc(tr, tr->parts, cap * sizeof(*p),
                                      ((size_t)part + 1) * sizeof(*p));
                if (!p)
                        return -1;
                for (i = tr->nparts; i <= part; i++) {
                        memset(&p[i], 0, sizeof(p[i]));
                        p[i].cache = NONE;
                        p[i].window = NONE;
                        p[i].topic = NONE;
                        p[i].read_ms = INT64_MIN;
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

/* The open gaps of pair slot may lie in deleted records: unknown. */
static void gaps_unknown(struct dedup_tracker *tr, uint32_t slot)
{
        struct dedup_pair *pr = dedup_pair_at(tr, slot);
        struct dedup_counts *c = &tr->parts[pr->part].counts;

        while (pr->gaps && pr->gaps->n) {
                struct dedup_gap g = pr->gaps->g[0];
                uint64_t n = (uint64_t)(g.hi - g.lo) + 1;
                struct dedup_event *ev;

                dedup_gap_remove_at(tr, pr, 0);
                c->unknown = dedup_sat_add(c->unknown, n);
                g.unknown = 1;
                dedup_done_add(tr, pr, &g);
                ev = dedup_event_new(tr, DEDUP_KIND_GAP_UNKNOWN, pr->part);
                if (!ev)
                        continue;
                dedup_event_pair_fill(tr, ev, pr);
                ev->epoch = g.epoch;
                ev->seq_lo = g.lo;
                ev->seq_hi = g.hi;
                ev->offset_lo = ev->offset_hi = g.opened_offset;
                ev->count = n;
        }
        dedup_gaps_trim(tr, pr);
}

void dedup_tracker_part_rebaseline(struct dedup_tracker *tr, uint32_t part)
{
        uint32_t i;

        if (part >= tr->nparts)
                return;
        tr->parts[part].from_log_start = 0;
        for (i = 0; i < tr->npairs_slab; i++) {
                struct dedup_pair *pr = dedup_pair_at(tr, i);
                if ((pr->flags & PAIR_LIVE) && pr->part == part) {
                        pr->flags |= PAIR_REBASELINE;
                        gaps_unknown(tr, i);
                        dedup_pair_dirty(tr, i);
                }
        }
        dedup_topics_rebaseline(tr, part);
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

void dedup_tracker_clock_advance(struct dedup_tracker *tr, int64_t now_ms)
{
        if (now_ms > tr->clock_ms)
                tr->clock_ms = now_ms;
}

int dedup_tracker_failed(const struct dedup_tracker *tr)
{
        return tr->failed;
}
static void pair_expire(struct dedup_tracker *tr, uint32_t slot)
{
        struct dedup_pair *pr = dedup_pair_at(tr, slot);
        struct dedup_event *ev;

        dedup_gaps_sweep_pair(tr, slot, 1);
        ev = dedup_event_new(tr, DEDUP_KIND_EXPIRED, pr->part);
        if (ev) {
                dedup_event_pair_fill(tr, ev, pr);
                ev->epoch = pr->epoch;
                ev->seq_lo = ev->seq_hi = pr->last_seq;
                ev->offset_lo = ev->offset_hi = dedup_pair_last_offset(pr);
                ev->count = pr->records;
        }
        dedup_done_free(tr, pr);
        if (tr->parts[pr->part].cache == slot)
                tr->parts[pr->part].cache = NONE;
        dedup_idx_remove(tr, tr->parts[pr->part].idx, tr->parts[pr->part].mask,
                         slot, dedup_pair_key_hash(pr->name),
                         dedup_pair_keyhash);
        tr->parts[pr->part].live--;
        dedup_name_unref(tr, pr->name);
        pr->flags = 0; /* not live, not dirty: dirty_foreach skips it */
        tr->live_pairs--;
        dedup_u32vec_push(tr, &tr->pair_pending, slot);
}

void dedup_tracker_tick(struct dedup_tracker *tr)
{
        int64_t ttl = tr->conf.idle_ttl_ms;
        int64_t every;
        uint32_t i;

        dedup_gaps_sweep_all(tr, 0);
        dedup_txns_sweep(tr, 0);
        dedup_topics_sweep(tr, 0);
        dedup_windows_tick(tr->wins, tr->clock_ms);
        if (ttl <= 0)
                return;
        /* A full walk costs O(pairs): do it a few times per TTL only. */
        every = ttl / 8 < 1000 ? 1000 : ttl / 8;
        if (tr->clock_ms - tr->last_expire_ms < every && ttl >= 1000)
                return;
        tr->last_expire_ms = tr->clock_ms;
        for (i = 0; i < tr->npairs_slab; i++) {
                struct dedup_pair *pr = dedup_pair_at(tr, i);
                if ((pr->flags & PAIR_LIVE) &&
                    tr->clock_ms - pr->last_ms > ttl)
                        pair_expire(tr, i);
        }
        dedup_gaps_sweep_all(tr, 0); /* drop expired pairs from the gap list */
}

void dedup_tracker_confirm_all(struct dedup_tracker *tr)
{
        dedup_gaps_sweep_all(tr, 1);
        dedup_txns_sweep(tr, 1);
        dedup_topics_sweep(tr, 1);
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
                dedup_mem_free(tr, tr->graveyard[i],
                               sizeof(*tr->graveyard[i]) +
                                   tr->graveyard[i]->len);
        tr->ngrave = 0;
}

static void pair_view(const struct dedup_tracker *tr, uint32_t slot,
                      struct dedup_pair_view *pv)
{
        const struct dedup_pair *pr = dedup_pair_at(tr, slot);
        const struct dedup_name *nm = tr->names[pr->name];
        unsigned i;

        pv->part = pr->part;
        pv->producer = nm->bytes;
        pv->producer_len = nm->len;
        pv->epoch = pr->epoch;
        pv->last_seq = pr->last_seq;
        pv->last_offset = dedup_pair_last_offset(pr);
        pv->last_ms = pr->last_ms;
        pv->records = pr->records;
        pv->rebaseline = !!(pr->flags & PAIR_REBASELINE);
        pv->pid = pr->pid;
        for (i = 0; i < DEDUP_RETIRED_PIDS; i++)
                pv->retired_pids[i] = nm->retired[i];
        pv->session_ms = nm->session_ms;
        for (i = 0; i < DEDUP_HISTORY_RUNS; i++) {
                pv->runs[i].seq = pr->run_len[i] ? pr->run_seq[i] : -1;
                pv->runs[i].offset = pr->run_len[i] ? pr->run_off[i] : -1;
                pv->runs[i].len = pr->run_len[i];
        }
        pv->gaps = pr->gaps ? pr->gaps->g : NULL;
        pv->ngaps = pr->gaps ? pr->gaps->n : 0;
        pv->done_gaps = pr->done ? pr->done->g : NULL;
        pv->ndone = pr->done ? pr->done->n : 0;
        pv->done_changed = !!(pr->flags & PAIR_DONE_DIRTY);
        pv->stored = !!(pr->flags & PAIR_STORED);
}

int dedup_tracker_dirty_foreach(struct dedup_tracker *tr, dedup_pair_cb *cb,
                                void *opaque)
{
        struct dedup_pair_view pv;
        size_t i;
        int r;

        for (i = 0; i < tr->dirty.n; i++) {
                uint32_t slot = tr->dirty.v[i];
                if (!(dedup_pair_at(tr, slot)->flags & PAIR_DIRTY))
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

        /* An expired pair's flags are 0 (its slot waits in pair_pending):
         * only live ones become stored. */
        for (i = 0; i < tr->dirty.n; i++) {
                struct dedup_pair *pr = dedup_pair_at(tr, tr->dirty.v[i]);
                if (pr->flags & PAIR_LIVE)
                        pr->flags |= PAIR_STORED;
                pr->flags &= ~(PAIR_DIRTY | PAIR_DONE_DIRTY);
        }
        tr->dirty.n = 0;
        for (i = 0; i < tr->pair_pending.n; i++)
                dedup_u32vec_push(tr, &tr->pair_free, tr->pair_pending.v[i]);
        tr->pair_pending.n = 0;
        dedup_windows_batch_clear(tr->wins);
        dedup_txns_dirty_clear(tr);
        dedup_topics_dirty_clear(tr);
}

/* A dirty pair's sort key: the part and the first 12 producer bytes,
 * big-endian and zero-padded, so that most comparisons are two integer
 * compares (a shorter name padded with zeros sorts first, as in memcmp
 * then length). */
struct dirty_key {
        uint64_t hi; /* part << 32 | bytes 0-3 */
        uint64_t lo; /* bytes 4-11 */
        const char *bytes;
        uint32_t len;
        uint32_t slot;
};

#define DIRTY_KEY_PREFIX 12

static int dirty_key_cmp(const void *a, const void *b)
{
        const struct dirty_key *x = a, *y = b;
        uint32_t n;
        int c;

        if (x->hi != y->hi)
                return x->hi < y->hi ? -1 : 1;
        if (x->lo != y->lo)
                return x->lo < y->lo ? -1 : 1;
        n = x->len < y->len ? x->len : y->len;
        c = memcmp(x->bytes, y->bytes, n);
        if (c)
                return c;
        return x->len < y->len ? -1 : x->len > y->len;
}

void dedup_tracker_dirty_sort(struct dedup_tracker *tr)
{
        struct dirty_key *k;
        size_t i, n = tr->dirty.n;

        if (n < 2)
                return;
        /* Not dedup_mem_realloc(): failing here must not mark the
         * tracker failed, the order is only an optimisation. */
        k = malloc(n * sizeof(*k));
        if (!k)
                return;
        for (i = 0; i < n; i++) {
                const struct dedup_pair *pr = dedup_pair_at(tr,
                                                            tr->dirty.v[i]);
                unsigned char pre[DIRTY_KEY_PREFIX] = {0};
                unsigned j;

                k[i].slot = tr->dirty.v[i];
                k[i].hi = (uint64_t)pr->part << 32;
                k[i].lo = 0;
                k[i].bytes = "";
                k[i].len = 0;
                if (!(pr->flags & PAIR_LIVE))
                        continue; /* expired since: skipped by foreach */
                k[i].bytes = tr->names[pr->name]->bytes;
                k[i].len = tr->names[pr->name]->len;
                memcpy(pre, k[i].bytes,
                       k[i].len < DIRTY_KEY_PREFIX ? k[i].len
                                                   : DIRTY_KEY_PREFIX);
                for (j = 0; j < 4; j++)
                        k[i].hi |= (uint64_t)pre[j] << (24 - 8 * j);
                for (j = 0; j < 8; j++)
                        k[i].lo |= (uint64_t)pre[4 + j] << (56 - 8 * j);
        }
        qsort(k, n, sizeof(*k), dirty_key_cmp);
        for (i = 0; i < n; i++)
                tr->dirty.v[i] = k[i].slot;
        free(k);
}

int dedup_tracker_foreach(struct dedup_tracker *tr, dedup_pair_cb *cb,
                          void *opaque)
{
        struct dedup_pair_view pv;
        uint32_t i;
        int r;

        for (i = 0; i < tr->npairs_slab; i++) {
                if (!(dedup_pair_at(tr, i)->flags & PAIR_LIVE))
                        continue;
                pair_view(tr, i, &pv);
                if ((r = cb(opaque, &pv)))
                        return r;
        }
        return 0;
}

int dedup_tracker_part_foreach(struct dedup_tracker *tr, uint32_t part,
                               dedup_pair_cb *cb, void *opaque)
{
        struct dedup_pair_view pv;
        uint32_t i;
        int r;

        if (part >= tr->nparts || !tr->parts[part].live)
                return 0;
        for (i = 0; i < tr->npairs_slab; i++) {
                const struct dedup_pair *pr = dedup_pair_at(tr, i);
                if (!(pr->flags & PAIR_LIVE) || pr->part != part)
                        continue;
                pair_view(tr, i, &pv);
                if ((r = cb(opaque, &pv)))
                        return r;
        }
        return 0;
}

/*
 * Drops pair slot as if it had never been seen: no event (unlike expiry,
 * the pair lives on in another process), its gaps neither confirmed nor
 * counted.  The slot is reusable after the next dirty_clear, as an
 * expired one.
 */
static void pair_forget(struct dedup_tracker *tr, uint32_t slot)
{
        struct dedup_pair *pr = dedup_pair_at(tr, slot);
        struct dedup_part *p = &tr->parts[pr->part];

        if (pr->gaps) {
                tr->open_gaps -= pr->gaps->n;
                pr->gaps->n = 0;
                dedup_gaps_trim(tr, pr);
        }
        dedup_done_free(tr, pr);
        if (p->cache == slot)
                p->cache = NONE;
        dedup_idx_remove(tr, p->idx, p->mask, slot,
                         dedup_pair_key_hash(pr->name), dedup_pair_keyhash);
        p->live--;
        dedup_name_unref(tr, pr->name);
        pr->flags = 0;
        tr->live_pairs--;
        dedup_u32vec_push(tr, &tr->pair_pending, slot);
}

void dedup_tracker_part_forget(struct dedup_tracker *tr, uint32_t part)
{
        struct dedup_part *p;
        size_t i;
        uint32_t s;

        if (part >= tr->nparts)
                return;
        p = &tr->parts[part];
        for (s = 0; s < tr->npairs_slab && p->live; s++) {
                const struct dedup_pair *pr = dedup_pair_at(tr, s);
                if ((pr->flags & PAIR_LIVE) && pr->part == part)
                        pair_forget(tr, s);
        }
        /* The gap list may not keep slots that are no longer live: a
         * reused slot would be listed twice. */
        i = 0;
        while (i < tr->gap_pairs.n) {
                if (!(dedup_pair_at(tr, tr->gap_pairs.v[i])->flags &
                      PAIR_LIVE))
                        tr->gap_pairs.v[i] =
                            tr->gap_pairs.v[--tr->gap_pairs.n];
                else
                        i++;
        }
        memset(&p->counts, 0, sizeof(p->counts));
        p->from_log_start = 0;
}

/* Keeps pid among nm's retired ids, in the oldest place (order unknown). */
static void name_retire_old(struct dedup_name *nm, int64_t pid)
{
        int i;

        if (pid < 0 || pid == nm->pid)
                return;
        for (i = 0; i < DEDUP_RETIRED_PIDS; i++)
                if (nm->retired[i] == pid)
                        return;
        nm->retired[0] = pid;
}

/*
 * The producer's session from its restored pairs: the producer id of the
 * pair written last is the current one (a producer writes with one id at
 * a time), with the retired ids that pair stored; the ids of other pairs
 * are retired too.  Its epoch is the highest of the current id.
 */
static void name_restore(struct dedup_name *nm,
                         const struct dedup_pair_view *pv)
{
        int64_t old = nm->pid;
        int i;

        if (pv->pid < 0 || old < 0 || pv->pid == old) {
                if (pv->pid >= 0)
                        nm->pid = pv->pid;
                if (pv->epoch > nm->epoch)
                        nm->epoch = pv->epoch;
        } else if (pv->last_ms > nm->pid_ms) {
                nm->pid = pv->pid;
                nm->epoch = pv->epoch;
        } else {
                name_retire_old(nm, pv->pid);
                return;
        }
        if (pv->pid >= 0 && (pv->last_ms > nm->pid_ms || old < 0)) {
                nm->pid_ms = pv->last_ms;
                for (i = 0; i < DEDUP_RETIRED_PIDS; i++)
                        nm->retired[i] = pv->retired_pids[i] == nm->pid
                                             ? -1
                                             : pv->retired_pids[i];
        }
        name_retire_old(nm, old);
        /* The session's start is known, not where it began (the audit
         * may now number its parts otherwise): fenced writes are found,
         * without that evidence. */
        if (pv->epoch == nm->epoch && pv->pid == nm->pid &&
            pv->session_ms > nm->session_ms)
                nm->session_ms = pv->session_ms;
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
        name = dedup_name_find(tr, pv->producer, pv->producer_len,
                               dedup_hash_bytes(pv->producer,
                                                pv->producer_len));
        if (name != NONE && dedup_pair_find(tr, pv->part, name) != NONE)
                return -1; /* restored twice */
        slot = dedup_pair_new(tr, pv->part, pv->producer, pv->producer_len);
        if (slot == NONE)
                return -1;
        pr = dedup_pair_at(tr, slot);
        pr->epoch = pv->epoch;
        pr->last_seq = pv->last_seq;
        pr->last_ms = pv->last_ms;
        pr->pid = pv->pid < 0 ? -1 : pv->pid;
        name_restore(tr->names[pr->name], pv);
        if (pv->last_ms > tr->clock_ms)
                tr->clock_ms = pv->last_ms; /* the records read so far */
        pr->records = pv->records;
        pr->flags |= PAIR_STORED; /* read back from persistence */
        if (pv->rebaseline)
                pr->flags |= PAIR_REBASELINE;
        for (i = 0; i < DEDUP_HISTORY_RUNS; i++) {
                pr->run_seq[i] = pv->runs[i].seq;
                pr->run_off[i] = pv->runs[i].offset;
                pr->run_len[i] = pv->runs[i].len;
        }
        for (i = 0; i < pv->ndone; i++) {
                if (pv->done_gaps[i].lo < 0 ||
                    pv->done_gaps[i].hi < pv->done_gaps[i].lo ||
                    dedup_done_add(tr, pr, &pv->done_gaps[i]))
                        return -1;
        }
        nev = tr->nev;
        for (i = 0; i < pv->ngaps; i++) {
                if (pv->gaps[i].lo < 0 || pv->gaps[i].hi < pv->gaps[i].lo)
                        return -1;
                if (dedup_gap_insert_at(tr, slot, pr->gaps ? pr->gaps->n : 0,
                                        &pv->gaps[i]))
                        return -1;
        }
        /* A lower max_open_gaps than when it was stored confirmed some:
         * the ledger must learn that they are no longer open. */
        if (tr->nev != nev)
                dedup_pair_dirty(tr, slot);
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
        return tr->mem + dedup_windows_memory(tr->wins);
}

/* ------------------------------------------------------------------ */
/* Id windows (window.c)                                               */
/* ------------------------------------------------------------------ */

int dedup_tracker_window_add(struct dedup_tracker *tr, uint32_t *window)
{
        return dedup_windows_add(tr->wins, window);
}

void *dedup_tracker_window_filters(const struct dedup_tracker *tr,
                                   uint32_t window, size_t *bytes)
{
        return dedup_windows_filters(tr->wins, window, bytes);
}

void dedup_tracker_part_set_window(struct dedup_tracker *tr, uint32_t part,
                                   uint32_t window)
{
        if (part < tr->nparts && window < dedup_windows_count(tr->wins))
                tr->parts[part].window = window;
}

void dedup_tracker_set_id_lookup(struct dedup_tracker *tr,
                                 dedup_id_lookup_cb *cb, void *opaque)
{
        dedup_windows_set_lookup(tr->wins, cb, opaque);
}

const struct dedup_id_row *
dedup_tracker_ids_new(const struct dedup_tracker *tr, size_t *n)
{
        return dedup_windows_new_rows(tr->wins, n);
}

int dedup_tracker_gens_dirty_foreach(struct dedup_tracker *tr,
                                     dedup_gen_cb *cb, void *opaque)
{
        return dedup_windows_gens_dirty_foreach(tr->wins, cb, opaque);
}

const uint64_t *dedup_tracker_gens_dropped(const struct dedup_tracker *tr,
                                           size_t *n)
{
        return dedup_windows_gens_dropped(tr->wins, n);
}

size_t dedup_tracker_gens_closed(const struct dedup_tracker *tr)
{
        return dedup_windows_gens_closed(tr->wins);
}

int dedup_tracker_gen_restore(struct dedup_tracker *tr,
                              const struct dedup_gen_view *gv)
{
        if (gv->last_ms > tr->clock_ms)
                tr->clock_ms = gv->last_ms;
        return dedup_windows_gen_restore(tr->wins, gv);
}

int dedup_tracker_id_restore(struct dedup_tracker *tr, uint32_t window,
                             uint64_t gen, const struct dedup_id *id)
{
        return dedup_windows_id_restore(tr->wins, window, gen, id);
}

int dedup_tracker_row_restore(struct dedup_tracker *tr,
                              const struct dedup_id_row *row)
{
        return dedup_windows_row_restore(tr->wins, row);
}

int dedup_tracker_gen_open(const struct dedup_tracker *tr, uint32_t window,
                           uint64_t gen)
{
        return dedup_windows_gen_open(tr->wins, window, gen);
}

int dedup_tracker_gens_closed_foreach(struct dedup_tracker *tr,
                                      dedup_gen_rows_cb *cb, void *opaque)
{
        return dedup_windows_gens_closed_foreach(tr->wins, cb, opaque);
}

uint64_t dedup_tracker_window_ids(const struct dedup_tracker *tr,
                                  uint32_t window)
{
        return dedup_windows_ids(tr->wins, window);
}
