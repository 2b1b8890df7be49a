/*
 * test_window.c - message ids across sessions: the 128-bit hash, the id
 * windows (generational filters, count and age bounds), their verdicts
 * and evidence, and persistence through a fake store standing in for the
 * ledger.
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
/* Hash                                                                */
/* ------------------------------------------------------------------ */

/* SMHasher's VerificationTest for MurmurHash3_x64_128: hash the keys
 * {}, {0}, {0,1}, ... {0..254} with seed 256 - len, concatenate the 256
 * little-endian 16-byte results, hash that with seed 0; the first four
 * bytes, read little-endian, must be 0x6384BA69. */
static void test_hash_verification(void **state)
{
        unsigned char key[256], hashes[256 * 16], *o;
        struct dedup_id id;
        uint32_t v;
        int i, j;

        (void)state;
        for (i = 0; i < 256; i++) {
                key[i] = (unsigned char)i;
                dedup_id_hash_seeded(key, (size_t)i, (uint32_t)(256 - i), &id);
                o = &hashes[i * 16];
                for (j = 0; j < 8; j++) {
                        o[j] = (unsigned char)(id.lo >> (8 * j));
                        o[8 + j] = (unsigned char)(id.hi >> (8 * j));
                }
        }
        dedup_id_hash(hashes, sizeof(hashes), &id);
        v = (uint32_t)id.lo;
        assert_int_equal(v, 0x6384BA69u);
}

/* ------------------------------------------------------------------ */
/* A fake store: what a ledger would hold                              */
/* ------------------------------------------------------------------ */

struct store {
        struct dedup_id_row *rows;
        size_t n, cap;
        struct dedup_gen_view gens[256];
        size_t ngens;
        unsigned lookups;
        unsigned closed; /* store_closed() calls in this commit */
        int fail;
};

static const struct dedup_gen_view *store_gen(const struct store *s,
                                              uint64_t gen)
{
        size_t i;

        for (i = 0; i < s->ngens; i++)
                if (s->gens[i].gen == gen)
                        return &s->gens[i];
        return NULL;
}

static int store_lookup(void *opaque, uint32_t window, uint64_t gen,
                        const struct dedup_id *id, uint32_t *part,
                        int64_t *offset)
{
        struct store *s = opaque;
        const struct dedup_gen_view *g = store_gen(s, gen);
        size_t i;

        (void)window;
        s->lookups++;
        if (s->fail)
                return -1;
        /* Open generations are answered from memory, never asked. */
        assert_non_null(g);
        assert_true(g->closed);
        for (i = 0; i < s->n; i++)
                if (s->rows[i].gen == gen && s->rows[i].id.lo == id->lo &&
                    s->rows[i].id.hi == id->hi) {
                        *part = s->rows[i].part;
                        *offset = s->rows[i].offset;
                        return 1;
                }
        return 0;
}

static int store_gen_put(void *opaque, const struct dedup_gen_view *gv)
{
        struct store *s = opaque;
        size_t i;

        for (i = 0; i < s->ngens; i++)
                if (s->gens[i].gen == gv->gen) {
                        s->gens[i] = *gv;
                        return 0;
                }
        assert_true(s->ngens < 256);
        s->gens[s->ngens++] = *gv;
        return 0;
}

static void store_gen_del(struct store *s, uint64_t gen)
{
        size_t i, k = 0;

        for (i = 0; i < s->n; i++)
                if (s->rows[i].gen != gen)
                        s->rows[k++] = s->rows[i];
        s->n = k;
        for (i = k = 0; i < s->ngens; i++)
                if (s->gens[i].gen != gen)
                        s->gens[k++] = s->gens[i];
        s->ngens = k;
}

/* A closed generation's ids: sorted, and all of them. */
static int store_closed(void *opaque, const struct dedup_gen_view *gv,
                        const struct dedup_id_row *rows, size_t n)
{
        struct store *s = opaque;
        size_t i, have = 0;

        assert_true(gv->closed);
        assert_int_equal(n, gv->ids);
        for (i = 1; i < n; i++)
                assert_true(rows[i - 1].id.lo < rows[i].id.lo ||
                            (rows[i - 1].id.lo == rows[i].id.lo &&
                             rows[i - 1].id.hi < rows[i].id.hi));
        for (i = 0; i < s->n; i++)
                have += s->rows[i].gen == gv->gen;
        assert_int_equal(have, n); /* every id was appended before */
        s->closed++;
        return store_gen_put(s, gv);
}

/* What ledger_commit() does with the windows, then clears the batch. */
static void store_commit(struct store *s, struct dedup_tracker *tr)
{
        const struct dedup_id_row *rows;
        const uint64_t *dropped;
        size_t n, i;

        rows = dedup_tracker_ids_new(tr, &n);
        for (i = 0; i < n; i++) {
                if (s->n == s->cap) {
                        s->cap = s->cap ? s->cap * 2 : 1024;
                        s->rows = realloc(s->rows, s->cap * sizeof(*s->rows));
                        assert_non_null(s->rows);
                }
                s->rows[s->n++] = rows[i];
        }
        assert_int_equal(dedup_tracker_gens_dirty_foreach(tr, store_gen_put,
                                                          s),
                         0);
        s->closed = 0;
        assert_int_equal(dedup_tracker_gens_closed_foreach(tr, store_closed,
                                                           s),
                         0);
        /* The count the audit commits on covers every generation written
         * sorted (and dropped ones besides). */
        assert_true(s->closed <= dedup_tracker_gens_closed(tr));
        dropped = dedup_tracker_gens_dropped(tr, &n);
        for (i = 0; i < n; i++)
                store_gen_del(s, dropped[i]);
        dedup_tracker_dirty_clear(tr);
        dedup_tracker_events_clear(tr);
        assert_int_equal(dedup_tracker_gens_closed(tr), 0);
}

static int gen_cmp(const void *a, const void *b)
{
        const struct dedup_gen_view *x = a, *y = b;

        return x->gen < y->gen ? -1 : x->gen > y->gen;
}

/* A tracker with nparts parts in one window, restored from s. */
static struct dedup_tracker *tracker_from(struct store *s, uint64_t max_ids,
                                          int64_t max_age_ms, uint32_t nparts)
{
        struct dedup_config c;
        struct dedup_tracker *tr;
        uint32_t w, p;
        size_t i;

        dedup_config_defaults(&c);
        c.window.max_ids = max_ids;
        c.window.max_age_ms = max_age_ms;
        tr = dedup_tracker_new(&c);
        assert_non_null(tr);
        for (p = 0; p < nparts; p++)
                assert_int_equal(dedup_tracker_part_add(tr, p, 0), 0);
        assert_int_equal(dedup_tracker_window_add(tr, &w), 0);
        assert_int_equal(w, 0);
        for (p = 0; p < nparts; p++)
                dedup_tracker_part_set_window(tr, p, w);
        qsort(s->gens, s->ngens, sizeof(s->gens[0]), gen_cmp);
        for (i = 0; i < s->ngens; i++)
                assert_int_equal(dedup_tracker_gen_restore(tr, &s->gens[i]),
                                 0);
        for (i = 0; i < s->n; i++) {
                const struct dedup_gen_view *g = store_gen(s, s->rows[i].gen);
                assert_non_null(g);
                if (g->closed)
                        assert_int_equal(
                            dedup_tracker_id_restore(tr, 0, s->rows[i].gen,
                                                     &s->rows[i].id),
                            0);
                else
                        assert_int_equal(
                            dedup_tracker_row_restore(tr, &s->rows[i]), 0);
        }
        dedup_tracker_set_id_lookup(tr, store_lookup, s);
        return tr;
}

/* One record: producer (NULL: no eos.* headers), epoch, seq, id. */
/* Set: rec() hashes the id itself and prefetches, as the auditor's
 * helper threads do (dedup_hdrs.id_hashed); the verdicts must not
 * change. */
static int prehash;

static enum dedup_verdict rec(struct dedup_tracker *tr, uint32_t part,
                              int64_t offset, const char *producer,
                              int32_t epoch, int64_t seq, const char *id)
{
        struct dedup_hdrs h;

        dedup_hdrs_init(&h);
        if (producer) {
                char e[16], q[24];
                snprintf(e, sizeof(e), "%d", (int)epoch);
                snprintf(q, sizeof(q), "%lld", (long long)seq);
                dedup_hdrs_feed(&h, "eos.producer", 12, producer,
                                strlen(producer));
                dedup_hdrs_feed(&h, "eos.epoch", 9, e, strlen(e));
                dedup_hdrs_feed(&h, "eos.seq", 7, q, strlen(q));
        }
        if (id) {
                h.id = id;
                h.id_len = strlen(id);
        }
        if (prehash && id) {
                dedup_id_hash(h.id, h.id_len, &h.id_hash);
                h.id_hashed = 1;
                dedup_tracker_prefetch(tr, part, &h);
        }
        return dedup_tracker_observe(tr, part, offset, &h);
}

/* Records of part 0 without the contract, ids PREFIX<i> for i from `from`
 * to `to` (either way, both included), at offset base + i; each verdict
 * must be want, unless want is -1. */
static void recs(struct dedup_tracker *tr, int64_t base, const char *prefix,
                 int from, int to, int want)
{
        int i, step = from <= to ? 1 : -1;
        char id[32];

        for (i = from;; i += step) {
                enum dedup_verdict v;
                snprintf(id, sizeof(id), "%s%d", prefix, i);
                v = rec(tr, 0, base + i, NULL, 0, 0, id);
                if (want >= 0)
                        assert_int_equal(v, want);
                if (i == to)
                        break;
        }
}

static const struct dedup_event *only_event(struct dedup_tracker *tr,
                                            enum dedup_kind kind)
{
        const struct dedup_event *ev;
        size_t n, i, found = 0, at = 0;

        ev = dedup_tracker_events(tr, &n);
        for (i = 0; i < n; i++)
                if (ev[i].kind == kind) {
                        found++;
                        at = i;
                }
        assert_int_equal(found, 1);
        return &ev[at];
}

/* ------------------------------------------------------------------ */
/* Verdicts                                                            */
/* ------------------------------------------------------------------ */

/* A producer restarts (new epoch, seqs from 0) and resends its last three
 * records: only the ids can tell, and they say where the first copies
 * are. */
static void test_cross_session(void **state)
{
        struct store s = {0};
        struct dedup_tracker *tr = tracker_from(&s, 1000, 0, 2);
        const struct dedup_event *ev;
        char id[16];
        int i;

        (void)state;
        dedup_tracker_begin(tr, 1000);
        for (i = 0; i < 10; i++) {
                snprintf(id, sizeof(id), "m-%d", i);
                assert_int_equal(rec(tr, 0, 100 + i, "p", 0, i, id),
                                 i ? DEDUP_V_OK : DEDUP_V_BASELINE);
        }
        store_commit(&s, tr);
        /* The restart: epoch 1 from seq 0, replaying m-7..m-9. */
        for (i = 7; i < 10; i++) {
                snprintf(id, sizeof(id), "m-%d", i);
                assert_int_equal(rec(tr, 0, 113 + i, "p", 1, i - 7, id),
                                 DEDUP_V_REDELIVERED);
        }
        assert_int_equal(rec(tr, 0, 130, "p", 1, 3, "m-10"), DEDUP_V_OK);
        ev = only_event(tr, DEDUP_KIND_REDELIVERED);
        assert_int_equal(ev->count, 3);
        assert_int_equal(ev->part, 0);
        assert_int_equal(ev->offset_lo, 120);
        assert_int_equal(ev->offset_hi, 122);
        assert_int_equal(ev->first_part, 0);
        assert_int_equal(ev->first_offset, 107);
        assert_int_equal(ev->first_offset_hi, 109);
        assert_int_equal(ev->epoch, 1);
        assert_int_equal(ev->seq_lo, 0);
        assert_int_equal(ev->seq_hi, 2);
        assert_int_equal(ev->id_len, 3);
        assert_memory_equal(ev->id, "m-7", 3);
        assert_int_equal(ev->producer_len, 1);
        assert_memory_equal(ev->producer, "p", 1);
        assert_int_equal(dedup_tracker_part_counts(tr, 0)
                             ->anomalies[DEDUP_KIND_REDELIVERED],
                         3);
        assert_int_equal(dedup_tracker_part_counts(tr, 0)->ids, 14);
        /* Nothing else was called an anomaly. */
        assert_int_equal(
            dedup_tracker_part_counts(tr, 0)->anomalies[DEDUP_KIND_DUPLICATE],
            0);
        dedup_tracker_free(tr);
        free(s.rows);
}

/* An in-session retry is a duplicate by its seq and only that; a zombie's
 * write is fenced and only that. */
static void test_in_session_once(void **state)
{
        struct store s = {0};
        struct dedup_tracker *tr = tracker_from(&s, 1000, 0, 1);
        const struct dedup_counts *c;

        (void)state;
        dedup_tracker_begin(tr, 1000);
        rec(tr, 0, 0, "p", 3, 0, "a");
        rec(tr, 0, 1, "p", 3, 1, "b");
        assert_int_equal(rec(tr, 0, 2, "p", 3, 1, "b"), DEDUP_V_DUPLICATE);
        assert_int_equal(rec(tr, 0, 3, "p", 2, 9, "a"), DEDUP_V_FENCED);
        c = dedup_tracker_part_counts(tr, 0);
        assert_int_equal(c->anomalies[DEDUP_KIND_DUPLICATE], 1);
        assert_int_equal(c->anomalies[DEDUP_KIND_FENCED], 1);
        assert_int_equal(c->anomalies[DEDUP_KIND_REDELIVERED], 0);
        assert_int_equal(c->ids, 2);
        dedup_tracker_free(tr);
}

/* Records without the contract (--dedup-key key/header/value-hash): a
 * repeat in the same batch is found without the store, across parts, and
 * from another producer too. */
static void test_untracked_and_batch(void **state)
{
        struct store s = {0};
        struct dedup_tracker *tr = tracker_from(&s, 1000, 0, 3);
        const struct dedup_event *ev;

        (void)state;
        dedup_tracker_begin(tr, 1000);
        assert_int_equal(rec(tr, 0, 5, NULL, 0, 0, "order-1"),
                         DEDUP_V_UNTRACKED);
        assert_int_equal(rec(tr, 2, 9, NULL, 0, 0, "order-1"),
                         DEDUP_V_REDELIVERED);
        assert_int_equal(s.lookups, 0); /* found in the batch */
        ev = only_event(tr, DEDUP_KIND_REDELIVERED);
        assert_int_equal(ev->part, 2);
        assert_int_equal(ev->first_part, 0);
        assert_int_equal(ev->first_offset, 5);
        assert_null(ev->producer);
        assert_int_equal(dedup_tracker_part_counts(tr, 2)->untracked, 1);
        store_commit(&s, tr);
        /* Another producer writes the same id: after the commit, the open
         * generation still answers from memory. */
        assert_int_equal(rec(tr, 1, 3, "q", 0, 0, "order-1"),
                         DEDUP_V_REDELIVERED);
        assert_int_equal(s.lookups, 0);
        ev = only_event(tr, DEDUP_KIND_REDELIVERED);
        assert_int_equal(ev->first_part, 0);
        assert_int_equal(ev->first_offset, 5);
        /* No id, no check. */
        assert_int_equal(rec(tr, 1, 4, "q", 0, 1, NULL), DEDUP_V_OK);
        assert_int_equal(dedup_tracker_part_counts(tr, 1)->ids, 1);
        dedup_tracker_free(tr);
        free(s.rows);
}

/* Repeats at consecutive offsets whose first copies are scattered are
 * separate events: a range of evidence is always a range of records. */
static void test_scattered_firsts(void **state)
{
        struct store s = {0};
        struct dedup_tracker *tr = tracker_from(&s, 1000, 0, 1);
        const struct dedup_event *ev;
        size_t n;

        (void)state;
        dedup_tracker_begin(tr, 1);
        rec(tr, 0, 5, NULL, 0, 0, "a");
        rec(tr, 0, 6, NULL, 0, 0, "b");
        rec(tr, 0, 77, NULL, 0, 0, "c");
        rec(tr, 0, 78, NULL, 0, 0, "d");
        store_commit(&s, tr);
        rec(tr, 0, 100, NULL, 0, 0, "a");
        rec(tr, 0, 101, NULL, 0, 0, "b"); /* extends: 5..6 */
        rec(tr, 0, 102, NULL, 0, 0, "d"); /* 78 does not follow 6 */
        rec(tr, 0, 103, NULL, 0, 0, "c"); /* nor does 77 follow 78 */
        ev = dedup_tracker_events(tr, &n);
        assert_int_equal(n, 3);
        assert_int_equal(ev[0].first_offset, 5);
        assert_int_equal(ev[0].first_offset_hi, 6);
        assert_int_equal(ev[0].count, 2);
        assert_int_equal(ev[1].first_offset, 78);
        assert_int_equal(ev[2].first_offset, 77);
        assert_int_equal(ev[2].offset_lo, 103);
        dedup_tracker_free(tr);
        free(s.rows);
}

/* Windows off (max_ids 0) or a part in no window: nothing is checked. */
static void test_off(void **state)
{
        struct store s = {0};
        struct dedup_tracker *tr = tracker_from(&s, 0, 0, 1);
        struct dedup_config c;
        uint32_t w;

        (void)state;
        dedup_tracker_begin(tr, 1);
        rec(tr, 0, 0, NULL, 0, 0, "x");
        assert_int_equal(rec(tr, 0, 1, NULL, 0, 0, "x"), DEDUP_V_UNTRACKED);
        assert_int_equal(dedup_tracker_part_counts(tr, 0)->ids, 0);
        dedup_tracker_free(tr);

        dedup_config_defaults(&c);
        tr = dedup_tracker_new(&c);
        assert_non_null(tr);
        assert_int_equal(dedup_tracker_part_add(tr, 0, 0), 0);
        assert_int_equal(dedup_tracker_window_add(tr, &w), 0);
        rec(tr, 0, 0, NULL, 0, 0, "x");
        assert_int_equal(rec(tr, 0, 1, NULL, 0, 0, "x"), DEDUP_V_UNTRACKED);
        dedup_tracker_free(tr);
}

/* ------------------------------------------------------------------ */
/* Bounds                                                              */
/* ------------------------------------------------------------------ */

/* max_ids 320 = 16 generations of 20: after 1000 ids the window holds
 * between 300 and 320 of them, and the store holds exactly their rows in
 * 16 generations: the dropped generations' rows were deleted. */
static void test_count_bound(void **state)
{
        struct store s = {0};
        struct dedup_tracker *tr = tracker_from(&s, 320, 0, 1);
        char id[16];
        int i;

        (void)state;
        dedup_tracker_begin(tr, 1);
        for (i = 0; i < 1000; i++) {
                snprintf(id, sizeof(id), "%d", i);
                assert_int_equal(rec(tr, 0, i, NULL, 0, 0, id),
                                 DEDUP_V_UNTRACKED);
                if (i % 37 == 0)
                        store_commit(&s, tr);
        }
        store_commit(&s, tr);
        assert_true(dedup_tracker_window_ids(tr, 0) >= 300);
        assert_true(dedup_tracker_window_ids(tr, 0) <= 320);
        assert_int_equal(s.n, dedup_tracker_window_ids(tr, 0));
        assert_int_equal(s.ngens, DEDUP_WINDOW_GENS);
        dedup_tracker_free(tr);
        free(s.rows);
}

/* The newest 300 of 1000 ids are all remembered; none of the first 600. */
static void test_count_bound_exact(void **state)
{
        struct store s = {0};
        struct dedup_tracker *tr = tracker_from(&s, 320, 0, 1);

        (void)state;
        dedup_tracker_begin(tr, 1);
        recs(tr, 0, "", 0, 999, -1);
        store_commit(&s, tr);
        /* Checked newest first so that re-inserted old ids cannot push out
         * the ones still to check. */
        recs(tr, 5000, "", 999, 700, DEDUP_V_REDELIVERED);
        dedup_tracker_free(tr);
        tr = tracker_from(&s, 320, 0, 1);
        dedup_tracker_begin(tr, 1);
        recs(tr, 9000, "", 0, 599, DEDUP_V_UNTRACKED);
        dedup_tracker_free(tr);
        free(s.rows);
}

/*
 * Windows of different topics do not see each other (issue 14, item 7):
 * topics A (part 0) and B (part 1), each with its own window.  The same
 * ids in both are no repeat, and a repeat inside B is found even though
 * A's rows of the same ids come first in the shared row index.
 */
static void test_topics_apart(void **state)
{
        static const struct {
                uint32_t part;
                int64_t offset;
                const char *id;
                enum dedup_verdict want;
                uint32_t first_part; /* REDELIVERED: the first copy */
                int64_t first_offset;
        } steps[] = {
            {0, 0, "m1", DEDUP_V_UNTRACKED, 0, -1},
            {0, 1, "m2", DEDUP_V_UNTRACKED, 0, -1},
            {1, 0, "m1", DEDUP_V_UNTRACKED, 0, -1}, /* B's first m1 */
            {1, 1, "m2", DEDUP_V_UNTRACKED, 0, -1},
            {1, 2, "m1", DEDUP_V_REDELIVERED, 1, 0}, /* inside B */
            {0, 2, "m2", DEDUP_V_REDELIVERED, 0, 1}, /* inside A */
            {1, 3, "m3", DEDUP_V_UNTRACKED, 0, -1},
            {0, 3, "m3", DEDUP_V_UNTRACKED, 0, -1}, /* A's first m3 */
        };
        struct dedup_config c;
        struct dedup_tracker *tr;
        uint32_t wa, wb;
        size_t i, n;

        (void)state;
        dedup_config_defaults(&c);
        tr = dedup_tracker_new(&c);
        assert_non_null(tr);
        assert_int_equal(dedup_tracker_part_add(tr, 0, 0), 0);
        assert_int_equal(dedup_tracker_part_add(tr, 1, 0), 0);
        assert_int_equal(dedup_tracker_window_add(tr, &wa), 0);
        assert_int_equal(dedup_tracker_window_add(tr, &wb), 0);
        dedup_tracker_part_set_window(tr, 0, wa);
        dedup_tracker_part_set_window(tr, 1, wb);
        dedup_tracker_begin(tr, 1000);
        for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
                const struct dedup_event *ev;
                enum dedup_verdict v = rec(tr, steps[i].part, steps[i].offset,
                                           NULL, 0, 0, steps[i].id);
                assert_int_equal(v, steps[i].want);
                if (v != DEDUP_V_REDELIVERED)
                        continue;
                ev = dedup_tracker_events(tr, &n);
                assert_int_equal(ev[n - 1].kind, DEDUP_KIND_REDELIVERED);
                assert_int_equal(ev[n - 1].part, steps[i].part);
                assert_int_equal(ev[n - 1].first_part, steps[i].first_part);
                assert_int_equal(ev[n - 1].first_offset,
                                 steps[i].first_offset);
        }
        assert_int_equal(dedup_tracker_window_ids(tr, wa), 3);
        assert_int_equal(dedup_tracker_window_ids(tr, wb), 3);
        dedup_tracker_free(tr);
}

/* max_age 32 s: generations close every 2 s; ids older than the age are
 * dropped by the tick, newer ones stay. */
static void test_age_bound(void **state)
{
        struct store s = {0};
        struct dedup_tracker *tr = tracker_from(&s, 1000000, 32000, 1);
        char id[16];
        int i;

        (void)state;
        for (i = 0; i < 40; i++) {
                dedup_tracker_begin(tr, 1000 + (int64_t)i * 1000);
                snprintf(id, sizeof(id), "t%d", i);
                rec(tr, 0, i, NULL, 0, 0, id);
                dedup_tracker_tick(tr);
                store_commit(&s, tr);
        }
        /* now = 40000: ids from t = 1000..7000 (t0..t6) are older than
         * 32 s; t8 and later are within it. */
        dedup_tracker_begin(tr, 41000);
        dedup_tracker_tick(tr);
        store_commit(&s, tr);
        assert_int_equal(rec(tr, 0, 100, NULL, 0, 0, "t3"), DEDUP_V_UNTRACKED);
        assert_int_equal(rec(tr, 0, 101, NULL, 0, 0, "t10"),
                         DEDUP_V_REDELIVERED);
        assert_int_equal(rec(tr, 0, 102, NULL, 0, 0, "t39"),
                         DEDUP_V_REDELIVERED);
        dedup_tracker_free(tr);
        free(s.rows);
}

/* ------------------------------------------------------------------ */
/* Persistence and the filter                                          */
/* ------------------------------------------------------------------ */

/* A restart: a new tracker restored from the store finds repeats of ids
 * committed before, not of the batch lost in the crash. */
static void test_restart(void **state)
{
        struct store s = {0};
        struct dedup_tracker *tr = tracker_from(&s, 1000, 0, 2);
        const struct dedup_event *ev;

        (void)state;
        dedup_tracker_begin(tr, 1);
        rec(tr, 1, 40, NULL, 0, 0, "kept");
        store_commit(&s, tr);
        rec(tr, 1, 41, NULL, 0, 0, "lost"); /* never committed */
        dedup_tracker_free(tr);

        tr = tracker_from(&s, 1000, 0, 2);
        dedup_tracker_begin(tr, 2);
        assert_int_equal(rec(tr, 0, 7, NULL, 0, 0, "kept"),
                         DEDUP_V_REDELIVERED);
        ev = only_event(tr, DEDUP_KIND_REDELIVERED);
        assert_int_equal(ev->first_part, 1);
        assert_int_equal(ev->first_offset, 40);
        /* The replay of the lost batch sees "lost" as new. */
        assert_int_equal(rec(tr, 1, 41, NULL, 0, 0, "lost"),
                         DEDUP_V_UNTRACKED);
        dedup_tracker_free(tr);
        free(s.rows);
}

/* 20000 ids in a window of 20000, then 20000 new ones: the filters send
 * only a few of the new ones to the store (false positives). */
static void test_filter_rate(void **state)
{
        struct store s = {0};
        struct dedup_tracker *tr = tracker_from(&s, 40000, 0, 1);

        (void)state;
        dedup_tracker_begin(tr, 1);
        recs(tr, 0, "a", 0, 19999, -1);
        store_commit(&s, tr);
        s.lookups = 0;
        recs(tr, 100000, "b", 0, 19999, DEDUP_V_UNTRACKED);
        /* 64 bits per id and 8 bits set: 7 of 20000 (0.04%) when
         * written (32 bits gave 77); 0.2% would mean the filters are
         * broken. */
        assert_true(s.lookups < 40);
        assert_true(dedup_tracker_memory(tr) >= 40000 * 8);
        dedup_tracker_free(tr);
        free(s.rows);
}

/* A store that fails makes the tracker fail: no silent "not seen". */
static void test_lookup_error(void **state)
{
        struct store s = {0};
        /* Generations of one id: "y" closes the generation of "x". */
        struct dedup_tracker *tr = tracker_from(&s, 16, 0, 1);

        (void)state;
        dedup_tracker_begin(tr, 1);
        rec(tr, 0, 0, NULL, 0, 0, "x");
        rec(tr, 0, 1, NULL, 0, 0, "y");
        store_commit(&s, tr);
        /* The closed generation is asked of the store. */
        assert_int_equal(rec(tr, 0, 2, NULL, 0, 0, "x"), DEDUP_V_REDELIVERED);
        assert_int_equal(s.lookups, 1);
        assert_false(dedup_tracker_failed(tr));
        s.fail = 1;
        rec(tr, 0, 3, NULL, 0, 0, "x");
        assert_true(dedup_tracker_failed(tr));
        dedup_tracker_free(tr);
        free(s.rows);
}

/* Restoring generations out of order or into no window is refused. */
static void test_restore_checks(void **state)
{
        struct store s = {0};
        struct dedup_tracker *tr = tracker_from(&s, 1000, 0, 1);
        struct dedup_gen_view g = {.window = 0,
                                   .gen = 5,
                                   .ids = 1,
                                   .closed = 1};
        struct dedup_id id = {1, 2};

        (void)state;
        assert_int_equal(dedup_tracker_gen_restore(tr, &g), 0);
        g.gen = 4;
        assert_int_equal(dedup_tracker_gen_restore(tr, &g), -1);
        g.gen = 6;
        g.window = 1;
        assert_int_equal(dedup_tracker_gen_restore(tr, &g), -1);
        assert_int_equal(dedup_tracker_id_restore(tr, 0, 5, &id), 0);
        assert_int_equal(dedup_tracker_id_restore(tr, 0, 7, &id), -1);
        assert_int_equal(dedup_tracker_window_ids(tr, 0), 1);
        /* New generations continue after the restored ones. */
        dedup_tracker_begin(tr, 1);
        rec(tr, 0, 0, NULL, 0, 0, "y");
        {
                size_t n;
                const struct dedup_id_row *r = dedup_tracker_ids_new(tr, &n);
                assert_int_equal(n, 1);
                assert_true(r[0].gen >= 5);
        }
        dedup_tracker_free(tr);
}

static void test_prehashed(void **state)
{
        prehash = 1;
        test_cross_session(state);
        test_topics_apart(state);
        test_count_bound_exact(state);
        test_restart(state);
        prehash = 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_hash_verification),
            cmocka_unit_test(test_cross_session),
            cmocka_unit_test(test_prehashed),
            cmocka_unit_test(test_in_session_once),
            cmocka_unit_test(test_untracked_and_batch),
            cmocka_unit_test(test_scattered_firsts),
            cmocka_unit_test(test_off),
            cmocka_unit_test(test_count_bound),
            cmocka_unit_test(test_count_bound_exact),
            cmocka_unit_test(test_age_bound),
            cmocka_unit_test(test_topics_apart),
            cmocka_unit_test(test_restart),
            cmocka_unit_test(test_filter_rate),
            cmocka_unit_test(test_lookup_error),
            cmocka_unit_test(test_restore_checks),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
