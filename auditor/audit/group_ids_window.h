/*
 * group_ids_window.h - private to group_ids.c (and its unit test): the
 * ids topic's record format and a judge's window, with no Kafka in them.
 *
 * An ids record says where one copy of a message id is: the id's 128-bit
 * hash (dedup_id_hash), the audited topic, partition and offset, the
 * record's timestamp, and its producer, epoch and seq (-1 when the record
 * is not tracked).  Little-endian: version (1), id lo, hi (8, 8),
 * partition (4), offset (8), timestamp (8), epoch (4), seq (8), topic
 * length (1), topic, producer length (1), producer: GIDS_FIXED bytes plus
 * the two names.
 *
 * A window holds the ids of the offsets [o - W, o) of one ids partition,
 * o being the offset judged next: "offsets", not "the last W records", so
 * a window rebuilt by reading [c - W, c) holds, for any o >= c, every
 * record the live window held, and gids_window_judge() (which names the
 * latest earlier copy) gives the same answers.  56 bytes per id.
 */
#ifndef EOSAUDIT_AUDIT_GROUP_IDS_WINDOW_H
#define EOSAUDIT_AUDIT_GROUP_IDS_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "../../dedup/dedup.h"

#define GIDS_VERSION 1
#define GIDS_FIXED 51                 /* bytes besides the two names */
#define GIDS_MAX (GIDS_FIXED + 255 + 255)

struct gids_rec {
        struct dedup_id id;
        int32_t partition;
        int32_t epoch;              /* -1: untracked */
        int64_t offset, ts_ms, seq; /* seq -1: untracked */
        const char *topic, *producer; /* producer NULL: none */
        size_t topic_len, producer_len; /* each at most 255 */
};

/* Writes r into buf (GIDS_MAX bytes); returns its length. */
size_t gids_encode(unsigned char *buf, const struct gids_rec *r);
/* Parses p (names point into it).  Returns 0, or -1 when it is not an
 * ids record of this version. */
int gids_parse(const void *p, size_t len, struct gids_rec *r);

/* The earlier copy a repeat matched. */
struct gids_first {
        const char *topic; /* valid until the window is freed */
        int32_t partition;
        int64_t offset, ts_ms;
        int64_t ids_offset;
};

struct gids_window;

/* window: W offsets (>= 1); max_age_ms: an earlier copy older than that
 * by record time does not match (0: no bound).  NULL: out of memory. */
struct gids_window *gids_window_new(uint64_t window, int64_t max_age_ms);
void gids_window_free(struct gids_window *w);
/*
 * Judges r, the record at offset o of the ids partition (offsets
 * increasing from call to call), then remembers it.  Returns 1 and sets
 * *first when an earlier copy of r's id (same topic, another record) is
 * in [o - W, o) and within the age bound: the latest such; 0 when none;
 * -1 when memory ran out (r is then not remembered).
 */
int gids_window_judge(struct gids_window *w, int64_t o,
                      const struct gids_rec *r, struct gids_first *first);
/* Ids held now. */
size_t gids_window_ids(const struct gids_window *w);

#endif
