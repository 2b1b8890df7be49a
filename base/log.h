/*
 * log.h - one-line log records on stderr: "2026-12-01T02:45:08.123Z level
 * message".  The level is checked before anything is formatted.
 *
 * Thread-safe (one fprintf per record); the level is set once at start-up.
 */
#ifndef EOSAUDIT_LOG_H
#define EOSAUDIT_LOG_H

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_set_level(enum log_level level);
int log_enabled(enum log_level level);

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void log_msg(enum log_level level, const char *fmt, ...);

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)                                                         \
        do {                                                                  \
                if (log_enabled(LOG_INFO))                                    \
                        log_msg(LOG_INFO, __VA_ARGS__);                       \
        } while (0)
#define log_debug(...)                                                        \
        do {                                                                  \
                if (log_enabled(LOG_DEBUG))                                   \
                        log_msg(LOG_DEBUG, __VA_ARGS__);                      \
        } while (0)

#endif /* EOSAUDIT_LOG_H */
