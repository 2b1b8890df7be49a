/*
 * test_producer_msgid.c - the reference producer's message ids and
 * restarts against librdkafka's in-process mock cluster: ids from a
 * number, the id header, replays at restart, records never delivered.
 * The fixture is producer_fixture.h.
 */
#include "producer_fixture.h"

/* ------------------------------------------------------------------ */
/* Message ids and restarts                                            */
/* ------------------------------------------------------------------ */

#define IDAUDIT_EPOCHS 64

/* What an auditor of message ids would see in one producer's records
 * without gaps or zombies (record n has key "tp-n"). */
struct idaudit {
        uint64_t distinct;    /* records with at least one copy */
        uint64_t dups;        /* copies with the previous copy's epoch
                                 and seq: in-session duplicates */
        uint64_t redelivered; /* copies in a higher epoch than the
                                 previous copy: cross-session repeats */
        size_t epoch_cnt;
        int64_t epochs[IDAUDIT_EPOCHS];   /* ascending */
        uint64_t replays[IDAUDIT_EPOCHS]; /* redelivered per epoch */
};

/* One (partition, epoch) stream of seqs. */
struct idstream {
        int32_t partition;
        int64_t epoch, next;
        int fresh; /* a first copy was seen: replays come before those */
};

static int64_t rec_number(const struct rec *r, int64_t count)
{
        int64_t n;

        assert_memory_equal(r->key, "tp-", 3);
        assert_int_equal(kconf_parse_i64(r->key + 3, 0, count - 1, &n), 0);
        return n;
}

/*
 * Checks every record of rb: its id (from idhdr, see mock_read_id()) is
 * what from says for its number (none: no eos.msgid at all); seqs run
 * from 0 by 1 in each (partition, epoch), a copy with the previous copy's
 * epoch and seq aside; epochs never go down on a partition; a record seen
 * before in a lower epoch is a redelivery, which comes before any new
 * record of its session on that partition.  With every > 0, the copies
 * in the k-th epoch after the first are of records every*k - replay ..
 * every*k - 1.
 */
static void idaudit(const struct readback *rb, int64_t count,
                    enum producer_msgid from, int64_t every, int64_t replay,
                    struct idaudit *a)
{
        int64_t *last_epoch = malloc((size_t)count * sizeof(*last_epoch));
        int64_t *last_seq = malloc((size_t)count * sizeof(*last_seq));
        struct idstream streams[MOCK_PARTITIONS * IDAUDIT_EPOCHS];
        int64_t top[MOCK_PARTITIONS];
        size_t stream_cnt = 0, i, j;

        memset(a, 0, sizeof(*a));
        assert_non_null(last_epoch);
        assert_non_null(last_seq);
        for (i = 0; i < (size_t)count; i++)
                last_epoch[i] = last_seq[i] = -1;
        for (i = 0; i < MOCK_PARTITIONS; i++)
                top[i] = -1;
        /* The sessions, in order. */
        for (i = 0; i < rb->cnt; i++) {
                int64_t e = rb->recs[i].epoch;

                for (j = 0; j < a->epoch_cnt && a->epochs[j] != e; j++)
                        ;
                if (j < a->epoch_cnt)
                        continue;
                assert_true(a->epoch_cnt < IDAUDIT_EPOCHS);
                for (j = a->epoch_cnt++; j > 0 && a->epochs[j - 1] > e; j--)
                        a->epochs[j] = a->epochs[j - 1];
                a->epochs[j] = e;
        }
        for (i = 0; i < rb->cnt; i++) {
                const struct rec *r = &rb->recs[i];
                int64_t n = rec_number(r, count);
                struct idstream *st = NULL;
                char want[64];
                size_t k;

                if (from == PRODUCER_MSGID_NONE) {
                        assert_false(r->has_msgid);
                        assert_false(r->has_id);
                } else {
                        if (from == PRODUCER_MSGID_KEY)
                                snprintf(want, sizeof(want), "%s", r->key);
                        else
                                snprintf(want, sizeof(want), "%" PRId64, n);
                        assert_true(r->has_id);
                        assert_int_equal(r->id_cnt, 1);
                        assert_string_equal(r->id, want);
                }
                for (k = 0; k < a->epoch_cnt && a->epochs[k] != r->epoch; k++)
                        ;
                assert_true(r->epoch >= top[r->partition]); /* no zombie */
                top[r->partition] = r->epoch;
                for (j = 0; j < stream_cnt && !st; j++)
                        if (streams[j].partition == r->partition &&
                            streams[j].epoch == r->epoch)
                                st = &streams[j];
                if (!st) {
                        assert_true(stream_cnt <
                                    sizeof(streams) / sizeof(streams[0]));
                        st = &streams[stream_cnt++];
                        memset(st, 0, sizeof(*st));
                        st->partition = r->partition;
                        st->epoch = r->epoch;
                }
                if (last_epoch[n] == r->epoch && last_seq[n] == r->seq) {
                        a->dups++; /* the same write again */
                        assert_int_equal(r->seq, st->next - 1);
                        continue;
                }
                assert_int_equal(r->seq, st->next);
                st->next++;
                if (last_epoch[n] < 0) {
                        a->distinct++;
                        st->fresh = 1;
                } else {
                        /* The original (and any earlier replay) is in a
                         * lower epoch; replays open the session. */
                        assert_true(r->epoch > last_epoch[n]);
                        assert_false(st->fresh);
                        a->redelivered++;
                        a->replays[k]++;
                        if (every > 0) {
                                assert_true(k >= 1);
                                assert_true(n < every * (int64_t)k);
                                assert_true(n >= every * (int64_t)k - replay);
                        }
                }
                last_epoch[n] = r->epoch;
                last_seq[n] = r->seq;
        }
        free(last_epoch);
        free(last_seq);
}

static void test_mock_msgid_from(void **state)
{
        static const enum producer_msgid cases[] = {
            PRODUCER_MSGID_KEY,
            PRODUCER_MSGID_INDEX,
            PRODUCER_MSGID_NONE,
        };
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct producer_opts o;
                struct producer_result res;
                struct readback rb;
                struct idaudit a;
                char errstr[512];

                mock_opts(&o, mock_topic());
                o.count = 300;
                o.dup_rate = 0.2; /* a duplicate carries its record's id */
                o.msgid_from = cases[i];
                assert_int_equal(producer_run(&o, &res, errstr,
                                              sizeof(errstr)),
                                 0);
                assert_int_equal(res.failed, 0);
                assert_true(res.duplicates_injected > 0);
                assert_int_equal(res.restarts, 0);
                assert_int_equal(res.redelivered_injected, 0);

                mock_read(o.topic, &rb);
                assert_int_equal(rb.cnt, res.delivered);
                idaudit(&rb, o.count, cases[i], 0, 0, &a);
                assert_int_equal(a.distinct, 300);
                assert_int_equal(a.dups, res.duplicates_injected);
                assert_int_equal(a.redelivered, 0);
                assert_int_equal(a.epoch_cnt, 1);
                free(rb.recs);
        }
}

static void test_mock_msgid_header(void **state)
{
        static const struct {
                enum producer_msgid from;
                const char *header;
        } cases[] = {
            {PRODUCER_MSGID_KEY, "ce_id"},
            {PRODUCER_MSGID_INDEX, "x-request-id"},
            {PRODUCER_MSGID_KEY, "eos.msgid"},
        };
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct producer_opts o;
                struct producer_result res;
                struct readback rb;
                struct idaudit a;
                char errstr[512];
                size_t j;

                mock_opts(&o, mock_topic());
                o.count = 100;
                o.msgid_from = cases[i].from;
                o.msgid_header = cases[i].header;
                assert_int_equal(producer_run(&o, &res, errstr,
                                              sizeof(errstr)),
                                 0);
                assert_int_equal(res.delivered, 100);

                mock_read_id(o.topic, cases[i].header, &rb);
                assert_int_equal(rb.cnt, 100);
                idaudit(&rb, o.count, cases[i].from, 0, 0, &a);
                assert_int_equal(a.distinct, 100);
                /* The id is under the other name only. */
                for (j = 0; j < rb.cnt; j++)
                        assert_int_equal(rb.recs[j].has_msgid,
                                         strcmp(cases[i].header,
                                                "eos.msgid") == 0);
                free(rb.recs);
        }
}

/* Removes what an aborted transaction left visible on the mock cluster
 * (it writes no transaction markers): a record followed by another with
 * its partition, epoch and seq, which its retry wrote.  Only for runs
 * without injected duplicates.  Returns how many were removed. */
static size_t drop_aborted(struct readback *rb)
{
        size_t i, j, kept = 0;

        for (i = 0; i < rb->cnt; i++) {
                const struct rec *r = &rb->recs[i];
                int retried = 0;

                for (j = i + 1; j < rb->cnt && !retried; j++)
                        if (rb->recs[j].partition == r->partition &&
                            rb->recs[j].epoch == r->epoch &&
                            rb->recs[j].seq == r->seq) {
                                assert_string_equal(rb->recs[j].key, r->key);
                                retried = 1;
                        }
                if (!retried)
                        rb->recs[kept++] = *r;
        }
        j = rb->cnt - kept;
        rb->cnt = kept;
        return j;
}

/* Records replayed at restart k (1, 2, ...), which comes after record
 * every * k - 1: the last replay of them, or all there are. */
static uint64_t replays_at(int64_t every, int64_t replay, uint64_t k)
{
        uint64_t sent = (uint64_t)every * k;

        return (uint64_t)replay < sent ? (uint64_t)replay : sent;
}

static void test_mock_restart(void **state)
{
        static const struct {
                const char *txid; /* NULL: idempotent */
                int64_t count, every, replay;
                int64_t epoch; /* --epoch, -1 none */
                int state;     /* --state (a fresh file) */
                double dup;
                int64_t txn_size, abort_every;
                enum producer_msgid from;
        } cases[] = {
            /* 3 restarts, 10 replayed after each. */
            {NULL, 100, 30, 10, -1, 0, 0, 0, 0, PRODUCER_MSGID_KEY},
            /* Replays reach back past the last restart; duplicates
                 * (same session) stay apart from replays. */
            {NULL, 50, 7, 20, -1, 0, 0.2, 0, 0, PRODUCER_MSGID_INDEX},
            /* New sessions only; --epoch 5 goes up by one. */
            {NULL, 40, 10, 0, 5, 0, 0, 0, 0, PRODUCER_MSGID_KEY},
            /* Never more replays than records delivered; --state
                 * takes an epoch per session. */
            {NULL, 30, 10, 1000, -1, 1, 0, 0, 0, PRODUCER_MSGID_KEY},
            /* -n a multiple of N: no restart after the last record. */
            {NULL, 20, 10, 5, -1, 0, 0, 0, 0, PRODUCER_MSGID_KEY},
            /* Transactional: the last transaction commits first. */
            {"tx-restart-1", 120, 50, 15, -1, 0, 0, 20, 0, PRODUCER_MSGID_KEY},
            /* Aborted transactions with replays in them replay them
                 * again in their retry. */
            {"tx-restart-2", 100, 40, 30, -1, 0, 0, 15, 2,
             PRODUCER_MSGID_INDEX},
        };
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct producer_opts o;
                struct producer_result res;
                struct readback rb;
                struct idaudit a;
                char errstr[512];
                char path[] = "/tmp/test_producer_restart.XXXXXX";
                uint64_t restarts = (uint64_t)(cases[i].count - 1) /
                                    (uint64_t)cases[i].every;
                uint64_t want = 0, k;
                size_t j;

                fprintf(stderr, "restart case %zu\n", i);
                mock_opts(&o, mock_topic());
                o.count = cases[i].count;
                o.restart_every = cases[i].every;
                o.restart_replay = cases[i].replay;
                o.epoch = cases[i].epoch;
                o.dup_rate = cases[i].dup;
                o.msgid_from = cases[i].from;
                if (cases[i].txid) {
                        o.transactional_id = cases[i].txid;
                        o.txn_size = cases[i].txn_size;
                        o.abort_every = cases[i].abort_every;
                }
                if (cases[i].state) {
                        int fd = mkstemp(path);

                        assert_true(fd >= 0);
                        close(fd);
                        unlink(path); /* a first run */
                        o.state_path = path;
                }
                assert_int_equal(producer_run(&o, &res, errstr,
                                              sizeof(errstr)),
                                 0);
                for (k = 1; k <= restarts; k++)
                        want += replays_at(cases[i].every, cases[i].replay, k);
                assert_int_equal(res.failed, 0);
                assert_int_equal(res.records, (uint64_t)cases[i].count);
                assert_int_equal(res.restarts, restarts);
                assert_int_equal(res.redelivered_injected, want);
                assert_int_equal(res.delivered, res.records +
                                                    res.duplicates_injected +
                                                    res.redelivered_injected);
                if (cases[i].dup > 0)
                        assert_true(res.duplicates_injected > 0);

                mock_read(o.topic, &rb);
                if (cases[i].abort_every) {
                        assert_true(res.aborted_transactions > 0);
                        assert_int_equal(drop_aborted(&rb), res.aborted);
                }
                assert_int_equal(rb.cnt, res.delivered);
                assert_true(prev_check(&rb) > 0);
                idaudit(&rb, o.count, cases[i].from, cases[i].every,
                        cases[i].replay, &a);
                assert_int_equal(a.distinct, (uint64_t)cases[i].count);
                assert_int_equal(a.redelivered, res.redelivered_injected);
                assert_int_equal(a.dups, res.duplicates_injected);
                /* One session per restart, each with a higher epoch. */
                assert_int_equal(a.epoch_cnt, restarts + 1);
                assert_int_equal(a.epochs[a.epoch_cnt - 1], res.epoch);
                for (k = 1; k <= restarts; k++)
                        assert_int_equal(a.replays[k],
                                         replays_at(cases[i].every,
                                                    cases[i].replay, k));
                if (!cases[i].txid) {
                        int64_t first = cases[i].epoch > 0 ? cases[i].epoch
                                                           : 0;

                        for (j = 0; j < a.epoch_cnt; j++)
                                assert_int_equal(a.epochs[j],
                                                 first + (int64_t)j);
                } else {
                        assert_true(res.pid >= 0);
                }
                if (cases[i].state) {
                        char buf[32] = "", want_buf[32];
                        FILE *fp = fopen(path, "r");

                        assert_non_null(fp);
                        assert_non_null(fgets(buf, sizeof(buf), fp));
                        fclose(fp);
                        snprintf(want_buf, sizeof(want_buf), "%" PRIu64 "\n",
                                 restarts);
                        assert_string_equal(buf, want_buf);
                        unlink(path);
                }
                free(rb.recs);
        }
}

/* Records that were never delivered are not replayed: a partition
 * without a leader loses every record sent to it. */
static void test_mock_restart_lost(void **state)
{
        /* Long enough for the other partitions' records to be delivered
         * on a loaded machine (300 ms failed them all under librdkafka
         * 2.14 with a load of 7 on 2 cores), short for the lost ones. */
        static const char *const kv[] = {"log_level=3",
                                         "message.timeout.ms=1500"};
        struct producer_opts o;
        struct producer_result res;
        struct readback rb;
        struct idaudit a;
        char errstr[512], key[32];
        uint64_t lost = 0, want = 0;
        int64_t n;

        (void)state;
        mock_opts(&o, mock_topic());
        o.conf_kv = kv;
        o.conf_kv_cnt = 2;
        o.count = 30;
        o.restart_every = 10;
        o.restart_replay = 10;
        assert_int_equal(rd_kafka_mock_partition_set_leader(mock, o.topic, 2,
                                                            -1),
                         RD_KAFKA_RESP_ERR_NO_ERROR);
        assert_int_equal(producer_run(&o, &res, errstr, sizeof(errstr)), 0);
        for (n = 0; n < o.count; n++) {
                int len = snprintf(key, sizeof(key), "tp-%" PRId64, n);

                if (producer_partition(key, (size_t)len, MOCK_PARTITIONS) == 2)
                        lost++;
                else if (n < 20) /* replayed at the restart after 10, 20 */
                        want++;
        }
        assert_true(lost > 0);
        assert_int_equal(res.restarts, 2);
        assert_int_equal(res.failed, lost); /* no replay of them failed */
        assert_int_equal(res.redelivered_injected, want);

        /* A leader again, so that reading reaches the partition's end. */
        assert_int_equal(rd_kafka_mock_partition_set_leader(mock, o.topic, 2,
                                                            1),
                         RD_KAFKA_RESP_ERR_NO_ERROR);
        mock_read(o.topic, &rb);
        assert_int_equal(rb.cnt, res.delivered);
        idaudit(&rb, o.count, PRODUCER_MSGID_KEY, 10, 10, &a);
        assert_int_equal(a.distinct, 30 - lost);
        assert_int_equal(a.redelivered, want);
        free(rb.recs);
}

#define T(f) cmocka_unit_test(f)

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_mock_msgid_from),
            T(test_mock_msgid_header),
            T(test_mock_restart),
            T(test_mock_restart_lost),
        };

        int failed = cmocka_run_group_tests_name("producer against the mock "
                                                 "cluster",
                                                 tests, setup_mock,
                                                 teardown_mock);

        return failed ? 1 : 0;
}
