/*
 * secrets.h - keeping Kafka credentials out of sight: which librdkafka
 * properties are secrets, a warning for a secrets file that every user
 * can read, and warnings for security settings that weaken TLS.
 *
 * Invariants
 *  - Nothing here prints a property's value; messages name keys and paths.
 *  - Secrets are accepted from files only (-F, the configuration file):
 *    a command line is visible to every user of the machine (ps,
 *    /proc/PID/cmdline).
 */
#ifndef EOSAUDIT_SECRETS_H
#define EOSAUDIT_SECRETS_H

#include <stddef.h>

#include <librdkafka/rdkafka.h>

/* Whether the librdkafka property key holds a secret (sasl.password,
 * ssl.key.password, ssl.keystore.password, ssl.key.pem,
 * sasl.oauthbearer.client.secret, sasl.oauthbearer.config, ...). */
int secrets_key_is_secret(const char *key);

/*
 * For a key=value given on the command line (-X): 0 when key is no
 * secret, else -1 with errstr saying to put it in a file.  The value is
 * never quoted.
 */
int secrets_cli_check(const char *key, char *errstr, size_t errstr_size);
/* The same for another client's settings: files names where its secrets
 * go instead ("--source-properties-file FILE"), prefix its key in the
 * configuration file ("source-kafka."). */
int secrets_cli_check_for(const char *key, const char *files,
                          const char *prefix, char *errstr,
                          size_t errstr_size);

/*
 * Warns (log_warn) when the file at path, which holds secrets, can be
 * read by users other than its owner and group (S_IROTH).  what names the
 * file for the message ("-F file").  Returns 1 when it warned, 0 when the
 * mode is fine or the file cannot be stat'ed (its reader reports that).
 */
int secrets_file_check(const char *path, const char *what);

/*
 * Warns about the TLS and SASL settings of conf that weaken security:
 * host name verification turned off
 * (ssl.endpoint.identification.algorithm=none), certificate verification
 * turned off (enable.ssl.certificate.verification=false), and a SASL/PLAIN
 * password sent without TLS (SASL_PLAINTEXT).  Returns how many warnings
 * it logged.
 */
int secrets_kconf_check(rd_kafka_conf_t *conf);

#endif /* EOSAUDIT_SECRETS_H */
