/*
 * test_flow_obs.c - what the flow audit shows beyond its counts: the
 * end-to-end latency histogram and the processor's lag on /metrics and
 * /api/v1/flows, the verdict of a flow's sinks (judged by lineage) in
 * report_summary_json(), /api/v1/summary and report_verdict_topics()
 * alike, and a ledger whose flow state predates the latency sum.
 *
 * The ledger is written as the audit writes it: the lineage engine
 * attached by ledger_flow_load(), ledger_commit().  Topic "out" is the
 * sink (no eos.* headers of its own: its records are judged by lineage),
 * "in" the source with two partitions.
 */
#include "http_fixture.h"

#include <sqlite3.h>

#include "../auditor/ledger/ledger_flow.h"
#include "../auditor/report/report_flow.h"

struct ofx {
        char dir[64];
        char db[96];
        struct ledger_part parts[3];
        struct status *st;
        struct http_server *hs;
        uint16_t port;
};

static const char *const flow_topics[] = {"out", "in"};

/* Source records a, b (partition 0) and c (1) at time 1000; sink copies
 * of a at 1040 (40 ms) and of b at 1003 (3 ms); then the processor's
 * frontier makes all three due: a and b delivered, c lost (bad = 1).
 * Without bad, c gets its copy at 1000 + 2500 and all are delivered. */
static void flow_fill(struct ofx *fx, int bad)
{
        struct ledger *lg;
        struct dedup_tracker *tr;
        struct dedup_flow *fl;
        struct dedup_config dc;
        struct dedup_flow_config fc;
        char err[256];
        uint32_t i;

        for (i = 0; i < 3; i++) {
                fx->parts[i].topic = i ? "in" : "out";
                fx->parts[i].partition = i ? (int32_t)i - 1 : 0;
                fx->parts[i].part = i;
                fx->parts[i].next_offset = 0;
                fx->parts[i].coverage_lo = fx->parts[i].coverage_hi = -1;
        }
        assert_int_equal(ledger_open(&lg, fx->db, err, sizeof(err)), 0);
        dedup_config_defaults(&dc);
        tr = dedup_tracker_new(&dc);
        assert_non_null(tr);
        for (i = 0; i < 3; i++)
                assert_int_equal(dedup_tracker_part_add(tr, i, 0), 0);
        dedup_flow_config_defaults(&fc);
        fc.by_frontier = 1;
        fl = dedup_flow_new(&fc);
        assert_non_null(fl);
        assert_int_equal(ledger_flow_load(lg, fl, fx->parts, 3, "exactly-one",
                                          err, sizeof(err)),
                         0);
        assert_int_equal(dedup_flow_source(fl, 1, 0, 1000, "a", 1), 0);
        assert_int_equal(dedup_flow_source(fl, 1, 1, 1000, "b", 1), 0);
        assert_int_equal(dedup_flow_source(fl, 2, 0, 1000, "c", 1), 0);
        assert_int_equal(dedup_flow_sink(fl, 0, 0, 1040, "a", 1), 0);
        assert_int_equal(dedup_flow_sink(fl, 0, 1, 1003, "b", 1), 0);
        if (!bad)
                assert_int_equal(dedup_flow_sink(fl, 0, 2, 3500, "c", 1), 0);
        dedup_flow_frontier(fl, 1, 2);
        dedup_flow_frontier(fl, 2, 1);
        for (i = 0; i < 3; i++) {
                fx->parts[i].next_offset = i == 1 ? 2 : i ? 1 : 3 - bad;
                fx->parts[i].dirty = 1;
        }
        assert_int_equal(ledger_commit(lg, tr, fx->parts, 3, NULL, err,
                                       sizeof(err)),
                         0);
        ledger_close(lg);
        dedup_tracker_free(tr);
        dedup_flow_free(fl);
}

static void server_up(struct ofx *fx, int64_t lag)
{
        struct status_view v;
        struct http_conf c;
        char err[512];

        fx->st = status_new();
        assert_non_null(fx->st);
        assert_int_equal(status_view_init(&v, flow_topics, 2, 0), 0);
        /* status_view_init: no lag known until the audit says so */
        assert_int_equal(v.flow_lag, -1);
        v.started_ms = 1000;
        v.updated_ms = 2000;
        v.ledger_open = v.assigned = v.brokers_up = 1;
        v.flow_lag = lag;
        assert_int_equal(status_publish(fx->st, &v), 0);
        status_view_release(&v);
        http_conf_defaults(&c);
        c.listen = "127.0.0.1:0";
        c.db_path = fx->db;
        c.topics = flow_topics;
        c.topic_cnt = 2;
        c.flow_sinks = 1;
        c.status = fx->st;
        c.version = "9.9.9-test";
        if (http_start(&fx->hs, &c, err, sizeof(err)))
                fail_msg("http_start: %s", err);
        fx->port = http_port(fx->hs);
}

static int ofx_setup(void **state)
{
        struct ofx *fx = calloc(1, sizeof(*fx));

        assert_non_null(fx);
        snprintf(fx->dir, sizeof(fx->dir), "/tmp/eosaudit-flowobs-XXXXXX");
        assert_non_null(mkdtemp(fx->dir));
        snprintf(fx->db, sizeof(fx->db), "%s/ledger.db", fx->dir);
        *state = fx;
        return 0;
}

static int ofx_teardown(void **state)
{
        struct ofx *fx = *state;

        http_stop(fx->hs);
        status_free(fx->st);
        ledger_remove(fx->db);
        rmdir(fx->dir);
        free(fx);
        return 0;
}

/* /metrics: the histogram is cumulative, in seconds, with le bounds as
 * the engine's (inclusive), _count the records measured, _sum theirs;
 * the lag is the live view's. */
static void test_metrics_histogram_and_lag(void **state)
{
        struct ofx *fx = *state;
        struct resp r;

        flow_fill(fx, 1);
        server_up(fx, 1234);
        req(fx->port, "GET", "/metrics", NULL, &r);
        assert_int_equal(r.status, 200);
        assert_line(r.body, "# TYPE eosaudit_flow_latency_seconds histogram");
        assert_line(r.body,
                    "eosaudit_flow_latency_seconds_bucket{le=\"0.002\"} 0");
        assert_line(r.body,
                    "eosaudit_flow_latency_seconds_bucket{le=\"0.005\"} 1");
        assert_line(r.body,
                    "eosaudit_flow_latency_seconds_bucket{le=\"0.02\"} 1");
        assert_line(r.body,
                    "eosaudit_flow_latency_seconds_bucket{le=\"0.05\"} 2");
        assert_line(r.body,
                    "eosaudit_flow_latency_seconds_bucket{le=\"600\"} 2");
        assert_line(r.body,
                    "eosaudit_flow_latency_seconds_bucket{le=\"+Inf\"} 2");
        assert_line(r.body, "eosaudit_flow_latency_seconds_sum 0.043");
        assert_line(r.body, "eosaudit_flow_latency_seconds_count 2");
        assert_line(r.body, "eosaudit_flow_latency_max_seconds 0.040");
        /* Outcomes move both ways: no counter, and no gauge named
         * _total either (promtool check metrics refuses it). */
        assert_line(r.body, "# TYPE eosaudit_flow_records_total untyped");
        assert_line(r.body,
                    "eosaudit_flow_records_total{outcome=\"delivered\"} 2");
        assert_line(r.body, "eosaudit_flow_records_total{outcome=\"lost\"} 1");
        assert_line(r.body,
                    "# TYPE eosaudit_flow_processor_lag_records gauge");
        assert_line(r.body, "eosaudit_flow_processor_lag_records 1234");
        /* The source is reported as a topic of its own. */
        assert_non_null(
            strstr(r.body, "eosaudit_records_total{topic=\"in\"}"));
        resp_free(&r);
}

/* No group: no lag series at all (not a 0 that reads as "caught up"). */
static void test_metrics_no_lag(void **state)
{
        struct ofx *fx = *state;
        struct resp r;
        json_t *j;

        flow_fill(fx, 0);
        server_up(fx, -1);
        req(fx->port, "GET", "/metrics", NULL, &r);
        assert_int_equal(r.status, 200);
        assert_null(strstr(r.body, "eosaudit_flow_processor_lag_records"));
        assert_line(r.body,
                    "eosaudit_flow_latency_seconds_bucket{le=\"2\"} 2");
        assert_line(r.body,
                    "eosaudit_flow_latency_seconds_bucket{le=\"5\"} 3");
        assert_line(r.body, "eosaudit_flow_latency_seconds_count 3");
        resp_free(&r);
        j = get_json(fx->port, "/api/v1/flows", 200);
        assert_true(json_is_null(json_object_get(j, "processor_lag")));
        json_decref(j);
}

/* One rule for the verdict: report_summary_json() (scan --json),
 * /api/v1/summary and report_verdict_topics() (scan's exit status). */
static void verdict_check(struct ofx *fx, const char *want)
{
        struct ledger *lg;
        enum report_verdict v;
        json_t *j, *t;
        char err[256];

        assert_int_equal(ledger_open_reader(&lg, fx->db, err, sizeof(err)), 0);
        /* The sink alone: the source here carries no eos.* headers, so
         * its own verdict is not_audited (the flow does not change a
         * source's verdict). */
        j = report_summary_json(lg, flow_topics, 2,
                                &(struct report_opts){.sinks = 1}, err,
                                sizeof(err));
        assert_non_null(j);
        t = json_array_get(json_object_get(j, "topics"), 1);
        assert_string_equal(json_string_value(json_object_get(t, "verdict")),
                            "not_audited");
        assert_string_equal(json_string_value(json_object_get(t, "judged_by")),
                            "sequence");
        json_decref(j);
        j = report_summary_json(lg, flow_topics, 1,
                                &(struct report_opts){.sinks = 1}, err,
                                sizeof(err));
        assert_non_null(j);
        assert_string_equal(json_string_value(json_object_get(j, "verdict")),
                            want);
        t = json_array_get(json_object_get(j, "topics"), 0);
        assert_string_equal(json_string_value(json_object_get(t, "judged_by")),
                            "lineage");
        assert_string_equal(json_string_value(json_object_get(t, "verdict")),
                            want);
        assert_int_equal(json_array_size(json_object_get(t, "warnings")), 0);
        assert_int_equal(report_verdict_topics(lg, flow_topics, 1, 1, &v, err,
                                               sizeof(err)),
                         0);
        assert_string_equal(report_verdict_name(v), want);
        json_decref(j);
        /* The human report says the same of the sink. */
        {
                char *text = NULL, line[64];
                size_t len;
                FILE *f = open_memstream(&text, &len);

                assert_non_null(f);
                assert_int_equal(report_summary_print(f, lg, flow_topics, 1,
                                                      &(struct report_opts){
                                                          .sinks = 1},
                                                      err, sizeof(err)),
                                 0);
                fclose(f);
                assert_non_null(strstr(text, "topic out: 1 partitions (a "
                                             "flow's sink: judged by "
                                             "lineage"));
                snprintf(line, sizeof(line), "  verdict        %s\n",
                         strcmp(want, "clean") ? "ANOMALIES FOUND" : "clean");
                assert_non_null(strstr(text, line));
                free(text);
        }
        /* Without the flow rule the sink is not audited: what scan --json
         * said before. */
        j = report_summary_json(lg, flow_topics, 1,
                                &(struct report_opts){.examples = 0}, err,
                                sizeof(err));
        assert_non_null(j);
        assert_string_equal(json_string_value(json_object_get(j, "verdict")),
                            "not_audited");
        assert_null(
            json_object_get(json_array_get(json_object_get(j, "topics"), 0),
                            "judged_by"));
        json_decref(j);
        ledger_close(lg);
        /* /api/v1/summary, narrowed to the sink: the same. */
        j = get_json(fx->port, "/api/v1/summary?topic=out", 200);
        assert_string_equal(json_string_value(json_object_get(j, "verdict")),
                            want);
        t = json_array_get(json_object_get(j, "topics"), 0);
        assert_string_equal(json_string_value(json_object_get(t, "judged_by")),
                            "lineage");
        json_decref(j);
        /* ... and narrowed to the source: its own verdict (no eos.*
         * headers here), the flow's not merged in. */
        j = get_json(fx->port, "/api/v1/summary?topic=in", 200);
        assert_string_equal(json_string_value(json_object_get(j, "verdict")),
                            "not_audited");
        json_decref(j);
        /* Both: the source is not audited, whatever the flow says. */
        j = get_json(fx->port, "/api/v1/summary", 200);
        assert_string_equal(json_string_value(json_object_get(j, "verdict")),
                            strcmp(want, "anomalies") ? "not_audited"
                                                      : "anomalies");
        json_decref(j);
}

static void test_verdict_lost(void **state)
{
        struct ofx *fx = *state;

        flow_fill(fx, 1);
        server_up(fx, 0);
        verdict_check(fx, "anomalies");
}

static void test_verdict_clean(void **state)
{
        struct ofx *fx = *state;

        flow_fill(fx, 0);
        server_up(fx, 0);
        verdict_check(fx, "clean");
}

/* A ledger written before the latency sum was stored (its state one
 * number short) still loads, with a sum of 0, and the counts stay. */
/* Drops the last number of every stored flow state (an older, shorter
 * form, or damage). */
static void state_drop_last(const char *path)
{
        sqlite3 *db;

        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        assert_int_equal(
            sqlite3_exec(db,
                         "UPDATE flow_state SET state = rtrim(rtrim(state, "
                         "'0123456789'), ' ')",
                         NULL, NULL, NULL),
            SQLITE_OK);
        sqlite3_close(db);
}

static void test_state_without_sum(void **state)
{
        struct ofx *fx = *state;
        struct ledger_flow_summary s;
        struct ledger *lg;
        struct dedup_flow *fl;
        struct dedup_flow_config fc;
        char err[256];

        flow_fill(fx, 0);
        state_drop_last(fx->db);
        assert_int_equal(ledger_open(&lg, fx->db, err, sizeof(err)), 0);
        assert_int_equal(ledger_flow_summary(lg, &s, err, sizeof(err)), 0);
        assert_int_equal(s.lat_count, 3);
        assert_int_equal(s.lat_sum_ms, 0);
        assert_int_equal(s.lat[5], 1); /* 40 ms: le 0.05 */
        dedup_flow_config_defaults(&fc);
        fl = dedup_flow_new(&fc);
        assert_non_null(fl);
        assert_int_equal(ledger_flow_load(lg, fl, fx->parts, 3, "exactly-one",
                                          err, sizeof(err)),
                         0);
        ledger_close(lg);
        dedup_flow_free(fl);
        /* One number more short: damaged, said so. */
        state_drop_last(fx->db);
        assert_int_equal(ledger_open(&lg, fx->db, err, sizeof(err)), 0);
        assert_int_equal(ledger_flow_summary(lg, &s, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "damaged"));
        ledger_close(lg);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_metrics_histogram_and_lag,
                                            ofx_setup, ofx_teardown),
            cmocka_unit_test_setup_teardown(test_metrics_no_lag, ofx_setup,
                                            ofx_teardown),
            cmocka_unit_test_setup_teardown(test_verdict_lost, ofx_setup,
                                            ofx_teardown),
            cmocka_unit_test_setup_teardown(test_verdict_clean, ofx_setup,
                                            ofx_teardown),
            cmocka_unit_test_setup_teardown(test_state_without_sum, ofx_setup,
                                            ofx_teardown),
        };

        log_set_level(LOG_ERROR);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
