/*
 * hdrprod.c - writes records with arbitrary header bytes, for the
 * integration tests (kcat cannot send a NUL byte, a null value next to
 * others of the same name, or a 1 MiB value).  t_61 compiles it:
 *
 *   cc -o $BUILD/hdrprod tests/integration/hdrprod.c -lrdkafka
 *   hdrprod BROKERS TOPIC < records
 *
 * One record per input line: "PARTITION[@MS] [HEADER ...]", blank-separated;
 * @MS sets the record's timestamp (CreateTime, ms since the epoch).
 * A HEADER is
 *   NAME=VALUE   VALUE percent-decoded (%HH is any byte, %00 a NUL)
 *   NAME=*N      a value of N bytes 'x' (up to 16 MiB)
 *   NAME         a null value
 * NAME is percent-decoded too.  Lines starting with '#' are skipped.
 *
 * The producer is idempotent (acks=all), so the records land once and in
 * input order on each partition.  Prints "delivered N failed M" and exits
 * 0 when every record was delivered.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#define HP_VALUE_MAX (16u * 1024 * 1024)

static long hp_delivered, hp_failed;

static void hp_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *rkm,
                     void *opaque)
{
        (void)rk;
        (void)opaque;
        if (rkm->err) {
                fprintf(stderr, "hdrprod: delivery failed: %s\n",
                        rd_kafka_err2str(rkm->err));
                hp_failed++;
        } else {
                hp_delivered++;
        }
}

static int hp_hex(int c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* Decodes s[0..n) in place; returns the length, or -1. */
static long hp_pct(char *s, size_t n)
{
        size_t i, o = 0;

        for (i = 0; i < n; i++) {
                if (s[i] == '%') {
                        if (n - i < 3 || hp_hex(s[i + 1]) < 0 ||
                            hp_hex(s[i + 2]) < 0)
                                return -1;
                        s[o++] = (char)(hp_hex(s[i + 1]) * 16 +
                                        hp_hex(s[i + 2]));
                        i += 2;
                } else {
                        s[o++] = s[i];
                }
        }
        return (long)o;
}

/* Adds one HEADER token to hdrs; -1 on a bad token. */
static int hp_header(rd_kafka_headers_t *hdrs, char *tok)
{
        char *eq = strchr(tok, '='), *end, *val = NULL;
        long nlen, vlen = 0;
        unsigned long big;
        int rc;

        nlen = hp_pct(tok, eq ? (size_t)(eq - tok) : strlen(tok));
        if (nlen < 0)
                return -1;
        if (eq && eq[1] == '*') {
                errno = 0;
                big = strtoul(eq + 2, &end, 10);
                if (errno || *end || end == eq + 2 || big > HP_VALUE_MAX)
                        return -1;
                val = malloc(big ? big : 1);
                if (!val)
                        return -1;
                memset(val, 'x', big);
                vlen = (long)big;
                rc = rd_kafka_header_add(hdrs, tok, nlen, val, vlen);
                free(val);
                return rc ? -1 : 0;
        }
        if (eq) {
                val = eq + 1;
                vlen = hp_pct(val, strlen(val));
                if (vlen < 0)
                        return -1;
        }
        return rd_kafka_header_add(hdrs, tok, nlen, val, vlen) ? -1 : 0;
}

/* The blank-separated token at s (NUL-terminated in place), or NULL at
 * the end; *next is where the one after it starts. */
static char *hp_next(char *s, char **next)
{
        char *e;

        while (*s == ' ')
                s++;
        if (!*s)
                return NULL;
        e = strchr(s, ' ');
        if (e)
                *e++ = '\0';
        *next = e ? e : s + strlen(s);
        return s;
}

int main(int argc, char **argv)
{
        char errstr[512], *line = NULL, *tok, *end, *next;
        size_t cap = 0;
        long lineno = 0, n = 0;
        rd_kafka_conf_t *conf;
        rd_kafka_t *rk;
        int rc = 1;

        if (argc != 3) {
                fprintf(stderr, "usage: hdrprod BROKERS TOPIC < records\n");
                return 2;
        }
        conf = rd_kafka_conf_new();
        if (rd_kafka_conf_set(conf, "bootstrap.servers", argv[1], errstr,
                              sizeof(errstr)) ||
            rd_kafka_conf_set(conf, "enable.idempotence", "true", errstr,
                              sizeof(errstr)) ||
            rd_kafka_conf_set(conf, "message.max.bytes", "5000000", errstr,
                              sizeof(errstr)) ||
            rd_kafka_conf_set(conf, "linger.ms", "5", errstr,
                              sizeof(errstr))) {
                fprintf(stderr, "hdrprod: %s\n", errstr);
                return 2;
        }
        rd_kafka_conf_set_dr_msg_cb(conf, hp_dr_cb);
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        if (!rk) {
                fprintf(stderr, "hdrprod: %s\n", errstr);
                return 2;
        }
        while (getline(&line, &cap, stdin) > 0) {
                rd_kafka_headers_t *hdrs;
                rd_kafka_resp_err_t err;
                long part;
                long long ts = 0;
                char value[64];

                lineno++;
                line[strcspn(line, "\r\n")] = '\0';
                if (!line[0] || line[0] == '#')
                        continue;
                tok = hp_next(line, &next);
                if (!tok)
                        continue;
                errno = 0;
                part = strtol(tok, &end, 10);
                if (!errno && *end == '@') {
                        char *at = end + 1;
                        ts = strtoll(at, &end, 10);
                        if (end == at || ts <= 0)
                                errno = EINVAL;
                }
                if (errno || *end || part < 0 || part > 100000) {
                        fprintf(stderr, "hdrprod: line %ld: bad partition\n",
                                lineno);
                        goto out;
                }
                hdrs = rd_kafka_headers_new(8);
                while ((tok = hp_next(next, &next))) {
                        if (hp_header(hdrs, tok)) {
                                fprintf(
                                    stderr,
                                    "hdrprod: line %ld: bad header '%.40s'\n",
                                    lineno, tok);
                                rd_kafka_headers_destroy(hdrs);
                                goto out;
                        }
                }
                snprintf(value, sizeof(value), "record %ld", lineno);
                do {
                        err = rd_kafka_producev(
                            rk, RD_KAFKA_V_TOPIC(argv[2]),
                            RD_KAFKA_V_PARTITION((int32_t)part),
                            RD_KAFKA_V_VALUE(value, strlen(value)),
                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                            RD_KAFKA_V_TIMESTAMP((int64_t)ts),
                            RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
                        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                                rd_kafka_poll(rk, 100);
                } while (err == RD_KAFKA_RESP_ERR__QUEUE_FULL);
                if (err) {
                        fprintf(stderr, "hdrprod: line %ld: %s\n", lineno,
                                rd_kafka_err2str(err));
                        rd_kafka_headers_destroy(hdrs);
                        goto out;
                }
                n++;
                rd_kafka_poll(rk, 0);
        }
        rc = 0;
out:
        if (rd_kafka_flush(rk, 60000))
                fprintf(stderr, "hdrprod: flush timed out\n");
        printf("delivered %ld failed %ld\n", hp_delivered, hp_failed);
        if (hp_delivered != n || hp_failed)
                rc = 1;
        rd_kafka_destroy(rk);
        free(line);
        return rc;
}
