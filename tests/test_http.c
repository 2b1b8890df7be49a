/*
 * test_http.c - the HTTP server against a ledger filled through
 * ledger_commit() and a published status: every endpoint's status and
 * body, paging, escaping of hostile topic and producer names in JSON and
 * in the Prometheus exposition, the evidence of redelivered records
 * (message ids, printable and not), and the human report of the same
 * ledger.  400s, methods, limits, the token, keep-alive and the
 * per-address limit are in test_http_errors.c; the page and the pure
 * parsers in test_http_page.c; the fixture in http_fixture.h.
 */
#include "http_fixture.h"

/* ------------------------------------------------------------------ */
/* Endpoints                                                           */
/* ------------------------------------------------------------------ */

static void test_healthz_readyz(void **state)
{
        struct fx *fx = *state;
        json_t *j;

        j = get_json(fx->port, "/healthz", 200);
        assert_string_equal(json_string_value(json_object_get(j, "status")),
                            "ok");
        json_decref(j);
        j = get_json(fx->port, "/readyz", 200);
        assert_true(json_is_true(json_object_get(j, "ready")));
        assert_int_equal(json_array_size(json_object_get(j, "reasons")), 0);
        json_decref(j);
}

static void test_summary(void **state)
{
        struct fx *fx = *state;
        json_t *j = get_json(fx->port, "/api/v1/summary", 200), *t, *an, *w;
        size_t i;

        assert_int_equal(jint(j, "records_total"),
                         fx->sum[0].records + fx->sum[1].records);
        assert_int_equal(jint(j, "records_total"), NRECS + 1);
        assert_int_equal(jint(j, "untracked"), 1);
        an = json_object_get(j, "anomalies");
        assert_int_equal(jint(an, "duplicate"), 4);
        assert_int_equal(jint(an, "gap"), 1);
        assert_int_equal(jint(an, "fenced"), 1);
        assert_int_equal(jint(an, "malformed"), 1);
        assert_int_equal(jint(an, "redelivered"), 2);
        assert_int_equal(jint(j, "missing_records"), 2);
        assert_int_equal(jint(j, "open_gaps"), 1);
        /* Ids: the four records of orders that carry one were checked;
         * the window holds the two distinct ones, in the generation opened
         * by the first batch (at 1000 ms). */
        assert_int_equal(jint(j, "ids_checked"), 4);
        w = json_object_get(j, "window");
        assert_int_equal(jint(w, "ids"), 2);
        assert_int_equal(jint(w, "generations"), 1);
        assert_int_equal(jint(w, "oldest_ms"), 1000);
        /* lag: (100 - 7) + (100 - 4) + (100 - 6) */
        assert_int_equal(jint(j, "lag"), 283);
        assert_true(json_is_true(
            json_object_get(json_object_get(j, "live"), "ready")));
        t = json_object_get(j, "topics");
        assert_int_equal(json_array_size(t), 2);
        for (i = 0; i < 2; i++) {
                json_t *o = json_array_get(t, i);
                assert_string_equal(json_string_value(
                                        json_object_get(o, "topic")),
                                    topics[i]);
                assert_int_equal(jint(o, "records_total"), fx->sum[i].records);
                assert_int_equal(jint(o, "producers"), fx->sum[i].producers);
        }
        assert_int_equal(jint(json_array_get(t, 1), "lag"), 94);
        /* The verdicts the dashboard's banner shows. */
        assert_string_equal(json_string_value(json_object_get(j, "verdict")),
                            "anomalies");
        assert_string_equal(json_string_value(
                                json_object_get(json_array_get(t, 0),
                                                "verdict")),
                            "anomalies");
        assert_true(
            json_is_array(json_object_get(json_array_get(t, 0), "warnings")));
        assert_int_equal(jint(json_array_get(t, 0), "ids_checked"), 4);
        /* The odd topic's window is empty: no oldest id. */
        assert_int_equal(jint(json_array_get(t, 1), "ids_checked"), 0);
        w = json_object_get(json_array_get(t, 1), "window");
        assert_int_equal(jint(w, "ids"), 0);
        assert_int_equal(jint(w, "generations"), 0);
        assert_true(json_is_null(json_object_get(w, "oldest_ms")));
        assert_int_equal(jint(json_object_get(json_array_get(t, 1),
                                              "anomalies"),
                              "redelivered"),
                         0);
        json_decref(j);

        j = get_json(fx->port, "/api/v1/summary?topic=" T_ODD_Q, 200);
        assert_int_equal(json_array_size(json_object_get(j, "topics")), 1);
        assert_int_equal(jint(j, "records_total"), fx->sum[1].records);
        json_decref(j);
        json_decref(get_json(fx->port, "/api/v1/summary?topic=nope", 404));
}

/* Walks every page of target (which ends in '?' or '&'), collecting the
 * items of field; returns how many, checks the order with cmp. */
static size_t walk_pages(uint16_t port, const char *target, const char *field,
                         json_t *all)
{
        char url[2048], cur[1200] = "";
        size_t pages = 0;

        for (;;) {
                json_t *j, *next;
                snprintf(url, sizeof(url), "%s%s%s", target,
                         cur[0] ? "cursor=" : "", cur);
                j = get_json(port, url, 200);
                json_array_extend(all, json_object_get(j, field));
                next = json_object_get(j, "next_cursor");
                pages++;
                assert_true(pages < 100);
                if (json_is_null(next)) {
                        json_decref(j);
                        break;
                }
                if (json_is_integer(next))
                        snprintf(cur, sizeof(cur), "%lld",
                                 (long long)json_integer_value(next));
                else
                        snprintf(cur, sizeof(cur), "%s",
                                 json_string_value(next));
                json_decref(j);
        }
        return pages;
}

static json_t *find_producer(json_t *arr, const char *name)
{
        size_t i;
        json_t *o;

        json_array_foreach(arr, i, o)
        {
                json_t *p = json_object_get(o, "producer");
                if (json_is_string(p) && !strcmp(json_string_value(p), name))
                        return o;
        }
        return NULL;
}

/* The item of arr on partition, or NULL. */
static json_t *find_partition(json_t *arr, json_int_t partition)
{
        size_t i;
        json_t *o;

        json_array_foreach(arr, i, o)
        {
                if (jint(o, "partition") == partition)
                        return o;
        }
        return NULL;
}

/* The hex of the bytes of the long id that evidence keeps. */
static void long_id_hex(char *hex, size_t size)
{
        size_t i;

        assert_true(size > 2 * DEDUP_ID_EVIDENCE_MAX);
        for (i = 0; i < DEDUP_ID_EVIDENCE_MAX; i++)
                snprintf(hex + 2 * i, 3, "%02x", long_id[i]);
}

static void assert_null_field(json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);

        if (!v || !json_is_null(v))
                fail_msg("'%s' is not null (or absent)", key);
}

/* The redelivered records with their evidence: where their first copies
 * are and the first record's message id. */
static void test_anomalies_redelivered(void **state)
{
        /* The integer evidence of the redelivered items, by partition:
         * orders/1 offset 0 is producer PQ sending the id of orders/0
         * offset 0 again; orders/0 offset 5 an untracked record with the id
         * of orders/0 offset 1, which is not UTF-8 and longer than the
         * evidence keeps. */
        static const struct {
                json_int_t partition;
                const char *key;
                json_int_t want;
        } ints[] = {
            {1, "epoch", 0},
            {1, "seq_lo", 0},
            {1, "offset_lo", 0},
            {1, "offset_hi", 0},
            {1, "first_partition", 0},
            {1, "first_offset", 0},
            {1, "first_offset_hi", 0},
            {1, "msgid_len", sizeof(ID1) - 1},
            {1, "count", 1},
            {0, "offset_lo", 5},
            {0, "offset_hi", 5},
            {0, "first_partition", 0},
            {0, "first_offset", 1},
            {0, "first_offset_hi", 1},
            {0, "msgid_len", LONG_ID_LEN},
            {0, "count", 1},
        };
        struct fx *fx = *state;
        json_t *j, *arr, *o;
        char hex[2 * DEDUP_ID_EVIDENCE_MAX + 1];
        size_t i;

        j = get_json(fx->port, "/api/v1/anomalies?kind=redelivered", 200);
        arr = json_object_get(j, "anomalies");
        assert_int_equal(json_array_size(arr), 2);
        json_array_foreach(arr, i, o)
        {
                assert_string_equal(json_string_value(
                                        json_object_get(o, "kind")),
                                    "redelivered");
                assert_string_equal(json_string_value(
                                        json_object_get(o, "topic")),
                                    T_PLAIN);
        }
        for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
                o = find_partition(arr, ints[i].partition);
                assert_non_null(o);
                if (jint(o, ints[i].key) != ints[i].want)
                        fail_msg("partition %d: %s is %lld, want %lld",
                                 (int)ints[i].partition, ints[i].key,
                                 (long long)jint(o, ints[i].key),
                                 (long long)ints[i].want);
        }
        o = find_partition(arr, 1);
        assert_string_equal(json_string_value(json_object_get(o, "producer")),
                            PQ);
        assert_string_equal(json_string_value(json_object_get(o, "msgid")),
                            ID1);
        assert_null_field(o, "msgid_hex");
        o = find_partition(arr, 0);
        assert_null_field(o, "producer");
        assert_null_field(o, "epoch");
        assert_null_field(o, "seq_lo");
        assert_true(json_is_string(json_object_get(o, "msgid")));
        long_id_hex(hex, sizeof(hex));
        assert_string_equal(json_string_value(json_object_get(o, "msgid_hex")),
                            hex);
        json_decref(j);

        /* Other kinds have the fields, null. */
        j = get_json(fx->port, "/api/v1/anomalies?kind=duplicate&limit=1",
                     200);
        o = json_array_get(json_object_get(j, "anomalies"), 0);
        assert_non_null(o);
        assert_null_field(o, "first_partition");
        assert_null_field(o, "first_offset_hi");
        assert_null_field(o, "msgid");
        assert_null_field(o, "msgid_hex");
        assert_null_field(o, "msgid_len");
        json_decref(j);

        /* Filters combine with the kind. */
        j = get_json(fx->port,
                     "/api/v1/anomalies?kind=redelivered&topic=" T_ODD_Q, 200);
        assert_int_equal(json_array_size(json_object_get(j, "anomalies")), 0);
        json_decref(j);
        j = get_json(fx->port, "/api/v1/anomalies?kind=redelivered&limit=1",
                     200);
        assert_int_equal(json_array_size(json_object_get(j, "anomalies")), 1);
        assert_true(json_is_integer(json_object_get(j, "next_cursor")));
        json_decref(j);
}

/* /api/v1/ids/{id}: m-1 was first orders/0 offset 0 (the open generation
 * of the orders window) and came again on orders/1 offset 0. */
static void test_ids(void **state)
{
        struct fx *fx = *state;
        json_t *j, *o, *c;
        char target[400];
        size_t n;
        int i;

        j = get_json(fx->port, "/api/v1/ids/m-1?topic=" T_PLAIN, 200);
        assert_string_equal(json_string_value(json_object_get(j, "id")), ID1);
        assert_string_equal(json_string_value(json_object_get(j, "topic")),
                            T_PLAIN);
        assert_string_equal(json_string_value(json_object_get(j, "dedup_key")),
                            "msgid");
        assert_true(json_is_true(json_object_get(j, "in_window")));
        o = json_object_get(j, "first");
        assert_int_equal(jint(o, "partition"), 0);
        assert_int_equal(jint(o, "offset"), 0);
        assert_true(json_is_false(json_object_get(o, "generation_closed")));
        assert_int_equal(jint(o, "generation_first_ms"), 1000);
        o = json_object_get(j, "copies");
        assert_int_equal(json_array_size(o), 1);
        c = json_array_get(o, 0);
        assert_int_equal(jint(c, "partition"), 1);
        assert_int_equal(jint(c, "offset"), 0);
        assert_int_equal(jint(c, "first_partition"), 0);
        assert_int_equal(jint(c, "first_offset"), 0);
        assert_true(jint(c, "anomaly_id") > 0);
        assert_string_equal(json_string_value(json_object_get(c, "producer")),
                            PQ);
        assert_true(json_is_false(json_object_get(j, "copies_truncated")));
        assert_int_equal(jint(json_object_get(j, "window"), "generations"), 1);
        keys_are(j, "topic,id,dedup_key,in_window,first,copies,"
                    "copies_truncated,window,generated_ms");
        keys_are(json_object_get(j, "first"),
                 "partition,offset,generation,generation_closed,"
                 "generation_first_ms,generation_last_ms");
        keys_are(c, "partition,offset,anomaly_id,detected_ms,"
                    "first_partition,first_offset,producer");
        keys_are(json_object_get(j, "window"), "generations,oldest_ms");
        json_decref(j);

        /* Percent-encoded in the path; the one with the 404 is unknown. */
        j = get_json(fx->port, "/api/v1/ids/m%2D1?topic=" T_PLAIN, 200);
        assert_int_equal(jint(json_object_get(j, "first"), "offset"), 0);
        json_decref(j);
        j = get_json(fx->port, "/api/v1/ids/m-2?topic=" T_PLAIN, 404);
        assert_non_null(strstr(json_string_value(json_object_get(j, "error")),
                               "not seen"));
        json_decref(j);
        /* Another topic's window does not know it. */
        json_decref(get_json(fx->port, "/api/v1/ids/m-1?topic=" T_ODD_Q, 404));

        /* Which topic (two are audited), which id. */
        j = get_json(fx->port, "/api/v1/ids/m-1", 400);
        assert_non_null(
            strstr(json_string_value(json_object_get(j, "error")), "topic"));
        json_decref(j);
        json_decref(get_json(fx->port, "/api/v1/ids/m-1?topic=nope", 400));
        json_decref(get_json(fx->port, "/api/v1/ids/?topic=" T_PLAIN, 400));
        json_decref(get_json(fx->port,
                             "/api/v1/ids/m-1?topic=" T_PLAIN "&limit=3",
                             400));
        /* A NUL or a malformed escape is refused, not cut or kept as it
         * is (libmicrohttpd's decoding answered m-1 for m-1%00x, 200). */
        for (n = 0; n < 4; n++) {
                static const char *const bad[] = {"m-1%00x", "%00", "m%zz",
                                                  "m%2"};
                snprintf(target, sizeof(target), "/api/v1/ids/%s?topic=%s",
                         bad[n], T_PLAIN);
                j = get_json(fx->port, target, 400);
                assert_non_null(
                    strstr(json_string_value(json_object_get(j, "error")),
                           "percent-encoding"));
                json_decref(j);
        }
        /* '+' is itself in a path. */
        json_decref(get_json(fx->port, "/api/v1/ids/m+1?topic=" T_PLAIN, 404));
        /* 255 bytes may be asked about (unknown here), 256 may not;
         * written plain, or each escaped (765 bytes in the path). */
        for (n = 255 * 2; n <= 256 * 2 + 1; n++) {
                const char *byte = n % 2 ? "%78" : "x";
                char big[1024];
                size_t k;

                i = snprintf(big, sizeof(big), "/api/v1/ids/");
                for (k = 0; k < n / 2; k++)
                        i += snprintf(big + i, sizeof(big) - (size_t)i, "%s",
                                      byte);
                snprintf(big + i, sizeof(big) - (size_t)i, "?topic=%s",
                         T_PLAIN);
                j = get_json(fx->port, big, n / 2 == 255 ? 404 : 400);
                if (n / 2 == 256)
                        assert_non_null(strstr(
                            json_string_value(json_object_get(j, "error")),
                            "1 to 255 bytes"));
                json_decref(j);
        }
}

static void test_anomalies(void **state)
{
        struct fx *fx = *state;
        json_t *all = json_array(), *j, *o;
        json_int_t prev = INT64_MAX;
        size_t i, pages;

        /* Every anomaly, two a page, newest first, each id once. */
        pages = walk_pages(fx->port, "/api/v1/anomalies?limit=2&", "anomalies",
                           all);
        assert_int_equal(json_array_size(all), fx->anomalies);
        assert_int_equal(pages, (fx->anomalies + 1) / 2);
        json_array_foreach(all, i, o)
        {
                assert_true(jint(o, "id") < prev);
                prev = jint(o, "id");
                assert_non_null(json_object_get(o, "offset_lo"));
                assert_non_null(json_object_get(o, "kind"));
                /* The command that fetches the records, as scan prints
                 * it; none for a coverage gap. */
                if (strcmp(json_string_value(json_object_get(o, "kind")),
                           "coverage"))
                        assert_non_null(strstr(json_string_value(
                                                   json_object_get(o, "kcat")),
                                               "kcat -C -b BROKER -t "));
                assert_non_null(json_object_get(o, "kcat_first"));
        }
        /* Hostile names come back exactly (invalid UTF-8 lossily, with the
         * bytes in hex). */
        assert_non_null(find_producer(all, PQ));
        o = find_producer(all, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd bin\x01"
                               "\xef\xbf\xbd(");
        assert_non_null(o);
        assert_string_equal(json_string_value(
                                json_object_get(o, "producer_hex")),
                            PBIN_HEX);
        assert_string_equal(json_string_value(json_object_get(o, "topic")),
                            T_ODD);
        json_decref(all);

        /* Filters. */
        j = get_json(fx->port, "/api/v1/anomalies?kind=duplicate", 200);
        assert_int_equal(json_array_size(json_object_get(j, "anomalies")), 4);
        json_array_foreach(json_object_get(j, "anomalies"), i, o)
            assert_string_equal(json_string_value(json_object_get(o, "kind")),
                                "duplicate");
        assert_true(json_is_null(json_object_get(j, "next_cursor")));
        json_decref(j);
        j = get_json(fx->port,
                     "/api/v1/anomalies?topic=" T_ODD_Q "&producer=" PBIN_Q,
                     200);
        assert_int_equal(json_array_size(json_object_get(j, "anomalies")), 1);
        json_decref(j);
        j = get_json(fx->port, "/api/v1/anomalies?since=99999999999999", 200);
        assert_int_equal(json_array_size(json_object_get(j, "anomalies")), 0);
        json_decref(j);
        j = get_json(fx->port, "/api/v1/anomalies?since=0&kind=coverage", 200);
        assert_int_equal(json_array_size(json_object_get(j, "anomalies")), 0);
        json_decref(j);
}

static void test_producers_and_partitions(void **state)
{
        struct fx *fx = *state;
        json_t *all = json_array(), *j, *o;
        size_t i;

        walk_pages(fx->port, "/api/v1/producers?limit=1&", "producers", all);
        assert_int_equal(json_array_size(all), fx->pairs);
        o = find_producer(all, PQ);
        assert_non_null(o);
        assert_int_equal(jint(o, "epoch"), 1);
        o = json_array_get(all, 0); /* orders/0 p1: the open gap */
        assert_string_equal(json_string_value(json_object_get(o, "producer")),
                            P1);
        assert_int_equal(jint(o, "open_gaps"), 1);
        assert_int_equal(jint(o, "last_seq"), 9);
        /* One producer's pairs (found by primary key per partition, there
         * is no index by producer): exactly those of the full listing,
         * in the same order, also a page at a time and within a topic. */
        {
                json_t *mine = json_array(), *own = json_array(), *e;
                size_t k, in_plain = 0;

                json_array_foreach(all, i, e)
                {
                        if (strcmp(json_string_value(
                                       json_object_get(e, "producer")),
                                   P1))
                                continue;
                        json_array_append(mine, e);
                        in_plain += !strcmp(json_string_value(
                                                json_object_get(e, "topic")),
                                            T_PLAIN);
                }
                assert_true(json_array_size(mine) >= 2);
                assert_true(in_plain >= 1 && in_plain < json_array_size(mine));
                walk_pages(fx->port,
                           "/api/v1/producers?limit=1&producer=" P1 "&",
                           "producers", own);
                assert_int_equal(json_array_size(own), json_array_size(mine));
                json_array_foreach(mine, k, e)
                    assert_true(json_equal(e, json_array_get(own, k)));
                json_decref(own);
                j = get_json(fx->port,
                             "/api/v1/producers?topic=" T_PLAIN
                             "&producer=" P1,
                             200);
                assert_int_equal(json_array_size(
                                     json_object_get(j, "producers")),
                                 in_plain);
                json_decref(j);
                json_decref(mine);
        }
        json_decref(all);
        j = get_json(fx->port, "/api/v1/producers?topic=" T_ODD_Q, 200);
        assert_int_equal(json_array_size(json_object_get(j, "producers")), 3);
        o = find_producer(json_object_get(j, "producers"),
                          "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd bin\x01"
                          "\xef\xbf\xbd(");
        assert_non_null(o);
        assert_string_equal(json_string_value(
                                json_object_get(o, "producer_hex")),
                            PBIN_HEX);
        json_decref(j);

        j = get_json(fx->port, "/api/v1/partitions", 200);
        assert_int_equal(json_array_size(json_object_get(j, "partitions")),
                         NPARTS);
        json_array_foreach(json_object_get(j, "partitions"), i, o)
        {
                assert_int_equal(jint(o, "lag"),
                                 HIGH_WATERMARK - jint(o, "next_offset"));
                assert_int_equal(jint(o, "high_watermark"), HIGH_WATERMARK);
        }
        o = json_array_get(json_object_get(j, "partitions"), 2);
        assert_string_equal(json_string_value(json_object_get(o, "topic")),
                            T_ODD);
        assert_int_equal(jint(json_object_get(o, "anomalies"), "duplicate"),
                         2);
        assert_int_equal(jint(o, "ids_checked"), 0);
        /* Ids checked and redelivered records per partition of orders. */
        o = json_array_get(json_object_get(j, "partitions"), 0);
        assert_int_equal(jint(o, "partition"), 0);
        assert_int_equal(jint(o, "ids_checked"), 3);
        assert_int_equal(jint(json_object_get(o, "anomalies"), "redelivered"),
                         1);
        o = json_array_get(json_object_get(j, "partitions"), 1);
        assert_int_equal(jint(o, "partition"), 1);
        assert_int_equal(jint(o, "ids_checked"), 1);
        assert_int_equal(jint(json_object_get(o, "anomalies"), "redelivered"),
                         1);
        json_decref(j);
}

/* /api/v1/history: the fixture's commits, summed per minute, add up to
 * the ledger's counters; a topic keeps to its own; bad windows are 400. */
static void test_history(void **state)
{
        struct fx *fx = *state;
        json_t *j, *p;
        int64_t records = 0, anomalous = 0, gaps = 0, missing = 0, prev = -1;
        uint64_t want_anomalous = 0;
        size_t i;
        int k, t;

        j = get_json(fx->port, "/api/v1/history", 200);
        assert_int_equal(jint(j, "minutes"), HTTP_HISTORY_MINUTES_DEFAULT);
        assert_int_equal(jint(j, "minute_ms"), 60000);
        assert_int_equal(jint(j, "retention_minutes"), 7 * 24 * 60);
        assert_int_equal(jint(j, "to_ms") - jint(j, "from_ms"),
                         HTTP_HISTORY_MINUTES_DEFAULT * 60000);
        assert_true(json_array_size(json_object_get(j, "points")) >= 1);
        keys_are(j, "minute_ms,minutes,from_ms,to_ms,retention_minutes,"
                    "points,generated_ms");
        json_array_foreach(json_object_get(j, "points"), i, p)
        {
                keys_are(p, "minute_ms,records,untracked,anomalous_records,"
                            "gaps,missing_records,unaudited_offsets");
                assert_true(jint(p, "minute_ms") > prev); /* oldest first */
                assert_true(jint(p, "minute_ms") >= jint(j, "from_ms"));
                assert_true(jint(p, "minute_ms") < jint(j, "to_ms"));
                prev = jint(p, "minute_ms");
                records += jint(p, "records");
                anomalous += jint(p, "anomalous_records");
                gaps += jint(p, "gaps");
                missing += jint(p, "missing_records");
        }
        for (t = 0; t < 2; t++)
                for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                        if (k != DEDUP_KIND_GAP)
                                want_anomalous += fx->sum[t].anomalies[k];
        assert_int_equal(records, fx->sum[0].records + fx->sum[1].records);
        assert_int_equal(anomalous, want_anomalous);
        assert_int_equal(gaps, fx->sum[0].anomalies[DEDUP_KIND_GAP] +
                                   fx->sum[1].anomalies[DEDUP_KIND_GAP]);
        assert_int_equal(missing, fx->sum[0].missing + fx->sum[1].missing);
        assert_true(records > 0 && anomalous > 0);
        json_decref(j);

        j = get_json(fx->port, "/api/v1/history?minutes=10080&topic=" T_ODD_Q,
                     200);
        records = 0;
        json_array_foreach(json_object_get(j, "points"), i, p)
            records += jint(p, "records");
        assert_int_equal(records, fx->sum[1].records);
        json_decref(j);

        json_decref(get_json(fx->port, "/api/v1/history?minutes=0", 400));
        json_decref(get_json(fx->port, "/api/v1/history?minutes=10081", 400));
        json_decref(get_json(fx->port, "/api/v1/history?limit=5", 400));
        json_decref(get_json(fx->port, "/api/v1/history?topic=nope", 404));
}

static void test_metrics(void **state)
{
        static const char *const families[] = {
            "eosaudit_ready gauge",
            "eosaudit_build_info gauge",
            "eosaudit_records_total counter",
            "eosaudit_anomalous_records_total counter",
            "eosaudit_anomaly_events_total counter",
            "eosaudit_missing_records_total counter",
            "eosaudit_unaudited_offsets_total counter",
            "eosaudit_recovered_records_total counter",
            "eosaudit_unknown_records gauge",
            "eosaudit_untracked_records_total counter",
            "eosaudit_open_gaps gauge",
            "eosaudit_producers gauge",
            "eosaudit_producer_partitions gauge",
            "eosaudit_topic_streams gauge",
            "eosaudit_ids_checked_total counter",
            "eosaudit_id_window_ids gauge",
            "eosaudit_consumer_lag_records gauge",
            "eosaudit_record_latency_seconds histogram",
            "eosaudit_ledger_commit_duration_seconds histogram",
        };
        /* Redelivered records and the id windows, per topic. */
        static const char *const id_lines[] = {
            "eosaudit_anomalous_records_total{topic=\"" T_PLAIN
            "\",kind=\"redelivered\"} 2",
            "eosaudit_anomalous_records_total{topic=\"" T_ODD_LABEL
            "\",kind=\"redelivered\"} 0",
            "eosaudit_ids_checked_total{topic=\"" T_PLAIN "\"} 4",
            "eosaudit_ids_checked_total{topic=\"" T_ODD_LABEL "\"} 0",
            "eosaudit_id_window_ids{topic=\"" T_PLAIN "\"} 2",
            "eosaudit_id_window_ids{topic=\"" T_ODD_LABEL "\"} 0",
        };
        struct fx *fx = *state;
        struct resp r;
        char type[64], line[256];
        const char *p;
        size_t i;

        req(fx->port, "GET", "/metrics", NULL, &r);
        assert_int_equal(r.status, 200);
        assert_non_null(resp_header(&r, "Content-Type", type, sizeof(type)));
        assert_string_equal(type, "text/plain; version=0.0.4; charset=utf-8");
        for (i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
                snprintf(line, sizeof(line), "# TYPE %s", families[i]);
                assert_line(r.body, line);
                snprintf(line, sizeof(line), "# HELP %.*s ",
                         (int)(strchr(families[i], ' ') - families[i]),
                         families[i]);
                assert_non_null(strstr(r.body, line));
        }
        /* Prometheus's own up{} says whether the process answers. */
        assert_null(strstr(r.body, "eosaudit_up"));
        assert_line(r.body, "eosaudit_ready 1");
        assert_non_null(strstr(r.body,
                               "eosaudit_build_info{version="
                               "\"9.9.9-test\",librdkafka_version=\""));
        snprintf(line, sizeof(line),
                 "eosaudit_records_total{topic=\"%s\"} "
                 "%llu",
                 T_PLAIN, (unsigned long long)fx->sum[0].records);
        assert_line(r.body, line);
        /* The odd topic, escaped. */
        snprintf(line, sizeof(line),
                 "eosaudit_records_total{topic=\"" T_ODD_LABEL "\"} %llu",
                 (unsigned long long)fx->sum[1].records);
        assert_line(r.body, line);
        assert_line(r.body,
                    "eosaudit_anomalous_records_total{topic=\"" T_ODD_LABEL
                    "\",kind=\"duplicate\"} 2");
        /* One unit a family: gaps and coverage gaps are events, not
         * records; the old mixed family and malformed's copy are gone. */
        snprintf(line, sizeof(line),
                 "eosaudit_anomaly_events_total{topic=\"%s\",kind=\"gap\"} "
                 "%llu",
                 T_PLAIN,
                 (unsigned long long)fx->sum[0].anomalies[DEDUP_KIND_GAP]);
        assert_line(r.body, line);
        assert_line(r.body, "eosaudit_anomaly_events_total{topic=\"" T_PLAIN
                            "\",kind=\"coverage\"} 0");
        assert_null(strstr(r.body,
                           "eosaudit_anomalous_records_total{topic=\"" T_PLAIN
                           "\",kind=\"gap\"}"));
        assert_null(strstr(r.body, "eosaudit_anomalies_total"));
        assert_null(strstr(r.body, "eosaudit_malformed_records_total"));
        for (i = 0; i < sizeof(id_lines) / sizeof(id_lines[0]); i++)
                assert_line(r.body, id_lines[i]);
        assert_line(r.body, "eosaudit_open_gaps{topic=\"" T_PLAIN "\"} 1");
        assert_line(r.body, "eosaudit_consumer_lag_records{topic=\"" T_PLAIN
                            "\",partition=\"1\"} 96");
        assert_line(
            r.body,
            "eosaudit_record_latency_seconds_bucket{topic=\"" T_ODD_LABEL
            "\",le=\"5\"} 0");
        assert_line(
            r.body,
            "eosaudit_record_latency_seconds_bucket{topic=\"" T_ODD_LABEL
            "\",le=\"10\"} 1");
        assert_line(
            r.body,
            "eosaudit_record_latency_seconds_bucket{topic=\"" T_ODD_LABEL
            "\",le=\"+Inf\"} 1");
        assert_line(
            r.body,
            "eosaudit_record_latency_seconds_count{topic=\"" T_ODD_LABEL
            "\"} 1");
        assert_line(r.body, "eosaudit_ledger_commit_duration_seconds_count 1");
        /* Producer names and message ids are never labels. */
        assert_null(strstr(r.body, "producer="));
        assert_null(strstr(r.body, "it's"));
        assert_null(strstr(r.body, "msgid"));
        assert_null(strstr(r.body, ID1));
        /* Every sample line names an eosaudit_ family; no raw newline or
         * quote broke a line. */
        for (p = r.body; *p; p = strchr(p, '\n') + 1) {
                assert_true(!strncmp(p, "# HELP eosaudit_", 16) ||
                            !strncmp(p, "# TYPE eosaudit_", 16) ||
                            !strncmp(p, "eosaudit_", 9));
                assert_non_null(strchr(p, '\n'));
        }
        resp_free(&r);
}

/* The human report (scan's) of the same ledger: the redelivered count,
 * the id window, and each redelivered anomaly's evidence with its id
 * printed safely. */
static void test_report_text(void **state)
{
        struct fx *fx = *state;
        struct ledger *lg = NULL;
        char err[256], hex[2 * DEDUP_ID_EVIDENCE_MAX + 1], want[1024];
        char *text = NULL;
        size_t len = 0;
        FILE *f;

        assert_int_equal(ledger_open_reader(&lg, fx->db, err, sizeof(err)), 0);
        f = open_memstream(&text, &len);
        assert_non_null(f);
        if (report_summary_print(f, lg, topics, 2,
                                 &(struct report_opts){.examples = 50}, err,
                                 sizeof(err)))
                fail_msg("report_summary_print: %s", err);
        fclose(f);
        ledger_close(lg);

        assert_non_null(strstr(text, "\n  redelivered    2 records "
                                     "(4 message ids checked)\n"));
        assert_non_null(strstr(text, "\n  id window      2 ids in 1 "
                                     "generation, since "
                                     "1970-01-01T00:00:01Z\n"));
        assert_non_null(strstr(text, "\n  redelivered    0 records (no "
                                     "message id checked)\n"));
        if (!strstr(text, "\n    redelivered  " T_PLAIN " [1] producer '" PQ
                          "' epoch 0 seq 0 offset 0 is a copy of partition 0 "
                          "offset 0, id '" ID1 "', count 1\n"))
                fail_msg("no redelivered line of " T_PLAIN " [1] in:\n%s",
                         text);
        long_id_hex(hex, sizeof(hex));
        snprintf(want, sizeof(want),
                 "\n    redelivered  " T_PLAIN " [0] offset 5 is a "
                 "copy of partition 0 offset 1, id 0x%s..., count 1\n",
                 hex);
        if (!strstr(text, want))
                fail_msg("no line '%s' in:\n%s", want + 1, text);
        /* Each anomaly with the kcat commands that fetch it and, for a
         * duplicate, its first copy. */
        if (!strstr(text, "\n        fetch: kcat -C -b BROKER -t " T_PLAIN
                          " -p 0 -o 2 -c 1 -e -J\n        first: kcat -C "
                          "-b BROKER -t " T_PLAIN " -p 0 -o 1 -c 1 -e -J\n"))
                fail_msg("no kcat lines of the duplicate in:\n%s", text);
        assert_non_null(strstr(text, "\n  verdict        ANOMALIES FOUND\n"));
        free(text);
}

/* The verdicts: anomalies first, then "not audited" when nothing carried
 * the headers and no id was checked (an empty topic too), else clean;
 * several topics merge to the worst. */
static void test_report_verdict(void **state)
{
        struct ledger_summary s;

        (void)state;
        memset(&s, 0, sizeof(s));
        assert_int_equal(report_verdict(&s), REPORT_NOT_AUDITED);
        s.records = s.untracked = 500;
        assert_int_equal(report_verdict(&s), REPORT_NOT_AUDITED);
        assert_true(report_mostly_untracked(&s));
        assert_string_equal(report_verdict_name(report_verdict(&s)),
                            "not_audited");
        s.ids_checked = 500; /* --dedup-key key: ids were checked */
        assert_int_equal(report_verdict(&s), REPORT_CLEAN);
        s.ids_checked = 0;
        s.untracked = 400;
        assert_int_equal(report_verdict(&s), REPORT_CLEAN);
        assert_true(report_mostly_untracked(&s));
        s.untracked = 200;
        assert_false(report_mostly_untracked(&s));
        s.coverage_gaps = 1;
        assert_int_equal(report_verdict(&s), REPORT_ANOMALIES);
        assert_int_equal(report_anomaly_total(&s), 1);
        s.coverage_gaps = 0;
        s.records = s.untracked = 0;
        s.anomalies[DEDUP_KIND_MALFORMED] = 1;
        assert_int_equal(report_verdict(&s), REPORT_ANOMALIES);
        assert_int_equal(report_verdict_merge(REPORT_CLEAN,
                                              REPORT_NOT_AUDITED),
                         REPORT_NOT_AUDITED);
        assert_int_equal(report_verdict_merge(REPORT_ANOMALIES,
                                              REPORT_NOT_AUDITED),
                         REPORT_ANOMALIES);
        assert_string_equal(report_verdict_name(REPORT_CLEAN), "clean");
        assert_string_equal(report_verdict_name(REPORT_ANOMALIES),
                            "anomalies");
}

/* The kcat commands: the records, the first copies, quoting, and none
 * for a coverage gap (its offsets are gone). */
static void test_report_kcat(void **state)
{
        struct ledger_anomaly a;
        char cmd[REPORT_KCAT_MAX];

        (void)state;
        memset(&a, 0, sizeof(a));
        a.topic = "orders";
        a.partition = 2;
        a.kind = "duplicate";
        a.offset_lo = 10;
        a.offset_hi = 12;
        a.first_offset = 4;
        a.first_partition = -1;
        a.count = 3;
        assert_int_equal(report_kcat_format(&a, "b1:9092,b2:9092", 0, cmd,
                                            sizeof(cmd)),
                         0);
        assert_string_equal(cmd, "kcat -C -b b1:9092,b2:9092 -t orders -p 2 "
                                 "-o 10 -c 3 -e -J");
        assert_int_equal(report_kcat_format(&a, NULL, 1, cmd, sizeof(cmd)), 0);
        assert_string_equal(cmd, "kcat -C -b BROKER -t orders -p 2 -o 4 -c 3 "
                                 "-e -J");
        a.kind = "redelivered";
        a.first_partition = 0;
        a.first_offset_hi = 5;
        assert_int_equal(report_kcat_format(&a, "h:1", 1, cmd, sizeof(cmd)),
                         0);
        assert_string_equal(cmd, "kcat -C -b h:1 -t orders -p 0 -o 4 -c 2 "
                                 "-e -J");
        a.first_partition = -1; /* a live event: unknown */
        assert_int_equal(report_kcat_format(&a, "h:1", 1, cmd, sizeof(cmd)),
                         -1);
        assert_string_equal(cmd, "");
        assert_int_equal(report_kcat_format(&a, "it's here", 0, cmd,
                                            sizeof(cmd)),
                         0);
        assert_string_equal(cmd, "kcat -C -b 'it'\\''s here' -t orders -p 2 "
                                 "-o 10 -c 3 -e -J");
        a.kind = "coverage";
        assert_int_equal(report_kcat_format(&a, "h:1", 0, cmd, sizeof(cmd)),
                         -1);
        assert_int_equal(report_kcat_format(&a, "h:1", 0, cmd, 10), -1);
        a.kind = "gap";
        assert_int_equal(report_kcat_format(&a, "h:1", 0, cmd, 10), -1);
        assert_string_equal(cmd, "");
}

/* /api/v1/group: 404 without --group; with a group in the view, this
 * member's partitions and the members as listed (then the view is put
 * back as it was). */
static void test_group(void **state)
{
        struct fx *fx = *state;
        struct status_view v, keep;
        struct status_group *g;
        json_t *j, *m, *a;

        j = get_json(fx->port, "/api/v1/group", 404);
        assert_non_null(strstr(json_string_value(json_object_get(j, "error")),
                               "group mode is off"));
        json_decref(j);

        assert_int_equal(status_read(fx->st, &keep), 0);
        assert_int_equal(status_read(fx->st, &v), 0);
        v.parts[1].owned = 1;
        g = v.group = calloc(1, sizeof(*g));
        assert_non_null(g);
        g->group = strdup("g1");
        g->member = strdup("a");
        g->txn_id = strdup("eosaudit-g1-a");
        g->state = strdup("Stable");
        g->listed_ms = 1234;
        g->members = calloc(1, sizeof(*g->members));
        g->nmembers = 1;
        g->members[0].member_id = strdup("rdkafka-1");
        g->members[0].self = 1;
        g->members[0].parts = calloc(1, sizeof(*g->members[0].parts));
        g->members[0].nparts = 1;
        g->members[0].parts[0].topic = strdup(T_PLAIN);
        g->members[0].parts[0].partition = 1;
        assert_int_equal(status_publish(fx->st, &v), 0);
        status_view_release(&v);

        j = get_json(fx->port, "/api/v1/group", 200);
        assert_string_equal(json_string_value(json_object_get(j, "group")),
                            "g1");
        assert_string_equal(json_string_value(json_object_get(j, "member")),
                            "a");
        assert_true(json_is_null(json_object_get(j, "instance_id")));
        assert_int_equal(jint(j, "listed_ms"), 1234);
        a = json_object_get(j, "owned");
        assert_int_equal(json_array_size(a), 1);
        assert_int_equal(jint(json_array_get(a, 0), "partition"), 1);
        assert_int_equal(jint(json_array_get(a, 0), "next_offset"), 4);
        m = json_array_get(json_object_get(j, "members"), 0);
        assert_string_equal(json_string_value(json_object_get(m, "member_id")),
                            "rdkafka-1");
        assert_true(json_is_true(json_object_get(m, "self")));
        a = json_object_get(m, "assignment");
        assert_int_equal(json_array_size(a), 1);
        assert_string_equal(
            json_string_value(json_object_get(json_array_get(a, 0), "topic")),
            T_PLAIN);
        json_decref(j);
        /* It takes no parameters: one given is a 400, as elsewhere. */
        j = get_json(fx->port, "/api/v1/group?topic=x", 400);
        assert_non_null(strstr(json_string_value(json_object_get(j, "error")),
                               "unknown parameter 'topic'"));
        json_decref(j);

        assert_int_equal(status_publish(fx->st, &keep), 0);
        status_view_release(&keep);
}

#define T(f) cmocka_unit_test(f)

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_healthz_readyz),
            T(test_summary),
            T(test_anomalies),
            T(test_anomalies_redelivered),
            T(test_ids),
            T(test_producers_and_partitions),
            T(test_metrics),
            T(test_history),
            T(test_report_text),
            T(test_report_verdict),
            T(test_report_kcat),
            T(test_group),
        };

        /* libmicrohttpd's words on refused requests are expected here. */
        log_set_level(LOG_ERROR);
        return cmocka_run_group_tests(tests, fx_setup, fx_teardown);
}
