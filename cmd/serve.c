/*
 * serve.c - `eosaudit serve`: the long-running audit, with HTTP; anomalies
 * are logged as they are found, grouped per cause (evlog.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../auditor/report/report.h"
#include "../base/clock.h"
#include "../base/log.h"
#include "evlog.h"
#include "cli.h"
#include "cmd.h"

static void usage_serve(FILE *f)
{
        fputs(
            "usage: eosaudit serve -b BROKERS -t TOPIC[,TOPIC...] [options]\n"
            "       eosaudit serve --config FILE [options]\n"
            "\n"
            "The long-running audit: resumes from the ledger, follows new "
            "records,\n"
            "confirms gaps after the grace period and expires idle "
            "producers.\n"
            "SIGTERM/SIGINT finish the current batch, commit it and exit "
            "0.\n"
            "\n",
            f);
        conf_usage_print(f, CONF_SERVE);
        fputs("\n"
              "Settings may come from --config FILE (`eosaudit config-help` "
              "lists its keys);\n"
              "flags override it.\n"
              "\n"
              "HTTP endpoints (GET and HEAD only):\n"
              "  /                         the dashboard (one self-contained "
              "page)\n"
              "  /metrics                  Prometheus text format: counters "
              "from the\n"
              "                            ledger (they survive restarts), "
              "lag per\n"
              "                            partition, latency and commit "
              "histograms;\n"
              "                            with --source the flow's "
              "outcomes, its end-to-\n"
              "                            end latency histogram and the "
              "processor's lag\n"
              "  /api/v1/summary           what `scan --json` prints but "
              "the latest\n"
              "                            anomalies (/api/v1/anomalies "
              "has them), plus\n"
              "                            live figures; ?topic= &scope=\n"
              "  /api/v1/anomalies         newest first with evidence; "
              "?topic= &kind=\n"
              "                            &producer= &since=MS &limit=N "
              "(50, max 1000)\n"
              "                            &cursor=ID (the previous page's "
              "next_cursor)\n"
              "                            &scope=group|member (with "
              "--group)\n"
              "  /api/v1/producers         per (partition, producer) state; "
              "?topic=\n"
              "                            &producer= &limit=N (1000, max "
              "10000) &cursor=\n"
              "  /api/v1/partitions        per partition counters, offsets "
              "and lag\n"
              "  /api/v1/flows             with --source: the flow's "
              "counts, latency,\n"
              "                            processor lag and the evidence "
              "of bad records\n"
              "                            (?limit=N (100, max 1000) "
              "&cursor=)\n"
              "  /api/v1/history           records, anomalies and gaps per "
              "minute;\n"
              "                            ?minutes=N (60, up to 7 days) "
              "&topic=\n"
              "  /api/v1/ids/ID            where one message id was seen: "
              "first copy\n"
              "                            and later copies; ?topic=\n"
              "  /api/v1/group             with --group: this member, its "
              "partitions\n"
              "                            and the group's members\n"
              "  /healthz                  200 while the process is up\n"
              "  /readyz                   200 when the ledger is open, "
              "partitions are\n"
              "                            assigned, a broker is up and "
              "commits succeed;\n"
              "                            503 with the reasons otherwise\n",
              f);
}

/* One anomaly line of the log: the evidence and the command that
 * fetches its records. */
static void serve_sink(void *opaque, enum evlog_line what, const char *line,
                       const char *kcat)
{
        (void)opaque;
        (void)what;
        if (kcat)
                log_warn("%s; fetch: %s", line, kcat);
        else
                log_warn("%s", line);
}

static void serve_event(void *opaque, const char *topic, int32_t partition,
                        const struct dedup_event *ev)
{
        evlog_event(opaque, topic, partition, ev, clock_wall_ms());
}

static void serve_tick(void *opaque, int64_t now_ms)
{
        evlog_tick(opaque, now_ms);
}

int cmd_serve(int argc, char **argv, volatile sig_atomic_t *run)
{
        struct cli c;
        struct evlog *ev = calloc(1, sizeof(*ev));
        int rc = CMD_EXIT_ERROR, r;

        memset(&c, 0, sizeof(c));
        if (!ev) {
                fprintf(stderr, "eosaudit: out of memory\n");
                return CMD_EXIT_ERROR;
        }
        r = cli_parse(&c, argc, argv, 1, usage_serve);
        if (r) {
                rc = r > 0 ? CMD_EXIT_CLEAN : CMD_EXIT_ERROR;
                goto out;
        }
        if (!c.db)
                c.db = "eosaudit.db";
        log_info("auditing %zu topic(s) into ledger %s", c.ntopics, c.db);
        /* Anomaly lines grouped per cause and rate-limited (evlog.h). */
        evlog_init(ev, serve_sink, NULL, c.brokers); /* set by cli_audit */
        c.ac.opaque = ev;
        c.ac.on_tick = serve_tick;
        r = cli_audit(&c, 1, run, serve_event);
        evlog_flush(ev, clock_wall_ms());
        if (r)
                goto out;
        log_info("stopped; the ledger is committed");
        rc = CMD_EXIT_CLEAN;
out:
        audit_exit_guard(c.a, rc); /* a librdkafka hang at exit */
        cli_free(&c);
        free(ev);
        return rc;
}
