/*
 * observe.c - classification of one record: the sequence rules of
 * dedup.h, the events that report anomalies, and open gaps (opened,
 * filled, confirmed).
 */
#include <stdlib.h>
#include <string.h>

#include "dedup.h"
#include "internal.h"

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

/* One record of kind for pair pr. */
static void record_event(struct dedup_tracker *tr, enum dedup_kind kind,
                         const struct dedup_pair *pr, int32_t epoch,
                         int64_t seq, int64_t offset, uint32_t first_part,
                         int64_t first_offset)
{
        dedup_record_event(tr, kind, pr->part, pr->name, epoch, seq, offset,
                           first_part, first_offset, 0);
}

static void malformed_event(struct dedup_tracker *tr, uint32_t part,
                            int64_t offset, unsigned bits)
{
        struct dedup_event *ev = tr->nev ? &tr->ev[tr->nev - 1] : NULL;

        /* Malformed records at consecutive offsets of a part become one
         * event; a record in between that is not malformed splits them,
         * so the range names only malformed records. */
        if (ev && ev->kind == DEDUP_KIND_MALFORMED && ev->part == part &&
            offset - 1 == ev->offset_hi) {
                ev->offset_hi = offset;
                ev->count++;
                ev->malformed_bits |= bits;
                return;
        }
        ev = dedup_event_new(tr, DEDUP_KIND_MALFORMED, part);
        if (!ev)
                return;
        ev->offset_lo = ev->offset_hi = offset;
        ev->count = 1;
        ev->malformed_bits = bits;
}

/* ------------------------------------------------------------------ */
/* Gaps                                                                */
/* ------------------------------------------------------------------ */

void dedup_gap_confirm(struct dedup_tracker *tr, struct dedup_pair *pr,
                       const struct dedup_gap *g)
{
        struct dedup_counts *c = &tr->parts[pr->part].counts;
        uint64_t missing = (uint64_t)(g->hi - g->lo) + 1;
        struct dedup_event *ev = dedup_event_new(tr, DEDUP_KIND_GAP, pr->part);

        c->anomalies[DEDUP_KIND_GAP]++;
        c->missing = dedup_sat_add(c->missing, missing);
        dedup_done_add(tr, pr, g);
        if (!ev)
                return;
        dedup_event_pair_fill(tr, ev, pr);
        ev->epoch = g->epoch;
        ev->seq_lo = g->lo;
        ev->seq_hi = g->hi;
        ev->offset_lo = ev->offset_hi = g->opened_offset;
        ev->count = missing;
}

void dedup_gap_remove_at(struct dedup_tracker *tr, struct dedup_pair *pr,
                         uint32_t i)
{
        struct dedup_gapset *gs = pr->gaps;

        memmove(&gs->g[i], &gs->g[i + 1], (gs->n - i - 1) * sizeof(gs->g[0]));
        gs->n--;
        tr->open_gaps--;
}

/* Inserts g at position i of *gsp, growing it. */
static int gapset_insert(struct dedup_tracker *tr, struct dedup_gapset **gsp,
                         uint32_t i, const struct dedup_gap *g)
{
        struct dedup_gapset *gs = *gsp;

        if (!gs || gs->n == gs->cap) {
                uint32_t ocap = gs ? gs->cap : 0;
                uint32_t ncap = ocap ? ocap * 2 : 2;
                struct dedup_gapset *ngs =
                    dedup_mem_realloc(tr, gs, gs ? dedup_gapset_size(ocap) : 0,
                                      dedup_gapset_size(ncap));
                if (!ngs)
                        return -1;
                if (!gs)
                        ngs->n = 0;
                ngs->cap = ncap;
                *gsp = gs = ngs;
        }
        memmove(&gs->g[i + 1], &gs->g[i], (gs->n - i) * sizeof(gs->g[0]));
        gs->g[i] = *g;
        gs->n++;
        return 0;
}

static void gapset_remove(struct dedup_gapset *gs, uint32_t i)
{
        memmove(&gs->g[i], &gs->g[i + 1], (gs->n - i - 1) * sizeof(gs->g[0]));
        gs->n--;
}

#define GAPSET_NONE UINT32_MAX

/* The index of the gap of epoch that holds seq, or GAPSET_NONE. */
static uint32_t gapset_find(const struct dedup_gapset *gs, int32_t epoch,
                            int64_t seq)
{
        uint32_t i;

        for (i = 0; gs && i < gs->n; i++) {
                const struct dedup_gap *g = &gs->g[i];
                if (g->epoch == epoch && seq >= g->lo && seq <= g->hi)
                        return i;
        }
        return GAPSET_NONE;
}

enum gap_cut { GAP_CUT_TRIMMED, GAP_CUT_EMPTY, GAP_CUT_SPLIT };

/*
 * Takes seq (within g) out of g: GAP_CUT_EMPTY when g held seq alone (the
 * caller removes g), GAP_CUT_SPLIT when seq lay strictly inside (g keeps
 * the lower half, *upper gets the rest for the caller to insert after g),
 * else g is trimmed at an end.  Open and confirmed gaps cut alike; they
 * differ only in how a removal or an insertion is bounded.
 */
static enum gap_cut gap_cut(struct dedup_gap *g, int64_t seq,
                            struct dedup_gap *upper)
{
        if (g->lo == g->hi)
                return GAP_CUT_EMPTY;
        if (seq == g->lo) {
                g->lo++;
                return GAP_CUT_TRIMMED;
        }
        if (seq == g->hi) {
                g->hi--;
                return GAP_CUT_TRIMMED;
        }
        *upper = *g;
        upper->lo = seq + 1;
        g->hi = seq - 1;
        return GAP_CUT_SPLIT;
}

void dedup_done_free(struct dedup_tracker *tr, struct dedup_pair *pr)
{
        if (pr->done) {
                dedup_mem_free(tr, pr->done, dedup_gapset_size(pr->done->cap));
                pr->done = NULL;
                pr->flags |= PAIR_DONE_DIRTY;
        }
}

/* Bounded: the oldest is forgotten first (a record inside it is then a
 * duplicate again, as it was before gaps were remembered). */
int dedup_done_add(struct dedup_tracker *tr, struct dedup_pair *pr,
                   const struct dedup_gap *g)
{
        if (g->epoch != pr->epoch)
                return 0; /* a record of that epoch is fenced now */
        if (pr->done && pr->done->n >= DEDUP_DONE_GAPS)
                gapset_remove(pr->done, 0);
        pr->flags |= PAIR_DONE_DIRTY;
        return gapset_insert(tr, &pr->done, pr->done ? pr->done->n : 0, g);
}

/*
 * If seq of epoch lies in a remembered confirmed gap, takes it out of the
 * gap, copies the gap as it was to *out and returns 1.
 */
static int done_fill(struct dedup_tracker *tr, struct dedup_pair *pr,
                     int32_t epoch, int64_t seq, struct dedup_gap *out)
{
        struct dedup_gapset *gs = pr->done;
        struct dedup_gap upper;
        uint32_t i = gapset_find(gs, epoch, seq);

        if (i == GAPSET_NONE)
                return 0;
        *out = gs->g[i];
        pr->flags |= PAIR_DONE_DIRTY;
        switch (gap_cut(&gs->g[i], seq, &upper)) {
        case GAP_CUT_TRIMMED:
                break;
        case GAP_CUT_EMPTY:
                gapset_remove(gs, i);
                break;
        case GAP_CUT_SPLIT:
                if (gs->n >= DEDUP_DONE_GAPS) {
                        /* Full: the oldest other gap goes. */
                        uint32_t drop = i == 0 ? 1 : 0;
                        gapset_remove(gs, drop);
                        if (drop < i)
                                i--;
                }
                gapset_insert(tr, &pr->done, i + 1, &upper);
                break;
        }
        if (pr->done && pr->done->n == 0)
                dedup_done_free(tr, pr);
        return 1;
}

/* Inserts a gap at position i (gaps are kept in the order they opened,
 * except that split halves stay next to each other). */
int dedup_gap_insert_at(struct dedup_tracker *tr, uint32_t slot, uint32_t i,
                        const struct dedup_gap *g)
{
        struct dedup_pair *pr = dedup_pair_at(tr, slot);
        struct dedup_gapset *gs = pr->gaps;

        if (gs && gs->n >= tr->conf.max_open_gaps) {
                /* Bound memory: the oldest gap is confirmed early. */
                dedup_gap_confirm(tr, pr, &gs->g[0]);
                dedup_gap_remove_at(tr, pr, 0);
                if (i > 0)
                        i--;
        }
        if (gapset_insert(tr, &pr->gaps, i, g))
                return -1;
        tr->open_gaps++;
        if (!(pr->flags & PAIR_GAPLIST) &&
            dedup_u32vec_push(tr, &tr->gap_pairs, slot) == 0)
                pr->flags |= PAIR_GAPLIST;
        return 0;
}

static int gap_open(struct dedup_tracker *tr, uint32_t slot, int32_t epoch,
                    int64_t lo, int64_t hi, int64_t offset)
{
        struct dedup_pair *pr = dedup_pair_at(tr, slot);
        struct dedup_gap g = {
            .epoch = epoch,
            .lo = lo,
            .hi = hi,
            .opened_offset = offset,
            .opened_ms = tr->rec_ms,
            .opened_rec = tr->parts[pr->part].counts.records,
        };

        return dedup_gap_insert_at(tr, slot, pr->gaps ? pr->gaps->n : 0, &g);
}

/* If seq of epoch lies in an open gap, fills it and returns 1. */
static int gap_fill(struct dedup_tracker *tr, uint32_t slot, int32_t epoch,
                    int64_t seq)
{
        struct dedup_pair *pr = dedup_pair_at(tr, slot);
        struct dedup_gapset *gs = pr->gaps;
        struct dedup_gap upper;
        uint32_t i = gapset_find(gs, epoch, seq);

        if (i == GAPSET_NONE)
                return 0;
        switch (gap_cut(&gs->g[i], seq, &upper)) {
        case GAP_CUT_TRIMMED:
                break;
        case GAP_CUT_EMPTY:
                dedup_gap_remove_at(tr, pr, i);
                break;
        case GAP_CUT_SPLIT:
                /* Out of memory: the upper half is lost; the record is
                 * still a fill. */
                (void)dedup_gap_insert_at(tr, slot, i + 1, &upper);
                break;
        }
        return 1;
}

/* Frees the gap set if empty; the gap list entry is dropped in tick. */
void dedup_gaps_trim(struct dedup_tracker *tr, struct dedup_pair *pr)
{
        if (pr->gaps && pr->gaps->n == 0) {
                dedup_mem_free(tr, pr->gaps, dedup_gapset_size(pr->gaps->cap));
                pr->gaps = NULL;
        }
}

static void run_note(struct dedup_pair *pr, int64_t seq, int64_t offset)
{
        uint32_t len = pr->run_len[0];

        /* Differences, not sums: seq may be near INT64_MAX. */
        if (len && len < UINT32_MAX && seq - pr->run_seq[0] == len &&
            offset - pr->run_off[0] == len) {
                pr->run_len[0]++;
                return;
        }
        memmove(&pr->run_seq[1], &pr->run_seq[0],
                (DEDUP_HISTORY_RUNS - 1) * sizeof(pr->run_seq[0]));
        memmove(&pr->run_off[1], &pr->run_off[0],
                (DEDUP_HISTORY_RUNS - 1) * sizeof(pr->run_off[0]));
        memmove(&pr->run_len[1], &pr->run_len[0],
                (DEDUP_HISTORY_RUNS - 1) * sizeof(pr->run_len[0]));
        pr->run_seq[0] = seq;
        pr->run_off[0] = offset;
        pr->run_len[0] = 1;
}

static void runs_reset(struct dedup_pair *pr)
{
        memset(pr->run_len, 0, sizeof(pr->run_len));
}

static int64_t run_offset_of(const struct dedup_pair *pr, int64_t seq)
{
        unsigned i;

        for (i = 0; i < DEDUP_HISTORY_RUNS; i++) {
                if (pr->run_len[i] && seq >= pr->run_seq[i] &&
                    seq - pr->run_seq[i] < pr->run_len[i])
                        return pr->run_off[i] + (seq - pr->run_seq[i]);
        }
        return -1;
}

/* Offset of the last accepted record, -1 when none in this epoch. */
/*
 * The first record of a new session on this pair may name the last
 * record of the previous epoch (eos.prev_epoch, eos.prev_seq): with
 * transactions v2 the epoch goes up at every commit and seqs restart at 0,
 * so a loss at the end of a transaction shows only there.  Opens the gap
 * of what is missing and returns 1, else 0.  Across a coverage hole the
 * missing records may be among the deleted ones: nothing is opened.
 */
static int prev_check(struct dedup_tracker *tr, uint32_t slot,
                      const struct dedup_hdrs *h, int64_t offset)
{
        struct dedup_pair *pr = dedup_pair_at(tr, slot);

        if ((h->seen & DEDUP_HDR_PREV) != DEDUP_HDR_PREV ||
            (pr->flags & PAIR_REBASELINE))
                return 0;
        if (h->prev_epoch == pr->epoch && h->prev_seq > pr->last_seq)
                return gap_open(tr, slot, pr->epoch, pr->last_seq + 1,
                                h->prev_seq, offset) == 0;
        if (h->prev_epoch > pr->epoch)
                /* A whole epoch that wrote here never showed up. */
                return gap_open(tr, slot, h->prev_epoch, 0, h->prev_seq,
                                offset) == 0;
        return 0;
}

static enum dedup_verdict observe_seq(struct dedup_tracker *tr, uint32_t part,
                                      int64_t offset,
                                      const struct dedup_hdrs *h)
{
        struct dedup_part *p = &tr->parts[part];
        struct dedup_counts *c = &p->counts;
        enum dedup_verdict v = DEDUP_V_OK;
        struct dedup_pair *pr;
        struct dedup_name *nm;
        struct dedup_gap done;
        int created, pid_switch, zombie;
        uint32_t slot;
        int64_t seq, last_ms;

        c->records++;
        switch (dedup_hdrs_status(h)) {
        case DEDUP_HDR_UNTRACKED:
                c->untracked++;
                return DEDUP_V_UNTRACKED;
        case DEDUP_HDR_MALFORMED:
                c->anomalies[DEDUP_KIND_MALFORMED]++;
                malformed_event(tr, part, offset,
                                h->bad | (DEDUP_HDR_REQUIRED & ~h->seen) |
                                    ((h->seen & DEDUP_HDR_PREV)
                                         ? DEDUP_HDR_PREV & ~h->seen
                                         : 0));
                return DEDUP_V_MALFORMED;
        case DEDUP_HDR_TRACKED:
                break;
        }
        if (h->scope_topic)
                return dedup_topic_observe(tr, part, offset, h);

        slot = dedup_pair_lookup(tr, p, part, h, &created);
        if (slot == NONE) {
                c->anomalies[DEDUP_KIND_MALFORMED]++;
                return DEDUP_V_MALFORMED; /* tr->failed is set */
        }
        pr = dedup_pair_at(tr, slot);
        nm = tr->names[pr->name];
        pr->records++;
        /* A fenced record does not keep the pair alive (it is put back). */
        last_ms = pr->last_ms;
        pr->last_ms = tr->rec_ms;
        dedup_pair_dirty(tr, slot);
        seq = h->seq;
        zombie = dedup_producer_session(tr, nm, h, part, offset);
        if (zombie && nm->session_ms >= 0 && h->ts_ms > 0 &&
            tr->rec_ms > nm->session_ms) {
                /* Written from an older session after the producer's
                 * current one began (by record time, see HEADERS.md):
                 * a zombie, also on a part the new session has not
                 * written to yet. */
                if (created) {
                        pr->epoch = nm->epoch;
                        pr->pid = nm->pid;
                        if (!p->from_log_start || p->compacted)
                                pr->flags |= PAIR_REBASELINE;
                } else {
                        pr->last_ms = last_ms;
                }
                goto fenced;
        }

        if (created) {
                pr->epoch = h->epoch;
                pr->pid = h->pid;
                if (created && p->from_log_start && !p->compacted && seq > 0) {
                        /* The whole log was audited: records 0..seq-1 of
                         * this session never appeared. */
                        gap_open(tr, slot, h->epoch, 0, seq - 1, offset);
                        v = DEDUP_V_GAP_OPENED;
                } else if (!(created && p->from_log_start)) {
                        v = DEDUP_V_BASELINE;
                }
                goto accept;
        }

        /* Another producer id is another session, older or newer by the
         * order the producer's ids came in, whatever its epoch (a new id
         * starts again at epoch 0). */
        pid_switch = h->pid >= 0 && pr->pid >= 0 && h->pid != pr->pid;
        if (pid_switch
                ? dedup_pid_rank(nm, h->pid) < dedup_pid_rank(nm, pr->pid)
                : h->epoch < pr->epoch) {
                pr->last_ms = last_ms;
                goto fenced;
        }
        if (pid_switch || h->epoch > pr->epoch) {
                /* A new session: numbering restarts; gaps of the old
                 * session stay open until confirmed, its confirmed ones
                 * can no longer be filled.  What the old one wrote last,
                 * if the record says, must be here. */
                if (prev_check(tr, slot, h, offset))
                        v = DEDUP_V_GAP_OPENED;
                pr->epoch = h->epoch;
                pr->last_seq = -1;
                runs_reset(pr);
                dedup_done_free(tr, pr);
        }
        if (h->pid >= 0)
                pr->pid = h->pid;

        /* Compared as seq - 1 against last_seq so that seq = INT64_MAX
         * needs no next_seq beyond the range. */
        if (seq - 1 == pr->last_seq)
                goto accept; /* v: OK, or GAP_OPENED by prev_check() */
        if (seq - 1 > pr->last_seq &&
            (p->compacted || (pr->flags & PAIR_REBASELINE))) {
                /* The cleaner removed records, or retention deleted
                 * records before the audit read them: those in between
                 * may be the deleted ones. */
                v = DEDUP_V_BASELINE;
                goto accept;
        }
        if (seq - 1 > pr->last_seq) {
                gap_open(tr, slot, pr->epoch, pr->last_seq + 1, seq - 1,
                         offset);
                v = DEDUP_V_GAP_OPENED;
                goto accept;
        }
        if (gap_fill(tr, slot, pr->epoch, seq)) {
                dedup_gaps_trim(tr, pr);
                c->anomalies[DEDUP_KIND_OUT_OF_ORDER]++;
                record_event(tr, DEDUP_KIND_OUT_OF_ORDER, pr, pr->epoch, seq,
                             offset, 0, -1);
                return DEDUP_V_OUT_OF_ORDER;
        }
        if (done_fill(tr, pr, pr->epoch, seq, &done)) {
                /* Late, after its gap was confirmed: not lost after all
                 * (or, for a gap unknown since a coverage hole, found). */
                c->anomalies[DEDUP_KIND_OUT_OF_ORDER]++;
                if (done.unknown) {
                        if (c->unknown)
                                c->unknown--;
                } else {
                        c->recovered++;
                        if (c->missing)
                                c->missing--;
                }
                record_event(tr, DEDUP_KIND_OUT_OF_ORDER, pr, pr->epoch, seq,
                             offset, 0, done.opened_offset);
                return DEDUP_V_OUT_OF_ORDER;
        }
        c->anomalies[DEDUP_KIND_DUPLICATE]++;
        record_event(tr, DEDUP_KIND_DUPLICATE, pr, pr->epoch, seq, offset,
                     pr->part, run_offset_of(pr, seq));
        return DEDUP_V_DUPLICATE;

accept:
        pr->flags &= ~PAIR_REBASELINE;
        pr->last_seq = seq;
        run_note(pr, seq, offset);
        return v;

fenced:
        /* The evidence: the first record of the producer's current session
         * (unknown when it began before a restart of the audit). */
        c->anomalies[DEDUP_KIND_FENCED]++;
        if (zombie && nm->session_offset >= 0)
                record_event(tr, DEDUP_KIND_FENCED, pr, h->epoch, seq, offset,
                             nm->session_part, nm->session_offset);
        else
                record_event(tr, DEDUP_KIND_FENCED, pr, h->epoch, seq, offset,
                             0, -1);
        return DEDUP_V_FENCED;
}

/*
 * Reports one redelivered record, extending the previous event when it is
 * the part's previous record too, from the same producer (and the next
 * seq), and its first copy is at the offset right after the previous
 * one's: both ranges are then true ranges of records.
 */
static void redelivered_event(struct dedup_tracker *tr, uint32_t part,
                              const struct dedup_hdrs *h, int64_t offset,
                              uint32_t first_part, int64_t first_offset)
{
        struct dedup_part *p = &tr->parts[part];
        struct dedup_event *ev = tr->nev ? &tr->ev[tr->nev - 1] : NULL;
        const char *producer = NULL;
        size_t producer_len = 0;

        /* After observe_seq(), the part's cached pair is the record's. */
        if (dedup_hdrs_status(h) == DEDUP_HDR_TRACKED && p->cache != NONE) {
                const struct dedup_name *nm =
                    tr->names[dedup_pair_at(tr, p->cache)->name];
                if (nm->len == h->producer_len &&
                    !memcmp(nm->bytes, h->producer, nm->len)) {
                        producer = nm->bytes;
                        producer_len = nm->len;
                }
        }
        if (ev && ev->kind == DEDUP_KIND_REDELIVERED && ev->part == part &&
            tr->redeliv_rec + 1 == p->counts.records &&
            ev->producer == producer && ev->first_part == first_part &&
            ev->first_offset_hi >= 0 &&
            ev->first_offset_hi + 1 == first_offset &&
            (!producer ||
             (ev->epoch == h->epoch && ev->seq_hi + 1 == h->seq))) {
                ev->offset_hi = offset;
                ev->first_offset_hi = first_offset;
                if (producer)
                        ev->seq_hi = h->seq;
                ev->count++;
                tr->redeliv_rec = p->counts.records;
                return;
        }
        ev = dedup_event_new(tr, DEDUP_KIND_REDELIVERED, part);
        if (!ev)
                return;
        if (producer) {
                ev->producer = producer;
                ev->producer_len = producer_len;
                ev->epoch = h->epoch;
                ev->seq_lo = ev->seq_hi = h->seq;
        }
        ev->offset_lo = ev->offset_hi = offset;
        ev->first_part = first_part;
        ev->first_offset = ev->first_offset_hi = first_offset;
        ev->id_len = h->id_len;
        memcpy(ev->id, h->id,
               h->id_len < DEDUP_ID_EVIDENCE_MAX ? h->id_len
                                                 : DEDUP_ID_EVIDENCE_MAX);
        ev->count = 1;
        tr->redeliv_rec = p->counts.records;
}

/*
 * The record's time: its timestamp, or the caller's clock for a record
 * without one.  A timestamp ahead of the caller's clock (a producer's
 * clock running fast) is taken as the caller's clock, so that one record
 * cannot move the records' clock into the future and expire everything.
 * The records' clock is the latest record time: idle expiry, the gap
 * grace by time and the id windows' age all run on it, so that reading
 * old records gives the verdicts they had when read live.
 */
static void record_time(struct dedup_tracker *tr, const struct dedup_hdrs *h)
{
        int64_t t = h->ts_ms > 0 ? h->ts_ms : tr->now_ms;

        if (tr->now_ms > 0 && t > tr->now_ms)
                t = tr->now_ms;
        tr->rec_ms = t;
        if (t > tr->clock_ms)
                tr->clock_ms = t;
}

void dedup_tracker_prefetch(const struct dedup_tracker *tr, uint32_t part,
                            const struct dedup_hdrs *h)
{
        const struct dedup_part *p;

        if (part >= tr->nparts)
                return;
        /* In a batch read ahead during a commit the producer's bytes
         * have gone cold (perf: the memcmp in dedup_pair_lookup took 4 %
         * of a scan's samples without this; about 1.5 % with it, on
         * other batches). */
        if (h->producer)
                __builtin_prefetch(h->producer);
        p = &tr->parts[part];
        if (h->id_hashed && h->id && p->window != NONE &&
            tr->conf.window.max_ids)
                dedup_windows_prefetch(tr->wins, p->window, &h->id_hash);
}

enum dedup_verdict dedup_tracker_observe(struct dedup_tracker *tr,
                                         uint32_t part, int64_t offset,
                                         const struct dedup_hdrs *h)
{
        struct dedup_part *p = &tr->parts[part];
        int check = h->id && p->window != NONE && tr->conf.window.max_ids;
        enum dedup_verdict v;
        struct dedup_id id;
        uint32_t first_part;
        int64_t first_offset;
        int rc;

        /* The filter block is a cache miss: start it before the sequence
         * check, which then runs while it loads. */
        if (check) {
                if (h->id_hashed)
                        id = h->id_hash;
                else
                        dedup_id_hash(h->id, h->id_len, &id);
                dedup_windows_prefetch(tr->wins, p->window, &id);
        }
        record_time(tr, h);
        /* The part is read up to this record (topic-scoped streams). */
        if (tr->rec_ms > p->read_ms)
                p->read_ms = tr->rec_ms;
        p->at_end = 0;
        v = observe_seq(tr, part, offset, h);
        /* An in-session repeat is reported once, by its sequence. */
        if (!check || v == DEDUP_V_DUPLICATE || v == DEDUP_V_FENCED)
                return v;
        p->counts.ids++;
        rc = dedup_windows_check(tr->wins, p->window, &id, part, offset,
                                 tr->rec_ms, &first_part, &first_offset);
        if (rc < 0) {
                tr->failed = 1;
                return v;
        }
        if (rc == 0 || (first_part == part && first_offset == offset))
                return v;
        p->counts.anomalies[DEDUP_KIND_REDELIVERED]++;
        redelivered_event(tr, part, h, offset, first_part, first_offset);
        return DEDUP_V_REDELIVERED;
}

/* Confirms the gaps of pair slot that pass the test (all when force). */
void dedup_gaps_sweep_pair(struct dedup_tracker *tr, uint32_t slot, int force)
{
        struct dedup_pair *pr = dedup_pair_at(tr, slot);
        const struct dedup_counts *c = &tr->parts[pr->part].counts;
        uint32_t i = 0;

        while (pr->gaps && i < pr->gaps->n) {
                const struct dedup_gap *g = &pr->gaps->g[i];
                int due = force ||
                          (tr->conf.gap_grace_records &&
                           c->records - g->opened_rec >=
                               tr->conf.gap_grace_records) ||
                          (tr->conf.gap_grace_ms &&
                           tr->clock_ms - g->opened_ms >=
                               tr->conf.gap_grace_ms);
                if (!due) {
                        i++;
                        continue;
                }
                dedup_gap_confirm(tr, pr, g);
                dedup_gap_remove_at(tr, pr, i);
                dedup_pair_dirty(tr, slot);
        }
        dedup_gaps_trim(tr, pr);
}

void dedup_gaps_sweep_all(struct dedup_tracker *tr, int force)
{
        size_t i = 0;

        while (i < tr->gap_pairs.n) {
                uint32_t slot = tr->gap_pairs.v[i];
                struct dedup_pair *pr = dedup_pair_at(tr, slot);
                if (pr->flags & PAIR_LIVE)
                        dedup_gaps_sweep_pair(tr, slot, force);
                if (!(pr->flags & PAIR_LIVE) || !pr->gaps) {
                        pr->flags &= ~PAIR_GAPLIST;
                        tr->gap_pairs.v[i] =
                            tr->gap_pairs.v[--tr->gap_pairs.n];
                        continue;
                }
                i++;
        }
}
