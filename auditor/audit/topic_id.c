/*
 * topic_id.c - the audited topics' ids (schema/0017_topic_id.sql): read
 * from the brokers with one DescribeTopics (a Metadata request: the
 * Describe permission the audit needs anyway allows it), compared with
 * the ledger's when the audit resumes (resume.c) and with the one the
 * audit started with whenever it reads the topics' metadata again
 * (refresh.c), or finds a log gone below its offsets (trunc_detect.c).
 * librdkafka's metadata API has no topic id (rd_kafka_metadata_topic_t):
 * DescribeTopics is the one way to it.  Where no id can be had, the
 * fingerprint of the last audited record decides alone (fingerprint.h);
 * that is said once per topic, and never fails the audit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/log.h"
#include "internal.h"

/* The ids of the topics read through RK (audit_rk_of(): the sinks'
 * cluster, or the sources' with --source-bootstrap), into out[]. */
static void topic_ids_read_on(struct audit *a, rd_kafka_t *rk,
                              struct audit_topic_id *out)
{
        const char **names = calloc(a->ntopics ? a->ntopics : 1,
                                    sizeof(*names));
        rd_kafka_TopicCollection_t *tc = NULL;
        rd_kafka_AdminOptions_t *opt = NULL;
        rd_kafka_queue_t *q = NULL;
        rd_kafka_event_t *ev = NULL;
        const rd_kafka_DescribeTopics_result_t *r;
        const rd_kafka_TopicDescription_t **td;
        size_t n = 0, nnames = 0, i, t;
        const char *why = "out of memory";

        if (!names)
                goto fail;
        for (t = 0; t < a->ntopics; t++)
                if (audit_rk_of(a, a->topics[t].name) == rk)
                        names[nnames++] = a->topics[t].name;
        if (!nnames)
                goto out;
        tc = rd_kafka_TopicCollection_of_topic_names(names, nnames);
        opt = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DESCRIBETOPICS);
        q = rd_kafka_queue_new(rk);
        if (!tc || !opt || !q)
                goto fail;
        rd_kafka_AdminOptions_set_request_timeout(opt, AUDIT_ADMIN_TIMEOUT_MS,
                                                  NULL, 0);
        rd_kafka_DescribeTopics(rk, tc, opt, q);
        ev = rd_kafka_queue_poll(q, AUDIT_ADMIN_TIMEOUT_MS + 1000);
        r = ev ? rd_kafka_event_DescribeTopics_result(ev) : NULL;
        if (!r || rd_kafka_event_error(ev)) {
                why = ev ? rd_kafka_event_error_string(ev) : "timed out";
                goto fail;
        }
        td = rd_kafka_DescribeTopics_result_topics(r, &n);
        for (i = 0; i < n; i++) {
                const char *name = rd_kafka_TopicDescription_name(td[i]);
                const rd_kafka_error_t *err = rd_kafka_TopicDescription_error(
                    td[i]);
                const rd_kafka_Uuid_t *u;
                const char *b64;
                for (t = 0; t < a->ntopics; t++)
                        if (name && !strcmp(name, a->topics[t].name))
                                break;
                if (t == a->ntopics)
                        continue;
                if (err && rd_kafka_error_code(err)) {
                        snprintf(out[t].why, sizeof(out[t].why), "%s",
                                 rd_kafka_error_string(err));
                        continue;
                }
                u = rd_kafka_TopicDescription_topic_id(td[i]);
                b64 = u ? rd_kafka_Uuid_base64str(u) : NULL;
                if (!b64 ||
                    topic_id_from_base64(b64, out[t].id, sizeof(out[t].id))) {
                        out[t].id[0] = '\0';
                        snprintf(out[t].why, sizeof(out[t].why),
                                 "the brokers gave no topic id%s%s",
                                 b64 ? ": " : "", b64 ? b64 : "");
                }
        }
        for (t = 0; t < a->ntopics; t++)
                if (audit_rk_of(a, a->topics[t].name) == rk && !out[t].id[0] &&
                    !out[t].why[0])
                        snprintf(out[t].why, sizeof(out[t].why),
                                 "not in the brokers' answer");
        goto out;
fail:
        for (t = 0; t < a->ntopics; t++)
                if (audit_rk_of(a, a->topics[t].name) == rk)
                        snprintf(out[t].why, sizeof(out[t].why), "%s", why);
out:
        if (ev)
                rd_kafka_event_destroy(ev);
        if (q)
                rd_kafka_queue_destroy(q);
        if (opt)
                rd_kafka_AdminOptions_destroy(opt);
        if (tc)
                rd_kafka_TopicCollection_destroy(tc);
        free(names);
}

void audit_topic_ids_read(struct audit *a, struct audit_topic_id *out)
{
        size_t t;

        for (t = 0; t < a->ntopics; t++) {
                out[t].id[0] = '\0';
                out[t].why[0] = '\0';
        }
        topic_ids_read_on(a, a->rk, out);
        if (a->rk_src)
                topic_ids_read_on(a, a->rk_src, out);
}

void audit_topic_id_unknown(struct audit *a, size_t t, const char *why)
{
        if (a->topics[t].id_said)
                return;
        a->topics[t].id_said = 1;
        log_warn("cannot read the id of topic '%s' (%s): a recreated topic "
                 "is told by the fingerprint of the last audited record "
                 "alone",
                 a->topics[t].name, why);
}

static int audit_topic_id_changed(struct audit *a, size_t t,
                                  const struct audit_topic_id *now,
                                  char *errstr, size_t errstr_size)
{
        if (!now->id[0]) {
                audit_topic_id_unknown(a, t, now->why);
                return 0;
        }
        if (topic_id_compare(a->topics[t].id, now->id) != TOPIC_ID_CHANGED) {
                if (!a->topics[t].id[0])
                        snprintf(a->topics[t].id, sizeof(a->topics[t].id),
                                 "%s", now->id);
                return 0;
        }
        snprintf(errstr, errstr_size,
                 "topic '%s' was deleted and created again under the audit "
                 "(its topic id is now %s, the audit began with %s): the "
                 "ledger is left as it is, with its history; start "
                 "eosaudit again on it and it begins a new incarnation of "
                 "the topic, keeping this one as evidence",
                 a->topics[t].name, now->id, a->topics[t].id);
        return 1;
}

int audit_topic_ids_check(struct audit *a, const char *only, char *errstr,
                          size_t errstr_size)
{
        struct audit_topic_id *now = calloc(a->ntopics ? a->ntopics : 1,
                                            sizeof(*now));
        size_t t;
        int rc = 0;

        if (!now) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        audit_topic_ids_read(a, now);
        for (t = 0; t < a->ntopics && !rc; t++)
                if (!only || !strcmp(only, a->topics[t].name))
                        rc = audit_topic_id_changed(a, t, &now[t], errstr,
                                                    errstr_size);
        free(now);
        return rc;
}
