/*
 * bench_dedup.c - the engine alone: parsed headers in, verdicts out, on
 * one core; and header parsing on its own.
 *
 * Workload: P producers over N partitions, every producer writing to every
 * partition (P*N tracked pairs).  Records arrive in per-partition batches
 * of B records as a consumer delivers them; inside a batch they come in
 * producer runs (a Kafka record batch belongs to one producer) whose
 * length is drawn from 1..R.  R=1 is the worst case: every record from
 * another producer than the one before.
 *
 * usage: bench_dedup [-p PRODUCERS] [-n PARTITIONS] [-r RECORDS]
 *                    [-b BATCH] [-l MAX_RUN] [--csv FILE]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../dedup/dedup.h"
#include "bench.h"

struct wrec {
        uint32_t part;
        uint32_t prod;
        int64_t seq;
};

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rng(void)
{
        return bench_rng(&rng_state);
}

static double now_s(void)
{
        return bench_wall_s();
}

/* next[prod * nparts + part] is each pair's next seq, carried across calls. */
static struct wrec *workload(uint32_t nprod, uint32_t nparts, size_t nrec,
                             uint32_t batch, uint32_t maxrun, int64_t *next)
{
        struct wrec *w = malloc(nrec * sizeof(*w));
        size_t i = 0;
        uint32_t part = 0;

        if (!w) {
                fprintf(stderr, "bench_dedup: out of memory\n");
                exit(2);
        }
        while (i < nrec) {
                uint32_t filled = 0;
                while (filled < batch && i < nrec) {
                        uint32_t prod = (uint32_t)(rng() % nprod);
                        uint32_t run = 1 + (uint32_t)(rng() % maxrun), k;
                        for (k = 0; k < run && filled < batch && i < nrec;
                             k++, filled++, i++) {
                                w[i].part = part;
                                w[i].prod = prod;
                                w[i].seq =
                                    next[(size_t)prod * nparts + part]++;
                        }
                }
                part = (part + 1) % nparts;
        }
        return w;
}

struct result {
        const char *what;
        double recs_per_s;
        double ns_per_rec;
};

static struct result classify(const char *what, struct dedup_tracker *tr,
                              const struct wrec *w, size_t nrec,
                              char (*names)[24], const size_t *name_len,
                              int64_t *offsets, uint32_t batch)
{
        struct dedup_hdrs h;
        struct result r = {what, 0, 0};
        uint64_t bad = 0;
        double t0, dt;
        size_t i;

        dedup_hdrs_init(&h);
        h.seen = DEDUP_HDR_REQUIRED;
        t0 = now_s();
        for (i = 0; i < nrec; i++) {
                const struct wrec *x = &w[i];
                enum dedup_verdict v;
                h.producer = names[x->prod];
                h.producer_len = name_len[x->prod];
                h.epoch = 1;
                h.seq = x->seq;
                v = dedup_tracker_observe(tr, x->part, offsets[x->part]++, &h);
                bad += v != DEDUP_V_OK && v != DEDUP_V_BASELINE;
                if ((i + 1) % batch == 0) {
                        /* What a consumer does between batches. */
                        dedup_tracker_tick(tr);
                        dedup_tracker_dirty_clear(tr);
                        dedup_tracker_events_clear(tr);
                }
        }
        dt = now_s() - t0;
        if (bad) {
                fprintf(stderr, "bench_dedup: %llu unexpected verdicts\n",
                        (unsigned long long)bad);
                exit(1);
        }
        r.recs_per_s = (double)nrec / dt;
        r.ns_per_rec = dt * 1e9 / (double)nrec;
        return r;
}

static struct result parse_bench(size_t nrec)
{
        static const char *const other_name[] = {"traceparent",
                                                 "content-type"};
        static const char *const other_val[] = {
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "application/json"};
        char seqs[64][24];
        struct result r = {"header parsing (3 eos.* + 2 other headers)", 0, 0};
        uint64_t sink = 0;
        double t0, dt;
        size_t i;
        int k;

        for (k = 0; k < 64; k++)
                snprintf(seqs[k], sizeof(seqs[k]), "%d", 1000000 + k * 7919);
        t0 = now_s();
        for (i = 0; i < nrec; i++) {
                struct dedup_hdrs h;
                const char *s = seqs[i & 63];
                dedup_hdrs_init(&h);
                dedup_hdrs_feed(&h, other_name[0], 11, other_val[0], 55);
                dedup_hdrs_feed(&h, "eos.producer", 12, "orders-service-7",
                                16);
                dedup_hdrs_feed(&h, "eos.epoch", 9, "42", 2);
                dedup_hdrs_feed(&h, "eos.seq", 7, s, strlen(s));
                dedup_hdrs_feed(&h, other_name[1], 12, other_val[1], 16);
                sink += (uint64_t)h.seq + dedup_hdrs_status(&h);
        }
        dt = now_s() - t0;
        if (sink == 0)
                fprintf(stderr, "impossible\n");
        r.recs_per_s = (double)nrec / dt;
        r.ns_per_rec = dt * 1e9 / (double)nrec;
        return r;
}

int main(int argc, char **argv)
{
        struct bench_opts o = {.nprod = 10000,
                               .nparts = 100,
                               .nrec = 20000000,
                               .batch = 500,
                               .maxrun = 32};
        struct dedup_config conf;
        struct dedup_tracker *tr;
        struct result res[4];
        char(*names)[24];
        size_t *name_len, npairs, mem, names_mem = 0, nres = 0, i;
        int64_t *offsets;
        struct wrec *w, *warm;
        int64_t *next;

        bench_opts_parse(&o, "bench_dedup", 1, argc, argv);

        names = malloc(o.nprod * sizeof(*names));
        name_len = malloc(o.nprod * sizeof(*name_len));
        offsets = calloc(o.nparts, sizeof(*offsets));
        if (!names || !name_len || !offsets)
                return 2;
        for (i = 0; i < o.nprod; i++) {
                int n = snprintf(names[i], sizeof(names[i]), "producer-%zu",
                                 i * 7919);
                name_len[i] = (size_t)n;
                names_mem += 24 + (size_t)n; /* struct dedup_name + bytes */
        }

        dedup_config_defaults(&conf);
        tr = dedup_tracker_new(&conf);
        for (i = 0; i < o.nparts; i++)
                dedup_tracker_part_add(tr, (uint32_t)i, 0);
        dedup_tracker_begin(tr, 1);

        /* Warm-up creates every pair once (baseline records). */
        warm = malloc((size_t)o.nprod * o.nparts * sizeof(*warm));
        if (!warm)
                return 2;
        for (i = 0; i < (size_t)o.nprod * o.nparts; i++) {
                warm[i].part = (uint32_t)(i % o.nparts);
                warm[i].prod = (uint32_t)(i / o.nparts);
                warm[i].seq = 0;
        }
        res[nres++] = classify("pair creation (first record of each pair)", tr,
                               warm, (size_t)o.nprod * o.nparts, names,
                               name_len, offsets, o.batch);
        free(warm);

        next = malloc((size_t)o.nprod * o.nparts * sizeof(*next));
        if (!next)
                return 2;
        for (i = 0; i < (size_t)o.nprod * o.nparts; i++)
                next[i] = 1; /* the warm-up used seq 0 */
        fprintf(stderr, "bench_dedup: generating %zu records...\n", o.nrec);
        w = workload(o.nprod, o.nparts, o.nrec, o.batch, o.maxrun, next);
        res[nres++] = classify("classify, producer runs 1..R", tr, w, o.nrec,
                               names, name_len, offsets, o.batch);
        npairs = dedup_tracker_pairs(tr);
        mem = dedup_tracker_memory(tr);
        free(w);

        /* Worst case: every record from another producer, same pairs. */
        w = workload(o.nprod, o.nparts, o.nrec / 4, o.batch, 1, next);
        res[nres++] = classify("classify, worst case (runs of 1)", tr, w,
                               o.nrec / 4, names, name_len, offsets, o.batch);
        free(w);
        free(next);
        res[nres++] = parse_bench(o.nrec);

        printf("\nengine benchmark: %u producers x %u partitions = %zu pairs, "
               "batches of %u, producer runs 1..%u, %zu records\n\n",
               o.nprod, o.nparts, npairs, o.batch, o.maxrun, o.nrec);
        printf("%-48s %14s %10s\n", "figure", "records/s", "ns/record");
        for (i = 0; i < nres; i++)
                printf("%-48s %14.0f %10.1f\n", res[i].what, res[i].recs_per_s,
                       res[i].ns_per_rec);
        printf("\nmemory: %zu bytes total, %.1f bytes per pair including "
               "the shared names, %.1f excluding them\n",
               mem, (double)mem / (double)npairs,
               (double)(mem - names_mem) / (double)npairs);
        if (o.csv) {
                FILE *f = fopen(o.csv, "w");
                if (!f) {
                        perror(o.csv);
                        return 2;
                }
                fprintf(f, "figure,records_per_s,ns_per_record\n");
                for (i = 0; i < nres; i++)
                        fprintf(f, "\"%s\",%.0f,%.2f\n", res[i].what,
                                res[i].recs_per_s, res[i].ns_per_rec);
                fprintf(f, "\"bytes per pair incl. names\",%.1f,\n",
                        (double)mem / (double)npairs);
                fprintf(f, "\"bytes per pair excl. names\",%.1f,\n",
                        (double)(mem - names_mem) / (double)npairs);
                fclose(f);
        }
        dedup_tracker_free(tr);
        free(names);
        free(name_len);
        free(offsets);
        return 0;
}
