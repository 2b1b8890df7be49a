/*
 * test_http_slow.c - slow clients ("slowloris") against the HTTP server:
 * clients that send their request a byte at a time must not keep the
 * others out.  libmicrohttpd's timeout only notices a connection that
 * sends nothing, so before the header deadline (http_conf.header_timeout_s)
 * eight trickling clients held a server of eight connections for as long
 * as they liked, and a normal request got no answer.
 *
 * Every server listens on 127.0.0.1 with a port the kernel picks and
 * needs no ledger (only /healthz is asked for).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "../http/http.h"

#define NSLOW 8

static const char get_healthz[] = "GET /healthz HTTP/1.1\r\n"
                                  "Host: 127.0.0.1\r\n\r\n";

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct http_server *server_start(unsigned conn_limit,
                                        unsigned header_timeout_s)
{
        struct http_server *hs = NULL;
        struct http_conf c;
        char err[512];

        http_conf_defaults(&c);
        c.listen = "127.0.0.1:0";
        c.db_path = "/nonexistent/eosaudit-test.db";
        c.threads = 1;
        c.conn_limit = conn_limit;
        c.per_ip_limit = conn_limit;
        if (header_timeout_s)
                c.header_timeout_s = header_timeout_s;
        if (http_start(&hs, &c, err, sizeof(err)))
                fail_msg("http_start: %s", err);
        return hs;
}

/* A connected socket whose reads give up after timeout_ms. */
static int conn_open(uint16_t port, int timeout_ms)
{
        struct sockaddr_in a;
        struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
        int fd = socket(AF_INET, SOCK_STREAM, 0);

        assert_true(fd >= 0);
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
                fail_msg("connect to port %u: %s", port, strerror(errno));
        return fd;
}

/* The status of the response read from fd (its body read and dropped,
 * so that the next response can follow), 0 if the connection closed or
 * the read timed out first. */
static int resp_status(int fd)
{
        char buf[4096], *eoh, *cl;
        size_t len = 0, want = 0;
        ssize_t n;

        for (;;) {
                buf[len] = '\0';
                eoh = strstr(buf, "\r\n\r\n");
                if (eoh) {
                        cl = strstr(buf, "Content-Length: ");
                        want = (size_t)(eoh + 4 - buf) +
                               (cl && cl < eoh ? strtoul(cl + 16, NULL, 10)
                                               : 0);
                        if (len >= want)
                                break;
                }
                if (len >= sizeof(buf) - 1)
                        return 0;
                n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
                if (n <= 0)
                        return 0;
                len += (size_t)n;
        }
        if (strncmp(buf, "HTTP/1.1 ", 9))
                return 0;
        return (int)strtol(buf + 9, NULL, 10);
}

/* One GET /healthz on fd: its status and how long it took. */
static int healthz(int fd, int64_t *ms)
{
        int64_t t0 = now_ms();
        int st;

        if (send(fd, get_healthz, sizeof(get_healthz) - 1, MSG_NOSIGNAL) !=
            (ssize_t)(sizeof(get_healthz) - 1))
                return 0;
        st = resp_status(fd);
        *ms = now_ms() - t0;
        return st;
}

/* Clients that each send the request one byte every 200 ms, for up to
 * 15 s, on a thread of their own; closed[i] records whether the server
 * closed client i (read it while the thread runs, closed_after_ms only
 * after slow_stop()).  closed_after_ms counts from just before the
 * client's connect (opened_ms), so before the server's accept, where its
 * deadline starts: never more than the time the server took.  Counted
 * from the thread's start instead (after every connect and a
 * pthread_create), a thread that started 200 ms late on a loaded machine
 * made a close right at the 1 s deadline read as 800 ms, under the
 * 900 ms test_deadline_when_idle() allows. */
struct slow {
        uint16_t port;
        int fds[NSLOW];
        atomic_int closed[NSLOW];
        int64_t opened_ms[NSLOW];
        int64_t closed_after_ms[NSLOW];
        atomic_int stop;
};

static void *slow_run(void *arg)
{
        struct slow *sl = arg;
        int64_t t0 = now_ms();
        size_t pos = 0, i;

        while (!atomic_load(&sl->stop) && now_ms() - t0 < 15000 &&
               pos < sizeof(get_healthz) - 1) {
                for (i = 0; i < NSLOW; i++) {
                        char c = get_healthz[pos], b;
                        if (atomic_load(&sl->closed[i]))
                                continue;
                        /* The server closing shows as EOF or a reset. */
                        if (recv(sl->fds[i], &b, 1, MSG_DONTWAIT) == 0 ||
                            send(sl->fds[i], &c, 1, MSG_NOSIGNAL) < 0) {
                                sl->closed_after_ms[i] = now_ms() -
                                                         sl->opened_ms[i];
                                atomic_store(&sl->closed[i], 1);
                        }
                }
                pos++;
                usleep(200 * 1000);
        }
        return NULL;
}

static void slow_start(struct slow *sl, pthread_t *th, uint16_t port, size_t n)
{
        size_t i;

        memset(sl, 0, sizeof(*sl));
        sl->port = port;
        atomic_init(&sl->stop, 0);
        for (i = 0; i < NSLOW; i++) {
                sl->opened_ms[i] = now_ms();
                sl->fds[i] = i < n ? conn_open(port, 1000) : -1;
                atomic_init(&sl->closed[i], i >= n);
        }
        assert_int_equal(pthread_create(th, NULL, slow_run, sl), 0);
}

static void slow_stop(struct slow *sl, pthread_t th)
{
        size_t i;

        atomic_store(&sl->stop, 1);
        pthread_join(th, NULL);
        for (i = 0; i < NSLOW; i++)
                if (sl->fds[i] >= 0)
                        close(sl->fds[i]);
}

/* As many trickling clients as the server has connections: a normal
 * request is answered within the busy deadline (2 s: a fifth of the
 * default 10 s), and the slow clients are closed. */
static void test_slow_clients_fill_server(void **state)
{
        struct http_server *hs = server_start(NSLOW, 0);
        struct slow sl;
        pthread_t th;
        int64_t ms = 0, t0 = now_ms();
        int fd, st;
        size_t i;

        (void)state;
        slow_start(&sl, &th, http_port(hs), NSLOW);
        usleep(300 * 1000); /* all of them accepted */
        fd = conn_open(http_port(hs), 6000);
        st = healthz(fd, &ms);
        close(fd);
        printf("# normal request with %d slow clients: status %d after "
               "%lld ms\n",
               NSLOW, st, (long long)ms);
        assert_int_equal(st, 200);
        assert_true(ms < 4000);
        /* The slow clients notice on their next byte. */
        for (i = 0; i < NSLOW; i++)
                while (!atomic_load(&sl.closed[i]) && now_ms() - t0 < 6000)
                        usleep(50 * 1000);
        slow_stop(&sl, th);
        for (i = 0; i < NSLOW; i++)
                assert_true(atomic_load(&sl.closed[i]));
        http_stop(hs);
}

/* A server far from full: one slow client is closed after the full
 * deadline (1 s here), not the busy one, and not before it. */
static void test_deadline_when_idle(void **state)
{
        struct http_server *hs = server_start(64, 1);
        struct slow sl;
        pthread_t th;
        int64_t deadline_ms;

        (void)state;
        slow_start(&sl, &th, http_port(hs), 1);
        deadline_ms = now_ms() + 5000;
        while (!atomic_load(&sl.closed[0]) && now_ms() < deadline_ms)
                usleep(50 * 1000);
        slow_stop(&sl, th);
        printf("# one slow client closed after %lld ms\n",
               (long long)sl.closed_after_ms[0]);
        assert_true(atomic_load(&sl.closed[0]));
        assert_true(sl.closed_after_ms[0] >= 900);
        assert_true(sl.closed_after_ms[0] < 3000);
        http_stop(hs);
}

/* The deadline restarts after each response: a keep-alive connection
 * asking every 400 ms for 3 s (three times the 1 s deadline) is never
 * closed. */
static void test_keep_alive_not_cut(void **state)
{
        struct http_server *hs = server_start(64, 1);
        int fd = conn_open(http_port(hs), 3000);
        int64_t t0 = now_ms(), ms;
        int n = 0;

        (void)state;
        while (now_ms() - t0 < 3000) {
                assert_int_equal(healthz(fd, &ms), 200);
                n++;
                usleep(400 * 1000);
        }
        assert_true(n >= 5);
        close(fd);
        http_stop(hs);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_slow_clients_fill_server),
            cmocka_unit_test(test_deadline_when_idle),
            cmocka_unit_test(test_keep_alive_not_cut),
        };

        /* libmicrohttpd's and the watchdog's words are expected here. */
        log_set_level(LOG_ERROR);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
