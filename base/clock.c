/* clock.c - see clock.h. */
#include "clock.h"

static int64_t clock_read_us(clockid_t id)
{
        struct timespec ts;

        if (clock_gettime(id, &ts))
                return 0;
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t clock_wall_ms(void)
{
        return clock_read_us(CLOCK_REALTIME) / 1000;
}

int64_t clock_mono_ms(void)
{
        return clock_read_us(CLOCK_MONOTONIC) / 1000;
}

int64_t clock_mono_us(void)
{
        return clock_read_us(CLOCK_MONOTONIC);
}

double clock_mono_s(void)
{
        return (double)clock_read_us(CLOCK_MONOTONIC) / 1e6;
}

struct timespec clock_mono_deadline(int64_t ms)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += (time_t)(ms / 1000);
        ts.tv_nsec += (long)(ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
        }
        return ts;
}
