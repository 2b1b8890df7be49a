/*
 * test_http_errors.c - the HTTP server's errors, methods and limits:
 * 400s, methods, size limits, keep-alive, the bearer token, start-up
 * errors, not ready, the per-address limit, IPv6.  The fixture
 * (http_fixture.h) is shared with test_http.c.
 */
#include "http_fixture.h"

/* ------------------------------------------------------------------ */
/* Errors, methods, limits                                             */
/* ------------------------------------------------------------------ */

static void test_bad_requests(void **state)
{
        static const struct {
                const char *target;
                int status;
        } cases[] = {
            {"/api/v1/anomalies?limit=0", 400},
            {"/api/v1/anomalies?limit=1001", 400},
            {"/api/v1/anomalies?limit=abc", 400},
            {"/api/v1/anomalies?limit=-1", 400},
            {"/api/v1/anomalies?limit=1e3", 400},
            {"/api/v1/anomalies?limit=", 400},
            {"/api/v1/anomalies?limit=1&limit=2", 400},
            {"/api/v1/anomalies?since=yesterday", 400},
            {"/api/v1/anomalies?since=99999999999999999999", 400},
            {"/api/v1/anomalies?kind=expired", 400},
            {"/api/v1/anomalies?kind=Duplicate", 400},
            {"/api/v1/anomalies?kind=redelivered", 200},
            {"/api/v1/anomalies?kind=Redelivered", 400},
            {"/api/v1/anomalies?cursor=0", 400},
            {"/api/v1/anomalies?cursor=12abc", 400},
            {"/api/v1/anomalies?page=2", 400},
            {"/api/v1/anomalies?topic=%zz", 400},
            {"/api/v1/anomalies?topic=%00x", 400},
            {"/api/v1/anomalies?topic=%4", 400},
            {"/api/v1/producers?limit=10001", 400},
            {"/api/v1/producers?cursor=zz", 400},
            {"/api/v1/producers?cursor=6f.1", 400},
            {"/api/v1/producers?since=1", 400},
            {"/api/v1/partitions?limit=5", 400},
            {"/api/v1/summary?kind=gap", 400},
            {"/api/v1/nothing", 404},
            {"/nothing", 404},
            {"/api/v1/anomalies?limit=1000&kind=gap&since=0&cursor=5"
             "&topic=&producer=",
             200},
        };
        struct fx *fx = *state;
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                json_t *j = get_json(fx->port, cases[i].target,
                                     cases[i].status);
                if (cases[i].status != 200)
                        assert_true(
                            json_is_string(json_object_get(j, "error")));
                json_decref(j);
        }
}

static void test_methods(void **state)
{
        static const char *const methods[] = {"POST", "PUT", "DELETE", "PATCH",
                                              "OPTIONS"};
        struct fx *fx = *state;
        struct resp r, g;
        char allow[64], cl[32];
        size_t i;
        static const char post[] = "POST /api/v1/summary HTTP/1.1\r\n"
                                   "Host: 127.0.0.1\r\nContent-Length: 11"
                                   "\r\nConnection: close\r\n\r\n"
                                   "hello=world";

        for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
                req(fx->port, methods[i], "/metrics", NULL, &r);
                assert_int_equal(r.status, 405);
                assert_non_null(
                    resp_header(&r, "Allow", allow, sizeof(allow)));
                assert_string_equal(allow, "GET, HEAD");
                resp_free(&r);
        }
        /* A body is never read. */
        request(fx->port, post, sizeof(post) - 1, &r);
        assert_int_equal(r.status, 405);
        resp_free(&r);
        req(fx->port, "GET", "/healthz", "Content-Length: 4\r\n", &r);
        assert_int_equal(r.status, 413);
        resp_free(&r);

        /* HEAD: the headers of GET, no body. */
        req(fx->port, "GET", "/api/v1/partitions", NULL, &g);
        req(fx->port, "HEAD", "/api/v1/partitions", NULL, &r);
        assert_int_equal(r.status, 200);
        assert_int_equal(r.body_len, 0);
        assert_non_null(resp_header(&r, "Content-Length", cl, sizeof(cl)));
        assert_int_equal(strtoull(cl, NULL, 10), g.body_len);
        resp_free(&r);
        resp_free(&g);
}

static void test_limits(void **state)
{
        struct fx *fx = *state;
        size_t sizes[] = {9000, 100000};
        char *big = malloc(200001);
        struct resp r;
        size_t i;

        assert_non_null(big);
        /* Long request targets: ours (414) up to the connection's memory,
         * libmicrohttpd's (414 too) past it. */
        for (i = 0; i < 2; i++) {
                memcpy(big, "/api/v1/anomalies?topic=", 24);
                memset(big + 24, 'a', sizes[i]);
                big[24 + sizes[i]] = '\0';
                req(fx->port, "GET", big, NULL, &r);
                assert_int_equal(r.status, 414);
                resp_free(&r);
        }
        /* Huge headers: 431. */
        memcpy(big, "X-Big: ", 7);
        memset(big + 7, 'b', 100000);
        memcpy(big + 100007, "\r\n", 3);
        req(fx->port, "GET", "/healthz", big, &r);
        assert_int_equal(r.status, 431);
        resp_free(&r);
        free(big);
        /* Still serving. */
        json_decref(get_json(fx->port, "/healthz", 200));
}

/* Two requests on one connection. */
static void test_keep_alive(void **state)
{
        static const char two[] = "GET /healthz HTTP/1.1\r\n"
                                  "Host: 127.0.0.1\r\n\r\n";
        struct fx *fx = *state;
        struct resp r;
        int fd = conn_open(fx->port), k;

        for (k = 0; k < 2; k++) {
                send_all(fd, two, sizeof(two) - 1);
                assert_int_equal(resp_read(fd, &r, 0), 0);
                assert_int_equal(r.status, 200);
                resp_free(&r);
        }
        close(fd);
}

static void test_auth(void **state)
{
        static const struct {
                const char *path, *header;
                int status;
        } cases[] = {
            {"/metrics", NULL, 401},
            {"/api/v1/summary", "Bearer s3cr3t-Token_4", 401},
            {"/api/v1/summary", "Bearer s3cr3t-Token_422", 401},
            {"/api/v1/summary", "Basic czNjcjN0LVRva2VuXzQy", 401},
            {"/readyz", "Bearer", 401},
            {"/api/v1/summary", "Bearer s3cr3t-Token_42", 200},
            {"/metrics", "bearer s3cr3t-Token_42", 200},
            /* Liveness and the page (it holds no data) stay open. */
            {"/healthz", NULL, 200},
            {"/", NULL, 200},
        };
        struct fx *fx = *state;
        struct http_server *hs = server_start(fx->db, fx->st, fx->token);
        struct resp r;
        char hdr[128], www[64];
        size_t i;

        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                snprintf(hdr, sizeof(hdr), "Authorization: %s\r\n",
                         cases[i].header ? cases[i].header : "");
                req(http_port(hs), "GET", cases[i].path,
                    cases[i].header ? hdr : NULL, &r);
                if (r.status != cases[i].status)
                        fail_msg("%s with '%s': %d, want %d", cases[i].path,
                                 cases[i].header ? cases[i].header : "",
                                 r.status, cases[i].status);
                if (r.status == 401) {
                        assert_non_null(resp_header(&r, "WWW-Authenticate",
                                                    www, sizeof(www)));
                        assert_string_equal(www, "Bearer realm=\"eosaudit\"");
                }
                resp_free(&r);
        }
        http_stop(hs);
}

static void test_start_errors(void **state)
{
        static const char *const bad_listen[] = {
            "127.0.0.1",      ":",
            "[::1]80",        "127.0.0.1:",
            "1.2.3.4:65536",  "::1:80",
            "example.com:80", "127.0.0.1:-1",
            "[::1:80",        "127.0.0.1:08x",
            "[]:80",          "",
        };
        static const char *const good_listen[] = {
            "127.0.0.1:8080", "0.0.0.0:0", "[::1]:0", "[::]:65535",
            "localhost:1",    ":80",       ":0",
        };
        struct fx *fx = *state;
        struct sockaddr_storage ss;
        struct http_server *hs = NULL;
        struct http_conf c;
        char err[512], path[192];
        size_t len, i;
        FILE *f;

        for (i = 0; i < sizeof(bad_listen) / sizeof(bad_listen[0]); i++) {
                err[0] = '\0';
                if (!http_listen_parse(bad_listen[i], &ss, &len, err,
                                       sizeof(err)))
                        fail_msg("'%s' accepted", bad_listen[i]);
                assert_non_null(strstr(err, "invalid listen address"));
        }
        for (i = 0; i < sizeof(good_listen) / sizeof(good_listen[0]); i++)
                if (http_listen_parse(good_listen[i], &ss, &len, err,
                                      sizeof(err)))
                        fail_msg("'%s': %s", good_listen[i], err);

        http_conf_defaults(&c);
        c.db_path = fx->db;
        /* The port in use. */
        snprintf(path, sizeof(path), "127.0.0.1:%u", (unsigned)fx->port);
        c.listen = path;
        assert_int_equal(http_start(&hs, &c, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "cannot listen on 127.0.0.1:"));
        /* An empty token file. */
        c.listen = "127.0.0.1:0";
        snprintf(path, sizeof(path), "%s/empty", fx->dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("  \n", f);
        fclose(f);
        c.token_file = path;
        assert_int_equal(http_start(&hs, &c, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "no token"));
        unlink(path);
        c.token_file = "/nonexistent/token";
        assert_int_equal(http_start(&hs, &c, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "cannot read token file"));
        /* TLS needs both halves, and a key that parses. */
        c.token_file = NULL;
        c.tls_cert_file = fx->token;
        assert_int_equal(http_start(&hs, &c, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "both"));
        c.tls_key_file = fx->token;
        assert_int_equal(http_start(&hs, &c, err, sizeof(err)), -1);
        /* Still serving on the fixture's port after all that. */
        json_decref(get_json(fx->port, "/healthz", 200));
}

/* Without a ledger and a status: alive, not ready, 503 for data. */
static void test_not_ready(void **state)
{
        struct fx *fx = *state;
        char db[192];
        struct http_server *hs;
        struct resp r;
        json_t *j;

        snprintf(db, sizeof(db), "%s/none.db", fx->dir);
        hs = server_start(db, NULL, NULL);
        json_decref(get_json(http_port(hs), "/healthz", 200));
        j = get_json(http_port(hs), "/readyz", 503);
        assert_true(json_is_false(json_object_get(j, "ready")));
        assert_non_null(strstr(json_string_value(json_object_get(j, "error")),
                               "not started"));
        json_decref(j);
        j = get_json(http_port(hs), "/api/v1/summary", 503);
        assert_non_null(strstr(json_string_value(json_object_get(j, "error")),
                               "ledger not available"));
        json_decref(j);
        req(http_port(hs), "GET", "/metrics", NULL, &r);
        assert_int_equal(r.status, 200);
        /* Prometheus's own up{} says whether the process answers. */
        assert_null(strstr(r.body, "eosaudit_up"));
        assert_line(r.body, "eosaudit_ready 0");
        assert_line(r.body, "eosaudit_ledger_readable 0");
        assert_null(strstr(r.body, "eosaudit_records_total"));
        resp_free(&r);
        http_stop(hs);
}

/* Past the per-address limit, a connection is closed unanswered; the
 * server serves again once the others are gone. */
static void test_per_ip_limit(void **state)
{
        struct fx *fx = *state;
        struct http_server *hs = NULL;
        struct http_conf c;
        struct resp r;
        char err[512];
        int fds[4], fd;
        size_t i;

        http_conf_defaults(&c);
        c.listen = "127.0.0.1:0";
        c.db_path = fx->db;
        c.threads = 1;
        c.per_ip_limit = 4;
        if (http_start(&hs, &c, err, sizeof(err)))
                fail_msg("http_start: %s", err);
        for (i = 0; i < 4; i++)
                fds[i] = conn_open(http_port(hs));
        usleep(200 * 1000); /* let the server accept them */
        fd = conn_open(http_port(hs));
        send_all(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 34);
        assert_int_equal(resp_read(fd, &r, 0), -1);
        close(fd);
        for (i = 0; i < 4; i++)
                close(fds[i]);
        usleep(200 * 1000);
        json_decref(get_json(http_port(hs), "/healthz", 200));
        http_stop(hs);
}

static void test_ipv6(void **state)
{
        struct http_server *hs = NULL;
        struct http_conf c;
        struct fx *fx = *state;
        char err[512];
        int fd = socket(AF_INET6, SOCK_STREAM, 0);

        if (fd < 0)
                skip();
        close(fd);
        http_conf_defaults(&c);
        c.listen = "[::1]:0";
        c.db_path = fx->db;
        if (http_start(&hs, &c, err, sizeof(err))) {
                print_message("no IPv6 loopback here: %s\n", err);
                skip();
        }
        assert_non_null(strstr(http_url(hs), "http://[::1]:"));
        http_stop(hs);
}

#define T(f) cmocka_unit_test(f)

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_bad_requests), T(test_methods),      T(test_limits),
            T(test_keep_alive),   T(test_auth),         T(test_start_errors),
            T(test_not_ready),    T(test_per_ip_limit), T(test_ipv6),
        };

        /* libmicrohttpd's words on refused requests are expected here. */
        log_set_level(LOG_ERROR);
        return cmocka_run_group_tests(tests, fx_setup, fx_teardown);
}
