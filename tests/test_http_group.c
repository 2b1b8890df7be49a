/*
 * test_http_group.c - serve --group's group-wide answers over HTTP
 * (http/api_scope.c, the eosaudit_group_* families of /metrics): the
 * default scope is the group, from the published snapshot of the group's
 * state and events topics (auditor/grouprep.h); ?scope=member is the
 * member's ledger, as without --group; scope=group without --group is a
 * 404, an unknown scope a 400, and the group before its topics were read
 * a 503.
 */
#include "http_fixture.h"

#include "../auditor/group/grouprep.h"

/* A state record of topic/partition, as partstate.c writes it. */
static void put_state(struct grouprep *g, const char *topic, int part,
                      long long next, long long records, long long dup,
                      long long gap, long long missing)
{
        json_t *o = json_pack(
            "{s:i, s:s, s:i, s:I, s:i, s:[IIss], s:{s:I, s:I, s:I, s:I, s:I,"
            " s:I, s:{s:I, s:I}}, s:[]}",
            "v", 1, "topic", topic, "partition", part, "next_offset",
            (json_int_t)next, "from_log_start", 1, "fp", (json_int_t)1,
            (json_int_t)2, "00", "01", "counts", "records",
            (json_int_t)records, "untracked", (json_int_t)0, "missing",
            (json_int_t)missing, "recovered", (json_int_t)0, "unknown",
            (json_int_t)0, "ids", (json_int_t)0, "anomalies", "duplicate",
            (json_int_t)dup, "gap", (json_int_t)gap, "pairs");
        char *s, key[300];
        json_t *an;
        int k;

        assert_non_null(o);
        /* Every kind, as partstate_counts_of() requires. */
        an = json_object_get(json_object_get(o, "counts"), "anomalies");
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                if (!json_object_get(an, dedup_kind_name((enum dedup_kind)k)))
                        json_object_set_new(an,
                                            dedup_kind_name(
                                                (enum dedup_kind)k),
                                            json_integer(0));
        s = json_dumps(o, JSON_COMPACT);
        assert_non_null(s);
        snprintf(key, sizeof(key), "%s/%d", topic, part);
        assert_int_equal(grouprep_state(g, key, strlen(key), s, strlen(s)), 0);
        free(s);
        json_decref(o);
}

static void event(struct grouprep *g, int64_t offset, const char *topic,
                  const char *kind, long long count)
{
        json_t *o = json_pack("{s:s, s:i, s:s, s:s, s:i, s:I, s:I, s:I, "
                              "s:I, s:I, s:I, s:I, s:s}",
                              "topic", topic, "partition", 0, "kind", kind,
                              "producer", P1, "epoch", 0, "seq_lo",
                              (json_int_t)1, "seq_hi", (json_int_t)1,
                              "offset_lo", (json_int_t)offset, "offset_hi",
                              (json_int_t)offset, "first_offset",
                              (json_int_t)0, "count", (json_int_t)count,
                              "when_ms", (json_int_t)(5000 + offset), "member",
                              "eosaudit-g1-b");
        char *s = json_dumps(o, JSON_COMPACT);

        assert_non_null(s);
        assert_int_equal(grouprep_event(g, 0, offset, s, strlen(s)), 0);
        free(s);
        json_decref(o);
}

static struct http_server *group_server(struct fx *fx)
{
        struct http_server *hs = NULL;
        struct http_conf c;
        char err[512];

        http_conf_defaults(&c);
        c.listen = "127.0.0.1:0";
        c.db_path = fx->db;
        c.topics = topics;
        c.topic_cnt = 2;
        c.status = fx->st;
        c.group = "g1";
        if (http_start(&hs, &c, err, sizeof(err)))
                fail_msg("http_start: %s", err);
        return hs;
}

static const char *jstr(json_t *j, const char *key)
{
        const char *s = json_string_value(json_object_get(j, key));

        if (!s)
                fail_msg("no string '%s'", key);
        return s;
}

/* Without --group: member scope only. */
static void test_no_group(void **state)
{
        struct fx *fx = *state;
        json_t *j;

        j = get_json(fx->port, "/api/v1/summary", 200);
        assert_string_equal(jstr(j, "scope"), "member");
        assert_int_equal(jint(j, "records_total"),
                         (json_int_t)(fx->sum[0].records +
                                      fx->sum[1].records));
        json_decref(j);
        j = get_json(fx->port, "/api/v1/summary?scope=member", 200);
        assert_string_equal(jstr(j, "scope"), "member");
        json_decref(j);
        j = get_json(fx->port, "/api/v1/anomalies?scope=member", 200);
        assert_string_equal(jstr(j, "scope"), "member");
        json_decref(j);
        j = get_json(fx->port, "/api/v1/summary?scope=group", 404);
        assert_non_null(strstr(jstr(j, "error"), "needs group mode"));
        json_decref(j);
        j = get_json(fx->port, "/api/v1/anomalies?scope=group", 404);
        json_decref(j);
        j = get_json(fx->port, "/api/v1/summary?scope=all", 400);
        assert_non_null(strstr(jstr(j, "error"), "scope must be"));
        json_decref(j);
        j = get_json(fx->port, "/api/v1/partitions?scope=member", 400);
        json_decref(j);
}

static void test_group(void **state)
{
        struct fx *fx = *state;
        struct http_server *hs = group_server(fx);
        uint16_t port = http_port(hs);
        struct grouprep *g = grouprep_new(10);
        struct resp r;
        json_t *j, *t, *a;
        char line[256];

        assert_non_null(g);
        /* Not read yet: a 503 that says so; the member's view stands. */
        j = get_json(port, "/api/v1/summary", 503);
        assert_non_null(strstr(jstr(j, "error"), "not read to their end"));
        json_decref(j);
        j = get_json(port, "/api/v1/summary?scope=member", 200);
        assert_int_equal(jint(j, "records_total"),
                         (json_int_t)(fx->sum[0].records +
                                      fx->sum[1].records));
        json_decref(j);

        assert_int_equal(grouprep_expect(g, T_PLAIN, 0), 0);
        assert_int_equal(grouprep_expect(g, T_PLAIN, 1), 0);
        assert_int_equal(grouprep_expect(g, T_ODD, 0), 0);
        put_state(g, T_PLAIN, 0, 100, 100, 1, 0, 0);
        put_state(g, T_PLAIN, 0, 400, 400, 3, 1, 5); /* the last one counts */
        put_state(g, T_ODD, 0, 50, 50, 0, 2, 7);
        grouprep_high_watermark(g, T_PLAIN, 0, 410);
        event(g, 10, T_PLAIN, "duplicate", 1);
        event(g, 11, T_ODD, "gap", 7);
        event(g, 12, T_PLAIN, "duplicate", 2);
        status_grouprep_publish(fx->st, grouprep_snap_make(g, 777));

        j = get_json(port, "/api/v1/summary", 200);
        assert_string_equal(jstr(j, "scope"), "group");
        assert_int_equal(jint(j, "records_total"), 450);
        assert_int_equal(jint(j, "missing_records"), 12);
        assert_int_equal(json_integer_value(
                             json_object_get(json_object_get(j, "anomalies"),
                                             "duplicate")),
                         3);
        assert_string_equal(jstr(j, "verdict"), "anomalies");
        assert_true(json_is_null(json_object_get(j, "producers")));
        assert_int_equal(jint(j, "lag"), 10);
        t = json_object_get(j, "group");
        keys_are(t, "name,as_of,partitions_with_state,"
                    "partitions_without_state,state_records_read,"
                    "state_records_malformed,event_records_read,"
                    "event_records_malformed,updated_ms,error");
        assert_true(json_is_null(json_object_get(t, "error")));
        assert_int_equal(jint(t, "partitions_with_state"), 2);
        assert_int_equal(jint(t, "state_records_read"), 3);
        assert_int_equal(jint(t, "updated_ms"), 777);
        a = json_object_get(t, "partitions_without_state");
        assert_int_equal(json_array_size(a), 1);
        assert_string_equal(jstr(json_array_get(a, 0), "topic"), T_PLAIN);
        assert_int_equal(jint(json_array_get(a, 0), "partition"), 1);
        t = json_array_get(json_object_get(j, "topics"), 1);
        assert_string_equal(jstr(t, "topic"), T_ODD);
        assert_int_equal(jint(t, "records_total"), 50);
        json_decref(j);
        j = get_json(port, "/api/v1/summary?topic=" T_ODD_Q, 200);
        assert_int_equal(jint(j, "records_total"), 50);
        json_decref(j);
        /* The member's part: its ledger, as without --group. */
        j = get_json(port, "/api/v1/summary?scope=member", 200);
        assert_string_equal(jstr(j, "scope"), "member");
        assert_int_equal(jint(j, "records_total"),
                         (json_int_t)(fx->sum[0].records +
                                      fx->sum[1].records));
        json_decref(j);

        /* The group's events, newest first, a page at a time. */
        j = get_json(port, "/api/v1/anomalies?limit=2", 200);
        assert_string_equal(jstr(j, "scope"), "group");
        a = json_object_get(j, "anomalies");
        assert_int_equal(json_array_size(a), 2);
        assert_int_equal(jint(json_array_get(a, 0), "id"), 12);
        assert_int_equal(jint(json_array_get(a, 0), "count"), 2);
        assert_string_equal(jstr(json_array_get(a, 0), "member"),
                            "eosaudit-g1-b");
        assert_string_equal(jstr(json_array_get(a, 0), "producer"), P1);
        assert_int_equal(jint(json_array_get(a, 1), "id"), 11);
        assert_int_equal(jint(j, "next_cursor"), 11);
        json_decref(j);
        j = get_json(port, "/api/v1/anomalies?limit=2&cursor=11", 200);
        a = json_object_get(j, "anomalies");
        assert_int_equal(json_array_size(a), 1);
        assert_int_equal(jint(json_array_get(a, 0), "id"), 10);
        assert_true(json_is_null(json_object_get(j, "next_cursor")));
        json_decref(j);
        j = get_json(port, "/api/v1/anomalies?kind=gap", 200);
        a = json_object_get(j, "anomalies");
        assert_int_equal(json_array_size(a), 1);
        assert_string_equal(jstr(json_array_get(a, 0), "topic"), T_ODD);
        json_decref(j);
        j = get_json(port, "/api/v1/anomalies?scope=member&limit=1000", 200);
        assert_int_equal(json_array_size(json_object_get(j, "anomalies")),
                         (size_t)fx->anomalies);
        json_decref(j);

        /* /metrics: the member's families from its ledger, unchanged, and
         * the group's in families of their own. */
        req(port, "GET", "/metrics", NULL, &r);
        assert_int_equal(r.status, 200);
        assert_line(r.body,
                    "eosaudit_group_records_total{topic=\"" T_PLAIN "\"} 400");
        assert_line(r.body, "eosaudit_group_records_total{topic=\"" T_ODD_LABEL
                            "\"} 50");
        assert_line(r.body,
                    "eosaudit_group_anomalous_records_total{topic=\"" T_PLAIN
                    "\",kind=\"duplicate\"} 3");
        assert_line(r.body,
                    "eosaudit_group_partitions_with_state{topic=\"" T_PLAIN
                    "\"} 1");
        snprintf(line, sizeof(line),
                 "eosaudit_records_total{topic=\"%s\"} %llu", T_PLAIN,
                 (unsigned long long)fx->sum[0].records);
        assert_line(r.body, line);
        resp_free(&r);
        /* The server without --group has none of them. */
        req(fx->port, "GET", "/metrics", NULL, &r);
        assert_int_equal(r.status, 200);
        assert_null(strstr(r.body, "eosaudit_group_"));
        resp_free(&r);

        http_stop(hs);
        grouprep_free(g);
}

#define T(f) cmocka_unit_test(f)

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_no_group),
            T(test_group),
        };

        log_set_level(LOG_ERROR);
        return cmocka_run_group_tests(tests, fx_setup, fx_teardown);
}
