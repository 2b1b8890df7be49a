/*
 * log.c - see log.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "clock.h"
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
        int64_t now;
        time_t sec;
        struct tm tm;
        va_list ap;

        if (!log_enabled(level))
                return;
        now = clock_wall_ms();
        sec = (time_t)(now / 1000);
        gmtime_r(&sec, &tm);
        strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap); /* truncation is acceptable */
        va_end(ap);
        fprintf(stderr, "%s.%03ldZ %s %s\n", stamp, (long)(now % 1000),
                level_names[level], msg);
}
