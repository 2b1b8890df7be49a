/*
 * test_audit_pool.c - the audit's helper threads (auditor/audit/pool.h):
 * every item of a job runs exactly once, audit_pool_wait() returns only
 * once the items below its bound are done (and their writes visible),
 * the items past wait_max are done by audit_pool_finish(), jobs follow
 * one another without a late helper touching the next, and the caller
 * alone (no helper, or helpers that get no CPU) still runs every chunk.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../auditor/audit/pool.h"

struct job {
        _Atomic unsigned *runs; /* per item: times fn ran it */
        uint64_t *val;          /* per item: written by fn, plain */
        uint64_t salt;
        size_t n;
        _Atomic size_t bad; /* chunks given out of [0, n) */
};

static void job_fn(void *opaque, size_t b, size_t e)
{
        struct job *j = opaque;
        size_t i;

        if (b >= e || e > j->n)
                atomic_fetch_add(&j->bad, 1);
        for (i = b; i < e && i < j->n; i++) {
                /* some work, so that helpers and caller overlap */
                uint64_t x = i * 0x9E3779B97F4A7C15ull ^ j->salt;
                int r;
                for (r = 0; r < 50; r++)
                        x = x * 6364136223846793005ull +
                            1442695040888963407ull;
                j->val[i] = x;
                atomic_fetch_add(&j->runs[i], 1);
        }
}

static uint64_t expect(size_t i, uint64_t salt)
{
        uint64_t x = i * 0x9E3779B97F4A7C15ull ^ salt;
        int r;

        for (r = 0; r < 50; r++)
                x = x * 6364136223846793005ull + 1442695040888963407ull;
        return x;
}

static void job_init(struct job *j, size_t n, uint64_t salt)
{
        size_t i;

        j->runs = malloc((n ? n : 1) * sizeof(*j->runs));
        j->val = calloc(n ? n : 1, sizeof(*j->val));
        assert_non_null(j->runs);
        assert_non_null(j->val);
        for (i = 0; i < n; i++)
                atomic_init(&j->runs[i], 0);
        atomic_init(&j->bad, 0);
        j->n = n;
        j->salt = salt;
}

static void job_free(struct job *j)
{
        free(j->runs);
        free(j->val);
}

/* One job through the pool the way the audit loop drives it. */
static void run_job(struct audit_pool *p, size_t n, size_t chunk,
                    size_t wait_max, uint64_t salt)
{
        struct job j;
        size_t i;

        job_init(&j, n, salt);
        assert_int_equal(audit_pool_start(p, job_fn, &j, n, chunk, wait_max),
                         0);
        for (i = 0; i < wait_max; i++) {
                audit_pool_wait(p, i + 1);
                assert_true(audit_pool_done(p, i));
                /* fn's plain write is visible once the wait returns */
                assert_true(j.val[i] == expect(i, salt));
                assert_int_equal(atomic_load(&j.runs[i]), 1);
        }
        audit_pool_finish(p);
        for (i = 0; i < n; i++) {
                assert_int_equal(atomic_load(&j.runs[i]), 1);
                assert_true(j.val[i] == expect(i, salt));
        }
        assert_int_equal(atomic_load(&j.bad), 0);
        /* finished: nothing is reported done any more */
        assert_false(audit_pool_done(p, 0));
        job_free(&j);
}

static void test_helpers(unsigned helpers)
{
        char err[256];
        struct audit_pool *p = audit_pool_new(helpers, err, sizeof(err));
        size_t k;

        assert_non_null(p);
        assert_int_equal(audit_pool_helpers(p), helpers);
        /* sizes around the chunk, wait_max at every kind of boundary */
        run_job(p, 0, 256, 0, 1);
        run_job(p, 1, 256, 1, 2);
        run_job(p, 10000, 256, 10000, 3);
        run_job(p, 10000 + 7000, 256, 10000, 4);
        run_job(p, 513, 256, 257, 5);
        run_job(p, 300, 1, 100, 6);
        run_job(p, 5, 256, 0, 7);
        /* many short jobs in a row: a helper that wakes late must not
         * run a chunk of the next one as its own */
        for (k = 0; k < 300; k++)
                run_job(p, 3 * 64 + (k % 5), 64, (k % 3) * 64 + k % 7,
                        100 + k);
        audit_pool_free(p);
}

static void test_no_helper(void **state)
{
        (void)state;
        test_helpers(0);
}

static void test_one_helper(void **state)
{
        (void)state;
        test_helpers(1);
}

static void test_three_helpers(void **state)
{
        (void)state;
        test_helpers(3);
}

static void test_bad_args(void **state)
{
        char err[256];
        struct audit_pool *p = audit_pool_new(1, err, sizeof(err));
        struct job j;

        (void)state;
        assert_non_null(p);
        job_init(&j, 10, 0);
        /* chunk 0, wait_max past n: refused, nothing started */
        assert_int_equal(audit_pool_start(p, job_fn, &j, 10, 0, 10), -1);
        assert_int_equal(audit_pool_start(p, job_fn, &j, 10, 4, 11), -1);
        assert_false(audit_pool_done(p, 0));
        audit_pool_wait(p, 5); /* no job: returns */
        audit_pool_finish(p);
        assert_int_equal(atomic_load(&j.runs[0]), 0);
        job_free(&j);
        /* freeing with a job started and never waited for finishes it */
        job_init(&j, 1000, 9);
        assert_int_equal(audit_pool_start(p, job_fn, &j, 1000, 16, 500), 0);
        audit_pool_free(p);
        for (size_t i = 0; i < 1000; i++)
                assert_int_equal(atomic_load(&j.runs[i]), 1);
        job_free(&j);
        audit_pool_free(NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_no_helper),
            cmocka_unit_test(test_one_helper),
            cmocka_unit_test(test_three_helpers),
            cmocka_unit_test(test_bad_args),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
