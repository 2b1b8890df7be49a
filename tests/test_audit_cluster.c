/*
 * test_audit_cluster.c - which consumer reads a topic when the flow's
 * sources are on another cluster (auditor/audit/cluster.c): a source's
 * handle is the sources' own, every other topic's the one; a partition
 * list splits into the two with every element's offset kept, in order,
 * and without a sources' handle nothing moves.  The handles are never
 * called here, only compared.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../auditor/audit/internal.h"

static const char *const sources[] = {"orders", "payments"};

/* An audit with the flow's sources set and two distinct handles that
 * are never dereferenced. */
static void audit_init(struct audit *a, int two_clusters)
{
        static char sinks_rk, sources_rk;

        memset(a, 0, sizeof(*a));
        a->conf.sources = sources;
        a->conf.source_cnt = 2;
        a->rk = (rd_kafka_t *)&sinks_rk;
        a->rk_src = two_clusters ? (rd_kafka_t *)&sources_rk : NULL;
}

static void test_rk_of(void **state)
{
        struct audit a;

        (void)state;
        audit_init(&a, 1);
        assert_ptr_equal(audit_rk_of(&a, "orders"), a.rk_src);
        assert_ptr_equal(audit_rk_of(&a, "payments"), a.rk_src);
        assert_ptr_equal(audit_rk_of(&a, "primary.orders"), a.rk);
        assert_ptr_equal(audit_rk_of(&a, "order"), a.rk);
        audit_init(&a, 0);
        assert_ptr_equal(audit_rk_of(&a, "orders"), a.rk);
}

static void test_split(void **state)
{
        static const struct {
                const char *topic;
                int32_t partition;
                int64_t offset;
        } in[] = {{"sink", 0, 10},     {"orders", 0, 20}, {"sink", 1, 11},
                  {"payments", 2, 22}, {"orders", 1, 21}, {"sink", 2, 12}};
        rd_kafka_topic_partition_list_t *l, *src;
        struct audit a;
        size_t i;

        (void)state;
        audit_init(&a, 1);
        l = rd_kafka_topic_partition_list_new(6);
        for (i = 0; i < 6; i++)
                rd_kafka_topic_partition_list_add(l, in[i].topic,
                                                  in[i].partition)
                    ->offset = in[i].offset;
        src = audit_cluster_split(&a, l);
        assert_non_null(src);
        assert_int_equal(l->cnt, 3);
        assert_int_equal(src->cnt, 3);
        for (i = 0; i < 3; i++) {
                assert_string_equal(l->elems[i].topic, "sink");
                assert_int_equal(l->elems[i].partition, (int32_t)i);
                assert_int_equal(l->elems[i].offset, 10 + (int64_t)i);
        }
        assert_string_equal(src->elems[0].topic, "orders");
        assert_int_equal(src->elems[0].offset, 20);
        assert_string_equal(src->elems[1].topic, "payments");
        assert_int_equal(src->elems[1].partition, 2);
        assert_int_equal(src->elems[1].offset, 22);
        assert_string_equal(src->elems[2].topic, "orders");
        assert_int_equal(src->elems[2].partition, 1);
        assert_int_equal(src->elems[2].offset, 21);
        rd_kafka_topic_partition_list_destroy(src);
        rd_kafka_topic_partition_list_destroy(l);

        /* One cluster: l keeps everything. */
        audit_init(&a, 0);
        l = rd_kafka_topic_partition_list_new(6);
        for (i = 0; i < 6; i++)
                rd_kafka_topic_partition_list_add(l, in[i].topic,
                                                  in[i].partition);
        assert_null(audit_cluster_split(&a, l));
        assert_int_equal(l->cnt, 6);
        rd_kafka_topic_partition_list_destroy(l);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_rk_of),
            cmocka_unit_test(test_split),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
