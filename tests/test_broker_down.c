/*
 * test_broker_down.c - every broker of librdkafka's mock cluster down for
 * a few seconds under a following audit (what `serve` runs), the audit on
 * a thread of its own publishing its status as serve does:
 *  - before: the audit is caught up and sees every broker up, and no
 *    more than there are (librdkafka's statistics also list a logical
 *    "GroupCoordinator" broker, which is not one more broker);
 *  - down: brokers_up drops to 0 and the audit thread keeps running;
 *  - up again: brokers_up comes back, records produced after the outage
 *    are audited, and the ledger's totals are exact: no gap, no duplicate.
 * The outage lasts DOWN_MS (3 s), not the 30 s of the real-broker test
 * (tests/integration/t_63_broker_down.sh), to keep the unit suite fast.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <pthread.h>

#include "../auditor/audit/audit.h"
#include "../auditor/ledger/ledger.h"
#include "../base/log.h"
#include "../auditor/audit/status.h"
#include "../producer/producer.h"

#define NBROKERS 3
#define DOWN_MS 3000
#define N1 3000 /* records before the outage */
#define N2 2000 /* after it */

struct fx {
        rd_kafka_t *rk; /* owns the mock cluster */
        rd_kafka_mock_cluster_t *mc;
        const char *bootstraps;
        char dir[64];
        char db[96];
        struct status *st;
        struct audit *a;
        pthread_t th;
        volatile sig_atomic_t run;
        int rc;
        char errstr[512];
};

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void produce(struct fx *fx, const char *name, int64_t count,
                    int64_t epoch)
{
        struct producer_result res;
        struct producer_opts o;
        char errstr[512];

        producer_opts_init(&o);
        o.brokers = fx->bootstraps;
        o.topic = "down";
        o.name = name;
        o.count = count;
        o.epoch = epoch;
        /* Both runs write keys d1-0, d1-1, ...: as ids, the second run's
         * would repeat the first's (redelivered). */
        o.msgid_from = PRODUCER_MSGID_NONE;
        o.quiet = 1;
        memset(&res, 0, sizeof(res));
        if (producer_run(&o, &res, errstr, sizeof(errstr)))
                fail_msg("producer: %s", errstr);
        assert_int_equal(res.failed, 0);
        assert_int_equal(res.delivered, count);
}

static void *audit_thread(void *arg)
{
        struct fx *fx = arg;

        fx->rc = audit_run(fx->a, fx->errstr, sizeof(fx->errstr));
        return NULL;
}

/* The last published view's brokers_up and records read, -1 if none. */
static void view_get(struct fx *fx, int *up, int64_t *records)
{
        struct status_view v;

        *up = -1;
        *records = -1;
        if (status_read(fx->st, &v))
                return;
        *up = v.brokers_up;
        *records = (int64_t)v.records;
        status_view_release(&v);
}

/* Waits up to ms for the view to satisfy want(up, records); returns the
 * milliseconds it took, or -1. */
static int64_t view_wait(struct fx *fx, int (*want)(int, int64_t), int ms)
{
        int64_t t0 = now_ms(), records;
        int up;

        while (now_ms() - t0 < ms) {
                view_get(fx, &up, &records);
                if (want(up, records))
                        return now_ms() - t0;
                usleep(50 * 1000);
        }
        return -1;
}

static int up_n1(int up, int64_t records)
{
        return up > 0 && records == N1;
}

static int down(int up, int64_t records)
{
        (void)records;
        return up == 0;
}

static int up_again(int up, int64_t records)
{
        (void)records;
        return up > 0;
}

static int all_read(int up, int64_t records)
{
        (void)up;
        return records == N1 + N2;
}

static void test_all_brokers_down(void **state)
{
        struct fx *fx = *state;
        const char *topics[] = {"down"};
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        struct audit_conf ac;
        struct ledger_summary s;
        int64_t t, records, took;
        int32_t id;
        int up, k;

        assert_int_equal(rd_kafka_mock_topic_create(fx->mc, "down", 6, 1), 0);
        produce(fx, "d1", N1, 0);

        audit_conf_defaults(&ac);
        ac.topics = topics;
        ac.topic_cnt = 1;
        ac.db_path = fx->db;
        ac.follow = 1;
        ac.commit_interval_ms = 100;
        ac.no_compaction_check = 1; /* the mock never answers */
        ac.status = fx->st;
        ac.run = &fx->run;
        fx->run = 1;
        rd_kafka_conf_set(conf, "bootstrap.servers", fx->bootstraps, NULL, 0);
        rd_kafka_conf_set(conf, "group.id", "eosaudit", NULL, 0);
        assert_int_equal(audit_kconf_defaults(conf, fx->errstr,
                                              sizeof(fx->errstr)),
                         0);
        rd_kafka_conf_set(conf, "reconnect.backoff.ms", "50", NULL, 0);
        rd_kafka_conf_set(conf, "reconnect.backoff.max.ms", "200", NULL, 0);
        rd_kafka_conf_set(conf, "log_level", "0", NULL, 0);
        assert_int_equal(audit_kconf_apply(conf, fx->errstr,
                                           sizeof(fx->errstr)),
                         0);
        if (audit_new(&fx->a, &ac, conf, fx->errstr, sizeof(fx->errstr)))
                fail_msg("audit_new: %s", fx->errstr);
        assert_int_equal(pthread_create(&fx->th, NULL, audit_thread, fx), 0);

        /* Before: caught up, and the brokers it sees are real ones. */
        took = view_wait(fx, up_n1, 20000);
        assert_true(took >= 0);
        sleep(2); /* a few statistics intervals, the coordinator known */
        view_get(fx, &up, &records);
        printf("# before: brokers_up %d of %d, %lld records\n", up, NBROKERS,
               (long long)records);
        assert_true(up >= 1);
        assert_true(up <= NBROKERS);

        /* Down. */
        for (id = 1; id <= NBROKERS; id++)
                assert_int_equal(rd_kafka_mock_broker_set_down(fx->mc, id), 0);
        t = now_ms();
        took = view_wait(fx, down, DOWN_MS);
        printf("# down: brokers_up 0 after %lld ms\n", (long long)took);
        assert_true(took >= 0);
        while (now_ms() - t < DOWN_MS)
                usleep(50 * 1000);
        view_get(fx, &up, &records);
        assert_int_equal(up, 0);
        assert_int_equal(records, N1);

        /* Up again; then more records, which must be audited. */
        for (id = 1; id <= NBROKERS; id++)
                assert_int_equal(rd_kafka_mock_broker_set_up(fx->mc, id), 0);
        took = view_wait(fx, up_again, 15000);
        printf("# up: brokers_up > 0 after %lld ms\n", (long long)took);
        assert_true(took >= 0);
        produce(fx, "d1", N2, 1);
        took = view_wait(fx, all_read, 20000);
        assert_true(took >= 0);

        fx->run = 0;
        pthread_join(fx->th, NULL);
        if (fx->rc)
                fail_msg("audit_run: %s", fx->errstr);
        if (ledger_summary(audit_ledger(fx->a), "down", &s, fx->errstr,
                           sizeof(fx->errstr)))
                fail_msg("ledger_summary: %s", fx->errstr);
        audit_free(fx->a);
        fx->a = NULL;
        assert_int_equal(s.records, N1 + N2);
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                assert_int_equal(s.anomalies[k], 0);
        assert_int_equal(s.missing, 0);
        assert_int_equal(s.untracked, 0);
        assert_int_equal(s.producers, 1);
}

static int fx_setup(void **state)
{
        struct fx *fx = calloc(1, sizeof(*fx));
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        char errstr[256];

        assert_non_null(fx);
        rd_kafka_conf_set(conf, "log_level", "0", NULL, 0);
        fx->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        assert_non_null(fx->rk);
        fx->mc = rd_kafka_mock_cluster_new(fx->rk, NBROKERS);
        assert_non_null(fx->mc);
        fx->bootstraps = rd_kafka_mock_cluster_bootstraps(fx->mc);
        snprintf(fx->dir, sizeof(fx->dir), "/tmp/eosaudit-down-XXXXXX");
        assert_non_null(mkdtemp(fx->dir));
        snprintf(fx->db, sizeof(fx->db), "%s/ledger.db", fx->dir);
        fx->st = status_new();
        assert_non_null(fx->st);
        *state = fx;
        return 0;
}

static int fx_teardown(void **state)
{
        struct fx *fx = *state;

        if (fx->a) { /* a failed test left it running */
                fx->run = 0;
                pthread_join(fx->th, NULL);
                audit_free(fx->a);
        }
        status_free(fx->st);
        rd_kafka_mock_cluster_destroy(fx->mc);
        rd_kafka_destroy(fx->rk);
        ledger_remove(fx->db);
        rmdir(fx->dir);
        free(fx);
        return 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_all_brokers_down, fx_setup,
                                            fx_teardown),
        };

        log_set_level(LOG_ERROR);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
