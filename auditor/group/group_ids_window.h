/*
 * group_ids_window.h - private to group_ids.c (and its unit test): the
 * ids topic's record format and a judge's window, with no Kafka in them.
 *
 * An entry says where one copy of a message id is: the id's 128-bit hash
 * (dedup_id_hash), the audited topic, partition and offset, the record's
 * timestamp, and its producer, epoch and seq (-1 when the record is not
 * tracked).  Little-endian: id lo, hi (8, 8), partition (4), offset (8),
 * timestamp (8), epoch (4), seq (8), topic length (1, >= 1), topic,
 * producer length (1), producer: GIDS_ENTRY_FIXED bytes plus the two
 * names.  An entry is self-delimiting: its two length bytes say where it
 * ends.
 *
 * An ids record (a Kafka record's value) is one of:
 *   - version 2, a pack: the byte 2, a u32 count (>= 1), then count
 *     entries back to back, nothing after the last.  What is written now:
 *     one Kafka record per ids partition per GIDS_PACK_MAX_* entries, so
 *     that librdkafka's per-message costs (produce, fetch, consume) are
 *     paid per pack, not per id;
 *   - version 1, a single entry: the byte 1, then one entry (GIDS_FIXED
 *     bytes plus the names).  Written by older members; read as a pack of
 *     one.
 *
 * A window holds the last W entries judged of one ids partition, in
 * (record offset, index in the record) order, evicted by count.  W counts
 * entries, not offsets: a record holds up to GIDS_PACK_MAX_ENTRIES ids,
 * so "offsets [o - W, o)" would remember up to that many times W ids.
 * Since the order and the entries are those of the partition's committed
 * records (read_committed), the window before any entry is a function of
 * those records alone: a window rebuilt from any suffix of them that
 * holds >= W entries (or starts at the log start) equals the live one,
 * and gids_window_judge() (which names the latest earlier copy) gives the
 * same answers.  56 bytes per id.
 */
#ifndef EOSAUDIT_AUDIT_GROUP_IDS_WINDOW_H
#define EOSAUDIT_AUDIT_GROUP_IDS_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "../../dedup/dedup.h"

#define GIDS_VERSION 1      /* a record of one entry */
#define GIDS_PACK_VERSION 2 /* a pack */
#define GIDS_ENTRY_FIXED 50 /* an entry's bytes besides the two names */
#define GIDS_ENTRY_MAX (GIDS_ENTRY_FIXED + 255 + 255)
#define GIDS_FIXED (1 + GIDS_ENTRY_FIXED) /* version 1: byte + entry */
#define GIDS_MAX (1 + GIDS_ENTRY_MAX)
#define GIDS_PACK_HEAD 5 /* version, count */

/*
 * When a pack is full (it is produced then, and a new one begun): 1,000
 * entries or 64 KiB, whichever comes first.  Either bound already pays a
 * Kafka message's fixed costs once per ~1,000 ids (the gain over a record
 * per id is nearly all there); a larger pack would only lengthen a
 * rebuild's over-read (it reads whole records) and come nearer the
 * brokers' and librdkafka's message.max.bytes (1 MB by default), which
 * 64 KiB plus one entry stays far below whatever the names.
 */
#define GIDS_PACK_MAX_ENTRIES 1000
#define GIDS_PACK_MAX_BYTES (64 * 1024)

struct gids_rec {
        struct dedup_id id;
        int32_t partition;
        int32_t epoch;                  /* -1: untracked */
        int64_t offset, ts_ms, seq;     /* seq -1: untracked */
        const char *topic, *producer;   /* producer NULL: none */
        size_t topic_len, producer_len; /* each at most 255 */
};

/* Writes r's entry into buf (GIDS_ENTRY_MAX bytes); returns its length.
 * Names longer than 255 bytes are cut to 255. */
size_t gids_entry_encode(unsigned char *buf, const struct gids_rec *r);
/* Writes r as a version-1 record into buf (GIDS_MAX bytes); returns its
 * length.  Only what older members wrote (and the tests). */
size_t gids_encode(unsigned char *buf, const struct gids_rec *r);

/*
 * A pack being written.  It owns buf (freed by gids_pack_free()); zeroed
 * (gids_pack_init()) it is empty and holds no memory.  Invariant: when
 * n > 0, buf[0, len) is the version byte, 4 bytes for the count (written
 * by gids_pack_finish()) and n entries.
 */
struct gids_pack {
        unsigned char *buf;
        size_t len, cap;
        uint32_t n;
};

void gids_pack_init(struct gids_pack *pk);
/* Appends an entry, len bytes as gids_entry_encode() wrote them (not
 * checked).  Returns 0, or -1 when memory ran out (pk unchanged). */
int gids_pack_add(struct gids_pack *pk, const void *entry, size_t len);
/* Full: at GIDS_PACK_MAX_ENTRIES entries or GIDS_PACK_MAX_BYTES bytes. */
int gids_pack_full(const struct gids_pack *pk);
/* Writes the count; returns the record (n >= 1 entries), *len its length,
 * valid until pk is next changed.  NULL when pk is empty. */
const unsigned char *gids_pack_finish(struct gids_pack *pk, size_t *len);
/* Empties pk, keeping its buffer. */
void gids_pack_reset(struct gids_pack *pk);
void gids_pack_free(struct gids_pack *pk);

/* Reading an ids record: a cursor over its entries, pointing into it. */
struct gids_iter {
        const unsigned char *p, *end;
        uint32_t left;
};

/*
 * Opens the ids record p (len bytes; version 2, or version 1 as a pack of
 * one) after checking all of it: a count >= 1 that len can hold, every
 * entry within len with a topic, nothing after the last.  Reads nothing
 * outside [p, p + len).  Returns the number of entries, or -1 (nothing to
 * iterate) when it is not such a record.
 */
long gids_iter_open(struct gids_iter *it, const void *p, size_t len);
/* The next entry into *r (its names point into the record): 1, or 0 at
 * the end. */
int gids_iter_next(struct gids_iter *it, struct gids_rec *r);

/* The earlier copy a repeat matched. */
struct gids_first {
        const char *topic; /* valid until the window is freed */
        int32_t partition;
        int64_t offset, ts_ms;
        int64_t ids_offset; /* the offset of the ids record holding it */
};

struct gids_window;

/* window: W entries (>= 1); max_age_ms: an earlier copy older than that
 * by record time does not match (0: no bound).  NULL: out of memory. */
struct gids_window *gids_window_new(uint64_t window, int64_t max_age_ms);
void gids_window_free(struct gids_window *w);
/*
 * Judges r, an entry of the ids record at offset o of the ids partition
 * (entries given in (offset, index in the record) order), then remembers
 * it, forgetting the oldest beyond W.  Returns 1 and sets *first when an
 * earlier copy of r's id (same topic, another audited record) is among
 * the last W entries and within the age bound: the latest such; 0 when
 * none; -1 when memory ran out (r is then not remembered).
 */
int gids_window_judge(struct gids_window *w, int64_t o,
                      const struct gids_rec *r, struct gids_first *first);
/* Ids held now. */
size_t gids_window_ids(const struct gids_window *w);

#endif
