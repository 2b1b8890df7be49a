/*
 * scan.c - `eosaudit scan`: audits topics up to the high watermarks that
 * held when it began, prints the report and exits 0 (clean), 1
 * (anomalies), 2 (error) or 3 (not audited).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "../auditor/report/report.h"
#include "../auditor/report/report_flow.h"
#include "../base/log.h"
#include "cli.h"
#include "cmd.h"

/* The latest anomalies shown of each kind. */
#define SCAN_JSON_EXAMPLES 10
#define SCAN_TEXT_EXAMPLES 3

static void usage_scan(FILE *f)
{
        fputs("usage: eosaudit scan -b BROKERS -t TOPIC[,TOPIC...] [options]\n"
              "       eosaudit scan --config FILE [options]\n"
              "\n"
              "Audits every partition of TOPIC from its start (or from where "
              "--db left\n"
              "off) up to the high watermark that held when the scan began, "
              "then exits.\n"
              "\n",
              f);
        conf_usage_print(f, CONF_SCAN);
        fputs(
            "\n"
            "Settings may come from --config FILE (`eosaudit config-help` "
            "lists its keys);\n"
            "flags override it.  See `eosaudit serve --help` for the HTTP "
            "endpoints.\n"
            "\n"
            "With --db, a rerun audits only what is new and says so beside "
            "the totals\n"
            "(\"since last run\"); the verdict and exit status are the "
            "ledger's totals.\n"
            "\n"
            "Exit status: 0 clean (records were audited, no anomaly), 1 "
            "anomalies\n"
            "found (duplicate, gap, out_of_order, fenced, malformed, "
            "redelivered, or\n"
            "a coverage gap; with --source: a source record lost or duplicated,\n"
            "or an unexpected sink record), 2 error, 3 not audited (no anomaly, but no "
            "record\n"
            "carried the eos.* headers and no message id was checked: an "
            "empty\n"
            "topic, or producers that stamp nothing; see --dedup-key).\n",
            f);
}

/* Every topic audited: the sinks (-t), then a flow's sources. */
static size_t scan_topics(const struct cli *c,
                          const char *all[2 * CLI_TOPICS_MAX])
{
        size_t n = 0, i;

        for (i = 0; i < c->ntopics; i++)
                all[n++] = c->topics[i];
        for (i = 0; i < c->nsources; i++)
                all[n++] = c->sources[i];
        return n;
}

/* What scan keeps between the ledger's opening and the report. */
struct scan_ctx {
        struct ledger_summary prev[2 * CLI_TOPICS_MAX]; /* scan_topics() */
        int have_prev; /* --db: prev[] holds the ledger's totals before
                          this run (partitions 0: no run of that topic) */
};

/* The ledger's totals before this run: what is new is shown beside the
 * totals (a rerun on --db otherwise repeats itself). */
static int scan_prev(struct cli *c)
{
        struct scan_ctx *x = c->opaque;
        const char *all[2 * CLI_TOPICS_MAX];
        char errstr[512];
        size_t i, n = scan_topics(c, all);

        for (i = 0; i < n; i++) {
                if (ledger_summary(audit_ledger(c->a), all[i], &x->prev[i],
                                   errstr, sizeof(errstr))) {
                        cli_error(c, "report: %s", errstr);
                        return -1;
                }
        }
        return 0;
}

/* The verdict of every topic (what the exit status says, by the same
 * rule as --json's "verdict": report_verdict_topics()), with a warning
 * for each topic nobody could audit or that is mostly untracked.
 * Returns 0, or -1 after saying why. */
static int scan_verdict(struct cli *c, enum report_verdict *v)
{
        struct ledger_summary s;
        const char *all[2 * CLI_TOPICS_MAX];
        char errstr[512];
        size_t i, n = scan_topics(c, all);
        size_t sinks = c->nsources ? c->ntopics : 0;

        for (i = sinks; i < n; i++) {
                enum report_verdict tv;
                if (ledger_summary(audit_ledger(c->a), all[i], &s, errstr,
                                   sizeof(errstr))) {
                        cli_error(c, "report: %s", errstr);
                        return -1;
                }
                /* A flow's sinks (i < sinks) are judged by lineage: no
                 * headers of their own is no warning. */
                tv = report_verdict(&s);
                if (tv == REPORT_NOT_AUDITED)
                        log_warn("topic '%s' was not audited: %s", all[i],
                                 s.records ? "no record carries the eos.* "
                                             "headers and no message id was "
                                             "checked (--dedup-key checks "
                                             "ids of unstamped records)"
                                           : "it holds no record");
                else if (report_mostly_untracked(&s))
                        log_warn("topic '%s': %llu of %llu records carry no "
                                 "eos.* headers and were not audited",
                                 all[i], (unsigned long long)s.untracked,
                                 (unsigned long long)s.records);
        }
        if (report_verdict_topics(audit_ledger(c->a), all, n, sinks, v, errstr,
                                  sizeof(errstr))) {
                cli_error(c, "report: %s", errstr);
                return -1;
        }
        if (c->nsources) {
                struct ledger_flow_summary fs;
                if (ledger_flow_summary(audit_ledger(c->a), &fs, errstr,
                                        sizeof(errstr))) {
                        cli_error(c, "report: %s", errstr);
                        return -1;
                }
                /* Nothing to trace is not a clean flow: say so. */
                if (fs.source_no_id && !fs.source_records)
                        fprintf(stderr,
                                "eosaudit: flow: none of the %llu source "
                                "records carries an id (--dedup-key %s): "
                                "their lineage cannot be traced\n",
                                (unsigned long long)fs.source_no_id,
                                c->ac.dedup_key ? c->ac.dedup_key : "msgid");
                else if (fs.source_no_id)
                        fprintf(stderr,
                                "eosaudit: flow: %llu source records carry "
                                "no id (--dedup-key %s) and are not traced\n",
                                (unsigned long long)fs.source_no_id,
                                c->ac.dedup_key ? c->ac.dedup_key : "msgid");
        }
        return 0;
}

/* The flow object of --json: the ledger's figures and evidence, and how
 * records were made due. */
static int scan_flow_json(struct cli *c, json_t *j, char *errstr,
                          size_t errstr_size)
{
        struct audit_flow_info fi;
        json_t *f = report_flow_json(audit_ledger(c->a), -1, errstr,
                                     errstr_size);

        if (!f)
                return -1;
        audit_flow_info_get(c->a, &fi);
        json_object_set_new(f, "due_by",
                            json_string(c->ac.processor_group
                                            ? "processor-group"
                                        : c->ac.processor_offsets_topic
                                            ? "processor-offsets"
                                            : "sink-progress"));
        json_object_set_new(f, "processor_group",
                            c->ac.processor_group
                                ? json_string(c->ac.processor_group)
                                : json_null());
        json_object_set_new(f, "processor_offsets_topic",
                            c->ac.processor_offsets_topic
                                ? json_string(c->ac.processor_offsets_topic)
                                : json_null());
        json_object_set_new(f, "group_committed",
                            json_boolean(fi.group_committed));
        json_object_set_new(f, "processor_lag", report_opt_json(fi.lag));
        json_object_set_new(j, "flow", f);
        return 0;
}

/* The report: one JSON object with --json, else the human one. */
static int scan_report(struct cli *c)
{
        struct scan_ctx *x = c->opaque;
        const char *all[2 * CLI_TOPICS_MAX];
        size_t n = scan_topics(c, all);
        struct report_opts o = {
            .brokers = c->brokers[0] ? c->brokers : NULL,
            .prev = x->have_prev ? x->prev : NULL,
            .sinks = c->nsources ? c->ntopics : 0,
        };
        char errstr[512];

        if (c->json) {
                json_t *j;
                o.examples = SCAN_JSON_EXAMPLES;
                j = report_summary_json(audit_ledger(c->a), all, n, &o, errstr,
                                        sizeof(errstr));
                if (!j || (c->nsources &&
                           scan_flow_json(c, j, errstr, sizeof(errstr)))) {
                        cli_error(c, "report: %s", errstr);
                        json_decref(j);
                        return -1;
                }
                json_dumpf(j, stdout, JSON_COMPACT);
                fputc('\n', stdout);
                json_decref(j);
                return 0;
        }
        o.examples = SCAN_TEXT_EXAMPLES;
        if (report_summary_print(stdout, audit_ledger(c->a), all, n, &o,
                                 errstr, sizeof(errstr)) ||
            (c->nsources && report_flow_print(stdout, audit_ledger(c->a), 10,
                                              errstr, sizeof(errstr)))) {
                cli_error(c, "report: %s", errstr);
                return -1;
        }
        return 0;
}

/* Under --json an error is a JSON object on stdout too, so that a script
 * reading stdout learns why there is no report. */
static void scan_json_error(const struct cli *c)
{
        json_t *j;

        if (!c->json)
                return;
        j = json_pack("{s:s, s:s, s:i}", "verdict", "error", "error",
                      c->error[0] ? c->error : "unknown error", "exit_status",
                      CMD_EXIT_ERROR);
        if (!j)
                return;
        json_dumpf(j, stdout, JSON_COMPACT);
        fputc('\n', stdout);
        json_decref(j);
}

int cmd_scan(int argc, char **argv, volatile sig_atomic_t *run)
{
        struct cli c;
        struct cli_tmpdb tmp;
        struct scan_ctx *x = calloc(1, sizeof(*x));
        enum report_verdict v;
        int rc = CMD_EXIT_ERROR, r;

        memset(&c, 0, sizeof(c));
        memset(&tmp, 0, sizeof(tmp));
        if (!x) {
                fprintf(stderr, "eosaudit: out of memory\n");
                return CMD_EXIT_ERROR;
        }
        r = cli_parse(&c, argc, argv, 0, usage_scan);
        if (r > 0) {
                rc = CMD_EXIT_CLEAN;
                goto out;
        }
        if (r < 0)
                goto fail;
        if (!c.db) {
                if (cli_tmpdb_make(&tmp)) {
                        cli_error(&c,
                                  "cannot create a temporary ledger "
                                  "under $TMPDIR (else /tmp): %s",
                                  strerror(errno));
                        goto fail;
                }
                c.db = tmp.path;
        } else {
                /* A ledger kept between runs: say what each run adds. */
                x->have_prev = 1;
        }
        c.opaque = x;
        if (x->have_prev)
                c.on_ready = scan_prev;
        if (cli_audit(&c, 0, run, NULL) || scan_verdict(&c, &v) ||
            scan_report(&c))
                goto fail;
        rc = v == REPORT_ANOMALIES     ? CMD_EXIT_ANOMALIES
             : v == REPORT_NOT_AUDITED ? CMD_EXIT_NOT_AUDITED
                                       : CMD_EXIT_CLEAN;
        goto out;
fail:
        scan_json_error(&c);
out:
        cli_free(&c);
        cli_tmpdb_remove(&tmp);
        free(x);
        return rc;
}
