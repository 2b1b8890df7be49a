/*
 * secrets.c - see secrets.h.
 */
#include "secrets.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "log.h"

int secrets_key_is_secret(const char *key)
{
        static const char *const exact[] = {
            "ssl.key.pem", "ssl_key", "sasl.oauthbearer.config",
            "sasl.oauthbearer.assertion.private.key.pem"};
        size_t i;

        /* Most of librdkafka's sensitive properties say so in their
         * name: sasl.password, ssl.key.password, ssl.keystore.password,
         * sasl.oauthbearer.client.secret, and (2.10's JWT bearer
         * assertion) sasl.oauthbearer.assertion.private.key.passphrase;
         * the rest are listed above. */
        if (strstr(key, "password") || strstr(key, "secret") ||
            strstr(key, "passphrase"))
                return 1;
        for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
                if (!strcmp(key, exact[i]))
                        return 1;
        return 0;
}

int secrets_cli_check_for(const char *key, const char *files,
                          const char *prefix, char *errstr, size_t errstr_size)
{
        if (!secrets_key_is_secret(key))
                return 0;
        snprintf(errstr, errstr_size,
                 "%s: secrets are read from files only (%s, or %s%s in the "
                 "--config file), never from the command line, which every "
                 "user can see",
                 key, files, prefix, key);
        return -1;
}

int secrets_cli_check(const char *key, char *errstr, size_t errstr_size)
{
        return secrets_cli_check_for(key, "-F FILE", "kafka.", errstr,
                                     errstr_size);
}

int secrets_file_check(const char *path, const char *what)
{
        struct stat st;

        if (stat(path, &st))
                return 0;
        if (!(st.st_mode & S_IROTH))
                return 0;
        log_warn("%s '%s' holds secrets and every user can read it (mode "
                 "%04o): chmod o-rwx it",
                 what, path, (unsigned)(st.st_mode & 07777));
        return 1;
}

/* conf's value of key into buf ("" when unset or unknown). */
static void secrets_conf_get(rd_kafka_conf_t *conf, const char *key, char *buf,
                             size_t size)
{
        size_t sz = size;

        if (rd_kafka_conf_get(conf, key, buf, &sz) != RD_KAFKA_CONF_OK)
                buf[0] = '\0';
}

int secrets_kconf_check(rd_kafka_conf_t *conf)
{
        char proto[64], algo[64], verify[16], mech[64];
        int tls, n = 0;

        secrets_conf_get(conf, "security.protocol", proto, sizeof(proto));
        secrets_conf_get(conf, "ssl.endpoint.identification.algorithm", algo,
                         sizeof(algo));
        secrets_conf_get(conf, "enable.ssl.certificate.verification", verify,
                         sizeof(verify));
        secrets_conf_get(conf, "sasl.mechanisms", mech, sizeof(mech));
        tls = !strcasecmp(proto, "ssl") || !strcasecmp(proto, "sasl_ssl");
        if (tls && !strcmp(algo, "none")) {
                log_warn("ssl.endpoint.identification.algorithm=none: the "
                         "brokers' certificates are not checked against "
                         "their host names, so anyone with a certificate "
                         "from the same CA can pose as a broker");
                n++;
        }
        if (tls && !strcmp(verify, "false")) {
                log_warn("enable.ssl.certificate.verification=false: the "
                         "brokers' certificates are not verified at all; "
                         "credentials go to whoever answers");
                n++;
        }
        if (!strcasecmp(proto, "sasl_plaintext") && !strcmp(mech, "PLAIN")) {
                log_warn("security.protocol=SASL_PLAINTEXT with "
                         "sasl.mechanisms=PLAIN: the password crosses the "
                         "network in the clear (use SASL_SSL)");
                n++;
        }
        return n;
}
