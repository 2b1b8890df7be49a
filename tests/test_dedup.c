/*
 * test_dedup.c - the detection engine, table-driven: header parsing and
 * every classification rule of dedup.h.
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

/* ------------------------------------------------------------------ */
/* Header parsing                                                      */
/* ------------------------------------------------------------------ */

struct hdr {
        const char *name;
        const char *value; /* NULL: a null header */
        size_t len;        /* 0: strlen(value) */
};

struct hdr_case {
        const char *what;
        struct hdr h[6];
        enum dedup_hdr_status want;
        int64_t seq;
        int32_t epoch;
        unsigned bad;
};

static void feed_all(struct dedup_hdrs *h, const struct hdr *hs)
{
        dedup_hdrs_init(h);
        for (; hs->name; hs++) {
                size_t len = hs->len ? hs->len
                                     : (hs->value ? strlen(hs->value) : 0);
                dedup_hdrs_feed(h, hs->name, strlen(hs->name), hs->value, len);
        }
}

#define P(v)                                                                  \
        {                                                                     \
                "eos.producer", v, 0                                          \
        }
#define E(v)                                                                  \
        {                                                                     \
                "eos.epoch", v, 0                                             \
        }
#define S(v)                                                                  \
        {                                                                     \
                "eos.seq", v, 0                                               \
        }

static const char name255[] =
    "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
    "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
    "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
    "ppppppppppppppppppppppppppppppppppppppppppppp";
static const char name256[] =
    "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
    "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
    "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
    "pppppppppppppppppppppppppppppppppppppppppppppp";

static const struct hdr_case hdr_cases[] = {
    {"all three", {P("p1"), E("3"), S("42")}, DEDUP_HDR_TRACKED, 42, 3, 0},
    {"none", {{"other", "x", 0}}, DEDUP_HDR_UNTRACKED, 0, 0, 0},
    {"no headers at all", {{0}}, DEDUP_HDR_UNTRACKED, 0, 0, 0},
    {"only eos.pid", {{"eos.pid", "7", 0}}, DEDUP_HDR_UNTRACKED, 0, 0, 0},
    {"only eos.msgid", {{"eos.msgid", "m", 0}}, DEDUP_HDR_UNTRACKED, 0, 0, 0},
    {"missing seq", {P("p"), E("0")}, DEDUP_HDR_MALFORMED, 0, 0, 0},
    {"missing epoch", {P("p"), S("0")}, DEDUP_HDR_MALFORMED, 0, 0, 0},
    {"missing producer", {E("0"), S("0")}, DEDUP_HDR_MALFORMED, 0, 0, 0},
    {"seq sign -",
     {P("p"), E("0"), S("-1")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_SEQ},
    {"seq sign +",
     {P("p"), E("0"), S("+1")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_SEQ},
    {"seq leading space",
     {P("p"), E("0"), S(" 1")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_SEQ},
    {"seq trailing space",
     {P("p"), E("0"), S("1 ")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_SEQ},
    {"seq empty",
     {P("p"), E("0"), S("")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_SEQ},
    {"seq null header",
     {P("p"), E("0"), {"eos.seq", NULL, 0}},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_SEQ},
    {"seq non-digit",
     {P("p"), E("0"), S("1a")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_SEQ},
    {"seq hex",
     {P("p"), E("0"), S("0x10")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_SEQ},
    {"seq 2^63-1",
     {P("p"), E("0"), S("9223372036854775807")},
     DEDUP_HDR_TRACKED,
     INT64_MAX,
     0,
     0},
    {"seq 2^63 overflows",
     {P("p"), E("0"), S("9223372036854775808")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_SEQ},
    {"seq 2^64 overflows",
     {P("p"), E("0"), S("18446744073709551616")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_SEQ},
    {"seq 30 digits",
     {P("p"), E("0"), S("000000000000000000000000000001")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_SEQ},
    {"seq leading zeros",
     {P("p"), E("0"), S("007")},
     DEDUP_HDR_TRACKED,
     7,
     0,
     0},
    {"seq with NUL",
     {P("p"), E("0"), {"eos.seq", "1\0", 2}},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_SEQ},
    {"epoch 2^31-1",
     {P("p"), E("2147483647"), S("0")},
     DEDUP_HDR_TRACKED,
     0,
     INT32_MAX,
     0},
    {"epoch 2^31 overflows",
     {P("p"), E("2147483648"), S("0")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_EPOCH},
    {"epoch negative",
     {P("p"), E("-1"), S("0")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_EPOCH},
    {"producer empty",
     {P(""), E("0"), S("0")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_PRODUCER},
    {"producer 255 bytes",
     {P(name255), E("0"), S("1")},
     DEDUP_HDR_TRACKED,
     1,
     0,
     0},
    {"producer 256 bytes",
     {P(name256), E("0"), S("1")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_PRODUCER},
    {"producer with NUL",
     {{"eos.producer", "a\0b", 3}, E("0"), S("0")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_PRODUCER},
    {"producer not UTF-8",
     {P("\xff\xfe"), E("0"), S("5")},
     DEDUP_HDR_TRACKED,
     5,
     0,
     0},
    {"prev_epoch and prev_seq",
     {P("p"),
      E("6"),
      S("0"),
      {"eos.prev_epoch", "5", 0},
      {"eos.prev_seq", "9", 0}},
     DEDUP_HDR_TRACKED,
     0,
     6,
     0},
    {"prev_epoch alone",
     {P("p"), E("6"), S("0"), {"eos.prev_epoch", "5", 0}},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     0},
    {"prev_seq invalid",
     {P("p"),
      E("6"),
      S("0"),
      {"eos.prev_epoch", "5", 0},
      {"eos.prev_seq", "-1", 0}},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_PREV_SEQ},
    {"repeat: bad then good",
     {P("p"), E("0"), S("x"), S("9")},
     DEDUP_HDR_TRACKED,
     9,
     0,
     0},
    {"repeat: good then bad",
     {P("p"), E("0"), S("9"), S("x")},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_SEQ},
    {"repeat: last value counts",
     {P("a"), E("1"), S("1"), E("2"), S("3")},
     DEDUP_HDR_TRACKED,
     3,
     2,
     0},
    {"bad optional pid",
     {P("p"), E("0"), S("0"), {"eos.pid", "-5", 0}},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     DEDUP_HDR_PID},
    {"name prefix only",
     {P("p"), E("0"), {"eos.seqx", "1", 0}},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     0},
    {"name case matters",
     {P("p"), E("0"), {"EOS.SEQ", "1", 0}},
     DEDUP_HDR_MALFORMED,
     0,
     0,
     0},
};

static void test_hdr_table(void **state)
{
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(hdr_cases) / sizeof(hdr_cases[0]); i++) {
                const struct hdr_case *c = &hdr_cases[i];
                struct dedup_hdrs h;
                feed_all(&h, c->h);
                if (dedup_hdrs_status(&h) != c->want)
                        fail_msg("case '%s': status %d, want %d", c->what,
                                 dedup_hdrs_status(&h), c->want);
                if (c->want == DEDUP_HDR_TRACKED &&
                    (h.seq != c->seq || h.epoch != c->epoch))
                        fail_msg("case '%s': seq/epoch %lld/%d", c->what,
                                 (long long)h.seq, h.epoch);
                if (c->bad && h.bad != c->bad)
                        fail_msg("case '%s': bad=%#x want %#x", c->what, h.bad,
                                 c->bad);
        }
}

static void test_hdr_big_value(void **state)
{
        size_t len = 1 << 20;
        char *big = malloc(len);
        struct dedup_hdrs h;

        (void)state;
        assert_non_null(big);
        memset(big, '1', len);
        dedup_hdrs_init(&h);
        dedup_hdrs_feed(&h, "eos.producer", 12, big, len);
        dedup_hdrs_feed(&h, "eos.epoch", 9, big, len);
        dedup_hdrs_feed(&h, "eos.seq", 7, big, len);
        assert_int_equal(dedup_hdrs_status(&h), DEDUP_HDR_MALFORMED);
        assert_int_equal(h.bad, DEDUP_HDR_REQUIRED);
        free(big);
}

/* ------------------------------------------------------------------ */
/* Classification                                                      */
/* ------------------------------------------------------------------ */

#define BAD_REC (-2) /* a malformed record */
#define UNT_REC (-3) /* an untracked record */

struct rec {
        uint32_t part;
        const char *producer;
        int32_t epoch;
        int64_t seq; /* BAD_REC / UNT_REC for those records */
        enum dedup_verdict want;
};

struct seq_case {
        const char *what;
        int from_log_start;
        struct rec r[12];
        /* after dedup_tracker_confirm_all(): */
        uint64_t gaps, missing, dups, ooo, fenced, malformed, untracked;
};

#define OK DEDUP_V_OK
#define BASE DEDUP_V_BASELINE
#define GAP DEDUP_V_GAP_OPENED
#define OOO DEDUP_V_OUT_OF_ORDER
#define DUP DEDUP_V_DUPLICATE
#define FEN DEDUP_V_FENCED
#define MAL DEDUP_V_MALFORMED
#define UNT DEDUP_V_UNTRACKED
#define MAXS INT64_MAX

static const struct seq_case seq_cases[] = {
    {"in order, mid-log start is a baseline",
     0,
     {{0, "a", 0, 10, BASE}, {0, "a", 0, 11, OK}, {0, "a", 0, 12, OK}},
     0,
     0,
     0,
     0,
     0,
     0,
     0},
    {"in order from log start",
     1,
     {{0, "a", 0, 0, OK}, {0, "a", 0, 1, OK}},
     0,
     0,
     0,
     0,
     0,
     0,
     0},
    {"from log start, first seq must be 0",
     1,
     {{0, "a", 0, 5, GAP}, {0, "a", 0, 6, OK}},
     1,
     5,
     0,
     0,
     0,
     0,
     0},
    {"gap then late fill is out_of_order, not a gap",
     1,
     {{0, "a", 0, 0, OK},
      {0, "a", 0, 1, OK},
      {0, "a", 0, 3, GAP},
      {0, "a", 0, 2, OOO},
      {0, "a", 0, 4, OK}},
     0,
     0,
     0,
     1,
     0,
     0,
     0},
    {"partial fill splits the gap",
     1,
     {{0, "a", 0, 0, OK},
      {0, "a", 0, 5, GAP},
      {0, "a", 0, 2, OOO},
      {0, "a", 0, 3, OOO}},
     2,
     2,
     0,
     2,
     0,
     0,
     0},
    {"fill from both ends",
     1,
     {{0, "a", 0, 0, OK},
      {0, "a", 0, 4, GAP},
      {0, "a", 0, 1, OOO},
      {0, "a", 0, 3, OOO},
      {0, "a", 0, 2, OOO}},
     0,
     0,
     0,
     3,
     0,
     0,
     0},
    {"a filled hole filled again is a duplicate",
     1,
     {{0, "a", 0, 0, OK},
      {0, "a", 0, 2, GAP},
      {0, "a", 0, 1, OOO},
      {0, "a", 0, 1, DUP}},
     0,
     0,
     1,
     1,
     0,
     0,
     0},
    {"duplicate of an earlier record",
     1,
     {{0, "a", 0, 0, OK},
      {0, "a", 0, 1, OK},
      {0, "a", 0, 2, OK},
      {0, "a", 0, 1, DUP},
      {0, "a", 0, 2, DUP},
      {0, "a", 0, 3, OK}},
     0,
     0,
     2,
     0,
     0,
     0,
     0},
    {"duplicate of the baseline",
     0,
     {{0, "a", 0, 7, BASE}, {0, "a", 0, 7, DUP}},
     0,
     0,
     1,
     0,
     0,
     0,
     0},
    {"lower epoch is fenced",
     1,
     {{0, "a", 1, 0, OK},
      {0, "a", 2, 0, OK},
      {0, "a", 1, 1, FEN},
      {0, "a", 2, 1, OK}},
     0,
     0,
     0,
     0,
     1,
     0,
     0},
    {"new session must start at 0",
     1,
     {{0, "a", 1, 0, OK},
      {0, "a", 1, 1, OK},
      {0, "a", 2, 3, GAP},
      {0, "a", 2, 4, OK}},
     1,
     3,
     0,
     0,
     0,
     0,
     0},
    {"old session's open gaps stay open",
     1,
     {{0, "a", 1, 0, OK},
      {0, "a", 1, 2, GAP},
      {0, "a", 2, 0, OK},
      {0, "a", 1, 1, FEN}},
     1,
     1,
     0,
     0,
     1,
     0,
     0},
    {"new session after a baseline",
     0,
     {{0, "a", 4, 100, BASE}, {0, "a", 5, 0, OK}, {0, "a", 5, 1, OK}},
     0,
     0,
     0,
     0,
     0,
     0,
     0},
    {"epoch 2^31-1 and a lower one",
     0,
     {{0, "a", INT32_MAX, 0, BASE},
      {0, "a", 0, 1, FEN},
      {0, "a", INT32_MAX - 1, 1, FEN},
      {0, "a", INT32_MAX, 1, OK}},
     0,
     0,
     0,
     0,
     2,
     0,
     0},
    {"seq up to 2^63-1, then a repeat is a duplicate",
     0,
     {{0, "a", 0, MAXS - 1, BASE},
      {0, "a", 0, MAXS, OK},
      {0, "a", 0, MAXS, DUP},
      {0, "a", 0, MAXS - 1, DUP}},
     0,
     0,
     2,
     0,
     0,
     0,
     0},
    {"a gap of 2^63-1 records",
     1,
     {{0, "a", 0, MAXS, GAP}},
     1,
     (uint64_t)MAXS,
     0,
     0,
     0,
     0,
     0},
    {"producers are independent",
     1,
     {{0, "a", 0, 0, OK},
      {0, "b", 0, 0, OK},
      {0, "a", 0, 1, OK},
      {0, "b", 0, 2, GAP},
      {0, "a", 0, 1, DUP},
      {0, "b", 0, 1, OOO}},
     0,
     0,
     1,
     1,
     0,
     0,
     0},
    {"partitions are independent",
     1,
     {{0, "a", 0, 0, OK},
      {1, "a", 0, 0, OK},
      {1, "a", 0, 1, OK},
      {0, "a", 0, 1, OK},
      {1, "a", 0, 0, DUP}},
     0,
     0,
     1,
     0,
     0,
     0,
     0},
    {"malformed and untracked records keep the partition moving",
     1,
     {{0, "a", 0, 0, OK},
      {0, NULL, 0, BAD_REC, MAL},
      {0, NULL, 0, UNT_REC, UNT},
      {0, "a", 0, 1, OK},
      {0, NULL, 0, BAD_REC, MAL}},
     0,
     0,
     0,
     0,
     0,
     2,
     1},
};

static void observe(struct dedup_tracker *tr, const struct rec *r,
                    int64_t offset, enum dedup_verdict *v)
{
        struct dedup_hdrs h;
        char ebuf[16], sbuf[24];

        dedup_hdrs_init(&h);
        if (r->seq == BAD_REC) {
                dedup_hdrs_feed(&h, "eos.producer", 12, "x", 1);
                dedup_hdrs_feed(&h, "eos.seq", 7, "-1", 2);
        } else if (r->seq != UNT_REC) {
                snprintf(ebuf, sizeof(ebuf), "%d", (int)r->epoch);
                snprintf(sbuf, sizeof(sbuf), "%lld", (long long)r->seq);
                dedup_hdrs_feed(&h, "eos.producer", 12, r->producer,
                                strlen(r->producer));
                dedup_hdrs_feed(&h, "eos.epoch", 9, ebuf, strlen(ebuf));
                dedup_hdrs_feed(&h, "eos.seq", 7, sbuf, strlen(sbuf));
        }
        *v = dedup_tracker_observe(tr, r->part, offset, &h);
}

static struct dedup_tracker *tracker_new(int from_log_start)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;

        dedup_config_defaults(&conf);
        tr = dedup_tracker_new(&conf);
        assert_non_null(tr);
        assert_int_equal(dedup_tracker_part_add(tr, 0, from_log_start), 0);
        assert_int_equal(dedup_tracker_part_add(tr, 1, from_log_start), 0);
        dedup_tracker_begin(tr, 1000);
        return tr;
}

static uint64_t sum(struct dedup_tracker *tr, int kind)
{
        uint64_t n = 0;
        uint32_t p;

        for (p = 0; p < 2; p++) {
                const struct dedup_counts *c = dedup_tracker_part_counts(tr,
                                                                         p);
                n += kind < 0 ? (kind == -1 ? c->missing : c->untracked)
                              : c->anomalies[kind];
        }
        return n;
}

static void test_seq_table(void **state)
{
        size_t i, j;

        (void)state;
        for (i = 0; i < sizeof(seq_cases) / sizeof(seq_cases[0]); i++) {
                const struct seq_case *c = &seq_cases[i];
                struct dedup_tracker *tr = tracker_new(c->from_log_start);
                int64_t off[2] = {0, 0};
                for (j = 0; c->r[j].producer || c->r[j].seq < 0; j++) {
                        enum dedup_verdict v;
                        observe(tr, &c->r[j], off[c->r[j].part]++, &v);
                        if (v != c->r[j].want)
                                fail_msg("case '%s' record %zu: verdict %d, "
                                         "want %d",
                                         c->what, j, v, c->r[j].want);
                }
                dedup_tracker_confirm_all(tr);
                if (sum(tr, DEDUP_KIND_GAP) != c->gaps ||
                    sum(tr, -1) != c->missing ||
                    sum(tr, DEDUP_KIND_DUPLICATE) != c->dups ||
                    sum(tr, DEDUP_KIND_OUT_OF_ORDER) != c->ooo ||
                    sum(tr, DEDUP_KIND_FENCED) != c->fenced ||
                    sum(tr, DEDUP_KIND_MALFORMED) != c->malformed ||
                    sum(tr, -2) != c->untracked)
                        fail_msg(
                            "case '%s': gaps %llu missing %llu dup %llu "
                            "ooo %llu fenced %llu malformed %llu "
                            "untracked %llu",
                            c->what,
                            (unsigned long long)sum(tr, DEDUP_KIND_GAP),
                            (unsigned long long)sum(tr, -1),
                            (unsigned long long)sum(tr, DEDUP_KIND_DUPLICATE),
                            (unsigned long long)sum(tr,
                                                    DEDUP_KIND_OUT_OF_ORDER),
                            (unsigned long long)sum(tr, DEDUP_KIND_FENCED),
                            (unsigned long long)sum(tr, DEDUP_KIND_MALFORMED),
                            (unsigned long long)sum(tr, -2));
                assert_int_equal(dedup_tracker_open_gaps(tr), 0);
                dedup_tracker_free(tr);
        }
}

/* Evidence: first-copy offsets, coalescing, gap ranges. */
static void test_events(void **state)
{
        struct dedup_tracker *tr = tracker_new(1);
        const struct dedup_event *ev;
        enum dedup_verdict v;
        size_t n;
        int64_t s;

        (void)state;
        for (s = 0; s < 5; s++) {
                struct rec r = {0, "a", 0, s, OK};
                observe(tr, &r, 100 + s, &v);
        }
        for (s = 1; s <= 3; s++) { /* a retried batch: seq 1..3 again */
                struct rec r = {0, "a", 0, s, DUP};
                observe(tr, &r, 200 + s, &v);
                assert_int_equal(v, DEDUP_V_DUPLICATE);
        }
        {
                struct rec r = {0, "a", 0, 9, GAP};
                observe(tr, &r, 300, &v);
        }
        ev = dedup_tracker_events(tr, &n);
        assert_int_equal(n, 1); /* gap not confirmed yet */
        assert_int_equal(ev[0].kind, DEDUP_KIND_DUPLICATE);
        assert_int_equal(ev[0].count, 3);
        assert_int_equal(ev[0].seq_lo, 1);
        assert_int_equal(ev[0].seq_hi, 3);
        assert_int_equal(ev[0].offset_lo, 201);
        assert_int_equal(ev[0].offset_hi, 203);
        assert_int_equal(ev[0].first_offset, 101);
        assert_memory_equal(ev[0].producer, "a", 1);
        dedup_tracker_events_clear(tr);

        dedup_tracker_confirm_all(tr);
        ev = dedup_tracker_events(tr, &n);
        assert_int_equal(n, 1);
        assert_int_equal(ev[0].kind, DEDUP_KIND_GAP);
        assert_int_equal(ev[0].seq_lo, 5);
        assert_int_equal(ev[0].seq_hi, 8);
        assert_int_equal(ev[0].count, 4);
        assert_int_equal(ev[0].offset_lo, 300);
        dedup_tracker_free(tr);
}

/* Malformed events name only malformed records: one that is fine in
 * between splits them. */
static void test_malformed_events(void **state)
{
        struct dedup_tracker *tr = tracker_new(0);
        const struct dedup_event *ev;
        enum dedup_verdict v;
        size_t n;

        (void)state;
        observe(tr, &(struct rec){0, NULL, 0, BAD_REC, MAL}, 0, &v);
        observe(tr, &(struct rec){0, "a", 0, 0, BASE}, 1, &v);
        observe(tr, &(struct rec){0, NULL, 0, BAD_REC, MAL}, 2, &v);
        observe(tr, &(struct rec){0, NULL, 0, BAD_REC, MAL}, 3, &v);
        ev = dedup_tracker_events(tr, &n);
        assert_int_equal(n, 2);
        assert_int_equal(ev[0].offset_lo, 0);
        assert_int_equal(ev[0].offset_hi, 0);
        assert_int_equal(ev[0].count, 1);
        assert_int_equal(ev[1].offset_lo, 2);
        assert_int_equal(ev[1].offset_hi, 3);
        assert_int_equal(ev[1].count, 2);
        dedup_tracker_free(tr);
}

/* The grace period confirms by records or by time, whichever first. */
static void test_grace(void **state)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        enum dedup_verdict v;
        int64_t off = 0;
        int i;

        (void)state;
        dedup_config_defaults(&conf);
        conf.gap_grace_records = 10;
        conf.gap_grace_ms = 5000;
        tr = dedup_tracker_new(&conf);
        assert_int_equal(dedup_tracker_part_add(tr, 0, 1), 0);
        dedup_tracker_begin(tr, 0);
        {
                struct rec r0 = {0, "a", 0, 0, OK}, r2 = {0, "a", 0, 2, GAP};
                observe(tr, &r0, off++, &v);
                observe(tr, &r2, off++, &v);
        }
        for (i = 0; i < 8; i++) {
                struct rec r = {0, "b", 0, i, OK};
                observe(tr, &r, off++, &v);
        }
        dedup_tracker_tick(tr);
        assert_int_equal(dedup_tracker_open_gaps(tr), 1); /* 8 < 10 */
        {
                struct rec r = {0, "b", 0, 8, OK};
                observe(tr, &r, off++, &v);
                observe(tr, &(struct rec){0, "b", 0, 9, OK}, off++, &v);
        }
        dedup_tracker_tick(tr);
        assert_int_equal(dedup_tracker_open_gaps(tr), 0);
        assert_int_equal(dedup_tracker_part_counts(tr, 0)->missing, 1);

        /* By time, the records' time: the wall clock alone moves nothing,
         * a record 5 s later (of any producer) does. */
        observe(tr, &(struct rec){0, "a", 0, 5, GAP}, off++, &v);
        dedup_tracker_begin(tr, 60000);
        dedup_tracker_tick(tr);
        assert_int_equal(dedup_tracker_open_gaps(tr), 1);
        dedup_tracker_begin(tr, 4999);
        observe(tr, &(struct rec){0, "b", 0, 10, OK}, off++, &v);
        dedup_tracker_tick(tr);
        assert_int_equal(dedup_tracker_open_gaps(tr), 1);
        dedup_tracker_begin(tr, 5000);
        observe(tr, &(struct rec){0, "b", 0, 11, OK}, off++, &v);
        dedup_tracker_tick(tr);
        assert_int_equal(dedup_tracker_open_gaps(tr), 0);
        assert_int_equal(dedup_tracker_part_counts(tr, 0)->missing, 3);
        dedup_tracker_free(tr);
}

/* Idle pairs expire (reported, gaps confirmed), and come back fresh. */
static void test_expiry(void **state)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        const struct dedup_event *ev;
        enum dedup_verdict v;
        size_t n, i, expired = 0, gaps = 0;
        size_t mem0;

        (void)state;
        dedup_config_defaults(&conf);
        conf.idle_ttl_ms = 500;
        conf.gap_grace_ms = 0;
        conf.gap_grace_records = 0;
        tr = dedup_tracker_new(&conf);
        assert_int_equal(dedup_tracker_part_add(tr, 0, 0), 0);
        dedup_tracker_begin(tr, 0);
        mem0 = dedup_tracker_memory(tr);
        observe(tr, &(struct rec){0, "old", 0, 0, BASE}, 0, &v);
        observe(tr, &(struct rec){0, "old", 0, 3, GAP}, 1, &v);
        dedup_tracker_begin(tr, 400);
        observe(tr, &(struct rec){0, "new", 0, 0, BASE}, 2, &v);
        dedup_tracker_dirty_clear(tr);
        dedup_tracker_begin(tr, 600);
        observe(tr, &(struct rec){0, "new", 0, 1, OK}, 3, &v);
        dedup_tracker_tick(tr);
        assert_int_equal(dedup_tracker_pairs(tr), 1);
        ev = dedup_tracker_events(tr, &n);
        for (i = 0; i < n; i++) {
                expired += ev[i].kind == DEDUP_KIND_EXPIRED;
                gaps += ev[i].kind == DEDUP_KIND_GAP;
                if (ev[i].kind == DEDUP_KIND_EXPIRED)
                        assert_memory_equal(ev[i].producer, "old", 3);
        }
        assert_int_equal(expired, 1);
        assert_int_equal(gaps, 1);
        dedup_tracker_events_clear(tr);
        dedup_tracker_dirty_clear(tr);
        /* It returns as a new baseline, not as a duplicate or gap. */
        observe(tr, &(struct rec){0, "old", 0, 1, BASE}, 4, &v);
        assert_int_equal(v, DEDUP_V_BASELINE);
        dedup_tracker_begin(tr, 5000);
        observe(tr, &(struct rec){0, "last", 0, 0, BASE}, 5, &v);
        dedup_tracker_tick(tr);
        dedup_tracker_events_clear(tr);
        dedup_tracker_dirty_clear(tr);
        assert_int_equal(dedup_tracker_pairs(tr), 1); /* "last" */
        /* Tables keep their size; names and pairs were released. */
        assert_true(dedup_tracker_memory(tr) >= mem0);
        dedup_tracker_free(tr);
}

static void test_rebaseline(void **state)
{
        struct dedup_tracker *tr = tracker_new(1);
        enum dedup_verdict v;

        (void)state;
        observe(tr, &(struct rec){0, "a", 0, 0, OK}, 0, &v);
        observe(tr, &(struct rec){0, "a", 0, 1, OK}, 1, &v);
        dedup_tracker_part_rebaseline(tr, 0);
        assert_false(dedup_tracker_part_from_log_start(tr, 0));
        observe(tr, &(struct rec){0, "a", 0, 50, BASE}, 60, &v);
        assert_int_equal(v, DEDUP_V_BASELINE);
        observe(tr, &(struct rec){0, "z", 0, 9, BASE}, 61, &v);
        assert_int_equal(v, DEDUP_V_BASELINE);
        dedup_tracker_confirm_all(tr);
        assert_int_equal(dedup_tracker_part_counts(tr, 0)->missing, 0);
        dedup_tracker_free(tr);
}

/* Compacted topics: the cleaner's holes are not gaps, duplicates still
 * count. */
static void test_compacted(void **state)
{
        struct dedup_tracker *tr = tracker_new(1);
        enum dedup_verdict v;

        (void)state;
        dedup_tracker_part_set_compacted(tr, 0, 1);
        observe(tr, &(struct rec){0, "a", 0, 3, BASE}, 0, &v);
        assert_int_equal(v, DEDUP_V_OK);
        observe(tr, &(struct rec){0, "a", 0, 9, BASE}, 1, &v);
        assert_int_equal(v, DEDUP_V_BASELINE);
        observe(tr, &(struct rec){0, "a", 0, 9, DUP}, 2, &v);
        assert_int_equal(v, DEDUP_V_DUPLICATE);
        observe(tr, &(struct rec){0, "a", 1, 4, BASE}, 3, &v);
        assert_int_equal(v, DEDUP_V_BASELINE);
        dedup_tracker_confirm_all(tr);
        assert_int_equal(dedup_tracker_part_counts(tr, 0)->missing, 0);
        assert_int_equal(
            dedup_tracker_part_counts(tr, 0)->anomalies[DEDUP_KIND_DUPLICATE],
            1);
        dedup_tracker_free(tr);
}

static void test_max_open_gaps(void **state)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        enum dedup_verdict v;
        int64_t s;

        (void)state;
        dedup_config_defaults(&conf);
        conf.max_open_gaps = 4;
        tr = dedup_tracker_new(&conf);
        assert_int_equal(dedup_tracker_part_add(tr, 0, 1), 0);
        for (s = 0; s < 20; s += 2)
                observe(tr, &(struct rec){0, "a", 0, s, OK}, s, &v);
        /* seq 1,3,...,17 missing: 9 gaps, 4 may stay open */
        assert_int_equal(dedup_tracker_open_gaps(tr), 4);
        assert_int_equal(
            dedup_tracker_part_counts(tr, 0)->anomalies[DEDUP_KIND_GAP], 5);
        dedup_tracker_free(tr);
}

struct collect {
        struct dedup_pair_view v[8];
        struct dedup_gap g[8][8];
        char names[8][16];
        size_t n;
};

static int collect_cb(void *opaque, const struct dedup_pair_view *pv)
{
        struct collect *c = opaque;

        assert_true(c->n < 8 && pv->ngaps <= 8 && pv->producer_len < 16);
        c->v[c->n] = *pv;
        memcpy(c->names[c->n], pv->producer, pv->producer_len);
        c->v[c->n].producer = c->names[c->n];
        if (pv->ngaps)
                memcpy(c->g[c->n], pv->gaps, pv->ngaps * sizeof(*pv->gaps));
        c->v[c->n].gaps = c->g[c->n];
        c->n++;
        return 0;
}

/* State read out and restored behaves exactly like the original. */
static void test_restore(void **state)
{
        struct dedup_tracker *a = tracker_new(1), *b = tracker_new(1);
        struct collect col = {0};
        enum dedup_verdict va, vb;
        size_t i, n;

        (void)state;
        observe(a, &(struct rec){0, "a", 3, 0, OK}, 0, &va);
        observe(a, &(struct rec){0, "a", 3, 1, OK}, 1, &va);
        observe(a, &(struct rec){0, "a", 3, 6, GAP}, 2, &va);
        observe(a, &(struct rec){1, "b", 0, 0, OK}, 0, &va);
        dedup_tracker_dirty_foreach(a, collect_cb, &col);
        assert_int_equal(col.n, 2);
        dedup_tracker_dirty_clear(a);
        dedup_tracker_events(a, &n);
        assert_int_equal(n, 0);
        for (i = 0; i < col.n; i++)
                assert_int_equal(dedup_tracker_restore(b, &col.v[i]), 0);
        assert_int_equal(dedup_tracker_restore(b, &col.v[0]), -1);
        assert_int_equal(dedup_tracker_open_gaps(b), 1);
        {
                const struct rec rs[] = {
                    {0, "a", 3, 1, DUP}, {0, "a", 3, 4, OOO},
                    {0, "a", 3, 7, OK},  {0, "a", 2, 8, FEN},
                    {1, "b", 0, 1, OK},  {1, "b", 0, 0, DUP},
                };
                for (i = 0; i < sizeof(rs) / sizeof(rs[0]); i++) {
                        observe(a, &rs[i], 10 + (int64_t)i, &va);
                        observe(b, &rs[i], 10 + (int64_t)i, &vb);
                        assert_int_equal(va, rs[i].want);
                        assert_int_equal(vb, rs[i].want);
                }
        }
        /* The duplicate's first copy was at offset 1 in both. */
        {
                const struct dedup_event *ea = dedup_tracker_events(a, &n);
                const struct dedup_event *eb;
                size_t nb;
                eb = dedup_tracker_events(b, &nb);
                assert_int_equal(n, nb);
                assert_int_equal(ea[0].first_offset, 1);
                assert_int_equal(eb[0].first_offset, 1);
        }
        dedup_tracker_free(a);
        dedup_tracker_free(b);
}

/* Restoring more open gaps than max_open_gaps now allows confirms the
 * oldest and marks the pair dirty, so the ledger does not keep it open
 * (it would be confirmed again on every restart). */
static void test_restore_fewer_gaps(void **state)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        struct dedup_gap g[3] = {{0, 1, 1, 10, 0, 0, 0},
                                 {0, 3, 3, 12, 0, 0, 0},
                                 {0, 5, 5, 14, 0, 0, 0}};
        struct dedup_pair_view pv;
        struct collect col = {0};
        size_t n;

        (void)state;
        dedup_config_defaults(&conf);
        conf.max_open_gaps = 2;
        tr = dedup_tracker_new(&conf);
        assert_int_equal(dedup_tracker_part_add(tr, 0, 1), 0);
        memset(&pv, 0, sizeof(pv));
        pv.producer = "a";
        pv.producer_len = 1;
        pv.last_seq = 6;
        pv.gaps = g;
        pv.ngaps = 3;
        assert_int_equal(dedup_tracker_restore(tr, &pv), 0);
        assert_int_equal(dedup_tracker_open_gaps(tr), 2);
        dedup_tracker_events(tr, &n);
        assert_int_equal(n, 1);
        dedup_tracker_dirty_foreach(tr, collect_cb, &col);
        assert_int_equal(col.n, 1);
        assert_int_equal(col.v[0].ngaps, 2);
        assert_int_equal(col.v[0].gaps[0].lo, 3);
        dedup_tracker_free(tr);
}

/*
 * dirty_sort orders the dirty pairs as the ledger's B-tree does: part,
 * then producer bytes unsigned, a prefix first (names longer than the
 * sort's 12-byte prefix too).  The stored hint is 0 for a new pair, 1 once
 * a dirty_clear saw it dirty, and 1 for a restored pair.
 */
static void test_dirty_order_and_stored(void **state)
{
        static const char *const in[][2] = {{"1", "b"},
                                            {"0", "zz"},
                                            {"0", "\xc3x"},
                                            {"0", "abcdefghijklm1"},
                                            {"0", "ab"},
                                            {"1", "a"},
                                            {"0", "abcdefghijklm0"},
                                            {"0", "a"}};
        static const char *const want[][2] = {{"0", "a"},
                                              {"0", "ab"},
                                              {"0", "abcdefghijklm0"},
                                              {"0", "abcdefghijklm1"},
                                              {"0", "zz"},
                                              {"0", "\xc3x"},
                                              {"1", "a"},
                                              {"1", "b"}};
        struct dedup_tracker *tr = tracker_new(0), *b = tracker_new(0);
        struct collect col = {0}, again = {0};
        enum dedup_verdict v;
        size_t i;

        (void)state;
        for (i = 0; i < 8; i++)
                observe(tr,
                        &(struct rec){(uint32_t)(in[i][0][0] - '0'), in[i][1],
                                      0, 0, BASE},
                        (int64_t)i, &v);
        dedup_tracker_dirty_sort(tr);
        dedup_tracker_dirty_foreach(tr, collect_cb, &col);
        assert_int_equal(col.n, 8);
        for (i = 0; i < 8; i++) {
                assert_int_equal(col.v[i].part, want[i][0][0] - '0');
                assert_int_equal(col.v[i].producer_len, strlen(want[i][1]));
                assert_memory_equal(col.v[i].producer, want[i][1],
                                    strlen(want[i][1]));
                assert_int_equal(col.v[i].stored, 0);
        }
        dedup_tracker_dirty_clear(tr);

        /* Committed once: stored; a pair new since is not. */
        observe(tr, &(struct rec){0, "zz", 0, 1, OK}, 8, &v);
        observe(tr, &(struct rec){1, "c", 0, 0, BASE}, 9, &v);
        dedup_tracker_dirty_sort(tr);
        dedup_tracker_dirty_foreach(tr, collect_cb, &again);
        assert_int_equal(again.n, 2);
        assert_memory_equal(again.v[0].producer, "zz", 2);
        assert_int_equal(again.v[0].stored, 1);
        assert_memory_equal(again.v[1].producer, "c", 1);
        assert_int_equal(again.v[1].stored, 0);

        /* Restored: stored, also when it changes again. */
        assert_int_equal(dedup_tracker_restore(b, &col.v[0]), 0);
        observe(b, &(struct rec){0, "a", 0, 1, OK}, 10, &v);
        assert_int_equal(v, DEDUP_V_OK);
        again.n = 0;
        dedup_tracker_dirty_foreach(b, collect_cb, &again);
        assert_int_equal(again.n, 1);
        assert_int_equal(again.v[0].stored, 1);
        dedup_tracker_free(tr);
        dedup_tracker_free(b);
}

/* Many producers: the index grows, memory per pair stays bounded. */
static void test_many_pairs(void **state)
{
        struct dedup_tracker *tr = tracker_new(0);
        enum dedup_verdict v;
        char name[32];
        size_t mem;
        int i;

        (void)state;
        for (i = 0; i < 20000; i++) {
                struct rec r = {(uint32_t)(i & 1), name, 0, 5, BASE};
                snprintf(name, sizeof(name), "producer-%d", i);
                observe(tr, &r, i, &v);
                assert_int_equal(v, DEDUP_V_BASELINE);
        }
        for (i = 0; i < 20000; i++) {
                struct rec r = {(uint32_t)(i & 1), name, 0, 6, OK};
                snprintf(name, sizeof(name), "producer-%d", i);
                observe(tr, &r, 20000 + i, &v);
                assert_int_equal(v, DEDUP_V_OK);
        }
        assert_int_equal(dedup_tracker_pairs(tr), 20000);
        mem = dedup_tracker_memory(tr);
        /* Pair, index and a 16-byte name: well under 256 bytes each. */
        assert_true(mem / 20000 < 256);
        dedup_tracker_free(tr);
}

static void test_kind_names(void **state)
{
        enum dedup_kind k;

        (void)state;
        assert_string_equal(dedup_kind_name(DEDUP_KIND_OUT_OF_ORDER),
                            "out_of_order");
        assert_int_equal(dedup_kind_parse("fenced", &k), 0);
        assert_int_equal(k, DEDUP_KIND_FENCED);
        assert_int_equal(dedup_kind_parse("nope", &k), -1);
        assert_null(dedup_kind_name(DEDUP_KIND__CNT));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_hdr_table),
            cmocka_unit_test(test_hdr_big_value),
            cmocka_unit_test(test_seq_table),
            cmocka_unit_test(test_events),
            cmocka_unit_test(test_malformed_events),
            cmocka_unit_test(test_grace),
            cmocka_unit_test(test_expiry),
            cmocka_unit_test(test_rebaseline),
            cmocka_unit_test(test_compacted),
            cmocka_unit_test(test_max_open_gaps),
            cmocka_unit_test(test_restore),
            cmocka_unit_test(test_restore_fewer_gaps),
            cmocka_unit_test(test_dirty_order_and_stored),
            cmocka_unit_test(test_many_pairs),
            cmocka_unit_test(test_kind_names),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
