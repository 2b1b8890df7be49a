/*
 * test_group_ids.c - serve --group's ids topic (auditor/audit/
 * group_ids_window.h): the record format, and the judges' window, above
 * all the property its exactly-once argument rests on: a window rebuilt
 * by reading offsets [c - W, c) of an ids partition gives, from c on,
 * the verdicts (and the first copies) the live window gave.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../auditor/audit/group_ids_window.h"

static struct gids_rec rec(uint64_t id, const char *topic, int32_t partition,
                           int64_t offset, int64_t ts)
{
        struct gids_rec r;

        memset(&r, 0, sizeof(r));
        r.id.lo = id * 0x9e3779b97f4a7c15ull;
        r.id.hi = id;
        r.topic = topic;
        r.topic_len = strlen(topic);
        r.partition = partition;
        r.offset = offset;
        r.ts_ms = ts;
        r.epoch = -1;
        r.seq = -1;
        return r;
}

static void test_encode_parse(void **state)
{
        unsigned char b[GIDS_MAX];
        struct gids_rec r = rec(7, "orders", 3, 123456789012LL, 1700000000000LL),
                        p;
        size_t len;

        (void)state;
        r.producer = "p1";
        r.producer_len = 2;
        r.epoch = 4;
        r.seq = 99;
        len = gids_encode(b, &r);
        assert_int_equal(len, GIDS_FIXED + 6 + 2); /* 59 bytes */
        assert_int_equal(gids_parse(b, len, &p), 0);
        assert_true(p.id.lo == r.id.lo && p.id.hi == r.id.hi);
        assert_int_equal(p.partition, 3);
        assert_true(p.offset == 123456789012LL);
        assert_true(p.ts_ms == 1700000000000LL);
        assert_int_equal(p.epoch, 4);
        assert_int_equal(p.seq, 99);
        assert_int_equal(p.topic_len, 6);
        assert_memory_equal(p.topic, "orders", 6);
        assert_int_equal(p.producer_len, 2);
        assert_memory_equal(p.producer, "p1", 2);
        /* Truncated, too long, another version: not ids records. */
        assert_int_equal(gids_parse(b, len - 1, &p), -1);
        assert_int_equal(gids_parse(b, len + 1, &p), -1);
        assert_int_equal(gids_parse(b, 10, &p), -1);
        b[0] = 2;
        assert_int_equal(gids_parse(b, len, &p), -1);
        /* No producer (an untracked record). */
        r.producer = NULL;
        len = gids_encode(b, &r);
        assert_int_equal(len, GIDS_FIXED + 6);
        assert_int_equal(gids_parse(b, len, &p), 0);
        assert_null(p.producer);
}

static void test_window_bounds(void **state)
{
        struct gids_window *w = gids_window_new(10, 0);
        struct gids_first f;
        struct gids_rec a = rec(1, "t", 0, 100, 1000);
        struct gids_rec b = rec(1, "t", 1, 200, 1001);
        struct gids_rec c = rec(1, "u", 1, 300, 1001);
        struct gids_rec d = rec(1, "t", 2, 400, 1002);

        (void)state;
        assert_non_null(w);
        assert_int_equal(gids_window_judge(w, 0, &a, &f), 0);
        /* The same record again (read twice): not a copy of itself. */
        assert_int_equal(gids_window_judge(w, 1, &a, &f), 0);
        /* Another topic: another id. */
        assert_int_equal(gids_window_judge(w, 2, &c, &f), 0);
        /* Offset 10: [0, 10) holds offset 0. */
        assert_int_equal(gids_window_judge(w, 10, &b, &f), 1);
        assert_string_equal(f.topic, "t");
        assert_int_equal(f.partition, 0);
        assert_int_equal(f.offset, 100);
        /* The latest earlier copy is named: b (offset 10), not a. */
        assert_int_equal(gids_window_judge(w, 12, &d, &f), 1);
        assert_int_equal(f.partition, 1);
        assert_int_equal(f.offset, 200);
        assert_int_equal(f.ids_offset, 10);
        gids_window_free(w);

        /* Offset 11: [1, 11) no longer holds offset 0. */
        w = gids_window_new(10, 0);
        assert_int_equal(gids_window_judge(w, 0, &a, &f), 0);
        assert_int_equal(gids_window_judge(w, 11, &b, &f), 0);
        gids_window_free(w);

        /* The age bound, by record time. */
        w = gids_window_new(10, 5);
        a.ts_ms = 1000;
        b.ts_ms = 1006;
        assert_int_equal(gids_window_judge(w, 0, &a, &f), 0);
        assert_int_equal(gids_window_judge(w, 1, &b, &f), 0);
        d.ts_ms = 1011;
        assert_int_equal(gids_window_judge(w, 2, &d, &f), 1);
        assert_int_equal(f.offset, 200);
        gids_window_free(w);
}

/* Every offset a record: the ring holds W and drops the oldest. */
static void test_window_full(void **state)
{
        struct gids_window *w = gids_window_new(2000, 0);
        struct gids_first f;
        struct gids_rec r;
        int64_t o;

        (void)state;
        for (o = 0; o < 5000; o++) {
                r = rec((uint64_t)o, "t", 0, o, 1);
                assert_int_equal(gids_window_judge(w, o, &r, &f), 0);
                assert_true(gids_window_ids(w) <= 2000);
        }
        assert_int_equal(gids_window_ids(w), 2000);
        r = rec(3000, "t", 1, 0, 1); /* offset 3000 is in [3000, 5000) */
        assert_int_equal(gids_window_judge(w, 5000, &r, &f), 1);
        assert_int_equal(f.offset, 3000);
        r = rec(3000, "t", 2, 0, 1); /* and 2999 is not, at 5001 */
        r.id.hi = 2999;
        r.id.lo = 2999 * 0x9e3779b97f4a7c15ull;
        assert_int_equal(gids_window_judge(w, 5001, &r, &f), 0);
        gids_window_free(w);
}

struct verdict {
        int found;
        int32_t partition;
        int64_t offset, ids_offset;
        char topic[8];
};

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
        rnd_state ^= rnd_state << 13;
        rnd_state ^= rnd_state >> 7;
        rnd_state ^= rnd_state << 17;
        return rnd_state;
}

/*
 * A stream of 20,000 ids records on one ids partition (offsets with holes
 * where transaction markers would be, ids from a small space, two
 * topics): judged live, then for many cut points c, a window rebuilt from
 * [c - W, c) without verdicts judges the rest: the same verdicts, the
 * same first copies.
 */
static void test_window_rebuilt_equals_live(void **state)
{
        enum { N = 20000, W = 700 };
        static struct gids_rec rs[N];
        static int64_t at[N];
        static struct verdict live[N];
        static const char *topics[2] = {"ta", "tb"};
        int64_t o = 0, next_off[2][6] = {{0}};
        struct gids_first f;
        int i, cut, repeats[2] = {0, 0};

        (void)state;
        for (i = 0; i < N; i++) {
                int t = (int)(rnd() % 2), p = (int)(rnd() % 6);
                o += 1 + (int64_t)(rnd() % 3 == 0); /* markers */
                at[i] = o;
                rs[i] = rec(rnd() % 2500, topics[t], p, next_off[t][p]++,
                            1000 + i * 10 - (int64_t)(rnd() % 50));
        }
        for (int age = 0; age <= 1; age++) {
                int64_t max_age = age ? 3000 : 0;
                struct gids_window *w = gids_window_new(W, max_age);
                for (i = 0; i < N; i++) {
                        int rc = gids_window_judge(w, at[i], &rs[i], &f);
                        assert_true(rc >= 0);
                        live[i].found = rc;
                        if (rc) {
                                live[i].partition = f.partition;
                                live[i].offset = f.offset;
                                live[i].ids_offset = f.ids_offset;
                                snprintf(live[i].topic, sizeof(live[i].topic),
                                         "%s", f.topic);
                                repeats[age]++;
                        }
                }
                gids_window_free(w);
                for (cut = 1; cut < N; cut += 397) {
                        int64_t c = at[cut];
                        int j;
                        w = gids_window_new(W, max_age);
                        for (j = 0; j < cut; j++)
                                if (at[j] >= c - W)
                                        assert_true(gids_window_judge(
                                                        w, at[j], &rs[j], &f) >=
                                                    0);
                        for (j = cut; j < N; j++) {
                                int rc = gids_window_judge(w, at[j], &rs[j], &f);
                                assert_int_equal(rc, live[j].found);
                                if (!rc)
                                        continue;
                                assert_int_equal(f.partition,
                                                 live[j].partition);
                                assert_int_equal(f.offset, live[j].offset);
                                assert_int_equal(f.ids_offset,
                                                 live[j].ids_offset);
                                assert_string_equal(f.topic, live[j].topic);
                        }
                        gids_window_free(w);
                }
        }
        /* The stream had repeats to judge, and the age bound took some. */
        assert_true(repeats[0] > 1000);
        assert_true(repeats[1] > 0 && repeats[1] < repeats[0]);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_encode_parse),
            cmocka_unit_test(test_window_bounds),
            cmocka_unit_test(test_window_full),
            cmocka_unit_test(test_window_rebuilt_equals_live),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
