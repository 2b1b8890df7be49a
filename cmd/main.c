/*
 * main.c - eosaudit's entry point: signals, then the subcommand (one file
 * each, see cmd.h).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "cmd.h"

static volatile sig_atomic_t run = 1;

static void on_signal(int sig)
{
        (void)sig;
        run = 0;
}

static void signals_install(void)
{
        struct sigaction sa;

        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
}

static void usage_main(FILE *f)
{
        fprintf(
            f,
            "usage: eosaudit COMMAND [options]\n"
            "\n"
            "Checks that a Kafka topic delivered every record exactly once, and shows\n"
            "the evidence when it did not.  Producers stamp three headers on each\n"
            "record (eos.producer, eos.epoch, eos.seq); eosaudit reads the topic and\n"
            "reports duplicates, gaps (lost records), out-of-order records, writes\n"
            "from fenced (zombie) sessions, malformed headers, and records\n"
            "redelivered by a producer that restarted (by message id).\n"
            "\n"
            "Start here, on your own topic:\n"
            "  eosaudit scan -b BROKER:9092 -t TOPIC\n"
            "\n"
            "commands:\n"
            "  scan      audit topics up to their current end, report, exit (0 clean,\n"
            "            1 anomalies, 2 error, 3 not audited: no record carried the\n"
            "            headers)\n"
            "  serve     audit topics continuously, with HTTP (dashboard, /metrics,\n"
            "            /api/v1/...)\n"
            "  produce   the reference producer (stamps the header contract, can\n"
            "            inject faults)\n"
            "  process   the reference processor: consume, transform, produce\n"
            "  demo      an embedded demo on librdkafka's mock cluster (with\n"
            "            --listen, a dashboard to look at)\n"
            "  config-help [--markdown|--example|--flags|--check FILE]\n"
            "            the keys of the configuration file (--config FILE) of scan\n"
            "            and serve, their types, ranges and defaults; --flags every\n"
            "            command's flags; --check FILE validates a file\n"
            "  version   print the version\n"
            "\n"
            "`eosaudit COMMAND --help` (or -h) describes each command; man eosaudit.\n");
}

int main(int argc, char **argv)
{
        static const struct {
                const char *name;
                cmd_fn *fn;
        } cmds[] = {
            {"scan", cmd_scan},       {"serve", cmd_serve},
            {"produce", cmd_produce}, {"demo", cmd_demo},
            {"process", cmd_process}, {"config-help", cmd_config_help},
        };
        const char *cmd = argc > 1 ? argv[1] : NULL;
        size_t i;

        signals_install();
        if (!cmd || !strcmp(cmd, "--help") || !strcmp(cmd, "-h") ||
            !strcmp(cmd, "help")) {
                usage_main(cmd ? stdout : stderr);
                return cmd ? CMD_EXIT_CLEAN : CMD_EXIT_ERROR;
        }
        if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
                if (argc > 2 &&
                    (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
                        printf("usage: eosaudit version\n\n"
                               "Prints the versions of eosaudit and of "
                               "the librdkafka it runs with.\n");
                        return CMD_EXIT_CLEAN;
                }
                if (argc > 2) {
                        fprintf(stderr,
                                "eosaudit: %s takes no arguments, "
                                "not '%s'\n",
                                cmd, argv[2]);
                        return CMD_EXIT_ERROR;
                }
                printf("eosaudit %s (librdkafka %s)\n", EOSAUDIT_VERSION,
                       rd_kafka_version_str());
                return CMD_EXIT_CLEAN;
        }
        for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
                if (!strcmp(cmd, cmds[i].name))
                        return cmds[i].fn(argc - 1, argv + 1, &run);
        fprintf(stderr,
                "eosaudit: unknown command '%s' (see `eosaudit "
                "--help`)\n",
                cmd);
        return CMD_EXIT_ERROR;
}
