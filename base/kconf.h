/*
 * kconf.h - librdkafka configuration and strict number parsing shared by
 * every subcommand.
 *
 * Invariants
 *  - Nothing here owns the rd_kafka_conf_t: the caller creates it, passes
 *    it in, and frees it (or hands it to rd_kafka_new()).
 *  - Properties are passed to librdkafka verbatim (security.protocol,
 *    sasl.*, ssl.* included); librdkafka decides what is valid.
 *  - Messages for a rejected value come from librdkafka and may quote it.
 *  - errstr is written only on failure.
 */
#ifndef EOSAUDIT_KCONF_H
#define EOSAUDIT_KCONF_H

#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

/*
 * Applies one "key=value" string (a -X argument): the key is everything
 * before the first '=', the value everything after it (it may contain '='
 * and may be empty).  A secret (secrets_key_is_secret(): sasl.password,
 * ...) is refused: the command line is visible to every user.  Returns 0,
 * or -1 with errstr filled.
 */
int kconf_set(rd_kafka_conf_t *conf, const char *kv, char *errstr,
              size_t errstr_size);

/* Whether key is set to a non-empty value (a default counts). */
int kconf_has(const rd_kafka_conf_t *conf, const char *key);

/* Sets one property the program itself chooses (no secret check, unlike
 * kconf_set()).  Returns 0, or -1 with librdkafka's message in errstr. */
int kconf_put(rd_kafka_conf_t *conf, const char *key, const char *val,
              char *errstr, size_t errstr_size);

/*
 * Applies a kcat-style properties file (-F): one key=value per line,
 * blank lines and lines whose first non-blank character is '#' are
 * skipped, blanks around key and value are trimmed.  Stops at the first
 * bad line.  When the file sets a secret and every user may read it,
 * logs a warning (secrets_file_check()).  Returns 0, or -1 with errstr
 * "PATH:LINE: message" (or "PATH: message" when the file cannot be read).
 */
int kconf_file_load(rd_kafka_conf_t *conf, const char *path, char *errstr,
                    size_t errstr_size);

/* Trims blanks (space, \t, \r, \n, \f, \v) around s in place; returns
 * its first non-blank character (inside s).  For key=value files. */
char *kconf_trim(char *s);

/*
 * Reads a key=value file line by line: calls cb with each line trimmed
 * (kconf_trim()) and its number from 1, skipping blank lines and lines
 * whose first non-blank character is '#'.  cb returns 0, or -1 with a
 * message in err (err_size bytes).  With max_len > 0, a line longer than
 * that or holding a NUL byte is an error too.  Stops at the first error.
 * Returns 0, or -1 with errstr "PATH:LINE: message" (or "PATH: message"
 * when the file cannot be opened).  The shared reader of -F files and
 * --config files.
 */
typedef int(kconf_line_cb)(void *opaque, char *line, unsigned lineno,
                           char *err, size_t err_size);
int kconf_file_lines(const char *path, size_t max_len, kconf_line_cb *cb,
                     void *opaque, char *errstr, size_t errstr_size);

/*
 * Strict parsers for command-line numbers: plain decimal (an optional
 * leading '-' for kconf_parse_i64), no surrounding blanks, nothing after
 * the number, within [min, max].  Return 0 and set *out, or -1 leaving
 * *out untouched.
 */
int kconf_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);
int kconf_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* As above for a finite decimal or exponent number (no hex, inf or nan). */
int kconf_parse_double(const char *s, double min, double max, double *out);

#endif /* EOSAUDIT_KCONF_H */
