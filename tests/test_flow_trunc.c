/*
 * test_flow_trunc.c - the flow engine told of a truncated source or sink
 * partition (dedup/flow.h, dedup_flow_truncated(), issue 34), with the
 * exact record sequences: source ids 1..n at source part 0 offsets
 * 0..n-1, their copies at sink part 1 (or 2) offsets of the test's
 * choosing.  A small in-memory store stands in for the ledger where
 * entries are retired or persisted (as test_flow_spill.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../dedup/flow.h"

#define SRC 0u
#define SINK 1u
#define SINK2 2u
#define MAXSEQ 256

static void id_of(int i, char *b, size_t n)
{
        snprintf(b, n, "id-%d", i);
}

/* Source record i at source offset off. */
static void src_at(struct dedup_flow *fl, int i, int64_t off)
{
        char id[32];

        id_of(i, id, sizeof(id));
        assert_int_equal(dedup_flow_source(fl, SRC, off, 1000 + i, id,
                                           strlen(id)),
                         0);
}

static void src(struct dedup_flow *fl, int i)
{
        src_at(fl, i, i - 1);
}

/* A copy of source record i at sink part, offset. */
static void copy(struct dedup_flow *fl, int i, uint32_t part, int64_t off)
{
        char id[32];

        id_of(i, id, sizeof(id));
        assert_int_equal(dedup_flow_sink(fl, part, off, 2000 + i, id,
                                         strlen(id)),
                         0);
}

static struct dedup_flow *flow_new(int by_frontier, uint64_t due_records,
                                   uint64_t max_ids)
{
        struct dedup_flow_config c;
        struct dedup_flow *fl;

        dedup_flow_config_defaults(&c);
        c.by_frontier = by_frontier;
        c.due_records = due_records;
        c.due_ms = 0;
        c.max_ids = max_ids;
        fl = dedup_flow_new(&c);
        assert_non_null(fl);
        return fl;
}

static uint64_t count(struct dedup_flow *fl, enum dedup_flow_outcome o)
{
        struct dedup_flow_stats st;

        dedup_flow_stats_get(fl, &st);
        return st.c.outcome[o];
}

static void truncate_at(struct dedup_flow *fl, enum dedup_flow_side side,
                        uint32_t part, int64_t d, uint64_t want_changed)
{
        uint64_t changed = 99;

        assert_int_equal(dedup_flow_truncated(fl, side, part, d, &changed), 0);
        assert_int_equal(changed, want_changed);
}

/* The views of one outcome, by id number (the id's digits). */
struct seen {
        int ids[64];
        int n;
        struct dedup_flow_view last;
};

static int seen_cb(void *opaque, const struct dedup_flow_view *v)
{
        struct seen *s = opaque;
        char b[DEDUP_FLOW_ID_KEEP + 1], *end;
        size_t n = v->id_len < DEDUP_FLOW_ID_KEEP ? v->id_len
                                                  : DEDUP_FLOW_ID_KEEP;

        assert_true(s->n < 64);
        assert_true(n > 3);
        memcpy(b, v->id_bytes, n);
        b[n] = 0;
        s->ids[s->n++] = (int)strtol(b + 3, &end, 10);
        assert_true(*end == 0);
        s->last = *v;
        return 0;
}

static struct seen seen_of(struct dedup_flow *fl, enum dedup_flow_outcome o)
{
        struct seen s;

        memset(&s, 0, sizeof(s));
        assert_int_equal(dedup_flow_foreach(fl, o, seen_cb, &s), 0);
        return s;
}

/* 1..10 copied to sink offsets 0..9, all due; the sink truncated at 6. */
static struct dedup_flow *ten_truncated(int by_frontier, uint64_t due_records)
{
        struct dedup_flow *fl = flow_new(by_frontier, due_records, 1000);
        struct seen s;
        int i;

        for (i = 1; i <= 10; i++) {
                src(fl, i);
                copy(fl, i, SINK, i - 1);
        }
        dedup_flow_frontier(fl, SRC, 10);
        assert_int_equal(count(fl, DEDUP_FLOW_DELIVERED), 10);
        dedup_flow_dirty_clear(fl);
        truncate_at(fl, DEDUP_FLOW_SIDE_SINK, SINK, 6, 4);
        assert_int_equal(count(fl, DEDUP_FLOW_DELIVERED), 6);
        assert_int_equal(count(fl, DEDUP_FLOW_PENDING), 4);
        assert_int_equal(count(fl, DEDUP_FLOW_LOST), 0);
        s = seen_of(fl, DEDUP_FLOW_PENDING);
        assert_int_equal(s.n, 4);
        for (i = 0; i < 4; i++)
                assert_int_equal(s.ids[i], 7 + i);
        assert_int_equal(s.last.copies, 0);
        assert_int_equal(s.last.sink_offset, -1);
        assert_false(s.last.due);
        assert_true(dedup_flow_dirty(fl));
        return fl;
}

/* Copied again: delivered once, no duplicate, nothing lost. */
static void test_sink_recopied(void **state)
{
        struct dedup_flow *fl = ten_truncated(1, 0);
        struct dedup_flow_stats st;
        int i;

        (void)state;
        for (i = 7; i <= 10; i++)
                copy(fl, i, SINK, i - 1);
        dedup_flow_frontier(fl, SRC, 10);
        dedup_flow_finish(fl, 1);
        dedup_flow_stats_get(fl, &st);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DELIVERED], 10);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DUPLICATED], 0);
        assert_int_equal(st.c.duplicate_copies, 0);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_LOST], 0);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_PENDING], 0);
        assert_int_equal(st.source_records, 10);
        dedup_flow_free(fl);
}

/* Not copied again: lost at the next frontier applied (the same one). */
static void test_sink_lost_by_frontier(void **state)
{
        struct dedup_flow *fl = ten_truncated(1, 0);
        struct seen s;
        int i;

        (void)state;
        dedup_flow_tick(fl); /* by frontier only: nothing due */
        assert_int_equal(count(fl, DEDUP_FLOW_PENDING), 4);
        dedup_flow_frontier(fl, SRC, 10);
        assert_int_equal(count(fl, DEDUP_FLOW_LOST), 4);
        assert_int_equal(count(fl, DEDUP_FLOW_PENDING), 0);
        s = seen_of(fl, DEDUP_FLOW_LOST);
        for (i = 0; i < 4; i++)
                assert_int_equal(s.ids[i], 7 + i);
        /* A copy written late still turns it delivered. */
        copy(fl, 8, SINK, 6);
        assert_int_equal(count(fl, DEDUP_FLOW_LOST), 3);
        assert_int_equal(count(fl, DEDUP_FLOW_DELIVERED), 7);
        dedup_flow_free(fl);
}

/* Without a frontier: due_records counted from the truncation. */
static void test_sink_lost_by_records(void **state)
{
        struct dedup_flow *fl = ten_truncated(0, 5);
        int i;

        (void)state;
        dedup_flow_tick(fl);
        assert_int_equal(count(fl, DEDUP_FLOW_PENDING), 4);
        for (i = 11; i <= 14; i++) {
                src(fl, i);
                copy(fl, i, SINK, i - 5); /* the log goes on from 6 */
        }
        dedup_flow_tick(fl);
        assert_int_equal(count(fl, DEDUP_FLOW_PENDING), 4);
        assert_int_equal(count(fl, DEDUP_FLOW_LOST), 0);
        src(fl, 15);
        copy(fl, 15, SINK, 10);
        dedup_flow_tick(fl);
        assert_int_equal(count(fl, DEDUP_FLOW_LOST), 4);
        assert_int_equal(count(fl, DEDUP_FLOW_DELIVERED), 11);
        dedup_flow_free(fl);
}

/* Two copies: both ends known. */
static void test_sink_two_copies(void **state)
{
        struct dedup_flow *fl = flow_new(1, 0, 1000);
        struct dedup_flow_view v;
        struct seen s;

        (void)state;
        /* 1: p1:0 and p1:5 (one left); 2: p1:4 and p1:6 (none left);
         * 3: p2:0 and p1:7 (the first left); 4: p1:1, p1:2 (both left). */
        src(fl, 1);
        src(fl, 2);
        src(fl, 3);
        src(fl, 4);
        copy(fl, 1, SINK, 0);
        copy(fl, 4, SINK, 1);
        copy(fl, 4, SINK, 2);
        copy(fl, 3, SINK2, 0);
        copy(fl, 2, SINK, 4);
        copy(fl, 1, SINK, 5);
        copy(fl, 2, SINK, 6);
        copy(fl, 3, SINK, 7);
        dedup_flow_frontier(fl, SRC, 4);
        assert_int_equal(count(fl, DEDUP_FLOW_DUPLICATED), 4);
        dedup_flow_dirty_clear(fl); /* evidence of the 4 persisted */
        truncate_at(fl, DEDUP_FLOW_SIDE_SINK, SINK, 3, 3);
        assert_int_equal(count(fl, DEDUP_FLOW_DUPLICATED), 1); /* 4 */
        assert_int_equal(count(fl, DEDUP_FLOW_DELIVERED), 2);  /* 1, 3 */
        assert_int_equal(count(fl, DEDUP_FLOW_PENDING), 1);    /* 2 */
        s = seen_of(fl, DEDUP_FLOW_DELIVERED);
        assert_int_equal(s.n, 2);
        assert_int_equal(s.ids[0], 1);
        assert_int_equal(s.ids[1], 3);
        v = s.last; /* 3: its first copy, on the other part, is left */
        assert_int_equal(v.copies, 1);
        assert_int_equal(v.sink_part, SINK2);
        assert_int_equal(v.sink_part_last, SINK2);
        assert_int_equal(v.sink_offset_last, 0);
        assert_false(v.prior);
        /* Their evidence is taken back: evid set, outcome no longer bad. */
        assert_true(v.evid);
        /* 1 copied again at 3: two copies now, a real duplicate. */
        copy(fl, 1, SINK, 3);
        assert_int_equal(count(fl, DEDUP_FLOW_DUPLICATED), 2);
        /* 2 copied again once: delivered. */
        copy(fl, 2, SINK, 4);
        assert_int_equal(count(fl, DEDUP_FLOW_PENDING), 0);
        assert_int_equal(count(fl, DEDUP_FLOW_DELIVERED), 2);
        dedup_flow_free(fl);
}

/* More than two copies: the copies between are unknown. */
static void test_sink_unknowable(void **state)
{
        struct dedup_flow *fl = flow_new(1, 0, 1000);
        struct dedup_flow_stats st;
        struct seen s;

        (void)state;
        /* 1: p1:4, p1:5, p1:6: both ends gone, the middle unknown (it
         * could have been on p2): prior, delivered, never lost.
         * 2: p2:0, p1:7, p1:8: the first left, the last gone: one kept.
         * 3: p2:1, p1:1, p1:2: the last below 3 on p1: nothing gone. */
        src(fl, 1);
        src(fl, 2);
        src(fl, 3);
        copy(fl, 3, SINK2, 1);
        copy(fl, 3, SINK, 1);
        copy(fl, 3, SINK, 2);
        copy(fl, 1, SINK, 4);
        copy(fl, 1, SINK, 5);
        copy(fl, 1, SINK, 6);
        copy(fl, 2, SINK2, 0);
        copy(fl, 2, SINK, 7);
        copy(fl, 2, SINK, 8);
        dedup_flow_frontier(fl, SRC, 3);
        dedup_flow_stats_get(fl, &st);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DUPLICATED], 3);
        assert_int_equal(st.c.duplicate_copies, 6);
        truncate_at(fl, DEDUP_FLOW_SIDE_SINK, SINK, 3, 2);
        dedup_flow_stats_get(fl, &st);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DUPLICATED], 1); /* 3 */
        assert_int_equal(st.c.duplicate_copies, 2);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DELIVERED], 2);
        s = seen_of(fl, DEDUP_FLOW_DELIVERED);
        assert_int_equal(s.ids[0], 1);
        assert_int_equal(s.ids[1], 2);
        assert_true(s.last.prior);
        assert_int_equal(s.last.copies, 1);
        assert_int_equal(s.last.sink_part, SINK2);
        /* No frontier, nor the scan's end, makes 1 lost. */
        dedup_flow_frontier(fl, SRC, 3);
        dedup_flow_finish(fl, 1);
        assert_int_equal(count(fl, DEDUP_FLOW_LOST), 0);
        /* 1 copied again: its first copy counted (delivered, not
         * duplicated); 2 copied again: two known copies, a duplicate. */
        copy(fl, 1, SINK, 3);
        copy(fl, 2, SINK, 4);
        dedup_flow_stats_get(fl, &st);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DELIVERED], 1);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DUPLICATED], 2);
        assert_int_equal(st.c.duplicate_copies, 3);
        dedup_flow_free(fl);
}

/* The source truncated: outstanding records are not due, never lost. */
static void test_source_truncated(void **state)
{
        struct dedup_flow *fl = flow_new(1, 0, 1000);
        struct dedup_flow_stats st;
        struct seen s;
        int i;

        (void)state;
        for (i = 1; i <= 10; i++)
                src(fl, i);
        for (i = 1; i <= 5; i++)
                copy(fl, i, SINK, i - 1);
        copy(fl, 9, SINK, 5);
        dedup_flow_frontier(fl, SRC, 8); /* 6, 7, 8 lost; 10 pending */
        assert_int_equal(count(fl, DEDUP_FLOW_LOST), 3);
        assert_int_equal(count(fl, DEDUP_FLOW_PENDING), 1);
        dedup_flow_dirty_clear(fl);
        /* Offsets 7.. gone: 8 (lost) and 10 (pending) are gone, 9 keeps
         * its copy, 6 and 7 (offsets 5, 6) stay lost. */
        truncate_at(fl, DEDUP_FLOW_SIDE_SOURCE, SRC, 7, 2);
        assert_int_equal(count(fl, DEDUP_FLOW_LOST), 2);
        assert_int_equal(count(fl, DEDUP_FLOW_PENDING), 2);
        assert_int_equal(count(fl, DEDUP_FLOW_DELIVERED), 6);
        s = seen_of(fl, DEDUP_FLOW_PENDING);
        assert_int_equal(s.n, 2);
        assert_int_equal(s.ids[0], 8);
        assert_int_equal(s.ids[1], 10);
        assert_true(s.last.gone);
        assert_false(s.last.due);
        /* 8 was lost: its view says pending now, with evid set. */
        assert_true(dedup_flow_dirty(fl));
        dedup_flow_frontier(fl, SRC, 10);
        dedup_flow_finish(fl, 1);
        assert_int_equal(count(fl, DEDUP_FLOW_LOST), 2);
        assert_int_equal(count(fl, DEDUP_FLOW_PENDING), 2);
        /* A copy of 8 read late was made before the truncation. */
        copy(fl, 8, SINK, 6);
        assert_int_equal(count(fl, DEDUP_FLOW_DELIVERED), 7);
        assert_int_equal(count(fl, DEDUP_FLOW_UNEXPECTED), 0);
        assert_int_equal(count(fl, DEDUP_FLOW_PENDING), 1);
        /* 10 written again at offset 7: a source record again, not a
         * repeat; below the frontier: lost without its copy. */
        src_at(fl, 10, 7);
        dedup_flow_stats_get(fl, &st);
        assert_int_equal(st.source_repeats, 0);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_PENDING], 0);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_LOST], 3);
        assert_int_equal(st.source_records, 10);
        copy(fl, 10, SINK, 7);
        assert_int_equal(count(fl, DEDUP_FLOW_LOST), 2);
        assert_int_equal(count(fl, DEDUP_FLOW_DELIVERED), 8);
        dedup_flow_free(fl);
}

/* A record written again past a source truncation is due by a frontier
 * applied after it, not by the old one. */
static void test_source_frontier_back(void **state)
{
        struct dedup_flow *fl = flow_new(1, 0, 1000);

        (void)state;
        src(fl, 1);
        dedup_flow_frontier(fl, SRC, 5);
        assert_int_equal(count(fl, DEDUP_FLOW_LOST), 1);
        truncate_at(fl, DEDUP_FLOW_SIDE_SOURCE, SRC, 0, 1);
        assert_int_equal(count(fl, DEDUP_FLOW_LOST), 0);
        src_at(fl, 2, 0);
        assert_int_equal(count(fl, DEDUP_FLOW_PENDING), 2);
        dedup_flow_frontier(fl, SRC, 1);
        assert_int_equal(count(fl, DEDUP_FLOW_LOST), 1);
        assert_int_equal(count(fl, DEDUP_FLOW_PENDING), 1); /* 1, gone */
        dedup_flow_free(fl);
}

/* ------------------------------------------------------------------ */
/* Retired entries and a restart                                      */
/* ------------------------------------------------------------------ */

struct row {
        struct dedup_flow_view v;
        int used, live;
};

struct store {
        struct row rows[MAXSEQ];
};

static int put_cb(void *opaque, const struct dedup_flow_view *v)
{
        struct store *s = opaque;

        assert_true(v->seq < MAXSEQ);
        s->rows[v->seq].v = *v;
        s->rows[v->seq].used = 1;
        s->rows[v->seq].live = 1;
        return 0;
}

static void commit(struct dedup_flow *fl, struct store *s)
{
        const struct dedup_flow_view *r;
        size_t n, i;

        r = dedup_flow_retired(fl, &n);
        for (i = 0; i < n; i++) {
                assert_true(r[i].seq < MAXSEQ);
                s->rows[r[i].seq].v = r[i];
                s->rows[r[i].seq].used = 1;
                s->rows[r[i].seq].live = 0;
        }
        assert_int_equal(dedup_flow_dirty_foreach(fl, put_cb, s), 0);
        dedup_flow_dirty_clear(fl);
}

static int lookup_cb(void *opaque, const struct dedup_id *id,
                     struct dedup_flow_view *out)
{
        struct store *s = opaque;
        size_t k;

        for (k = 0; k < MAXSEQ; k++)
                if (s->rows[k].used && !s->rows[k].live &&
                    s->rows[k].v.id.lo == id->lo &&
                    s->rows[k].v.id.hi == id->hi) {
                        *out = s->rows[k].v;
                        return 1;
                }
        return 0;
}

/* What the ledger does after dedup_flow_truncated(): its retired rows. */
static uint64_t store_truncated(struct dedup_flow *fl, struct store *s,
                                enum dedup_flow_side side, uint32_t part,
                                int64_t d)
{
        uint64_t n = 0;
        size_t k;
        int r;

        for (k = 0; k < MAXSEQ; k++) {
                if (!s->rows[k].used || s->rows[k].live)
                        continue;
                r = dedup_flow_retired_truncated(fl, side, part, d,
                                                 &s->rows[k].v);
                assert_true(r >= 0);
                n += (uint64_t)r;
        }
        return n;
}

/* 1..10 through a bound of 4: 1..6 retired delivered (persisted), then
 * the sink truncated at 2 (copies of 3..10 gone). */
static void test_spilled(void **state)
{
        struct dedup_flow *fl = flow_new(1, 0, 4);
        static struct store s;
        struct dedup_flow_stats st;
        int i;

        (void)state;
        memset(&s, 0, sizeof(s));
        dedup_flow_set_lookup(fl, lookup_cb, &s);
        for (i = 1; i <= 10; i++) {
                src(fl, i);
                copy(fl, i, SINK, i - 1);
        }
        dedup_flow_frontier(fl, SRC, 10);
        commit(fl, &s);
        dedup_flow_stats_get(fl, &st);
        assert_int_equal(st.live, 4);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DELIVERED], 10);
        truncate_at(fl, DEDUP_FLOW_SIDE_SINK, SINK, 2, 4); /* 7..10 live */
        assert_int_equal(store_truncated(fl, &s, DEDUP_FLOW_SIDE_SINK, SINK,
                                         2),
                         4); /* 3..6 */
        /* Again: the engine's views (in its retired list) are newer. */
        assert_int_equal(store_truncated(fl, &s, DEDUP_FLOW_SIDE_SINK, SINK,
                                         2),
                         0);
        dedup_flow_stats_get(fl, &st);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DELIVERED], 2);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_LOST], 4); /* retired */
        assert_int_equal(st.c.outcome[DEDUP_FLOW_PENDING], 4);
        commit(fl, &s);
        /* Copied again: every one revived or live is delivered once. */
        for (i = 3; i <= 10; i++)
                copy(fl, i, SINK, i - 1);
        commit(fl, &s);
        dedup_flow_frontier(fl, SRC, 10);
        dedup_flow_stats_get(fl, &st);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DELIVERED], 10);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_LOST], 0);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DUPLICATED], 0);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_PENDING], 0);
        dedup_flow_free(fl);
}

/* Retired since the last commit (in the engine's retired list): the
 * engine corrects them itself. */
static void test_spilled_unpersisted(void **state)
{
        struct dedup_flow *fl = flow_new(1, 0, 2);
        struct dedup_flow_stats st;
        const struct dedup_flow_view *r;
        size_t n;
        int i;

        (void)state;
        for (i = 1; i <= 4; i++) {
                src(fl, i);
                copy(fl, i, SINK, i - 1);
                copy(fl, i, SINK, 10 + i); /* duplicated */
        }
        dedup_flow_frontier(fl, SRC, 4);
        r = dedup_flow_retired(fl, &n);
        assert_int_equal(n, 2); /* 1, 2 */
        dedup_flow_stats_get(fl, &st);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DUPLICATED], 4);
        truncate_at(fl, DEDUP_FLOW_SIDE_SINK, SINK, 10, 4);
        r = dedup_flow_retired(fl, &n);
        assert_int_equal(n, 4); /* 1, 2, then their new views */
        assert_int_equal(r[2].outcome, DEDUP_FLOW_DELIVERED);
        assert_int_equal(r[2].copies, 1);
        assert_true(r[2].evid);
        dedup_flow_stats_get(fl, &st);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DUPLICATED], 0);
        assert_int_equal(st.c.duplicate_copies, 0);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DELIVERED], 4);
        dedup_flow_free(fl);
}

static int all_cb(void *opaque, const struct dedup_flow_view *v)
{
        struct store *s = opaque;

        return put_cb(s, v);
}

/* State persisted after truncations and loaded again: the same figures,
 * and the same after the same records. */
static void test_restart(void **state)
{
        static struct store s;
        struct dedup_flow *fl = flow_new(1, 0, 1000), *f2;
        struct dedup_flow_state fs;
        struct dedup_flow_stats a, b;
        size_t k;
        int i;

        (void)state;
        memset(&s, 0, sizeof(s));
        for (i = 1; i <= 10; i++)
                src(fl, i);
        for (i = 1; i <= 8; i++)
                copy(fl, i, SINK, i - 1);
        copy(fl, 1, SINK, 20);
        copy(fl, 2, SINK, 21);
        copy(fl, 2, SINK, 22);
        dedup_flow_frontier(fl, SRC, 10);
        truncate_at(fl, DEDUP_FLOW_SIDE_SINK, SINK, 5, 5);  /* 6, 7, 8; 1; 2 */
        truncate_at(fl, DEDUP_FLOW_SIDE_SOURCE, SRC, 9, 1); /* 10 */
        commit(fl, &s);
        assert_int_equal(dedup_flow_foreach(fl, DEDUP_FLOW__OUTCOMES, all_cb,
                                            &s),
                         0);
        dedup_flow_state_get(fl, &fs);
        dedup_flow_stats_get(fl, &a);
        assert_int_equal(a.c.outcome[DEDUP_FLOW_PENDING], 4); /* 6 7 8 10 */
        assert_int_equal(a.c.outcome[DEDUP_FLOW_LOST], 1);    /* 9 */
        assert_int_equal(a.c.outcome[DEDUP_FLOW_DELIVERED], 5);

        f2 = flow_new(1, 0, 1000);
        dedup_flow_state_set(f2, &fs);
        for (k = 0; k < MAXSEQ; k++)
                if (s.rows[k].used && s.rows[k].live)
                        assert_int_equal(dedup_flow_restore(f2, &s.rows[k].v),
                                         0);
        dedup_flow_stats_get(f2, &b);
        assert_memory_equal(&a.c, &b.c, sizeof(a.c));
        /* The same records on both: 6 copied again, 2 copied again (two
         * known copies: duplicated), a late copy of 10, the frontier. */
        copy(fl, 6, SINK, 5);
        copy(f2, 6, SINK, 5);
        copy(fl, 2, SINK, 6);
        copy(f2, 2, SINK, 6);
        copy(fl, 10, SINK, 7);
        copy(f2, 10, SINK, 7);
        dedup_flow_frontier(fl, SRC, 10);
        dedup_flow_frontier(f2, SRC, 10);
        dedup_flow_stats_get(fl, &a);
        dedup_flow_stats_get(f2, &b);
        assert_memory_equal(&a.c, &b.c, sizeof(a.c));
        assert_int_equal(b.c.outcome[DEDUP_FLOW_LOST], 3); /* 7 8 9 */
        assert_int_equal(b.c.outcome[DEDUP_FLOW_DUPLICATED], 1);
        assert_int_equal(b.c.outcome[DEDUP_FLOW_PENDING], 0);
        assert_int_equal(b.c.outcome[DEDUP_FLOW_DELIVERED], 6);
        dedup_flow_free(fl);
        dedup_flow_free(f2);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_sink_recopied),
            cmocka_unit_test(test_sink_lost_by_frontier),
            cmocka_unit_test(test_sink_lost_by_records),
            cmocka_unit_test(test_sink_two_copies),
            cmocka_unit_test(test_sink_unknowable),
            cmocka_unit_test(test_source_truncated),
            cmocka_unit_test(test_source_frontier_back),
            cmocka_unit_test(test_spilled),
            cmocka_unit_test(test_spilled_unpersisted),
            cmocka_unit_test(test_restart),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
