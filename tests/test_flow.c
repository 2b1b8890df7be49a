/*
 * test_flow.c - the flow lineage engine (dedup/flow.h), table-driven:
 * exact sequences of source and sink records, frontiers and ticks, and
 * the counters they must leave.
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

enum op_kind { OP_END = 0, OP_SRC, OP_SINK, OP_FRONTIER, OP_TICK, OP_FINISH };

struct op {
        enum op_kind k;
        uint32_t part;
        int64_t offset; /* frontier: committed; finish: sources_due */
        int64_t ts;
        const char *id; /* NULL: a record without an id */
};

/* Counters a case must end with, in outcome order. */
struct want {
        uint64_t pending, delivered, lost, duplicated, awaiting, unexpected;
        uint64_t dup_copies, repeats;
};

struct flow_case {
        const char *what;
        enum dedup_flow_expect expect;
        int by_frontier;
        uint64_t due_records;
        int64_t due_ms;
        uint64_t max_ids; /* 0: default */
        struct op ops[16];
        struct want w;
};

#define S(p, o, t, i)                                                         \
        {                                                                     \
                OP_SRC, p, o, t, i                                            \
        }
#define K(p, o, t, i)                                                         \
        {                                                                     \
                OP_SINK, p, o, t, i                                           \
        }
#define FR(p, o)                                                              \
        {                                                                     \
                OP_FRONTIER, p, o, 0, NULL                                    \
        }
#define TICK                                                                  \
        {                                                                     \
                OP_TICK, 0, 0, 0, NULL                                        \
        }
#define FIN(d)                                                                \
        {                                                                     \
                OP_FINISH, 0, d, 0, NULL                                      \
        }

static const struct flow_case cases[] = {
    {"one delivered",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     0,
     0,
     0,
     {S(0, 0, 100, "a"), K(0, 0, 110, "a"), FR(0, 1)},
     {0, 1, 0, 0, 0, 0, 0, 0}},
    {"not yet due stays pending",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     0,
     0,
     0,
     {S(0, 0, 100, "a"), S(0, 1, 100, "b"), K(0, 0, 110, "a"), FR(0, 1)},
     {1, 1, 0, 0, 0, 0, 0, 0}},
    {"due without a copy is lost",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     0,
     0,
     0,
     {S(0, 0, 100, "a"), S(0, 1, 100, "b"), K(0, 0, 110, "a"), FR(0, 2)},
     {0, 1, 1, 0, 0, 0, 0, 0}},
    {"a frontier before the source makes it due on arrival",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     0,
     0,
     0,
     {FR(1, 5), S(1, 3, 100, "x"), S(1, 5, 100, "y")},
     {1, 0, 1, 0, 0, 0, 0, 0}},
    {"lost, then a late copy: delivered",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     0,
     0,
     0,
     {S(0, 0, 100, "a"), FR(0, 1), K(0, 9, 200, "a")},
     {0, 1, 0, 0, 0, 0, 0, 0}},
    {"two copies: duplicated",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     0,
     0,
     0,
     {S(0, 0, 100, "a"), K(0, 0, 110, "a"), K(1, 7, 120, "a"),
      K(1, 8, 130, "a")},
     {0, 0, 0, 1, 0, 0, 2, 0}},
    {"sink before source, then the source",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     0,
     0,
     0,
     {K(0, 0, 110, "a"), S(0, 0, 100, "a"), FIN(0)},
     {0, 1, 0, 0, 0, 0, 0, 0}},
    {"sink-only at the end: unexpected, per sink record",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     0,
     0,
     0,
     {K(0, 0, 110, "z"), K(0, 1, 110, "z"), K(0, 2, 110, "q"), FIN(0)},
     {0, 0, 0, 0, 0, 3, 0, 0}},
    {"sink-only awaits until aged",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     0,
     0,
     0,
     {K(0, 0, 110, "z")},
     {0, 0, 0, 0, 1, 0, 0, 0}},
    {"unexpected turns delivered when its source comes",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     0,
     0,
     0,
     {K(0, 0, 110, "z"), FIN(0), S(0, 4, 90, "z")},
     {0, 1, 0, 0, 0, 0, 0, 0}},
    {"aged by source records",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     2,
     0,
     0,
     {K(0, 0, 110, "z"), S(0, 0, 100, "a"), TICK, S(0, 1, 100, "b"), TICK},
     {2, 0, 0, 0, 0, 1, 0, 0}},
    {"aged by time",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     0,
     50,
     0,
     {K(0, 0, 110, "z"), S(0, 0, 150, "a"), TICK, S(0, 1, 160, "b"), TICK},
     {2, 0, 0, 0, 0, 1, 0, 0}},
    {"no frontier: due after N sink records",
     DEDUP_FLOW_EXACTLY_ONE,
     0,
     2,
     0,
     0,
     {S(0, 0, 100, "a"), S(0, 1, 100, "b"), K(0, 0, 110, "b"), TICK,
      K(0, 1, 110, "c"), TICK, S(0, 2, 100, "c")},
     {0, 2, 1, 0, 0, 0, 0, 0}},
    {"no frontier: due after ms of sink time",
     DEDUP_FLOW_EXACTLY_ONE,
     0,
     0,
     100,
     0,
     {S(0, 0, 100, "a"), S(0, 1, 150, "b"), K(0, 0, 199, "x"), TICK,
      K(0, 1, 200, "y"), TICK},
     {1, 0, 1, 0, 2, 0, 0, 0}},
    {"by frontier: sink progress makes nothing due",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     1,
     0,
     0,
     {S(0, 0, 100, "a"), K(0, 0, 110, "x"), K(0, 1, 110, "y"), TICK},
     {1, 0, 0, 0, 2, 0, 0, 0}},
    {"at-most-one: a filtered record is delivered",
     DEDUP_FLOW_AT_MOST_ONE,
     1,
     0,
     0,
     0,
     {S(0, 0, 100, "a"), S(0, 1, 100, "b"), K(0, 0, 110, "b"),
      K(0, 1, 110, "b"), FR(0, 2)},
     {0, 1, 0, 1, 0, 0, 1, 0}},
    {"at-least-one: fan-out is delivered, none is lost",
     DEDUP_FLOW_AT_LEAST_ONE,
     1,
     0,
     0,
     0,
     {S(0, 0, 100, "a"), S(0, 1, 100, "b"), K(0, 0, 110, "a"),
      K(0, 1, 110, "a"), K(0, 2, 110, "a"), FR(0, 2)},
     {0, 1, 1, 0, 0, 0, 0, 0}},
    {"a repeated source id is one entry",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     0,
     0,
     0,
     {S(0, 0, 100, "a"), S(0, 1, 100, "a"), K(0, 0, 110, "a"), FR(0, 2)},
     {0, 1, 0, 0, 0, 0, 0, 1}},
    {"records without an id are not entries",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     0,
     0,
     0,
     {S(0, 0, 100, NULL), K(0, 0, 110, NULL), FR(0, 1), FIN(1)},
     {0, 0, 0, 0, 0, 0, 0, 0}},
    {"finish with sources due: the rest is lost",
     DEDUP_FLOW_EXACTLY_ONE,
     0,
     0,
     0,
     0,
     {S(0, 0, 100, "a"), S(1, 0, 100, "b"), K(0, 0, 110, "a"), FIN(1)},
     {0, 1, 1, 0, 0, 0, 0, 0}},
    {"retired when full: judged then",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     0,
     0,
     2,
     {S(0, 0, 100, "a"), K(0, 0, 110, "z"), S(0, 1, 100, "b"),
      S(0, 2, 100, "c")},
     {2, 0, 1, 0, 0, 1, 0, 0}},
    {"a copy after its id was retired: revived, duplicated",
     DEDUP_FLOW_EXACTLY_ONE,
     1,
     0,
     0,
     1,
     {S(0, 0, 100, "a"), K(0, 0, 110, "a"), S(0, 1, 100, "b"),
      K(0, 1, 120, "b"), K(0, 2, 130, "a"), FIN(0)},
     {0, 1, 0, 1, 0, 0, 1, 0}},
};

static void run_case(const struct flow_case *c)
{
        struct dedup_flow_config conf;
        struct dedup_flow_stats st;
        uint64_t pend = 0, await = 0;
        struct dedup_flow *fl;
        const struct op *op;

        dedup_flow_config_defaults(&conf);
        conf.expect = c->expect;
        conf.by_frontier = c->by_frontier;
        conf.due_records = c->due_records;
        conf.due_ms = c->due_ms;
        if (c->max_ids)
                conf.max_ids = c->max_ids;
        fl = dedup_flow_new(&conf);
        assert_non_null(fl);
        for (op = c->ops; op->k != OP_END; op++) {
                size_t len = op->id ? strlen(op->id) : 0;
                switch (op->k) {
                case OP_SRC:
                        assert_int_equal(dedup_flow_source(fl, op->part,
                                                           op->offset, op->ts,
                                                           op->id, len),
                                         0);
                        break;
                case OP_SINK:
                        assert_int_equal(dedup_flow_sink(fl, op->part,
                                                         op->offset, op->ts,
                                                         op->id, len),
                                         0);
                        break;
                case OP_FRONTIER:
                        dedup_flow_frontier(fl, op->part, op->offset);
                        break;
                case OP_TICK:
                        dedup_flow_tick(fl);
                        break;
                case OP_FINISH:
                        dedup_flow_finish(fl, (int)op->offset);
                        break;
                case OP_END:
                        break;
                }
        }
        dedup_flow_stats_get(fl, &st);
        if (st.c.outcome[DEDUP_FLOW_PENDING] != c->w.pending ||
            st.c.outcome[DEDUP_FLOW_DELIVERED] != c->w.delivered ||
            st.c.outcome[DEDUP_FLOW_LOST] != c->w.lost ||
            st.c.outcome[DEDUP_FLOW_DUPLICATED] != c->w.duplicated ||
            st.c.outcome[DEDUP_FLOW_AWAITING] != c->w.awaiting ||
            st.c.outcome[DEDUP_FLOW_UNEXPECTED] != c->w.unexpected ||
            st.c.duplicate_copies != c->w.dup_copies ||
            st.source_repeats != c->w.repeats) {
                print_error("case '%s': pending %llu delivered %llu lost %llu "
                            "duplicated %llu awaiting %llu unexpected %llu "
                            "dup_copies %llu repeats %llu\n",
                            c->what, (unsigned long long)st.c.outcome[0],
                            (unsigned long long)st.c.outcome[1],
                            (unsigned long long)st.c.outcome[2],
                            (unsigned long long)st.c.outcome[3],
                            (unsigned long long)st.c.outcome[4],
                            (unsigned long long)st.c.outcome[5],
                            (unsigned long long)st.c.duplicate_copies,
                            (unsigned long long)st.source_repeats);
                fail();
        }
        /* The pacing's accessor says what the stats say. */
        dedup_flow_outstanding(fl, &pend, &await);
        assert_int_equal(pend, c->w.pending);
        assert_int_equal(await, c->w.awaiting);
        dedup_flow_free(fl);
}

static void test_cases(void **state)
{
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                run_case(&cases[i]);
}

/* Evidence: where the source and the sink copies are, and the id. */
struct ev {
        int n;
        struct dedup_flow_view v;
};

static int ev_cb(void *opaque, const struct dedup_flow_view *v)
{
        struct ev *e = opaque;

        e->n++;
        e->v = *v;
        return 0;
}

static void test_evidence(void **state)
{
        struct dedup_flow_config conf;
        struct dedup_flow *fl;
        struct ev e = {0};

        (void)state;
        dedup_flow_config_defaults(&conf);
        conf.by_frontier = 1;
        fl = dedup_flow_new(&conf);
        assert_non_null(fl);
        assert_int_equal(dedup_flow_source(fl, 3, 41, 1000, "order-7", 7), 0);
        assert_int_equal(dedup_flow_sink(fl, 5, 10, 1020, "order-7", 7), 0);
        assert_int_equal(dedup_flow_sink(fl, 6, 77, 1090, "order-7", 7), 0);
        assert_int_equal(dedup_flow_foreach(fl, DEDUP_FLOW_DUPLICATED, ev_cb,
                                            &e),
                         0);
        assert_int_equal(e.n, 1);
        assert_int_equal(e.v.src_part, 3);
        assert_int_equal(e.v.src_offset, 41);
        assert_int_equal(e.v.sink_part, 5);
        assert_int_equal(e.v.sink_offset, 10);
        assert_int_equal(e.v.sink_part_last, 6);
        assert_int_equal(e.v.sink_offset_last, 77);
        assert_int_equal(e.v.copies, 2);
        assert_int_equal(e.v.id_len, 7);
        assert_memory_equal(e.v.id_bytes, "order-7", 7);
        dedup_flow_free(fl);
}

/* Latency: first copy's time minus the source's, p50/p99 by bucket. */
static void test_latency(void **state)
{
        struct dedup_flow_config conf;
        struct dedup_flow_stats st;
        struct dedup_flow *fl;
        char id[16];
        int i;

        (void)state;
        dedup_flow_config_defaults(&conf);
        fl = dedup_flow_new(&conf);
        assert_non_null(fl);
        /* 98 at 7 ms (bucket <= 10), one at 40 ms, one at 3000 ms. */
        for (i = 0; i < 100; i++) {
                int64_t lat = i < 98 ? 7 : (i == 98 ? 40 : 3000);
                snprintf(id, sizeof(id), "r%d", i);
                assert_int_equal(dedup_flow_source(fl, 0, i, 1000, id,
                                                   strlen(id)),
                                 0);
                assert_int_equal(dedup_flow_sink(fl, 0, i, 1000 + lat, id,
                                                 strlen(id)),
                                 0);
                /* a second copy does not count again */
                if (i == 0)
                        assert_int_equal(dedup_flow_sink(fl, 0, 200, 99999, id,
                                                         strlen(id)),
                                         0);
        }
        dedup_flow_stats_get(fl, &st);
        assert_int_equal(st.lat_count, 100);
        assert_int_equal(st.lat_p50_ms, 10);
        assert_int_equal(st.lat_p99_ms, 50);
        assert_int_equal(st.lat_max_ms, 3000);
        dedup_flow_free(fl);
}

/* State and entries written and read back give the same counters, and a
 * restored pending record is still made due by a frontier. */
struct copy {
        struct dedup_flow_view v[64];
        int n;
};

static int copy_cb(void *opaque, const struct dedup_flow_view *v)
{
        struct copy *c = opaque;

        if (c->n < 64)
                c->v[c->n++] = *v;
        return 0;
}

static void test_restore(void **state)
{
        struct dedup_flow_config conf;
        struct dedup_flow_stats a, b;
        struct dedup_flow_state s;
        struct dedup_flow *fl, *f2;
        static struct copy cp;
        size_t nret;
        int i;

        (void)state;
        dedup_flow_config_defaults(&conf);
        conf.by_frontier = 1;
        conf.max_ids = 4;
        fl = dedup_flow_new(&conf);
        assert_non_null(fl);
        assert_int_equal(dedup_flow_source(fl, 0, 0, 10, "a", 1), 0);
        assert_int_equal(dedup_flow_source(fl, 0, 1, 10, "b", 1), 0);
        assert_int_equal(dedup_flow_sink(fl, 0, 0, 20, "b", 1), 0);
        assert_int_equal(dedup_flow_sink(fl, 0, 1, 20, "b", 1), 0);
        assert_int_equal(dedup_flow_sink(fl, 0, 2, 20, "w", 1), 0);
        assert_int_equal(dedup_flow_source(fl, 0, 2, 10, "c", 1), 0);
        assert_int_equal(dedup_flow_source(fl, 0, 3, 10, "d", 1), 0);
        dedup_flow_retired(fl, &nret);
        assert_int_equal(nret, 1); /* "a", lost when retired */
        cp.n = 0;
        assert_int_equal(dedup_flow_foreach(fl, DEDUP_FLOW__OUTCOMES, copy_cb,
                                            &cp),
                         0);
        dedup_flow_state_get(fl, &s);
        dedup_flow_stats_get(fl, &a);

        f2 = dedup_flow_new(&conf);
        assert_non_null(f2);
        dedup_flow_state_set(f2, &s);
        for (i = 0; i < cp.n; i++)
                assert_int_equal(dedup_flow_restore(f2, &cp.v[i]), 0);
        dedup_flow_stats_get(f2, &b);
        assert_memory_equal(&a.c, &b.c, sizeof(a.c));
        assert_int_equal(a.lat_count, b.lat_count);
        /* Restored entries are not dirty; a frontier that makes some due
         * is, though no record came. */
        assert_false(dedup_flow_dirty(f2));
        dedup_flow_dirty_clear(fl);
        assert_false(dedup_flow_dirty(fl));
        dedup_flow_frontier(fl, 0, 4);
        assert_true(dedup_flow_dirty(fl));
        dedup_flow_frontier(f2, 0, 4);
        assert_true(dedup_flow_dirty(f2));
        dedup_flow_stats_get(fl, &a);
        dedup_flow_stats_get(f2, &b);
        assert_memory_equal(&a.c, &b.c, sizeof(a.c));
        assert_int_equal(b.c.outcome[DEDUP_FLOW_LOST], 3); /* a, c, d */
        assert_int_equal(b.c.outcome[DEDUP_FLOW_DUPLICATED], 1);
        assert_int_equal(b.c.outcome[DEDUP_FLOW_AWAITING], 1);
        dedup_flow_free(fl);
        dedup_flow_free(f2);
}

/* Many ids through a small bound: memory stays put, counts stay exact,
 * and the hash table survives deletions (backward shift). */
static void test_bounded(void **state)
{
        struct dedup_flow_config conf;
        struct dedup_flow_stats st;
        struct dedup_flow *fl;
        char id[24];
        size_t mem_mid = 0;
        int i;

        (void)state;
        dedup_flow_config_defaults(&conf);
        conf.by_frontier = 1;
        conf.max_ids = 1000;
        fl = dedup_flow_new(&conf);
        assert_non_null(fl);
        for (i = 0; i < 200000; i++) {
                /* Fixed width: an id's bytes are part of its memory. */
                snprintf(id, sizeof(id), "id-%06d", i);
                assert_int_equal(dedup_flow_source(fl, 0, i, 1, id,
                                                   strlen(id)),
                                 0);
                /* every 10th is never delivered, every 7th twice */
                if (i % 10)
                        assert_int_equal(dedup_flow_sink(fl, 1, i, 2, id,
                                                         strlen(id)),
                                         0);
                if (i % 7 == 0)
                        assert_int_equal(dedup_flow_sink(fl, 1, i, 2, id,
                                                         strlen(id)),
                                         0);
                if (i == 100000)
                        mem_mid = dedup_flow_memory(fl);
                if (i % 1000 == 999)
                        dedup_flow_dirty_clear(fl);
        }
        dedup_flow_frontier(fl, 0, 200000);
        dedup_flow_stats_get(fl, &st);
        assert_true(dedup_flow_memory(fl) <= mem_mid);
        assert_int_equal(st.live, 1000);
        assert_int_equal(st.source_records, 200000);
        /* i%10==0 && i%7==0: one copy, delivered; i%10==0 only: lost;
         * i%7==0 only: two copies, duplicated. */
        assert_int_equal(st.c.outcome[DEDUP_FLOW_LOST], 20000 - 2858);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DUPLICATED], 28572 - 2858);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DELIVERED],
                         200000 - (20000 - 2858) - (28572 - 2858));
        assert_int_equal(st.c.outcome[DEDUP_FLOW_UNEXPECTED], 0);
        print_message("flow: %zu bytes per live id (%zu measured at 1000 "
                      "live)\n",
                      dedup_flow_entry_bytes(), dedup_flow_memory(fl) / 1000);
        dedup_flow_free(fl);
}

/* A scan's flow (sinks_at_finish) keeps a copy read before its source
 * awaiting however far the sources move, and judges it at the end; the
 * same reads without it age the copy unexpected on the way. */
static void test_sinks_at_finish(void **state)
{
        struct dedup_flow_stats st;
        char id[16];
        int at_finish, i;

        (void)state;
        for (at_finish = 0; at_finish < 2; at_finish++) {
                struct dedup_flow_config fc;
                struct dedup_flow *fl;
                dedup_flow_config_defaults(&fc);
                fc.by_frontier = 1;
                fc.due_records = 10;
                fc.due_ms = 0;
                fc.sinks_at_finish = at_finish;
                fl = dedup_flow_new(&fc);
                assert_non_null(fl);
                assert_int_equal(dedup_flow_sink(fl, 0, 0, 1000, "x", 1), 0);
                assert_int_equal(dedup_flow_sink(fl, 0, 1, 1000, "y", 1), 0);
                for (i = 0; i < 50; i++) {
                        snprintf(id, sizeof(id), "s%d", i);
                        assert_int_equal(dedup_flow_source(fl, 1, i, 900, id,
                                                           strlen(id)),
                                         0);
                        assert_int_equal(dedup_flow_sink(fl, 0, 2 + i, 1000,
                                                         id, strlen(id)),
                                         0);
                }
                dedup_flow_tick(fl);
                dedup_flow_stats_get(fl, &st);
                assert_int_equal(st.c.outcome[DEDUP_FLOW_AWAITING],
                                 at_finish ? 2 : 0);
                assert_int_equal(st.c.outcome[DEDUP_FLOW_UNEXPECTED],
                                 at_finish ? 0 : 2);
                /* x's source comes late: delivered either way. */
                assert_int_equal(dedup_flow_source(fl, 1, 50, 900, "x", 1), 0);
                dedup_flow_finish(fl, 0);
                dedup_flow_stats_get(fl, &st);
                assert_int_equal(st.c.outcome[DEDUP_FLOW_AWAITING], 0);
                assert_int_equal(st.c.outcome[DEDUP_FLOW_UNEXPECTED], 1);
                assert_int_equal(st.c.outcome[DEDUP_FLOW_DELIVERED], 51);
                dedup_flow_free(fl);
        }
}

static void test_names(void **state)
{
        enum dedup_flow_expect e;
        enum dedup_flow_outcome o;

        (void)state;
        assert_int_equal(dedup_flow_expect_parse("at-least-one", &e), 0);
        assert_int_equal(e, DEDUP_FLOW_AT_LEAST_ONE);
        assert_int_equal(dedup_flow_expect_parse("exactly_once", &e), -1);
        assert_string_equal(dedup_flow_expect_name(DEDUP_FLOW_AT_MOST_ONE),
                            "at-most-one");
        assert_int_equal(dedup_flow_outcome_parse("unexpected", &o), 0);
        assert_int_equal(o, DEDUP_FLOW_UNEXPECTED);
        assert_null(dedup_flow_outcome_name(DEDUP_FLOW__OUTCOMES));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cases),
            cmocka_unit_test(test_evidence),
            cmocka_unit_test(test_latency),
            cmocka_unit_test(test_restore),
            cmocka_unit_test(test_bounded),
            cmocka_unit_test(test_names),
            cmocka_unit_test(test_sinks_at_finish),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
