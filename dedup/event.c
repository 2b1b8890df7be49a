/*
 * event.c - a new event in the tracker's list, its fields unknown (-1)
 * but for kind, part and time; the producer of a pair's event; one
 * counted record added to the event it continues, or a new one: what
 * every classifying file (observe.c, topic.c, tracker.c, txn.c) reports
 * through, so that none of them calls another for it.
 */
#include <string.h>

#include "dedup.h"
#include "internal.h"

struct dedup_event *dedup_event_new(struct dedup_tracker *tr,
                                    enum dedup_kind kind, uint32_t part)
{
        struct dedup_event *ev;

        if (dedup_mem_grow(tr, (void **)&tr->ev, &tr->ev_cap, tr->nev + 1,
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

void dedup_event_pair_fill(struct dedup_tracker *tr, struct dedup_event *ev,
                           const struct dedup_pair *pr)
{
        const struct dedup_name *nm = tr->names[pr->name];

        ev->producer = nm->bytes;
        ev->producer_len = nm->len;
}

void dedup_record_event(struct dedup_tracker *tr, enum dedup_kind kind,
                        uint32_t part, uint32_t name, int32_t epoch,
                        int64_t seq, int64_t offset, uint32_t first_part,
                        int64_t first_offset, int first_next)
{
        const struct dedup_name *nm = tr->names[name];
        struct dedup_event *ev = tr->nev ? &tr->ev[tr->nev - 1] : NULL;

        if (ev && ev->kind == kind && ev->part == part &&
            ev->producer == nm->bytes && ev->epoch == epoch &&
            seq - 1 == ev->seq_hi && ev->offset_hi < offset &&
            (kind != DEDUP_KIND_OUT_OF_ORDER ||
             ev->first_offset == first_offset) &&
            (kind != DEDUP_KIND_DUPLICATE ||
             (ev->first_part == first_part &&
              (!first_next ||
               (ev->first_offset < 0
                    ? first_offset < 0
                    : first_offset ==
                          ev->first_offset + (seq - ev->seq_lo)))))) {
                ev->seq_hi = seq;
                ev->offset_hi = offset;
                ev->count++;
                return;
        }
        ev = dedup_event_new(tr, kind, part);
        if (!ev)
                return;
        ev->producer = nm->bytes;
        ev->producer_len = nm->len;
        ev->epoch = epoch;
        ev->seq_lo = ev->seq_hi = seq;
        ev->offset_lo = ev->offset_hi = offset;
        ev->first_part = first_part;
        ev->first_offset = first_offset;
        ev->count = 1;
}
