/*
 * test_rewind.c - a log truncated under the audit: the engine takes back
 * the records past the divergence point (dedup_tracker_part_rewind()) and
 * what then follows on the new log.  Each case is a record sequence as
 * the audit read it, the rewind the audit computes from what it stored
 * (auditor/ledger/truncate.c), and the records of the new log from the
 * divergence point on, with the verdicts and counts they must give.
 * serve --group: the same cases with the partition handed over right
 * after the rewind (its state record, auditor/group/partstate.h, into
 * another member's tracker) give the same verdicts and counts there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../auditor/group/partstate.h"
#include "../dedup/dedup.h"

struct rec {
        const char *producer; /* NULL: end of the list */
        int32_t epoch;
        int64_t seq;
        int64_t offset;
        enum dedup_verdict want; /* after: the verdict it must get */
};

struct rw_case {
        const char *what;
        struct rec before[12];     /* read before the truncation */
        int64_t offset;            /* the divergence point D */
        struct dedup_rewind rw[3]; /* producer NULL: end */
        int want_pairs;            /* dedup_tracker_part_rewind() */
        struct rec after[12];      /* the new log, from D */
        int confirm;               /* confirm open gaps at the end */
        uint64_t records, duplicate, out_of_order, gap, missing;
};

#define R(p, e, s, o)                                                         \
        {                                                                     \
                p, e, s, o, DEDUP_V_OK                                        \
        }
#define A(p, e, s, o, v)                                                      \
        {                                                                     \
                p, e, s, o, DEDUP_V_##v                                       \
        }

static const struct rw_case cases[] = {
    {"the tail re-sent lands again: no duplicate, no out_of_order",
     {R("p", 0, 0, 0), R("p", 0, 1, 1), R("p", 0, 2, 2), R("p", 0, 3, 3),
      R("p", 0, 4, 4)},
     3,
     {{"p", 1, 0, 3, 2, 2}},
     1,
     {A("p", 0, 3, 3, OK), A("p", 0, 4, 4, OK), A("p", 0, 5, 5, OK)},
     1,
     6,
     0,
     0,
     0,
     0},
    {"the tail never comes back: the next seq opens a gap, missing",
     {R("p", 0, 0, 0), R("p", 0, 1, 1), R("p", 0, 2, 2), R("p", 0, 3, 3),
      R("p", 0, 4, 4)},
     3,
     {{"p", 1, 0, 3, 2, 2}},
     1,
     {A("p", 0, 5, 3, GAP_OPENED), A("p", 0, 6, 4, OK)},
     1,
     5,
     0,
     0,
     1,
     2},
    {"without a rewind the same new log reads as duplicates",
     {R("p", 0, 0, 0), R("p", 0, 1, 1), R("p", 0, 2, 2), R("p", 0, 3, 3),
      R("p", 0, 4, 4)},
     3,
     {{NULL, 0, 0, 0, 0, 0}},
     0,
     {A("p", 0, 3, 3, DUPLICATE), A("p", 0, 4, 4, DUPLICATE),
      A("p", 0, 5, 5, OK)},
     1,
     8,
     2,
     0,
     0,
     0},
    {"two producers interleaved, one of them untouched",
     {R("a", 0, 0, 0), R("b", 0, 0, 1), R("a", 0, 1, 2), R("b", 0, 1, 3),
      R("a", 0, 2, 4), R("a", 0, 3, 5)},
     3,
     {{"a", 1, 0, 2, 1, 2}, {"b", 1, 0, 1, 0, 1}},
     2,
     {A("b", 0, 1, 3, OK), A("a", 0, 3, 4, GAP_OPENED), A("b", 0, 2, 5, OK)},
     1,
     6,
     0,
     0,
     1,
     1},
    {"a new session in the truncated tail goes back to the old epoch",
     {R("p", 0, 0, 0), R("p", 0, 1, 1), R("p", 1, 0, 2), R("p", 1, 1, 3)},
     1,
     {{"p", 1, 0, 1, 0, 3}},
     1,
     {A("p", 0, 1, 1, OK), A("p", 1, 0, 2, OK), A("p", 1, 1, 3, OK)},
     1,
     4,
     0,
     0,
     0,
     0},
    {"a gap opened inside the truncated tail is dropped with it",
     {R("p", 0, 0, 0), R("p", 0, 1, 1), R("p", 0, 5, 2), R("p", 0, 6, 3)},
     2,
     {{"p", 1, 0, 5, 1, 2}},
     1,
     {A("p", 0, 2, 2, OK), A("p", 0, 3, 3, OK), A("p", 0, 4, 4, OK),
      A("p", 0, 5, 5, OK), A("p", 0, 6, 6, OK)},
     1,
     7,
     0,
     0,
     0,
     0},
    {"a producer first seen in the tail: its seqs come back as holes",
     {R("a", 0, 0, 0), R("a", 0, 1, 1), R("n", 0, 7, 2), R("n", 0, 8, 3)},
     2,
     {{"n", 1, 0, 7, 6, 2}},
     1,
     {A("n", 0, 9, 2, GAP_OPENED)},
     1,
     3,
     0,
     0,
     1,
     2},
};

static void feed(struct dedup_tracker *tr, const struct rec *r, int check,
                 const char *what)
{
        char e[16], s[32];

        for (; r->producer; r++) {
                struct dedup_hdrs h;
                enum dedup_verdict v;
                snprintf(e, sizeof(e), "%d", (int)r->epoch);
                snprintf(s, sizeof(s), "%lld", (long long)r->seq);
                dedup_hdrs_init(&h);
                dedup_hdrs_feed(&h, "eos.producer", 12, r->producer,
                                strlen(r->producer));
                dedup_hdrs_feed(&h, "eos.epoch", 9, e, strlen(e));
                dedup_hdrs_feed(&h, "eos.seq", 7, s, strlen(s));
                v = dedup_tracker_observe(tr, 0, r->offset, &h);
                if (check && v != r->want) {
                        fprintf(stderr,
                                "%s: %s %d/%lld at %lld: verdict %d, "
                                "want %d\n",
                                what, r->producer, (int)r->epoch,
                                (long long)r->seq, (long long)r->offset,
                                (int)v, (int)r->want);
                        fail();
                }
        }
}

static struct dedup_tracker *rw_tracker(void)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;

        dedup_config_defaults(&conf);
        conf.window.max_ids = 0;
        tr = dedup_tracker_new(&conf);
        assert_non_null(tr);
        assert_int_equal(dedup_tracker_part_add(tr, 0, 1), 0);
        dedup_tracker_begin(tr, 1000);
        return tr;
}

/* Part 0 of *tr moved into a new tracker through its state record (as
 * the owner's commit writes it and the next owner restores it); *tr is
 * freed and replaced. */
static void hand_over(struct dedup_tracker **tr, int64_t next_offset)
{
        struct dedup_tracker *to = rw_tracker();
        struct ledger_part a, b;
        char err[256];
        size_t len = 0;
        char *s;

        memset(&a, 0, sizeof(a));
        a.topic = "t";
        a.next_offset = next_offset;
        a.fp.offset = next_offset - 1;
        a.coverage_lo = a.coverage_hi = -1;
        b = a;
        b.next_offset = b.fp.offset = -1;
        s = partstate_export(*tr, &a, NULL, &len, err, sizeof(err));
        assert_non_null(s);
        assert_int_equal(partstate_import(to, &b, s, len, err, sizeof(err)),
                         0);
        assert_int_equal(b.next_offset, next_offset);
        free(s);
        dedup_tracker_free(*tr);
        *tr = to;
}

static void rewind_cases(int handover)
{
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const struct rw_case *c = &cases[i];
                struct dedup_tracker *tr = rw_tracker();
                const struct dedup_counts *k;
                size_t n = 0;

                feed(tr, c->before, 0, c->what);
                while (n < 3 && c->rw[n].producer)
                        n++;
                if (n) {
                        struct dedup_rewind rw[3];
                        size_t j;
                        memcpy(rw, c->rw, sizeof(rw));
                        for (j = 0; j < n; j++)
                                rw[j].producer_len = strlen(rw[j].producer);
                        if (dedup_tracker_part_rewind(tr, 0, c->offset, rw,
                                                      n) != c->want_pairs) {
                                fprintf(stderr, "%s: pairs rewound\n",
                                        c->what);
                                fail();
                        }
                }
                if (handover)
                        hand_over(&tr, c->offset);
                feed(tr, c->after, 1, c->what);
                if (c->confirm)
                        dedup_tracker_confirm_all(tr);
                k = dedup_tracker_part_counts(tr, 0);
                fprintf(stderr,
                        "# %s%s: records %llu dup %llu ooo %llu "
                        "gap %llu missing %llu\n",
                        c->what, handover ? " (handed over)" : "",
                        (unsigned long long)k->records,
                        (unsigned long long)k->anomalies[DEDUP_KIND_DUPLICATE],
                        (unsigned long long)
                            k->anomalies[DEDUP_KIND_OUT_OF_ORDER],
                        (unsigned long long)k->anomalies[DEDUP_KIND_GAP],
                        (unsigned long long)k->missing);
                assert_int_equal(k->records, c->records);
                assert_int_equal(k->anomalies[DEDUP_KIND_DUPLICATE],
                                 c->duplicate);
                assert_int_equal(k->anomalies[DEDUP_KIND_OUT_OF_ORDER],
                                 c->out_of_order);
                assert_int_equal(k->anomalies[DEDUP_KIND_GAP], c->gap);
                assert_int_equal(k->missing, c->missing);
                dedup_tracker_free(tr);
        }
}

static void test_rewind_cases(void **state)
{
        (void)state;
        rewind_cases(0);
}

/* serve --group: the owner rewinds, commits the state record, and
 * another member takes the partition over from it. */
static void test_rewind_handover(void **state)
{
        (void)state;
        rewind_cases(1);
}

static void test_rewind_bad(void **state)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        struct dedup_rewind rw = {"p", 1, 0, -1, -2, 0};

        (void)state;
        dedup_config_defaults(&conf);
        tr = dedup_tracker_new(&conf);
        assert_non_null(tr);
        assert_int_equal(dedup_tracker_part_add(tr, 0, 0), 0);
        assert_int_equal(dedup_tracker_part_rewind(tr, 1, 0, &rw, 1), -1);
        assert_int_equal(dedup_tracker_part_rewind(tr, 0, 0, &rw, 1), -1);
        rw.seq = 0;
        assert_int_equal(dedup_tracker_part_rewind(tr, 0, 0, &rw, 1), -1);
        rw.last_seq = -1;
        assert_int_equal(dedup_tracker_part_rewind(tr, 0, 0, &rw, 1), 0);
        dedup_tracker_free(tr);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_rewind_cases),
            cmocka_unit_test(test_rewind_handover),
            cmocka_unit_test(test_rewind_bad),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
