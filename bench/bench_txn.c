/*
 * bench_txn.c - the cost of the transaction check (--txn-manifests,
 * dedup/txn.h) in the engine alone, on one core: the same records with
 * eos.txn through the tracker without the check, then with it (a
 * manifest per transaction), and the memory held per pending transaction.
 *
 * Workload: T transactions of K records each, from P producers in turn,
 * record j of a transaction on partition j % N; each transaction's manifest
 * is read L transactions after its records (a manifest partition that lags
 * behind the data partitions), so about L transactions are pending at any
 * time.  Headers are parsed once, before the clock starts.
 *
 * usage: bench_txn [-t TXNS] [-k RECORDS_PER_TXN] [-n PARTITIONS]
 *                  [-p PRODUCERS] [-l LAG]
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../dedup/dedup.h"
#include "../dedup/txn.h"
#include "bench.h"

static double now_s(void)
{
        return bench_wall_s();
}

static long parse_long(const char *s, const char *what)
{
        return bench_parse_long("bench_txn", s, what, 0);
}

struct cfg {
        long txns, per, nparts, nprod, lag;
};

static char names[64][16];

static struct dedup_tracker *tracker(const struct cfg *c, int txn_on)
{
        struct dedup_config conf;
        /* No grace by time (the records have no timestamps): tombstones of
         * complete transactions stay up to the bound, the worst case. */
        struct dedup_txn_config tc = {0, DEDUP_TXN_PENDING_DEFAULT};
        struct dedup_tracker *tr;
        long p;

        dedup_config_defaults(&conf);
        conf.window.max_ids = 0;
        tr = dedup_tracker_new(&conf);
        if (!tr)
                exit(1);
        for (p = 0; p <= c->nparts; p++) /* the last one: manifests */
                if (dedup_tracker_part_add(tr, (uint32_t)p, 0))
                        exit(1);
        if (txn_on && dedup_txn_enable(tr, &tc))
                exit(1);
        dedup_tracker_begin(tr, 1700000000000LL);
        return tr;
}

/* Runs the workload; returns seconds, and the peak tracker memory. */
static double run(const struct cfg *c, int txn_on, size_t *peak,
                  size_t *peak_pending, size_t *peak_tombs, uint64_t *torn)
{
        struct dedup_tracker *tr = tracker(c, txn_on);
        int64_t *seq = calloc((size_t)(c->nparts * c->nprod), sizeof(*seq));
        int64_t *off = calloc((size_t)c->nparts + 1, sizeof(*off));
        struct dedup_txn_count *cnt = calloc((size_t)c->nparts, sizeof(*cnt));
        struct dedup_hdrs h;
        double t0, t;
        long i, j, p;

        if (!seq || !off || !cnt)
                exit(1);
        *peak = *peak_pending = *peak_tombs = 0;
        t0 = now_s();
        for (i = 0; i < c->txns + c->lag; i++) {
                if (i < c->txns) {
                        long prod = i % c->nprod;
                        for (j = 0; j < c->per; j++) {
                                long part = j % c->nparts;
                                dedup_hdrs_init(&h);
                                h.producer = names[prod];
                                h.producer_len = strlen(names[prod]);
                                h.epoch = 0;
                                h.seq = seq[prod * c->nparts + part]++;
                                h.txn = i / c->nprod;
                                h.seen = DEDUP_HDR_REQUIRED | DEDUP_HDR_TXN;
                                dedup_tracker_observe(tr, (uint32_t)part,
                                                      off[part]++, &h);
                                if (txn_on)
                                        dedup_txn_record(tr, (uint32_t)part,
                                                         off[part] - 1, &h);
                        }
                }
                if (txn_on && i >= c->lag) {
                        /* The manifest of transaction i - lag. */
                        long k = i - c->lag, prod = k % c->nprod, n = 0;
                        struct dedup_txn_manifest m;
                        memset(&m, 0, sizeof(m));
                        for (p = 0; p < c->nparts && p < c->per; p++) {
                                cnt[n].part = (uint32_t)p;
                                cnt[n++].records =
                                    (uint64_t)(c->per / c->nparts +
                                               (p < c->per % c->nparts));
                        }
                        m.producer = names[prod];
                        m.producer_len = strlen(names[prod]);
                        m.txn = k / c->nprod;
                        m.counts = cnt;
                        m.ncounts = (size_t)n;
                        m.part = (uint32_t)c->nparts;
                        m.offset = off[c->nparts]++;
                        dedup_hdrs_init(&h);
                        dedup_tracker_observe(tr, (uint32_t)c->nparts,
                                              m.offset, &h);
                        dedup_txn_manifest(tr, &m);
                }
                if (i % 1024 == 0) {
                        /* What a commit does: persistence walks, clears. */
                        size_t mem = dedup_tracker_memory(tr);
                        if (mem > *peak)
                                *peak = mem;
                        if (dedup_txn_pending(tr) > *peak_pending)
                                *peak_pending = dedup_txn_pending(tr);
                        if (dedup_txn_tombstones(tr) > *peak_tombs)
                                *peak_tombs = dedup_txn_tombstones(tr);
                        dedup_tracker_dirty_clear(tr);
                        dedup_tracker_events_clear(tr);
                }
        }
        dedup_tracker_confirm_all(tr);
        t = now_s() - t0;
        *torn = 0;
        for (p = 0; p < c->nparts; p++)
                *torn += dedup_tracker_part_counts(tr, (uint32_t)p)
                             ->anomalies[DEDUP_KIND_TORN];
        dedup_tracker_free(tr);
        free(seq);
        free(off);
        free(cnt);
        return t;
}

int main(int argc, char **argv)
{
        struct cfg c = {200000, 10, 12, 8, 1000};
        size_t peak0, peak1, pend0, pend1, tomb0, tomb1;
        uint64_t torn0, torn1;
        double t0, t1, recs;
        int i;

        for (i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "-t") && i + 1 < argc)
                        c.txns = parse_long(argv[++i], "-t");
                else if (!strcmp(argv[i], "-k") && i + 1 < argc)
                        c.per = parse_long(argv[++i], "-k");
                else if (!strcmp(argv[i], "-n") && i + 1 < argc)
                        c.nparts = parse_long(argv[++i], "-n");
                else if (!strcmp(argv[i], "-p") && i + 1 < argc)
                        c.nprod = parse_long(argv[++i], "-p");
                else if (!strcmp(argv[i], "-l") && i + 1 < argc)
                        c.lag = parse_long(argv[++i], "-l");
                else {
                        fprintf(stderr, "usage: bench_txn [-t TXNS] [-k "
                                        "RECORDS_PER_TXN] [-n PARTITIONS] "
                                        "[-p PRODUCERS<=64] [-l LAG]\n");
                        return 2;
                }
        }
        if (c.per < 1 || c.nparts < 1 || c.nprod < 1 || c.nprod > 64)
                return 2;
        for (i = 0; i < c.nprod; i++)
                snprintf(names[i], sizeof(names[i]), "producer-%d", i);
        recs = (double)c.txns * (double)c.per;
        t0 = run(&c, 0, &peak0, &pend0, &tomb0, &torn0);
        t1 = run(&c, 1, &peak1, &pend1, &tomb1, &torn1);
        printf("bench_txn: %ld transactions x %ld records, %ld partitions, "
               "%ld producers, manifests %ld transactions behind\n",
               c.txns, c.per, c.nparts, c.nprod, c.lag);
        printf("  without the check: %.1f ns/record (%.2f M records/s), "
               "peak %zu KiB\n",
               t0 / recs * 1e9, recs / t0 / 1e6, peak0 / 1024);
        printf("  with the check:    %.1f ns/record (%.2f M records/s), "
               "peak %zu KiB: %zu pending + %zu tombstones (%.0f bytes "
               "each), torn %" PRIu64 "\n",
               t1 / recs * 1e9, recs / t1 / 1e6, peak1 / 1024, pend1, tomb1,
               pend1 + tomb1
                   ? (double)(peak1 - peak0) / (double)(pend1 + tomb1)
                   : 0.0,
               torn1);
        printf("  cost: %+.1f ns/record, %.1f ns/transaction\n",
               (t1 - t0) / recs * 1e9, (t1 - t0) / (double)c.txns * 1e9);
        return torn1 ? 1 : 0;
}
