/*
 * test_partstate.c - a partition's state moved between trackers
 * (auditor/partstate.h, dedup_tracker_part_forget/_part_foreach): a
 * tracker that imports the exported state of a stream's prefix gives,
 * for the rest of the stream, the verdicts and counts of the tracker that
 * saw it all; forget drops a part and import brings it back; malformed
 * records are refused with one line, nothing changed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../auditor/group/partstate.h"

#define NPARTS 3
#define NPROD 4
#define NREC 6000

struct rec {
        uint32_t part;
        int prod;
        int32_t epoch;
        int64_t seq;
        int64_t ts;
};

static struct rec recs[NREC];
static int64_t offsets[NREC];

/* A stream with duplicates, gaps, late records, new epochs and fenced
 * writes, from a fixed LCG. */
static void gen(void)
{
        int64_t next[NPARTS][NPROD] = {{0}};
        int32_t epoch[NPROD] = {0};
        int64_t off[NPARTS] = {0};
        /* the last sequence skipped by a gap, sent late (-1: none) */
        int64_t late[NPARTS][NPROD];
        uint64_t x = 12345;
        size_t i;

        memset(late, 0xff, sizeof(late));
        for (i = 0; i < NREC; i++) {
                struct rec *r = &recs[i];
                unsigned roll;
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                roll = (unsigned)(x >> 33) % 100;
                r->part = (uint32_t)((x >> 20) % NPARTS);
                r->prod = (int)((x >> 40) % NPROD);
                r->epoch = epoch[r->prod];
                r->seq = next[r->part][r->prod];
                r->ts = 1000000 + (int64_t)i;
                if (roll < 3 && r->seq > 0) {
                        r->seq = r->seq - 1 - (int64_t)((x >> 50) % 3);
                        if (r->seq < 0)
                                r->seq = 0; /* duplicate */
                } else if (roll < 6) {
                        r->seq += 1 + (int64_t)((x >> 50) % 4); /* gap */
                        late[r->part][r->prod] = r->seq - 1;
                        next[r->part][r->prod] = r->seq + 1;
                } else if (roll < 10 && late[r->part][r->prod] >= 0) {
                        r->seq = late[r->part][r->prod]; /* fills it late */
                        late[r->part][r->prod] = -1;
                } else if (roll < 7 && r->epoch > 0) {
                        r->epoch--; /* fenced */
                } else if (roll < 8) {
                        epoch[r->prod]++; /* a new session */
                        r->epoch = epoch[r->prod];
                        r->seq = 0;
                        for (unsigned p = 0; p < NPARTS; p++) {
                                next[p][r->prod] = 0;
                                late[p][r->prod] = -1;
                        }
                        next[r->part][r->prod] = 1;
                } else {
                        next[r->part][r->prod] = r->seq + 1;
                }
                offsets[i] = off[r->part]++;
        }
}

static struct dedup_tracker *tracker(void)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        uint32_t p;

        dedup_config_defaults(&conf);
        conf.gap_grace_records = 40;
        conf.gap_grace_ms = 0;
        conf.idle_ttl_ms = 0;
        conf.window.max_ids = 0;
        conf.max_open_gaps = 4;
        tr = dedup_tracker_new(&conf);
        assert_non_null(tr);
        for (p = 0; p < NPARTS; p++)
                assert_int_equal(dedup_tracker_part_add(tr, p, 1), 0);
        dedup_tracker_begin(tr, 1000);
        return tr;
}

/* What the last obs() reported: verdict and events, to compare. */
struct seen {
        enum dedup_verdict v;
        size_t nev;
        struct dedup_event ev[8];
};

static enum dedup_verdict obs_ev(struct dedup_tracker *tr, size_t i,
                                 struct seen *sn);

static enum dedup_verdict obs(struct dedup_tracker *tr, size_t i)
{
        return obs_ev(tr, i, NULL);
}

/* 0 when a and b saw the same (events' producer pointers aside). */
static int seen_diff(const struct seen *a, const struct seen *b)
{
        size_t k;

        if (a->v != b->v || a->nev != b->nev)
                return 1;
        for (k = 0; k < a->nev && k < 8; k++) {
                const struct dedup_event *x = &a->ev[k], *y = &b->ev[k];
                if (x->kind != y->kind || x->part != y->part ||
                    x->epoch != y->epoch || x->seq_lo != y->seq_lo ||
                    x->seq_hi != y->seq_hi || x->offset_lo != y->offset_lo ||
                    x->offset_hi != y->offset_hi ||
                    /* A fenced write's evidence (where the session
                     * began) is not restored, by the ledger either
                     * (dedup_tracker_restore's name_restore). */
                    (x->kind != DEDUP_KIND_FENCED &&
                     x->first_offset != y->first_offset) ||
                    x->count != y->count)
                        return 1;
        }
        return 0;
}

static enum dedup_verdict obs_ev(struct dedup_tracker *tr, size_t i,
                                 struct seen *sn)
{
        static const char *const names[NPROD] = {"p-a", "p-b", "p\xff\x01",
                                                 "p-d"};
        const struct rec *r = &recs[i];
        struct dedup_hdrs h;
        char eb[16], sb[24];
        enum dedup_verdict v;

        dedup_hdrs_init(&h);
        snprintf(eb, sizeof(eb), "%d", (int)r->epoch);
        snprintf(sb, sizeof(sb), "%lld", (long long)r->seq);
        dedup_hdrs_feed(&h, "eos.producer", 12, names[r->prod],
                        strlen(names[r->prod]));
        dedup_hdrs_feed(&h, "eos.epoch", 9, eb, strlen(eb));
        dedup_hdrs_feed(&h, "eos.seq", 7, sb, strlen(sb));
        h.ts_ms = r->ts;
        v = dedup_tracker_observe(tr, r->part, offsets[i], &h);
        dedup_tracker_tick(tr);
        if (sn) {
                const struct dedup_event *ev;
                size_t k;
                ev = dedup_tracker_events(tr, &sn->nev);
                sn->v = v;
                for (k = 0; k < sn->nev && k < 8; k++)
                        sn->ev[k] = ev[k];
        }
        dedup_tracker_events_clear(tr);
        dedup_tracker_dirty_clear(tr);
        return v;
}

static void lp_init(struct ledger_part *lp, uint32_t p)
{
        memset(lp, 0, sizeof(*lp));
        lp->topic = "audited";
        lp->partition = (int32_t)p;
        lp->part = p;
        lp->next_offset = -1;
        lp->fp.offset = -1;
        lp->coverage_lo = lp->coverage_hi = -1;
}

static void counts_equal(struct dedup_tracker *a, struct dedup_tracker *b)
{
        uint32_t p;

        for (p = 0; p < NPARTS; p++)
                assert_memory_equal(dedup_tracker_part_counts(a, p),
                                    dedup_tracker_part_counts(b, p),
                                    sizeof(struct dedup_counts));
        assert_int_equal(dedup_tracker_pairs(a), dedup_tracker_pairs(b));
        assert_int_equal(dedup_tracker_open_gaps(a),
                         dedup_tracker_open_gaps(b));
}

/* Exports every part of from into to (after forgetting it there). */
static void move_all(struct dedup_tracker *from, struct dedup_tracker *to,
                     size_t upto)
{
        char err[256];
        uint32_t p;

        for (p = 0; p < NPARTS; p++) {
                struct ledger_part a, b;
                size_t len = 0;
                char *s;
                lp_init(&a, p);
                lp_init(&b, p);
                a.next_offset = (int64_t)upto; /* any value: it travels */
                a.fp.offset = 7;
                a.fp.lo = 0xfedcba9876543210ULL;
                a.fp.hi = 1;
                s = partstate_export(from, &a, NULL, &len, err, sizeof(err));
                assert_non_null(s);
                assert_int_equal(strlen(s), len);
                assert_int_equal(partstate_import(to, &b, s, len, err,
                                                  sizeof(err)),
                                 0);
                assert_int_equal(b.next_offset, a.next_offset);
                assert_memory_equal(&b.fp, &a.fp, sizeof(a.fp));
                assert_true(b.dirty);
                free(s);
        }
}

static void test_round_trip(void **state)
{
        static const size_t cuts[] = {1, 777, 3001, NREC - 1};
        size_t c;

        (void)state;
        gen();
        for (c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
                struct dedup_tracker *a = tracker(), *b = tracker(),
                                     *fresh = tracker();
                size_t i;
                int diff = 0;

                for (i = 0; i < cuts[c]; i++) {
                        obs(a, i);
                        obs(b, i);
                }
                move_all(b, fresh, cuts[c]);
                counts_equal(a, fresh);
                for (i = cuts[c]; i < NREC; i++) {
                        struct seen sa, sf;
                        obs_ev(a, i, &sa);
                        obs_ev(fresh, i, &sf);
                        diff += seen_diff(&sa, &sf);
                }
                assert_int_equal(diff, 0);
                dedup_tracker_confirm_all(a);
                dedup_tracker_confirm_all(fresh);
                counts_equal(a, fresh);
                /* The stream has every kind it should exercise. */
                assert_true(dedup_tracker_part_counts(a, 0)
                                ->anomalies[DEDUP_KIND_DUPLICATE] > 0);
                assert_true(dedup_tracker_part_counts(a, 1)
                                ->anomalies[DEDUP_KIND_GAP] > 0);
                assert_true(dedup_tracker_part_counts(a, 2)
                                ->anomalies[DEDUP_KIND_FENCED] > 0);
                assert_true(dedup_tracker_part_counts(a, 0)->recovered > 0);
                assert_true(dedup_tracker_part_counts(a, 1)
                                ->anomalies[DEDUP_KIND_OUT_OF_ORDER] > 0);
                dedup_tracker_free(a);
                dedup_tracker_free(b);
                dedup_tracker_free(fresh);
        }
}

static void test_forget_import(void **state)
{
        struct dedup_tracker *a = tracker(), *b = tracker();
        struct ledger_part lp;
        char err[256];
        size_t i, len, pairs;
        char *s;
        int diff = 0;

        (void)state;
        gen();
        for (i = 0; i < NREC / 2; i++) {
                obs(a, i);
                obs(b, i);
        }
        lp_init(&lp, 1);
        lp.next_offset = 99;
        s = partstate_export(b, &lp, NULL, &len, err, sizeof(err));
        assert_non_null(s);
        pairs = dedup_tracker_pairs(b);
        dedup_tracker_part_forget(b, 1);
        assert_true(dedup_tracker_pairs(b) < pairs);
        assert_int_equal(dedup_tracker_part_counts(b, 1)->records, 0);
        /* The other parts go on meanwhile. */
        assert_memory_equal(dedup_tracker_part_counts(a, 0),
                            dedup_tracker_part_counts(b, 0),
                            sizeof(struct dedup_counts));
        lp_init(&lp, 1);
        assert_int_equal(partstate_import(b, &lp, s, len, err, sizeof(err)),
                         0);
        assert_int_equal(lp.next_offset, 99);
        free(s);
        counts_equal(a, b);
        for (i = NREC / 2; i < NREC; i++)
                diff += obs(a, i) != obs(b, i);
        assert_int_equal(diff, 0);
        counts_equal(a, b);
        /* Forgetting every part leaves nothing behind. */
        for (i = 0; i < NPARTS; i++)
                dedup_tracker_part_forget(b, (uint32_t)i);
        assert_int_equal(dedup_tracker_pairs(b), 0);
        assert_int_equal(dedup_tracker_open_gaps(b), 0);
        dedup_tracker_free(a);
        dedup_tracker_free(b);
}

/* Replaces the first occurrence of from in s (malloc'd result). */
static char *edit(const char *s, const char *from, const char *to)
{
        const char *at = strstr(s, from);
        size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
        char *out;

        assert_non_null(at);
        out = malloc(n);
        assert_non_null(out);
        snprintf(out, n, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
        return out;
}

static void test_malformed(void **state)
{
        static const char *const edits[][2] = {
            {"{\"v\":1", "{\"v\":2"},
            {"\"partition\":1", "\"partition\":2"},
            {"\"topic\":\"audited\"", "\"topic\":\"other\""},
            {"\"producer\":\"702d61\"", "\"producer\":\"702d6\""},
            {"\"producer\":\"702d61\"", "\"producer\":\"zz\""},
            {"\"records\":", "\"records\":-"},
            {"\"next_offset\":", "\"next_offset\":\"x\",\"n\":"},
            {"\"duplicate\":", "\"dup\":"},
            {"\"runs\":[[", "\"runs\":[[1,2],["},
            {"\"pairs\":[", "\"pairs\":[1,"},
            {"\"fp\":[", "\"fp\":[\"x\","},
        };
        struct dedup_tracker *b = tracker();
        struct ledger_part lp;
        struct dedup_counts before;
        char err[256];
        size_t i, len, pairs;
        char *s;

        (void)state;
        gen();
        for (i = 0; i < 500; i++)
                obs(b, i);
        lp_init(&lp, 1);
        s = partstate_export(b, &lp, NULL, &len, err, sizeof(err));
        assert_non_null(s);
        pairs = dedup_tracker_pairs(b);
        before = *dedup_tracker_part_counts(b, 1);
        for (i = 0; i < sizeof(edits) / sizeof(edits[0]) + 2; i++) {
                char *bad;
                size_t blen;
                if (i < sizeof(edits) / sizeof(edits[0])) {
                        bad = edit(s, edits[i][0], edits[i][1]);
                        blen = strlen(bad);
                } else {
                        bad = strdup(i % 2 ? "" : s);
                        blen = i % 2 ? 0 : len / 2; /* truncated */
                }
                err[0] = '\0';
                lp_init(&lp, 1);
                assert_int_equal(partstate_import(b, &lp, bad, blen, err,
                                                  sizeof(err)),
                                 -1);
                assert_true(err[0] != '\0');
                assert_null(strchr(err, '\n'));
                assert_int_equal(lp.next_offset, -1);
                assert_int_equal(dedup_tracker_pairs(b), pairs);
                assert_memory_equal(dedup_tracker_part_counts(b, 1), &before,
                                    sizeof(before));
                free(bad);
        }
        free(s);
        dedup_tracker_free(b);
}

/* The topic id a record carries: written when known, read back alone,
 * ignored by the import; absent when not known. */
static void test_topic_id(void **state)
{
        struct dedup_tracker *b = tracker();
        struct ledger_part lp;
        char err[256], id[LEDGER_TOPIC_ID_MAX];
        size_t i, len;
        char *s, *bad;

        (void)state;
        gen();
        for (i = 0; i < 100; i++)
                obs(b, i);
        lp_init(&lp, 1);
        lp.next_offset = 42;
        s = partstate_export(b, &lp, "Wm9-X2JhcjEyMzQ1Njc4OQ", &len, err,
                             sizeof(err));
        assert_non_null(s);
        assert_int_equal(partstate_topic_id(s, len, id, sizeof(id)), 1);
        assert_string_equal(id, "Wm9-X2JhcjEyMzQ1Njc4OQ");
        /* Too small a buffer: an error, never a cut id. */
        assert_int_equal(partstate_topic_id(s, len, id, 22), -1);
        lp_init(&lp, 1);
        assert_int_equal(partstate_import(b, &lp, s, len, err, sizeof(err)),
                         0);
        assert_int_equal(lp.next_offset, 42);
        bad = edit(s, "\"topic_id\":\"", "\"topic_id\":7,\"x\":\"");
        assert_int_equal(partstate_topic_id(bad, strlen(bad), id, sizeof(id)),
                         -1);
        free(bad);
        assert_int_equal(partstate_topic_id(s, len / 2, id, sizeof(id)), -1);
        free(s);

        s = partstate_export(b, &lp, "", &len, err, sizeof(err));
        assert_non_null(s);
        assert_null(strstr(s, "topic_id"));
        assert_int_equal(partstate_topic_id(s, len, id, sizeof(id)), 0);
        free(s);
        s = partstate_export(b, &lp, NULL, &len, err, sizeof(err));
        assert_non_null(s);
        assert_int_equal(partstate_topic_id(s, len, id, sizeof(id)), 0);
        free(s);
        dedup_tracker_free(b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_round_trip),
            cmocka_unit_test(test_forget_import),
            cmocka_unit_test(test_malformed),
            cmocka_unit_test(test_topic_id),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
