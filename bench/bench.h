/*
 * bench.h - what the engine's benchmark commands (bench_dedup, bench_txn,
 * bench_topic) share: a xorshift generator, the clocks they time with and
 * their option parsing.  Header-only: each benchmark is one program.
 */
#ifndef EOSAUDIT_BENCH_H
#define EOSAUDIT_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* xorshift64*: *s must not be 0. */
static inline uint64_t bench_rng(uint64_t *s)
{
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        return *s * 0x2545f4914f6cdd1dULL;
}

static inline double bench_clock_s(clockid_t id)
{
        struct timespec ts;

        clock_gettime(id, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wall time; the calling thread's CPU time (on a shared machine a wall
 * clock times the neighbours too). */
static inline double bench_wall_s(void)
{
        return bench_clock_s(CLOCK_MONOTONIC);
}

static inline double bench_cpu_s(void)
{
        return bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
}

/* A decimal option of at least min; exits 2 with "PROG: bad WHAT 'S'". */
static inline long bench_parse_long(const char *prog, const char *s,
                                    const char *what, long min)
{
        char *end;
        long v = strtol(s, &end, 10);

        if (*s == '\0' || *end != '\0' || v < min) {
                fprintf(stderr, "%s: bad %s '%s'\n", prog, what, s);
                exit(2);
        }
        return v;
}

#endif /* EOSAUDIT_BENCH_H */
