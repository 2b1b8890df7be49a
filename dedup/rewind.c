/*
 * rewind.c - a partition's log truncated under the audit: the records
 * past the point where it diverged are taken back (dedup.h,
 * dedup_tracker_part_rewind()).
 */
#include <string.h>

#include "dedup.h"
#include "internal.h"

/* Drops the history runs at or past offset and trims the one that
 * straddles it; run 0 stays the newest non-empty run. */
static void rewind_runs(struct dedup_pair *pr, int64_t offset)
{
        unsigned i, k = 0;
        int64_t seq[DEDUP_HISTORY_RUNS], off[DEDUP_HISTORY_RUNS];
        uint32_t len[DEDUP_HISTORY_RUNS];

        for (i = 0; i < DEDUP_HISTORY_RUNS; i++) {
                if (!pr->run_len[i] || pr->run_off[i] >= offset)
                        continue;
                seq[k] = pr->run_seq[i];
                off[k] = pr->run_off[i];
                len[k] = pr->run_len[i];
                if (off[k] + (int64_t)len[k] > offset)
                        len[k] = (uint32_t)(offset - off[k]);
                k++;
        }
        for (i = 0; i < DEDUP_HISTORY_RUNS; i++) {
                pr->run_seq[i] = i < k ? seq[i] : 0;
                pr->run_off[i] = i < k ? off[i] : 0;
                pr->run_len[i] = i < k ? len[i] : 0;
        }
}

/* Drops the open gaps that records taken back opened (at or past
 * offset), and those of a later epoch than the one it goes back to. */
static void rewind_gaps(struct dedup_tracker *tr, struct dedup_pair *pr,
                        int64_t offset, int32_t epoch)
{
        uint32_t i = 0;

        while (pr->gaps && i < pr->gaps->n) {
                const struct dedup_gap *g = &pr->gaps->g[i];
                if (g->opened_offset >= offset || g->epoch > epoch) {
                        dedup_gap_remove_at(tr, pr, i);
                        continue;
                }
                i++;
        }
        dedup_gaps_trim(tr, pr);
}

int dedup_tracker_part_rewind(struct dedup_tracker *tr, uint32_t part,
                              int64_t offset, const struct dedup_rewind *rw,
                              size_t n)
{
        struct dedup_part *p;
        uint64_t taken = 0;
        size_t i;
        int found = 0;

        if (part >= tr->nparts || !tr->parts[part].added || offset < 0)
                return -1;
        p = &tr->parts[part];
        for (i = 0; i < n; i++) {
                const struct dedup_rewind *r = &rw[i];
                struct dedup_pair *pr;
                uint32_t name, slot;

                if (!r->producer || r->producer_len < 1 ||
                    r->producer_len > DEDUP_PRODUCER_MAX || r->seq < 0 ||
                    r->epoch < 0 || r->last_seq < -1 || r->last_seq >= r->seq)
                        return -1;
                name = dedup_name_find(tr, r->producer, r->producer_len,
                                       dedup_hash_bytes(r->producer,
                                                        r->producer_len));
                slot = name == NONE ? NONE : dedup_pair_find(tr, part, name);
                if (slot == NONE)
                        continue; /* expired meanwhile: nothing to take back */
                pr = dedup_pair_at(tr, slot);
                /* Records of one pair are accepted in offset order with
                 * epochs that never go down: everything it accepted after
                 * the first record taken back is taken back too. */
                if (pr->epoch != r->epoch)
                        dedup_done_free(tr, pr);
                rewind_gaps(tr, pr, offset, r->epoch);
                pr->epoch = r->epoch;
                pr->last_seq = r->last_seq;
                pr->records = pr->records > r->records
                                  ? pr->records - r->records
                                  : 0;
                rewind_runs(pr, offset);
                dedup_pair_dirty(tr, slot);
                taken = dedup_sat_add(taken, r->records);
                found++;
        }
        p->counts.records = p->counts.records > taken
                                ? p->counts.records - taken
                                : 0;
        return found;
}
