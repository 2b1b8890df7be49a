/*
 * test_engine_cases.c - the engine on exact record sequences, one table
 * per rule of issue 14: the records' time (item 6), new producer ids and
 * transactions v2 (item 3), late records after a confirmed gap (item 4),
 * coverage gaps (item 5), zombies on partitions the new session has not
 * written yet (item 8).  Each case is a list of steps (records with their
 * headers and timestamp, retention holes, ticks, the end of a scan) with
 * each record's expected verdict, then the counters of part 0 and some
 * events that must be there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../dedup/dedup.h"

enum op {
        END = 0,
        REC,  /* a record */
        HOLE, /* retention deleted unread records of part (a coverage gap) */
        TICK, /* dedup_tracker_tick() */
        CONFIRM, /* dedup_tracker_confirm_all(): the end of a scan */
        ADVANCE, /* dedup_tracker_clock_advance() to the step's ts: the
                    caller caught up with the log */
};

#define NOPID (-1)
#define NOTS 0

struct step {
        enum op op;
        uint32_t part;
        const char *producer;
        int64_t pid; /* NOPID: no eos.pid */
        int32_t epoch;
        int64_t seq;
        int64_t ts;         /* record timestamp, NOTS: none */
        int32_t prev_epoch; /* -1: no eos.prev_epoch / eos.prev_seq */
        int64_t prev_seq;
        enum dedup_verdict want;
};

/* An event that must have been reported (kind, part, seq range, and for
 * out_of_order and fenced the evidence: first_part, first_offset). */
struct want_ev {
        int set;
        enum dedup_kind kind;
        uint32_t part;
        int32_t epoch;
        int64_t seq_lo, seq_hi;
        uint64_t count;
        int64_t first_offset; /* -2: not checked */
        uint32_t first_part;
};

struct engine_case {
        const char *what;
        int from_log_start;  /* part 0; part 1 never */
        int64_t wall_ms;     /* dedup_tracker_begin() */
        int64_t idle_ttl_ms; /* 0: the default */
        struct step s[16];
        /* part 0 at the end: */
        uint64_t gaps, missing, dups, ooo, fenced;
        size_t pairs;
        struct want_ev ev[2];
        uint64_t more[2]; /* part 0: recovered, unknown */
};

#define DAY (24LL * 3600 * 1000)
#define T0 (1700000000000LL) /* a record time */
#define NOW (T0 + 10 * DAY)  /* the auditor's wall clock */

#define OK DEDUP_V_OK
#define BASE DEDUP_V_BASELINE
#define GAP DEDUP_V_GAP_OPENED
#define OOO DEDUP_V_OUT_OF_ORDER
#define DUP DEDUP_V_DUPLICATE
#define FEN DEDUP_V_FENCED

/* A record of part 0 or 1 without eos.pid, eos.prev_*. */
#define R(part, prod, epoch, seq, ts, want)                                   \
        {                                                                     \
                REC, part, prod, NOPID, epoch, seq, ts, -1, -1, want          \
        }
/* The same with eos.pid. */
#define RP(part, prod, pid, epoch, seq, ts, want)                             \
        {                                                                     \
                REC, part, prod, pid, epoch, seq, ts, -1, -1, want            \
        }
/* With eos.prev_epoch and eos.prev_seq. */
#define RV(part, prod, epoch, seq, ts, pe, ps, want)                          \
        {                                                                     \
                REC, part, prod, NOPID, epoch, seq, ts, pe, ps, want          \
        }
/* With all of them. */
#define RX(part, prod, pid, epoch, seq, ts, pe, ps, want)                     \
        {                                                                     \
                REC, part, prod, pid, epoch, seq, ts, pe, ps, want            \
        }
#define STEP(op)                                                              \
        {                                                                     \
                op, 0, NULL, NOPID, 0, 0, 0, -1, -1, OK                       \
        }
#define HOLE0                                                                 \
        {                                                                     \
                HOLE, 0, NULL, NOPID, 0, 0, 0, -1, -1, OK                     \
        }
#define ADV(ts)                                                               \
        {                                                                     \
                ADVANCE, 0, NULL, NOPID, 0, 0, ts, -1, -1, OK                 \
        }
#define EV(kind, part, epoch, lo, hi, count, fo, fp)                          \
        {                                                                     \
                1, kind, part, epoch, lo, hi, count, fo, fp                   \
        }

static void run_case(const struct engine_case *c)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        const struct dedup_event *ev;
        const struct dedup_counts *k;
        int64_t offset[2] = {0, 0};
        size_t i, n, e;

        dedup_config_defaults(&conf);
        if (c->idle_ttl_ms)
                conf.idle_ttl_ms = c->idle_ttl_ms;
        tr = dedup_tracker_new(&conf);
        assert_non_null(tr);
        assert_int_equal(dedup_tracker_part_add(tr, 0, c->from_log_start), 0);
        assert_int_equal(dedup_tracker_part_add(tr, 1, 0), 0);
        dedup_tracker_begin(tr, c->wall_ms);
        for (i = 0; c->s[i].op != END; i++) {
                const struct step *s = &c->s[i];
                struct dedup_hdrs h;
                char ebuf[16], sbuf[24], pbuf[24], pe[16], ps[24];
                enum dedup_verdict v;

                switch (s->op) {
                case HOLE:
                        offset[s->part] += 1000; /* the deleted records */
                        dedup_tracker_part_rebaseline(tr, s->part);
                        continue;
                case TICK:
                        dedup_tracker_tick(tr);
                        continue;
                case CONFIRM:
                        dedup_tracker_confirm_all(tr);
                        continue;
                case ADVANCE:
                        dedup_tracker_clock_advance(tr, s->ts);
                        continue;
                default:
                        break;
                }
                dedup_hdrs_init(&h);
                snprintf(ebuf, sizeof(ebuf), "%d", (int)s->epoch);
                snprintf(sbuf, sizeof(sbuf), "%lld", (long long)s->seq);
                dedup_hdrs_feed(&h, "eos.producer", 12, s->producer,
                                strlen(s->producer));
                dedup_hdrs_feed(&h, "eos.epoch", 9, ebuf, strlen(ebuf));
                dedup_hdrs_feed(&h, "eos.seq", 7, sbuf, strlen(sbuf));
                if (s->pid != NOPID) {
                        snprintf(pbuf, sizeof(pbuf), "%lld",
                                 (long long)s->pid);
                        dedup_hdrs_feed(&h, "eos.pid", 7, pbuf, strlen(pbuf));
                }
                if (s->prev_epoch >= 0) {
                        snprintf(pe, sizeof(pe), "%d", (int)s->prev_epoch);
                        snprintf(ps, sizeof(ps), "%lld",
                                 (long long)s->prev_seq);
                        dedup_hdrs_feed(&h, "eos.prev_epoch", 14, pe,
                                        strlen(pe));
                        dedup_hdrs_feed(&h, "eos.prev_seq", 12, ps,
                                        strlen(ps));
                }
                h.ts_ms = s->ts;
                v = dedup_tracker_observe(tr, s->part, offset[s->part]++, &h);
                if (v != s->want)
                        fail_msg("%s: step %zu (%s e%d s%lld): verdict %d, "
                                 "want %d",
                                 c->what, i, s->producer, (int)s->epoch,
                                 (long long)s->seq, (int)v, (int)s->want);
        }
        k = dedup_tracker_part_counts(tr, 0);
        if (k->anomalies[DEDUP_KIND_GAP] != c->gaps ||
            k->missing != c->missing ||
            k->anomalies[DEDUP_KIND_DUPLICATE] != c->dups ||
            k->anomalies[DEDUP_KIND_OUT_OF_ORDER] != c->ooo ||
            k->anomalies[DEDUP_KIND_FENCED] != c->fenced ||
            k->recovered != c->more[0] || k->unknown != c->more[1])
                fail_msg(
                    "%s: gaps %llu missing %llu dups %llu ooo %llu "
                    "fenced %llu recovered %llu unknown %llu",
                    c->what, (unsigned long long)k->anomalies[DEDUP_KIND_GAP],
                    (unsigned long long)k->missing,
                    (unsigned long long)k->anomalies[DEDUP_KIND_DUPLICATE],
                    (unsigned long long)k->anomalies[DEDUP_KIND_OUT_OF_ORDER],
                    (unsigned long long)k->anomalies[DEDUP_KIND_FENCED],
                    (unsigned long long)k->recovered,
                    (unsigned long long)k->unknown);
        if (dedup_tracker_pairs(tr) != c->pairs)
                fail_msg("%s: %zu pairs, want %zu", c->what,
                         dedup_tracker_pairs(tr), c->pairs);
        ev = dedup_tracker_events(tr, &n);
        for (e = 0; e < 2 && c->ev[e].set; e++) {
                const struct want_ev *w = &c->ev[e];
                int found = 0;
                for (i = 0; i < n && !found; i++)
                        found = ev[i].kind == w->kind &&
                                ev[i].part == w->part &&
                                ev[i].epoch == w->epoch &&
                                ev[i].seq_lo == w->seq_lo &&
                                ev[i].seq_hi == w->seq_hi &&
                                ev[i].count == w->count &&
                                (w->first_offset == -2 ||
                                 (ev[i].first_offset == w->first_offset &&
                                  ev[i].first_part == w->first_part));
                if (!found)
                        fail_msg("%s: no %s event e%d [%lld, %lld] x%llu",
                                 c->what, dedup_kind_name(w->kind),
                                 (int)w->epoch, (long long)w->seq_lo,
                                 (long long)w->seq_hi,
                                 (unsigned long long)w->count);
        }
        dedup_tracker_free(tr);
}

static void run_cases(const struct engine_case *c, size_t n)
{
        size_t i;

        for (i = 0; i < n; i++)
                run_case(&c[i]);
}

/* ------------------------------------------------------------------ */
/* Item 6: the records' time                                           */
/* ------------------------------------------------------------------ */

static const struct engine_case time_cases[] = {
    {"a backlog read 10 days late: the gap grace runs on record time",
     1,
     NOW,
     0,
     {R(0, "a", 0, 0, T0, OK), R(0, "a", 0, 1, T0, OK),
      R(0, "a", 0, 3, T0 + 1000, GAP), STEP(TICK),
      /* 2 minutes later by the records: a retry still fills it */
      R(0, "a", 0, 2, T0 + 120000, OOO), R(0, "a", 0, 4, T0 + 120001, OK),
      STEP(TICK), STEP(CONFIRM)},
     0,
     0,
     0,
     1,
     0,
     1,
     {{0}},
     {0, 0}},
    {"the grace by record time: 5 minutes of records confirm the gap",
     1,
     NOW,
     0,
     {R(0, "a", 0, 0, T0, OK), R(0, "a", 0, 2, T0, GAP),
      R(0, "b", 0, 0, T0 + 300000, OK), STEP(TICK),
      /* confirmed: the late record is recovered (item 4) */
      R(0, "a", 0, 1, T0 + 300001, OOO)},
     1,
     0,
     0,
     1,
     0,
     2,
     {EV(DEDUP_KIND_GAP, 0, 0, 1, 1, 1, -2, 0), {0}},
     {1, 0}},
    {"idle expiry by record time, not by the wall clock",
     0,
     NOW,
     DAY,
     {R(0, "a", 0, 5, T0, BASE), R(1, "b", 0, 5, T0 + DAY / 2, BASE),
      STEP(TICK), /* the wall clock is 10 days ahead: nothing expires */
      R(1, "b", 0, 6, T0 + DAY + 1, OK), STEP(TICK), /* a expires */
      R(0, "a", 0, 9, T0 + DAY + 2, BASE)},
     0,
     0,
     0,
     0,
     0,
     2,
     {EV(DEDUP_KIND_EXPIRED, 0, 0, 5, 5, 1, -2, 0), {0}},
     {0, 0}},
    {"a timestamp ahead of the wall clock counts as the wall clock",
     0,
     T0,
     DAY,
     {R(0, "a", 0, 5, T0, BASE), R(1, "b", 0, 0, T0 + 30 * DAY, BASE),
      STEP(TICK), R(0, "a", 0, 6, T0 + 1, OK)},
     0,
     0,
     0,
     0,
     0,
     2,
     {{0}},
     {0, 0}},
    {"records without a timestamp take the wall clock",
     0,
     NOW,
     DAY,
     {R(0, "a", 0, 5, T0, BASE), R(1, "b", 0, 0, NOTS, BASE), STEP(TICK),
      R(0, "a", 0, 6, T0 + 1, BASE)},
     0,
     0,
     0,
     0,
     0,
     2,
     {EV(DEDUP_KIND_EXPIRED, 0, 0, 5, 5, 1, -2, 0), {0}},
     {0, 0}},
};

/* The caller advances the records' clock to the wall clock only when it
 * has read every part to its end (serve, idle at the head of the log). */
static const struct engine_case idle_cases[] = {
    {"an idle live topic: the wall clock confirms a gap at its end",
     1,
     T0 + 1000,
     0,
     {R(0, "a", 0, 0, T0, OK), R(0, "a", 0, 2, T0 + 1, GAP), STEP(TICK),
      /* no record for 5 minutes: the records' clock stands still */
      STEP(TICK), ADV(T0 + 299999), STEP(TICK), ADV(T0 + 300001), STEP(TICK),
      R(0, "a", 0, 1, T0 + 300002, OOO)},
     1,
     0,
     0,
     1,
     0,
     1,
     {EV(DEDUP_KIND_GAP, 0, 0, 1, 1, 1, -2, 0), {0}},
     {1, 0}},
    {"an idle live topic: pairs expire by the wall clock",
     0,
     T0,
     DAY,
     {R(0, "a", 0, 5, T0, BASE), STEP(TICK), ADV(T0 + DAY + 1), STEP(TICK)},
     0,
     0,
     0,
     0,
     0,
     0,
     {EV(DEDUP_KIND_EXPIRED, 0, 0, 5, 5, 1, -2, 0), {0}},
     {0, 0}},
    {"the clock never goes back: an older advance changes nothing",
     1,
     NOW,
     0,
     {R(0, "a", 0, 0, T0 + 400000, OK), R(0, "a", 0, 2, T0 + 400000, GAP),
      ADV(T0), STEP(TICK), R(0, "a", 0, 1, T0 + 400001, OOO)},
     0,
     0,
     0,
     1,
     0,
     1,
     {{0}},
     {0, 0}},
};

static void test_idle_clock(void **state)
{
        (void)state;
        run_cases(idle_cases, sizeof(idle_cases) / sizeof(idle_cases[0]));
}

static void test_record_time(void **state)
{
        (void)state;
        run_cases(time_cases, sizeof(time_cases) / sizeof(time_cases[0]));
}

/* ------------------------------------------------------------------ */
/* Item 3: a new producer id, transactions v2                          */
/* ------------------------------------------------------------------ */

#define EMAX 32766 /* the last epoch of a producer id */

static const struct engine_case pid_cases[] = {
    {"epoch exhausted: a new producer id at epoch 0 is a new session",
     1,
     NOW,
     0,
     {RP(0, "t", 100, EMAX, 0, T0, OK), RP(0, "t", 100, EMAX, 1, T0, OK),
      RP(0, "t", 200, 0, 0, T0 + 1, OK), RP(0, "t", 200, 0, 1, T0 + 2, OK),
      RP(0, "t", 200, 1, 0, T0 + 3, OK),     /* next transaction */
      RP(0, "t", 100, EMAX, 2, T0 + 4, FEN), /* the old id: a zombie */
      RP(0, "t", 200, 0, 2, T0 + 5, FEN), STEP(CONFIRM)},
     0,
     0,
     0,
     0,
     2,
     1,
     {EV(DEDUP_KIND_FENCED, 0, EMAX, 2, 2, 1, -2, 0), {0}},
     {0, 0}},
    {"a new producer id must start at seq 0",
     1,
     NOW,
     0,
     {RP(0, "t", 7, 3, 0, T0, OK), RP(0, "t", 8, 0, 3, T0 + 1, GAP),
      RP(0, "t", 8, 0, 4, T0 + 2, OK), STEP(CONFIRM)},
     1,
     3,
     0,
     0,
     0,
     1,
     {EV(DEDUP_KIND_GAP, 0, 0, 0, 2, 3, -2, 0), {0}},
     {0, 0}},
    {"ids are ordered as they came, not by value",
     1,
     NOW,
     0,
     {RP(0, "t", 900, 4, 0, T0, OK), RP(0, "t", 5, 0, 0, T0 + 1, OK),
      RP(0, "t", 900, 4, 1, T0 + 2, FEN), RP(0, "t", 5, 0, 1, T0 + 3, OK)},
     0,
     0,
     0,
     0,
     1,
     1,
     {{0}},
     {0, 0}},
    {"without eos.pid a lower epoch stays fenced",
     1,
     NOW,
     0,
     {R(0, "t", EMAX, 0, T0, OK), R(0, "t", 0, 0, T0 + 1, FEN)},
     0,
     0,
     0,
     0,
     1,
     1,
     {{0}},
     {0, 0}},
    {"fenced records do not keep a pair alive",
     0,
     NOW,
     DAY,
     {R(0, "a", 2, 0, T0, BASE), R(0, "a", 1, 0, T0 + DAY / 2, FEN),
      R(1, "b", 0, 0, T0 + DAY + 1, BASE), STEP(TICK)},
     0,
     0,
     0,
     0,
     1,
     1,
     {EV(DEDUP_KIND_EXPIRED, 0, 2, 0, 0, 2, -2, 0), {0}},
     {0, 0}},
    {"transactions v2: an epoch per transaction, seqs from 0: clean",
     1,
     NOW,
     0,
     {R(0, "tx", 5, 0, T0, OK), R(1, "tx", 5, 0, T0, BASE),
      R(0, "tx", 5, 1, T0, OK), RV(0, "tx", 6, 0, T0 + 10, 5, 1, OK),
      RV(1, "tx", 6, 0, T0 + 10, 5, 0, OK),
      RV(0, "tx", 6, 1, T0 + 10, 5, 1, OK),
      RV(0, "tx", 8, 0, T0 + 30, 6, 1, OK), /* 7 did not write on 0 */
      STEP(CONFIRM)},
     0,
     0,
     0,
     0,
     0,
     2,
     {{0}},
     {0, 0}},
    {"transactions v2: loss at the end of a transaction",
     1,
     NOW,
     0,
     {R(0, "tx", 5, 0, T0, OK), R(0, "tx", 5, 1, T0, OK),
      /* seq 2 of epoch 5 was lost: the next epoch says it was written */
      RV(0, "tx", 6, 0, T0 + 10, 5, 2, GAP),
      RV(0, "tx", 6, 1, T0 + 10, 5, 2, OK), STEP(CONFIRM)},
     1,
     1,
     0,
     0,
     0,
     1,
     {EV(DEDUP_KIND_GAP, 0, 5, 2, 2, 1, -2, 0), {0}},
     {0, 0}},
    {"transactions v2: a whole transaction lost on a partition",
     1,
     NOW,
     0,
     {R(0, "tx", 5, 0, T0, OK), RV(0, "tx", 7, 0, T0 + 20, 6, 1, GAP),
      STEP(CONFIRM)},
     1,
     2,
     0,
     0,
     0,
     1,
     {EV(DEDUP_KIND_GAP, 0, 6, 0, 1, 2, -2, 0), {0}},
     {0, 0}},
    {"transactions v2: loss before a new producer id",
     1,
     NOW,
     0,
     {RP(0, "tx", 1, EMAX, 0, T0, OK),
      RX(0, "tx", 2, 0, 0, T0 + 1, EMAX, 1, GAP), STEP(CONFIRM)},
     1,
     1,
     0,
     0,
     0,
     1,
     {EV(DEDUP_KIND_GAP, 0, EMAX, 1, 1, 1, -2, 0), {0}},
     {0, 0}},
};

static void test_new_pid(void **state)
{
        (void)state;
        run_cases(pid_cases, sizeof(pid_cases) / sizeof(pid_cases[0]));
}

/* ------------------------------------------------------------------ */
/* Item 4: a late record after its gap was confirmed                   */
/* ------------------------------------------------------------------ */

static const struct engine_case late_cases[] = {
    {"a late record after the scan's end confirmed its gap",
     1,
     NOW,
     0,
     {R(0, "a", 0, 0, T0, OK), R(0, "a", 0, 2, T0, GAP), STEP(CONFIRM),
      R(0, "a", 0, 1, T0 + 1, OOO), R(0, "a", 0, 1, T0 + 2, DUP)},
     1,
     0,
     1,
     1,
     0,
     1,
     /* the event names the record that opened the gap (offset 1) */
     {EV(DEDUP_KIND_GAP, 0, 0, 1, 1, 1, -2, 0),
      EV(DEDUP_KIND_OUT_OF_ORDER, 0, 0, 1, 1, 1, 1, 0)},
     {1, 0}},
    {"parts of a confirmed gap come back, one twice",
     1,
     NOW,
     0,
     {R(0, "a", 0, 0, T0, OK), R(0, "a", 0, 4, T0, GAP), STEP(CONFIRM),
      R(0, "a", 0, 2, T0 + 1, OOO), R(0, "a", 0, 2, T0 + 2, DUP),
      R(0, "a", 0, 1, T0 + 3, OOO), R(0, "a", 0, 5, T0 + 4, OK)},
     1,
     1,
     1,
     2,
     0,
     1,
     {EV(DEDUP_KIND_GAP, 0, 0, 1, 3, 3, -2, 0), {0}},
     {2, 0}},
    {"an open gap filled as usual is not recovered",
     1,
     NOW,
     0,
     {R(0, "a", 0, 0, T0, OK), R(0, "a", 0, 2, T0, GAP),
      R(0, "a", 0, 1, T0 + 1, OOO), STEP(CONFIRM)},
     0,
     0,
     0,
     1,
     0,
     1,
     {EV(DEDUP_KIND_OUT_OF_ORDER, 0, 0, 1, 1, 1, -1, 0), {0}},
     {0, 0}},
    {"a new session forgets the old one's confirmed gaps",
     1,
     NOW,
     0,
     {R(0, "a", 0, 0, T0, OK), R(0, "a", 0, 2, T0, GAP), STEP(CONFIRM),
      R(0, "a", 1, 0, T0 + 1, OK), R(0, "a", 0, 1, T0 + 2, FEN)},
     1,
     1,
     0,
     0,
     1,
     1,
     {{0}},
     {0, 0}},
    {"bounded: a 9th confirmed gap forgets the oldest",
     1,
     NOW,
     0,
     {R(0, "a", 0, 0, T0, OK), R(0, "a", 0, 2, T0, GAP),
      R(0, "a", 0, 4, T0, GAP), R(0, "a", 0, 6, T0, GAP),
      R(0, "a", 0, 8, T0, GAP), R(0, "a", 0, 10, T0, GAP),
      R(0, "a", 0, 12, T0, GAP), R(0, "a", 0, 14, T0, GAP),
      R(0, "a", 0, 16, T0, GAP), R(0, "a", 0, 18, T0, GAP), STEP(CONFIRM),
      R(0, "a", 0, 1, T0 + 1, DUP), R(0, "a", 0, 3, T0 + 1, OOO),
      R(0, "a", 0, 17, T0 + 1, OOO)},
     9,
     7,
     1,
     2,
     0,
     1,
     {{0}},
     {2, 0}},
};

static void test_late_record(void **state)
{
        (void)state;
        run_cases(late_cases, sizeof(late_cases) / sizeof(late_cases[0]));
}

/* ------------------------------------------------------------------ */
/* Item 5: coverage gaps keep what is known                            */
/* ------------------------------------------------------------------ */

static const struct engine_case hole_cases[] = {
    {"after a hole a lower epoch is still fenced",
     0,
     NOW,
     0,
     {R(0, "a", 3, 5, T0, BASE), HOLE0, R(0, "a", 2, 0, T0 + 1, FEN),
      R(0, "a", 3, 9, T0 + 2, BASE), R(0, "a", 3, 10, T0 + 3, OK)},
     0,
     0,
     0,
     0,
     1,
     1,
     {{0}},
     {0, 0}},
    {"after a hole a seq already seen is a duplicate, with its first copy",
     0,
     NOW,
     0,
     {R(0, "a", 0, 5, T0, BASE), R(0, "a", 0, 6, T0, OK), HOLE0,
      R(0, "a", 0, 5, T0 + 1, DUP), R(0, "a", 0, 7, T0 + 2, OK)},
     0,
     0,
     1,
     0,
     0,
     1,
     {EV(DEDUP_KIND_DUPLICATE, 0, 0, 5, 5, 1, 0, 0), {0}},
     {0, 0}},
    {"a later record of the same epoch opens no false gap",
     1,
     NOW,
     0,
     {R(0, "a", 0, 0, T0, OK), R(0, "a", 0, 1, T0, OK), HOLE0,
      R(0, "a", 0, 50, T0 + 1, BASE), R(0, "a", 0, 52, T0 + 2, GAP),
      STEP(CONFIRM)},
     1,
     1,
     0,
     0,
     0,
     1,
     {EV(DEDUP_KIND_GAP, 0, 0, 51, 51, 1, -2, 0), {0}},
     {0, 0}},
    {"open gaps across a hole are unknown, not missing",
     1,
     NOW,
     0,
     {R(0, "a", 0, 0, T0, OK), R(0, "a", 0, 3, T0, GAP), HOLE0,
      R(0, "a", 0, 10, T0 + 1, BASE), R(0, "a", 0, 1, T0 + 2, OOO),
      STEP(CONFIRM)},
     0,
     0,
     0,
     1,
     0,
     1,
     {EV(DEDUP_KIND_GAP_UNKNOWN, 0, 0, 1, 2, 2, -2, 0),
      EV(DEDUP_KIND_OUT_OF_ORDER, 0, 0, 1, 1, 1, 1, 0)},
     {0, 1}},
    {"a new session across a hole may begin past seq 0",
     1,
     NOW,
     0,
     {R(0, "a", 0, 5, T0, GAP), HOLE0, R(0, "a", 1, 7, T0 + 1, BASE),
      R(0, "a", 1, 8, T0 + 2, OK), R(0, "a", 0, 6, T0 + 3, FEN),
      STEP(CONFIRM)},
     0,
     0,
     0,
     0,
     1,
     1,
     {EV(DEDUP_KIND_GAP_UNKNOWN, 0, 0, 0, 4, 5, -2, 0), {0}},
     {0, 5}},
    {"the hole is over once a record is accepted",
     0,
     NOW,
     0,
     {R(0, "a", 0, 5, T0, BASE), HOLE0, R(0, "a", 0, 3, T0 + 1, DUP),
      R(0, "a", 0, 9, T0 + 2, BASE), R(0, "a", 0, 11, T0 + 3, GAP),
      STEP(CONFIRM)},
     1,
     1,
     1,
     0,
     0,
     1,
     {{0}},
     {0, 0}},
};

static void test_coverage_hole(void **state)
{
        (void)state;
        run_cases(hole_cases, sizeof(hole_cases) / sizeof(hole_cases[0]));
}

/* ------------------------------------------------------------------ */
/* Item 8: zombies on partitions the new session has not written yet   */
/* ------------------------------------------------------------------ */

static const struct engine_case zombie_cases[] = {
    {"a zombie on a partition the new session has not written yet",
     1,
     NOW,
     0,
     {R(0, "z", 0, 0, T0, OK), R(1, "z", 0, 0, T0, BASE),
      R(0, "z", 1, 0, T0 + 10, OK), /* the new session: part 0 offset 1 */
      R(1, "z", 0, 1, T0 + 20, FEN), R(1, "z", 0, 2, T0 + 21, FEN),
      R(1, "z", 1, 0, T0 + 30, OK)},
     0,
     0,
     0,
     0,
     0,
     2,
     {EV(DEDUP_KIND_FENCED, 1, 0, 1, 2, 2, 1, 0), {0}},
     {0, 0}},
    {"an old session's record written before the new one began is ok",
     1,
     NOW,
     0,
     {R(0, "z", 0, 0, T0, OK), R(1, "z", 0, 0, T0, BASE),
      R(0, "z", 1, 0, T0 + 10, OK),
      R(1, "z", 0, 1, T0 + 5, OK)}, /* part 1 read late: a backlog */
     0,
     0,
     0,
     0,
     0,
     2,
     {{0}},
     {0, 0}},
    {"a zombie's first record on a partition",
     1,
     NOW,
     0,
     {R(0, "z", 0, 0, T0, OK), R(0, "z", 1, 0, T0 + 10, OK),
      R(1, "z", 0, 7, T0 + 20, FEN), R(1, "z", 1, 3, T0 + 30, BASE),
      R(1, "z", 1, 4, T0 + 31, OK)},
     0,
     0,
     0,
     0,
     0,
     2,
     {EV(DEDUP_KIND_FENCED, 1, 0, 7, 7, 1, 1, 0), {0}},
     {0, 0}},
    {"a zombie on the same partition names the new session's start",
     1,
     NOW,
     0,
     {R(1, "z", 0, 0, T0, BASE), R(0, "z", 0, 0, T0, OK),
      R(1, "z", 1, 0, T0 + 10, OK), R(0, "z", 1, 0, T0 + 11, OK),
      R(0, "z", 0, 1, T0 + 20, FEN)},
     0,
     0,
     0,
     0,
     1,
     2,
     {EV(DEDUP_KIND_FENCED, 0, 0, 1, 1, 1, 1, 1), {0}},
     {0, 0}},
    {"without timestamps there is no time order: not fenced",
     1,
     NOW,
     0,
     {R(0, "z", 0, 0, NOTS, OK), R(1, "z", 0, 0, NOTS, BASE),
      R(0, "z", 1, 0, NOTS, OK), R(1, "z", 0, 1, NOTS, OK)},
     0,
     0,
     0,
     0,
     0,
     2,
     {{0}},
     {0, 0}},
    {"a zombie of a replaced producer id on another partition",
     1,
     NOW,
     0,
     {RP(0, "t", 100, 5, 0, T0, OK), RP(1, "t", 100, 5, 0, T0, BASE),
      RP(0, "t", 200, 0, 0, T0 + 10, OK), RP(1, "t", 100, 5, 1, T0 + 20, FEN),
      RP(1, "t", 200, 0, 0, T0 + 30, OK)},
     0,
     0,
     0,
     0,
     0,
     2,
     {EV(DEDUP_KIND_FENCED, 1, 5, 1, 1, 1, 1, 0), {0}},
     {0, 0}},
};

static void test_zombie_elsewhere(void **state)
{
        (void)state;
        run_cases(zombie_cases,
                  sizeof(zombie_cases) / sizeof(zombie_cases[0]));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_record_time),
            cmocka_unit_test(test_idle_clock),
            cmocka_unit_test(test_new_pid),
            cmocka_unit_test(test_zombie_elsewhere),
            cmocka_unit_test(test_late_record),
            cmocka_unit_test(test_coverage_hole),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
