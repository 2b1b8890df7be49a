/*
 * load.c - ledger_load(): the stored partitions, pairs and open gaps
 * back into a tracker, in one read snapshot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A growing array of gaps, reused from pair to pair. */
struct ledger_gapbuf {
        struct dedup_gap *g;
        size_t cap;
};

/* Reads the gaps (open, or confirmed with done) of the pair in pv, oldest
 * first, into buf, and points pv at them. */
static int ledger_gaps_load(struct ledger *lg, sqlite3_stmt *st,
                            const struct ledger_part *p,
                            struct dedup_pair_view *pv, int done,
                            struct ledger_gapbuf *buf, char *errstr,
                            size_t errstr_size)
{
        struct dedup_gap **gaps = &buf->g;
        size_t *cap = &buf->cap;
        size_t n = 0;
        int src, rc = -1;

        if (ledger_bind_key(st, p, pv->producer, pv->producer_len) !=
            SQLITE_OK) {
                ledger_err(lg, "cannot read ledger open gaps", errstr,
                           errstr_size);
                goto out;
        }
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
                struct dedup_gap *g;
                int64_t epoch = sqlite3_column_int64(st, 0);
                if (n == *cap) {
                        size_t ncap = *cap ? *cap * 2 : 16;
                        struct dedup_gap *ng = realloc(*gaps,
                                                       ncap * sizeof(*ng));
                        if (!ng) {
                                snprintf(errstr, errstr_size,
                                         "cannot read ledger open gaps: %s",
                                         strerror(ENOMEM));
                                goto out;
                        }
                        *gaps = ng;
                        *cap = ncap;
                }
                if (epoch < 0 || epoch > DEDUP_EPOCH_MAX) {
                        snprintf(errstr, errstr_size,
                                 "bad %s gap in ledger for %s [%d]: epoch "
                                 "%lld",
                                 done ? "confirmed" : "open", p->topic,
                                 (int)p->partition, (long long)epoch);
                        goto out;
                }
                g = &(*gaps)[n++];
                g->epoch = (int32_t)epoch;
                g->lo = sqlite3_column_int64(st, 1);
                g->hi = sqlite3_column_int64(st, 2);
                g->opened_offset = sqlite3_column_int64(st, 3);
                g->opened_ms = sqlite3_column_int64(st, 4);
                g->opened_rec = ledger_u64_get(st, 5);
                g->unknown = sqlite3_column_int64(st, 6) != 0;
        }
        if (src != SQLITE_DONE) {
                ledger_err(lg, "cannot read ledger open gaps", errstr,
                           errstr_size);
                goto out;
        }
        if (n > UINT32_MAX) {
                snprintf(errstr, errstr_size,
                         "too many open gaps in ledger for %s [%d]", p->topic,
                         (int)p->partition);
                goto out;
        }
        if (done) {
                pv->done_gaps = *gaps;
                pv->ndone = (uint32_t)n;
        } else {
                pv->gaps = *gaps;
                pv->ngaps = (uint32_t)n;
        }
        rc = 0;
out:
        sqlite3_reset(st);
        return rc;
}

/* Restores every pair of part p (with its gaps) into tr. */
static int ledger_pairs_load(struct ledger *lg, struct dedup_tracker *tr,
                             sqlite3_stmt *pair_st, sqlite3_stmt *gap_st,
                             sqlite3_stmt *done_st,
                             const struct ledger_part *p,
                             struct ledger_gapbuf *bufs, char *errstr,
                             size_t errstr_size)
{
        struct dedup_pair_view pv;
        int src, i, rc = -1;

        if (ledger_bind_key(pair_st, p, NULL, 0) != SQLITE_OK) {
                ledger_err(lg, "cannot read ledger pairs", errstr,
                           errstr_size);
                goto out;
        }
        while ((src = sqlite3_step(pair_st)) == SQLITE_ROW) {
                int64_t epoch = sqlite3_column_int64(pair_st, 1);
                memset(&pv, 0, sizeof(pv));
                pv.part = p->part;
                pv.producer = (const char *)sqlite3_column_text(pair_st, 0);
                pv.producer_len = (size_t)sqlite3_column_bytes(pair_st, 0);
                pv.epoch = (int32_t)epoch;
                pv.last_seq = sqlite3_column_int64(pair_st, 2);
                pv.last_offset = sqlite3_column_int64(pair_st, 3);
                pv.last_ms = sqlite3_column_int64(pair_st, 4);
                pv.records = ledger_u64_get(pair_st, 5);
                pv.rebaseline = sqlite3_column_int64(pair_st, 6) != 0;
                for (i = 0; i < DEDUP_HISTORY_RUNS; i++) {
                        int64_t len = sqlite3_column_int64(pair_st, 9 + 3 * i);
                        pv.runs[i].seq = sqlite3_column_int64(pair_st,
                                                              7 + 3 * i);
                        pv.runs[i].offset = sqlite3_column_int64(pair_st,
                                                                 8 + 3 * i);
                        pv.runs[i].len = len < 0 || len > UINT32_MAX
                                             ? 0
                                             : (uint32_t)len;
                }
                pv.pid = sqlite3_column_int64(pair_st, 13);
                if (pv.pid < 0)
                        pv.pid = -1;
                for (i = 0; i < DEDUP_RETIRED_PIDS; i++) {
                        pv.retired_pids[i] = sqlite3_column_int64(pair_st,
                                                                  14 + i);
                        if (pv.retired_pids[i] < 0)
                                pv.retired_pids[i] = -1;
                }
                pv.session_ms = sqlite3_column_int64(pair_st, 16);
                if (pv.session_ms < 0)
                        pv.session_ms = -1;
                if (!pv.producer || epoch < 0 || epoch > DEDUP_EPOCH_MAX) {
                        snprintf(errstr, errstr_size,
                                 "bad pair in ledger for %s [%d]", p->topic,
                                 (int)p->partition);
                        goto out;
                }
                if (ledger_gaps_load(lg, gap_st, p, &pv, 0, &bufs[0], errstr,
                                     errstr_size) ||
                    ledger_gaps_load(lg, done_st, p, &pv, 1, &bufs[1], errstr,
                                     errstr_size))
                        goto out;
                if (dedup_tracker_restore(tr, &pv)) {
                        snprintf(errstr, errstr_size,
                                 "cannot restore a pair of %s [%d] from the "
                                 "ledger: invalid state or out of memory",
                                 p->topic, (int)p->partition);
                        goto out;
                }
        }
        if (src != SQLITE_DONE) {
                ledger_err(lg, "cannot read ledger pairs", errstr,
                           errstr_size);
                goto out;
        }
        rc = 0;
out:
        sqlite3_reset(pair_st);
        return rc;
}

/* Loads part p's offsets and counters (if stored), then its pairs. */
static int ledger_part_load(struct ledger *lg, struct dedup_tracker *tr,
                            sqlite3_stmt *part_st, struct ledger_part *p,
                            char *errstr, size_t errstr_size)
{
        struct dedup_counts *c;
        int src, rc = -1;

        if (ledger_bind_key(part_st, p, NULL, 0) != SQLITE_OK) {
                ledger_err(lg, "cannot read ledger partitions", errstr,
                           errstr_size);
                goto out;
        }
        src = sqlite3_step(part_st);
        if (src == SQLITE_DONE) {
                rc = 0; /* never audited */
                goto out;
        }
        if (src != SQLITE_ROW) {
                ledger_err(lg, "cannot read ledger partitions", errstr,
                           errstr_size);
                goto out;
        }
        p->next_offset = sqlite3_column_int64(part_st, 0);
        p->from_log_start = sqlite3_column_int64(part_st, 1) != 0;
        if (dedup_tracker_part_add(tr, p->part, p->from_log_start) ||
            !(c = dedup_tracker_part_counts(tr, p->part))) {
                snprintf(errstr, errstr_size,
                         "cannot add %s [%d] to the tracker: %s", p->topic,
                         (int)p->partition, strerror(ENOMEM));
                goto out;
        }
        ledger_counts_get(part_st, 2, c);
        p->fp.offset = sqlite3_column_int64(part_st, 2 + LEDGER_COUNT_NCOLS);
        p->fp.ts_ms = sqlite3_column_int64(part_st, 3 + LEDGER_COUNT_NCOLS);
        p->fp.lo = (uint64_t)sqlite3_column_int64(part_st,
                                                  4 + LEDGER_COUNT_NCOLS);
        p->fp.hi = (uint64_t)sqlite3_column_int64(part_st,
                                                  5 + LEDGER_COUNT_NCOLS);
        rc = 0;
out:
        sqlite3_reset(part_st);
        return rc;
}

int ledger_load(struct ledger *lg, struct dedup_tracker *tr,
                struct ledger_part *parts, size_t nparts, char *errstr,
                size_t errstr_size)
{
        sqlite3_stmt *part_st = NULL, *pair_st = NULL, *gap_st = NULL;
        sqlite3_stmt *done_st = NULL;
        struct ledger_gapbuf bufs[2] = {{NULL, 0}, {NULL, 0}};
        size_t i;
        int rc = -1;

        if (ledger_parts_check(parts, nparts, errstr, errstr_size) ||
            ledger_prepare(
                lg,
                "SELECT next_offset, from_log_start, " LEDGER_COUNT_COLS
                ", fp_offset, fp_ts, fp_lo, "
                "fp_hi FROM partitions "
                "WHERE topic = ?1 AND partition = ?2",
                &part_st, errstr, errstr_size) ||
            ledger_prepare(lg,
                           "SELECT producer, epoch, last_seq, last_offset, "
                           "last_ms, records, rebaseline, run0_seq, "
                           "run0_offset, run0_len, run1_seq, run1_offset, "
                           "run1_len, pid, retired_pid0, retired_pid1, "
                           "session_ms FROM pairs "
                           "WHERE topic = ?1 AND partition = ?2",
                           &pair_st, errstr, errstr_size) ||
            ledger_prepare(lg,
                           "SELECT epoch, lo, hi, opened_offset, opened_ms, "
                           "opened_rec, 0 FROM open_gaps WHERE topic = ?1 AND "
                           "partition = ?2 AND producer = ?3 ORDER BY ord",
                           &gap_st, errstr, errstr_size) ||
            ledger_prepare(
                lg,
                "SELECT epoch, lo, hi, opened_offset, opened_ms, "
                "0, unknown FROM confirmed_gaps WHERE topic = ?1 AND "
                "partition = ?2 AND producer = ?3 ORDER BY ord",
                &done_st, errstr, errstr_size))
                goto out;
        /* One snapshot for all parts. */
        if (ledger_exec(lg, "BEGIN", "cannot read ledger", errstr,
                        errstr_size))
                goto out;
        for (i = 0; i < nparts; i++) {
                if (ledger_part_load(lg, tr, part_st, &parts[i], errstr,
                                     errstr_size) ||
                    ledger_pairs_load(lg, tr, pair_st, gap_st, done_st,
                                      &parts[i], bufs, errstr, errstr_size))
                        goto out;
        }
        if (ledger_topics_load(lg, tr, parts, nparts, errstr, errstr_size))
                goto out;
        if (ledger_exec(lg, "COMMIT", "cannot read ledger", errstr,
                        errstr_size))
                goto out;
        rc = 0;
out:
        ledger_rollback(lg);
        sqlite3_finalize(part_st);
        sqlite3_finalize(pair_st);
        sqlite3_finalize(gap_st);
        sqlite3_finalize(done_st);
        free(bufs[0].g);
        free(bufs[1].g);
        return rc;
}
