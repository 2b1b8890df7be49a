/*
 * test_http_page.c - the embedded page against http/index.html, the
 * pure query parser, and the readiness and lag the endpoints show.  The
 * fixture (http_fixture.h) is shared with test_http.c.
 */
#include "http_fixture.h"

/* ------------------------------------------------------------------ */
/* The page and the pure parsers                                       */
/* ------------------------------------------------------------------ */

/* The source of the page, next to this file's directory. */
static char *page_source(size_t *len)
{
        char path[512];
        const char *slash = strrchr(__FILE__, '/');
        FILE *f;
        char *buf;
        long n;

        snprintf(path, sizeof(path), "%.*s../http/index.html",
                 slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__);
        f = fopen(path, "rb");
        if (!f)
                fail_msg("cannot open %s", path);
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        n = ftell(f);
        assert_true(n > 0);
        rewind(f);
        buf = malloc((size_t)n);
        assert_non_null(buf);
        assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
        fclose(f);
        *len = (size_t)n;
        return buf;
}

static void test_page(void **state)
{
        struct fx *fx = *state;
        struct resp r;
        char type[64], csp[512], want[128];
        size_t len;
        int k;
        char *src = page_source(&len);

        req(fx->port, "GET", "/", NULL, &r);
        assert_int_equal(r.status, 200);
        assert_non_null(resp_header(&r, "Content-Type", type, sizeof(type)));
        assert_string_equal(type, "text/html; charset=utf-8");
        assert_non_null(
            resp_header(&r, "Content-Security-Policy", csp, sizeof(csp)));
        assert_non_null(strstr(csp, "connect-src 'self'"));
        /* The page served is http/index.html, byte for byte (the build
         * embeds it: see http/embed.sh). */
        assert_int_equal(r.body_len, len);
        assert_memory_equal(r.body, src, len);
        free(src);
        /* What the browser test reads. */
        assert_non_null(strstr(r.body, "id=\"chart\""));
        assert_non_null(strstr(r.body, "id=\"anomalies-table\""));
        assert_non_null(strstr(r.body, "data-field=\"records_total\""));
        /* Every kind has its count and its filter choice. */
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++) {
                const char *name = dedup_kind_name((enum dedup_kind)k);
                snprintf(want, sizeof(want), "data-field=\"anomalies.%s\"",
                         name);
                if (!strstr(r.body, want))
                        fail_msg("the page has no %s", want);
                snprintf(want, sizeof(want), "<option value=\"%s\">", name);
                if (!strstr(r.body, want))
                        fail_msg("the page has no %s", want);
        }
        assert_non_null(strstr(r.body, "data-field=\"ids_checked\""));
        assert_non_null(strstr(r.body, "data-field=\"window.ids\""));
        resp_free(&r);
}

static void test_query_parse(void **state)
{
        static const char a[] = "topic=a%2Bb+c&&kind=gap&producer=%ff%01x&"
                                "since=12&limit=1000&cursor=7&";
        struct http_query q;
        char err[256], cur[1200];
        size_t n;

        (void)state;
        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES, "", 0, err,
                                          sizeof(err)),
                         0);
        assert_null(q.topic);
        assert_int_equal(q.limit, HTTP_ANOMALIES_LIMIT_DEFAULT);
        assert_int_equal(q.since_ms, -1);
        assert_int_equal(q.cursor, -1);
        http_query_release(&q);

        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES, a,
                                          sizeof(a) - 1, err, sizeof(err)),
                         0);
        assert_string_equal(q.topic, "a+b c");
        assert_string_equal(q.kind, "gap");
        assert_int_equal(q.producer_len, 3);
        assert_memory_equal(q.producer, "\xff\x01x", 3);
        assert_int_equal(q.since_ms, 12);
        assert_int_equal(q.limit, 1000);
        assert_int_equal(q.cursor, 7);
        http_query_release(&q);

        /* Empty strings mean "any". */
        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES,
                                          "topic=&kind=&producer", 21, err,
                                          sizeof(err)),
                         0);
        assert_null(q.topic);
        assert_null(q.kind);
        assert_null(q.producer);
        http_query_release(&q);

        /* The producers cursor round-trips any bytes. */
        n = http_cursor_format(cur, sizeof(cur), T_ODD, 12345, PBIN,
                               sizeof(PBIN) - 1);
        assert_true(n > 0);
        memmove(cur + 7, cur, n + 1);
        memcpy(cur, "cursor=", 7);
        assert_int_equal(http_query_parse(&q, HTTP_EP_PRODUCERS, cur, n + 7,
                                          err, sizeof(err)),
                         0);
        assert_string_equal(q.after.topic, T_ODD);
        assert_int_equal(q.after.partition, 12345);
        assert_int_equal(q.after.producer_len, sizeof(PBIN) - 1);
        assert_memory_equal(q.after.producer, PBIN, sizeof(PBIN) - 1);
        assert_int_equal(q.limit, HTTP_PRODUCERS_LIMIT_DEFAULT);
        http_query_release(&q);
        assert_int_equal(http_cursor_format(cur, 8, T_ODD, 1, PBIN, 3), 0);

        /* Errors say which parameter. */
        assert_int_equal(http_query_parse(&q, HTTP_EP_PARTITIONS, "kind=gap",
                                          8, err, sizeof(err)),
                         -1);
        assert_string_equal(err, "unknown parameter 'kind'");
        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES, "limit=0", 7,
                                          err, sizeof(err)),
                         -1);
        assert_string_equal(err, "limit must be a number from 1 to 1000");
        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES, "since=-1", 8,
                                          err, sizeof(err)),
                         -1);
        assert_string_equal(err, "since must be milliseconds since the "
                                 "epoch (a number from 0 to "
                                 "9223372036854775807)");
        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES, "cursor=0", 8,
                                          err, sizeof(err)),
                         -1);
        assert_string_equal(err, "cursor must be an anomaly id (a number "
                                 "from 1 to 9223372036854775807)");
        /* The kinds a filter takes, every one of them. */
        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES, "kind=dup", 8,
                                          err, sizeof(err)),
                         -1);
        assert_string_equal(err,
                            "unknown kind 'dup' (duplicate, gap, "
                            "out_of_order, fenced, malformed, "
                            "redelivered, torn, aborted_read, gap_unknown, "
                            "truncated or coverage)");
        /* A log truncated under the audit (docs/RUNBOOK.md). */
        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES,
                                          "kind=truncated", 14, err,
                                          sizeof(err)),
                         0);
        assert_string_equal(q.kind, "truncated");
        http_query_release(&q);
        assert_int_equal(http_query_parse(&q, HTTP_EP_ANOMALIES,
                                          "kind=redelivered", 16, err,
                                          sizeof(err)),
                         0);
        assert_string_equal(q.kind, "redelivered");
        http_query_release(&q);
}

/* The readiness and lag that /readyz, /metrics and the summary show
 * (auditor/status.c), without a server. */
static void test_status_ready_lag(void **state)
{
        static const char *const one[] = {T_PLAIN};
        struct status_view v, got;
        const char *why[8];
        struct status *st = status_new();

        (void)state;
        assert_non_null(st);
        assert_null(status_view_get(NULL, &got));
        assert_null(status_view_get(st, &got));
        assert_null(got.parts);
        assert_int_equal(status_ready_reasons(NULL, why, 8), 1);
        assert_string_equal(why[0], "the audit has not started yet");
        assert_int_equal(status_topic_lag(NULL, NULL), -1);

        assert_int_equal(status_view_init(&v, one, 1, 3), 0);
        assert_int_equal(status_ready_reasons(&v, why, 8), 3);
        assert_string_equal(why[0], "the ledger is not open");
        assert_string_equal(why[1],
                            "no partition is assigned to the consumer");
        assert_string_equal(why[2], "no broker is up");
        assert_int_equal(status_ready_reasons(&v, why, 1), 1);
        v.ledger_open = v.assigned = v.brokers_up = 1;
        assert_int_equal(status_ready_reasons(&v, why, 8), 0);
        v.ledger_paused = 1;
        assert_int_equal(status_ready_reasons(&v, why, 8), 1);
        assert_string_equal(why[0], "ledger commits are failing: the "
                                    "audit is paused");

        /* Unknown, behind, ahead of a stale high watermark (0, not < 0). */
        assert_int_equal(status_part_lag(&v.parts[0]), -1);
        assert_int_equal(status_topic_lag(&v, NULL), -1);
        v.parts[0].topic = strdup(T_PLAIN);
        v.parts[0].next_offset = 7;
        v.parts[0].high_watermark = 10;
        v.parts[1].topic = strdup(T_ODD);
        v.parts[1].next_offset = 1;
        v.parts[1].high_watermark = 5;
        v.parts[2].topic = strdup(T_PLAIN);
        v.parts[2].next_offset = 9;
        v.parts[2].high_watermark = 8;
        assert_int_equal(status_part_lag(&v.parts[0]), 3);
        assert_int_equal(status_part_lag(&v.parts[2]), 0);
        assert_int_equal(status_topic_lag(&v, T_PLAIN), 3);
        assert_int_equal(status_topic_lag(&v, T_ODD), 4);
        assert_int_equal(status_topic_lag(&v, NULL), 7);
        assert_int_equal(status_topic_lag(&v, "other"), -1);

        assert_int_equal(status_publish(st, &v), 0);
        assert_ptr_equal(status_view_get(st, &got), &got);
        assert_int_equal(status_topic_lag(&got, NULL), 7);
        status_view_release(&got);
        status_view_release(&v);
        status_free(st);
}

#define T(f) cmocka_unit_test(f)

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_query_parse),
            T(test_status_ready_lag),
            T(test_page),
        };

        /* libmicrohttpd's words on refused requests are expected here. */
        log_set_level(LOG_ERROR);
        return cmocka_run_group_tests(tests, fx_setup, fx_teardown);
}
