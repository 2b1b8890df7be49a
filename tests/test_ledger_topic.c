/*
 * test_ledger_topic.c - topic-scoped streams through the ledger
 * (schema/0015_topic_streams.sql, auditor/ledger/topic.c): what a commit
 * writes, ledger_load() gives back to a new tracker exactly (every stream's
 * view, byte for byte), and the restored tracker goes on as the first
 * would have: a duplicate names its first copy from before the restart, a
 * hole confirmed after it is missing, a confirmed gap remembered across
 * another restart is recovered.  A stream that expires is deleted.  The
 * summary counts the streams and their producers.
 */
#include "ledger_fixture.h"

#include "../dedup/topic.h"

/* Parts 0 and 1 are topic "orders" (engine topic 0), part 2 another. */
static struct dedup_tracker *topic_tracker(const struct dedup_config *conf,
                                           struct ledger_part *parts)
{
        struct dedup_tracker *tr;

        parts_init(parts);
        parts[0].from_log_start = parts[1].from_log_start = 1;
        tr = tracker_new(conf, parts);
        assert_int_equal(dedup_tracker_part_set_topic(tr, 0, 0), 0);
        assert_int_equal(dedup_tracker_part_set_topic(tr, 1, 0), 0);
        assert_int_equal(dedup_tracker_part_set_topic(tr, 2, 1), 0);
        return tr;
}

static struct dedup_tracker *topic_reload(const char *path,
                                          const struct dedup_config *conf,
                                          struct ledger **lgp,
                                          struct ledger_part *parts)
{
        struct dedup_tracker *tr = topic_tracker(conf, parts);
        char err[256];

        *lgp = open_ok(path);
        if (ledger_load(*lgp, tr, parts, NPARTS, err, sizeof(err)))
                fail_msg("ledger_load: %s", err);
        return tr;
}

/* A record of producer's stream of epoch on part's topic, at the part's
 * next offset; scope NULL: a per-partition record instead. */
static enum dedup_verdict tobserve_as(struct dedup_tracker *tr,
                                      struct ledger_part *parts, uint32_t part,
                                      const char *producer, int32_t epoch,
                                      const char *scope, int64_t seq,
                                      int64_t ts)
{
        struct dedup_hdrs h;
        char num[32], ep[16];
        int n = snprintf(num, sizeof(num), "%lld", (long long)seq);
        int ne = snprintf(ep, sizeof(ep), "%d", (int)epoch);
        int64_t offset = parts[part].next_offset < 0 ? 0
                                                     : parts[part].next_offset;

        dedup_hdrs_init(&h);
        dedup_hdrs_feed(&h, "eos.producer", 12, producer, strlen(producer));
        dedup_hdrs_feed(&h, "eos.epoch", 9, ep, (size_t)ne);
        dedup_hdrs_feed(&h, "eos.seq", 7, num, (size_t)n);
        if (scope)
                dedup_hdrs_feed(&h, "eos.scope", 9, scope, strlen(scope));
        h.ts_ms = ts;
        parts[part].next_offset = offset + 1;
        parts[part].dirty = 1;
        return dedup_tracker_observe(tr, part, offset, &h);
}

static enum dedup_verdict tobserve(struct dedup_tracker *tr,
                                   struct ledger_part *parts, uint32_t part,
                                   const char *producer, int64_t seq,
                                   int64_t ts)
{
        return tobserve_as(tr, parts, part, producer, 3, "topic", seq, ts);
}

struct tlines {
        char *l[16];
        size_t n;
};

static int dump_cb(void *opaque, const struct dedup_topic_view *v)
{
        struct tlines *ls = opaque;
        struct sb b = {NULL, 0, 0};
        uint32_t i;

        assert_true(ls->n < 16);
        sb_printf(&b, "part %u producer ", v->part);
        sb_hex(&b, v->producer, v->producer_len);
        sb_printf(&b,
                  " epoch %d floor %lld base %lld next %lld last %lld "
                  "records %llu words",
                  (int)v->epoch, (long long)v->floor, (long long)v->base,
                  (long long)v->next, (long long)v->last_ms,
                  (unsigned long long)v->records);
        for (i = 0; i < v->nwords; i++)
                sb_printf(&b, " %llx@%lld", (unsigned long long)v->words[i],
                          (long long)v->word_ms[i]);
        sb_printf(&b, " locs");
        for (i = 0; i < v->nlocs; i++)
                sb_printf(&b, " %lld:%u/%lld", (long long)v->locs[i].seq,
                          v->locs[i].part, (long long)v->locs[i].offset);
        sb_printf(&b, " done");
        for (i = 0; i < v->ndone; i++)
                sb_printf(&b, " [%lld,%lld]:%u/%lld%s",
                          (long long)v->done[i].lo, (long long)v->done[i].hi,
                          v->done[i].part, (long long)v->done[i].offset,
                          v->done[i].unknown ? "u" : "");
        ls->l[ls->n++] = b.s;
        return 0;
}

/* Every stream, one line each, sorted (the order of the walk may differ). */
static char *streams_dump(struct dedup_tracker *tr)
{
        struct tlines ls = {{NULL}, 0};
        struct sb o = {NULL, 0, 0};
        size_t i;

        assert_int_equal(dedup_topic_foreach(tr, dump_cb, &ls), 0);
        qsort(ls.l, ls.n, sizeof(ls.l[0]), str_cmp);
        sb_printf(&o, "%s", "");
        for (i = 0; i < ls.n; i++) {
                sb_printf(&o, "%s\n", ls.l[i]);
                free(ls.l[i]);
        }
        return o.s;
}

static int64_t counts(struct dedup_tracker *tr, int what)
{
        int64_t n = 0;
        uint32_t p;

        for (p = 0; p < NPARTS; p++) {
                const struct dedup_counts *c = dedup_tracker_part_counts(tr,
                                                                         p);
                n += what == 0   ? (int64_t)c->missing
                     : what == 1 ? (int64_t)c->anomalies[DEDUP_KIND_DUPLICATE]
                                 : (int64_t)c->recovered;
        }
        return n;
}

#define T0 1700000000000LL

static void test_round_trip(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct dedup_config conf;
        struct dedup_tracker *tr, *tr2;
        const struct dedup_event *ev;
        struct ledger *lg;
        char *before, *after;
        size_t n, i;
        int found = 0;

        conf_init(&conf);
        tr = topic_tracker(&conf, parts);
        lg = open_ok(fx->a);
        dedup_tracker_begin(tr, T0 + 1000);
        /* Two producers on "orders", one with a name that must survive
         * byte for byte; holes at seq 1 and 70 (another word). */
        assert_int_equal(tobserve(tr, parts, 0, P1, 0, T0), DEDUP_V_OK);
        assert_int_equal(tobserve(tr, parts, 1, P1, 2, T0 + 2), DEDUP_V_OK);
        assert_int_equal(tobserve(tr, parts, 0, P1, 3, T0 + 3), DEDUP_V_OK);
        assert_int_equal(tobserve(tr, parts, 1, P1, 71, T0 + 4), DEDUP_V_OK);
        assert_int_equal(tobserve(tr, parts, 0, PBIN, 0, T0 + 5), DEDUP_V_OK);
        assert_int_equal(tobserve(tr, parts, 2, PQ, 0, T0 + 6), DEDUP_V_OK);
        dedup_tracker_tick(tr);
        commit_ok(lg, tr, parts);
        before = streams_dump(tr);
        dedup_tracker_free(tr);
        ledger_close(lg);

        tr2 = topic_reload(fx->a, &conf, &lg, parts);
        after = streams_dump(tr2);
        assert_string_equal(after, before);
        assert_int_equal(dedup_topic_streams(tr2), 3);
        free(before);
        free(after);

        /* As if nothing happened: seq 2 again on part 0 names its first
         * copy (part 1, offset 0), written before the restart. */
        dedup_tracker_begin(tr2, T0 + 1000);
        assert_int_equal(tobserve(tr2, parts, 0, P1, 2, T0 + 7),
                         DEDUP_V_DUPLICATE);
        ev = dedup_tracker_events(tr2, &n);
        for (i = 0; i < n; i++)
                found |= ev[i].kind == DEDUP_KIND_DUPLICATE &&
                         ev[i].part == 0 && ev[i].seq_lo == 2 &&
                         ev[i].first_part == 1 && ev[i].first_offset == 0;
        assert_true(found);
        /* The end of a scan: seq 1 and 4..70 are missing. */
        dedup_tracker_confirm_all(tr2);
        assert_int_equal(counts(tr2, 0), 1 + 67);
        assert_int_equal(counts(tr2, 1), 1);
        commit_ok(lg, tr2, parts);
        dedup_tracker_free(tr2);
        ledger_close(lg);

        /* Again: the confirmed gaps are remembered, seq 1 is recovered. */
        tr2 = topic_reload(fx->a, &conf, &lg, parts);
        assert_int_equal(counts(tr2, 0), 68);
        dedup_tracker_begin(tr2, T0 + 1000);
        assert_int_equal(tobserve(tr2, parts, 1, P1, 1, T0 + 1),
                         DEDUP_V_OUT_OF_ORDER);
        assert_int_equal(counts(tr2, 0), 67);
        assert_int_equal(counts(tr2, 2), 1);
        commit_ok(lg, tr2, parts);
        dedup_tracker_free(tr2);
        ledger_close(lg);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM topic_streams"),
                         3);
}

/* An idle stream expires: its row goes with it. */
static void test_expiry(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct dedup_config conf;
        struct dedup_tracker *tr;
        struct ledger *lg;

        conf_init(&conf);
        conf.idle_ttl_ms = 60000;
        tr = topic_tracker(&conf, parts);
        lg = open_ok(fx->a);
        dedup_tracker_begin(tr, T0 + 1000000);
        assert_int_equal(tobserve(tr, parts, 0, P1, 0, T0), DEDUP_V_OK);
        assert_int_equal(tobserve(tr, parts, 2, PQ, 0, T0), DEDUP_V_OK);
        commit_ok(lg, tr, parts);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM topic_streams"),
                         2);
        /* PQ writes on; P1 has been idle past the TTL. */
        assert_int_equal(tobserve(tr, parts, 2, PQ, 1, T0 + 200000),
                         DEDUP_V_OK);
        dedup_tracker_tick(tr);
        assert_int_equal(dedup_topic_streams(tr), 1);
        commit_ok(lg, tr, parts);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM topic_streams"),
                         1);
        dedup_tracker_free(tr);
        ledger_close(lg);
}

/* ledger_summary() of topic (NULL: all) must say these producers, pairs
 * and topic streams. */
static void summary_is(struct ledger *lg, const char *topic,
                       uint64_t producers, uint64_t pairs, uint64_t streams)
{
        struct ledger_summary s;
        char err[256];

        if (ledger_summary(lg, topic, &s, err, sizeof(err)))
                fail_msg("ledger_summary: %s", err);
        assert_int_equal(s.producers, producers);
        assert_int_equal(s.pairs, pairs);
        assert_int_equal(s.topic_streams, streams);
}

/* A topic audited only through topic-scoped streams has producers in its
 * summary: each name once, whichever scopes it stamps, on one topic or
 * across several; its (producer, epoch) streams apart from the pairs. */
static void test_summary(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct dedup_config conf;
        struct dedup_tracker *tr;
        struct ledger *lg;

        conf_init(&conf);
        tr = topic_tracker(&conf, parts);
        lg = open_ok(fx->a);
        dedup_tracker_begin(tr, T0 + 1000);
        assert_int_equal(tobserve(tr, parts, 0, P1, 0, T0), DEDUP_V_OK);
        assert_int_equal(tobserve(tr, parts, 1, P1, 1, T0 + 1), DEDUP_V_OK);
        assert_int_equal(tobserve(tr, parts, 1, PBIN, 0, T0 + 2), DEDUP_V_OK);
        assert_int_equal(tobserve(tr, parts, 2, PQ, 0, T0 + 3), DEDUP_V_OK);
        commit_ok(lg, tr, parts);
        summary_is(lg, "orders", 2, 0, 2);
        summary_is(lg, "pay\"ments", 1, 0, 1);
        summary_is(lg, NULL, 3, 0, 3);

        /* A new epoch of P1 is a stream more, not a producer more; P1
         * stamping per partition too (in its current epoch: a lower one
         * is fenced, whatever the scope) is a pair more, still one
         * producer; PQ's stream on orders makes it a producer of orders,
         * still one producer in all; so does PBIN's pair on the other
         * topic. */
        assert_int_equal(tobserve_as(tr, parts, 0, P1, 4, "topic", 0, T0 + 4),
                         DEDUP_V_OK);
        assert_int_equal(tobserve_as(tr, parts, 0, P1, 4, NULL, 0, T0 + 5),
                         DEDUP_V_OK);
        assert_int_equal(tobserve(tr, parts, 1, PQ, 0, T0 + 6), DEDUP_V_OK);
        /* (Part 2 is not audited from its log start: a new pair's first
         * record is its baseline.) */
        assert_int_equal(tobserve_as(tr, parts, 2, PBIN, 3, NULL, 0, T0 + 7),
                         DEDUP_V_BASELINE);
        commit_ok(lg, tr, parts);
        summary_is(lg, "orders", 3, 1, 4);
        summary_is(lg, "pay\"ments", 2, 1, 1);
        summary_is(lg, NULL, 3, 2, 5);
        summary_is(lg, "none", 0, 0, 0);
        dedup_tracker_free(tr);
        ledger_close(lg);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_round_trip, fx_setup,
                                            fx_teardown),
            cmocka_unit_test_setup_teardown(test_expiry, fx_setup,
                                            fx_teardown),
            cmocka_unit_test_setup_teardown(test_summary, fx_setup,
                                            fx_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
