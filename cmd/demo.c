/*
 * demo.c - see demo.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "../http/http.h"
#include "../producer/producer.h"
#include "../auditor/audit/audit.h"
#include "cli.h"
#include "cmd.h"
#include "conf.h"
#include "../base/kconf.h"
#include "../base/clock.h"
#include "../base/log.h"
#include "../auditor/report/report.h"
#include "demo_flow.h"
#include "evlog.h"

#define DEMO_TOPIC "demo"
#define DEMO_PARTITIONS 4
#define DEMO_BROKERS 3
#define DEMO_REPLAY 20 /* records resent after the restart */

/* Two producers, one after the other: o (faults and a zombie) and o2
 * (a crash and restart; the reference producer does not combine the
 * two in one run). */
struct demo_producer {
        struct producer_opts o, o2;
        struct producer_result res, res2;
        char errstr[512];
        int rc;
        volatile sig_atomic_t *done;
};

static void *demo_produce(void *arg)
{
        struct demo_producer *dp = arg;

        dp->rc = producer_run(&dp->o, &dp->res, dp->errstr,
                              sizeof(dp->errstr));
        if (!dp->rc)
                dp->rc = producer_run(&dp->o2, &dp->res2, dp->errstr,
                                      sizeof(dp->errstr));
        *dp->done = 1;
        return NULL;
}

static void demo_sink(void *opaque, enum evlog_line what, const char *line,
                      const char *kcat)
{
        (void)opaque;
        printf("%s %s\n", what == EVLOG_NOTE ? "demo:" : "found", line);
        if (kcat)
                printf("      fetch: %s\n", kcat);
        fflush(stdout);
}

static void demo_event(void *opaque, const char *topic, int32_t partition,
                       const struct dedup_event *ev)
{
        evlog_event(opaque, topic, partition, ev, clock_wall_ms());
}

static void demo_tick(void *opaque, int64_t now_ms)
{
        evlog_tick(opaque, now_ms);
}

static void demo_usage(FILE *f)
{
        fprintf(
            f,
            "usage: eosaudit demo [-n COUNT] [--rate N] [--db FILE] [--seed N]\n"
            "                     [--listen ADDR:PORT [--no-linger]] [-q]\n"
            "\n"
            "Starts librdkafka's in-process mock cluster (%d brokers), a topic '%s'\n"
            "with %d partitions, the reference producer with injected faults\n"
            "(duplicates, gaps and a zombie session), and the auditor, and prints\n"
            "what the audit finds as it goes, then compares it with what was\n"
            "injected.  Then a pipeline: the reference processor copies topic\n"
            "'%s' to '%s' at-least-once, crashing once and restarting, and\n"
            "the flow audit reports the records written twice (the mock cluster\n"
            "does not enforce transactions: exactly-once needs a real broker).\n"
            "Exit status 0 when every figure matches its independent count.\n"
            "\n",
            DEMO_BROKERS, DEMO_TOPIC, DEMO_PARTITIONS, DEMO_FLOW_SOURCE,
            DEMO_FLOW_SINK);
        conf_usage_print(f, CONF_DEMO);
}

static int demo_check(const char *what, uint64_t want, uint64_t got)
{
        printf("  %-12s injected %-8llu found %-8llu %s\n", what,
               (unsigned long long)want, (unsigned long long)got,
               want == got ? "ok" : "MISMATCH");
        return want == got ? 0 : -1;
}

/* Serves until *run is cleared (a signal). */
static void demo_linger(const struct http_server *hs,
                        volatile sig_atomic_t *run)
{
        printf("\ndemo: still serving the dashboard at %s; Ctrl-C to "
               "stop\n",
               http_url(hs));
        fflush(stdout);
        while (*run)
                usleep(100 * 1000);
}

int cmd_demo(int argc, char **argv, volatile sig_atomic_t *run)
{
        struct http_conf hc;
        struct http_server *hs = NULL;
        struct status *st = NULL;
        int linger;
        static volatile sig_atomic_t produced;
        struct demo_producer dp;
        struct audit_conf ac;
        struct audit *a = NULL;
        rd_kafka_mock_cluster_t *mc = NULL;
        rd_kafka_t *mrk = NULL;
        rd_kafka_conf_t *kconf;
        pthread_t thr;
        struct conf c;
        struct cli_tmpdb tmp;
        struct evlog *evl = NULL;
        struct demo_flow *flow = NULL;
        int started = 0, rc = 2, quiet, r;
        int64_t count;
        double rate;
        uint64_t seed;
        const char *db;
        const char *topics[] = {DEMO_TOPIC};
        char errstr[512] = "";
        const char *bootstraps;

        memset(&tmp, 0, sizeof(tmp));
        evl = calloc(1, sizeof(*evl));
        if (!evl || conf_init(&c)) {
                free(evl);
                fprintf(stderr, "eosaudit: out of memory\n");
                return 2;
        }
        r = conf_argv_parse(&c, argc, argv, errstr, sizeof(errstr));
        if (r) {
                if (r > 0)
                        demo_usage(stdout);
                else
                        fprintf(stderr, "eosaudit: %s\n", errstr);
                conf_release(&c);
                free(evl);
                return r > 0 ? 0 : 2;
        }
        count = conf_int(&c, CONF_DEMO_COUNT);
        rate = conf_dbl(&c, CONF_DEMO_RATE);
        seed = conf_u64(&c, CONF_SEED);
        db = conf_str(&c, CONF_DEMO_DB);
        linger = !conf_int(&c, CONF_NO_LINGER);
        quiet = conf_int(&c, CONF_QUIET) > 0;
        if (quiet)
                log_set_level(LOG_ERROR);
        http_conf_defaults(&hc);
        hc.listen = conf_str(&c, CONF_DEMO_LISTEN);
        if (hc.listen && !strcmp(hc.listen, "off"))
                hc.listen = NULL;

        /* The mock cluster lives inside a throwaway client handle. */
        kconf = rd_kafka_conf_new();
        rd_kafka_conf_set(kconf, "log_level", "3", NULL, 0);
        mrk = rd_kafka_new(RD_KAFKA_PRODUCER, kconf, errstr, sizeof(errstr));
        if (!mrk) {
                rd_kafka_conf_destroy(kconf);
                fprintf(stderr, "eosaudit: demo: %s\n", errstr);
                goto out;
        }
        mc = rd_kafka_mock_cluster_new(mrk, DEMO_BROKERS);
        if (!mc ||
            rd_kafka_mock_topic_create(mc, DEMO_TOPIC, DEMO_PARTITIONS, 1)) {
                fprintf(stderr, "eosaudit: demo: cannot start the mock "
                                "cluster\n");
                goto out;
        }
        bootstraps = rd_kafka_mock_cluster_bootstraps(mc);
        if (!db) {
                if (cli_tmpdb_make(&tmp)) {
                        fprintf(stderr,
                                "eosaudit: demo: cannot create a "
                                "temporary ledger under $TMPDIR "
                                "(else /tmp): %s\n",
                                strerror(errno));
                        goto out;
                }
                db = tmp.path;
        }
        printf("demo: mock cluster of %d brokers at %s, topic '%s' with %d "
               "partitions, ledger %s\n",
               DEMO_BROKERS, bootstraps, DEMO_TOPIC, DEMO_PARTITIONS, db);
        if (hc.listen) {
                st = status_new();
                hc.db_path = db;
                /* The kcat commands the API gives name the mock brokers,
                 * as the demo's log does. */
                hc.brokers = bootstraps;
                hc.topics = topics;
                hc.topic_cnt = 1;
                hc.status = st;
                hc.version = EOSAUDIT_VERSION;
                if (!st || http_start(&hs, &hc, errstr, sizeof(errstr))) {
                        fprintf(stderr, "eosaudit: demo: %s\n",
                                st ? errstr : "out of memory");
                        goto out;
                }
                printf("demo: dashboard at %s\n", http_url(hs));
        }
        printf("demo: producing %lld records as 'orders' (%.0f/s) with "
               "0.2%% injected duplicates, 0.1%% injected gaps and a zombie "
               "session, then %lld as 'billing' with a restart half-way that "
               "resends its last %d records\n",
               (long long)count, rate, (long long)(count / 4 + 1),
               DEMO_REPLAY);
        fflush(stdout);

        memset(&dp, 0, sizeof(dp));
        producer_opts_init(&dp.o);
        dp.o.brokers = bootstraps;
        dp.o.topic = DEMO_TOPIC;
        dp.o.name = "orders";
        dp.o.count = count;
        dp.o.rate = rate;
        dp.o.dup_rate = 0.002;
        dp.o.gap_rate = 0.001;
        dp.o.zombie = 1;
        dp.o.seed = seed;
        dp.o.quiet = 1;
        dp.o.run = run;
        /* One crash and restart half-way: a new session that resends what
         * the last one wrote, which only the message ids can tell. */
        dp.o2 = dp.o;
        dp.o2.name = "billing";
        dp.o2.count = count / 4 + 1;
        dp.o2.dup_rate = dp.o2.gap_rate = 0;
        dp.o2.zombie = 0;
        dp.o2.restart_every = dp.o2.count / 2 + 1;
        dp.o2.restart_replay = DEMO_REPLAY;
        dp.done = &produced;
        if (pthread_create(&thr, NULL, demo_produce, &dp)) {
                fprintf(stderr, "eosaudit: demo: cannot start the producer\n");
                goto out;
        }
        started = 1;

        audit_conf_defaults(&ac);
        ac.topics = topics;
        ac.topic_cnt = 1;
        ac.db_path = db;
        ac.follow = 1;
        ac.no_compaction_check = 1; /* the demo made the topic */
        ac.run = run;
        ac.drain = &produced;
        ac.commit_interval_ms = 200;
        ac.on_event = demo_event;
        ac.on_tick = demo_tick;
        ac.opaque = evl;
        evlog_init(evl, demo_sink, NULL, bootstraps);
        ac.status = st;
        kconf = rd_kafka_conf_new();
        if (rd_kafka_conf_set(kconf, "bootstrap.servers", bootstraps, errstr,
                              sizeof(errstr)) ||
            rd_kafka_conf_set(kconf, "group.id", "eosaudit-demo", errstr,
                              sizeof(errstr)) ||
            audit_kconf_defaults(kconf, errstr, sizeof(errstr)) ||
            rd_kafka_conf_set(kconf, "log_level", quiet ? "3" : "4", errstr,
                              sizeof(errstr)) ||
            audit_kconf_apply(kconf, errstr, sizeof(errstr))) {
                rd_kafka_conf_destroy(kconf);
                fprintf(stderr, "eosaudit: demo: %s\n", errstr);
                goto out;
        }
        if (audit_new(&a, &ac, kconf, errstr, sizeof(errstr))) {
                fprintf(stderr, "eosaudit: demo: %s\n", errstr);
                goto out;
        }
        /* Act 2 (cmd/demo_flow.c) runs alongside: it mostly waits on the
         * mock cluster's group timers. */
        flow = demo_flow_start(mc, bootstraps, quiet, run);
        if (!flow)
                goto out;
        if (audit_run(a, errstr, sizeof(errstr))) {
                fprintf(stderr, "eosaudit: demo: %s\n", errstr);
                goto out;
        }
        evlog_flush(evl, clock_wall_ms());
        pthread_join(thr, NULL);
        started = 0;
        if (dp.rc) {
                fprintf(stderr, "eosaudit: demo: producer: %s\n", dp.errstr);
                goto out;
        }

        printf("\n");
        if (report_summary_print(stdout, audit_ledger(a), topics, 1,
                                 &(struct report_opts){.brokers = bootstraps},
                                 errstr, sizeof(errstr))) {
                fprintf(stderr, "eosaudit: demo: %s\n", errstr);
                goto out;
        }
        {
                struct ledger_summary s;
                int bad = 0;
                if (ledger_summary(audit_ledger(a), DEMO_TOPIC, &s, errstr,
                                   sizeof(errstr))) {
                        fprintf(stderr, "eosaudit: demo: %s\n", errstr);
                        goto out;
                }
                printf("\nwhat the producer injected vs what the audit "
                       "found:\n");
                bad |= demo_check("duplicate", dp.res.duplicates_injected,
                                  s.anomalies[DEDUP_KIND_DUPLICATE]);
                bad |= demo_check("missing",
                                  dp.res.gaps_injected + dp.res.failed,
                                  s.missing);
                bad |= demo_check("fenced", dp.res.zombie_records,
                                  s.anomalies[DEDUP_KIND_FENCED]);
                bad |= demo_check("redelivered", dp.res2.redelivered_injected,
                                  s.anomalies[DEDUP_KIND_REDELIVERED]);
                bad |= demo_check("records",
                                  dp.res.delivered + dp.res2.delivered,
                                  s.records);
                rc = bad ? 1 : 0;
        }
        r = demo_flow_finish(flow, 1);
        flow = NULL;
        if (r == 2) {
                rc = 2;
                goto out;
        }
        if (r)
                rc = 1;
        fflush(stdout);
        if (hs && linger)
                demo_linger(hs, run);
out:
        if (started || flow)
                *run = 0;
        if (started)
                pthread_join(thr, NULL);
        if (flow)
                demo_flow_finish(flow, 0);
        http_stop(hs);
        audit_free(a);
        status_free(st);
        if (mc)
                rd_kafka_mock_cluster_destroy(mc);
        if (mrk)
                rd_kafka_destroy(mrk);
        cli_tmpdb_remove(&tmp);
        conf_release(&c);
        free(evl);
        return rc;
}
