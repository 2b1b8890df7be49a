/*
 * test_flow_pack.c - the flow engine's packed entries (dedup/flow_pack.c,
 * issue 35): whatever the fields, every view says exactly what the
 * records said, against a model the test keeps of its own; the bases
 * moved when values outgrow them; the ids' arena and the entries' ring
 * wrapping, growing while wrapped, and retiring past the bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../dedup/flow_internal.h"

#define NIDS 400

/* What the records fed say an id's view must be. */
struct model {
        int seen, src_seen;
        uint64_t seq, born;
        uint32_t src_part, sink_part, sink_part_last, copies;
        int64_t src_offset, src_ts, sink_offset, sink_offset_last, sink_ts;
        size_t len;
        unsigned char id[48];
};

struct fixture {
        struct model m[NIDS];
        uint64_t next_seq, source_reads, sink_reads;
        size_t checked;
};

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
        rnd_state ^= rnd_state << 13;
        rnd_state ^= rnd_state >> 7;
        rnd_state ^= rnd_state << 17;
        return rnd_state;
}

static const int64_t offsets[] = {0,
                                  1,
                                  7,
                                  1000,
                                  ((int64_t)1 << 31) - 1,
                                  (int64_t)1 << 31,
                                  ((int64_t)1 << 32) + 5,
                                  (int64_t)1 << 40,
                                  INT64_MAX - 2};
static const int64_t times[] = {0,
                                1,
                                -5,
                                1700000000000,
                                1700000000001,
                                1700000000000 + 30LL * 86400000,
                                1700000000000 - 30LL * 86400000,
                                (int64_t)1 << 61,
                                -((int64_t)1 << 61),
                                INT64_MAX};
static const uint32_t parts[] = {0, 1, 2, 11, 65534, 65535, 70000};

#define PICK(a) ((a)[rnd() % (sizeof(a) / sizeof((a)[0]))])

static void model_id(struct fixture *f, size_t k)
{
        struct model *m = &f->m[k];
        size_t j;

        if (m->len)
                return;
        m->len = 2 + k % 44; /* some longer than DEDUP_FLOW_ID_KEEP */
        for (j = 0; j < m->len; j++)
                m->id[j] = (unsigned char)('a' + (k * 7 + j) % 26);
        m->id[0] = (unsigned char)k; /* unique */
        m->id[1] = (unsigned char)(k >> 8);
}

static void feed_source(struct dedup_flow *fl, struct fixture *f, size_t k,
                        uint32_t part, int64_t off, int64_t ts)
{
        struct model *m = &f->m[k];

        model_id(f, k);
        assert_int_equal(dedup_flow_source(fl, part, off, ts, m->id, m->len),
                         0);
        f->source_reads++;
        if (!m->seen) {
                m->seen = 1;
                m->seq = f->next_seq++;
                m->sink_offset = m->sink_offset_last = -1;
                m->sink_part = m->sink_part_last = UINT32_MAX;
        }
        if (m->src_seen)
                return; /* a repeat changes nothing */
        m->src_seen = 1;
        m->src_part = part;
        m->src_offset = off;
        m->src_ts = ts;
        m->born = f->sink_reads;
}

static void feed_sink(struct dedup_flow *fl, struct fixture *f, size_t k,
                      uint32_t part, int64_t off, int64_t ts)
{
        struct model *m = &f->m[k];

        model_id(f, k);
        assert_int_equal(dedup_flow_sink(fl, part, off, ts, m->id, m->len), 0);
        f->sink_reads++;
        if (!m->seen) {
                m->seen = 1;
                m->seq = f->next_seq++;
                m->src_offset = -1;
                m->src_part = UINT32_MAX;
                m->born = f->source_reads;
        }
        if (!m->copies) {
                m->sink_part = part;
                m->sink_offset = off;
                m->sink_ts = ts;
        }
        m->copies++;
        m->sink_part_last = part;
        m->sink_offset_last = off;
}

static int check_view(void *opaque, const struct dedup_flow_view *v)
{
        struct fixture *f = opaque;
        const struct model *m = NULL;
        size_t k, kept;

        for (k = 0; k < NIDS; k++)
                if (f->m[k].seen && f->m[k].seq == v->seq)
                        m = &f->m[k];
        assert_non_null(m);
        assert_int_equal(v->src_seen, m->src_seen);
        assert_int_equal(v->born, m->born);
        assert_int_equal(v->src_part, m->src_part);
        assert_int_equal(v->src_offset, m->src_offset);
        assert_int_equal(v->src_ts, m->src_ts);
        assert_int_equal(v->copies, m->copies);
        assert_int_equal(v->sink_part, m->sink_part);
        assert_int_equal(v->sink_offset, m->sink_offset);
        assert_int_equal(v->sink_ts, m->sink_ts);
        assert_int_equal(v->sink_part_last, m->sink_part_last);
        assert_int_equal(v->sink_offset_last, m->sink_offset_last);
        assert_int_equal(v->id_len, m->len);
        kept = m->len < DEDUP_FLOW_ID_KEEP ? m->len : DEDUP_FLOW_ID_KEEP;
        assert_memory_equal(v->id_bytes, m->id, kept);
        f->checked++;
        return 0;
}

static struct dedup_flow *flow_new(uint64_t max_ids)
{
        struct dedup_flow_config conf;

        dedup_flow_config_defaults(&conf);
        conf.by_frontier = 1; /* nothing due: the fields alone */
        conf.due_records = 0;
        conf.due_ms = 0;
        conf.max_ids = max_ids;
        return dedup_flow_new(&conf);
}

static size_t seen(const struct fixture *f)
{
        size_t k, n = 0;

        for (k = 0; k < NIDS; k++)
                n += f->m[k].seen;
        return n;
}

/* Random records with extreme offsets, parts and times on both sides:
 * every view is exactly the model, whether its entry is narrow or wide,
 * before and after the bases moved. */
static void test_fields_exact(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        struct dedup_flow *fl = flow_new(100000);
        int i;

        (void)state;
        assert_non_null(f);
        assert_non_null(fl);
        f->next_seq = 1;
        for (i = 0; i < 6000; i++) {
                size_t k = rnd() % NIDS;
                uint32_t p = PICK(parts);
                int64_t off = PICK(offsets) + (int64_t)(rnd() % 3);
                int64_t ts = PICK(times);

                if (off < 0)
                        off = INT64_MAX;
                if (rnd() % 2)
                        feed_source(fl, f, k, p, off, ts);
                else
                        feed_sink(fl, f, k, p, off, ts);
                if (i % 500 == 499)
                        dedup_flow_dirty_clear(fl);
        }
        assert_int_equal(dedup_flow_failed(fl), 0);
        assert_true(fl->wide_live > 0); /* the extremes did not all fit */
        f->checked = 0;
        assert_int_equal(dedup_flow_foreach(fl, DEDUP_FLOW__OUTCOMES,
                                            check_view, f),
                         0);
        assert_int_equal(f->checked, seen(f));
        dedup_flow_free(fl);
        free(f);
}

/* Values that grow past a base's 2^32 (offsets on one part, times, seq):
 * the base moves up, the old entries go wide, the new ones stay narrow,
 * and every view still says what was fed. */
static void test_rebase(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        struct dedup_flow *fl = flow_new(100000);
        struct dedup_flow_state st;
        uint32_t narrow_before;
        size_t k;

        (void)state;
        assert_non_null(f);
        assert_non_null(fl);
        f->next_seq = 1;
        for (k = 0; k < 100; k++)
                feed_source(fl, f, k, 3, (int64_t)k,
                            1700000000000 + (int64_t)k);
        assert_int_equal(fl->wide_live, 0);
        /* An offset 2^33 further on the same part: its base moves; the
         * first 100 are now below it. */
        for (k = 100; k < 200; k++)
                feed_source(fl, f, k, 3, ((int64_t)1 << 33) + (int64_t)k,
                            1700000000000 + (int64_t)k);
        assert_int_equal(fl->wide_live, 100);
        /* A time 40 days on (past the +-24 days a delta holds), then seq
         * 2^33 further on (a restart's state): both bases move again. */
        for (k = 200; k < 250; k++)
                feed_sink(fl, f, k, 5, (int64_t)k,
                          1700000000000 + 40LL * 86400000);
        dedup_flow_state_get(fl, &st);
        st.next_seq += (uint64_t)1 << 33;
        f->next_seq += (uint64_t)1 << 33;
        dedup_flow_state_set(fl, &st);
        narrow_before = (uint32_t)fl->live - fl->wide_live;
        for (k = 250; k < 300; k++)
                feed_sink(fl, f, k, 5, (int64_t)k,
                          1700000000000 + 40LL * 86400000);
        /* All that came before are wide now, the last 50 narrow. */
        assert_int_equal(narrow_before, 50);
        assert_int_equal(fl->wide_live, 250);
        assert_int_equal(fl->live, 300);
        f->checked = 0;
        assert_int_equal(dedup_flow_foreach(fl, DEDUP_FLOW__OUTCOMES,
                                            check_view, f),
                         0);
        assert_int_equal(f->checked, 300);
        /* A copy of a wide entry on its first offset: still exact. */
        feed_sink(fl, f, 10, 7, 10, 1700000000010);
        f->checked = 0;
        dedup_flow_foreach(fl, DEDUP_FLOW__OUTCOMES, check_view, f);
        assert_int_equal(f->checked, 300);
        dedup_flow_free(fl);
        free(f);
}

/* Past a small bound, with ids of every length from 1 to 45 bytes: the
 * ring and the arena wrap many times; the retired views and the live
 * ones carry their own ids and fields. */
static void test_arena_wrap(void **state)
{
        struct fixture *f = calloc(1, sizeof(*f));
        struct dedup_flow *fl = flow_new(37);
        const struct dedup_flow_view *r;
        size_t k, n, j, retired = 0;
        int round;

        (void)state;
        assert_non_null(f);
        assert_non_null(fl);
        for (round = 0; round < 20; round++) {
                /* A fresh model each round: ids of the round are new. */
                memset(f->m, 0, sizeof(f->m));
                f->next_seq = fl->st.next_seq;
                for (k = 0; k < NIDS; k++) {
                        f->m[k].len = 3 + (k * 13 + (size_t)round) % 43;
                        for (j = 0; j < f->m[k].len; j++)
                                f->m[k].id[j] = (unsigned char)(round * 31 +
                                                                k + j);
                        f->m[k].id[0] = (unsigned char)round; /* unique */
                        f->m[k].id[1] = (unsigned char)k;
                        f->m[k].id[2] = (unsigned char)(k >> 8);
                        feed_source(fl, f, k, 0, (int64_t)k, 5);
                        if (k % 3)
                                feed_sink(fl, f, k, 1, (int64_t)k, 6);
                }
                r = dedup_flow_retired(fl, &n);
                /* The round's retired views are of this round's ids but
                 * the first few, retired as the round began. */
                f->checked = 0;
                for (j = 0; j < n; j++)
                        if (r[j].seq >= f->m[0].seq)
                                check_view(f, &r[j]);
                assert_int_equal(f->checked, NIDS - 37);
                retired += n;
                f->checked = 0;
                dedup_flow_foreach(fl, DEDUP_FLOW__OUTCOMES, check_view, f);
                assert_int_equal(f->checked, 37);
                dedup_flow_dirty_clear(fl);
        }
        assert_int_equal(retired, 20 * NIDS - 37);
        assert_true(fl->arena_cap < 8192); /* 37 ids of 37 bytes at most */
        assert_int_equal(fl->cap_ents, 38);
        dedup_flow_free(fl);
        free(f);
}

struct order {
        uint64_t last_seq;
        size_t n;
};

static int in_order(void *opaque, const struct dedup_flow_view *v)
{
        struct order *o = opaque;

        assert_true(v->seq > o->last_seq);
        o->last_seq = v->seq;
        o->n++;
        return 0;
}

/* A restore past the bound once the ring has wrapped (a restart with a
 * lower --flow-max-ids): the ring grows while wrapped, the part list and
 * the table follow it, and the verdicts are exact. */
static void test_ring_grow_wrapped(void **state)
{
        struct dedup_flow *fl = flow_new(1000);
        struct dedup_flow_stats st;
        struct dedup_flow_view v;
        struct order o = {0, 0};
        char id[32];
        int i, len;

        (void)state;
        assert_non_null(fl);
        for (i = 0; i < 2500; i++) {
                len = snprintf(id, sizeof(id), "old-%d", i);
                assert_int_equal(dedup_flow_source(fl, 0, i, 5, id,
                                                   (size_t)len),
                                 0);
        }
        dedup_flow_dirty_clear(fl);
        assert_true(fl->head != 0); /* wrapped */
        for (i = 0; i < 600; i++) {
                memset(&v, 0, sizeof(v));
                len = snprintf(id, sizeof(id), "restored-%d", i);
                dedup_id_hash(id, (size_t)len, &v.id);
                v.seq = 10000 + (uint64_t)i;
                v.src_seen = 1;
                v.src_part = 0;
                v.src_offset = 10000 + i;
                v.src_ts = 5;
                v.sink_offset = v.sink_offset_last = -1;
                v.sink_part = v.sink_part_last = UINT32_MAX;
                v.id_len = (size_t)len;
                memcpy(v.id_bytes, id, (size_t)len);
                assert_int_equal(dedup_flow_restore(fl, &v), 0);
        }
        assert_int_equal(fl->live, 1600);
        assert_true(fl->cap_ents >= 1600);
        /* Every id is found again: a copy of the oldest live and of the
         * youngest restored delivers them. */
        len = snprintf(id, sizeof(id), "old-%d", 1500);
        assert_int_equal(dedup_flow_sink(fl, 1, 0, 6, id, (size_t)len), 0);
        len = snprintf(id, sizeof(id), "restored-%d", 599);
        assert_int_equal(dedup_flow_sink(fl, 1, 1, 6, id, (size_t)len), 0);
        /* The sinks retired the 600 past the bound and then some: what is
         * left is the newest 1000, in order. */
        dedup_flow_foreach(fl, DEDUP_FLOW__OUTCOMES, in_order, &o);
        assert_int_equal(o.n, 1000);
        dedup_flow_frontier(fl, 0, 10300);
        dedup_flow_stats_get(fl, &st);
        /* 2500 + 600 sources: 2 delivered; the rest below 10300 lost
         * (1500 retired at the start, 1100 retired or due now); the
         * restored 300 to 598 pending. */
        assert_int_equal(st.c.outcome[DEDUP_FLOW_DELIVERED], 2);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_PENDING], 299);
        assert_int_equal(st.c.outcome[DEDUP_FLOW_LOST], 3100 - 2 - 299);
        dedup_flow_free(fl);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_fields_exact),
            cmocka_unit_test(test_rebase),
            cmocka_unit_test(test_arena_wrap),
            cmocka_unit_test(test_ring_grow_wrapped),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
