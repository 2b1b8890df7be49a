/*
 * test_grouprep.c - the group's figures from its state and events topics
 * (auditor/grouprep.h): a real exported state record is read back, sums
 * add up per topic, the last record of a key wins and a tombstone drops
 * it, malformed records are counted and skipped without changing
 * anything, the events ring keeps the newest and counts every kind (a
 * 'truncated' event too, with its detail), and
 * a snapshot does not change when the aggregation goes on.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../auditor/group/grouprep.h"
#include "../auditor/ledger/ledger.h"
#include "../auditor/group/partstate.h"
#include "../auditor/report/report.h"

/* A state record as partstate.c writes it, pairs included. */
static char *state(const char *topic, int part, long long next,
                   long long records, long long dup, long long gap,
                   long long missing, int npairs)
{
        static const char pair[] =
            "{\"producer\":\"702d61\",\"epoch\":0,\"last_seq\":9,"
            "\"last_ms\":1,\"records\":10,\"rebaseline\":false,\"pid\":-1,"
            "\"retired\":[-1,-1],\"session_ms\":-1,\"runs\":[[0,0,10]],"
            "\"gaps\":[[0,3,4,7,1,7,0]],\"done\":[]}";
        size_t cap = 1024 + (size_t)npairs * sizeof(pair);
        char *s = malloc(cap), *p;
        int i, n;

        assert_non_null(s);
        n = snprintf(s, cap,
                     "{\"v\":1,\"topic\":\"%s\",\"partition\":%d,"
                     "\"next_offset\":%lld,\"from_log_start\":1,"
                     "\"fp\":[1,2,\"00\",\"01\"],\"counts\":{\"records\":%lld,"
                     "\"untracked\":1,\"missing\":%lld,\"recovered\":0,"
                     "\"unknown\":0,\"ids\":0,\"anomalies\":{\"duplicate\":"
                     "%lld,\"gap\":%lld,\"out_of_order\":0,\"fenced\":0,"
                     "\"malformed\":0,\"redelivered\":0,\"torn\":0,"
                     "\"aborted_read\":0}},\"pairs\":[",
                     topic, part, next, records, missing, dup, gap);
        assert_true(n > 0 && (size_t)n < cap);
        p = s + n;
        for (i = 0; i < npairs; i++) {
                n = snprintf(p, cap - (size_t)(p - s), "%s%s", i ? "," : "",
                             pair);
                p += n;
        }
        snprintf(p, cap - (size_t)(p - s), "]}");
        return s;
}

static int feed(struct grouprep *g, const char *topic, int part,
                const char *val)
{
        char key[300];

        snprintf(key, sizeof(key), "%s/%d", topic, part);
        return grouprep_state(g, key, strlen(key), val, val ? strlen(val) : 0);
}

static int feed_state(struct grouprep *g, const char *topic, int part,
                      long long next, long long records, long long dup,
                      long long gap, long long missing, int npairs)
{
        char *s = state(topic, part, next, records, dup, gap, missing, npairs);
        int rc = feed(g, topic, part, s);

        free(s);
        return rc;
}

static void test_sums_and_latest_wins(void **unused)
{
        struct grouprep *g = grouprep_new(10);
        struct grouprep_snap *s;
        struct grouprep_counts c;
        uint64_t pairs;
        int64_t lag;

        (void)unused;
        assert_non_null(g);
        assert_int_equal(grouprep_expect(g, "t", 0), 0);
        assert_int_equal(grouprep_expect(g, "t", 1), 0);
        assert_int_equal(grouprep_expect(g, "t", 2), 0);
        assert_int_equal(grouprep_expect(g, "u", 0), 0);
        assert_int_equal(feed_state(g, "t", 0, 10, 10, 1, 0, 0, 2), 0);
        assert_int_equal(feed_state(g, "t", 1, 5, 5, 0, 1, 2, 1), 0);
        assert_int_equal(feed_state(g, "u", 0, 7, 7, 3, 0, 0, 0), 0);
        /* A later state of t/0: it replaces the first, not adds to it. */
        assert_int_equal(feed_state(g, "t", 0, 20, 20, 2, 1, 3, 3), 0);
        grouprep_high_watermark(g, "t", 0, 25);
        grouprep_high_watermark(g, "t", 1, 5);
        s = grouprep_snap_make(g, 1234);
        assert_non_null(s);
        assert_int_equal(s->made_ms, 1234);
        assert_int_equal(s->state_records, 4);
        assert_int_equal(s->state_malformed, 0);
        assert_int_equal(s->nparts, 3);
        /* t/2 has no state yet. */
        assert_int_equal(s->nunstated, 1);
        assert_string_equal(s->unstated[0].topic, "t");
        assert_int_equal(s->unstated[0].partition, 2);
        assert_int_equal(grouprep_snap_sum(s, "t", &c, &pairs, &lag), 2);
        assert_int_equal(c.records, 25);
        assert_int_equal(c.untracked, 2);
        assert_int_equal(c.anomalies[DEDUP_KIND_DUPLICATE], 2);
        assert_int_equal(c.anomalies[DEDUP_KIND_GAP], 2);
        assert_int_equal(c.missing, 5);
        assert_int_equal(pairs, 4);
        assert_int_equal(lag, 5); /* 25 - 20, and 5 - 5 */
        assert_int_equal(grouprep_snap_sum(s, NULL, &c, &pairs, NULL), 3);
        assert_int_equal(c.records, 32);
        assert_int_equal(c.anomalies[DEDUP_KIND_DUPLICATE], 5);
        assert_int_equal(grouprep_snap_sum(s, "u", &c, NULL, &lag), 1);
        assert_int_equal(lag, -1); /* no high watermark known */

        /* A tombstone drops the key; the snapshot made before keeps it. */
        assert_int_equal(feed(g, "u", 0, NULL), 0);
        assert_int_equal(grouprep_snap_sum(s, NULL, &c, NULL, NULL), 3);
        grouprep_snap_put(s);
        s = grouprep_snap_make(g, 1235);
        assert_non_null(s);
        assert_int_equal(grouprep_snap_sum(s, NULL, &c, NULL, NULL), 2);
        assert_int_equal(c.records, 25);
        assert_int_equal(s->nunstated, 2);
        /* Two references: the second put frees it (ASan says if not). */
        grouprep_snap_ref(s);
        grouprep_snap_put(s);
        grouprep_snap_put(s);
        grouprep_free(g);
}

static void test_malformed_state(void **unused)
{
        static const char *const bad[] = {
            "",
            "not json",
            "{}",
            "[1,2]",
            /* another version */
            "{\"v\":2,\"topic\":\"t\",\"partition\":0,\"next_offset\":1,"
            "\"counts\":{\"records\":1,\"untracked\":0,\"missing\":0,"
            "\"recovered\":0,\"unknown\":0,\"anomalies\":{}},\"pairs\":[]}",
            /* another partition than its key */
            "{\"v\":1,\"topic\":\"t\",\"partition\":1,\"next_offset\":1,"
            "\"counts\":{\"records\":1,\"untracked\":0,\"missing\":0,"
            "\"recovered\":0,\"unknown\":0,\"anomalies\":{}},\"pairs\":[]}",
            /* a negative counter */
            "{\"v\":1,\"topic\":\"t\",\"partition\":0,\"next_offset\":1,"
            "\"counts\":{\"records\":-1,\"untracked\":0,\"missing\":0,"
            "\"recovered\":0,\"unknown\":0,\"anomalies\":{}},\"pairs\":[]}",
            /* no counts */
            "{\"v\":1,\"topic\":\"t\",\"partition\":0,\"next_offset\":1,"
            "\"pairs\":[]}",
            /* truncated in its pairs */
            "{\"v\":1,\"topic\":\"t\",\"partition\":0,\"next_offset\":1,"
            "\"counts\":{\"records\":1,\"untracked\":0,\"missing\":0,"
            "\"recovered\":0,\"unknown\":0,\"anomalies\":{}},\"pairs\":[{\"a\":",
            /* trailing bytes */
            "{\"v\":1,\"topic\":\"t\",\"partition\":0,\"next_offset\":1,"
            "\"counts\":{\"records\":1,\"untracked\":0,\"missing\":0,"
            "\"recovered\":0,\"unknown\":0,\"anomalies\":{}},\"pairs\":[]}x",
            /* an unterminated string inside the pairs */
            "{\"v\":1,\"topic\":\"t\",\"partition\":0,\"next_offset\":1,"
            "\"counts\":{\"records\":1,\"untracked\":0,\"missing\":0,"
            "\"recovered\":0,\"unknown\":0,\"anomalies\":{}},\"pairs\":[\"\\\"]}",
        };
        struct grouprep *g = grouprep_new(4);
        struct grouprep_snap *s;
        struct grouprep_counts c;
        char deep[400];
        size_t i;

        (void)unused;
        assert_non_null(g);
        assert_int_equal(feed_state(g, "t", 0, 3, 3, 1, 0, 0, 1), 0);
        for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(feed(g, "t", 0, bad[i]), 1);
        /* Nesting past the scanner's bound, in the pairs. */
        memset(deep, '[', sizeof(deep) - 1);
        deep[sizeof(deep) - 1] = '\0';
        {
                char *rec = state("t", 0, 1, 1, 0, 0, 0, 0);
                char *pp = strstr(rec, "\"pairs\":[");
                char buf[2048];
                assert_non_null(pp);
                snprintf(buf, sizeof(buf), "%.*s\"pairs\":%s]}",
                         (int)(pp - rec), rec, deep);
                assert_int_equal(feed(g, "t", 0, buf), 1);
                free(rec);
        }
        /* A counter missing, as partstate_import() would refuse it (the
         * view took these as 0 once, and summed other counts than the
         * next owner restores). */
        {
                static const char *const drop[] = {"\"ids\":0,",
                                                   "\"torn\":0,"};
                size_t d;
                for (d = 0; d < 2; d++) {
                        char *rec = state("t", 0, 1, 1, 0, 0, 0, 0);
                        char *at = strstr(rec, drop[d]);
                        assert_non_null(at);
                        memmove(at, at + strlen(drop[d]),
                                strlen(at + strlen(drop[d])) + 1);
                        assert_int_equal(feed(g, "t", 0, rec), 1);
                        free(rec);
                }
        }
        /* Keys that are not "topic/partition". */
        assert_int_equal(grouprep_state(g, "t", 1, "{}", 2), 1);
        assert_int_equal(grouprep_state(g, "t/x", 3, "{}", 2), 1);
        assert_int_equal(grouprep_state(g, NULL, 0, "{}", 2), 1);
        s = grouprep_snap_make(g, 1);
        assert_non_null(s);
        assert_int_equal(s->state_malformed, sizeof(bad) / sizeof(bad[0]) + 6);
        /* The good record stands, untouched. */
        assert_int_equal(grouprep_snap_sum(s, "t", &c, NULL, NULL), 1);
        assert_int_equal(c.records, 3);
        assert_int_equal(c.anomalies[DEDUP_KIND_DUPLICATE], 1);
        grouprep_snap_put(s);
        grouprep_free(g);
}

/* A record partstate_export() made is read back. */
static void test_real_export(void **unused)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        struct ledger_part lp;
        struct dedup_hdrs h;
        struct grouprep *g = grouprep_new(1);
        struct grouprep_snap *s;
        struct grouprep_counts c;
        char errstr[256], sb[24];
        uint64_t pairs;
        size_t len;
        char *rec;
        int i;

        (void)unused;
        dedup_config_defaults(&conf);
        conf.window.max_ids = 0;
        tr = dedup_tracker_new(&conf);
        assert_non_null(tr);
        assert_int_equal(dedup_tracker_part_add(tr, 0, 1), 0);
        dedup_tracker_begin(tr, 1000);
        for (i = 0; i < 6; i++) {
                dedup_hdrs_init(&h);
                snprintf(sb, sizeof(sb), "%d", i == 3 ? 2 : i); /* a dup */
                dedup_hdrs_feed(&h, "eos.producer", 12, "p-a", 3);
                dedup_hdrs_feed(&h, "eos.epoch", 9, "0", 1);
                dedup_hdrs_feed(&h, "eos.seq", 7, sb, strlen(sb));
                h.ts_ms = 1000 + i;
                dedup_tracker_observe(tr, 0, i, &h);
        }
        memset(&lp, 0, sizeof(lp));
        lp.topic = "audited";
        lp.partition = 0;
        lp.next_offset = 6;
        lp.fp.offset = -1;
        rec = partstate_export(tr, &lp, NULL, &len, errstr, sizeof(errstr));
        assert_non_null(rec);
        assert_int_equal(grouprep_state(g, "audited/0", 9, rec, len), 0);
        s = grouprep_snap_make(g, 1);
        assert_non_null(s);
        assert_int_equal(grouprep_snap_sum(s, "audited", &c, &pairs, NULL), 1);
        assert_int_equal(c.records, 6);
        assert_int_equal(c.anomalies[DEDUP_KIND_DUPLICATE], 1);
        assert_int_equal(pairs, 1);
        assert_int_equal(s->parts[0].next_offset, 6);
        grouprep_snap_put(s);
        free(rec);
        dedup_tracker_free(tr);
        grouprep_free(g);
}

static void test_events(void **unused)
{
        struct grouprep *g = grouprep_new(3);
        struct grouprep_snap *s;
        char ev[512];
        int i;

        (void)unused;
        assert_non_null(g);
        for (i = 0; i < 5; i++) {
                snprintf(ev, sizeof(ev),
                         "{\"topic\":\"t\",\"partition\":%d,\"kind\":\"%s\","
                         "\"producer\":%s,\"epoch\":0,\"seq_lo\":1,"
                         "\"seq_hi\":2,\"offset_lo\":3,\"offset_hi\":4,"
                         "\"first_offset\":-1,\"count\":%d,\"when_ms\":%d,"
                         "\"member\":\"m\"}",
                         i, i % 2 ? "gap" : "duplicate",
                         i == 4 ? "{\"hex\":\"ff01\"}" : "\"p-a\"", i + 1,
                         100 + i);
                assert_int_equal(grouprep_event(g, 0, 10 + i, ev, strlen(ev)),
                                 0);
        }
        assert_int_equal(grouprep_event(g, 0, 20, "{\"kind\":\"gap\"}", 14),
                         1);
        assert_int_equal(grouprep_event(g, 0, 21, "{", 1), 1);
        assert_int_equal(grouprep_event(g, 0, 22, NULL, 0), 1);
        s = grouprep_snap_make(g, 1);
        assert_non_null(s);
        assert_int_equal(s->events_read, 8);
        assert_int_equal(s->events_malformed, 3);
        /* The ring keeps the newest three, oldest first. */
        assert_int_equal(s->nevents, 3);
        assert_int_equal(s->events[0].offset, 12);
        assert_int_equal(s->events[2].offset, 14);
        assert_int_equal(s->events[2].producer_len, 2);
        assert_memory_equal(s->events[2].producer, "\xff\x01", 2);
        assert_string_equal(s->events[1].kind, "gap");
        assert_string_equal(s->events[1].member, "m");
        assert_int_equal(s->events[1].when_ms, 103);
        grouprep_snap_put(s);
        grouprep_free(g);
}

/* An event in the one evidence format (report_anomaly_json(), as group.c
 * writes it): a producer and an id that are not UTF-8 come back as their
 * exact bytes, with where the first copy is, from another topic. */
static void test_event_evidence(void **unused)
{
        struct grouprep *g = grouprep_new(4);
        struct grouprep_snap *s;
        struct grouprep_counts c;
        struct ledger_anomaly an;
        const struct grouprep_event *e;
        json_t *o;
        char *txt;

        (void)unused;
        assert_non_null(g);
        assert_int_equal(grouprep_expect(g, "t", 5), 0);
        memset(&an, 0, sizeof(an));
        an.topic = "t";
        an.partition = 5;
        an.kind = "redelivered";
        an.producer = "p\xff";
        an.producer_len = 2;
        an.epoch = 3;
        an.seq_lo = an.seq_hi = 7;
        an.offset_lo = an.offset_hi = 40;
        an.first_offset = 11;
        an.first_offset_hi = 12;
        an.first_partition = 2;
        an.msgid = "m\x80id";
        an.msgid_stored = 4;
        an.msgid_len = 300;
        an.count = 1;
        an.detected_ms = 777;
        o = report_anomaly_json(&an);
        assert_non_null(o);
        json_object_set_new(o, "member", json_string("eosaudit-g-a"));
        json_object_set_new(o, "first_topic", json_string("u"));
        txt = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        assert_non_null(txt);
        assert_int_equal(grouprep_event(g, 0, 9, txt, strlen(txt)), 0);
        free(txt);
        /* One on a partition this view did not expect (added to the
         * topic since it started): counted all the same. */
        an.partition = 9;
        o = report_anomaly_json(&an);
        assert_non_null(o);
        txt = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        assert_non_null(txt);
        assert_int_equal(grouprep_event(g, 0, 10, txt, strlen(txt)), 0);
        free(txt);
        /* A producer_hex that is not hex: malformed, skipped. */
        txt = "{\"topic\":\"t\",\"partition\":0,\"kind\":\"gap\","
              "\"count\":1,\"producer\":\"x\",\"producer_hex\":\"zz\"}";
        assert_int_equal(grouprep_event(g, 0, 11, txt, strlen(txt)), 1);
        s = grouprep_snap_make(g, 1);
        assert_non_null(s);
        assert_int_equal(s->nevents, 2);
        assert_int_equal(s->events_malformed, 1);
        e = &s->events[0];
        assert_int_equal(e->partition, 5);
        assert_int_equal(e->producer_len, 2);
        assert_memory_equal(e->producer, "p\xff", 2);
        assert_int_equal(e->msgid_stored, 4);
        assert_memory_equal(e->msgid, "m\x80id", 4);
        assert_int_equal(e->msgid_len, 300);
        assert_int_equal(e->first_partition, 2);
        assert_int_equal(e->first_offset, 11);
        assert_int_equal(e->first_offset_hi, 12);
        assert_string_equal(e->first_topic, "u");
        assert_int_equal(e->when_ms, 777);
        assert_string_equal(e->member, "eosaudit-g-a");
        /* No state record counts it (the ids topic's judge found it):
         * the topic's sum takes it from the events. */
        assert_int_equal(grouprep_snap_sum(s, "t", &c, NULL, NULL), 0);
        assert_int_equal(c.anomalies[DEDUP_KIND_REDELIVERED], 2);
        assert_int_equal(grouprep_snap_sum(s, "u", &c, NULL, NULL), 0);
        assert_int_equal(c.anomalies[DEDUP_KIND_REDELIVERED], 0);
        grouprep_snap_put(s);
        grouprep_free(g);
}

/* A 'truncated' event as the owner writes it (group.c's truncated
 * operation): kept with its detail, and counted per topic. */
static void test_event_truncated(void **unused)
{
        static const char detail[] =
            "{\"how\":\"offset out of range\",\"log_end\":6089,"
            "\"leader_epoch\":null,\"streams\":[{\"producer\":\"pA\","
            "\"epoch\":0,\"seq_lo\":6000,\"epoch_hi\":0,\"seq_hi\":"
            "20151,\"records\":14152}]}";
        struct grouprep *g = grouprep_new(4);
        struct grouprep_snap *s;
        struct grouprep_counts c;
        struct ledger_anomaly an;
        json_t *o, *d;
        char *txt;

        (void)unused;
        assert_non_null(g);
        assert_int_equal(grouprep_expect(g, "t", 0), 0);
        memset(&an, 0, sizeof(an));
        an.topic = "t";
        an.kind = "truncated";
        an.epoch = an.first_partition = -1;
        an.seq_lo = an.seq_hi = an.first_offset = an.first_offset_hi = -1;
        an.msgid_len = -1;
        an.offset_lo = 6000;
        an.offset_hi = 20151;
        an.count = 14152;
        an.detected_ms = 5;
        an.detail = detail;
        o = report_anomaly_json(&an);
        assert_non_null(o);
        json_object_set_new(o, "member", json_string("eosaudit-g-a"));
        txt = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        assert_non_null(txt);
        assert_int_equal(grouprep_event(g, 0, 3, txt, strlen(txt)), 0);
        free(txt);
        /* A kind nobody writes is still malformed. */
        txt = "{\"topic\":\"t\",\"partition\":0,\"kind\":\"truncate\","
              "\"count\":1}";
        assert_int_equal(grouprep_event(g, 0, 4, txt, strlen(txt)), 1);
        s = grouprep_snap_make(g, 1);
        assert_non_null(s);
        assert_int_equal(s->nevents, 1);
        assert_string_equal(s->events[0].kind, "truncated");
        assert_int_equal(s->events[0].offset_lo, 6000);
        assert_int_equal(s->events[0].offset_hi, 20151);
        assert_int_equal(s->events[0].count, 14152);
        assert_non_null(s->events[0].detail);
        d = json_loads(s->events[0].detail, 0, NULL);
        assert_non_null(d);
        assert_int_equal(json_integer_value(json_object_get(
                             json_array_get(json_object_get(d, "streams"), 0),
                             "seq_hi")),
                         20151);
        json_decref(d);
        assert_int_equal(grouprep_snap_sum(s, "t", &c, NULL, NULL), 0);
        assert_int_equal(c.truncations, 1);
        assert_int_equal(c.truncated_records, 14152);
        assert_int_equal(c.anomalies[DEDUP_KIND_REDELIVERED], 0);
        assert_int_equal(grouprep_snap_sum(s, "u", &c, NULL, NULL), 0);
        assert_int_equal(c.truncated_records, 0);
        grouprep_snap_put(s);
        grouprep_free(g);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_event_truncated),
            cmocka_unit_test(test_sums_and_latest_wins),
            cmocka_unit_test(test_malformed_state),
            cmocka_unit_test(test_real_export),
            cmocka_unit_test(test_events),
            cmocka_unit_test(test_event_evidence),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
