/*
 * process.c - `eosaudit process`: the command line of the reference
 * processor (producer/process.h), from the option table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../producer/process.h"
#include "cmd.h"
#include "conf.h"

#define PROCESS_SOURCES_MAX 64

static void process_usage(FILE *f)
{
        fputs("usage: eosaudit process -b BROKERS --source TOPIC[,...] "
              "--sink TOPIC --group GROUP\n"
              "                        [options]\n"
              "\n"
              "Reads the sources in consumer group GROUP (read_committed) and "
              "writes every\n"
              "record to the sink with its value and headers (eos.* "
              "forwarded, as Kafka\n"
              "Streams does): exactly-once in transactions with "
              "rd_kafka_send_offsets_to_\n"
              "transaction, or at-least-once.  Faults on demand, so that "
              "`eosaudit scan\n"
              "--source` has a subject whose truth is known.\n"
              "\n",
              f);
        conf_usage_print(f, CONF_PROCESS);
        fputs("\n"
              "Prints one JSON line on stdout at the end: consumed, produced, "
              "dropped,\n"
              "transactions, aborted, commits, restarts (counts of the last "
              "session; the\n"
              "crashed one's die with it).\n"
              "Exit status: 0 done, 2 usage, configuration or run-time "
              "error.\n",
              f);
}

int cmd_process(int argc, char **argv, volatile sig_atomic_t *run)
{
        struct process_opts o;
        struct process_stats st;
        struct conf c;
        const char *sources[PROCESS_SOURCES_MAX];
        char *sources_buf = NULL, **kv = NULL;
        char errstr[1024];
        int status = CMD_EXIT_ERROR, r, n;

        if (conf_init(&c)) {
                fprintf(stderr, "process: out of memory\n");
                return CMD_EXIT_ERROR;
        }
        r = conf_argv_parse(&c, argc, argv, errstr, sizeof(errstr));
        if (r > 0) {
                process_usage(stdout);
                status = CMD_EXIT_CLEAN;
                goto out;
        }
        if (r < 0) {
                fprintf(stderr, "process: %s\n", errstr);
                goto out;
        }
        if (!conf_str(&c, CONF_PROC_SOURCE) || !conf_str(&c, CONF_PROC_SINK) ||
            !conf_str(&c, CONF_PROC_GROUP)) {
                fprintf(stderr, "process: --source, --sink and --group are "
                                "required\n");
                goto out;
        }
        if (conf_int(&c, CONF_PROC_ABORT_EVERY) &&
            conf_int(&c, CONF_PROC_MODE) != PROCESS_EXACTLY_ONCE) {
                fprintf(stderr, "process: --abort-every needs --mode "
                                "exactly-once\n");
                goto out;
        }
        n = conf_list_split(conf_str(&c, CONF_PROC_SOURCE), &sources_buf,
                            sources, PROCESS_SOURCES_MAX);
        if (n < 0 || conf_kafka_kv(&c, &kv)) {
                fprintf(stderr, "process: out of memory\n");
                goto out;
        }
        process_opts_defaults(&o);
        o.brokers = conf_str(&c, CONF_BROKERS);
        o.sources = sources;
        o.source_cnt = (size_t)n;
        o.sink = conf_str(&c, CONF_PROC_SINK);
        o.group = conf_str(&c, CONF_PROC_GROUP);
        o.transactional_id = conf_str(&c, CONF_PROC_TXN_ID);
        o.mode = (enum process_mode)conf_int(&c, CONF_PROC_MODE);
        o.batch = (uint64_t)conf_int(&c, CONF_PROC_BATCH);
        o.crash_after = (uint64_t)conf_int(&c, CONF_PROC_CRASH_AFTER);
        o.abort_every = (uint64_t)conf_int(&c, CONF_PROC_ABORT_EVERY);
        o.drop_every = (uint64_t)conf_int(&c, CONF_PROC_DROP_EVERY);
        o.rekey = conf_int(&c, CONF_PROC_REKEY) > 0;
        o.idle_exit_ms = conf_int(&c, CONF_PROC_IDLE_EXIT_MS);
        o.conf_file = conf_str(&c, CONF_PRODUCE_PROPERTIES_FILE);
        o.conf_kv = (const char *const *)kv;
        o.conf_kv_cnt = c.kafka_cnt;
        o.run = run;
        r = process_run(&o, &st, errstr, sizeof(errstr));
        if (r)
                fprintf(stderr, "process: %s\n", errstr);
        printf("{\"consumed\":%llu,\"produced\":%llu,\"dropped\":%llu,"
               "\"transactions\":%llu,\"aborted\":%llu,\"commits\":%llu,"
               "\"restarts\":%d,\"ok\":%s}\n",
               (unsigned long long)st.consumed,
               (unsigned long long)st.produced, (unsigned long long)st.dropped,
               (unsigned long long)st.transactions,
               (unsigned long long)st.aborted, (unsigned long long)st.commits,
               st.restarts, r ? "false" : "true");
        fflush(stdout);
        status = r ? CMD_EXIT_ERROR : CMD_EXIT_CLEAN;
out:
        conf_kafka_kv_free(kv);
        free(sources_buf);
        conf_release(&c);
        return status;
}
