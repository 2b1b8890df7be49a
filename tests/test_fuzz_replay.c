/*
 * test_fuzz_replay.c - replays the fuzzers' corpora as plain tests, so
 * `make test` exercises every input libFuzzer found interesting without
 * needing clang or libFuzzer (`make fuzz` runs the fuzzers themselves).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The targets are compiled in here; each defines its own entry point. */
#define LLVMFuzzerTestOneInput fuzz_hdrs_one
#include "fuzz/fuzz_hdrs.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_query_one
#include "fuzz/fuzz_query.c"
#undef LLVMFuzzerTestOneInput

typedef int(fuzz_target)(const uint8_t *data, size_t size);

static size_t replay_dir(const char *dir, fuzz_target *target)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        size_t n = 0;

        if (!d)
                fail_msg("cannot open corpus %s (run from the repository "
                         "root)",
                         dir);
        while ((de = readdir(d))) {
                char path[512];
                uint8_t *buf;
                long len;
                FILE *f;
                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                f = fopen(path, "rb");
                assert_non_null(f);
                fseek(f, 0, SEEK_END);
                len = ftell(f);
                fseek(f, 0, SEEK_SET);
                buf = malloc(len > 0 ? (size_t)len : 1);
                assert_non_null(buf);
                assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
                fclose(f);
                target(buf, (size_t)len);
                free(buf);
                n++;
        }
        closedir(d);
        return n;
}

static void test_replay_hdrs(void **state)
{
        (void)state;
        assert_true(replay_dir("tests/fuzz/corpus/hdrs", fuzz_hdrs_one) >= 10);
}

/* Also runs the ledger queries: the target makes its ledger in $TMPDIR
 * (or /tmp) on first use and removes it at exit. */
static void test_replay_query(void **state)
{
        (void)state;
        assert_true(replay_dir("tests/fuzz/corpus/query", fuzz_query_one) >=
                    20);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_replay_hdrs),
            cmocka_unit_test(test_replay_query),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
