/*
 * access.h - when the brokers refuse this client: one line for the
 * operator that names what was refused, on which resource, the error, and
 * what to grant or check; and serve's way of waiting for the fix.
 *
 * Refusals are authentication failures (a bad user name or password, a
 * SASL mechanism the broker lacks), TLS failures (a certificate that does
 * not verify) and missing ACLs.  Retrying does not help until an operator
 * changes something, so `scan` stops with exit status 2 and `serve`
 * reports not ready (/readyz 503 with the line) and tries again now and
 * then.  Lines never carry a secret: only names, error codes and
 * librdkafka's reason.
 */
#ifndef EOSAUDIT_ACCESS_H
#define EOSAUDIT_ACCESS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

/* What the client was doing when it was refused. */
enum access_op {
        ACCESS_OP_CONNECT,          /* authentication, TLS: no resource */
        ACCESS_OP_DESCRIBE_TOPIC,   /* metadata, watermarks */
        ACCESS_OP_READ_TOPIC,       /* fetch */
        ACCESS_OP_DESCRIBE_CONFIGS, /* a topic's cleanup.policy */
        ACCESS_OP_COMMIT_GROUP,     /* offset commits of the group */
        ACCESS_OP_WRITE_TOPIC,      /* produce */
};

/* Whether err is a refusal (see above); transport errors, time-outs and
 * unknown topics are not. */
int access_err_is_refusal(rd_kafka_resp_err_t err);

/*
 * Writes the operator's line for err, met while doing op on resource (a
 * topic or group name; NULL for ACCESS_OP_CONNECT), into out, e.g.
 *   not authorized to read topic 'orders' (TOPIC_AUTHORIZATION_FAILED):
 *   grant Read on it to this principal
 * reason (librdkafka's text, may be NULL) is appended for authentication
 * and TLS failures, which have no resource.  Returns 1 with out written
 * when err is a refusal, else 0 with out untouched.
 */
int access_line(char *out, size_t out_size, rd_kafka_resp_err_t err,
                enum access_op op, const char *resource, const char *reason);

/*
 * The client-level errors of a handle (its error_cb), kept for the thread
 * that decides.  Thread-safe.
 */
struct access_watch {
        pthread_mutex_t lock;
        rd_kafka_resp_err_t err; /* the first refusal seen, or 0 */
        char reason[512];
        int group_warned; /* the group warning was logged */
};

void access_watch_init(struct access_watch *w);
void access_watch_destroy(struct access_watch *w);

/* Notes one error from error_cb: a refusal is kept (the first one);
 * anything else is logged as a warning, as librdkafka would have. */
void access_watch_note(struct access_watch *w, rd_kafka_resp_err_t err,
                       const char *reason);

/* The kept refusal as an operator line in out (access_line(),
 * ACCESS_OP_CONNECT); returns 1, or 0 when there is none. */
int access_watch_line(struct access_watch *w, char *out, size_t out_size);

/* Logs, once per watch, that offsets cannot be committed for group
 * because of err (a refusal): the audit goes on, lag tools do not see
 * its position. */
void access_watch_group(struct access_watch *w, rd_kafka_resp_err_t err,
                        const char *group);

#endif /* EOSAUDIT_ACCESS_H */
