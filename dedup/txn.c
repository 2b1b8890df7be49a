/*
 * txn.c - the transaction check (txn.h): per (producer, epoch, txn) the
 * records expected (from the manifest) and seen per part, aborted
 * tombstones, the grace sweep and the persistence walk.
 *
 * Transactions are found through a chained hash table and kept in two
 * lists by the records' clock at which they opened: the pending ones, and
 * the tombstones (aborted, or complete), which join theirs when they
 * become one.  The sweep only looks at the oldest of each: the clock never
 * goes back, so each list stays in opened_ms order.  Each list is bounded
 * by max_pending: past it the oldest pending transaction is confirmed
 * early, the oldest tombstone forgotten (tombstones never make a pending
 * transaction be decided early).
 * A forgotten transaction that the ledger may hold stays allocated, out of
 * the table and the list, until dedup_tracker_dirty_clear(), so that the
 * dirty walk can report its removal.
 */
#include <stdlib.h>
#include <string.h>

#include "dedup.h"
#include "internal.h"
#include "txn.h"

#define TXN_MANIFEST 0x01u /* its manifest was seen */
#define TXN_ABORTED 0x02u  /* a manifest named it aborted: tombstone */
#define TXN_DIRTY 0x04u    /* in the dirty vector */
#define TXN_STORED 0x08u   /* the ledger may hold it */
#define TXN_DEAD 0x10u     /* forgotten; freed at dirty clear */
#define TXN_COMPLETE 0x20u /* every count met: a tombstone, in memory only */

struct txn_entry {
        struct txn_entry *hnext;       /* hash chain */
        struct txn_entry *prev, *next; /* opened order */
        uint64_t hash;
        uint32_t name; /* the tracker's name id (one reference) */
        int32_t epoch;
        int64_t txn;
        unsigned flags;
        uint32_t manifest_part;
        int64_t manifest_offset;
        int64_t opened_ms;
        struct dedup_txn_slot *slots;
        size_t nslots, slots_cap;
};

struct txn_list {
        struct txn_entry *head, *tail;
        size_t n;
};

struct dedup_txns {
        struct dedup_txn_config conf;
        struct txn_entry **buckets;
        size_t nbuckets; /* a power of two */
        size_t live;     /* in the table */
        struct txn_list open, tombs;
        struct txn_entry **dirty;
        size_t ndirty, dirty_cap;
};

static uint64_t txn_hash(const char *p, size_t len, int32_t epoch, int64_t txn)
{
        return dedup_hash_bytes(p, len) ^
               dedup_fmix64(((uint64_t)(uint32_t)epoch << 32) ^
                            dedup_fmix64((uint64_t)txn));
}

int dedup_txn_enable(struct dedup_tracker *tr,
                     const struct dedup_txn_config *conf)
{
        struct dedup_txns *t = tr->txns;

        if (!t) {
                t = dedup_mem_realloc(tr, NULL, 0, sizeof(*t));
                if (!t)
                        return -1;
                memset(t, 0, sizeof(*t));
                tr->txns = t;
        }
        t->conf = *conf;
        if (t->conf.max_pending < 1)
                t->conf.max_pending = 1;
        return 0;
}

size_t dedup_txn_pending(const struct dedup_tracker *tr)
{
        return tr->txns ? tr->txns->open.n : 0;
}

size_t dedup_txn_tombstones(const struct dedup_tracker *tr)
{
        return tr->txns ? tr->txns->tombs.n : 0;
}

static void txn_entry_free(struct dedup_tracker *tr, struct txn_entry *e)
{
        dedup_name_unref(tr, e->name);
        dedup_mem_free(tr, e->slots, e->slots_cap * sizeof(*e->slots));
        dedup_mem_free(tr, e, sizeof(*e));
}

static int txn_dirty(struct dedup_tracker *tr, struct txn_entry *e)
{
        struct dedup_txns *t = tr->txns;

        if (e->flags & TXN_DIRTY)
                return 0;
        if (dedup_mem_grow(tr, (void **)&t->dirty, &t->dirty_cap,
                           t->ndirty + 1, sizeof(*t->dirty)))
                return -1;
        t->dirty[t->ndirty++] = e;
        e->flags |= TXN_DIRTY;
        return 0;
}

static void list_unlink(struct txn_list *l, struct txn_entry *e)
{
        if (e->prev)
                e->prev->next = e->next;
        else
                l->head = e->next;
        if (e->next)
                e->next->prev = e->prev;
        else
                l->tail = e->prev;
        e->prev = e->next = NULL;
        l->n--;
}

static void list_append(struct txn_list *l, struct txn_entry *e)
{
        e->next = NULL;
        e->prev = l->tail;
        if (l->tail)
                l->tail->next = e;
        else
                l->head = e;
        l->tail = e;
        l->n++;
}

static struct txn_list *list_of(struct dedup_txns *t,
                                const struct txn_entry *e)
{
        return e->flags & (TXN_ABORTED | TXN_COMPLETE) ? &t->tombs : &t->open;
}

/* Forgets e: out of the table and the list; freed now, or at the dirty
 * clear when the ledger must hear of it. */
static void txn_remove(struct dedup_tracker *tr, struct txn_entry *e)
{
        struct dedup_txns *t = tr->txns;
        struct txn_entry **pp = &t->buckets[e->hash & (t->nbuckets - 1)];

        while (*pp != e)
                pp = &(*pp)->hnext;
        *pp = e->hnext;
        list_unlink(list_of(t, e), e);
        t->live--;
        e->flags |= TXN_DEAD;
        if ((e->flags & TXN_STORED) && txn_dirty(tr, e) == 0)
                return;
        if (e->flags & TXN_DIRTY)
                return;
        txn_entry_free(tr, e);
}

static int txn_rehash(struct dedup_tracker *tr)
{
        struct dedup_txns *t = tr->txns;
        size_t n = t->nbuckets ? t->nbuckets * 2 : 64, i;
        struct txn_entry **b;

        b = dedup_mem_realloc(tr, NULL, 0, n * sizeof(*b));
        if (!b)
                return -1;
        memset(b, 0, n * sizeof(*b));
        for (i = 0; i < t->nbuckets; i++) {
                struct txn_entry *e = t->buckets[i], *next;
                for (; e; e = next) {
                        next = e->hnext;
                        e->hnext = b[e->hash & (n - 1)];
                        b[e->hash & (n - 1)] = e;
                }
        }
        dedup_mem_free(tr, t->buckets, t->nbuckets * sizeof(*b));
        t->buckets = b;
        t->nbuckets = n;
        return 0;
}

static struct txn_entry *txn_find(struct dedup_tracker *tr, const char *p,
                                  size_t len, int32_t epoch, int64_t txn,
                                  uint64_t h)
{
        struct dedup_txns *t = tr->txns;
        struct txn_entry *e;

        if (!t->nbuckets)
                return NULL;
        for (e = t->buckets[h & (t->nbuckets - 1)]; e; e = e->hnext) {
                const struct dedup_name *nm = tr->names[e->name];
                if (e->hash == h && e->epoch == epoch && e->txn == txn &&
                    nm->len == len && !memcmp(nm->bytes, p, len))
                        return e;
        }
        return NULL;
}

static void txn_confirm(struct dedup_tracker *tr, struct txn_entry *e);

/* The transaction, created (pending, at the tail) when new; NULL on
 * allocation failure. */
static struct txn_entry *txn_get(struct dedup_tracker *tr, const char *p,
                                 size_t len, int32_t epoch, int64_t txn)
{
        struct dedup_txns *t = tr->txns;
        uint64_t h = txn_hash(p, len, epoch, txn);
        struct txn_entry *e = txn_find(tr, p, len, epoch, txn, h);

        if (e)
                return e;
        /* The bound: the oldest goes first, confirmed as the grace would. */
        while (t->open.n >= t->conf.max_pending && t->open.head) {
                struct txn_entry *old = t->open.head;
                txn_confirm(tr, old);
                txn_remove(tr, old);
        }
        if (t->live >= t->nbuckets && txn_rehash(tr))
                return NULL;
        e = dedup_mem_realloc(tr, NULL, 0, sizeof(*e));
        if (!e)
                return NULL;
        memset(e, 0, sizeof(*e));
        e->name = dedup_name_ref(tr, p, len);
        if (e->name == NONE) {
                dedup_mem_free(tr, e, sizeof(*e));
                return NULL;
        }
        e->hash = h;
        e->epoch = epoch;
        e->txn = txn;
        e->manifest_offset = -1;
        e->opened_ms = tr->clock_ms;
        e->hnext = t->buckets[h & (t->nbuckets - 1)];
        t->buckets[h & (t->nbuckets - 1)] = e;
        list_append(&t->open, e);
        t->live++;
        return e;
}

static struct dedup_txn_slot *txn_slot(struct dedup_tracker *tr,
                                       struct txn_entry *e, uint32_t part)
{
        struct dedup_txn_slot *s;
        size_t i;

        for (i = 0; i < e->nslots; i++)
                if (e->slots[i].part == part)
                        return &e->slots[i];
        if (dedup_mem_grow(tr, (void **)&e->slots, &e->slots_cap,
                           e->nslots + 1, sizeof(*e->slots)))
                return NULL;
        s = &e->slots[e->nslots++];
        s->part = part;
        s->expected = s->seen = 0;
        s->offset_lo = s->offset_hi = -1;
        return s;
}

static int part_ok(const struct dedup_tracker *tr, uint32_t part)
{
        return part < tr->nparts && tr->parts[part].added;
}

/* Committed and every count met: nothing left to check. */
static int txn_complete(const struct txn_entry *e)
{
        size_t i;

        if (!(e->flags & TXN_MANIFEST))
                return 0;
        for (i = 0; i < e->nslots; i++)
                if (e->slots[i].seen < e->slots[i].expected)
                        return 0;
        return 1;
}

/* e becomes a tombstone with flags set (its slots are the caller's). */
static void txn_entomb(struct dedup_tracker *tr, struct txn_entry *e,
                       unsigned set, unsigned clear)
{
        struct dedup_txns *t = tr->txns;

        list_unlink(list_of(t, e), e);
        e->flags = (e->flags & ~clear) | set;
        e->opened_ms = tr->clock_ms;
        list_append(&t->tombs, e);
        while (t->tombs.n > t->conf.max_pending && t->tombs.head != e)
                txn_remove(tr, t->tombs.head);
}

/*
 * e is complete.  It stays as a tombstone for the grace, without its
 * slots, so that a manifest written twice or a record beyond its count
 * does not open it again as a new, torn, transaction.  Tombstones of
 * complete transactions are not stored: the ledger forgets e now.
 */
static void txn_done(struct dedup_tracker *tr, struct txn_entry *e)
{
        dedup_mem_free(tr, e->slots, e->slots_cap * sizeof(*e->slots));
        e->slots = NULL;
        e->nslots = e->slots_cap = 0;
        if (e->flags & TXN_STORED)
                txn_dirty(tr, e);
        txn_entomb(tr, e, TXN_COMPLETE, 0);
}

static void txn_event_fill(struct dedup_tracker *tr, struct dedup_event *ev,
                           const struct txn_entry *e)
{
        const struct dedup_name *nm = tr->names[e->name];

        ev->producer = nm->bytes;
        ev->producer_len = nm->len;
        ev->epoch = e->epoch;
        ev->seq_lo = ev->seq_hi = e->txn;
}

/* The grace is over (or the scan, or the bound): what is short is torn. */
static void txn_confirm(struct dedup_tracker *tr, struct txn_entry *e)
{
        size_t i;

        if (e->flags & (TXN_ABORTED | TXN_COMPLETE))
                return;
        for (i = 0; i < e->nslots; i++) {
                const struct dedup_txn_slot *s = &e->slots[i];
                struct dedup_event *ev;
                uint64_t count;

                if (e->flags & TXN_MANIFEST) {
                        if (s->seen >= s->expected)
                                continue;
                        count = s->expected - s->seen;
                } else {
                        if (!s->seen)
                                continue;
                        count = s->seen;
                }
                tr->parts[s->part].counts.anomalies[DEDUP_KIND_TORN]++;
                ev = dedup_event_new(tr, DEDUP_KIND_TORN, s->part);
                if (!ev)
                        continue;
                txn_event_fill(tr, ev, e);
                ev->offset_lo = s->offset_lo;
                ev->offset_hi = s->offset_hi;
                ev->count = count;
                ev->first_part = UINT32_MAX; /* no manifest */
                if (e->flags & TXN_MANIFEST) {
                        ev->first_part = e->manifest_part;
                        ev->first_offset = e->manifest_offset;
                }
        }
}

/* n records of e seen on part (offsets lo..hi) were of an aborted
 * transaction. */
static void aborted_read(struct dedup_tracker *tr, const struct txn_entry *e,
                         uint32_t part, int64_t lo, int64_t hi, uint64_t n)
{
        struct dedup_event *ev = tr->nev ? &tr->ev[tr->nev - 1] : NULL;
        const struct dedup_name *nm = tr->names[e->name];

        tr->parts[part].counts.anomalies[DEDUP_KIND_ABORTED_READ] += n;
        /* Consecutive records of one transaction on one part: one event. */
        if (ev && ev->kind == DEDUP_KIND_ABORTED_READ && ev->part == part &&
            ev->producer == nm->bytes && ev->epoch == e->epoch &&
            ev->seq_lo == e->txn && lo > ev->offset_hi) {
                ev->count += n;
                ev->offset_hi = hi;
                return;
        }
        ev = dedup_event_new(tr, DEDUP_KIND_ABORTED_READ, part);
        if (!ev)
                return;
        txn_event_fill(tr, ev, e);
        ev->offset_lo = lo;
        ev->offset_hi = hi;
        ev->count = n;
}

int dedup_txn_record(struct dedup_tracker *tr, uint32_t part, int64_t offset,
                     const struct dedup_hdrs *h)
{
        struct txn_entry *e;
        struct dedup_txn_slot *s;

        if (!tr->txns || h->txn < 0 || !h->producer || !part_ok(tr, part))
                return 0;
        e = txn_get(tr, h->producer, h->producer_len, h->epoch, h->txn);
        if (!e)
                return -1;
        if (e->flags & TXN_ABORTED) {
                aborted_read(tr, e, part, offset, offset, 1);
                return 1;
        }
        if (e->flags & TXN_COMPLETE)
                return 0; /* beyond its count: the sequence check's */
        s = txn_slot(tr, e, part);
        if (!s || txn_dirty(tr, e))
                return -1;
        s->seen++;
        if (s->offset_lo < 0 || offset < s->offset_lo)
                s->offset_lo = offset;
        if (offset > s->offset_hi)
                s->offset_hi = offset;
        if (txn_complete(e))
                txn_done(tr, e);
        return 0;
}

/* A manifest names e aborted: what was seen of it was an aborted read. */
static int64_t txn_abort(struct dedup_tracker *tr, struct txn_entry *e)
{
        int64_t n = 0;
        size_t i;

        if (e->flags & TXN_ABORTED)
                return 0;
        for (i = 0; i < e->nslots; i++) {
                const struct dedup_txn_slot *s = &e->slots[i];
                if (!s->seen)
                        continue;
                aborted_read(tr, e, s->part, s->offset_lo, s->offset_hi,
                             s->seen);
                n += (int64_t)s->seen;
        }
        e->nslots = 0;
        e->manifest_offset = -1;
        txn_entomb(tr, e, TXN_ABORTED, TXN_MANIFEST | TXN_COMPLETE);
        return n;
}

int64_t dedup_txn_manifest(struct dedup_tracker *tr,
                           const struct dedup_txn_manifest *m)
{
        struct txn_entry *e;
        int64_t n = 0;
        size_t i;

        if (!tr->txns)
                return 0;
        if (!m->producer || !m->producer_len ||
            m->producer_len > DEDUP_PRODUCER_MAX || m->epoch < 0 || m->txn < 0)
                return -1;
        for (i = 0; i < m->naborted; i++) {
                if (m->aborted[i].epoch < 0 || m->aborted[i].txn < 0)
                        continue;
                e = txn_get(tr, m->producer, m->producer_len,
                            m->aborted[i].epoch, m->aborted[i].txn);
                if (!e || txn_dirty(tr, e))
                        return -1;
                n += txn_abort(tr, e);
        }
        e = txn_get(tr, m->producer, m->producer_len, m->epoch, m->txn);
        if (!e)
                return -1;
        /* A manifest again (a duplicate write), or one of a transaction
         * already named aborted: nothing more to learn. */
        if (e->flags & (TXN_MANIFEST | TXN_ABORTED | TXN_COMPLETE))
                return n;
        if (txn_dirty(tr, e))
                return -1;
        e->flags |= TXN_MANIFEST;
        e->manifest_part = m->part;
        e->manifest_offset = m->offset;
        for (i = 0; i < m->ncounts; i++) {
                struct dedup_txn_slot *s;
                if (!part_ok(tr, m->counts[i].part) || !m->counts[i].records)
                        continue;
                s = txn_slot(tr, e, m->counts[i].part);
                if (!s)
                        return -1;
                s->expected = dedup_sat_add(s->expected, m->counts[i].records);
        }
        if (txn_complete(e))
                txn_done(tr, e);
        return n;
}

void dedup_txns_sweep(struct dedup_tracker *tr, int force)
{
        struct dedup_txns *t = tr->txns;

        struct txn_list *lists[2];
        int i;

        if (!t)
                return;
        lists[0] = &t->open;
        lists[1] = &t->tombs;
        for (i = 0; i < 2; i++)
                while (lists[i]->head) {
                        struct txn_entry *e = lists[i]->head;
                        if (!force &&
                            (t->conf.grace_ms <= 0 ||
                             tr->clock_ms - e->opened_ms < t->conf.grace_ms))
                                break;
                        txn_confirm(tr, e);
                        txn_remove(tr, e);
                }
}

int dedup_txn_dirty_foreach(struct dedup_tracker *tr, dedup_txn_cb *cb,
                            void *opaque)
{
        struct dedup_txns *t = tr->txns;
        size_t i;
        int rc;

        if (!t)
                return 0;
        for (i = 0; i < t->ndirty; i++) {
                const struct txn_entry *e = t->dirty[i];
                const struct dedup_name *nm = tr->names[e->name];
                struct dedup_txn_view v;

                /* Born and forgotten in one batch: the ledger never had
                 * it. */
                if ((e->flags & (TXN_DEAD | TXN_COMPLETE)) &&
                    !(e->flags & TXN_STORED))
                        continue;
                v = (struct dedup_txn_view){
                    .producer = nm->bytes,
                    .producer_len = nm->len,
                    .epoch = e->epoch,
                    .txn = e->txn,
                    .removed = (e->flags & (TXN_DEAD | TXN_COMPLETE)) != 0,
                    .aborted = (e->flags & TXN_ABORTED) != 0,
                    .manifest = (e->flags & TXN_MANIFEST) != 0,
                    .manifest_part = e->manifest_part,
                    .manifest_offset = e->manifest_offset,
                    .opened_ms = e->opened_ms,
                    .slots = e->slots,
                    .nslots = (uint32_t)e->nslots,
                };
                rc = cb(opaque, &v);
                if (rc)
                        return rc;
        }
        return 0;
}

void dedup_txns_dirty_clear(struct dedup_tracker *tr)
{
        struct dedup_txns *t = tr->txns;
        size_t i;

        if (!t)
                return;
        for (i = 0; i < t->ndirty; i++) {
                struct txn_entry *e = t->dirty[i];
                if (e->flags & TXN_DEAD) {
                        txn_entry_free(tr, e);
                        continue;
                }
                if (e->flags & TXN_COMPLETE) /* deleted from the ledger */
                        e->flags &= ~(TXN_DIRTY | TXN_STORED);
                else
                        e->flags = (e->flags & ~TXN_DIRTY) | TXN_STORED;
        }
        t->ndirty = 0;
}

int dedup_txn_restore(struct dedup_tracker *tr, const struct dedup_txn_view *v)
{
        struct txn_entry *e;
        uint32_t i;

        if (!tr->txns || !v->producer || !v->producer_len ||
            v->producer_len > DEDUP_PRODUCER_MAX || v->epoch < 0 ||
            v->txn < 0 || v->removed)
                return -1;
        e = txn_get(tr, v->producer, v->producer_len, v->epoch, v->txn);
        if (!e)
                return -1;
        if (v->aborted) {
                list_unlink(&tr->txns->open, e);
                list_append(&tr->txns->tombs, e);
        }
        e->flags = TXN_STORED | (v->aborted ? TXN_ABORTED : 0) |
                   (v->manifest ? TXN_MANIFEST : 0);
        e->manifest_part = v->manifest_part;
        e->manifest_offset = v->manifest_offset;
        e->opened_ms = v->opened_ms;
        for (i = 0; i < v->nslots; i++) {
                struct dedup_txn_slot *s;
                if (!part_ok(tr, v->slots[i].part))
                        continue;
                s = txn_slot(tr, e, v->slots[i].part);
                if (!s)
                        return -1;
                *s = v->slots[i];
        }
        /* The clock was not restored with it: keep its opened time as the
         * records' clock knew it (the tracker's clock is restored too). */
        if (v->opened_ms > tr->clock_ms)
                tr->clock_ms = v->opened_ms;
        return 0;
}

void dedup_txns_free(struct dedup_tracker *tr)
{
        struct dedup_txns *t = tr->txns;
        struct txn_entry *e, *next;
        size_t i;

        if (!t)
                return;
        /* The tracker frees every name next: plain frees suffice.  The
         * forgotten ones first: they are only in the dirty vector, which
         * the others share. */
        for (i = 0; i < t->ndirty; i++)
                if (t->dirty[i]->flags & TXN_DEAD) {
                        free(t->dirty[i]->slots);
                        free(t->dirty[i]);
                }
        for (e = t->open.head; e; e = next) {
                next = e->next;
                free(e->slots);
                free(e);
        }
        for (e = t->tombs.head; e; e = next) {
                next = e->next;
                free(e->slots);
                free(e);
        }
        free(t->dirty);
        free(t->buckets);
        free(t);
        tr->txns = NULL;
}
