/*
 * scan.c - `eosaudit scan`: audits topics up to the high watermarks that
 * held when it began, prints the report and exits 0 (clean), 1
 * (anomalies) or 2 (error).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "../auditor/report.h"
#include "../auditor/report_flow.h"
#include "cli.h"
#include "cmd.h"

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
        fputs("\n"
              "Settings may come from --config FILE (`eosaudit config-help` "
              "lists its keys);\n"
              "flags override it.  See `eosaudit serve --help` for the HTTP "
              "endpoints.\n"
              "\n"
              "Exit status: 0 no anomaly, 1 anomalies found (duplicate, gap,\n"
              "out_of_order, fenced, malformed, redelivered, or a coverage\n"
              "gap; with --source: a source record lost or duplicated, or an\n"
              "unexpected sink record), 2 error.\n",
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

/* The anomalies of every topic, as report_anomaly_total() counts them:
 * what the exit status says.  Returns 0, or -1 after saying why. */
static int scan_anomalies(struct cli *c, uint64_t *bad)
{
        struct ledger_summary s;
        const char *all[2 * CLI_TOPICS_MAX];
        char errstr[512];
        size_t i, n = scan_topics(c, all);

        *bad = 0;
        for (i = 0; i < n; i++) {
                if (ledger_summary(audit_ledger(c->a), all[i], &s,
                                   errstr, sizeof(errstr))) {
                        fprintf(stderr, "eosaudit: report: %s\n", errstr);
                        return -1;
                }
                *bad += report_anomaly_total(&s);
        }
        if (c->nsources) {
                struct ledger_flow_summary fs;
                if (ledger_flow_summary(audit_ledger(c->a), &fs, errstr,
                                        sizeof(errstr))) {
                        fprintf(stderr, "eosaudit: report: %s\n", errstr);
                        return -1;
                }
                *bad += report_flow_bad(&fs);
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
                            json_string(fi.group ? "processor-group"
                                                 : "sink-progress"));
        json_object_set_new(f, "processor_group",
                            c->ac.processor_group
                                ? json_string(c->ac.processor_group)
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
        const char *all[2 * CLI_TOPICS_MAX];
        size_t n = scan_topics(c, all);
        char errstr[512];

        if (c->json) {
                json_t *j = report_summary_json(audit_ledger(c->a), all, n,
                                                20, errstr, sizeof(errstr));
                if (!j || (c->nsources &&
                           scan_flow_json(c, j, errstr, sizeof(errstr)))) {
                        fprintf(stderr, "eosaudit: report: %s\n", errstr);
                        json_decref(j);
                        return -1;
                }
                json_dumpf(j, stdout, JSON_COMPACT);
                fputc('\n', stdout);
                json_decref(j);
                return 0;
        }
        if (report_summary_print(stdout, audit_ledger(c->a), all, n, 10,
                                 errstr, sizeof(errstr)) ||
            (c->nsources && report_flow_print(stdout, audit_ledger(c->a), 10,
                                              errstr, sizeof(errstr)))) {
                fprintf(stderr, "eosaudit: report: %s\n", errstr);
                return -1;
        }
        return 0;
}

int cmd_scan(int argc, char **argv, volatile sig_atomic_t *run)
{
        struct cli c;
        struct cli_tmpdb tmp;
        uint64_t bad;
        int rc = CMD_EXIT_ERROR, r;

        memset(&c, 0, sizeof(c));
        memset(&tmp, 0, sizeof(tmp));
        r = cli_parse(&c, argc, argv, 0, usage_scan);
        if (r) {
                rc = r > 0 ? CMD_EXIT_CLEAN : CMD_EXIT_ERROR;
                goto out;
        }
        if (!c.db) {
                if (cli_tmpdb_make(&tmp)) {
                        fprintf(stderr, "eosaudit: cannot create a temporary "
                                        "ledger: %s\n",
                                strerror(errno));
                        goto out;
                }
                c.db = tmp.path;
        }
        if (cli_audit(&c, 0, run, NULL) || scan_report(&c) ||
            scan_anomalies(&c, &bad))
                goto out;
        rc = bad ? CMD_EXIT_ANOMALIES : CMD_EXIT_CLEAN;
out:
        cli_free(&c);
        cli_tmpdb_remove(&tmp);
        return rc;
}
