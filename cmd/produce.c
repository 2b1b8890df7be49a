/*
 * produce.c - `eosaudit produce`: the command line of the reference
 * producer (producer/producer.h), from the option table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../producer/producer.h"
#include "cmd.h"
#include "conf.h"

static void produce_usage(FILE *f)
{
        fputs("usage: eosaudit produce -b BROKERS -t TOPIC --producer NAME "
              "[options]\n"
              "\n"
              "Writes records stamped with the eos.producer, eos.epoch and "
              "eos.seq headers\n"
              "(eos.pid too when transactional) and a message id (eos.msgid) "
              "with an\n"
              "idempotent producer (acks=all).\n"
              "Record n has key NAME-n and goes to partition "
              "murmur2(key) % partitions,\n"
              "as Kafka's Java default partitioner would put it; eos.seq "
              "counts per\n"
              "(producer, epoch, topic, partition) from 0.\n"
              "\n",
              f);
        conf_usage_print(f, CONF_PRODUCE);
        fputs(
            "\n"
            "Prints one summary line to stderr:\n"
            "  produce: delivered=N failed=M aborted=K duplicates_injected=D "
            "gaps_injected=G\n"
            "  epoch=E records=R partitions=P pid=I transactions=T "
            "aborted_transactions=A\n"
            "  zombie_records=Z zombie_fenced=0|1 zombie_epoch=E "
            "redelivered_injected=R\n"
            "  restarts=S stopped=0|1 elapsed_ms=MS unconfirmed=U\n"
            "delivered counts visible writes (records, duplicates, replayed "
            "copies,\n"
            "zombie writes); epoch and pid are the last session's.\n"
            "unconfirmed counts writes librdkafka reported delivered "
            "without an offset\n"
            "(acked implicitly after an earlier batch failed): they may be "
            "missing.\n"
            "SIGINT/SIGTERM stop producing; the run still flushes and "
            "reports.\n"
            "Exit status: 0 all delivered, 1 some records not delivered (or "
            "unconfirmed) or a run-time\n"
            "error, 2 usage or configuration error.\n",
            f);
}

/* The options that only make sense with another. */
static int produce_check(const struct conf *c, char *errstr,
                         size_t errstr_size)
{
        if (conf_isset(c, CONF_TXN_SIZE) &&
            !conf_str(c, CONF_TRANSACTIONAL_ID)) {
                snprintf(errstr, errstr_size,
                         "--txn-size needs --transactional-id");
                return -1;
        }
        if (conf_isset(c, CONF_MSGID_HEADER) &&
            conf_int(c, CONF_MSGID_FROM) == PRODUCER_MSGID_NONE) {
                snprintf(errstr, errstr_size,
                         "--msgid-header needs --msgid-from key or index");
                return -1;
        }
        if (conf_isset(c, CONF_RESTART_REPLAY) &&
            !conf_int(c, CONF_RESTART_EVERY)) {
                snprintf(errstr, errstr_size,
                         "--restart-replay needs --restart-every N (N > 0)");
                return -1;
        }
        return 0;
}

/* The options into o; strings borrowed from c and kv. */
static void produce_opts(struct producer_opts *o, const struct conf *c,
                         char **kv)
{
        producer_opts_init(o);
        o->brokers = conf_str(c, CONF_BROKERS);
        o->topic = conf_str(c, CONF_PRODUCE_TOPIC);
        o->transactional_id = conf_str(c, CONF_TRANSACTIONAL_ID);
        /* As schema/HEADERS.md says: the transactional id by default. */
        o->name = conf_str(c, CONF_PRODUCER) ? conf_str(c, CONF_PRODUCER)
                                             : o->transactional_id;
        o->count = conf_int(c, CONF_PRODUCE_COUNT);
        o->rate = conf_dbl(c, CONF_PRODUCE_RATE);
        o->value_size = conf_int(c, CONF_SIZE);
        o->txn_size = conf_int(c, CONF_TXN_SIZE);
        o->abort_every = conf_int(c, CONF_ABORT_EVERY);
        o->txn_manifests = conf_str(c, CONF_PRODUCE_TXN_MANIFESTS);
        o->state_path = conf_str(c, CONF_STATE);
        if (conf_isset(c, CONF_EPOCH))
                o->epoch = conf_int(c, CONF_EPOCH);
        o->dup_rate = conf_dbl(c, CONF_INJECT_DUPLICATES);
        o->gap_rate = conf_dbl(c, CONF_INJECT_GAPS);
        o->zombie = conf_int(c, CONF_ZOMBIE) > 0;
        o->msgid_from = (enum producer_msgid)conf_int(c, CONF_MSGID_FROM);
        o->msgid_header = conf_str(c, CONF_MSGID_HEADER);
        o->restart_every = conf_int(c, CONF_RESTART_EVERY);
        o->restart_replay = conf_int(c, CONF_RESTART_REPLAY);
        o->scope_topic = conf_int(c, CONF_SCOPE) == 1;
        o->unkeyed = conf_int(c, CONF_UNKEYED) > 0;
        o->seed = conf_u64(c, CONF_SEED);
        o->conf_file = conf_str(c, CONF_PRODUCE_PROPERTIES_FILE);
        o->conf_kv = (const char *const *)kv;
        o->conf_kv_cnt = c->kafka_cnt;
        o->quiet = conf_int(c, CONF_QUIET) > 0;
}

int cmd_produce(int argc, char **argv, volatile sig_atomic_t *run)
{
        struct producer_opts o;
        struct producer_result res;
        struct conf c;
        char **kv = NULL;
        char errstr[1024], line[1024];
        int status = CMD_EXIT_ERROR, r;

        if (conf_init(&c)) {
                fprintf(stderr, "produce: out of memory\n");
                return CMD_EXIT_ERROR;
        }
        r = conf_argv_parse(&c, argc, argv, errstr, sizeof(errstr));
        if (r > 0) {
                produce_usage(stdout);
                status = CMD_EXIT_CLEAN;
                goto out;
        }
        if (r < 0 || produce_check(&c, errstr, sizeof(errstr))) {
                fprintf(stderr, "produce: %s\n", errstr);
                goto out;
        }
        if (conf_kafka_kv(&c, &kv)) {
                fprintf(stderr, "produce: out of memory\n");
                goto out;
        }
        produce_opts(&o, &c, kv);
        o.run = run;
        if (producer_opts_check(&o, errstr, sizeof(errstr)) == -1) {
                fprintf(stderr, "produce: %s\n", errstr);
                goto out;
        }
        r = producer_run(&o, &res, errstr, sizeof(errstr));
        if (r == PRODUCER_ERR_CONFIG) {
                fprintf(stderr, "produce: %s\n", errstr);
                goto out;
        }
        if (r != 0)
                fprintf(stderr, "produce: %s\n", errstr);
        if (res.unconfirmed)
                fprintf(stderr,
                        "produce: %llu record(s) were reported delivered "
                        "without an offset (librdkafka acked them "
                        "implicitly after an earlier batch failed): they "
                        "may be missing from the log\n",
                        (unsigned long long)res.unconfirmed);
        producer_result_format(&res, 0, line, sizeof(line));
        fprintf(stderr, "produce: %s\n", line);
        if (conf_int(&c, CONF_PRODUCE_JSON)) {
                producer_result_format(&res, 1, line, sizeof(line));
                printf("%s\n", line);
                fflush(stdout);
        }
        status = r != 0 || res.failed > 0 || res.unconfirmed > 0
                     ? CMD_EXIT_ANOMALIES
                     : CMD_EXIT_CLEAN;
out:
        conf_kafka_kv_free(kv);
        conf_release(&c);
        return status;
}
