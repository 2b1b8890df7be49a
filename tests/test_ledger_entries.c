/*
 * test_ledger_entries.c - the ledger's packed ids (auditor/ledger/entries.c,
 * schema/0012_msgid_entries.sql): narrow and wide blobs round trip, the
 * length tells them apart, a bad blob is refused, and a sorted blob finds
 * every id it holds, wide ones by what a window compares.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../auditor/ledger/internal.h"

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
        uint64_t z = (rnd_state += 0x9e3779b97f4a7c15ULL);

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

/* Narrow keeps lo, hi's low 48 bits, a 16-bit partition and a 48-bit
 * offset, exactly; its length is odd. */
static void test_narrow_round_trip(void **state)
{
        enum { N = 200 };
        static const int32_t parts[] = {0, 1, 65535};
        static const int64_t offs[] = {0, 1, ((int64_t)1 << 48) - 1};
        unsigned char blob[1 + N * LEDGER_ENTRY_NARROW];
        struct dedup_id ids[N], got;
        struct ledger_entries v;
        int32_t part;
        int64_t off;
        size_t i;

        (void)state;
        assert_int_equal(ledger_entries_size(N, 1), sizeof(blob));
        for (i = 0; i < N; i++) {
                ids[i].lo = rnd();
                ids[i].hi = rnd();
                assert_true(ledger_entry_narrow(parts[i % 3], offs[i % 3]));
                ledger_entries_put(blob, 1, i, &ids[i], parts[i % 3],
                                   offs[i % 3] - (int64_t)(i % 3 == 2) * i);
        }
        assert_int_equal(ledger_entries_view(blob, sizeof(blob), &v), 0);
        assert_int_equal(v.n, N);
        assert_int_equal(v.size, LEDGER_ENTRY_NARROW);
        for (i = 0; i < N; i++) {
                ledger_entries_get(&v, i, &got, &part, &off);
                assert_true(got.lo == ids[i].lo);
                assert_true(got.hi == (ids[i].hi & DEDUP_WINDOW_HI_MASK));
                assert_int_equal(part, parts[i % 3]);
                assert_int_equal(off, offs[i % 3] - (int64_t)(i % 3 == 2) * i);
        }
}

/* What does not fit narrow goes wide, whole; reading cuts hi. */
static void test_wide_round_trip(void **state)
{
        static const int32_t parts[] = {65536, 3, INT32_MAX};
        static const int64_t offs[] = {5, (int64_t)1 << 48, INT64_MAX};
        unsigned char blob[3 * LEDGER_ENTRY_WIDE];
        struct dedup_id id, got;
        struct ledger_entries v;
        int32_t part;
        int64_t off;
        size_t i;

        (void)state;
        assert_false(ledger_entry_narrow(-1, 0));
        assert_false(ledger_entry_narrow(0, -1));
        assert_int_equal(ledger_entries_size(3, 0), sizeof(blob));
        for (i = 0; i < 3; i++) {
                assert_false(ledger_entry_narrow(parts[i], offs[i]));
                id.lo = i;
                id.hi = ~(uint64_t)0 - i;
                ledger_entries_put(blob, 0, i, &id, parts[i], offs[i]);
        }
        assert_int_equal(ledger_entries_view(blob, sizeof(blob), &v), 0);
        assert_int_equal(v.n, 3);
        assert_int_equal(v.size, LEDGER_ENTRY_WIDE);
        for (i = 0; i < 3; i++) {
                ledger_entries_get(&v, i, &got, &part, &off);
                assert_true(got.lo == i);
                assert_true(got.hi ==
                            ((~(uint64_t)0 - i) & DEDUP_WINDOW_HI_MASK));
                assert_int_equal(part, parts[i]);
                assert_int_equal(off, offs[i]);
        }
}

/* A blob in neither format is refused; an empty one holds nothing. */
static void test_view_refuses(void **state)
{
        unsigned char b[64];
        struct ledger_entries v;

        (void)state;
        memset(b, 0, sizeof(b));
        assert_int_equal(ledger_entries_view(b, 0, &v), 0);
        assert_int_equal(v.n, 0);
        b[0] = 1;
        assert_int_equal(ledger_entries_view(b, 1, &v), 0); /* no ids */
        assert_int_equal(v.n, 0);
        assert_int_equal(ledger_entries_view(b, 1 + 22, &v), 0);
        assert_int_equal(v.n, 1);
        assert_int_equal(ledger_entries_view(b, 1 + 21, &v), -1);
        assert_int_equal(ledger_entries_view(b, 1 + 23, &v), -1);
        b[0] = 2; /* an unknown tag */
        assert_int_equal(ledger_entries_view(b, 1 + 22, &v), -1);
        assert_int_equal(ledger_entries_view(b, 48, &v), -1);
        assert_int_equal(ledger_entries_view(b, 64, &v), 0);
        assert_int_equal(v.n, 2);
        assert_int_equal(ledger_entries_view(NULL, 32, &v), -1);
}

static int id_cmp(const void *x, const void *y)
{
        const struct dedup_id *a = x, *b = y;

        if (a->lo != b->lo)
                return a->lo < b->lo ? -1 : 1;
        return a->hi < b->hi ? -1 : a->hi > b->hi;
}

/*
 * A sorted blob finds each of its ids and nothing else, in both formats;
 * in a wide one sorted by all 128 bits, ids of one lo whose order differs
 * from their cut order are found too (the written order, not the
 * compared one).
 */
static void test_find_sorted(void **state)
{
        enum { N = 300 };
        static unsigned char blob[N * LEDGER_ENTRY_WIDE];
        struct dedup_id ids[N], x;
        struct ledger_entries v;
        int32_t part;
        int64_t off;
        size_t i;
        int narrow;

        (void)state;
        for (narrow = 0; narrow < 2; narrow++) {
                for (i = 0; i < N; i++) {
                        ids[i].lo = rnd() >> 8;
                        ids[i].hi = rnd();
                }
                /* One lo three times: the full order (bit 48 first) is
                 * not the cut order. */
                ids[1].lo = ids[2].lo = ids[3].lo = ids[0].lo;
                ids[1].hi = ((uint64_t)1 << 48) | 5;
                ids[2].hi = 7;
                ids[3].hi = ((uint64_t)3 << 48) | 6;
                if (narrow)
                        for (i = 0; i < N; i++)
                                ids[i].hi &= DEDUP_WINDOW_HI_MASK;
                qsort(ids, N, sizeof(ids[0]), id_cmp);
                for (i = 0; i < N; i++)
                        ledger_entries_put(blob, narrow, i, &ids[i],
                                           (int32_t)i, 1000 + (int64_t)i);
                assert_int_equal(ledger_entries_view(
                                     blob, ledger_entries_size(N, narrow), &v),
                                 0);
                for (i = 0; i < N; i++) {
                        /* Asked with all 128 bits, as a record's hash. */
                        x = ids[i];
                        x.hi |= (uint64_t)0xabcd << 48;
                        assert_int_equal(ledger_entries_find(&v, 1, &x, &part,
                                                             &off),
                                         1);
                        assert_int_equal(part, (int32_t)i);
                        assert_int_equal(off, 1000 + (int64_t)i);
                        assert_int_equal(ledger_entries_find(&v, 0, &x, &part,
                                                             &off),
                                         1);
                        assert_int_equal(off, 1000 + (int64_t)i);
                        x.hi ^= (uint64_t)1 << 40;
                        assert_int_equal(ledger_entries_find(&v, 1, &x, &part,
                                                             &off),
                                         0);
                        x = ids[i];
                        x.lo++;
                        if (i + 1 == N || ids[i + 1].lo != x.lo)
                                assert_int_equal(ledger_entries_find(&v, 1, &x,
                                                                     &part,
                                                                     &off),
                                                 0);
                }
        }
}

/* The chunk key sought for an id is not below any chunk key of the same
 * id: a wide chunk keyed by all 128 bits of its first id, or a narrow
 * one by its cut bits. */
static void test_chunk_bound(void **state)
{
        struct dedup_id id = {.lo = 42, .hi = ~(uint64_t)0}, cut;
        int64_t h1, h2;

        (void)state;
        cut.lo = id.lo;
        cut.hi = id.hi & DEDUP_WINDOW_HI_MASK;
        ledger_chunk_bound(&cut, &h1, &h2);
        assert_true(h1 == (int64_t)(id.lo ^ LEDGER_SIGN));
        assert_true(h2 >= (int64_t)(id.hi ^ LEDGER_SIGN));
        assert_true(h2 >= (int64_t)(cut.hi ^ LEDGER_SIGN));
        id.hi = 0;
        ledger_chunk_bound(&id, &h1, &h2);
        assert_true(h2 >= (int64_t)(id.hi ^ LEDGER_SIGN));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_narrow_round_trip),
            cmocka_unit_test(test_wide_round_trip),
            cmocka_unit_test(test_view_refuses),
            cmocka_unit_test(test_find_sorted),
            cmocka_unit_test(test_chunk_bound),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
