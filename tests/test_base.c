/*
 * test_base.c - base/'s pure helpers: the one hex encoding (hex.h) and
 * the one array growth (grow.h), table-driven.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../base/grow.h"
#include "../base/hex.h"

static void test_hex_encode(void **state)
{
        static const struct {
                const char *bytes;
                size_t len;
                const char *hex;
        } cases[] = {
            {"", 0, ""},
            {"\x00", 1, "00"},
            {"\xff\x7f\x80", 3, "ff7f80"},
            {"A\x0a\xab\xcd\xef", 5, "410aabcdef"},
            {"p-1", 3, "702d31"},
        };
        char out[64];
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                memset(out, 'x', sizeof(out));
                assert_int_equal(hex_encode(out, cases[i].bytes, cases[i].len),
                                 2 * cases[i].len);
                assert_string_equal(out, cases[i].hex);
        }
}

static void test_hex_decode(void **state)
{
        static const struct {
                const char *in;
                size_t cap;
                long want; /* bytes, or -1 */
                const char *bytes;
        } cases[] = {
            {"", 4, 0, ""},
            {"00", 4, 1, "\x00"},
            {"ff7f80", 4, 3, "\xff\x7f\x80"},
            {"FF7F80", 4, 3, "\xff\x7f\x80"}, /* either case */
            {"aBcD", 4, 2, "\xab\xcd"},
            {"abc", 4, -1, NULL}, /* odd length */
            {"0g", 4, -1, NULL},  /* not a digit */
            {"g0", 4, -1, NULL},
            {" 0", 4, -1, NULL},
            {"0011223344", 4, -1, NULL}, /* 5 bytes into 4 */
            {"00112233", 4, 4, "\x00\x11\x22\x33"},
        };
        unsigned char out[8];
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                long n = hex_decode(out, cases[i].cap, cases[i].in,
                                    strlen(cases[i].in));
                assert_int_equal(n, cases[i].want);
                if (n > 0)
                        assert_memory_equal(out, cases[i].bytes, (size_t)n);
        }
        for (i = 0; i < 256; i++) { /* every byte there and back */
                unsigned char b = (unsigned char)i, back;
                char hex[3];
                hex_encode(hex, &b, 1);
                assert_int_equal(hex_decode(&back, 1, hex, 2), 1);
                assert_int_equal(back, b);
        }
        assert_int_equal(hex_digit('0'), 0);
        assert_int_equal(hex_digit('f'), 15);
        assert_int_equal(hex_digit('F'), 15);
        assert_int_equal(hex_digit('/'), -1);
        assert_int_equal(hex_digit(':'), -1);
        assert_int_equal(hex_digit('G'), -1);
        assert_int_equal(hex_digit('\0'), -1);
}

static void test_grow(void **state)
{
        static const struct {
                size_t cap, need, first, want_cap;
        } cases[] = {
            {0, 1, 16, 16},  /* first allocation */
            {0, 17, 16, 32}, /* doubled from first until it fits */
            {0, 100, 64, 128}, {16, 16, 16, 16}, /* already fits: nothing */
            {16, 17, 16, 32},  {16, 100, 16, 128},
            {0, 3, 0, 4}, /* no first: from one */
        };
        size_t i;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                size_t cap = cases[i].cap, mem = 0;
                int *arr = cap ? calloc(cap, sizeof(*arr)) : NULL;

                assert_int_equal(grow_array((void **)&arr, &cap, cases[i].need,
                                            sizeof(*arr), cases[i].first,
                                            &mem),
                                 0);
                assert_int_equal(cap, cases[i].want_cap);
                assert_int_equal(mem, (cases[i].want_cap - cases[i].cap) *
                                          sizeof(*arr));
                arr[cap - 1] = 7; /* the room is there (ASan) */
                free(arr);
        }
}

/* Past what size_t can hold it fails cleanly and leaves the array be. */
static void test_grow_overflow(void **state)
{
        size_t cap = 4, mem = 0;
        int *arr = calloc(cap, sizeof(*arr)), *was = arr;

        (void)state;
        assert_int_equal(grow_array((void **)&arr, &cap, SIZE_MAX / 2,
                                    sizeof(*arr), 4, &mem),
                         -1);
        assert_ptr_equal(arr, was);
        assert_int_equal(cap, 4);
        assert_int_equal(mem, 0);
        assert_int_equal(grow_array((void **)&arr, &cap, SIZE_MAX, 1, 4, NULL),
                         -1);
        assert_int_equal(cap, 4);
        assert_int_equal(grow_array((void **)&arr, &cap, 5, sizeof(*arr), 4,
                                    NULL),
                         0); /* mem may be NULL */
        assert_int_equal(cap, 8);
        free(arr);
}

/* The zeroing variant: the items kept keep their values, every item
 * added is 0 (realloc's garbage never shows). */
static void test_grow_zero(void **state)
{
        size_t cap = 0, i;
        int64_t *arr = NULL;

        (void)state;
        assert_int_equal(grow_array_zero((void **)&arr, &cap, 3, sizeof(*arr),
                                         4, NULL),
                         0);
        assert_int_equal(cap, 4);
        for (i = 0; i < cap; i++) {
                assert_int_equal(arr[i], 0);
                arr[i] = -1;
        }
        assert_int_equal(grow_array_zero((void **)&arr, &cap, 9, sizeof(*arr),
                                         4, NULL),
                         0);
        assert_int_equal(cap, 16);
        for (i = 0; i < cap; i++)
                assert_int_equal(arr[i], i < 4 ? -1 : 0);
        /* Fits already: nothing touched. */
        assert_int_equal(grow_array_zero((void **)&arr, &cap, 16, sizeof(*arr),
                                         4, NULL),
                         0);
        assert_int_equal(arr[0], -1);
        assert_int_equal(grow_array_zero((void **)&arr, &cap, SIZE_MAX / 2,
                                         sizeof(*arr), 4, NULL),
                         -1);
        assert_int_equal(cap, 16);
        free(arr);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_grow_zero),
            cmocka_unit_test(test_hex_encode),
            cmocka_unit_test(test_hex_decode),
            cmocka_unit_test(test_grow),
            cmocka_unit_test(test_grow_overflow),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
