/*
 * clock.h - the one clock of the program (as librdkafka's rd_clock()).
 *
 * Every module that needs the time asks here; the engine (dedup/) never
 * does: its callers pass the time in.  Wall time is for what is stored or
 * shown (milliseconds since the Unix epoch, UTC); monotonic time is for
 * deadlines and durations and never goes backwards.  All thread-safe.
 */
#ifndef EOSAUDIT_CLOCK_H
#define EOSAUDIT_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Wall-clock milliseconds since the epoch (0 if the clock fails). */
int64_t clock_wall_ms(void);

/* Monotonic milliseconds / microseconds from an arbitrary origin. */
int64_t clock_mono_ms(void);
int64_t clock_mono_us(void);

/* Monotonic seconds as a double, for rates. */
double clock_mono_s(void);

/* The monotonic time ms milliseconds from now, as an absolute timespec
 * for pthread_cond_timedwait() on a CLOCK_MONOTONIC condition. */
struct timespec clock_mono_deadline(int64_t ms);

#endif /* EOSAUDIT_CLOCK_H */
