/*
 * refusal.c - when the brokers refuse the audit (access.h): librdkafka's
 * client-level errors and offset commit results kept for the loop to stop
 * on, and the metadata wait that a refusal ends at once.
 */
#include <string.h>
#include "../../base/clock.h"
#include "../../base/kafka_log.h"
#include "internal.h"

/* Client-level errors: a refusal (bad credentials, TLS) is kept for the
 * loop to stop on; librdkafka would only log it and retry forever. */
void audit_error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
        struct audit *a = opaque;

        (void)rk;
        access_watch_note(&a->watch, (rd_kafka_resp_err_t)err, reason);
}

/*
 * The group is refused (no Read ACL on it): the audit goes on, but it
 * sends no more lag-visibility commits.  librdkafka parks a commit that
 * finds no coordinator for session.timeout.ms (45 s by default), and
 * rd_kafka_consumer_close(), and rd_kafka_destroy() even with
 * RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE, wait for every parked commit: one
 * commit sent after the refusal made a refused scan take 45 s to exit.
 * A granted ACL takes effect at the next start.
 */
void audit_group_refused(struct audit *a, rd_kafka_resp_err_t err)
{
        char group[256] = "";
        size_t gsz = sizeof(group);

        a->group_refused = 1;
        if (rd_kafka_conf_get(rd_kafka_conf(a->rk), "group.id", group, &gsz) !=
            RD_KAFKA_CONF_OK)
                group[0] = '\0';
        access_watch_group(&a->watch, err, group);
}

/* The lag-visibility commits: a missing group ACL is worth one warning. */
void audit_commit_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                     rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
        struct audit *a = opaque;
        int i;

        (void)rk;
        for (i = 0; !access_err_is_refusal(err) && offsets && i < offsets->cnt;
             i++)
                err = offsets->elems[i].err;
        if (!access_err_is_refusal(err))
                return;
        audit_group_refused(a, err);
}

/*
 * rd_kafka_metadata() for rkt, in 1 s steps up to AUDIT_META_TIMEOUT_MS
 * (AUDIT_META_SURE_MS when librdkafka logged an unresolvable name or a
 * refused connection),
 * serving the handle's callbacks in between: a refusal (bad password,
 * certificate) then ends the wait at once instead of a time-out that
 * reads like an unreachable broker.
 */
rd_kafka_resp_err_t audit_metadata(struct audit *a, rd_kafka_t *rk,
                                   rd_kafka_topic_t *rkt,
                                   const struct rd_kafka_metadata **md)
{
        int64_t start = clock_mono_ms();
        rd_kafka_resp_err_t err;
        rd_kafka_message_t *rkm;
        char line[8], cause[512];

        kafka_log_clear();
        for (;;) {
                err = rd_kafka_metadata(rk, 0, rkt, md, 1000);
                if (err != RD_KAFKA_RESP_ERR__TIMED_OUT &&
                    err != RD_KAFKA_RESP_ERR__TRANSPORT)
                        return err;
                /* Nothing is assigned yet: only events come back. */
                while ((rkm = rd_kafka_consumer_poll(rk, 0))) {
                        if (rkm->err)
                                access_watch_note(&a->watch, rkm->err,
                                                  rd_kafka_message_errstr(
                                                      rkm));
                        rd_kafka_message_destroy(rkm);
                }
                if (access_watch_line(&a->watch, line, sizeof(line)) ||
                    clock_mono_ms() - start >= AUDIT_META_TIMEOUT_MS)
                        return err;
                /* A name that does not resolve or a refused connection
                 * will not go away: give up after AUDIT_META_SURE_MS. */
                if (clock_mono_ms() - start >= AUDIT_META_SURE_MS &&
                    kafka_log_last_error(cause, sizeof(cause)) &&
                    (strstr(cause, "Failed to resolve") ||
                     strstr(cause, "Connection refused")))
                        return err;
        }
}
