/*
 * process.c - the reference processor (see process.h), after librdkafka's
 * examples/transactions.c: poll a batch, produce its outputs in a
 * transaction, send the consumer's positions to the transaction, commit.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "../base/clock.h"
#include "../base/kconf.h"
#include "../base/log.h"
#include "process.h"

#define PROCESS_TIMEOUT_MS 30000

void process_opts_defaults(struct process_opts *o)
{
        memset(o, 0, sizeof(*o));
        o->mode = PROCESS_EXACTLY_ONCE;
        o->batch = 500;
}

struct session {
        const struct process_opts *o;
        rd_kafka_t *c, *p;
        struct process_stats *st;
        uint64_t since_start; /* records produced by this session */
        int crash;            /* crash_after applies to this session */
        int crashed;          /* crash_in_process: it did */
};

/* -F, then -X, then -b, then ours where the processor depends on them. */
static rd_kafka_conf_t *conf_make(const struct process_opts *o, int consumer,
                                  char *errstr, size_t errstr_size)
{
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        size_t i;

        /* A restart after a crash waits for the dead member's session to
         * end before it gets the partitions: keep that short (the broker's
         * default group.min.session.timeout.ms).  -X may change it. */
        if (consumer &&
            kconf_put(conf, "session.timeout.ms", "6000", errstr, errstr_size))
                goto fail;
        if (o->conf_file &&
            kconf_file_load(conf, o->conf_file, errstr, errstr_size))
                goto fail;
        /* kconf_set() refuses a secret: -X is on the command line. */
        for (i = 0; i < o->conf_kv_cnt; i++)
                if (kconf_set(conf, o->conf_kv[i], errstr, errstr_size))
                        goto fail;
        if (o->brokers && kconf_put(conf, "bootstrap.servers", o->brokers,
                                    errstr, errstr_size))
                goto fail;
        if (!kconf_has(conf, "bootstrap.servers")) {
                snprintf(errstr, errstr_size,
                         "no brokers: give -b or bootstrap.servers");
                goto fail;
        }
        if (consumer) {
                if (kconf_put(conf, "group.id", o->group, errstr,
                              errstr_size) ||
                    kconf_put(conf, "enable.auto.commit", "false", errstr,
                              errstr_size) ||
                    kconf_put(conf, "isolation.level", "read_committed",
                              errstr, errstr_size) ||
                    kconf_put(conf, "auto.offset.reset", "earliest", errstr,
                              errstr_size))
                        goto fail;
        } else {
                if (kconf_put(conf, "enable.idempotence", "true", errstr,
                              errstr_size) ||
                    kconf_put(conf, "linger.ms", "5", errstr, errstr_size))
                        goto fail;
                if (o->mode == PROCESS_EXACTLY_ONCE &&
                    kconf_put(conf, "transactional.id",
                              o->transactional_id ? o->transactional_id
                                                  : o->group,
                              errstr, errstr_size))
                        goto fail;
        }
        return conf;
fail:
        rd_kafka_conf_destroy(conf);
        return NULL;
}

/* Moves the consumer back to the group's committed offsets (the start of
 * the batch an abort threw away). */
static int rewind_to_committed(struct session *s, char *errstr,
                               size_t errstr_size)
{
        rd_kafka_topic_partition_list_t *l = NULL;
        rd_kafka_resp_err_t err;
        rd_kafka_error_t *e;
        int i, rc = -1;

        err = rd_kafka_assignment(s->c, &l);
        if (!err)
                err = rd_kafka_committed(s->c, l, PROCESS_TIMEOUT_MS);
        if (err) {
                snprintf(errstr, errstr_size,
                         "cannot read committed offsets to rewind: %s",
                         rd_kafka_err2str(err));
                goto out;
        }
        for (i = 0; i < l->cnt; i++)
                if (l->elems[i].offset < 0)
                        l->elems[i].offset = RD_KAFKA_OFFSET_BEGINNING;
        e = rd_kafka_seek_partitions(s->c, l, PROCESS_TIMEOUT_MS);
        if (e) {
                snprintf(errstr, errstr_size, "cannot rewind: %s",
                         rd_kafka_error_string(e));
                rd_kafka_error_destroy(e);
                goto out;
        }
        rc = 0;
out:
        if (l)
                rd_kafka_topic_partition_list_destroy(l);
        return rc;
}

/* One output record: the source record's value and headers, its key (or
 * key + "/r"). */
static int forward(struct session *s, const rd_kafka_message_t *m,
                   char *errstr, size_t errstr_size)
{
        rd_kafka_headers_t *h = NULL, *hc = NULL;
        char *key = NULL;
        size_t klen = m->key_len;
        rd_kafka_resp_err_t err;

        if (rd_kafka_message_headers(m, &h) == RD_KAFKA_RESP_ERR_NO_ERROR)
                hc = rd_kafka_headers_copy(h);
        if (s->o->rekey) {
                key = malloc(m->key_len + 2);
                if (!key) {
                        snprintf(errstr, errstr_size, "out of memory");
                        if (hc)
                                rd_kafka_headers_destroy(hc);
                        return -1;
                }
                if (m->key_len)
                        memcpy(key, m->key, m->key_len);
                memcpy(key + m->key_len, "/r", 2);
                klen = m->key_len + 2;
        }
        for (;;) {
                err =
                    rd_kafka_producev(s->p, RD_KAFKA_V_TOPIC(s->o->sink),
                                      RD_KAFKA_V_KEY(key ? key : m->key, klen),
                                      RD_KAFKA_V_VALUE(m->payload, m->len),
                                      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                      RD_KAFKA_V_HEADERS(hc), RD_KAFKA_V_END);
                if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        break;
                rd_kafka_poll(s->p, 100);
        }
        free(key);
        if (err) {
                if (hc)
                        rd_kafka_headers_destroy(hc);
                snprintf(errstr, errstr_size, "produce to %s: %s", s->o->sink,
                         rd_kafka_err2str(err));
                return -1;
        }
        s->st->produced++;
        s->since_start++;
        return 0;
}

/* exactly-once: ends the open transaction with the consumer's positions.
 * Returns 0, 1 when it was aborted (the caller has rewound), or -1. */
static int txn_end(struct session *s, int abort_on_purpose, char *errstr,
                   size_t errstr_size)
{
        rd_kafka_topic_partition_list_t *pos = NULL;
        rd_kafka_consumer_group_metadata_t *cgmd;
        rd_kafka_error_t *e = NULL;
        rd_kafka_resp_err_t err;

        err = rd_kafka_assignment(s->c, &pos);
        if (!err)
                err = rd_kafka_position(s->c, pos);
        if (err) {
                snprintf(errstr, errstr_size, "cannot read positions: %s",
                         rd_kafka_err2str(err));
                if (pos)
                        rd_kafka_topic_partition_list_destroy(pos);
                return -1;
        }
        cgmd = rd_kafka_consumer_group_metadata(s->c);
        e = rd_kafka_send_offsets_to_transaction(s->p, pos, cgmd, -1);
        rd_kafka_consumer_group_metadata_destroy(cgmd);
        rd_kafka_topic_partition_list_destroy(pos);
        if (!e && !abort_on_purpose)
                e = rd_kafka_commit_transaction(s->p, -1);
        if (!e && !abort_on_purpose) {
                s->st->transactions++;
                return 0;
        }
        if (e && rd_kafka_error_is_fatal(e)) {
                snprintf(errstr, errstr_size, "fatal transactional error: %s",
                         rd_kafka_error_string(e));
                rd_kafka_error_destroy(e);
                return -1;
        }
        if (e) {
                log_warn("process: transaction failed (%s): aborting it",
                         rd_kafka_error_string(e));
                rd_kafka_error_destroy(e);
        }
        e = rd_kafka_abort_transaction(s->p, -1);
        if (e) {
                snprintf(errstr, errstr_size, "cannot abort: %s",
                         rd_kafka_error_string(e));
                rd_kafka_error_destroy(e);
                return -1;
        }
        s->st->aborted++;
        return rewind_to_committed(s, errstr, errstr_size) ? -1 : 1;
}

static int assigned(struct session *s)
{
        rd_kafka_topic_partition_list_t *l = NULL;
        int n = 0;

        if (!rd_kafka_assignment(s->c, &l) && l)
                n = l->cnt;
        if (l)
                rd_kafka_topic_partition_list_destroy(l);
        return n > 0;
}

/* Ends the session as kill -9 would for the data; returns only with
 * crash_in_process (the caller then leaves the session at once). */
static void crash_now(struct session *s)
{
        if (s->o->mode == PROCESS_AT_LEAST_ONCE)
                rd_kafka_flush(s->p, PROCESS_TIMEOUT_MS);
        fprintf(stderr,
                "process: crashing on purpose after %" PRIu64
                " records (%" PRIu64 " transactions committed, %" PRIu64
                " aborted, %" PRIu64 " offset commits)\n",
                s->since_start, s->st->transactions, s->st->aborted,
                s->st->commits);
        if (!s->o->crash_in_process)
                _exit(137);
        s->crashed = 1;
}

static int session_run(struct session *s, char *errstr, size_t errstr_size)
{
        const struct process_opts *o = s->o;
        rd_kafka_topic_partition_list_t *topics;
        rd_kafka_conf_t *cc = NULL, *pc = NULL;
        rd_kafka_resp_err_t err;
        rd_kafka_error_t *e;
        int64_t last_ms = clock_mono_ms();
        uint64_t txn_no = 0;
        int rc = -1, in_txn = 0;
        size_t i;

        cc = conf_make(o, 1, errstr, errstr_size);
        pc = cc ? conf_make(o, 0, errstr, errstr_size) : NULL;
        if (!cc || !pc)
                goto out;
        s->p = rd_kafka_new(RD_KAFKA_PRODUCER, pc, errstr, errstr_size);
        if (!s->p)
                goto out;
        pc = NULL;
        s->c = rd_kafka_new(RD_KAFKA_CONSUMER, cc, errstr, errstr_size);
        if (!s->c)
                goto out;
        cc = NULL;
        rd_kafka_poll_set_consumer(s->c);
        if (o->mode == PROCESS_EXACTLY_ONCE) {
                e = rd_kafka_init_transactions(s->p, PROCESS_TIMEOUT_MS);
                if (e) {
                        snprintf(errstr, errstr_size, "init_transactions: %s",
                                 rd_kafka_error_string(e));
                        rd_kafka_error_destroy(e);
                        goto out;
                }
        }
        topics = rd_kafka_topic_partition_list_new((int)o->source_cnt);
        for (i = 0; i < o->source_cnt; i++)
                rd_kafka_topic_partition_list_add(topics, o->sources[i],
                                                  RD_KAFKA_PARTITION_UA);
        err = rd_kafka_subscribe(s->c, topics);
        rd_kafka_topic_partition_list_destroy(topics);
        if (err) {
                snprintf(errstr, errstr_size, "subscribe: %s",
                         rd_kafka_err2str(err));
                goto out;
        }
        while (!o->run || *o->run) {
                uint64_t n = 0;
                int purpose;

                while (n < o->batch) {
                        rd_kafka_message_t *m =
                            rd_kafka_consumer_poll(s->c, n ? 10 : 100);
                        if (!m)
                                break;
                        if (m->err) {
                                if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                                        log_warn("process: consumer: %s",
                                                 rd_kafka_message_errstr(m));
                                rd_kafka_message_destroy(m);
                                continue;
                        }
                        if (!in_txn && o->mode == PROCESS_EXACTLY_ONCE) {
                                e = rd_kafka_begin_transaction(s->p);
                                if (e) {
                                        snprintf(errstr, errstr_size,
                                                 "begin_transaction: %s",
                                                 rd_kafka_error_string(e));
                                        rd_kafka_error_destroy(e);
                                        rd_kafka_message_destroy(m);
                                        goto out;
                                }
                                in_txn = 1;
                        }
                        s->st->consumed++;
                        n++;
                        if (o->drop_every &&
                            m->offset % (int64_t)o->drop_every ==
                                (int64_t)o->drop_every - 1) {
                                s->st->dropped++;
                        } else if (forward(s, m, errstr, errstr_size)) {
                                rd_kafka_message_destroy(m);
                                goto out;
                        }
                        rd_kafka_message_destroy(m);
                        if (s->crash && s->since_start >= o->crash_after) {
                                crash_now(s);
                                rc = 0; /* crash_in_process */
                                goto out;
                        }
                }
                rd_kafka_poll(s->p, 0);
                if (!n) {
                        /* Idle only counts once partitions are ours (a
                         * restart may wait for a rebalance first). */
                        if (!assigned(s))
                                last_ms = clock_mono_ms();
                        else if (o->idle_exit_ms &&
                                 clock_mono_ms() - last_ms >= o->idle_exit_ms)
                                break;
                        continue;
                }
                last_ms = clock_mono_ms();
                if (o->mode == PROCESS_AT_LEAST_ONCE) {
                        rd_kafka_flush(s->p, PROCESS_TIMEOUT_MS);
                        err = rd_kafka_commit(s->c, NULL, 0);
                        if (err && err != RD_KAFKA_RESP_ERR__NO_OFFSET) {
                                snprintf(errstr, errstr_size,
                                         "offset commit: %s",
                                         rd_kafka_err2str(err));
                                goto out;
                        }
                        s->st->commits++;
                        continue;
                }
                txn_no++;
                purpose = o->abort_every && txn_no % o->abort_every == 0;
                in_txn = 0;
                if (txn_end(s, purpose, errstr, errstr_size) < 0)
                        goto out;
        }
        if (in_txn) {
                in_txn = 0;
                if (txn_end(s, 0, errstr, errstr_size) < 0)
                        goto out;
        }
        rc = 0;
out:
        if (cc)
                rd_kafka_conf_destroy(cc);
        if (pc)
                rd_kafka_conf_destroy(pc);
        if (s->c) {
                rd_kafka_consumer_close(s->c);
                rd_kafka_destroy(s->c);
        }
        if (s->p) {
                if (in_txn) {
                        e = rd_kafka_abort_transaction(s->p,
                                                       PROCESS_TIMEOUT_MS);
                        if (e)
                                rd_kafka_error_destroy(e);
                }
                rd_kafka_flush(s->p, PROCESS_TIMEOUT_MS);
                rd_kafka_destroy(s->p);
        }
        s->c = s->p = NULL;
        return rc;
}

int process_run(const struct process_opts *o, struct process_stats *st,
                char *errstr, size_t errstr_size)
{
        struct session s;
        pid_t pid;
        int status = 0;

        memset(st, 0, sizeof(*st));
        memset(&s, 0, sizeof(s));
        s.o = o;
        s.st = st;
        if (o->crash_after && o->crash_in_process) {
                s.crash = 1;
                if (session_run(&s, errstr, errstr_size))
                        return -1;
                if (!s.crashed) {
                        snprintf(errstr, errstr_size,
                                 "the crashing session ran out of records "
                                 "before the crash");
                        return -1;
                }
                /* As after a fork: the counts of the last session. */
                memset(st, 0, sizeof(*st));
                memset(&s, 0, sizeof(s));
                s.o = o;
                s.st = st;
                log_info("process: restarting after the crash");
                st->restarts = 1;
        } else if (o->crash_after) {
                /* The session that crashes runs in a child, as a process
                 * killed with kill -9 would: nothing of it is cleaned up. */
                fflush(NULL);
                pid = fork();
                if (pid < 0) {
                        snprintf(errstr, errstr_size, "fork: %s",
                                 strerror(errno));
                        return -1;
                }
                if (pid == 0) {
                        s.crash = 1;
                        if (session_run(&s, errstr, errstr_size)) {
                                fprintf(stderr, "process: %s\n", errstr);
                                _exit(1);
                        }
                        _exit(0); /* ran out of records before the crash */
                }
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                        ;
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 137) {
                        snprintf(errstr, errstr_size,
                                 "the crashing session ended with status %d "
                                 "instead of crashing",
                                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
                        return -1;
                }
                log_info("process: restarting after the crash");
                st->restarts = 1;
        }
        return session_run(&s, errstr, errstr_size);
}
