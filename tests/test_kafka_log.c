/*
 * test_kafka_log.c - librdkafka's log through ours (base/kafka_log.h): the
 * cause kept for a one-line error, without librdkafka's thread tag, client
 * name, broker prefix or connection state.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "../base/kafka_log.h"
#include "../base/log.h"

static void test_last_error(void **state)
{
        char buf[512];

        (void)state;
        log_set_level(LOG_ERROR); /* quiet: only what is kept matters */
        kafka_log_clear();
        assert_int_equal(kafka_log_last_error(buf, sizeof(buf)), 0);
        assert_string_equal(buf, "");
        /* Info and debug lines are not causes. */
        kafka_log_cb(NULL, 6, "CONFWARN", "[thrd:app]: something");
        assert_int_equal(kafka_log_last_error(buf, sizeof(buf)), 0);

        kafka_log_cb(NULL, 3, "FAIL",
                     "[thrd:nosuch:9092/bootstrap]: nosuch:9092/bootstrap: "
                     "Failed to resolve 'nosuch:9092': Name or service not "
                     "known (after 3ms in state CONNECT)");
        assert_int_equal(kafka_log_last_error(buf, sizeof(buf)), 1);
        assert_string_equal(buf, "Failed to resolve 'nosuch:9092': Name or "
                                 "service not known");
        /* "brokers are down" says less: the cause stays. */
        kafka_log_cb(NULL, 3, "ERROR",
                     "[thrd:nosuch:9092/bootstrap]: 1/1 brokers are down");
        kafka_log_last_error(buf, sizeof(buf));
        assert_string_equal(buf, "Failed to resolve 'nosuch:9092': Name or "
                                 "service not known");
        kafka_log_cb(NULL, 3, "ERROR",
                     "[thrd:app]: eosaudit#consumer-1: GroupCoordinator: "
                     "127.0.0.1:9092: Connect to ipv4#127.0.0.1:9092 failed: "
                     "Connection refused (after 0ms in state CONNECT, 1 "
                     "identical error(s) suppressed)");
        kafka_log_last_error(buf, sizeof(buf));
        assert_string_equal(buf, "Connect to ipv4#127.0.0.1:9092 failed: "
                                 "Connection refused");
        kafka_log_clear();
        assert_int_equal(kafka_log_last_error(buf, sizeof(buf)), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_last_error),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
