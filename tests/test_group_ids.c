/*
 * test_group_ids.c - serve --group's ids topic (auditor/audit/
 * group_ids_window.h): the record formats (packs, and version 1 read as
 * a pack of one), and the judges' window, above all the property its
 * exactly-once argument rests on: a window rebuilt by reading any records
 * of an ids partition before c that hold >= W entries gives, from c on,
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

#include "../auditor/group/group_ids_window.h"

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

/* A version-1 record (or a pack) of exactly one entry into *r: 0, or -1
 * when gids_iter_open() refuses it. */
static int parse1(const void *p, size_t len, struct gids_rec *r)
{
        struct gids_iter it;

        if (gids_iter_open(&it, p, len) != 1)
                return -1;
        assert_int_equal(gids_iter_next(&it, r), 1);
        assert_int_equal(gids_iter_next(&it, r), 0);
        return 0;
}

static void test_encode_parse(void **state)
{
        unsigned char b[GIDS_MAX];
        struct gids_rec r = rec(7, "orders", 3, 123456789012LL,
                                1700000000000LL),
                        p;
        size_t len;

        (void)state;
        r.producer = "p1";
        r.producer_len = 2;
        r.epoch = 4;
        r.seq = 99;
        len = gids_encode(b, &r);
        assert_int_equal(len, GIDS_FIXED + 6 + 2); /* 59 bytes */
        assert_int_equal(parse1(b, len, &p), 0);
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
        assert_int_equal(parse1(b, len - 1, &p), -1);
        assert_int_equal(parse1(b, len + 1, &p), -1);
        assert_int_equal(parse1(b, 10, &p), -1);
        assert_int_equal(parse1(b, 0, &p), -1);
        b[0] = 3;
        assert_int_equal(parse1(b, len, &p), -1);
        /* A version-1 body under the pack's version byte: its "count" (the
         * id's low bytes) is more than the bytes can hold. */
        b[0] = GIDS_PACK_VERSION;
        assert_int_equal(parse1(b, len, &p), -1);
        /* No producer (an untracked record). */
        r.producer = NULL;
        len = gids_encode(b, &r);
        assert_int_equal(len, GIDS_FIXED + 6);
        assert_int_equal(parse1(b, len, &p), 0);
        assert_null(p.producer);
}

/* A pack of entries with names of every length class: written, read back
 * in order, field for field. */
static void test_pack_round_trip(void **state)
{
        enum { N = 300 };
        static char names[N][256];
        struct gids_pack pk;
        struct gids_iter it;
        struct gids_rec r, p;
        unsigned char e[GIDS_ENTRY_MAX];
        const unsigned char *rec1;
        size_t len, sum = GIDS_PACK_HEAD;
        int i;

        (void)state;
        gids_pack_init(&pk);
        assert_null(gids_pack_finish(&pk, &len)); /* empty: no record */
        for (i = 0; i < N; i++) {
                size_t tl = 1 + (size_t)(i * 37) % 255;
                memset(names[i], 'a' + i % 26, tl);
                names[i][tl] = '\0';
        }
        for (i = 0; i < N; i++) {
                r = rec((uint64_t)i, names[i], i % 7, 1000 + i, 5000 + i);
                if (i % 3) {
                        r.producer = names[(i * 11) % N];
                        r.producer_len = strlen(r.producer);
                        r.epoch = i;
                        r.seq = 10 * i;
                }
                sum += gids_entry_encode(e, &r);
                assert_int_equal(gids_pack_add(&pk, e,
                                               gids_entry_encode(e, &r)),
                                 0);
        }
        rec1 = gids_pack_finish(&pk, &len);
        assert_non_null(rec1);
        assert_int_equal(len, sum);
        assert_int_equal(rec1[0], GIDS_PACK_VERSION);
        assert_int_equal(gids_iter_open(&it, rec1, len), N);
        for (i = 0; i < N; i++) {
                r = rec((uint64_t)i, names[i], i % 7, 1000 + i, 5000 + i);
                assert_int_equal(gids_iter_next(&it, &p), 1);
                assert_true(p.id.lo == r.id.lo && p.id.hi == r.id.hi);
                assert_int_equal(p.partition, i % 7);
                assert_true(p.offset == 1000 + i && p.ts_ms == 5000 + i);
                assert_int_equal(p.topic_len, strlen(names[i]));
                assert_memory_equal(p.topic, names[i], p.topic_len);
                if (i % 3) {
                        assert_int_equal(p.producer_len,
                                         strlen(names[(i * 11) % N]));
                        assert_memory_equal(p.producer, names[(i * 11) % N],
                                            p.producer_len);
                        assert_int_equal(p.epoch, i);
                        assert_int_equal(p.seq, 10 * i);
                } else {
                        assert_null(p.producer);
                        assert_int_equal(p.epoch, -1);
                        assert_int_equal(p.seq, -1);
                }
        }
        assert_int_equal(gids_iter_next(&it, &p), 0);
        /* Reset: the next pack starts empty, on the same buffer. */
        gids_pack_reset(&pk);
        r = rec(1, "t", 0, 0, 0);
        assert_int_equal(gids_pack_add(&pk, e, gids_entry_encode(e, &r)), 0);
        rec1 = gids_pack_finish(&pk, &len);
        assert_int_equal(len, GIDS_PACK_HEAD + GIDS_ENTRY_FIXED + 1);
        assert_int_equal(parse1(rec1, len, &p), 0);
        gids_pack_free(&pk);
        gids_pack_free(&pk); /* freed: empty again */
}

/* Full at GIDS_PACK_MAX_ENTRIES small entries, or GIDS_PACK_MAX_BYTES
 * of large ones. */
static void test_pack_full(void **state)
{
        static char big[256];
        struct gids_pack pk;
        unsigned char e[GIDS_ENTRY_MAX];
        struct gids_rec r = rec(1, "t", 0, 0, 0);
        size_t el = gids_entry_encode(e, &r);
        int i;

        (void)state;
        gids_pack_init(&pk);
        for (i = 0; i < GIDS_PACK_MAX_ENTRIES; i++) {
                assert_false(gids_pack_full(&pk));
                assert_int_equal(gids_pack_add(&pk, e, el), 0);
        }
        assert_true(gids_pack_full(&pk));
        gids_pack_reset(&pk);
        memset(big, 'x', 255);
        r = rec(1, big, 0, 0, 0);
        r.producer = big;
        r.producer_len = 255;
        el = gids_entry_encode(e, &r);
        assert_int_equal(el, GIDS_ENTRY_MAX);
        for (i = 0; !gids_pack_full(&pk); i++)
                assert_int_equal(gids_pack_add(&pk, e, el), 0);
        assert_true(i < GIDS_PACK_MAX_ENTRIES);
        assert_true(pk.len >= GIDS_PACK_MAX_BYTES &&
                    pk.len < GIDS_PACK_MAX_BYTES + GIDS_ENTRY_MAX);
        gids_pack_free(&pk);
}

/* Malformed packs are refused whole, reading only their own bytes: each
 * is copied into a buffer of its exact length (ASan: sanitize-unit-test
 * sees any read beyond). */
static int open_exact(const unsigned char *p, size_t len)
{
        unsigned char *q = malloc(len ? len : 1);
        struct gids_iter it;
        long n;

        assert_non_null(q);
        memcpy(q, p, len);
        n = gids_iter_open(&it, q, len);
        free(q);
        return n < 0 ? -1 : (int)n;
}

static void test_pack_malformed(void **state)
{
        struct gids_pack pk;
        unsigned char e[GIDS_ENTRY_MAX], b[4096];
        struct gids_rec r;
        const unsigned char *p;
        size_t len, cut;
        int i;

        (void)state;
        gids_pack_init(&pk);
        for (i = 0; i < 3; i++) {
                r = rec((uint64_t)i, "orders", i, i, i);
                r.producer = "p";
                r.producer_len = 1;
                assert_int_equal(gids_pack_add(&pk, e,
                                               gids_entry_encode(e, &r)),
                                 0);
        }
        p = gids_pack_finish(&pk, &len);
        assert_true(len < sizeof(b));
        memcpy(b, p, len);
        assert_int_equal(open_exact(b, len), 3);
        /* Every truncation, and a byte too many. */
        for (cut = 0; cut < len; cut++)
                assert_int_equal(open_exact(b, cut), -1);
        b[len] = 0;
        assert_int_equal(open_exact(b, len + 1), -1);
        /* A count that overruns the bytes by one entry, by far, 0. */
        b[1] = 4;
        assert_int_equal(open_exact(b, len), -1);
        b[1] = 0xff;
        b[2] = b[3] = b[4] = 0xff;
        assert_int_equal(open_exact(b, len), -1);
        b[1] = b[2] = b[3] = b[4] = 0;
        assert_int_equal(open_exact(b, len), -1);
        /* A count short of the entries: bytes left over. */
        b[1] = 2;
        assert_int_equal(open_exact(b, len), -1);
        b[1] = 3;
        assert_int_equal(open_exact(b, len), 3);
        /* An entry's topic length that runs past the end, or is 0. */
        b[GIDS_PACK_HEAD + 48] = 255;
        assert_int_equal(open_exact(b, len), -1);
        b[GIDS_PACK_HEAD + 48] = 0;
        assert_int_equal(open_exact(b, len), -1);
        b[GIDS_PACK_HEAD + 48] = 6;
        /* The last entry's producer length past the end. */
        b[len - 2] = 2;
        assert_int_equal(open_exact(b, len), -1);
        b[len - 2] = 1;
        assert_int_equal(open_exact(b, len), 3);
        {
                struct gids_iter it;
                assert_int_equal(gids_iter_open(&it, NULL, 0), -1);
                assert_int_equal(gids_iter_next(&it, &r), 0);
        }
        gids_pack_free(&pk);
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
        /* Offset 10, the fourth entry: the last 10 hold a.  Offsets do
         * not count, entries do. */
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

        /* Ten entries after a (in two records, one offset): a is out of
         * the last 10; nine after it, a is in. */
        for (int n = 9; n <= 10; n++) {
                w = gids_window_new(10, 0);
                assert_int_equal(gids_window_judge(w, 0, &a, &f), 0);
                for (int i = 0; i < n; i++) {
                        struct gids_rec o = rec(100 + (uint64_t)i, "t", 5, i,
                                                1);
                        assert_int_equal(gids_window_judge(w, 1, &o, &f), 0);
                }
                assert_int_equal(gids_window_judge(w, 2, &b, &f), n == 9);
                if (n == 9)
                        assert_int_equal(f.ids_offset, 0);
                gids_window_free(w);
        }

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
 * A stream of 20,000 entries on one ids partition, in records of 1 to 40
 * entries (packs of every size; offsets with holes where transaction
 * markers and aborted records would be; ids from a small space; two
 * topics): judged live, then for many cut points c (record boundaries),
 * a window rebuilt without verdicts from the shortest read of records
 * before c that holds >= W entries judges the rest: the same verdicts,
 * the same first copies.  A read of about W / 2 entries is not enough:
 * some verdict differs (the test can fail).
 */
static void test_window_rebuilt_equals_live(void **state)
{
        enum { N = 20000, W = 700 };
        static struct gids_rec rs[N];
        static int64_t at[N]; /* the offset of the record holding it */
        static int first[N];  /* the first entry of that record */
        static struct verdict live[N];
        static const char *topics[2] = {"ta", "tb"};
        int64_t o = 0, next_off[2][6] = {{0}};
        struct gids_first f;
        int i, cut, repeats[2] = {0, 0}, short_differs = 0;

        (void)state;
        for (i = 0; i < N;) {
                int t, p, n = 1 + (int)(rnd() % 40), r0 = i;
                if (rnd() % 4 == 0)
                        n = 1; /* a small pack, or a version-1 record */
                o += 1 +
                     (int64_t)(rnd() % 3 == 0) * (1 + (int64_t)(rnd() % 5));
                for (; n-- && i < N; i++) {
                        t = (int)(rnd() % 2);
                        p = (int)(rnd() % 6);
                        at[i] = o;
                        first[i] = r0;
                        rs[i] = rec(rnd() % 2500, topics[t], p,
                                    next_off[t][p]++,
                                    1000 + i * 10 - (int64_t)(rnd() % 50));
                }
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
                for (cut = 1000; cut < N; cut += 397) {
                        int j, from, shorter;
                        cut = first[cut]; /* a record boundary */
                        /* The shortest read: whole records from c back
                         * until >= W entries. */
                        for (from = cut; cut - from < W;)
                                from = first[from - 1];
                        for (shorter = 0; shorter <= 1; shorter++) {
                                int lo = from, differs = 0;
                                if (shorter) /* about W / 2 entries */
                                        lo = first[cut - W / 2];
                                w = gids_window_new(W, max_age);
                                for (j = lo; j < cut; j++)
                                        assert_true(
                                            gids_window_judge(w, at[j], &rs[j],
                                                              &f) >= 0);
                                for (j = cut; j < N; j++) {
                                        int rc = gids_window_judge(w, at[j],
                                                                   &rs[j], &f);
                                        if (shorter) {
                                                differs |=
                                                    rc != live[j].found ||
                                                    (rc &&
                                                     f.ids_offset !=
                                                         live[j].ids_offset);
                                                continue;
                                        }
                                        assert_int_equal(rc, live[j].found);
                                        if (!rc)
                                                continue;
                                        assert_int_equal(f.partition,
                                                         live[j].partition);
                                        assert_int_equal(f.offset,
                                                         live[j].offset);
                                        assert_int_equal(f.ids_offset,
                                                         live[j].ids_offset);
                                        assert_string_equal(f.topic,
                                                            live[j].topic);
                                }
                                short_differs += differs;
                                gids_window_free(w);
                        }
                }
        }
        /* The stream had repeats to judge, and the age bound took some. */
        assert_true(repeats[0] > 1000);
        assert_true(repeats[1] > 0 && repeats[1] < repeats[0]);
        assert_true(short_differs > 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_encode_parse),
            cmocka_unit_test(test_pack_round_trip),
            cmocka_unit_test(test_pack_full),
            cmocka_unit_test(test_pack_malformed),
            cmocka_unit_test(test_window_bounds),
            cmocka_unit_test(test_window_full),
            cmocka_unit_test(test_window_rebuilt_equals_live),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
