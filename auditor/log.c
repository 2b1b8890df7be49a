/*
 * log.c - see log.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "log.h"

static enum log_level log_level = LOG_INFO;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void log_set_level(enum log_level level)
{
        log_level = level;
}

int log_enabled(enum log_level level)
{
        return level <= log_level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
        char msg[1024], stamp[32];
        struct timespec ts;
        struct tm tm;
        va_list ap;

        if (!log_enabled(level))
                return;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap); /* truncation is acceptable */
        va_end(ap);
        fprintf(stderr, "%s.%03ldZ %s %s\n", stamp, ts.tv_nsec / 1000000L,
                level_names[level], msg);
}
