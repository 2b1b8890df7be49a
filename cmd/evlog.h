/*
 * evlog.h - the live anomaly lines of `serve` and `demo`, grouped and
 * rate-limited so that one cause makes a few lines, not hundreds.
 *
 * A zombie session writes on for a while and every fetched batch of it is
 * an event; so are a producer's duplicates.  Events are grouped per
 * (topic, partition, producer, epoch, kind): the first event of a group is
 * written at once, in report_event_format()'s words with its kcat command;
 * the ones that follow only add to the group's count.  A group that has
 * been quiet for EVLOG_QUIET_MS ends with one summary line (events,
 * records, offsets, duration) when it had more than its first event; one
 * that goes on writes a "continuing" line every EVLOG_REPEAT_MS.  Past
 * EVLOG_BURST first lines in EVLOG_WINDOW_MS, new groups are counted, not
 * written, and one line says how many were held back (every anomaly is in
 * the ledger regardless).
 *
 * Ownership: a struct evlog is zeroed, evlog_init()ed, fed from one thread
 * (the audit's callbacks) and evlog_flush()ed at the end; it holds copies
 * of what it keeps (names of at most DEDUP_PRODUCER_MAX bytes).
 */
#ifndef EOSAUDIT_EVLOG_H
#define EOSAUDIT_EVLOG_H

#include <stddef.h>
#include <stdint.h>

#include "../dedup/dedup.h"

#define EVLOG_QUIET_MS 5000
#define EVLOG_REPEAT_MS 60000
#define EVLOG_WINDOW_MS 10000
#define EVLOG_BURST 20
#define EVLOG_GROUPS 256 /* past it the longest quiet group ends early */

/* What a line is. */
enum evlog_line {
        EVLOG_FIRST,   /* a group's first event */
        EVLOG_SUMMARY, /* a group's summary (ended or continuing) */
        EVLOG_NOTE,    /* how many groups the rate limit held back */
};

/* Where lines go: line is one anomaly, summary or note, no newline; kcat
 * the command that fetches its records, or NULL (a summary has one only
 * when its records are most of its offsets, e.g. a zombie's run). */
typedef void(evlog_sink)(void *opaque, enum evlog_line what, const char *line,
                         const char *kcat);

struct evlog_group {
        char topic[256];
        int32_t partition;
        char producer[DEDUP_PRODUCER_MAX];
        size_t producer_len;
        int has_producer;
        int32_t epoch;
        enum dedup_kind kind;
        uint64_t events, records;
        int64_t offset_lo, offset_hi;
        int64_t first_ms, last_ms, said_ms;
        uint64_t said_events; /* events already told of */
};

struct evlog {
        evlog_sink *sink;
        void *opaque;
        const char *brokers; /* for kcat commands; NULL: "BROKER" */
        struct evlog_group g[EVLOG_GROUPS];
        size_t n;
        int64_t window_ms; /* start of the rate limit's window */
        unsigned window_lines;
        uint64_t held; /* first lines held back in this window */
        uint64_t held_total;
};

void evlog_init(struct evlog *l, evlog_sink *sink, void *opaque,
                const char *brokers);

/* One live event (expiries are ignored) at now_ms. */
void evlog_event(struct evlog *l, const char *topic, int32_t partition,
                 const struct dedup_event *ev, int64_t now_ms);

/* Ends quiet groups and says what continues; call about once a second. */
void evlog_tick(struct evlog *l, int64_t now_ms);

/* Ends every group (the audit is over). */
void evlog_flush(struct evlog *l, int64_t now_ms);

#endif /* EOSAUDIT_EVLOG_H */
