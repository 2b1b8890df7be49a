/*
 * conf_internal.h - what the files of the option table share (conf.c:
 * values and parsing; conf_table.c: the table; conf_doc.c: --help and
 * the documentation).  Not for other modules.
 */
#ifndef EOSAUDIT_CONF_INTERNAL_H
#define EOSAUDIT_CONF_INTERNAL_H

#include <stddef.h>

#include "conf.h"

/* The introduction of the configuration file's documentation, one
 * paragraph per string. */
extern const char *const conf_doc_intro[];
extern const size_t conf_doc_intro_cnt;

/* "a, b or c" from "a|b|c" into buf. */
void conf_choices_text(const char *choices, char *buf, size_t size);

#endif /* EOSAUDIT_CONF_INTERNAL_H */
