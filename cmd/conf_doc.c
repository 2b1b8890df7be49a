/*
 * conf_doc.c - the options part of each command's --help, the
 * documentation of the configuration file (`eosaudit config-help`,
 * docs/CONFIG.md, deploy/eosaudit.conf.example) and the flags of every
 * command (docs/FLAGS.md and the OPTIONS sections of docs/eosaudit.1),
 * from the option table (conf_table.c).
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "conf.h"
#include "conf_internal.h"

/* --help: where an option's help starts. */
#define CONF_HELP_COL 28
static const char conf_help_indent[] = "                            ";

/* Prints text word-wrapped to width: the first line continues a line
 * already at column col, the others start with prefix.  Backticks are
 * dropped unless markdown.  Returns the column reached. */
static size_t conf_wrap(FILE *f, const char *text, size_t col,
                        const char *prefix, size_t width, int markdown)
{
        const char *p = text;
        size_t plen = strlen(prefix);

        while (*p) {
                const char *w;
                size_t wl = 0, vis = 0, i;

                while (*p == ' ')
                        p++;
                w = p;
                while (p[wl] && p[wl] != ' ')
                        wl++;
                if (!wl)
                        break;
                for (i = 0; i < wl; i++)
                        vis += markdown || w[i] != '`';
                if (col > plen && col + 1 + vis > width) {
                        fprintf(f, "\n%s", prefix);
                        col = plen;
                } else if (col > plen) {
                        fputc(' ', f);
                        col++;
                }
                for (i = 0; i < wl; i++)
                        if (markdown || w[i] != '`')
                                fputc(w[i], f);
                col += vis;
                p = w + wl;
        }
        return col;
}

/* help with its first letter in upper case, into buf: a sentence. */
static const char *conf_sentence(const char *help, char *buf, size_t size)
{
        snprintf(buf, size, "%s", help);
        if (buf[0] >= 'a' && buf[0] <= 'z')
                buf[0] = (char)(buf[0] - 'a' + 'A');
        return buf;
}

/* The default of o as people read it. */
static const char *conf_default_text(const struct conf_option *o)
{
        return o->def ? o->def : o->def_doc;
}

/* The range of o as people read it, into buf. */
static const char *conf_range_text(const struct conf_option *o, char *buf,
                                   size_t size)
{
        switch (o->type) {
        case CONF_T_STRING:
                snprintf(buf, size, "%" PRId64 "..%" PRId64 " bytes", o->min,
                         o->max);
                break;
        case CONF_T_LIST:
                snprintf(buf, size, "%" PRId64 "..%" PRId64 " names", o->min,
                         o->max);
                break;
        case CONF_T_INT:
                if (o->max == INT64_MAX)
                        snprintf(buf, size, "%" PRId64 "..2^63-1", o->min);
                else
                        snprintf(buf, size, "%" PRId64 "..%" PRId64, o->min,
                                 o->max);
                break;
        case CONF_T_U64:
                snprintf(buf, size, "0..2^64-1");
                break;
        case CONF_T_DOUBLE:
                if (isinf(o->dmax))
                        snprintf(buf, size, "%g..", o->dmin);
                else
                        snprintf(buf, size, "%g..%g", o->dmin, o->dmax);
                break;
        case CONF_T_ENUM:
                conf_choices_text(o->choices, buf, size);
                break;
        case CONF_T_ADDR:
                snprintf(buf, size, "off, ADDR:PORT, [V6ADDR]:PORT, :PORT");
                break;
        case CONF_T_KAFKA:
                snprintf(buf, size, "what librdkafka accepts");
                break;
        case CONF_T_FLAG:
                buf[0] = '\0';
                break;
        }
        return buf;
}

static const char *conf_type_name(enum conf_type t)
{
        static const char *const names[] = {"string",  "list",     "integer",
                                            "integer", "number",   "enum",
                                            "address", "property", "flag"};
        return names[t];
}

void conf_usage_print(FILE *f, unsigned which)
{
        char left[64], text[1024];
        size_t i, col;

        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];
                const char *def = conf_default_text(o);
                const char *meta = o->metavar ? o->metavar : "";
                const char *sp = o->metavar ? " " : "";

                if (!(o->where & which))
                        continue;
                if (o->flag && o->short_flag)
                        snprintf(left, sizeof(left), "  -%c, --%s%s%s",
                                 o->short_flag, o->flag, sp, meta);
                else if (o->flag)
                        snprintf(left, sizeof(left), "      --%s%s%s", o->flag,
                                 sp, meta);
                else
                        snprintf(left, sizeof(left), "  -%c%s%s",
                                 o->short_flag, sp, meta);
                if (def && o->type != CONF_T_KAFKA)
                        snprintf(text, sizeof(text), "%s (default: %s)",
                                 o->help, def);
                else
                        snprintf(text, sizeof(text), "%s", o->help);
                fputs(left, f);
                col = strlen(left);
                if (col + 2 > CONF_HELP_COL)
                        fprintf(f, "\n%*s", CONF_HELP_COL, "");
                else
                        fprintf(f, "%*s", (int)(CONF_HELP_COL - col), "");
                conf_wrap(f, text, CONF_HELP_COL, conf_help_indent, 79, 0);
                fputc('\n', f);
        }
}

static void conf_doc_text(FILE *f)
{
        char range[256];
        size_t i;

        fputs("eosaudit configuration file (scan and serve --config FILE)\n"
              "\n",
              f);
        for (i = 0; i < conf_doc_intro_cnt; i++) {
                conf_wrap(f, conf_doc_intro[i], 0, "", 76, 0);
                fputs("\n\n", f);
        }
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];
                const char *def = conf_default_text(o);

                if (!(o->where & CONF_FILE))
                        continue;
                fprintf(f, "%s = %s", o->key,
                        o->type == CONF_T_KAFKA ? "VALUE" : o->metavar);
                if (o->flag || o->short_flag) {
                        fputs("    (", f);
                        if (o->short_flag)
                                fprintf(f, "-%c%s", o->short_flag,
                                        o->flag ? ", " : "");
                        if (o->flag)
                                fprintf(f, "--%s", o->flag);
                        fputs(")", f);
                }
                fputs("\n    ", f);
                conf_wrap(f, o->help, 4, "    ", 76, 0);
                fprintf(f, "\n    type: %s; range: %s\n    default:",
                        conf_type_name(o->type),
                        conf_range_text(o, range, sizeof(range)));
                conf_wrap(f, def ? def : "none", 12, "    ", 76, 0);
                fputs("\n\n", f);
        }
}

/* The GitHub anchor of a heading: lower case, alphanumerics, '-' and
 * '_' kept, blanks to '-', everything else dropped. */
static void conf_md_anchor(const char *heading, char *buf, size_t size)
{
        size_t n = 0;
        const char *p;

        for (p = heading; *p && n + 1 < size; p++) {
                char ch = *p;
                if (ch >= 'A' && ch <= 'Z')
                        buf[n++] = (char)(ch - 'A' + 'a');
                else if ((ch >= 'a' && ch <= 'z') ||
                         (ch >= '0' && ch <= '9') || ch == '-' || ch == '_')
                        buf[n++] = ch;
                else if (ch == ' ')
                        buf[n++] = '-';
        }
        buf[n] = '\0';
}

/* "`-b`, `--brokers`" into f. */
static void conf_md_flags(FILE *f, const struct conf_option *o)
{
        if (o->short_flag)
                fprintf(f, "`-%c`%s", o->short_flag, o->flag ? ", " : "");
        if (o->flag)
                fprintf(f, "`--%s`", o->flag);
        if (!o->short_flag && !o->flag)
                fputs("none", f);
}

static void conf_doc_markdown(FILE *f)
{
        char range[256], anchor[64], text[1024];
        size_t i;

        fputs("# The configuration file\n"
              "\n"
              "<!-- Generated by `eosaudit config-help --markdown` from the "
              "option table in\n"
              "     cmd/conf_table.c; tests/integration/t_93_deploy_lint.sh "
              "fails when they\n"
              "     differ. Do not edit by hand. -->\n"
              "\n",
              f);
        for (i = 0; i < conf_doc_intro_cnt; i++) {
                conf_wrap(f, conf_doc_intro[i], 0, "", 76, 1);
                fputs("\n\n", f);
        }
        fputs("Every key, commented out at its default, is in\n"
              "[deploy/eosaudit.conf.example](../deploy/eosaudit.conf.example)"
              "\n(`eosaudit config-help --example`).\n\n"
              "| key | flag | type | range | default |\n"
              "| --- | --- | --- | --- | --- |\n",
              f);
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];
                const char *def = conf_default_text(o);

                if (!(o->where & CONF_FILE))
                        continue;
                conf_md_anchor(o->key, anchor, sizeof(anchor));
                fprintf(f, "| [`%s`](#%s) | ", o->key, anchor);
                conf_md_flags(f, o);
                fprintf(f, " | %s | %s | %s |\n", conf_type_name(o->type),
                        conf_range_text(o, range, sizeof(range)),
                        def ? def : "none");
        }
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];
                const char *def = conf_default_text(o);

                if (!(o->where & CONF_FILE))
                        continue;
                fprintf(f, "\n## %s\n\n", o->key);
                conf_wrap(f, conf_sentence(o->help, text, sizeof(text)), 0, "",
                          76, 1);
                fputs(".\n\n- flag: ", f);
                conf_md_flags(f, o);
                fprintf(f, "\n- type: %s; range: %s\n- default: %s\n",
                        conf_type_name(o->type),
                        conf_range_text(o, range, sizeof(range)),
                        def ? def : "none");
        }
}

/* text into a Markdown table cell: '|' escaped, nothing else changed. */
static void conf_md_cell(FILE *f, const char *text)
{
        for (; *text; text++) {
                if (*text == '|')
                        fputc('\\', f);
                fputc(*text, f);
        }
}

/* The commands that take o, of those in which, as "scan, serve". */
static void conf_md_commands(FILE *f, const struct conf_option *o,
                             unsigned which)
{
        static const struct {
                unsigned bit;
                const char *name;
        } cmds[] = {{CONF_SCAN, "scan"},
                    {CONF_SERVE, "serve"},
                    {CONF_PRODUCE, "produce"},
                    {CONF_PROCESS, "process"},
                    {CONF_DEMO, "demo"}};
        const char *sep = "";
        size_t i;

        for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
                if (!(o->where & which & cmds[i].bit))
                        continue;
                fprintf(f, "%s%s", sep, cmds[i].name);
                sep = ", ";
        }
}

/* One table of the flags of the commands in which: a "commands" column
 * when which names more than one, the file key (linked to CONFIG.md)
 * when one of them reads the configuration file. */
static void conf_flags_table(FILE *f, unsigned which, int several)
{
        char anchor[64];
        size_t i;

        fputs(several ? "| flag | commands | file key | default | meaning |\n"
                        "| --- | --- | --- | --- | --- |\n"
                      : "| flag | default | meaning |\n"
                        "| --- | --- | --- |\n",
              f);
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];
                const char *def = conf_default_text(o);

                if (!(o->where & which))
                        continue;
                fputs("| ", f);
                conf_md_flags(f, o);
                if (o->metavar)
                        fprintf(f, " *%s*", o->metavar);
                fputs(" | ", f);
                if (several) {
                        conf_md_commands(f, o, which);
                        fputs(" | ", f);
                        if (o->where & CONF_FILE) {
                                conf_md_anchor(o->key, anchor, sizeof(anchor));
                                fprintf(f, "[`%s`](CONFIG.md#%s)", o->key,
                                        anchor);
                        } else {
                                fputs("none", f);
                        }
                        fputs(" | ", f);
                }
                conf_md_cell(f, def                      ? def
                                : o->type == CONF_T_FLAG ? "off"
                                                         : "none");
                fputs(" | ", f);
                conf_md_cell(f, o->help);
                fputs(" |\n", f);
        }
}

/* The commands whose flags docs/FLAGS.md and the man page list, one
 * section each: its title there, and its introduction in Markdown and in
 * plain text. */
static const struct {
        unsigned which;
        const char *title, *man_title, *md, *text;
} conf_doc_sections[] = {
    {CONF_SCAN | CONF_SERVE, "scan and serve", "OPTIONS OF SCAN AND SERVE",
     "The audit. Both commands parse the same flags, so that one "
     "configuration file serves both: a flag of the other command is "
     "accepted and has no effect, except `scan --group`, which is refused. "
     "A flag with a file key may be set in the configuration file instead "
     "(`--config FILE`, [CONFIG.md](CONFIG.md)); the flag wins.",
     "Both commands parse the same flags, so that one configuration file "
     "serves both: a flag of the other command is accepted and has no "
     "effect, except `scan --group`, which is refused. Every option but "
     "the command-line switches can also be set in the configuration file "
     "given with `--config`, under the key named in brackets; flags "
     "override the file."},
    {CONF_PRODUCE, "produce", "OPTIONS OF PRODUCE",
     "The reference producer: it stamps the header contract and can "
     "inject faults.",
     NULL},
    {CONF_PROCESS, "process", "OPTIONS OF PROCESS",
     "The reference processor, for the flow audit ([FLOW.md](FLOW.md)).",
     NULL},
    {CONF_DEMO, "demo", "OPTIONS OF DEMO",
     "The mock cluster, the reference producer with injected faults, and "
     "the audit.",
     NULL},
};
#define CONF_DOC_SECTIONS                                                     \
        (sizeof(conf_doc_sections) / sizeof(conf_doc_sections[0]))

static void conf_doc_flags(FILE *f)
{
        size_t i;

        fputs("# The flags of every command\n"
              "\n"
              "<!-- Generated by `eosaudit config-help --flags` from the "
              "option table in\n"
              "     cmd/conf_table.c; tests/integration/t_93_deploy_lint.sh "
              "fails when they\n"
              "     differ. Do not edit by hand. -->\n"
              "\n"
              "`eosaudit COMMAND --help` prints the same, and `man "
              "eosaudit` describes\n"
              "every command; `eosaudit config-help --help` gives "
              "config-help's own flags.\n",
              f);
        for (i = 0; i < CONF_DOC_SECTIONS; i++) {
                unsigned which = conf_doc_sections[i].which;

                fprintf(f, "\n## %s\n\n", conf_doc_sections[i].title);
                conf_wrap(f, conf_doc_sections[i].md, 0, "", 76, 1);
                fputs("\n\n", f);
                conf_flags_table(f, which, (which & (which - 1)) != 0);
        }
}

/* Writes text as roff filled text: words wrapped at 76 columns, '\' and
 * '-' escaped, `code` in bold, a line that would start with '.' or '\''
 * guarded (it would be a request).  *col is the column reached, 0 at the
 * start of a line. */
static void conf_roff_text(FILE *f, const char *text, size_t *col)
{
        const char *p = text;
        int bold = 0;

        while (*p) {
                const char *w;
                size_t wl = 0, i;

                while (*p == ' ')
                        p++;
                w = p;
                while (w[wl] && w[wl] != ' ')
                        wl++;
                if (!wl)
                        break;
                if (*col && *col + 1 + wl > 76) {
                        fputc('\n', f);
                        *col = 0;
                } else if (*col) {
                        fputc(' ', f);
                        (*col)++;
                }
                if (!*col && (w[0] == '.' || w[0] == '\''))
                        fputs("\\&", f);
                for (i = 0; i < wl; i++) {
                        if (w[i] == '`') {
                                bold = !bold;
                                fputs(bold ? "\\fB" : "\\fR", f);
                        } else if (w[i] == '\\') {
                                fputs("\\e", f);
                        } else if (w[i] == '-') {
                                fputs("\\-", f);
                        } else {
                                fputc(w[i], f);
                        }
                }
                *col += wl;
                p = w + wl;
        }
        if (bold)
                fputs("\\fR", f);
}

/* The OPTIONS sections of docs/eosaudit.1, between the markers that
 * docs/generate.sh replaces. */
static void conf_doc_man(FILE *f)
{
        char text[1400], sentence[1024];
        size_t i, k, col;

        fputs(".\\\" Generated by `eosaudit config-help --man` from "
              "cmd/conf_table.c\n"
              ".\\\" (docs/generate.sh); do not edit by hand.\n",
              f);
        for (k = 0; k < CONF_DOC_SECTIONS; k++) {
                unsigned which = conf_doc_sections[k].which;

                fprintf(f, ".SH %s\n", conf_doc_sections[k].man_title);
                if (conf_doc_sections[k].text) {
                        col = 0;
                        conf_roff_text(f, conf_doc_sections[k].text, &col);
                        fputc('\n', f);
                }
                for (i = 0; i < CONF__CNT; i++) {
                        const struct conf_option *o = &conf_options[i];
                        const char *def = conf_default_text(o);
                        int keyed = (which & (CONF_SCAN | CONF_SERVE)) &&
                                    (o->where & CONF_FILE);

                        if (!(o->where & which))
                                continue;
                        fputs(".TP\n", f);
                        if (o->short_flag)
                                fprintf(f, "\\fB\\-%c\\fR%s", o->short_flag,
                                        o->flag ? ", " : "");
                        if (o->flag) {
                                col = 0;
                                fputs("\\fB\\-\\-", f);
                                conf_roff_text(f, o->flag, &col);
                                fputs("\\fR", f);
                        }
                        if (o->metavar) {
                                col = 0;
                                fputs(" \\fI", f);
                                conf_roff_text(f, o->metavar, &col);
                                fputs("\\fR", f);
                        }
                        fputc('\n', f);
                        conf_sentence(o->help, sentence, sizeof(sentence));
                        if (def && o->type != CONF_T_KAFKA)
                                snprintf(text, sizeof(text),
                                         "%s%s%s%s (default: %s).",
                                         keyed ? "[" : "", keyed ? o->key : "",
                                         keyed ? "] " : "", sentence, def);
                        else
                                snprintf(text, sizeof(text), "%s%s%s%s.",
                                         keyed ? "[" : "", keyed ? o->key : "",
                                         keyed ? "] " : "", sentence);
                        col = 0;
                        conf_roff_text(f, text, &col);
                        fputc('\n', f);
                }
        }
        fputs(".\\\" End of the generated options.\n", f);
}

static void conf_doc_example(FILE *f)
{
        size_t i;

        fputs("# eosaudit.conf: the settings of `eosaudit serve --config "
              "FILE` (and scan).\n"
              "# Generated by `eosaudit config-help --example` from "
              "cmd/conf_table.c: every\n"
              "# key at its default (or an example value), commented out.\n"
              "#\n# ",
              f);
        for (i = 0; i < conf_doc_intro_cnt; i++) {
                conf_wrap(f, conf_doc_intro[i], 2, "# ", 76, 0);
                fputs(i + 1 < conf_doc_intro_cnt ? "\n#\n# " : "\n", f);
        }
        for (i = 0; i < CONF__CNT; i++) {
                const struct conf_option *o = &conf_options[i];
                const char *def = conf_default_text(o);
                char range[256], text[1024];
                int n;

                if (!(o->where & CONF_FILE))
                        continue;
                fputs("\n# ", f);
                conf_wrap(f, conf_sentence(o->help, text, sizeof(text)), 2,
                          "# ", 76, 0);
                fputs(".\n", f);
                n = fprintf(f, "# Range: %s. Default:",
                            conf_range_text(o, range, sizeof(range)));
                conf_wrap(f, def ? def : "none", n > 0 ? (size_t)n : 0, "# ",
                          76, 0);
                fputs(".\n", f);
                if (o->type == CONF_T_KAFKA) {
                        const char *p = o->example;
                        const char *dot = strchr(o->key, '.');
                        int pw = dot ? (int)(dot - o->key) + 1 : 0;

                        while (p && *p) {
                                const char *nl = strchr(p, '\n');
                                int w = nl ? (int)(nl - p) : (int)strlen(p);

                                fprintf(f, "#%.*s%.*s\n", pw, o->key, w, p);
                                p = nl ? nl + 1 : NULL;
                        }
                } else {
                        fprintf(f, "#%s = %s\n", o->key,
                                o->def ? o->def : o->example);
                }
        }
}

void conf_doc_print(FILE *f, enum conf_doc fmt)
{
        switch (fmt) {
        case CONF_DOC_TEXT:
                conf_doc_text(f);
                break;
        case CONF_DOC_MARKDOWN:
                conf_doc_markdown(f);
                break;
        case CONF_DOC_EXAMPLE:
                conf_doc_example(f);
                break;
        case CONF_DOC_FLAGS:
                conf_doc_flags(f);
                break;
        case CONF_DOC_MAN:
                conf_doc_man(f);
                break;
        }
}
