/*
 * test_producer_mock.c - the reference producer end to end against
 * librdkafka's in-process mock cluster, every record read back with a
 * plain consumer: idempotent and transactional runs, injections, zombies,
 * the state file, stop and rate.  The fixture is producer_fixture.h.
 */
#include "producer_fixture.h"

static void test_mock_idempotent(void **state)
{
        struct producer_opts o;
        struct producer_result res;
        struct readback rb;
        struct audit a;
        char errstr[512];
        size_t i;

        (void)state;
        mock_opts(&o, mock_topic());
        o.count = 20000;
        assert_int_equal(producer_run(&o, &res, errstr, sizeof(errstr)), 0);
        fprintf(stderr,
                "mock: %" PRIu64 " records of 100 bytes in %" PRId64 " ms\n",
                res.delivered, res.elapsed_ms);
        assert_int_equal(res.delivered, 20000);
        assert_int_equal(res.records, 20000);
        assert_int_equal(res.failed, 0);
        assert_int_equal(res.epoch, 0);
        assert_int_equal(res.pid, -1);
        assert_int_equal(res.partition_cnt, MOCK_PARTITIONS);

        mock_read(o.topic, &rb);
        assert_int_equal(rb.cnt, 20000);
        assert_int_equal(prev_check(&rb), 0); /* one session: no prev */
        audit(&rb, &a);
        assert_int_equal(a.dups + a.gaps + a.fenced, 0);
        for (i = 0; i < rb.cnt; i++) {
                assert_int_equal(rb.recs[i].epoch, 0);
                assert_int_equal(rb.recs[i].pid, -1);
        }
        free(rb.recs);
}

static void test_mock_injections(void **state)
{
        static const struct {
                double dup, gap;
                uint64_t seed;
                int64_t count;
        } cases[] = {
            {0.05, 0.05, 42, 3000},
            {0.5, 0, 7, 500},
            {0, 0.5, 7, 500},
            {1, 1, 3, 50}, /* every record: gap before, copy after */
        };
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct producer_opts o;
                struct producer_result res, again;
                struct readback rb;
                struct audit a;
                char errstr[512];

                mock_opts(&o, mock_topic());
                o.count = cases[i].count;
                o.dup_rate = cases[i].dup;
                o.gap_rate = cases[i].gap;
                o.seed = cases[i].seed;
                assert_int_equal(producer_run(&o, &res, errstr,
                                              sizeof(errstr)),
                                 0);
                assert_int_equal(res.failed, 0);
                assert_int_equal(res.records, (uint64_t)cases[i].count);
                assert_int_equal(res.delivered,
                                 res.records + res.duplicates_injected);
                if (cases[i].dup > 0)
                        assert_true(res.duplicates_injected > 0);
                if (cases[i].gap > 0)
                        assert_true(res.gaps_injected > 0);
                if (cases[i].dup == 1)
                        assert_int_equal(res.duplicates_injected,
                                         (uint64_t)cases[i].count);

                mock_read(o.topic, &rb);
                assert_int_equal(rb.cnt, res.delivered);
                audit(&rb, &a);
                assert_int_equal(a.dups, res.duplicates_injected);
                assert_int_equal(a.gaps, res.gaps_injected);
                assert_int_equal(a.fenced, 0);
                free(rb.recs);

                /* Same seed, same injections. */
                o.topic = mock_topic();
                assert_int_equal(producer_run(&o, &again, errstr,
                                              sizeof(errstr)),
                                 0);
                assert_int_equal(again.duplicates_injected,
                                 res.duplicates_injected);
                assert_int_equal(again.gaps_injected, res.gaps_injected);
        }
}

static void test_mock_zombie_idempotent(void **state)
{
        struct producer_opts o;
        struct producer_result res;
        struct readback rb;
        struct audit a;
        char errstr[512];

        (void)state;
        mock_opts(&o, mock_topic());
        o.count = 300;
        o.epoch = 5;
        o.zombie = 1;
        o.gap_rate = 0.1;
        o.dup_rate = 0.1;
        assert_int_equal(producer_run(&o, &res, errstr, sizeof(errstr)), 0);
        assert_int_equal(res.failed, 0);
        assert_int_equal(res.zombie_epoch, 5);
        assert_int_equal(res.epoch, 6);
        assert_int_equal(res.records, 300);
        assert_int_equal(res.zombie_records, 30);
        assert_int_equal(res.delivered, 300 + 30 + res.duplicates_injected);

        mock_read(o.topic, &rb);
        assert_int_equal(rb.cnt, res.delivered);
        audit(&rb, &a);
        assert_int_equal(a.fenced, res.zombie_records);
        assert_int_equal(a.dups, res.duplicates_injected);
        assert_int_equal(a.gaps, res.gaps_injected);
        free(rb.recs);
}

static void test_mock_state_file(void **state)
{
        static const struct {
                int zombie;
                int32_t epoch; /* of the live session */
                const char *after;
        } runs[] = {
            {0, 0, "0\n"},
            {0, 1, "1\n"},
            {1, 3, "3\n"}, /* the zombie takes 2, the live one 3 */
            {0, 4, "4\n"},
        };
        char path[] = "/tmp/test_producer_state.XXXXXX";
        char errstr[512];
        size_t i;
        int fd = mkstemp(path);

        (void)state;
        assert_true(fd >= 0);
        close(fd);
        unlink(path); /* a missing file is a first run */
        for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
                struct producer_opts o;
                struct producer_result res;
                char buf[32] = "";
                FILE *fp;

                mock_opts(&o, mock_topic());
                o.count = 20;
                o.state_path = path;
                o.zombie = runs[i].zombie;
                assert_int_equal(producer_run(&o, &res, errstr,
                                              sizeof(errstr)),
                                 0);
                assert_int_equal(res.epoch, runs[i].epoch);
                fp = fopen(path, "r");
                assert_non_null(fp);
                assert_non_null(fgets(buf, sizeof(buf), fp));
                fclose(fp);
                assert_string_equal(buf, runs[i].after);
        }
        /* A corrupt counter stops the run before anything is produced. */
        fd = open(path, O_WRONLY | O_TRUNC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "x\n", 2), 2);
        close(fd);
        {
                struct producer_opts o;
                struct producer_result res;

                mock_opts(&o, mock_topic());
                o.state_path = path;
                assert_int_equal(producer_run(&o, &res, errstr,
                                              sizeof(errstr)),
                                 PRODUCER_ERR_RUN);
                assert_non_null(strstr(errstr, "expected one line"));
                assert_int_equal(res.delivered, 0);
        }
        unlink(path);
}

static void test_mock_transactional(void **state)
{
        struct producer_opts o;
        struct producer_result res;
        struct readback rb;
        char errstr[512];
        int64_t *seqs;
        size_t i;

        (void)state;
        mock_opts(&o, mock_topic());
        o.transactional_id = "test-txn-1";
        o.count = 500;
        o.txn_size = 50;
        o.abort_every = 3;
        o.gap_rate = 0.02;
        o.dup_rate = 0.02;
        assert_int_equal(producer_run(&o, &res, errstr, sizeof(errstr)), 0);
        assert_int_equal(res.failed, 0);
        assert_true(res.pid >= 0);
        assert_true(res.epoch >= 0);
        /* Transactions 3, 6, 9 and 12 abort; 10 commit by number 14. */
        assert_int_equal(res.transactions, 10);
        assert_int_equal(res.aborted_transactions, 4);
        assert_true(res.aborted >= 200);
        assert_int_equal(res.records, 500);
        assert_int_equal(res.delivered, res.records + res.duplicates_injected);

        mock_read(o.topic, &rb);
        for (i = 0; i < rb.cnt; i++) {
                assert_int_equal(rb.recs[i].pid, res.pid);
                assert_int_equal(rb.recs[i].epoch, res.epoch);
        }
        /* The mock cluster writes no transaction markers, so aborted
         * records stay visible: each is an exact copy (key and seq) of a
         * record its retry committed. */
        assert_int_equal(rb.cnt, res.delivered + res.aborted);
        seqs = malloc((size_t)o.count * sizeof(*seqs));
        assert_non_null(seqs);
        for (i = 0; i < (size_t)o.count; i++)
                seqs[i] = -1;
        for (i = 0; i < rb.cnt; i++) {
                int64_t k;

                assert_memory_equal(rb.recs[i].key, "tp-", 3);
                assert_int_equal(kconf_parse_i64(rb.recs[i].key + 3, 0,
                                                 o.count - 1, &k),
                                 0);
                if (seqs[k] == -1)
                        seqs[k] = rb.recs[i].seq;
                assert_int_equal(rb.recs[i].seq, seqs[k]);
        }
        for (i = 0; i < (size_t)o.count; i++)
                assert_true(seqs[i] >= 0);
        free(seqs);
        free(rb.recs);
}

/* The mock neither bumps the epoch for a second init_transactions() of the
 * same id nor fences the first instance, so the zombie's transaction
 * commits here; against a real broker it must end in zombie_fenced=1
 * (tests/integration).  This checks the flow and the counts. */
static void test_mock_zombie_transactional(void **state)
{
        struct producer_opts o;
        struct producer_result res;
        char errstr[512];

        (void)state;
        mock_opts(&o, mock_topic());
        o.transactional_id = "test-txn-zombie";
        o.count = 200;
        o.txn_size = 40;
        o.zombie = 1;
        assert_int_equal(producer_run(&o, &res, errstr, sizeof(errstr)), 0);
        assert_int_equal(res.failed, 0);
        assert_int_equal(res.records, 200);
        assert_true(res.pid >= 0);
        assert_true(res.zombie_epoch >= 0);
        /* A: 100 in 3 transactions, B: 100 in 3, the zombie 20 in 1. */
        assert_int_equal(res.transactions, 7);
        if (res.zombie_fenced) {
                assert_int_equal(res.zombie_records, 0);
        } else {
                assert_int_equal(res.zombie_records, 20);
        }
        assert_int_equal(res.delivered, 200 + res.zombie_records);
}

static void test_mock_stop(void **state)
{
        /* With restarts too: a stop ends the run, no restart follows. */
        static const int64_t restart_every[] = {0, 1};
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(restart_every) / sizeof(restart_every[0]);
             i++) {
                struct producer_opts o;
                struct producer_result res;
                volatile sig_atomic_t run = 0;
                char errstr[512];

                mock_opts(&o, mock_topic());
                o.run = &run;
                o.restart_every = restart_every[i];
                assert_int_equal(producer_run(&o, &res, errstr,
                                              sizeof(errstr)),
                                 0);
                assert_int_equal(res.stopped, 1);
                assert_int_equal(res.delivered, 0);
                assert_int_equal(res.failed, 0);
                assert_int_equal(res.restarts, 0);
        }
}

static void test_mock_rate(void **state)
{
        struct producer_opts o;
        struct producer_result res;
        char errstr[512];

        (void)state;
        mock_opts(&o, mock_topic());
        o.count = 50;
        o.rate = 200;
        assert_int_equal(producer_run(&o, &res, errstr, sizeof(errstr)), 0);
        assert_int_equal(res.delivered, 50);
        /* 49 intervals of 5 ms. */
        assert_true(res.elapsed_ms >= 240);
        assert_true(res.elapsed_ms < 2000);
}

#define T(f) cmocka_unit_test(f)

/*
 * A retriable error on a partition's first Produce request while later
 * ones to it are in flight: the broker takes a later batch (a producer it
 * has no state for on the partition may start at any seq: Kafka accepts
 * it, and the mock checks no seq for an idempotent producer), and
 * librdkafka (2.0.2, and master) then acks the refused batch's records
 * implicitly ("IMPLICITACK": a success report with no offset) without
 * ever sending them again.  They are not in the log: the producer must
 * not count them delivered.  This is what a topic made a moment before
 * its producer starts does (t_84: the leader named before its log exists,
 * NOT_LEADER_OR_FOLLOWER to the first batch only).
 */
static void test_mock_implicit_ack(void **state)
{
        static const char *const kv[] = {"log_level=3", "linger.ms=0",
                                         "batch.num.messages=1"};
        struct producer_opts o;
        struct producer_result res;
        struct readback rb;
        char errstr[512];
        int32_t b;

        (void)state;
        mock_opts(&o, mock_topic());
        o.conf_kv = kv;
        o.conf_kv_cnt = sizeof(kv) / sizeof(kv[0]);
        o.count = 300;
        /* Each broker's first Produce refused, its answer 300 ms late:
         * the next requests are in flight by then, and written. */
        for (b = 1; b <= 3; b++)
                assert_int_equal(
                    rd_kafka_mock_broker_push_request_error_rtts(
                        mock, b, 0 /* Produce */, 1,
                        RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION, 300),
                    RD_KAFKA_RESP_ERR_NO_ERROR);
        assert_int_equal(producer_run(&o, &res, errstr, sizeof(errstr)), 0);
        mock_read(o.topic, &rb);
        fprintf(stderr,
                "implicit ack: delivered %" PRIu64 ", unconfirmed %" PRIu64
                ", in the log %zu\n",
                res.delivered, res.unconfirmed, rb.cnt);
        /* Every record reported delivered is in the log; the others are
         * unconfirmed (here none is: the refused batch was never sent
         * again), and the case happened. */
        assert_int_equal(rb.cnt, res.delivered);
        assert_int_equal(res.failed, 0);
        assert_true(res.unconfirmed >= 1);
        assert_int_equal(res.delivered + res.unconfirmed, 300);
        free(rb.recs);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_mock_idempotent),
            T(test_mock_injections),
            T(test_mock_zombie_idempotent),
            T(test_mock_state_file),
            T(test_mock_transactional),
            T(test_mock_zombie_transactional),
            T(test_mock_stop),
            T(test_mock_rate),
            T(test_mock_implicit_ack),
        };

        int failed = cmocka_run_group_tests_name("producer against the mock "
                                                 "cluster",
                                                 tests, setup_mock,
                                                 teardown_mock);

        return failed ? 1 : 0;
}
