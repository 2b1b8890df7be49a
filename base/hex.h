/*
 * hex.h - bytes as hexadecimal digits, the one encoding of the project:
 * producer names and message ids that are not UTF-8 in the reports and
 * on the group's topics, the state records' producer names and
 * fingerprints, the HTTP API's cursors and value-hash identities.
 * Encoding writes lower case; decoding takes either case.  Pure: no
 * allocation, no I/O; callable from any thread.
 */
#ifndef EOSAUDIT_HEX_H
#define EOSAUDIT_HEX_H

#include <stddef.h>

/* The value of hex digit c (0..15), or -1 when c is not one. */
int hex_digit(char c);

/* The lower-case hex of p[0..len) into out, which has room for
 * 2 * len + 1 bytes, NUL-terminated.  Returns 2 * len. */
size_t hex_encode(char *out, const void *p, size_t len);

/* Decodes the len digits in[0..len) into out (room for cap bytes; no NUL
 * is written).  Returns the number of bytes, or -1 when len is odd, a
 * character is not a hex digit or the bytes would not fit in cap. */
long hex_decode(void *out, size_t cap, const char *in, size_t len);

#endif
