/*
 * config_help.c - `eosaudit config-help`: the documentation of the
 * configuration file, from the option table, and --check FILE.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "conf.h"

static void usage_config_help(FILE *f)
{
        fputs(
            "usage: eosaudit config-help [--markdown | --example | --flags | "
            "--man |\n"
            "                            --check FILE]\n"
            "\n"
            "Describes the configuration file of scan and serve (--config "
            "FILE): as\n"
            "text, as docs/CONFIG.md (--markdown), or as an example file "
            "with every\n"
            "key at its default, commented out (--example).  --flags "
            "prints the flags\n"
            "of every command as docs/FLAGS.md, --man as the OPTIONS "
            "sections of\n"
            "docs/eosaudit.1.  --check FILE reads FILE as serve would and "
            "says whether\n"
            "it is valid (exit status 0) or which line is not (FILE:LINE: "
            "message,\n"
            "exit status 2).\n",
            f);
}

/* --check FILE: FILE as `serve --config FILE` would read it. */
static int config_check(const char *path)
{
        char *argv[] = {(char *)"serve", (char *)"--config", (char *)path,
                        NULL};
        char errstr[1024];
        struct conf c;
        int r;

        if (conf_init(&c)) {
                fprintf(stderr, "eosaudit: out of memory\n");
                return CMD_EXIT_ERROR;
        }
        r = conf_argv_parse(&c, 3, argv, errstr, sizeof(errstr));
        conf_release(&c);
        if (r) {
                fprintf(stderr, "eosaudit: %s\n", errstr);
                return CMD_EXIT_ERROR;
        }
        printf("%s: ok\n", path);
        return CMD_EXIT_CLEAN;
}

/* eosaudit config-help [--markdown | --example | --flags | --man |
 *                       --check FILE] */
int cmd_config_help(int argc, char **argv, volatile sig_atomic_t *run)
{
        enum conf_doc fmt = CONF_DOC_TEXT;
        (void)run;
        const char *opt = argc > 1 ? argv[1] : NULL;

        if (opt && !strcmp(opt, "--check") && argc == 3)
                return config_check(argv[2]);
        if (opt && (!strcmp(opt, "--help") || !strcmp(opt, "-h")) &&
            argc == 2) {
                usage_config_help(stdout);
                return CMD_EXIT_CLEAN;
        }
        if (opt && !strcmp(opt, "--markdown") && argc == 2) {
                fmt = CONF_DOC_MARKDOWN;
        } else if (opt && !strcmp(opt, "--example") && argc == 2) {
                fmt = CONF_DOC_EXAMPLE;
        } else if (opt && !strcmp(opt, "--flags") && argc == 2) {
                fmt = CONF_DOC_FLAGS;
        } else if (opt && !strcmp(opt, "--man") && argc == 2) {
                fmt = CONF_DOC_MAN;
        } else if (opt) {
                fprintf(stderr, "eosaudit: bad arguments to config-help (see "
                                "`eosaudit config-help --help`)\n");
                return CMD_EXIT_ERROR;
        }
        conf_doc_print(stdout, fmt);
        if (fflush(stdout) || ferror(stdout)) {
                fprintf(stderr, "eosaudit: cannot write: %s\n",
                        strerror(errno));
                return CMD_EXIT_ERROR;
        }
        return CMD_EXIT_CLEAN;
}
