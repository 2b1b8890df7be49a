/*
 * test_fingerprint.c - the last audited record's fingerprint and what the
 * log says about it when the audit resumes (auditor/fingerprint.h):
 * hashing that tells records apart, and a table of logs (retention,
 * compaction, recreation, truncation, lost markers) with the verdict each
 * must give, and what the topic's id adds to it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../auditor/ledger/fingerprint.h"

struct rec {
        const char *key;     /* NULL: a null key */
        const char *value;   /* NULL: a null value */
        const char *hdrs[6]; /* name, value pairs; a NULL name ends them */
        int64_t offset, ts;
};

static void fp_of(const struct rec *r, struct fingerprint *out)
{
        struct fingerprint_hasher h;
        size_t i;

        fingerprint_hasher_init(&h);
        fingerprint_hasher_key(&h, r->key, r->key ? strlen(r->key) : 0);
        fingerprint_hasher_value(&h, r->value,
                                 r->value ? strlen(r->value) : 0);
        for (i = 0; i + 1 < 6 && r->hdrs[i]; i += 2)
                fingerprint_hasher_header(&h, r->hdrs[i], strlen(r->hdrs[i]),
                                          r->hdrs[i + 1],
                                          r->hdrs[i + 1]
                                              ? strlen(r->hdrs[i + 1])
                                              : 0);
        fingerprint_hasher_final(&h, r->offset, r->ts, out);
}

/* Each record differs from the first in one thing only: all must hash
 * apart from it and from each other; the same record hashes the same. */
static void test_hash_tells_records_apart(void **state)
{
        static const struct rec recs[] = {
            {"k", "v", {"eos.seq", "1", NULL}, 7, 1000},
            {"k", "v", {"eos.seq", "2", NULL}, 7, 1000},  /* header value */
            {"k", "v", {"eos.seq", "1", NULL}, 8, 1000},  /* offset */
            {"k", "v", {"eos.seq", "1", NULL}, 7, 1001},  /* timestamp */
            {"k", "w", {"eos.seq", "1", NULL}, 7, 1000},  /* value */
            {"j", "v", {"eos.seq", "1", NULL}, 7, 1000},  /* key */
            {NULL, "v", {"eos.seq", "1", NULL}, 7, 1000}, /* null key */
            {"", "v", {"eos.seq", "1", NULL}, 7, 1000},   /* empty key */
            {"k", NULL, {"eos.seq", "1", NULL}, 7, 1000}, /* null value */
            {"k", "v", {"eos.seq", NULL, NULL}, 7, 1000}, /* null header */
            {"k", "v", {"eos.seq", "", NULL}, 7, 1000},   /* empty header */
            {"k", "v", {NULL}, 7, 1000},                  /* no header */
            {"k", "v", {"eos.se", "q1", NULL}, 7, 1000},  /* shifted bytes */
            {"kv", "", {"eos.seq", "1", NULL}, 7, 1000},  /* key/value shift */
            {"k", "v", {"eos.seq", "1", "eos.seq", "1"}, 7, 1000}, /* twice */
        };
        size_t n = sizeof(recs) / sizeof(*recs), i, j;
        struct fingerprint f[sizeof(recs) / sizeof(*recs)], again;

        (void)state;
        for (i = 0; i < n; i++)
                fp_of(&recs[i], &f[i]);
        for (i = 0; i < n; i++) {
                fp_of(&recs[i], &again);
                assert_true(fingerprint_equal(&f[i], &again));
                for (j = i + 1; j < n; j++) {
                        if (fingerprint_equal(&f[i], &f[j]))
                                print_error("records %zu and %zu hash "
                                            "alike\n",
                                            i, j);
                        assert_false(fingerprint_equal(&f[i], &f[j]));
                        /* Not only offset and timestamp: the hash too,
                         * where the bytes differ. */
                        if (recs[i].offset == recs[j].offset &&
                            recs[i].ts == recs[j].ts)
                                assert_false(f[i].lo == f[j].lo &&
                                             f[i].hi == f[j].hi);
                }
        }
}

/*
 * The ledger stopped at next = 100 after the record at offset 95 (96..99
 * were transaction markers).  What each log gives.
 */
enum found_as { NOTHING, SAME, OTHER, LATER };

struct check_case {
        const char *what;
        int64_t stored_off; /* -1: no fingerprint */
        int64_t lo, hi;
        enum found_as found;
        int compacted;
        enum fingerprint_verdict want;
};

static void test_check_table(void **state)
{
        static const struct check_case cases[] = {
            {"older ledger, no fingerprint", -1, 0, 50, NOTHING, 0, FP_NONE},
            {"same log, grown", 95, 0, 500, SAME, 0, FP_SAME},
            {"same log, nothing new", 95, 0, 100, SAME, 0, FP_SAME},
            {"same log, retention below it", 95, 60, 500, SAME, 0, FP_SAME},
            {"retention deleted it, log went on", 95, 96, 500, NOTHING, 0,
             FP_RETENTION},
            {"retention past the ledger's offset", 95, 300, 500, NOTHING, 0,
             FP_RETENTION},
            {"retention to exactly the end", 95, 100, 100, NOTHING, 0,
             FP_RETENTION},
            {"recreated with more records", 95, 0, 1000, OTHER, 0,
             FP_RECREATED},
            {"recreated, record gone from the middle", 95, 0, 1000, LATER, 0,
             FP_RECREATED},
            {"compacted away, compacted topic", 95, 0, 1000, LATER, 1,
             FP_COMPACTED},
            {"recreated, compacted topic, other record", 95, 0, 1000, OTHER, 1,
             FP_RECREATED},
            {"recreated with fewer records", 95, 0, 40, NOTHING, 0,
             FP_TRUNCATED},
            {"recreated, empty", 95, 0, 0, NOTHING, 0, FP_TRUNCATED},
            {"truncated to just below it", 95, 0, 95, NOTHING, 0,
             FP_TRUNCATED},
            {"log start past it and end below the ledger", 95, 97, 98, NOTHING,
             0, FP_TRUNCATED},
            {"markers after it lost", 95, 0, 97, SAME, 0, FP_REWIND},
            {"truncated after it, rewritten", 95, 0, 150, OTHER, 0,
             FP_RECREATED},
        };
        static const struct rec last = {
            "k", "v", {"eos.seq", "9", NULL}, 95, 5000};
        static const struct rec other = {
            "k", "v", {"eos.seq", "0", NULL}, 95, 9000};
        static const struct rec later = {
            "k", "v", {"eos.seq", "9", NULL}, 120, 5000};
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
                const struct check_case *c = &cases[i];
                struct fingerprint stored;
                struct fingerprint_probe p;
                enum fingerprint_verdict got;

                fp_of(&last, &stored);
                stored.offset = c->stored_off;
                memset(&p, 0, sizeof(p));
                p.lo = c->lo;
                p.hi = c->hi;
                p.compacted = c->compacted;
                p.found = c->found != NOTHING;
                if (c->found == SAME)
                        fp_of(&last, &p.rec);
                else if (c->found == OTHER)
                        fp_of(&other, &p.rec);
                else if (c->found == LATER)
                        fp_of(&later, &p.rec);
                got = fingerprint_check(&stored, 100, &p);
                if (got != c->want)
                        print_error("%s: want %s, got %s\n", c->what,
                                    fingerprint_verdict_name(c->want),
                                    fingerprint_verdict_name(got));
                assert_int_equal(got, c->want);
                assert_int_equal(fingerprint_verdict_new_log(got),
                                 got == FP_RECREATED || got == FP_TRUNCATED);
        }
}

/* What a topic's id says, alone and with the fingerprint's verdict. */
static void test_topic_id(void **state)
{
        static const enum fingerprint_verdict all[] = {
            FP_NONE,      FP_SAME,      FP_REWIND,   FP_RETENTION,
            FP_COMPACTED, FP_RECREATED, FP_TRUNCATED};
        char id[64];
        size_t i;

        (void)state;
        assert_int_equal(topic_id_compare("", ""), TOPIC_ID_UNKNOWN);
        assert_int_equal(topic_id_compare("", "AAAAAAAAAAAAAAAAAAAAAQ"),
                         TOPIC_ID_UNKNOWN);
        assert_int_equal(topic_id_compare("AAAAAAAAAAAAAAAAAAAAAQ", ""),
                         TOPIC_ID_UNKNOWN);
        assert_int_equal(topic_id_compare(NULL, "AAAAAAAAAAAAAAAAAAAAAQ"),
                         TOPIC_ID_UNKNOWN);
        assert_int_equal(topic_id_compare("AAAAAAAAAAAAAAAAAAAAAQ",
                                          "AAAAAAAAAAAAAAAAAAAAAQ"),
                         TOPIC_ID_SAME);
        assert_int_equal(topic_id_compare("AAAAAAAAAAAAAAAAAAAAAQ",
                                          "Wm9-X2JhcjEyMzQ1Njc4OQ"),
                         TOPIC_ID_CHANGED);

        assert_true(topic_id_valid("Wm9-X2JhcjEyMzQ1Njc4OQ"));
        assert_true(topic_id_valid("AAAAAAAAAAAAAAAAAAAAAQ"));
        /* the zero id of a broker without topic ids */
        assert_false(topic_id_valid("AAAAAAAAAAAAAAAAAAAAAA"));
        assert_false(topic_id_valid(""));
        assert_false(topic_id_valid("Wm9-X2JhcjEyMzQ1Njc4"));    /* short */
        assert_false(topic_id_valid("Wm9-X2JhcjEyMzQ1Njc4OQA")); /* long */
        assert_false(topic_id_valid("Wm9+X2JhcjEyMzQ1Njc4OQ"));  /* not url */
        assert_false(topic_id_valid("Wm9\"X2JhcjEyMzQ1Njc4OQ"));

        /* librdkafka's standard base64 to Kafka's URL-safe form. */
        assert_int_equal(topic_id_from_base64("0WnhSuldT0eHZTLIv/rZQQ", id,
                                              sizeof(id)),
                         0);
        assert_string_equal(id, "0WnhSuldT0eHZTLIv_rZQQ");
        assert_int_equal(topic_id_from_base64("Wm9+X2JhcjEyMzQ1Njc4OQ==", id,
                                              sizeof(id)),
                         0);
        assert_string_equal(id, "Wm9-X2JhcjEyMzQ1Njc4OQ");
        assert_int_equal(topic_id_from_base64("AAAAAAAAAAAAAAAAAAAAAA", id,
                                              sizeof(id)),
                         -1);
        assert_int_equal(topic_id_from_base64("AAAA", id, sizeof(id)), -1);
        assert_int_equal(topic_id_from_base64("0WnhSuldT0eHZTLIv/rZQQ", id,
                                              22),
                         -1);
        for (i = 0; i < sizeof(all) / sizeof(*all); i++) {
                enum fingerprint_verdict v = all[i];
                /* Another id: a recreated topic, whatever the log. */
                assert_int_equal(fingerprint_with_topic_id(TOPIC_ID_CHANGED,
                                                           v),
                                 FP_RECREATED);
                /* No id: the fingerprint alone. */
                assert_int_equal(fingerprint_with_topic_id(TOPIC_ID_UNKNOWN,
                                                           v),
                                 v);
                /* The same id: never recreated; another record where the
                 * audit stopped is a log rewritten after a truncation. */
                assert_int_equal(fingerprint_with_topic_id(TOPIC_ID_SAME, v),
                                 v == FP_RECREATED ? FP_TRUNCATED : v);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_hash_tells_records_apart),
            cmocka_unit_test(test_check_table),
            cmocka_unit_test(test_topic_id),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
