/*
 * test_status_group.c - serve --group's live figures (auditor/status.h):
 * a member's assignment bytes as the broker returns them (the consumer
 * protocol's MemberAssignment) parsed from hand-made blobs, every
 * truncation and inconsistent length refused without reading past the
 * end; and the group's view published and read back as a deep copy.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../auditor/audit/status.h"

struct blob {
        unsigned char b[256];
        size_t n;
};

static void put16(struct blob *x, int v)
{
        x->b[x->n++] = (unsigned char)((unsigned)v >> 8);
        x->b[x->n++] = (unsigned char)v;
}

static void put32(struct blob *x, int32_t v)
{
        uint32_t u = (uint32_t)v;

        x->b[x->n++] = (unsigned char)(u >> 24);
        x->b[x->n++] = (unsigned char)(u >> 16);
        x->b[x->n++] = (unsigned char)(u >> 8);
        x->b[x->n++] = (unsigned char)u;
}

static void putstr(struct blob *x, const char *s)
{
        put16(x, (int)strlen(s));
        memcpy(x->b + x->n, s, strlen(s));
        x->n += strlen(s);
}

/* version 1; "orders" [0, 7, 11], "" [], "pay" [3]; then user data.
 * *topics_end: where the topics end (the user data is not read). */
static void good_blob(struct blob *x, size_t *topics_end)
{
        memset(x, 0, sizeof(*x));
        put16(x, 1);
        put32(x, 3);
        putstr(x, "orders");
        put32(x, 3);
        put32(x, 0);
        put32(x, 7);
        put32(x, 11);
        putstr(x, "");
        put32(x, 0);
        putstr(x, "pay");
        put32(x, 1);
        put32(x, 3);
        *topics_end = x->n;
        put32(x, 4); /* user data: 4 bytes */
        put32(x, 0x01020304);
}

static void test_parse_good(void **state)
{
        struct status_member m = {0};
        struct blob x;
        size_t end;
        char err[256] = "";

        (void)state;
        good_blob(&x, &end);
        assert_int_equal(status_assignment_parse(x.b, x.n, &m, err,
                                                 sizeof(err)),
                         0);
        assert_int_equal(m.nparts, 4);
        assert_string_equal(m.parts[0].topic, "orders");
        assert_int_equal(m.parts[0].partition, 0);
        assert_int_equal(m.parts[1].partition, 7);
        assert_string_equal(m.parts[2].topic, "orders");
        assert_int_equal(m.parts[2].partition, 11);
        assert_string_equal(m.parts[3].topic, "pay");
        assert_int_equal(m.parts[3].partition, 3);
        status_member_release(&m);

        /* No assignment yet: empty, not an error. */
        assert_int_equal(status_assignment_parse(NULL, 0, &m, err,
                                                 sizeof(err)),
                         0);
        assert_int_equal(m.nparts, 0);
        status_member_release(&m);
}

static void test_parse_truncated(void **state)
{
        struct status_member m = {0};
        struct blob x;
        size_t end, len;
        char err[256];

        (void)state;
        good_blob(&x, &end);
        /* Each prefix is copied to a buffer of exactly its size, so that
         * ASan sees a read past it. */
        for (len = 1; len <= x.n; len++) {
                unsigned char *p = malloc(len);
                int rc;
                assert_non_null(p);
                memcpy(p, x.b, len);
                err[0] = '\0';
                rc = status_assignment_parse(p, len, &m, err, sizeof(err));
                if (len < end) {
                        assert_int_equal(rc, -1);
                        assert_int_equal(m.nparts, 0);
                        assert_null(m.parts);
                        assert_non_null(strstr(err, "truncated"));
                } else {
                        assert_int_equal(rc, 0);
                        assert_int_equal(m.nparts, 4);
                }
                status_member_release(&m);
                free(p);
        }
}

static void test_parse_inconsistent(void **state)
{
        struct status_member m = {0};
        struct blob x;
        char err[256];

        (void)state;
        /* Far more partitions than bytes. */
        memset(&x, 0, sizeof(x));
        put16(&x, 0);
        put32(&x, 1);
        putstr(&x, "t");
        put32(&x, 0x7fffffff);
        put32(&x, 1);
        assert_int_equal(status_assignment_parse(x.b, x.n, &m, err,
                                                 sizeof(err)),
                         -1);
        assert_null(m.parts);
        /* A negative count of partitions. */
        memset(&x, 0, sizeof(x));
        put16(&x, 0);
        put32(&x, 1);
        putstr(&x, "t");
        put32(&x, -1);
        assert_int_equal(status_assignment_parse(x.b, x.n, &m, err,
                                                 sizeof(err)),
                         -1);
        /* A topic name longer than the bytes, and a negative one. */
        memset(&x, 0, sizeof(x));
        put16(&x, 0);
        put32(&x, 1);
        put16(&x, 200);
        put32(&x, 0);
        assert_int_equal(status_assignment_parse(x.b, x.n, &m, err,
                                                 sizeof(err)),
                         -1);
        memset(&x, 0, sizeof(x));
        put16(&x, 0);
        put32(&x, 1);
        put16(&x, -2);
        put32(&x, 0);
        assert_int_equal(status_assignment_parse(x.b, x.n, &m, err,
                                                 sizeof(err)),
                         -1);
        /* Many topics announced, one there: the second is missing. */
        memset(&x, 0, sizeof(x));
        put16(&x, 0);
        put32(&x, 0x7fffffff);
        putstr(&x, "t");
        put32(&x, 1);
        put32(&x, 5);
        assert_int_equal(status_assignment_parse(x.b, x.n, &m, err,
                                                 sizeof(err)),
                         -1);
        assert_null(m.parts);
        assert_int_equal(m.nparts, 0);
        /* A negative version or count of topics. */
        memset(&x, 0, sizeof(x));
        put16(&x, -1);
        put32(&x, 0);
        assert_int_equal(status_assignment_parse(x.b, x.n, &m, err,
                                                 sizeof(err)),
                         -1);
        memset(&x, 0, sizeof(x));
        put16(&x, 0);
        put32(&x, -5);
        assert_int_equal(status_assignment_parse(x.b, x.n, &m, err,
                                                 sizeof(err)),
                         -1);
}

/* A view with a group published and read back: a deep copy that lives
 * after the original is released. */
static void test_view_copy(void **state)
{
        struct status *st = status_new();
        struct status_view v, out;
        struct status_group *g;
        struct blob x;
        size_t end;
        char err[256];
        const char *topics[] = {"orders"};

        (void)state;
        assert_non_null(st);
        assert_int_equal(status_view_init(&v, topics, 1, 1), 0);
        v.parts[0].topic = strdup("orders");
        v.parts[0].owned = 1;
        g = v.group = calloc(1, sizeof(*g));
        assert_non_null(g);
        g->group = strdup("g1");
        g->member = strdup("a");
        g->txn_id = strdup("eosaudit-g1-a");
        g->members = calloc(2, sizeof(*g->members));
        g->nmembers = 2;
        g->members[0].member_id = strdup("m-0");
        good_blob(&x, &end);
        assert_int_equal(status_assignment_parse(x.b, x.n, &g->members[0], err,
                                                 sizeof(err)),
                         0);
        g->members[1].member_id = strdup("m-1");
        g->members[1].self = 1;
        assert_int_equal(status_publish(st, &v), 0);
        status_view_release(&v);
        assert_int_equal(status_read(st, &out), 0);
        assert_non_null(out.group);
        assert_string_equal(out.group->group, "g1");
        assert_string_equal(out.group->txn_id, "eosaudit-g1-a");
        assert_null(out.group->instance_id);
        assert_int_equal(out.group->nmembers, 2);
        assert_int_equal(out.group->members[0].nparts, 4);
        assert_string_equal(out.group->members[0].parts[3].topic, "pay");
        assert_int_equal(out.group->members[1].self, 1);
        assert_int_equal(out.group->members[1].nparts, 0);
        assert_int_equal(out.parts[0].owned, 1);
        status_view_release(&out);
        status_free(st);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_parse_good),
            cmocka_unit_test(test_parse_truncated),
            cmocka_unit_test(test_parse_inconsistent),
            cmocka_unit_test(test_view_copy),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
