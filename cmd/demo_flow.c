/*
 * demo_flow.c - see demo_flow.h.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "../auditor/audit/audit.h"
#include "../auditor/ledger/ledger_flow.h"
#include "../auditor/report/report_flow.h"
#include "../producer/process.h"
#include "../producer/producer.h"
#include "cli.h"
#include "demo_flow.h"

#define DEMO_FLOW_PARTITIONS 4
#define DEMO_FLOW_GROUP "demo-enricher"
#define DEMO_FLOW_EVIDENCE 5

/* A client of the mock cluster for the demo's own looks (watermarks, the
 * group's committed offsets: group.id set, never subscribed, so it never
 * joins).  NULL with errstr. */
static rd_kafka_t *demo_flow_client(const char *bootstraps, char *errstr,
                                    size_t errstr_size)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        rd_kafka_t *rk;

        if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstraps, errstr,
                              errstr_size) != RD_KAFKA_CONF_OK ||
            rd_kafka_conf_set(conf, "group.id", DEMO_FLOW_GROUP, errstr,
                              errstr_size) != RD_KAFKA_CONF_OK ||
            rd_kafka_conf_set(conf, "enable.auto.commit", "false", errstr,
                              errstr_size) != RD_KAFKA_CONF_OK ||
            rd_kafka_conf_set(conf, "log_level", "3", errstr, errstr_size) !=
                RD_KAFKA_CONF_OK) {
                rd_kafka_conf_destroy(conf);
                return NULL;
        }
        rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, errstr_size);
        if (!rk)
                rd_kafka_conf_destroy(conf);
        return rk;
}

/* The high watermarks of topic's partitions, and their sum (no retention,
 * no compaction and no transactions on the mock: every offset is a
 * record).  Returns 0, or -1 with errstr. */
static int demo_flow_records(rd_kafka_t *rk, const char *topic, int64_t *hi,
                             int64_t *sum, char *errstr, size_t errstr_size)
{
        int32_t p;
        int64_t lo;
        rd_kafka_resp_err_t err;

        *sum = 0;
        for (p = 0; p < DEMO_FLOW_PARTITIONS; p++) {
                err = rd_kafka_query_watermark_offsets(rk, topic, p, &lo,
                                                       &hi[p], 10000);
                if (err) {
                        snprintf(errstr, errstr_size,
                                 "watermarks of %s [%d]: %s", topic, (int)p,
                                 rd_kafka_err2str(err));
                        return -1;
                }
                *sum += hi[p] - lo;
        }
        return 0;
}

/* Ends the processor once its group has committed the whole source (at-
 * least-once commits after the batch's outputs are flushed: everything is
 * in the sink then), or when the demo is interrupted.  Quicker and surer
 * than waiting for it to be idle on a loaded machine. */
struct demo_flow_watch {
        rd_kafka_t *rk;
        const int64_t *end; /* the source's high watermarks */
        volatile sig_atomic_t *demo_run;
        volatile sig_atomic_t proc_run;
        volatile sig_atomic_t stop;
};

static void *demo_flow_watch(void *arg)
{
        struct demo_flow_watch *w = arg;
        rd_kafka_topic_partition_list_t *l;
        int32_t p;
        int done;

        l = rd_kafka_topic_partition_list_new(DEMO_FLOW_PARTITIONS);
        for (p = 0; l && p < DEMO_FLOW_PARTITIONS; p++)
                rd_kafka_topic_partition_list_add(l, DEMO_FLOW_SOURCE, p);
        while (l && !w->stop) {
                if (w->demo_run && !*w->demo_run)
                        break;
                done = !rd_kafka_committed(w->rk, l, 5000);
                for (p = 0; done && p < DEMO_FLOW_PARTITIONS; p++)
                        done = !l->elems[p].err &&
                               l->elems[p].offset >= w->end[p];
                if (done)
                        break;
                usleep(100 * 1000);
        }
        w->proc_run = 0;
        if (l)
                rd_kafka_topic_partition_list_destroy(l);
        return NULL;
}

/* The flow audit of sink <- source, as `eosaudit scan -t SINK --source
 * SOURCE --processor-group GROUP` runs it, into the ledger at db. */
static struct audit *demo_flow_audit(const char *bootstraps, const char *db,
                                     int quiet, volatile sig_atomic_t *run,
                                     char *errstr, size_t errstr_size)
{
        static const char *sinks[] = {DEMO_FLOW_SINK};
        static const char *sources[] = {DEMO_FLOW_SOURCE};
        struct audit_conf ac;
        struct audit *a = NULL;
        rd_kafka_conf_t *kconf;

        audit_conf_defaults(&ac);
        ac.topics = sinks;
        ac.topic_cnt = 1;
        ac.sources = sources;
        ac.source_cnt = 1;
        ac.processor_group = DEMO_FLOW_GROUP;
        ac.db_path = db;
        ac.no_compaction_check = 1; /* the demo made the topics */
        ac.run = run;
        kconf = rd_kafka_conf_new();
        if (rd_kafka_conf_set(kconf, "bootstrap.servers", bootstraps, errstr,
                              errstr_size) ||
            rd_kafka_conf_set(kconf, "group.id", "eosaudit-demo-flow", errstr,
                              errstr_size) ||
            audit_kconf_defaults(kconf, errstr, errstr_size) ||
            rd_kafka_conf_set(kconf, "log_level", quiet ? "3" : "4", errstr,
                              errstr_size) ||
            audit_kconf_apply(kconf, errstr, errstr_size)) {
                rd_kafka_conf_destroy(kconf);
                return NULL;
        }
        if (audit_new(&a, &ac, kconf, errstr, errstr_size))
                return NULL;
        if (audit_run(a, errstr, errstr_size)) {
                audit_free(a);
                return NULL;
        }
        return a;
}

struct demo_flow {
        pthread_t thr;
        const char *bootstraps;
        int quiet;
        volatile sig_atomic_t *run;
        FILE *out; /* held output (open_memstream) */
        char *text;
        size_t len;
        int rc;
        char errstr[512];
};

static int demo_flow_check(FILE *f, const char *what, int64_t want,
                           int64_t got)
{
        fprintf(f,
                "  %-22s counted %-8" PRId64 " flow audit %-8" PRId64 " %s\n",
                what, want, got, want == got ? "ok" : "MISMATCH");
        return want == got ? 0 : -1;
}

/* The act, in its thread: df->rc and, on an error, df->errstr. */
static void *demo_flow_main(void *arg)
{
        static const char *sources[] = {DEMO_FLOW_SOURCE};
        struct demo_flow *df = arg;
        FILE *f = df->out;
        struct producer_opts po;
        struct producer_result pr;
        struct process_opts o;
        struct process_stats st;
        struct ledger_flow_summary fs;
        struct demo_flow_watch w;
        struct audit *a = NULL;
        struct cli_tmpdb tmp;
        rd_kafka_t *rk = NULL;
        pthread_t wthr;
        int64_t hi_src[DEMO_FLOW_PARTITIONS], hi_sink[DEMO_FLOW_PARTITIONS];
        int64_t n_src, n_sink;
        char *errstr = df->errstr;
        size_t errstr_size = sizeof(df->errstr);
        int bad = 0, r;

        df->rc = 2;
        memset(&tmp, 0, sizeof(tmp));
        producer_opts_init(&po);
        po.brokers = df->bootstraps;
        po.topic = DEMO_FLOW_SOURCE;
        po.name = "shop";
        po.count = DEMO_FLOW_RECORDS;
        po.quiet = 1;
        po.run = df->run;
        if (producer_run(&po, &pr, errstr, errstr_size))
                goto out;
        rk = demo_flow_client(df->bootstraps, errstr, errstr_size);
        if (!rk || demo_flow_records(rk, DEMO_FLOW_SOURCE, hi_src, &n_src,
                                     errstr, errstr_size))
                goto out;

        memset(&w, 0, sizeof(w));
        w.rk = rk;
        w.end = hi_src;
        w.demo_run = df->run;
        w.proc_run = 1;
        process_opts_defaults(&o);
        o.brokers = df->bootstraps;
        o.sources = sources;
        o.source_cnt = 1;
        o.sink = DEMO_FLOW_SINK;
        o.group = DEMO_FLOW_GROUP;
        o.mode = PROCESS_AT_LEAST_ONCE;
        o.batch = DEMO_FLOW_BATCH;
        o.crash_after = DEMO_FLOW_CRASH_AFTER;
        /* Not a forked child: this process has threads (act 1, the mock
         * cluster), and a lock one of them held at the fork would stay
         * held in the child (seen under ASan: a hang). */
        o.crash_in_process = 1;
        o.idle_exit_ms = 60000; /* the watcher ends it long before */
        o.run = &w.proc_run;
        if (pthread_create(&wthr, NULL, demo_flow_watch, &w)) {
                snprintf(errstr, errstr_size, "cannot start a thread");
                goto out;
        }
        r = process_run(&o, &st, errstr, errstr_size);
        w.stop = 1;
        pthread_join(wthr, NULL);
        if (r)
                goto out;
        if (df->run && !*df->run) {
                snprintf(errstr, errstr_size, "interrupted");
                goto out;
        }
        fprintf(f,
                "demo: %" PRId64 " records in '%s'; the processor crashed "
                "after %d (its last batch written, its offsets not "
                "committed), restarted (%d) and went on: the second session "
                "read %" PRIu64 " records and committed %" PRIu64 " times\n",
                n_src, DEMO_FLOW_SOURCE, DEMO_FLOW_CRASH_AFTER, st.restarts,
                st.consumed, st.commits);

        if (cli_tmpdb_make(&tmp)) {
                snprintf(errstr, errstr_size,
                         "cannot create a temporary ledger");
                goto out;
        }
        a = demo_flow_audit(df->bootstraps, tmp.path, df->quiet, df->run,
                            errstr, errstr_size);
        if (!a)
                goto out;
        fprintf(f,
                "demo: the flow audit (eosaudit scan -t %s --source %s "
                "--processor-group %s):\n",
                DEMO_FLOW_SINK, DEMO_FLOW_SOURCE, DEMO_FLOW_GROUP);
        if (report_flow_print(f, audit_ledger(a), DEMO_FLOW_EVIDENCE, errstr,
                              errstr_size) ||
            ledger_flow_summary(audit_ledger(a), &fs, errstr, errstr_size) ||
            demo_flow_records(rk, DEMO_FLOW_SINK, hi_sink, &n_sink, errstr,
                              errstr_size))
                goto out;
        fprintf(f, "\nthe topics' own record counts (watermarks) vs the flow "
                   "audit:\n");
        bad |= demo_flow_check(f, "source records", n_src,
                               (int64_t)fs.source_records);
        bad |= demo_flow_check(f, "extra sink copies", n_sink - n_src,
                               (int64_t)fs.duplicate_copies);
        bad |= demo_flow_check(f, "lost", 0, (int64_t)fs.lost);
        bad |= demo_flow_check(f, "unexpected", 0, (int64_t)fs.unexpected);
        bad |= demo_flow_check(f, "pending", 0, (int64_t)fs.pending);
        /* One crash replays one partial batch once: every replayed record
         * has exactly one extra copy. */
        bad |= demo_flow_check(f, "duplicated records", n_sink - n_src,
                               (int64_t)fs.duplicated);
        if (!fs.duplicated) {
                fputs("  the crash wrote nothing twice: MISMATCH (the act is "
                      "meant to show duplicates)\n",
                      f);
                bad = -1;
        }
        df->rc = bad ? 1 : 0;
out:
        audit_free(a);
        if (rk)
                rd_kafka_destroy(rk);
        cli_tmpdb_remove(&tmp);
        return NULL;
}

struct demo_flow *demo_flow_start(rd_kafka_mock_cluster_t *mc,
                                  const char *bootstraps, int quiet,
                                  volatile sig_atomic_t *run)
{
        struct demo_flow *df;

        if (rd_kafka_mock_topic_create(mc, DEMO_FLOW_SOURCE,
                                       DEMO_FLOW_PARTITIONS, 1) ||
            rd_kafka_mock_topic_create(mc, DEMO_FLOW_SINK,
                                       DEMO_FLOW_PARTITIONS, 1)) {
                fprintf(stderr, "eosaudit: demo: cannot create the flow's "
                                "topics\n");
                return NULL;
        }
        df = calloc(1, sizeof(*df));
        if (!df) {
                fprintf(stderr, "eosaudit: demo: out of memory\n");
                return NULL;
        }
        df->bootstraps = bootstraps;
        df->quiet = quiet;
        df->run = run;
        df->out = open_memstream(&df->text, &df->len);
        if (!df->out || pthread_create(&df->thr, NULL, demo_flow_main, df)) {
                fprintf(stderr, "eosaudit: demo: cannot start the flow "
                                "act\n");
                if (df->out)
                        fclose(df->out);
                free(df->text);
                free(df);
                return NULL;
        }
        return df;
}

int demo_flow_finish(struct demo_flow *df, int print)
{
        int rc;

        if (!df)
                return 2;
        pthread_join(df->thr, NULL);
        fclose(df->out);
        rc = df->rc;
        if (print) {
                printf("\ndemo: act 2, a pipeline, run alongside act 1: '%s' "
                       "-> the reference processor (eosaudit process, "
                       "at-least-once) -> '%s'.\n"
                       "demo: librdkafka's mock cluster does not enforce "
                       "transactions (no fencing, aborted records stay "
                       "readable), so this act shows at-least-once: the "
                       "processor crashes after %d records, between writing "
                       "a batch and committing its offsets, and its restart "
                       "writes that batch again.  Exactly-once is shown "
                       "against a real broker in the tests "
                       "(tests/integration/t_71_flow_ref.sh, t_73).\n",
                       DEMO_FLOW_SOURCE, DEMO_FLOW_SINK,
                       DEMO_FLOW_CRASH_AFTER);
                fwrite(df->text, 1, df->len, stdout);
                if (rc == 2)
                        fprintf(stderr, "eosaudit: demo: flow act: %s\n",
                                df->errstr);
                fflush(stdout);
        }
        free(df->text);
        free(df);
        return rc;
}
