/*
 * kconf.c - see kconf.h.
 */
#include "kconf.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secrets.h"

/* Longest property name accepted; librdkafka's longest is under 64. */
#define KCONF_KEY_MAX 256

static int kconf_set_kv(rd_kafka_conf_t *conf, const char *key, size_t key_len,
                        const char *value, char *errstr, size_t errstr_size)
{
        char name[KCONF_KEY_MAX];
        char rderr[512];

        if (key_len == 0) {
                snprintf(errstr, errstr_size, "empty property name");
                return -1;
        }
        if (key_len >= sizeof(name)) {
                snprintf(errstr, errstr_size, "property name too long");
                return -1;
        }
        memcpy(name, key, key_len);
        name[key_len] = '\0';
        if (rd_kafka_conf_set(conf, name, value, rderr, sizeof(rderr)) !=
            RD_KAFKA_CONF_OK) {
                snprintf(errstr, errstr_size, "%s", rderr);
                return -1;
        }
        return 0;
}

int kconf_set(rd_kafka_conf_t *conf, const char *kv, char *errstr,
              size_t errstr_size)
{
        const char *eq = strchr(kv, '=');

        char key[KCONF_KEY_MAX];

        if (!eq) {
                snprintf(errstr, errstr_size, "\"%s\": expected key=value",
                         kv);
                return -1;
        }
        /* A secret on the command line is visible to every user. */
        snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
        if (secrets_cli_check(key, errstr, errstr_size))
                return -1;
        return kconf_set_kv(conf, kv, (size_t)(eq - kv), eq + 1, errstr,
                            errstr_size);
}

int kconf_has(const rd_kafka_conf_t *conf, const char *key)
{
        size_t n = 0;

        /* NULL: only the value's size, its NUL included. */
        return rd_kafka_conf_get(conf, key, NULL, &n) == RD_KAFKA_CONF_OK &&
               n > 1;
}

int kconf_put(rd_kafka_conf_t *conf, const char *key, const char *val,
              char *errstr, size_t errstr_size)
{
        return rd_kafka_conf_set(conf, key, val, errstr, errstr_size) ==
                       RD_KAFKA_CONF_OK
                   ? 0
                   : -1;
}

static int kconf_is_blank(char c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' ||
               c == '\v';
}

char *kconf_trim(char *s)
{
        size_t len;

        while (kconf_is_blank(*s))
                s++;
        len = strlen(s);
        while (len > 0 && kconf_is_blank(s[len - 1]))
                s[--len] = '\0';
        return s;
}

int kconf_file_lines(const char *path, size_t max_len, kconf_line_cb *cb,
                     void *opaque, char *errstr, size_t errstr_size)
{
        FILE *fp = NULL;
        char *line = NULL, err[768];
        size_t cap = 0;
        ssize_t len;
        unsigned lineno = 0;
        int rc = -1;

        fp = fopen(path, "r");
        if (!fp) {
                snprintf(errstr, errstr_size, "%s: %s", path, strerror(errno));
                goto out;
        }
        for (;;) {
                char *s;

                errno = 0;
                len = getline(&line, &cap, fp);
                if (len < 0) {
                        if (ferror(fp)) {
                                snprintf(errstr, errstr_size, "%s:%u: %s",
                                         path, lineno + 1,
                                         strerror(errno ? errno : EIO));
                                goto out;
                        }
                        break;
                }
                lineno++;
                if (max_len && (size_t)len > max_len) {
                        snprintf(errstr, errstr_size,
                                 "%s:%u: line longer than %zu bytes", path,
                                 lineno, max_len);
                        goto out;
                }
                if (max_len && strlen(line) != (size_t)len) {
                        snprintf(errstr, errstr_size, "%s:%u: NUL byte", path,
                                 lineno);
                        goto out;
                }
                s = kconf_trim(line);
                if (!*s || *s == '#')
                        continue;
                if (cb(opaque, s, lineno, err, sizeof(err))) {
                        snprintf(errstr, errstr_size, "%s:%u: %s", path,
                                 lineno, err);
                        goto out;
                }
        }
        rc = 0;
out:
        free(line);
        if (fp)
                fclose(fp);
        return rc;
}

struct kconf_file {
        rd_kafka_conf_t *conf;
        int secret; /* a line set a secret */
};

/* kconf_line_cb of kconf_file_load(): one key=value property. */
static int kconf_file_line(void *opaque, char *s, unsigned lineno, char *err,
                           size_t err_size)
{
        struct kconf_file *f = opaque;
        char *eq = strchr(s, '='), *key;

        (void)lineno;
        if (!eq) {
                snprintf(err, err_size, "expected key=value");
                return -1;
        }
        *eq = '\0';
        key = kconf_trim(s);
        if (secrets_key_is_secret(key))
                f->secret = 1;
        return kconf_set_kv(f->conf, key, strlen(key), kconf_trim(eq + 1), err,
                            err_size) == -1
                   ? -1
                   : 0;
}

int kconf_file_load(rd_kafka_conf_t *conf, const char *path, char *errstr,
                    size_t errstr_size)
{
        struct kconf_file f = {conf, 0};

        if (kconf_file_lines(path, 0, kconf_file_line, &f, errstr,
                             errstr_size))
                return -1;
        if (f.secret)
                secrets_file_check(path, "the properties file");
        return 0;
}

int kconf_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
        const char *digits = s[0] == '-' ? s + 1 : s;
        char *end;
        long long v;

        if (!isdigit((unsigned char)digits[0]))
                return -1;
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno != 0 || *end != '\0' || v < min || v > max)
                return -1;
        *out = v;
        return 0;
}

int kconf_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
        char *end;
        unsigned long long v;

        /* strtoull() would accept "-1" and wrap it. */
        if (!isdigit((unsigned char)s[0]))
                return -1;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end != '\0' || v < min || v > max)
                return -1;
        *out = v;
        return 0;
}

int kconf_parse_double(const char *s, double min, double max, double *out)
{
        const char *p;
        char *end;
        double v;

        /* strtod() also takes hex, "inf" and "nan", and leading blanks. */
        if (!(isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '.'))
                return -1;
        for (p = s; *p; p++)
                if (!isdigit((unsigned char)*p) && !strchr("+-.eE", *p))
                        return -1;
        errno = 0;
        v = strtod(s, &end);
        if (errno != 0 || end == s || *end != '\0' || !isfinite(v) ||
            v < min || v > max)
                return -1;
        *out = v;
        return 0;
}
