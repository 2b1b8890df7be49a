/*
 * access.c - see access.h.
 */
#include "access.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../base/clock.h"
#include "../base/log.h"

int access_err_is_refusal(rd_kafka_resp_err_t err)
{
        switch (err) {
        case RD_KAFKA_RESP_ERR__AUTHENTICATION:
        case RD_KAFKA_RESP_ERR__SSL:
        case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
        case RD_KAFKA_RESP_ERR_UNSUPPORTED_SASL_MECHANISM:
        case RD_KAFKA_RESP_ERR_ILLEGAL_SASL_STATE:
        case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
        case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
        case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
        case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
                return 1;
        default:
                return 0;
        }
}

/* Authentication and TLS: no resource, librdkafka's reason says more. */
static void access_connect_line(char *out, size_t out_size,
                                rd_kafka_resp_err_t err, const char *reason)
{
        const char *name = rd_kafka_err2name(err);
        const char *hint;

        if (!reason || !*reason)
                reason = rd_kafka_err2str(err);
        if (err == RD_KAFKA_RESP_ERR__SSL) {
                hint = "check ssl.ca.location (the CA that signed the "
                       "brokers' certificates) and that each certificate "
                       "names the host used to reach the broker";
        } else {
                hint = "check sasl.username, sasl.password and "
                       "sasl.mechanisms";
        }
        if (err == RD_KAFKA_RESP_ERR__SSL)
                snprintf(out, out_size,
                         "the TLS handshake with the brokers failed (%s): "
                         "%s: %s",
                         name, reason, hint);
        else
                snprintf(out, out_size,
                         "the brokers refused the credentials (%s): %s: %s",
                         name, reason, hint);
}

int access_line(char *out, size_t out_size, rd_kafka_resp_err_t err,
                enum access_op op, const char *resource, const char *reason)
{
        const char *name = rd_kafka_err2name(err);
        const char *res = resource ? resource : "?";

        if (!access_err_is_refusal(err))
                return 0;
        switch (err) {
        case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
                snprintf(out, out_size,
                         "not authorized to use consumer group '%s' (%s): "
                         "grant Read on group '%s' to this principal",
                         res, name, res);
                return 1;
        case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
                snprintf(out, out_size,
                         "not authorized for a cluster operation (%s): "
                         "brokers before Kafka 2.8 want IdempotentWrite on "
                         "the cluster for an idempotent producer",
                         name);
                return 1;
        case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
                snprintf(out, out_size,
                         "not authorized to use transactional id '%s' (%s): "
                         "grant Write and Describe on it to this principal",
                         res, name);
                return 1;
        case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
                break;
        default:
                access_connect_line(out, out_size, err, reason);
                return 1;
        }
        switch (op) {
        case ACCESS_OP_DESCRIBE_TOPIC:
                /* The broker says the same of a topic that does not
                 * exist: an unauthorized client may not tell them apart. */
                snprintf(out, out_size,
                         "not authorized to describe topic '%s' (%s): grant "
                         "Describe and Read on it to this principal (or the "
                         "topic does not exist)",
                         res, name);
                break;
        case ACCESS_OP_DESCRIBE_CONFIGS:
                snprintf(out, out_size,
                         "not authorized to describe the configuration of "
                         "topic '%s' (%s): grant DescribeConfigs on it to "
                         "this principal",
                         res, name);
                break;
        case ACCESS_OP_COMMIT_GROUP:
                snprintf(out, out_size,
                         "not authorized to commit offsets of topic '%s' "
                         "(%s): grant Read on it to this principal",
                         res, name);
                break;
        case ACCESS_OP_WRITE_TOPIC:
                snprintf(out, out_size,
                         "not authorized to write to topic '%s' (%s): grant "
                         "Write and Describe on it to this principal",
                         res, name);
                break;
        case ACCESS_OP_READ_TOPIC:
        case ACCESS_OP_CONNECT:
        default:
                snprintf(out, out_size,
                         "not authorized to read topic '%s' (%s): grant "
                         "Read on it to this principal",
                         res, name);
                break;
        }
        return 1;
}

void access_watch_init(struct access_watch *w)
{
        memset(w, 0, sizeof(*w));
        pthread_mutex_init(&w->lock, NULL);
}

void access_watch_destroy(struct access_watch *w)
{
        pthread_mutex_destroy(&w->lock);
}

void access_watch_note(struct access_watch *w, rd_kafka_resp_err_t err,
                       const char *reason)
{
        /* A group refusal is not the connection's: the audit goes on. */
        if (access_err_is_refusal(err) &&
            err != RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED) {
                pthread_mutex_lock(&w->lock);
                if (!w->err) {
                        w->err = err;
                        snprintf(w->reason, sizeof(w->reason), "%s",
                                 reason ? reason : "");
                }
                pthread_mutex_unlock(&w->lock);
                return;
        }
        if (err == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED) {
                log_debug("kafka: %s", reason ? reason : "");
                return;
        }
        /* librdkafka's own log (base/kafka_log.c) already says what went
         * wrong with a connection, in its words; a fatal error is ours to
         * say. */
        if (err == RD_KAFKA_RESP_ERR__FATAL)
                log_error("kafka: %s: %s", rd_kafka_err2name(err),
                          reason ? reason : rd_kafka_err2str(err));
        else
                log_debug("kafka: %s: %s", rd_kafka_err2name(err),
                          reason ? reason : rd_kafka_err2str(err));
}

int access_watch_line(struct access_watch *w, char *out, size_t out_size)
{
        int rc = 0;

        pthread_mutex_lock(&w->lock);
        if (w->err)
                rc = access_line(out, out_size, w->err, ACCESS_OP_CONNECT,
                                 NULL, w->reason);
        pthread_mutex_unlock(&w->lock);
        return rc;
}

void access_watch_group(struct access_watch *w, rd_kafka_resp_err_t err,
                        const char *group)
{
        char line[512];
        int first;

        pthread_mutex_lock(&w->lock);
        first = !w->group_warned;
        w->group_warned = 1;
        pthread_mutex_unlock(&w->lock);
        if (!first || !access_line(line, sizeof(line), err,
                                   ACCESS_OP_COMMIT_GROUP, group, NULL))
                return;
        log_warn("%s; the audit goes on, but lag tools do not see its "
                 "position",
                 line);
}

int access_audit_run(struct audit **out, const struct audit_conf *c,
                     rd_kafka_conf_t *kconf, int64_t retry_ms,
                     access_ready_fn *ready, void *opaque, char *errstr,
                     size_t errstr_size)
{
        char last[512] = "";
        int rc;

        *out = NULL;
        for (;;) {
                rc = audit_new(out, c, rd_kafka_conf_dup(kconf), errstr,
                               errstr_size);
                if (!rc && ready && ready(opaque)) {
                        errstr[0] = '\0'; /* ready() said why */
                        rc = -1;
                        break;
                }
                if (!rc)
                        rc = audit_run(*out, errstr, errstr_size);
                if (rc != AUDIT_E_ACCESS || !c->follow ||
                    (c->run && !*c->run))
                        break;
                audit_free(*out);
                *out = NULL;
                if (strcmp(last, errstr)) {
                        log_error("%s (trying again every %lld s)", errstr,
                                  (long long)(retry_ms / 1000));
                        snprintf(last, sizeof(last), "%s", errstr);
                }
                if (c->status)
                        status_refusal_set(c->status, errstr);
                {
                        int64_t until = clock_mono_ms() + retry_ms;
                        struct timespec ts = {0, 100 * 1000 * 1000};
                        while ((!c->run || *c->run) &&
                               clock_mono_ms() < until)
                                nanosleep(&ts, NULL);
                }
                if (c->run && !*c->run) {
                        /* Stopped while refused: nothing ran, nothing to
                         * commit. */
                        rc = 0;
                        break;
                }
        }
        rd_kafka_conf_destroy(kconf);
        return rc;
}
