/*
 * test_topic.c - topic-scoped streams (dedup/topic.h) on exact record
 * sequences: one topic of three parts read at different paces, records
 * stamped eos.scope: topic.  Each case is a list of steps (records with
 * their part, seq and time; a part at its end; ticks; a restart through
 * the persistence views; the end of a scan) with each record's verdict
 * and, at CHECK steps, the topic's totals so far (summed over its parts);
 * then the events that must be there.  Then the window's bound on memory.
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
#include "../dedup/topic.h"

#define NPARTS 3

enum op {
        END = 0,
        REC,     /* a record of the topic */
        PREC,    /* a record without eos.scope (a per-partition stream) */
        ATEND,   /* the caller read part to its end */
        TICK,    /* dedup_tracker_tick() */
        CONFIRM, /* dedup_tracker_confirm_all(): the end of a scan */
        ADVANCE, /* dedup_tracker_clock_advance(ts) */
        HOLE,    /* retention deleted unread records of part */
        RESTART, /* persist every stream and counter, a new tracker, restore */
        CHECK,   /* totals so far: missing, duplicate, out_of_order, fenced */
};

struct step {
        enum op op;
        uint32_t part;
        const char *producer;
        int32_t epoch;
        int64_t seq;
        int64_t ts;
        enum dedup_verdict want;
        uint64_t missing, dups, ooo, fenced; /* CHECK */
};

struct want_ev {
        int set;
        enum dedup_kind kind;
        uint32_t part;
        int64_t seq_lo, seq_hi;
        uint64_t count;
        uint32_t first_part;  /* duplicate: the first copy */
        int64_t first_offset; /* -2: not checked */
};

struct topic_case {
        const char *what;
        int from_log_start;
        uint32_t window; /* 0: the default */
        struct step s[24];
        uint64_t recovered, unknown; /* totals at the end */
        struct want_ev ev[2];
};

#define T0 (1700000000000LL)
#define NOW (T0 + 3600 * 1000)
#define GRACE 1000

#define OK DEDUP_V_OK
#define BASE DEDUP_V_BASELINE
#define OOO DEDUP_V_OUT_OF_ORDER
#define DUP DEDUP_V_DUPLICATE
#define FEN DEDUP_V_FENCED

#define R(part, epoch, seq, ts, want)                                         \
        {                                                                     \
                REC, part, "p", epoch, seq, ts, want, 0, 0, 0, 0              \
        }
#define RN(part, prod, epoch, seq, ts, want)                                  \
        {                                                                     \
                REC, part, prod, epoch, seq, ts, want, 0, 0, 0, 0             \
        }
#define PR(part, seq, ts, want)                                               \
        {                                                                     \
                PREC, part, "q", 0, seq, ts, want, 0, 0, 0, 0                 \
        }
#define AT(part)                                                              \
        {                                                                     \
                ATEND, part, NULL, 0, 0, 0, OK, 0, 0, 0, 0                    \
        }
#define OP(op)                                                                \
        {                                                                     \
                op, 0, NULL, 0, 0, 0, OK, 0, 0, 0, 0                          \
        }
#define ADV(ts)                                                               \
        {                                                                     \
                ADVANCE, 0, NULL, 0, 0, ts, OK, 0, 0, 0, 0                    \
        }
#define HOLE_(part)                                                           \
        {                                                                     \
                HOLE, part, NULL, 0, 0, 0, OK, 0, 0, 0, 0                     \
        }
#define CHK(m, d, o, f)                                                       \
        {                                                                     \
                CHECK, 0, NULL, 0, 0, 0, OK, m, d, o, f                       \
        }
#define EV(kind, part, lo, hi, count, fp, fo)                                 \
        {                                                                     \
                1, kind, part, lo, hi, count, fp, fo                          \
        }

/* What a restart keeps: every stream (deep copies) and every counter. */
struct saved {
        struct dedup_topic_view v[8];
        char prod[8][32];
        uint64_t *words[8];
        int64_t *wms[8];
        struct dedup_topic_loc *locs[8];
        struct dedup_topic_gap *done[8];
        size_t n;
        struct dedup_counts counts[NPARTS];
};

static int save_cb(void *opaque, const struct dedup_topic_view *v)
{
        struct saved *sv = opaque;
        size_t i = sv->n++;

        assert_true(i < 8);
        sv->v[i] = *v;
        assert_true(v->producer_len < sizeof(sv->prod[i]));
        memcpy(sv->prod[i], v->producer, v->producer_len);
        sv->v[i].producer = sv->prod[i];
        sv->words[i] = malloc((v->nwords + 1) * sizeof(uint64_t));
        sv->wms[i] = malloc((v->nwords + 1) * sizeof(int64_t));
        sv->locs[i] = malloc((v->nlocs + 1) * sizeof(*v->locs));
        sv->done[i] = malloc((v->ndone + 1) * sizeof(*v->done));
        memcpy(sv->words[i], v->words, v->nwords * sizeof(uint64_t));
        memcpy(sv->wms[i], v->word_ms, v->nwords * sizeof(int64_t));
        memcpy(sv->locs[i], v->locs, v->nlocs * sizeof(*v->locs));
        memcpy(sv->done[i], v->done, v->ndone * sizeof(*v->done));
        sv->v[i].words = sv->words[i];
        sv->v[i].word_ms = sv->wms[i];
        sv->v[i].locs = sv->locs[i];
        sv->v[i].done = sv->done[i];
        return 0;
}

static struct dedup_tracker *tracker_new(const struct topic_case *c)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        uint32_t p;

        dedup_config_defaults(&conf);
        conf.gap_grace_ms = GRACE;
        conf.gap_grace_records = 1; /* never used by topic streams */
        if (c->window)
                conf.topic_window = c->window;
        tr = dedup_tracker_new(&conf);
        assert_non_null(tr);
        for (p = 0; p < NPARTS; p++) {
                assert_int_equal(dedup_tracker_part_add(tr, p,
                                                        c->from_log_start),
                                 0);
                assert_int_equal(dedup_tracker_part_set_topic(tr, p, 0), 0);
        }
        dedup_tracker_begin(tr, NOW);
        return tr;
}

/* Persists tr the way the ledger does, and returns a new tracker with
 * that state restored. */
static struct dedup_tracker *restart(const struct topic_case *c,
                                     struct dedup_tracker *tr)
{
        struct saved sv;
        struct dedup_tracker *nt;
        size_t i;
        uint32_t p;

        memset(&sv, 0, sizeof(sv));
        assert_int_equal(dedup_topic_foreach(tr, save_cb, &sv), 0);
        for (p = 0; p < NPARTS; p++)
                sv.counts[p] = *dedup_tracker_part_counts(tr, p);
        dedup_tracker_free(tr);
        nt = tracker_new(c);
        for (p = 0; p < NPARTS; p++)
                *dedup_tracker_part_counts(nt, p) = sv.counts[p];
        for (i = 0; i < sv.n; i++) {
                assert_int_equal(dedup_topic_restore(nt, &sv.v[i]), 0);
                free(sv.words[i]);
                free(sv.wms[i]);
                free(sv.locs[i]);
                free(sv.done[i]);
        }
        assert_int_equal(dedup_topic_streams(nt), sv.n);
        return nt;
}

static uint64_t total(struct dedup_tracker *tr, int what)
{
        uint64_t n = 0;
        uint32_t p;

        for (p = 0; p < NPARTS; p++) {
                const struct dedup_counts *k = dedup_tracker_part_counts(tr,
                                                                         p);
                switch (what) {
                case 0:
                        n += k->missing;
                        break;
                case 1:
                        n += k->anomalies[DEDUP_KIND_DUPLICATE];
                        break;
                case 2:
                        n += k->anomalies[DEDUP_KIND_OUT_OF_ORDER];
                        break;
                case 3:
                        n += k->anomalies[DEDUP_KIND_FENCED];
                        break;
                case 4:
                        n += k->recovered;
                        break;
                default:
                        n += k->unknown;
                        break;
                }
        }
        return n;
}

/* Events are checked as they come, batch by batch: a restart clears them. */
static void events_note(struct dedup_tracker *tr, const struct topic_case *c,
                        int *found)
{
        const struct dedup_event *ev;
        size_t n, i, e;

        ev = dedup_tracker_events(tr, &n);
        for (e = 0; e < 2 && c->ev[e].set; e++) {
                const struct want_ev *w = &c->ev[e];
                for (i = 0; i < n; i++)
                        if (ev[i].kind == w->kind && ev[i].part == w->part &&
                            ev[i].seq_lo == w->seq_lo &&
                            ev[i].seq_hi == w->seq_hi &&
                            ev[i].count == w->count &&
                            (w->first_offset == -2 ||
                             (ev[i].first_offset == w->first_offset &&
                              ev[i].first_part == w->first_part)))
                                found[e] = 1;
        }
        dedup_tracker_events_clear(tr);
        dedup_tracker_dirty_clear(tr);
}

static void run_case(const struct topic_case *c)
{
        struct dedup_tracker *tr = tracker_new(c);
        int64_t offset[NPARTS] = {0, 0, 0};
        int found[2] = {0, 0};
        size_t i, e;

        for (i = 0; c->s[i].op != END; i++) {
                const struct step *s = &c->s[i];
                struct dedup_hdrs h;
                char ebuf[16], sbuf[24];
                enum dedup_verdict v;

                switch (s->op) {
                case ATEND:
                        dedup_tracker_part_at_end(tr, s->part, 1);
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
                case HOLE:
                        offset[s->part] += 1000;
                        dedup_tracker_part_rebaseline(tr, s->part);
                        continue;
                case RESTART:
                        events_note(tr, c, found);
                        tr = restart(c, tr);
                        continue;
                case CHECK:
                        if (total(tr, 0) != s->missing ||
                            total(tr, 1) != s->dups ||
                            total(tr, 2) != s->ooo ||
                            total(tr, 3) != s->fenced)
                                fail_msg("%s: step %zu: missing %llu dups "
                                         "%llu ooo %llu fenced %llu",
                                         c->what, i,
                                         (unsigned long long)total(tr, 0),
                                         (unsigned long long)total(tr, 1),
                                         (unsigned long long)total(tr, 2),
                                         (unsigned long long)total(tr, 3));
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
                if (s->op == REC)
                        dedup_hdrs_feed(&h, "eos.scope", 9, "topic", 5);
                h.ts_ms = s->ts;
                v = dedup_tracker_observe(tr, s->part, offset[s->part]++, &h);
                if (v != s->want)
                        fail_msg("%s: step %zu (part %u seq %lld): verdict "
                                 "%d, want %d",
                                 c->what, i, s->part, (long long)s->seq,
                                 (int)v, (int)s->want);
        }
        if (total(tr, 4) != c->recovered || total(tr, 5) != c->unknown)
                fail_msg("%s: recovered %llu unknown %llu", c->what,
                         (unsigned long long)total(tr, 4),
                         (unsigned long long)total(tr, 5));
        events_note(tr, c, found);
        for (e = 0; e < 2 && c->ev[e].set; e++)
                if (!found[e])
                        fail_msg("%s: no %s event [%lld, %lld] x%llu", c->what,
                                 dedup_kind_name(c->ev[e].kind),
                                 (long long)c->ev[e].seq_lo,
                                 (long long)c->ev[e].seq_hi,
                                 (unsigned long long)c->ev[e].count);
        assert_false(dedup_tracker_failed(tr));
        dedup_tracker_free(tr);
}

static const struct topic_case cases[] = {
    {"spread over the parts in order: clean",
     1,
     0,
     {R(0, 0, 0, T0, OK), R(1, 0, 1, T0 + 1, OK), R(2, 0, 2, T0 + 2, OK),
      R(0, 0, 3, T0 + 3, OK), R(2, 0, 4, T0 + 4, OK), OP(CONFIRM),
      CHK(0, 0, 0, 0)},
     0,
     0,
     {{0}}},
    {"no per-part order: a lower seq after a higher one is no anomaly",
     1,
     0,
     {R(0, 0, 2, T0, OK), R(0, 0, 0, T0, OK), R(1, 0, 3, T0, OK),
      R(0, 0, 1, T0, OK), OP(CONFIRM), CHK(0, 0, 0, 0)},
     0,
     0,
     {{0}}},
    {"a seq late on a slow part is not missing",
     1,
     0,
     {R(0, 0, 0, T0, OK), R(0, 0, 2, T0 + 2, OK), R(0, 0, 3, T0 + 3, OK),
      R(0, 0, 5, T0 + 5, OK), AT(0), AT(2),
      /* part 1 holds seqs 1 and 4, not read yet: long past the grace,
       * still nothing is missing */
      ADV(T0 + 100 * GRACE), OP(TICK), CHK(0, 0, 0, 0), R(1, 0, 1, T0 + 1, OK),
      OP(TICK), CHK(0, 0, 0, 0), R(1, 0, 4, T0 + 4, OK), AT(1), OP(TICK),
      OP(CONFIRM), CHK(0, 0, 0, 0)},
     0,
     0,
     {{0}}},
    {"a gap is confirmed only when every part is past it",
     1,
     0,
     {R(0, 0, 0, T0, OK), R(0, 0, 2, T0 + 2, OK), R(1, 0, 3, T0 + 3, OK),
      AT(2), ADV(T0 + 10 * GRACE), OP(TICK), CHK(0, 0, 0, 0),
      /* part 0 at its end: part 1 still holds the time back */
      AT(0), OP(TICK), CHK(0, 0, 0, 0),
      /* part 1 read past the word's time plus the grace (a record of
       * another stream) */
      PR(1, 0, T0 + 3 + GRACE, OK), OP(TICK), CHK(1, 0, 0, 0),
      /* seq 1 comes after all: recovered, on the part it was counted on
       * (seq 2's: part 0, offset 1) */
      R(2, 0, 1, T0 + 1, OOO), CHK(0, 0, 1, 0), OP(CONFIRM)},
     1,
     0,
     {EV(DEDUP_KIND_GAP, 0, 1, 1, 1, 0, -2),
      EV(DEDUP_KIND_OUT_OF_ORDER, 2, 1, 1, 1, 0, 1)}},
    {"the end of a scan confirms what no part showed",
     1,
     0,
     {R(0, 0, 0, T0, OK), R(1, 0, 3, T0, OK), OP(CONFIRM), CHK(2, 0, 0, 0)},
     0,
     0,
     {EV(DEDUP_KIND_GAP, 1, 1, 2, 2, 0, -2)}},
    {"a duplicate across parts names the first copy",
     1,
     0,
     {R(0, 0, 0, T0, OK), R(1, 0, 1, T0, OK), R(0, 0, 2, T0, OK),
      R(2, 0, 1, T0, DUP), R(2, 0, 2, T0, DUP), CHK(0, 2, 0, 0), OP(CONFIRM)},
     0,
     0,
     {EV(DEDUP_KIND_DUPLICATE, 2, 1, 1, 1, 1, 0),
      EV(DEDUP_KIND_DUPLICATE, 2, 2, 2, 1, 0, 1)}},
    {"a duplicate on the same part, after a restart",
     1,
     0,
     {R(0, 0, 0, T0, OK), R(1, 0, 1, T0, OK), R(1, 0, 3, T0, OK), OP(RESTART),
      R(1, 0, 1, T0, DUP), R(2, 0, 2, T0, OK), OP(CONFIRM), CHK(0, 1, 0, 0)},
     0,
     0,
     {EV(DEDUP_KIND_DUPLICATE, 1, 1, 1, 1, 1, 0)}},
    {"a restart keeps the holes open and their times",
     1,
     0,
     {R(0, 0, 0, T0, OK), R(0, 0, 2, T0 + 2, OK), AT(0), AT(2),
      ADV(T0 + 10 * GRACE), OP(TICK), OP(RESTART),
      /* the read positions are not kept: part 0 and 2 say again */
      OP(TICK), CHK(0, 0, 0, 0), AT(0), AT(2), R(1, 0, 1, T0 + 1, OK),
      R(1, 0, 4, T0 + 4, OK), AT(1), ADV(T0 + 20 * GRACE), OP(TICK),
      CHK(1, 0, 0, 0), OP(CONFIRM), CHK(1, 0, 0, 0)},
     0,
     0,
     {EV(DEDUP_KIND_GAP, 1, 3, 3, 1, 0, -2)}},
    {"a lower epoch read late is counted, written late is fenced",
     1,
     0,
     {R(0, 0, 0, T0, OK), R(0, 1, 0, T0 + 100, OK), R(1, 0, 1, T0 + 50, OK),
      R(2, 0, 2, T0 + 200, FEN), R(0, 1, 1, T0 + 201, OK), OP(CONFIRM),
      CHK(0, 0, 0, 1)},
     0,
     0,
     {EV(DEDUP_KIND_FENCED, 2, 2, 2, 1, 0, 1)}},
    {"not from the log start: below the first seq is a baseline",
     0,
     0,
     {R(0, 0, 10, T0, OK), R(1, 0, 5, T0, BASE), R(1, 0, 11, T0, OK),
      R(2, 0, 13, T0, OK), R(2, 0, 10, T0, DUP), OP(CONFIRM), CHK(1, 1, 0, 0)},
     0,
     0,
     {EV(DEDUP_KIND_GAP, 2, 12, 12, 1, 0, -2)}},
    {"past the window the lowest seqs are settled early",
     1,
     64,
     {R(0, 0, 0, T0, OK), R(0, 0, 200, T0, OK), CHK(191, 0, 0, 0),
      R(1, 0, 100, T0, OOO), R(1, 0, 195, T0, OK), OP(CONFIRM),
      CHK(190 + 7, 0, 1, 0)},
     1,
     0,
     {{0}}},
    {"a coverage hole: what no part showed is unknown",
     1,
     0,
     {R(0, 0, 0, T0, OK), R(0, 0, 3, T0, OK), HOLE_(1), R(1, 0, 1, T0, OOO),
      OP(CONFIRM), CHK(0, 0, 1, 0)},
     0,
     1,
     {{0}}},
    {"per-partition streams beside them are untouched",
     1,
     0,
     {PR(0, 0, T0, OK), R(0, 0, 0, T0, OK), PR(0, 1, T0, OK),
      R(1, 0, 1, T0, OK), PR(0, 1, T0, DUP), OP(CONFIRM), CHK(0, 1, 0, 0)},
     0,
     0,
     {{0}}},
    {"producers and epochs are streams of their own",
     1,
     0,
     {RN(0, "a", 0, 0, T0, OK), RN(1, "b", 0, 0, T0, OK),
      RN(2, "a", 0, 1, T0, OK), RN(2, "b", 0, 1, T0, OK),
      RN(0, "b", 0, 1, T0, DUP), OP(CONFIRM), CHK(0, 1, 0, 0)},
     0,
     0,
     {{0}}},
};

static void test_cases(void **state)
{
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                run_case(&cases[i]);
}

static void test_scope_header(void **state)
{
        static const struct {
                const char *value;
                enum dedup_hdr_status status;
                int topic;
        } t[] = {
            {"topic", DEDUP_HDR_TRACKED, 1},
            {"partition", DEDUP_HDR_TRACKED, 0},
            {"Topic", DEDUP_HDR_MALFORMED, 0},
            {"", DEDUP_HDR_MALFORMED, 0},
            {"topics", DEDUP_HDR_MALFORMED, 0},
            {NULL, DEDUP_HDR_MALFORMED, 0},
        };
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                struct dedup_hdrs h;
                dedup_hdrs_init(&h);
                dedup_hdrs_feed(&h, "eos.producer", 12, "p", 1);
                dedup_hdrs_feed(&h, "eos.epoch", 9, "0", 1);
                dedup_hdrs_feed(&h, "eos.seq", 7, "0", 1);
                dedup_hdrs_feed(&h, "eos.scope", 9, t[i].value,
                                t[i].value ? strlen(t[i].value) : 0);
                assert_int_equal(dedup_hdrs_status(&h), t[i].status);
                assert_int_equal(h.scope_topic, t[i].topic);
                if (t[i].status == DEDUP_HDR_MALFORMED)
                        assert_true(h.bad & DEDUP_HDR_SCOPE);
        }
}

/* A part tied to no topic cannot reconcile a topic stream: malformed. */
static void test_no_topic(void **state)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        struct dedup_hdrs h;
        const struct dedup_event *ev;
        size_t n;

        (void)state;
        dedup_config_defaults(&conf);
        tr = dedup_tracker_new(&conf);
        assert_non_null(tr);
        assert_int_equal(dedup_tracker_part_add(tr, 0, 1), 0);
        dedup_hdrs_init(&h);
        dedup_hdrs_feed(&h, "eos.producer", 12, "p", 1);
        dedup_hdrs_feed(&h, "eos.epoch", 9, "0", 1);
        dedup_hdrs_feed(&h, "eos.seq", 7, "0", 1);
        dedup_hdrs_feed(&h, "eos.scope", 9, "topic", 5);
        assert_int_equal(dedup_tracker_observe(tr, 0, 0, &h),
                         DEDUP_V_MALFORMED);
        ev = dedup_tracker_events(tr, &n);
        assert_int_equal(n, 1);
        assert_int_equal(ev[0].malformed_bits, DEDUP_HDR_SCOPE);
        dedup_tracker_free(tr);
}

/*
 * The window's bound: part 1 never read, holding every 7th seq of a
 * million; the stream's memory stays within its window (4,096 seqs: 1 KiB
 * of words, 8 KiB of locations), and what falls out of it is confirmed
 * missing early, exactly the seqs part 1 held below it.
 */
static void test_window_bound(void **state)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        struct dedup_hdrs h;
        size_t mem0 = 0, mem1;
        uint64_t missing = 0, held = 0;
        int64_t seq;
        char sbuf[24];

        (void)state;
        dedup_config_defaults(&conf);
        conf.topic_window = 4096;
        tr = dedup_tracker_new(&conf);
        assert_non_null(tr);
        assert_int_equal(dedup_tracker_part_add(tr, 0, 1), 0);
        assert_int_equal(dedup_tracker_part_add(tr, 1, 1), 0);
        assert_int_equal(dedup_tracker_part_set_topic(tr, 0, 0), 0);
        assert_int_equal(dedup_tracker_part_set_topic(tr, 1, 0), 0);
        dedup_tracker_begin(tr, NOW);
        for (seq = 0; seq < 1000000; seq++) {
                if (seq % 7 == 0) {
                        held++;
                        continue;
                }
                dedup_hdrs_init(&h);
                snprintf(sbuf, sizeof(sbuf), "%lld", (long long)seq);
                dedup_hdrs_feed(&h, "eos.producer", 12, "p", 1);
                dedup_hdrs_feed(&h, "eos.epoch", 9, "0", 1);
                dedup_hdrs_feed(&h, "eos.seq", 7, sbuf, strlen(sbuf));
                dedup_hdrs_feed(&h, "eos.scope", 9, "topic", 5);
                h.ts_ms = T0;
                assert_int_equal(dedup_tracker_observe(tr, 0, seq, &h),
                                 DEDUP_V_OK);
                if (seq % 1000 == 1) {
                        dedup_tracker_events_clear(tr);
                        dedup_tracker_dirty_clear(tr);
                }
                if (seq == 100001)
                        mem0 = dedup_tracker_memory(tr);
        }
        mem1 = dedup_tracker_memory(tr);
        /* The window is full from the 4,096th seq on: 900,000 seqs later
         * the tracker holds not one byte more. */
        assert_true(mem0 > 0);
        assert_true(mem1 <= mem0);
        assert_true(dedup_topic_unsettled(tr) <= 4096);
        missing = dedup_tracker_part_counts(tr, 0)->missing +
                  dedup_tracker_part_counts(tr, 1)->missing;
        /* Seqs below the base are settled: the multiples of 7 there. */
        assert_true(missing > 0);
        dedup_tracker_confirm_all(tr);
        missing = dedup_tracker_part_counts(tr, 0)->missing +
                  dedup_tracker_part_counts(tr, 1)->missing;
        /* 999,999 (a multiple of 7) was never shown missing: nothing
         * above it came. */
        assert_int_equal(missing, held - 1);
        dedup_tracker_free(tr);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cases),
            cmocka_unit_test(test_scope_header),
            cmocka_unit_test(test_no_topic),
            cmocka_unit_test(test_window_bound),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
