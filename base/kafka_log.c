/*
 * kafka_log.c - see kafka_log.h.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "kafka_log.h"
#include "log.h"

static pthread_mutex_t kafka_log_mu = PTHREAD_MUTEX_INITIALIZER;
static char kafka_log_err[512];
static atomic_int kafka_log_closing_now;

/* buf without librdkafka's thread tag ("[thrd:...]: ") and client name
 * ("eosaudit#consumer-1: "), which say nothing to an operator. */
static const char *kafka_log_strip(const char *buf)
{
        const char *p;

        if (!strncmp(buf, "[thrd:", 6) && (p = strstr(buf, "]: ")))
                buf = p + 3;
        p = strchr(buf, '#');
        if (p && (p = strstr(p, ": ")) && !memchr(buf, ' ', (size_t)(p - buf)))
                buf = p + 2;
        return buf;
}

/* Keeps the cause alone, for a one-line error: without the broker's
 * prefix ("host:9092/bootstrap: ") and the connection state suffix
 * ("(after 0ms in state CONNECT...)").  Returns 1 when it is the cause
 * already kept (librdkafka repeats a FAIL line as an ERROR event). */
static int kafka_log_keep(const char *msg)
{
        const char *p = strstr(msg, ": ");
        size_t n;
        int same;

        if (p && !strncmp(msg, "GroupCoordinator: ", 18))
                p = strstr(msg += 18, ": ");
        if (p && !memchr(msg, ' ', (size_t)(p - msg)))
                msg = p + 2;
        p = strstr(msg, " (after ");
        n = p ? (size_t)(p - msg) : strlen(msg);
        pthread_mutex_lock(&kafka_log_mu);
        same = strlen(kafka_log_err) == n && !strncmp(kafka_log_err, msg, n);
        snprintf(kafka_log_err, sizeof(kafka_log_err), "%.*s", (int)n, msg);
        pthread_mutex_unlock(&kafka_log_mu);
        return same;
}

void kafka_log_cb(const rd_kafka_t *rk, int level, const char *fac,
                  const char *buf)
{
        enum log_level l = level <= 4   ? LOG_WARN
                           : level <= 6 ? LOG_INFO
                                        : LOG_DEBUG;
        const char *msg = kafka_log_strip(buf);

        (void)rk;
        /* "1/1 brokers are down" says less than the line before it; an
         * ERROR event that repeats the FAIL line before it says nothing
         * new (debug only). */
        if (level <= 4 && !strstr(msg, "brokers are down") &&
            kafka_log_keep(msg) && fac && !strcmp(fac, "ERROR"))
                l = LOG_DEBUG;
        /* A connection that fails while the clients close (a coordinator's
         * SASL handshake cut by rd_kafka_destroy(), seen in t_98) is the
         * close itself: debug, so that a one-line error stays one line. */
        if (fac && !strcmp(fac, "FAIL") && atomic_load(&kafka_log_closing_now))
                l = LOG_DEBUG;
        if (log_enabled(l))
                log_msg(l, "kafka %s: %s", fac ? fac : "-", msg);
}

void kafka_log_route(rd_kafka_conf_t *conf)
{
        rd_kafka_conf_set_log_cb(conf, kafka_log_cb);
}

int kafka_log_last_error(char *buf, size_t size)
{
        int have;

        pthread_mutex_lock(&kafka_log_mu);
        snprintf(buf, size, "%s", kafka_log_err);
        have = kafka_log_err[0] != '\0';
        pthread_mutex_unlock(&kafka_log_mu);
        return have;
}

void kafka_log_closing(void)
{
        atomic_store(&kafka_log_closing_now, 1);
}

void kafka_log_clear(void)
{
        pthread_mutex_lock(&kafka_log_mu);
        kafka_log_err[0] = '\0';
        pthread_mutex_unlock(&kafka_log_mu);
}
