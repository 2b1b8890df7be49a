/*
 * commit.c - ledger_commit(): the write path.  Everything one batch
 * changed goes into one transaction (see the invariants in ../ledger.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/clock.h"
#include "internal.h"

/* Binds v, or NULL when it is negative (the engine's "unknown"). */
static int ledger_bind_opt(sqlite3_stmt *st, int i, int64_t v)
{
        return v < 0 ? sqlite3_bind_null(st, i) : sqlite3_bind_int64(st, i, v);
}

struct ledger_commit_ctx {
        struct ledger *lg;
        struct ledger_part *parts;
        size_t nparts;
        unsigned char *touched; /* [nparts]: counters may have changed */
        struct ledger_counts_delta *delta; /* [nparts]: counts.c */
        struct ledger_counts counts;       /* counts.c */
        char *errstr;
        size_t errstr_size;
};

/* Binds the columns of pairs, in the order of LEDGER_ST_PAIR_PUT and
 * LEDGER_ST_PAIR_SET. */
static int ledger_pair_bind(sqlite3_stmt *st, const struct ledger_part *p,
                            const struct dedup_pair_view *pv)
{
        uint32_t i;
        int brc;

        brc = ledger_bind_key(st, p, pv->producer, pv->producer_len);
        brc |= sqlite3_bind_int64(st, 4, pv->epoch);
        brc |= sqlite3_bind_int64(st, 5, pv->last_seq);
        brc |= sqlite3_bind_int64(st, 6, pv->last_offset);
        brc |= sqlite3_bind_int64(st, 7, pv->last_ms);
        brc |= sqlite3_bind_int64(st, 8, ledger_u64_put(pv->records));
        brc |= sqlite3_bind_int(st, 9, !!pv->rebaseline);
        for (i = 0; i < DEDUP_HISTORY_RUNS; i++) {
                brc |= sqlite3_bind_int64(st, 10 + 3 * (int)i,
                                          pv->runs[i].seq);
                brc |= sqlite3_bind_int64(st, 11 + 3 * (int)i,
                                          pv->runs[i].offset);
                brc |= sqlite3_bind_int64(st, 12 + 3 * (int)i,
                                          pv->runs[i].len);
        }
        brc |= sqlite3_bind_int64(st, 16, pv->pid < 0 ? -1 : pv->pid);
        for (i = 0; i < DEDUP_RETIRED_PIDS; i++)
                brc |= sqlite3_bind_int64(st, 17 + (int)i,
                                          pv->retired_pids[i] < 0
                                              ? -1
                                              : pv->retired_pids[i]);
        brc |= sqlite3_bind_int64(st, 19,
                                  pv->session_ms < 0 ? -1 : pv->session_ms);
        return brc;
}

/* Binds the columns open and confirmed gaps share (1-9: the pair's key,
 * the gap's position i and its range); column 10 differs and is the
 * caller's. */
static int ledger_gap_bind(sqlite3_stmt *st, const struct ledger_part *p,
                           const struct dedup_pair_view *pv, uint32_t i,
                           const struct dedup_gap *g)
{
        int brc = ledger_bind_key(st, p, pv->producer, pv->producer_len);

        brc |= sqlite3_bind_int64(st, 4, i);
        brc |= sqlite3_bind_int64(st, 5, g->epoch);
        brc |= sqlite3_bind_int64(st, 6, g->lo);
        brc |= sqlite3_bind_int64(st, 7, g->hi);
        brc |= sqlite3_bind_int64(st, 8, g->opened_offset);
        brc |= sqlite3_bind_int64(st, 9, g->opened_ms);
        return brc;
}

/* Rewrites the confirmed gaps the pair remembers. */
static int ledger_done_put(struct ledger_commit_ctx *cc,
                           const struct ledger_part *p,
                           const struct dedup_pair_view *pv)
{
        struct ledger *lg = cc->lg;
        sqlite3_stmt *st = lg->st[LEDGER_ST_DONE_DEL];
        uint32_t i;
        int brc;

        if (!pv->done_changed)
                return 0; /* most pairs: no statement at all */
        brc = ledger_bind_key(st, p, pv->producer, pv->producer_len);
        if (ledger_step_done(lg, st, brc,
                             "cannot delete ledger confirmed gaps", cc->errstr,
                             cc->errstr_size))
                return -1;
        st = lg->st[LEDGER_ST_DONE_PUT];
        for (i = 0; i < pv->ndone; i++) {
                const struct dedup_gap *g = &pv->done_gaps[i];
                brc = ledger_gap_bind(st, p, pv, i, g);
                brc |= sqlite3_bind_int(st, 10, !!g->unknown);
                if (ledger_step_done(lg, st, brc,
                                     "cannot write ledger confirmed gap",
                                     cc->errstr, cc->errstr_size))
                        return -1;
        }
        return 0;
}

/* Writes the pair's row with statement which (LEDGER_ST_PAIR_PUT or
 * LEDGER_ST_PAIR_SET); *changed receives sqlite3_changes(): 0 when the
 * insert met the row, or the update found none. */
static int ledger_pair_step(struct ledger_commit_ctx *cc,
                            enum ledger_stmt which,
                            const struct ledger_part *p,
                            const struct dedup_pair_view *pv, int *changed)
{
        sqlite3_stmt *st = cc->lg->st[which];

        if (ledger_step_done(cc->lg, st, ledger_pair_bind(st, p, pv),
                             "cannot write ledger pair", cc->errstr,
                             cc->errstr_size))
                return -1;
        *changed = sqlite3_changes(cc->lg->db);
        return 0;
}

/* dedup_pair_cb: writes one dirty pair (inserted when new, counted then;
 * else updated) and rewrites its open and confirmed gaps. */
static int ledger_pair_put(void *opaque, const struct dedup_pair_view *pv)
{
        struct ledger_commit_ctx *cc = opaque;
        struct ledger *lg = cc->lg;
        const struct ledger_part *p;
        sqlite3_stmt *st;
        uint32_t i;
        int brc, changed, inserted;

        if (pv->part >= cc->nparts || !pv->producer ||
            pv->producer_len > DEDUP_PRODUCER_MAX) {
                snprintf(cc->errstr, cc->errstr_size,
                         "cannot write pair of part %u: not among the %zu "
                         "parts, or bad producer",
                         pv->part, cc->nparts);
                return -1;
        }
        p = &cc->parts[pv->part];
        cc->touched[pv->part] = 1;

        /*
         * One statement for most pairs: the tracker's hint says which of
         * insert and update will find its way (a pair it restored or saw
         * committed is in the ledger).  The hint only picks the first
         * try; sqlite3_changes() says what happened, so the counts stay
         * exact when it is wrong.
         */
        if (pv->stored) {
                if (ledger_pair_step(cc, LEDGER_ST_PAIR_SET, p, pv, &changed))
                        return -1;
                inserted = !changed;
                if (inserted &&
                    ledger_pair_step(cc, LEDGER_ST_PAIR_PUT, p, pv, &changed))
                        return -1;
        } else {
                if (ledger_pair_step(cc, LEDGER_ST_PAIR_PUT, p, pv, &changed))
                        return -1;
                inserted = changed;
                if (!inserted &&
                    ledger_pair_step(cc, LEDGER_ST_PAIR_SET, p, pv, &changed))
                        return -1;
        }
        if (changed != 1) {
                snprintf(cc->errstr, cc->errstr_size,
                         "cannot write ledger pair of part %u: %d rows "
                         "changed",
                         pv->part, changed);
                return -1;
        }
        if (inserted &&
            ledger_counts_pair(&cc->counts, p, pv->producer, pv->producer_len,
                               1, &cc->delta[pv->part], cc->errstr,
                               cc->errstr_size))
                return -1;

        /* A pair just inserted has no open gaps stored: they are written
         * and deleted only together with their pair's row (here,
         * ledger_pair_del(), incarnate.c). */
        if (!inserted) {
                st = lg->st[LEDGER_ST_GAPS_DEL];
                brc = ledger_bind_key(st, p, pv->producer, pv->producer_len);
                if (ledger_step_done(lg, st, brc,
                                     "cannot delete ledger open gaps",
                                     cc->errstr, cc->errstr_size))
                        return -1;
                cc->delta[pv->part].open_gaps -= sqlite3_changes(lg->db);
        }

        st = lg->st[LEDGER_ST_GAP_PUT];
        for (i = 0; i < pv->ngaps; i++) {
                const struct dedup_gap *g = &pv->gaps[i];
                brc = ledger_gap_bind(st, p, pv, i, g);
                brc |= sqlite3_bind_int64(st, 10,
                                          ledger_u64_put(g->opened_rec));
                if (ledger_step_done(lg, st, brc,
                                     "cannot write ledger open gap",
                                     cc->errstr, cc->errstr_size))
                        return -1;
                cc->delta[pv->part].open_gaps++;
        }
        return ledger_done_put(cc, p, pv);
}

/* Deletes an expired pair and its open gaps. */
static int ledger_pair_del(struct ledger_commit_ctx *cc,
                           const struct dedup_event *ev)
{
        struct ledger *lg = cc->lg;
        const struct ledger_part *p = &cc->parts[ev->part];
        sqlite3_stmt *st;
        int brc;

        st = lg->st[LEDGER_ST_PAIR_DEL];
        brc = ledger_bind_key(st, p, ev->producer, ev->producer_len);
        if (ledger_step_done(lg, st, brc, "cannot delete expired ledger pair",
                             cc->errstr, cc->errstr_size))
                return -1;
        if (sqlite3_changes(lg->db) == 1 &&
            ledger_counts_pair(&cc->counts, p, ev->producer, ev->producer_len,
                               0, &cc->delta[ev->part], cc->errstr,
                               cc->errstr_size))
                return -1;
        st = lg->st[LEDGER_ST_GAPS_DEL];
        brc = ledger_bind_key(st, p, ev->producer, ev->producer_len);
        if (ledger_step_done(lg, st, brc,
                             "cannot delete expired ledger open gaps",
                             cc->errstr, cc->errstr_size))
                return -1;
        cc->delta[ev->part].open_gaps -= sqlite3_changes(lg->db);
        st = lg->st[LEDGER_ST_DONE_DEL];
        brc = ledger_bind_key(st, p, ev->producer, ev->producer_len);
        return ledger_step_done(lg, st, brc,
                                "cannot delete expired ledger confirmed gaps",
                                cc->errstr, cc->errstr_size);
}

/* Appends one anomaly row; ev->producer may be NULL. */
static int ledger_anomaly_put(struct ledger_commit_ctx *cc,
                              const struct ledger_part *p, const char *kind,
                              const struct dedup_event *ev)
{
        struct ledger *lg = cc->lg;
        sqlite3_stmt *st = lg->st[LEDGER_ST_ANOMALY_PUT];
        int brc;

        brc = ledger_bind_key(st, p, NULL, 0);
        if (ev->producer)
                brc |= sqlite3_bind_text(st, 3, ev->producer,
                                         (int)ev->producer_len, SQLITE_STATIC);
        else
                brc |= sqlite3_bind_null(st, 3);
        brc |= sqlite3_bind_text(st, 4, kind, -1, SQLITE_STATIC);
        brc |= ledger_bind_opt(st, 5, ev->epoch);
        brc |= ledger_bind_opt(st, 6, ev->seq_lo);
        brc |= ledger_bind_opt(st, 7, ev->seq_hi);
        brc |= sqlite3_bind_int64(st, 8, ev->offset_lo);
        brc |= sqlite3_bind_int64(st, 9, ev->offset_hi);
        brc |= ledger_bind_opt(st, 10, ev->first_offset);
        brc |= sqlite3_bind_int64(st, 11, ledger_u64_put(ev->count));
        brc |= sqlite3_bind_int64(st, 12, ev->when_ms);
        brc |= sqlite3_bind_int64(st, 13, ev->malformed_bits);
        if (ev->kind == DEDUP_KIND_REDELIVERED) {
                size_t stored = ev->id_len < DEDUP_ID_EVIDENCE_MAX
                                    ? ev->id_len
                                    : DEDUP_ID_EVIDENCE_MAX;
                brc |=
                    ledger_bind_opt(st, 14,
                                    ev->first_part < cc->nparts
                                        ? cc->parts[ev->first_part].partition
                                        : -1);
                brc |= ledger_bind_opt(st, 15, ev->first_offset_hi);
                brc |= sqlite3_bind_blob(st, 16,
                                         stored ? (const void *)ev->id : "",
                                         (int)stored, SQLITE_STATIC);
                brc |= sqlite3_bind_int64(st, 17, ledger_u64_put(ev->id_len));
        } else if (ev->kind == DEDUP_KIND_TORN) {
                /* Where the transaction's manifest is (the manifest
                 * topic's partition and first_offset); NULL: none seen. */
                brc |=
                    ledger_bind_opt(st, 14,
                                    ev->first_part < cc->nparts
                                        ? cc->parts[ev->first_part].partition
                                        : -1);
                brc |= sqlite3_bind_null(st, 15);
                brc |= sqlite3_bind_null(st, 16);
                brc |= sqlite3_bind_null(st, 17);
        } else {
                /* fenced: the first record of the producer's new session
                 * is at first_offset of first_partition; a duplicate of a
                 * topic-scoped stream may have its first copy on another
                 * partition (the same one: NULL, as before). */
                brc |=
                    ledger_bind_opt(st, 14,
                                    (ev->kind == DEDUP_KIND_FENCED ||
                                     (ev->kind == DEDUP_KIND_DUPLICATE &&
                                      ev->first_part != ev->part)) &&
                                            ev->first_offset >= 0 &&
                                            ev->first_part < cc->nparts
                                        ? cc->parts[ev->first_part].partition
                                        : -1);
                brc |= sqlite3_bind_null(st, 15);
                brc |= sqlite3_bind_null(st, 16);
                brc |= sqlite3_bind_null(st, 17);
        }
        brc |= sqlite3_bind_null(st, 18); /* reason: only incarnate.c */
        return ledger_step_done(lg, st, brc, "cannot write ledger anomaly",
                                cc->errstr, cc->errstr_size);
}

/* Events of the batch, oldest first: expiries delete, the rest append. */
static int ledger_events_put(struct ledger_commit_ctx *cc,
                             struct dedup_tracker *tr)
{
        const struct dedup_event *evs, *ev;
        const char *kind;
        size_t n, i;

        evs = dedup_tracker_events(tr, &n);
        for (i = 0; i < n; i++) {
                ev = &evs[i];
                kind = dedup_kind_name(ev->kind);
                if (ev->part >= cc->nparts || !kind) {
                        snprintf(cc->errstr, cc->errstr_size,
                                 "cannot write event of kind %d for part %u: "
                                 "unknown kind or part",
                                 (int)ev->kind, ev->part);
                        return -1;
                }
                cc->touched[ev->part] = 1;
                if (ev->kind == DEDUP_KIND_EXPIRED) {
                        if (!ev->producer) {
                                snprintf(cc->errstr, cc->errstr_size,
                                         "cannot delete expired pair of part "
                                         "%u: no producer",
                                         ev->part);
                                return -1;
                        }
                        if (ledger_pair_del(cc, ev))
                                return -1;
                } else if (ledger_anomaly_put(cc, &cc->parts[ev->part], kind,
                                              ev)) {
                        return -1;
                }
        }
        return 0;
}

/* Stores a coverage gap and, if it is new, its anomaly row. */
static int ledger_coverage_put(struct ledger_commit_ctx *cc,
                               const struct ledger_part *p, int64_t now_ms)
{
        struct ledger *lg = cc->lg;
        sqlite3_stmt *st = lg->st[LEDGER_ST_COVERAGE_PUT];
        struct dedup_event ev;
        int brc;

        if (p->coverage_hi < p->coverage_lo) {
                snprintf(cc->errstr, cc->errstr_size,
                         "bad coverage gap for %s [%d]: offsets %lld..%lld",
                         p->topic, (int)p->partition,
                         (long long)p->coverage_lo, (long long)p->coverage_hi);
                return -1;
        }
        brc = ledger_bind_key(st, p, NULL, 0);
        brc |= sqlite3_bind_int64(st, 3, p->coverage_lo);
        brc |= sqlite3_bind_int64(st, 4, p->coverage_hi);
        brc |= sqlite3_bind_int64(st, 5, now_ms);
        if (ledger_step_done(lg, st, brc, "cannot write ledger coverage gap",
                             cc->errstr, cc->errstr_size))
                return -1;
        if (sqlite3_changes(lg->db) == 0)
                return 0; /* already stored */
        cc->delta[p->part].coverage_gaps++;
        /* Clamped at INT64_MAX, as the counts_topic column. */
        {
                int64_t *r = &cc->delta[p->part].coverage_records;
                int64_t span = p->coverage_hi - p->coverage_lo;
                *r = span >= INT64_MAX - 1 || *r > INT64_MAX - 1 - span
                         ? INT64_MAX
                         : *r + span + 1;
        }

        memset(&ev, 0, sizeof(ev));
        ev.part = p->part;
        ev.epoch = -1;
        ev.seq_lo = ev.seq_hi = -1;
        ev.offset_lo = p->coverage_lo;
        ev.offset_hi = p->coverage_hi;
        ev.first_offset = ev.first_offset_hi = -1;
        /* Differences, not sums: offsets may be near INT64_MAX. */
        ev.count = (uint64_t)(p->coverage_hi - p->coverage_lo) + 1;
        ev.when_ms = now_ms;
        return ledger_anomaly_put(cc, p, "coverage", &ev);
}

/* dedup_gen_cb: writes a generation created or changed by the batch. */
static int ledger_gen_put(void *opaque, const struct dedup_gen_view *gv)
{
        struct ledger_commit_ctx *cc = opaque;
        struct ledger *lg = cc->lg;
        sqlite3_stmt *st = lg->st[LEDGER_ST_GEN_PUT];
        int brc;

        if (gv->window >= lg->nwin || gv->gen > INT64_MAX) {
                snprintf(cc->errstr, cc->errstr_size,
                         "cannot write id generation %llu: unknown window %u",
                         (unsigned long long)gv->gen, gv->window);
                return -1;
        }
        brc = sqlite3_bind_int64(st, 1, (int64_t)gv->gen);
        brc |= sqlite3_bind_text(st, 2, lg->win[gv->window].topic, -1,
                                 SQLITE_STATIC);
        brc |= sqlite3_bind_text(st, 3, lg->dedup_key, -1, SQLITE_STATIC);
        brc |= sqlite3_bind_int64(st, 4, gv->first_ms);
        brc |= sqlite3_bind_int64(st, 5, gv->last_ms);
        brc |= sqlite3_bind_int64(st, 6, ledger_u64_put(gv->ids));
        brc |= sqlite3_bind_int(st, 7, !!gv->closed);
        return ledger_step_done(lg, st, brc,
                                "cannot write ledger id generation",
                                cc->errstr, cc->errstr_size);
}

/* Makes room for a blob of size bytes in lg->ebuf. */
static int ledger_ebuf(struct ledger *lg, size_t size)
{
        unsigned char *b;

        if (size > (size_t)INT32_MAX)
                return -1;
        if (size <= lg->ebuf_cap)
                return 0;
        b = realloc(lg->ebuf, size);
        if (!b)
                return -1;
        lg->ebuf = b;
        lg->ebuf_cap = size;
        return 0;
}

/* The partition of each of rows[0..n) (checked: all of parts[]); whether
 * they all fit a narrow blob. */
static int ledger_rows_narrow(struct ledger_commit_ctx *cc,
                              const struct dedup_id_row *rows, size_t n,
                              int *narrow)
{
        size_t i;

        *narrow = 1;
        for (i = 0; i < n; i++) {
                if (rows[i].part >= cc->nparts) {
                        snprintf(cc->errstr, cc->errstr_size,
                                 "cannot write id of part %u: not among the "
                                 "%zu parts",
                                 rows[i].part, cc->nparts);
                        return -1;
                }
                if (!ledger_entry_narrow(cc->parts[rows[i].part].partition,
                                         rows[i].offset))
                        *narrow = 0;
        }
        return 0;
}

/* Packs rows[0..n) (n > 0, checked by ledger_rows_narrow()) into
 * lg->ebuf: *size bytes. */
static int ledger_rows_pack(struct ledger_commit_ctx *cc,
                            const struct dedup_id_row *rows, size_t n,
                            int narrow, size_t *size)
{
        size_t i;

        *size = ledger_entries_size(n, narrow);
        if (ledger_ebuf(cc->lg, *size)) {
                snprintf(cc->errstr, cc->errstr_size,
                         "cannot write ledger ids: %s", strerror(ENOMEM));
                return -1;
        }
        for (i = 0; i < n; i++)
                ledger_entries_put(cc->lg->ebuf, narrow, i, &rows[i].id,
                                   cc->parts[rows[i].part].partition,
                                   rows[i].offset);
        return 0;
}

/* dedup_gen_rows_cb: a closed generation's ids, sorted, into a file of
 * their own (idfiles.c), durable before this transaction names it; its
 * batches go. */
static int ledger_gen_closed(void *opaque, const struct dedup_gen_view *gv,
                             const struct dedup_id_row *rows, size_t n)
{
        struct ledger_commit_ctx *cc = opaque;
        struct ledger *lg = cc->lg;
        sqlite3_stmt *st = lg->st[LEDGER_ST_GEN_FILE];
        size_t size = 0;
        int brc, narrow;

        if (n && (ledger_rows_narrow(cc, rows, n, &narrow) ||
                  ledger_rows_pack(cc, rows, n, narrow, &size)))
                return -1;
        if (ledger_idfile_write(lg, gv->gen, lg->ebuf, size, cc->errstr,
                                cc->errstr_size))
                return -1;
        brc = sqlite3_bind_int64(st, 1, (int64_t)gv->gen);
        brc |= sqlite3_bind_int64(st, 2, (int64_t)size);
        if (ledger_step_done(lg, st, brc, "cannot write ledger id generation",
                             cc->errstr, cc->errstr_size))
                return -1;
        return ledger_gen_step(lg, LEDGER_ST_GEN_BATCHES_DEL, gv->gen,
                               "cannot delete ledger ids", cc->errstr,
                               cc->errstr_size);
}

/*
 * The batch's id window changes: generations written, new ids (one packed
 * row per open generation they went to), closed generations sorted into
 * files of their own (their new ids with them), dropped ones deleted.
 */
static int ledger_windows_put(struct ledger_commit_ctx *cc,
                              struct dedup_tracker *tr)
{
        struct ledger *lg = cc->lg;
        sqlite3_stmt *st = lg->st[LEDGER_ST_BATCH_PUT];
        const struct dedup_id_row *rows;
        const uint64_t *dropped;
        size_t n, i, j, size;
        int brc, rc, narrow;

        if (dedup_tracker_gens_dirty_foreach(tr, ledger_gen_put, cc))
                return -1;
        rows = dedup_tracker_ids_new(tr, &n);
        for (i = 0; i < n; i = j) {
                for (j = i + 1; j < n && rows[j].gen == rows[i].gen; j++)
                        ;
                /* A generation closed by this batch gets its ids sorted
                 * into its file below; a dropped one is deleted. */
                if (!dedup_tracker_gen_open(tr, rows[i].window, rows[i].gen))
                        continue;
                if (ledger_rows_narrow(cc, rows + i, j - i, &narrow) ||
                    ledger_rows_pack(cc, rows + i, j - i, narrow, &size))
                        return -1;
                brc = sqlite3_bind_int64(st, 1, (int64_t)rows[i].gen);
                brc |= sqlite3_bind_int64(st, 2, ++lg->batch_seq);
                brc |= sqlite3_bind_blob(st, 3, lg->ebuf, (int)size,
                                         SQLITE_STATIC);
                if (ledger_step_done(lg, st, brc, "cannot write ledger ids",
                                     cc->errstr, cc->errstr_size))
                        return -1;
        }
        cc->errstr[0] = '\0';
        rc = dedup_tracker_gens_closed_foreach(tr, ledger_gen_closed, cc);
        if (rc) {
                if (!cc->errstr[0])
                        snprintf(cc->errstr, cc->errstr_size,
                                 "cannot sort ledger ids: %s",
                                 strerror(ENOMEM));
                return -1;
        }
        dropped = dedup_tracker_gens_dropped(tr, &n);
        for (i = 0; i < n; i++)
                if (ledger_gen_del(lg, dropped[i], cc->errstr,
                                   cc->errstr_size))
                        return -1;
        return 0;
}

/* Writes the row of part p: the caller's offset, the tracker's counters. */
static int ledger_part_put(struct ledger_commit_ctx *cc,
                           struct dedup_tracker *tr,
                           const struct ledger_part *p, int64_t now_ms)
{
        struct ledger *lg = cc->lg;
        sqlite3_stmt *st = lg->st[LEDGER_ST_PART_PUT];
        const struct dedup_counts *c = dedup_tracker_part_counts(tr, p->part);
        int brc, k;

        if (!c) {
                snprintf(cc->errstr, cc->errstr_size,
                         "cannot write %s [%d]: part %u is not in the tracker",
                         p->topic, (int)p->partition, p->part);
                return -1;
        }
        brc = ledger_bind_key(st, p, NULL, 0);
        brc |= sqlite3_bind_int64(st, 3, p->next_offset);
        brc |= sqlite3_bind_int(st, 4,
                                !!dedup_tracker_part_from_log_start(tr,
                                                                    p->part));
        brc |= sqlite3_bind_int64(st, 5, ledger_u64_put(c->records));
        brc |= sqlite3_bind_int64(st, 6, ledger_u64_put(c->untracked));
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                brc |= sqlite3_bind_int64(st, 7 + k,
                                          ledger_u64_put(c->anomalies[k]));
        brc |= sqlite3_bind_int64(st, 7 + DEDUP_KIND__ANOMALY_CNT,
                                  ledger_u64_put(c->missing));
        brc |= sqlite3_bind_int64(st, 8 + DEDUP_KIND__ANOMALY_CNT,
                                  ledger_u64_put(c->ids));
        brc |= sqlite3_bind_int64(st, 9 + DEDUP_KIND__ANOMALY_CNT,
                                  ledger_u64_put(c->recovered));
        brc |= sqlite3_bind_int64(st, 10 + DEDUP_KIND__ANOMALY_CNT,
                                  ledger_u64_put(c->unknown));
        brc |= sqlite3_bind_int64(st, 11 + DEDUP_KIND__ANOMALY_CNT, now_ms);
        /* The last audited record, checked when the audit resumes
         * (fingerprint.h); the hash is stored as two signed integers. */
        brc |= sqlite3_bind_int64(st, 12 + DEDUP_KIND__ANOMALY_CNT,
                                  p->fp.offset);
        brc |= sqlite3_bind_int64(st, 13 + DEDUP_KIND__ANOMALY_CNT,
                                  p->fp.ts_ms);
        brc |= sqlite3_bind_int64(st, 14 + DEDUP_KIND__ANOMALY_CNT,
                                  (int64_t)p->fp.lo);
        brc |= sqlite3_bind_int64(st, 15 + DEDUP_KIND__ANOMALY_CNT,
                                  (int64_t)p->fp.hi);
        return ledger_step_done(lg, st, brc, "cannot write ledger partition",
                                cc->errstr, cc->errstr_size);
}

int ledger_commit(struct ledger *lg, struct dedup_tracker *tr,
                  struct ledger_part *parts, size_t nparts, int64_t *commit_us,
                  char *errstr, size_t errstr_size)
{
        struct ledger_commit_ctx cc = {
            .lg = lg,
            .parts = parts,
            .nparts = nparts,
            .errstr = errstr,
            .errstr_size = errstr_size,
        };
        int64_t t0 = clock_mono_us(), now_ms = clock_wall_ms();
        int in_txn = 0, rc = -1;
        size_t i;

        if (lg->readonly) {
                snprintf(errstr, errstr_size,
                         "cannot commit to a read-only ledger handle");
                goto out;
        }
        if (dedup_tracker_failed(tr)) {
                if (lg->lookup_failed)
                        snprintf(errstr, errstr_size,
                                 "cannot commit: %s; the tracker's state is "
                                 "not trustworthy",
                                 lg->lookup_err);
                else
                        snprintf(errstr, errstr_size,
                                 "cannot commit: the tracker ran out of "
                                 "memory and its state is not trustworthy");
                goto out;
        }
        if (ledger_parts_check(parts, nparts, errstr, errstr_size))
                goto out;
        cc.touched = calloc(nparts ? nparts : 1, 1);
        cc.delta = calloc(nparts ? nparts : 1, sizeof(*cc.delta));
        if (!cc.touched || !cc.delta) {
                snprintf(errstr, errstr_size, "cannot commit: %s",
                         strerror(ENOMEM));
                goto out;
        }
        if (ledger_txn(lg, LEDGER_ST_BEGIN, "cannot begin ledger transaction",
                       errstr, errstr_size))
                goto out;
        in_txn = 1;
        /*
         * Events first, in order: a pair that expired and came back in
         * the same batch is deleted, then written again as it is now.
         */
        if (ledger_events_put(&cc, tr))
                goto out;
        /* In key order: each B-tree page is read and dirtied once. */
        dedup_tracker_dirty_sort(tr);
        if (dedup_tracker_dirty_foreach(tr, ledger_pair_put, &cc) ||
            ledger_windows_put(&cc, tr) ||
            ledger_txns_put(lg, tr, parts, nparts, errstr, errstr_size) ||
            ledger_topics_put(lg, tr, parts, nparts, errstr, errstr_size))
                goto out;
        /*
         * A part's counters change without the caller marking it dirty
         * when dedup_tracker_tick() confirms or expires: write every part
         * that a pair or event touched as well.
         */
        for (i = 0; i < nparts; i++) {
                if (!parts[i].dirty && !cc.touched[i] &&
                    parts[i].coverage_lo < 0)
                        continue;
                if (ledger_part_put(&cc, tr, &parts[i], now_ms))
                        goto out;
                if (parts[i].coverage_lo >= 0 &&
                    ledger_coverage_put(&cc, &parts[i], now_ms))
                        goto out;
        }
        if (ledger_counts_flush(lg, parts, nparts, cc.delta, &cc.counts,
                                errstr, errstr_size))
                goto out;
        /* What a truncation of the log would take back (truncate.c). */
        if (ledger_trunc_write(lg, parts, nparts, now_ms, errstr, errstr_size))
                goto out;
        /* The flow audit's batch, when one is attached (flow.c). */
        if (lg->flow && ledger_flow_write(lg, now_ms, errstr, errstr_size))
                goto out;
        if (lg->hook)
                lg->hook(lg->hook_opaque);
        if (ledger_txn(lg, LEDGER_ST_COMMIT,
                       "cannot commit ledger transaction", errstr,
                       errstr_size))
                goto out;
        in_txn = 0;

        dedup_tracker_dirty_clear(tr);
        dedup_tracker_events_clear(tr);
        ledger_flow_committed(lg);
        ledger_trunc_committed(lg);
        for (i = 0; i < nparts; i++) {
                parts[i].dirty = 0;
                parts[i].coverage_lo = parts[i].coverage_hi = -1;
        }
        rc = 0;
out:
        if (in_txn)
                ledger_rollback(lg);
        free(cc.touched);
        free(cc.delta);
        ledger_counts_free(&cc.counts);
        if (commit_us)
                *commit_us = clock_mono_us() - t0;
        return rc;
}
