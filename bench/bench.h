/*
 * bench.h - what the engine's benchmark commands (bench_dedup, bench_txn,
 * bench_topic) share: a xorshift generator, the clocks they time with and
 * their option parsing (bench_dedup's and bench_topic's workload options
 * are the same flags).  Header-only: each benchmark is one program.
 */
#ifndef EOSAUDIT_BENCH_H
#define EOSAUDIT_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/*
 * The workload of the engine's benchmarks (bench_dedup, bench_topic): P
 * producers over N partitions, R records read in batches of B, producer
 * runs of 1..L records.  The caller sets the defaults before parsing.
 */
struct bench_opts {
        uint32_t nprod;  /* -p PRODUCERS */
        uint32_t nparts; /* -n PARTITIONS */
        size_t nrec;     /* -r RECORDS */
        uint32_t batch;  /* -b BATCH */
        uint32_t maxrun; /* -l MAX_RUN */
        const char *csv; /* --csv FILE, when the caller takes it */
};

/*
 * Parses argv[1..argc) into o: each number at least 1, --csv only when
 * csv_ok.  A bad number exits 2 with "PROG: bad WHAT 'S'", anything else
 * with the usage line.
 */
static inline void bench_opts_parse(struct bench_opts *o, const char *prog,
                                    int csv_ok, int argc, char **argv)
{
        const struct {
                const char *flag, *what;
                uint32_t *u32; /* else size_t *sz */
                size_t *sz;
        } num[] = {
            {"-p", "producers", &o->nprod, NULL},
            {"-n", "partitions", &o->nparts, NULL},
            {"-r", "records", NULL, &o->nrec},
            {"-b", "batch", &o->batch, NULL},
            {"-l", "max run", &o->maxrun, NULL},
        };
        const size_t nnum = sizeof(num) / sizeof(num[0]);
        int a;

        for (a = 1; a < argc; a++) {
                const char *v = a + 1 < argc ? argv[a + 1] : "";
                size_t k = 0;
                while (k < nnum && strcmp(argv[a], num[k].flag))
                        k++;
                if (k < nnum) {
                        long n = bench_parse_long(prog, v, num[k].what, 1);
                        if (num[k].u32)
                                *num[k].u32 = (uint32_t)n;
                        else
                                *num[k].sz = (size_t)n;
                } else if (csv_ok && !strcmp(argv[a], "--csv") &&
                           a + 1 < argc) {
                        o->csv = v;
                } else {
                        fprintf(stderr,
                                "usage: %s [-p PRODUCERS] [-n PARTITIONS] "
                                "[-r RECORDS] [-b BATCH] [-l MAX_RUN]%s\n",
                                prog, csv_ok ? " [--csv FILE]" : "");
                        exit(2);
                }
                a++; /* every option takes a value */
        }
}

#endif /* EOSAUDIT_BENCH_H */
