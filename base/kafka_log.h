/*
 * kafka_log.h - librdkafka's log lines through the product's logger
 * (log.h): its levels, its format, its --log-level, instead of raw
 * "%3|...|FAIL|..." lines on stderr.  The last error librdkafka logged is
 * kept, so that a one-line failure ("cannot reach brokers") can name the
 * real cause ("Failed to resolve 'nosuch:9092': ...") instead of
 * librdkafka's generic error code.
 *
 * Thread-safe: librdkafka calls the callback from its own threads.  The
 * last error is process-wide (one audit per process).
 */
#ifndef EOSAUDIT_KAFKA_LOG_H
#define EOSAUDIT_KAFKA_LOG_H

#include <stddef.h>

#include <librdkafka/rdkafka.h>

/* Routes the log of every client made from conf through log.h:
 * librdkafka's syslog levels 0..4 (emerg..warning) as warn, 5..6 (notice,
 * info) as info, 7 (debug) as debug, each "kafka FAC: message". */
void kafka_log_route(rd_kafka_conf_t *conf);

/* The callback itself (for tests): level, facility and message as
 * librdkafka gives them. */
void kafka_log_cb(const rd_kafka_t *rk, int level, const char *fac,
                  const char *buf);

/* The last line librdkafka logged at level 0..4 since the last
 * kafka_log_clear(), into buf; its broker prefix ("host:port/id: ") is
 * kept.  Returns 1 when there is one, else 0 (buf ""). */
int kafka_log_last_error(char *buf, size_t size);
void kafka_log_clear(void);

/* The process is closing its clients: from now on a broker connection's
 * failure (facility FAIL) is logged at debug, not warn.  Never undone. */
void kafka_log_closing(void);

#endif /* EOSAUDIT_KAFKA_LOG_H */
