/*
 * bench_flow.c - the flow lineage engine alone (dedup/flow.h) on one
 * core: N source records and their N sink copies, the sink trailing the
 * source by LAG records (the processor's records in flight), the frontier
 * advanced every 1000 records, at most MAX live ids.  Prints records/s
 * (source and sink records both count) and the engine's memory.
 *
 * usage: bench_flow [-n RECORDS] [-l LAG] [-m MAX_IDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../dedup/flow.h"

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t arg(int argc, char **argv, const char *flag, uint64_t def)
{
        int i;

        for (i = 1; i + 1 < argc; i++)
                if (!strcmp(argv[i], flag))
                        return strtoull(argv[i + 1], NULL, 10);
        return def;
}

int main(int argc, char **argv)
{
        uint64_t n = arg(argc, argv, "-n", 5000000);
        uint64_t lag = arg(argc, argv, "-l", 10000);
        uint64_t max = arg(argc, argv, "-m", 1000000);
        struct dedup_flow_config conf;
        struct dedup_flow_stats st;
        struct dedup_flow *fl;
        char id[32];
        uint64_t i;
        double t0, t;
        size_t peak = 0, m;
        int len;

        dedup_flow_config_defaults(&conf);
        conf.by_frontier = 1;
        conf.max_ids = max;
        fl = dedup_flow_new(&conf);
        if (!fl)
                return 1;
        t0 = now_s();
        for (i = 0; i < n + lag; i++) {
                if (i < n) {
                        len = snprintf(id, sizeof(id), "bench-%llu",
                                       (unsigned long long)i);
                        dedup_flow_source(fl, (uint32_t)(i % 8), (int64_t)i,
                                          1000, id, (size_t)len);
                }
                if (i >= lag) {
                        uint64_t k = i - lag;
                        len = snprintf(id, sizeof(id), "bench-%llu",
                                       (unsigned long long)k);
                        dedup_flow_sink(fl, 8 + (uint32_t)(k % 8), (int64_t)k,
                                        1005, id, (size_t)len);
                }
                if (i % 1000 == 999) {
                        uint32_t p;
                        for (p = 0; p < 8 && i >= lag; p++)
                                dedup_flow_frontier(fl, p, (int64_t)(i - lag));
                        dedup_flow_dirty_clear(fl);
                        m = dedup_flow_memory(fl);
                        if (m > peak)
                                peak = m;
                }
        }
        t = now_s() - t0;
        dedup_flow_stats_get(fl, &st);
        printf("bench_flow: %llu source + %llu sink records in %.2f s: "
               "%.2f M records/s; delivered %llu lost %llu; live ids %llu "
               "(max %llu); peak memory %.1f MiB (%.0f bytes per live id)\n",
               (unsigned long long)n, (unsigned long long)n, t,
               2.0 * (double)n / t / 1e6,
               (unsigned long long)st.c.outcome[DEDUP_FLOW_DELIVERED],
               (unsigned long long)st.c.outcome[DEDUP_FLOW_LOST],
               (unsigned long long)st.live, (unsigned long long)max,
               (double)peak / 1048576.0,
               (double)peak / (double)(st.live ? st.live : 1));
        dedup_flow_free(fl);
        return st.c.outcome[DEDUP_FLOW_DELIVERED] == n ? 0 : 1;
}
