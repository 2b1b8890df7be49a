/*
 * test_flow_spill.c - the flow engine past its bound (dedup/flow.h,
 * "Bounded memory"): entries retired past max_ids are revived when their
 * copy or source comes later, so the final counts are the unbounded
 * engine's whatever the bound and whichever side runs ahead.  A small
 * in-memory store stands in for the ledger: it keeps what each "commit"
 * writes (retired rows live = 0, dirty ones live = 1, by seq) and answers
 * the engine's lookups as auditor/ledger/flow.c does.
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

#define N 3000
#define MAXSEQ (4 * N + 16)

struct row {
        struct dedup_flow_view v;
        int used, live;
};

struct store {
        struct row rows[MAXSEQ];
        uint64_t lookups;
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

/* The ledger's commit: retired first, then the dirty ones. */
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

/* The ledger's lookup: the latest retired row of id. */
static int lookup_cb(void *opaque, const struct dedup_id *id,
                     struct dedup_flow_view *out)
{
        struct store *s = opaque;
        size_t k;

        s->lookups++;
        for (k = MAXSEQ; k-- > 0;)
                if (s->rows[k].used && !s->rows[k].live &&
                    s->rows[k].v.id.lo == id->lo &&
                    s->rows[k].v.id.hi == id->hi) {
                        *out = s->rows[k].v;
                        return 1;
                }
        return 0;
}

enum order { SOURCE_AHEAD, SINK_AHEAD, SKEWED };

/* Record i: every 97th is never delivered (a real loss), every 89th is
 * delivered twice (a real duplicate); "x<i>" ids are sink records no
 * source has (really unexpected). */
static void id_of(int i, char *b, size_t n)
{
        snprintf(b, n, "msg-%d", i);
}

static void do_src(struct dedup_flow *fl, int i)
{
        char id[32];

        id_of(i, id, sizeof(id));
        assert_int_equal(dedup_flow_source(fl, (uint32_t)(i % 3), i / 3,
                                           1000 + i, id, strlen(id)),
                         0);
}

/* The sink records of source record i (0, 1 or 2), plus a stray one
 * every 500. */
static void do_sink(struct dedup_flow *fl, int i)
{
        char id[32];
        int c = i % 97 == 0 ? 0 : i % 89 == 0 ? 2 : 1, k;

        id_of(i, id, sizeof(id));
        for (k = 0; k < c; k++)
                assert_int_equal(dedup_flow_sink(fl, 0, 2 * i + k, 1005 + i,
                                                 id, strlen(id)),
                                 0);
        if (i % 500 == 7) {
                snprintf(id, sizeof(id), "x%d", i);
                assert_int_equal(dedup_flow_sink(fl, 1, i, 1005 + i, id,
                                                 strlen(id)),
                                 0);
        }
}

static void run(struct dedup_flow *fl, struct store *s, enum order o,
                uint64_t max_ids)
{
        int i, j = 0;

        for (i = 0; i < N; i++) {
                switch (o) {
                case SOURCE_AHEAD:
                        do_src(fl, i);
                        break;
                case SINK_AHEAD:
                        do_sink(fl, i);
                        break;
                case SKEWED:
                        /* sources run ahead in bursts, then the sinks
                         * catch up */
                        do_src(fl, i);
                        if (i % 700 == 699)
                                for (; j <= i - 50; j++)
                                        do_sink(fl, j);
                        break;
                }
                if (s && i % 64 == 63)
                        commit(fl, s);
                if (max_ids) {
                        struct dedup_flow_stats st;
                        dedup_flow_stats_get(fl, &st);
                        assert_true(st.live <= max_ids);
                }
        }
        for (i = 0; i < N; i++) {
                if (o == SOURCE_AHEAD)
                        do_sink(fl, i);
                else if (o == SINK_AHEAD)
                        do_src(fl, i);
                else if (i >= j)
                        do_sink(fl, i);
                if (s && i % 64 == 63)
                        commit(fl, s);
        }
        for (i = 0; i < 3; i++)
                dedup_flow_frontier(fl, (uint32_t)i, N);
        dedup_flow_finish(fl, 0);
        if (s)
                commit(fl, s);
}

static int live_cb(void *opaque, const struct dedup_flow_view *v)
{
        struct dedup_flow_counts *c = opaque;

        c->outcome[v->outcome] += v->src_seen ? 1 : v->copies;
        if (v->outcome == DEDUP_FLOW_DUPLICATED)
                c->duplicate_copies += v->copies - 1;
        return 0;
}

static void check_order(enum order o)
{
        static const uint64_t bounds[] = {1, 7, 100, 1000};
        struct dedup_flow_config conf;
        struct dedup_flow_stats want, got, back;
        struct dedup_flow_state fs;
        struct dedup_flow_counts live;
        struct dedup_flow *fl, *f2;
        struct store *s;
        size_t b, k;
        unsigned u;

        dedup_flow_config_defaults(&conf);
        conf.by_frontier = 1;
        conf.max_ids = 10 * N;
        fl = dedup_flow_new(&conf);
        assert_non_null(fl);
        run(fl, NULL, o, 0);
        dedup_flow_stats_get(fl, &want);
        dedup_flow_free(fl);
        /* The oracle: what the records say. */
        assert_int_equal(want.source_records, N);
        assert_int_equal(want.c.outcome[DEDUP_FLOW_LOST], (N + 96) / 97);
        assert_int_equal(want.c.outcome[DEDUP_FLOW_DUPLICATED],
                         (N + 88) / 89 - 1); /* 0 is a loss */
        assert_int_equal(want.c.outcome[DEDUP_FLOW_UNEXPECTED], N / 500);
        assert_int_equal(want.c.outcome[DEDUP_FLOW_PENDING], 0);

        for (b = 0; b < sizeof(bounds) / sizeof(bounds[0]); b++) {
                s = calloc(1, sizeof(*s));
                assert_non_null(s);
                conf.max_ids = bounds[b];
                fl = dedup_flow_new(&conf);
                assert_non_null(fl);
                dedup_flow_set_lookup(fl, lookup_cb, s);
                run(fl, s, o, bounds[b]);
                assert_false(dedup_flow_failed(fl));
                dedup_flow_stats_get(fl, &got);
                if (memcmp(&want.c, &got.c, sizeof(want.c))) {
                        print_error("order %d max_ids %llu: delivered %llu "
                                    "lost %llu dup %llu unexpected %llu\n",
                                    (int)o, (unsigned long long)bounds[b],
                                    (unsigned long long)got.c.outcome[1],
                                    (unsigned long long)got.c.outcome[2],
                                    (unsigned long long)got.c.outcome[3],
                                    (unsigned long long)got.c.outcome[5]);
                        fail();
                }
                assert_int_equal(got.source_records, N);
                assert_int_equal(got.lat_count, want.lat_count);
                assert_true(got.live <= bounds[b]);
                if (bounds[b] < 1000)
                        assert_true(s->lookups > 0);
                /* The retired counters are exactly the entries not live:
                 * every revival took its contribution back. */
                memset(&live, 0, sizeof(live));
                assert_int_equal(dedup_flow_foreach(fl, DEDUP_FLOW__OUTCOMES,
                                                    live_cb, &live),
                                 0);
                dedup_flow_state_get(fl, &fs);
                for (u = 0; u < DEDUP_FLOW__OUTCOMES; u++)
                        assert_int_equal(fs.retired.outcome[u] +
                                             live.outcome[u],
                                         want.c.outcome[u]);
                /* ... and so is the store: a restart from it (state +
                 * live rows in seq order) reads the same. */
                memset(&live, 0, sizeof(live));
                for (k = 0; k < MAXSEQ; k++)
                        if (s->rows[k].used && !s->rows[k].live)
                                live_cb(&live, &s->rows[k].v);
                for (u = 0; u < DEDUP_FLOW__OUTCOMES; u++)
                        assert_int_equal(live.outcome[u],
                                         fs.retired.outcome[u]);
                f2 = dedup_flow_new(&conf);
                assert_non_null(f2);
                dedup_flow_state_set(f2, &fs);
                for (k = 0; k < MAXSEQ; k++)
                        if (s->rows[k].used && s->rows[k].live)
                                assert_int_equal(
                                    dedup_flow_restore(f2, &s->rows[k].v), 0);
                dedup_flow_stats_get(f2, &back);
                assert_memory_equal(&want.c, &back.c, sizeof(want.c));
                dedup_flow_free(f2);
                dedup_flow_free(fl);
                free(s);
        }
}

static void test_source_ahead(void **state)
{
        (void)state;
        check_order(SOURCE_AHEAD);
}

static void test_sink_ahead(void **state)
{
        (void)state;
        check_order(SINK_AHEAD);
}

static void test_skewed(void **state)
{
        (void)state;
        check_order(SKEWED);
}

/* Revival from the retired list itself (nothing committed, no lookup):
 * a LOST source whose copy comes, an UNEXPECTED sink record whose source
 * comes, a second copy of a DELIVERED one; the counters move back. */
static void test_revive_uncommitted(void **state)
{
        struct dedup_flow_config conf;
        struct dedup_flow_stats st;
        struct dedup_flow_state fs;
        struct dedup_flow *fl;
        size_t n;

        (void)state;
        dedup_flow_config_defaults(&conf);
        conf.by_frontier = 1;
        conf.max_ids = 1;
        fl = dedup_flow_new(&conf);
        assert_non_null(fl);
        assert_int_equal(dedup_flow_source(fl, 0, 0, 10, "a", 1), 0);
        assert_int_equal(dedup_flow_sink(fl, 0, 0, 20, "z", 1), 0);
        dedup_flow_state_get(fl, &fs);
        assert_int_equal(fs.retired.outcome[DEDUP_FLOW_LOST], 1); /* a */
        assert_int_equal(dedup_flow_sink(fl, 0, 1, 30, "a", 1), 0);
        dedup_flow_state_get(fl, &fs);
        assert_int_equal(fs.retired.outcome[DEDUP_FLOW_LOST], 0);
        assert_int_equal(fs.retired.outcome[DEDUP_FLOW_UNEXPECTED], 1);
        assert_int_equal(dedup_flow_source(fl, 0, 1, 15, "z", 1), 0);
        assert_int_equal(dedup_flow_sink(fl, 0, 2, 40, "a", 1), 0);
        dedup_flow_stats_get(fl, &st);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DELIVERED], 1);  /* z */
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DUPLICATED], 1); /* a */
        assert_int_equal(st.c.duplicate_copies, 1);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_LOST], 0);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_UNEXPECTED], 0);
        assert_int_equal(st.lat_count, 2);
        assert_int_equal(st.live, 1);
        /* Same seq every time: a, z, a, z, a retired in turn. */
        dedup_flow_retired(fl, &n);
        assert_int_equal(n, 4);
        assert_int_equal(dedup_flow_retired(fl, &n)[0].seq,
                         dedup_flow_retired(fl, &n)[2].seq);
        /* A source repeat of a retired id: one source record still. */
        assert_int_equal(dedup_flow_source(fl, 0, 1, 15, "z", 1), 0);
        dedup_flow_stats_get(fl, &st);
        assert_int_equal(st.source_records, 2);
        assert_int_equal(st.source_repeats, 1);
        assert_int_equal(st.live, 1);
        dedup_flow_free(fl);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_source_ahead),
            cmocka_unit_test(test_sink_ahead),
            cmocka_unit_test(test_skewed),
            cmocka_unit_test(test_revive_uncommitted),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
