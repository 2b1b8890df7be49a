/*
 * cmd.h - the subcommands of eosaudit, one file each: scan.c, serve.c
 * (with what they share in cli.c), produce.c, demo.c, config_help.c.
 * main.c only dispatches to them.
 *
 * Invariants
 *  - A command takes argv with argv[0] its own name, parses it through
 *    the option table (conf.h) and returns the process's exit status.
 *  - *run is cleared by SIGINT/SIGTERM (main.c installs the handlers); a
 *    command stops as soon as it can, and still commits or flushes.
 *  - Messages go to stderr prefixed "eosaudit: " ("produce: " for
 *    produce, as its summary line is).
 */
#ifndef EOSAUDIT_CMD_H
#define EOSAUDIT_CMD_H

#include <signal.h>

#ifndef EOSAUDIT_VERSION
#define EOSAUDIT_VERSION "0.1.0"
#endif

/* Exit statuses of every command. */
#define CMD_EXIT_CLEAN 0     /* no anomaly; done */
#define CMD_EXIT_ANOMALIES 1 /* anomalies found (produce: records lost) */
#define CMD_EXIT_ERROR 2     /* usage, configuration or run-time error */
/* scan: no anomaly, but nothing audited either (no record carried the
 * eos.* headers, no message id was checked) */
#define CMD_EXIT_NOT_AUDITED 3

typedef int(cmd_fn)(int argc, char **argv, volatile sig_atomic_t *run);

cmd_fn cmd_scan;
cmd_fn cmd_serve;
cmd_fn cmd_produce;
cmd_fn cmd_demo;
cmd_fn cmd_process;
cmd_fn cmd_config_help;

#endif /* EOSAUDIT_CMD_H */
