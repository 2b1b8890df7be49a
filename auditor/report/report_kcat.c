/*
 * report_kcat.c - the kcat command that fetches an anomaly's records: the
 * evidence an operator can paste into a shell (see report.h).
 */
#include <string.h>

#include "report.h"

/* Characters a shell leaves alone in a word. */
static int kcat_plain(const char *s)
{
        if (!*s)
                return 0;
        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      (c >= '0' && c <= '9') || strchr("._-:,/@=+%", c)))
                        return 0;
        }
        return 1;
}

/* s as one shell word into buf: as is when plain, else single-quoted
 * (a quote inside as '\'').  Returns 0, or -1 when it does not fit. */
static int kcat_quote(const char *s, char *buf, size_t size)
{
        size_t o = 0;

        if (kcat_plain(s)) {
                if (strlen(s) >= size)
                        return -1;
                memcpy(buf, s, strlen(s) + 1);
                return 0;
        }
        if (o + 1 >= size)
                return -1;
        buf[o++] = '\'';
        for (; *s; s++) {
                if (*s == '\'') {
                        if (o + 4 >= size)
                                return -1;
                        memcpy(buf + o, "'\\''", 4);
                        o += 4;
                } else {
                        if (o + 1 >= size)
                                return -1;
                        buf[o++] = *s;
                }
        }
        if (o + 2 > size)
                return -1;
        buf[o++] = '\'';
        buf[o] = '\0';
        return 0;
}

int report_kcat_format(const struct ledger_anomaly *a, const char *brokers,
                       int first, char *buf, size_t size)
{
        char b[512], t[512];
        int32_t part = a->partition;
        int64_t lo = a->offset_lo, hi = a->offset_hi, cnt;
        int n;

        if (size)
                buf[0] = '\0';
        if (!strcmp(a->kind, "coverage"))
                return -1;
        if (first) {
                if (a->first_offset < 0)
                        return -1;
                lo = a->first_offset;
                if (!strcmp(a->kind, "redelivered")) {
                        /* A live event names it by the audit's part
                         * index only: unknown here. */
                        if (a->first_partition < 0)
                                return -1;
                        part = a->first_partition;
                        hi = a->first_offset_hi > lo ? a->first_offset_hi : lo;
                } else {
                        /* A duplicate's first copies: as many records as
                         * the duplicate run, from the first one's offset
                         * (a superset when other records are between). */
                        hi = lo + (a->count > 1 ? (int64_t)a->count - 1 : 0);
                }
        }
        if (lo < 0 || hi < lo)
                return -1;
        /* -c counts records; transaction markers take offsets but are not
         * records, so N records from lo reach at least to hi. */
        cnt = hi - lo + 1;
        if (kcat_quote(brokers && *brokers ? brokers : "BROKER", b,
                       sizeof(b)) ||
            kcat_quote(a->topic, t, sizeof(t)))
                return -1;
        n = snprintf(buf, size,
                     "kcat -C -b %s -t %s -p %d -o %lld -c %lld "
                     "-e -J",
                     b, t, (int)part, (long long)lo, (long long)cnt);
        if (n < 0 || (size_t)n >= size) {
                if (size)
                        buf[0] = '\0';
                return -1;
        }
        return 0;
}

void report_kcat_set(json_t *o, const struct ledger_anomaly *a,
                     const char *brokers)
{
        char cmd[REPORT_KCAT_MAX];

        json_object_set_new(o, "kcat",
                            report_kcat_format(a, brokers, 0, cmd, sizeof(cmd))
                                ? json_null()
                                : json_string(cmd));
        json_object_set_new(o, "kcat_first",
                            report_kcat_format(a, brokers, 1, cmd, sizeof(cmd))
                                ? json_null()
                                : json_string(cmd));
}
