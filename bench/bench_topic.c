/*
 * bench_topic.c - the engine's cost per record for topic-scoped streams
 * (eos.scope: topic, dedup/topic.h) against per-partition ones, on the
 * same records.
 *
 * Workload: P producers write to one topic of N partitions through a
 * sticky partitioner (runs of 1..R records to one partition, then another
 * at random), each record stamped twice over: its seq in the topic (the
 * topic-scoped stream) and its seq in its partition (the per-partition
 * one).  A consumer reads the partitions round-robin, B records of one
 * partition at a time, so a topic stream's seqs arrive out of order across
 * partitions, as they do in an audit.  Both modes classify the very same
 * deliveries: only the headers differ.  Between batches the consumer ticks
 * and clears, as the audit does (the topic streams' settling runs there).
 *
 * usage: bench_topic [-p PRODUCERS] [-n PARTITIONS] [-r RECORDS]
 *                    [-b BATCH] [-l MAX_RUN]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dedup/dedup.h"
#include "../dedup/topic.h"
#include "bench.h"

struct rec {
        uint32_t prod;
        int64_t tseq, pseq, ts;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
        return bench_rng(&rng_state);
}

static void *xmalloc(size_t n)
{
        void *p = malloc(n ? n : 1);

        if (!p) {
                fprintf(stderr, "bench_topic: out of memory\n");
                exit(2);
        }
        return p;
}

struct run {
        double ns_per_rec;
        size_t mem;
        uint64_t missing, dups;
};

/* Classifies the deliveries (order[i]: index into recs, part[i] its
 * partition) with topic-scoped headers or per-partition ones. */
static struct run classify(int topic, uint32_t nparts, const struct rec *recs,
                           const uint32_t *order, const uint32_t *part,
                           size_t nrec, uint32_t batch, char (*names)[24],
                           const size_t *name_len)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        struct dedup_hdrs h;
        int64_t *offsets = calloc(nparts, sizeof(*offsets));
        struct run r = {0, 0, 0, 0};
        double t0;
        uint64_t bad = 0;
        size_t i;
        uint32_t p;

        dedup_config_defaults(&conf);
        tr = dedup_tracker_new(&conf);
        if (!tr || !offsets)
                exit(2);
        for (p = 0; p < nparts; p++) {
                dedup_tracker_part_add(tr, p, 1);
                dedup_tracker_part_set_topic(tr, p, 0);
        }
        dedup_tracker_begin(tr, recs[0].ts + 3600 * 1000);
        dedup_hdrs_init(&h);
        h.seen = DEDUP_HDR_REQUIRED;
        h.scope_topic = topic;
        h.epoch = 1;
        t0 = bench_cpu_s();
        for (i = 0; i < nrec; i++) {
                const struct rec *x = &recs[order[i]];
                enum dedup_verdict v;

                h.producer = names[x->prod];
                h.producer_len = name_len[x->prod];
                h.seq = topic ? x->tseq : x->pseq;
                h.ts_ms = x->ts;
                v = dedup_tracker_observe(tr, part[i], offsets[part[i]]++, &h);
                bad += v != DEDUP_V_OK;
                if ((i + 1) % batch == 0) {
                        dedup_tracker_tick(tr);
                        dedup_tracker_dirty_clear(tr);
                        dedup_tracker_events_clear(tr);
                }
        }
        r.ns_per_rec = (bench_cpu_s() - t0) * 1e9 / (double)nrec;
        r.mem = dedup_tracker_memory(tr);
        dedup_tracker_confirm_all(tr);
        for (p = 0; p < nparts; p++) {
                const struct dedup_counts *c = dedup_tracker_part_counts(tr,
                                                                         p);
                r.missing += c->missing;
                r.dups += c->anomalies[DEDUP_KIND_DUPLICATE];
        }
        if (bad || r.missing || r.dups) {
                fprintf(stderr,
                        "bench_topic: %llu unexpected verdicts, %llu missing, "
                        "%llu duplicates\n",
                        (unsigned long long)bad, (unsigned long long)r.missing,
                        (unsigned long long)r.dups);
                exit(1);
        }
        dedup_tracker_free(tr);
        free(offsets);
        return r;
}

int main(int argc, char **argv)
{
        struct bench_opts o = {.nprod = 100,
                               .nparts = 12,
                               .nrec = 10000000,
                               .batch = 500,
                               .maxrun = 32};
        size_t i, *plen, *pcap, *pos, *name_len;
        uint32_t **plog, *order, *part, *sticky, *left;
        int64_t *tnext, *pnext;
        struct rec *recs;
        char(*names)[24];
        struct run rp, rt;

        bench_opts_parse(&o, "bench_topic", 0, argc, argv);
        names = xmalloc(o.nprod * sizeof(*names));
        name_len = xmalloc(o.nprod * sizeof(*name_len));
        for (i = 0; i < o.nprod; i++)
                name_len[i] = (size_t)snprintf(names[i], sizeof(names[i]),
                                               "producer-%zu", i * 7919);
        recs = xmalloc(o.nrec * sizeof(*recs));
        tnext = calloc(o.nprod, sizeof(*tnext));
        pnext = calloc((size_t)o.nprod * o.nparts, sizeof(*pnext));
        sticky = calloc(o.nprod, sizeof(*sticky));
        left = calloc(o.nprod, sizeof(*left));
        plog = calloc(o.nparts, sizeof(*plog));
        plen = calloc(o.nparts, sizeof(*plen));
        pcap = calloc(o.nparts, sizeof(*pcap));
        pos = calloc(o.nparts, sizeof(*pos));
        if (!tnext || !pnext || !sticky || !left || !plog || !plen || !pcap ||
            !pos)
                return 2;

        /* Stamping and appending: a producer at random writes its next
         * record to its sticky partition, which changes after a run. */
        fprintf(stderr, "bench_topic: generating %zu records...\n", o.nrec);
        for (i = 0; i < o.nrec; i++) {
                uint32_t pr = (uint32_t)(rng() % o.nprod), pt;
                if (!left[pr]) {
                        sticky[pr] = (uint32_t)(rng() % o.nparts);
                        left[pr] = 1 + (uint32_t)(rng() % o.maxrun);
                }
                left[pr]--;
                pt = sticky[pr];
                recs[i].prod = pr;
                recs[i].tseq = tnext[pr]++;
                recs[i].pseq = pnext[(size_t)pr * o.nparts + pt]++;
                recs[i].ts = 1700000000000LL + (int64_t)(i / 1000);
                if (plen[pt] == pcap[pt]) {
                        pcap[pt] = pcap[pt] ? pcap[pt] * 2 : 1024;
                        plog[pt] = realloc(plog[pt],
                                           pcap[pt] * sizeof(*plog[pt]));
                        if (!plog[pt])
                                return 2;
                }
                plog[pt][plen[pt]++] = (uint32_t)i;
        }
        /* Delivery: B records of one partition at a time, round-robin. */
        order = xmalloc(o.nrec * sizeof(*order));
        part = xmalloc(o.nrec * sizeof(*part));
        for (i = 0; i < o.nrec;) {
                uint32_t pt;
                for (pt = 0; pt < o.nparts; pt++) {
                        size_t k;
                        for (k = 0; k < o.batch && pos[pt] < plen[pt]; k++) {
                                order[i] = plog[pt][pos[pt]++];
                                part[i++] = pt;
                        }
                }
        }

        rp = classify(0, o.nparts, recs, order, part, o.nrec, o.batch, names,
                      name_len);
        rt = classify(1, o.nparts, recs, order, part, o.nrec, o.batch, names,
                      name_len);
        printf("\ntopic-scoped streams against per-partition ones: %u "
               "producers on one topic of %u partitions, sticky runs 1..%u, "
               "batches of %u per partition, %zu records\n\n",
               o.nprod, o.nparts, o.maxrun, o.batch, o.nrec);
        printf("%-36s %10s %14s %14s\n", "streams", "ns/record", "records/s",
               "engine bytes");
        printf("%-36s %10.1f %14.0f %14zu\n", "per partition (producer, part)",
               rp.ns_per_rec, 1e9 / rp.ns_per_rec, rp.mem);
        printf("%-36s %10.1f %14.0f %14zu\n", "topic-scoped (producer, topic)",
               rt.ns_per_rec, 1e9 / rt.ns_per_rec, rt.mem);
        printf("\n(CPU time of the classifying thread)\n"
               "topic-scoped / per-partition: %.2fx the time per record\n",
               rt.ns_per_rec / rp.ns_per_rec);
        for (i = 0; i < o.nparts; i++)
                free(plog[i]);
        free(plog);
        free(plen);
        free(pcap);
        free(pos);
        free(order);
        free(part);
        free(recs);
        free(tnext);
        free(pnext);
        free(sticky);
        free(left);
        free(names);
        free(name_len);
        return 0;
}
