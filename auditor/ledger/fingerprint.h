/*
 * fingerprint.h - what the audit remembers of the last record it audited
 * on each partition, and what that says when the audit resumes.
 *
 * A topic deleted and created again under the same name is told first by
 * its topic id (Kafka gives every topic one when it is created; the
 * ledger keeps it, schema/0017_topic_id.sql): topic_id_compare() and
 * fingerprint_with_topic_id() below.  The fingerprint sees what the id
 * cannot (a log truncated by an unclean leader election keeps its id),
 * and decides alone where no id can be had.  The ledger stores, with
 * each partition's next offset, the (offset, timestamp, hash of key, value
 * and headers) of the last record audited there.  When the audit resumes,
 * the record at that offset is read again: if it is still there and the
 * same, the log is the one the ledger knows; if it differs or is gone, or
 * the log now ends below it, the topic was deleted and recreated (or the
 * log was truncated by an unclean leader election) and the ledger's state
 * of the topic no longer applies.
 *
 * Pure: no I/O, no clock.  The caller reads watermarks and the record.
 */
#ifndef EOSAUDIT_FINGERPRINT_H
#define EOSAUDIT_FINGERPRINT_H

#include <stddef.h>
#include <stdint.h>

struct fingerprint {
        int64_t offset;  /* -1: none (nothing audited, or an older ledger) */
        int64_t ts_ms;   /* the record's timestamp, -1 none */
        uint64_t lo, hi; /* 128-bit hash of key, value and headers */
};

/* The hash of one record, fed piece by piece: the key, the value, then
 * every header in order.  NULL data is a Kafka null (told apart from an
 * empty value); lengths are part of the hash, so pieces cannot shift. */
struct fingerprint_hasher {
        uint64_t lo, hi;
};

void fingerprint_hasher_init(struct fingerprint_hasher *h);
void fingerprint_hasher_key(struct fingerprint_hasher *h, const void *key,
                            size_t len);
void fingerprint_hasher_value(struct fingerprint_hasher *h, const void *val,
                              size_t len);
void fingerprint_hasher_header(struct fingerprint_hasher *h, const char *name,
                               size_t name_len, const void *val, size_t len);
void fingerprint_hasher_final(const struct fingerprint_hasher *h,
                              int64_t offset, int64_t ts_ms,
                              struct fingerprint *out);

/* Same record: offset, timestamp and hash all equal. */
int fingerprint_equal(const struct fingerprint *a,
                      const struct fingerprint *b);

/* What the partition's log says about the ledger's state of it. */
enum fingerprint_verdict {
        FP_NONE,      /* nothing to check: resume as before */
        FP_SAME,      /* the last audited record is still there: resume */
        FP_REWIND,    /* it is there but the log now ends before the
                         ledger's next offset (only transaction markers
                         were lost): resume at the log end */
        FP_RETENTION, /* retention deleted it (the log start passed it,
                         the log end did not go back): resume, the usual
                         coverage gap if records were lost unaudited */
        FP_COMPACTED, /* compaction removed it (a compacted topic): resume */
        FP_RECREATED, /* another record is at its offset, or it is gone
                         from the middle of the log: a new log */
        FP_TRUNCATED, /* the log now ends at or below it */
};

/* What the caller read from the partition for fingerprint_check(). */
struct fingerprint_probe {
        int64_t lo, hi; /* log start and end (high watermark) */
        int found;      /* a record at or after stored->offset was
                                  read: its fingerprint is in rec */
        struct fingerprint rec;
        int compacted; /* the topic's cleanup.policy compacts */
};

/*
 * Judges stored (the ledger's fingerprint; next_offset the ledger's next
 * offset) against what the log holds now.  The record is read only when
 * lo <= stored->offset < hi; otherwise found is 0 and ignored.
 */
enum fingerprint_verdict fingerprint_check(const struct fingerprint *stored,
                                           int64_t next_offset,
                                           const struct fingerprint_probe *p);

/* Whether the verdict means a new incarnation of the topic. */
int fingerprint_verdict_new_log(enum fingerprint_verdict v);

/* "same", "recreated", ... */
const char *fingerprint_verdict_name(enum fingerprint_verdict v);

/* What the topic's id says: the ledger's (stored) against the brokers'
 * (now); "" is none (a ledger written before schema 17, a broker that
 * gave none). */
enum topic_id_verdict {
        TOPIC_ID_UNKNOWN, /* either is missing: the fingerprint decides */
        TOPIC_ID_SAME,    /* the topic the ledger knows */
        TOPIC_ID_CHANGED, /* another topic under the same name */
};

enum topic_id_verdict topic_id_compare(const char *stored, const char *now);

/* Whether id is a topic id as Kafka prints one: 22 characters of
 * URL-safe base64 (A-Z a-z 0-9 - _), and not the all-zero id that brokers
 * without topic ids send. */
int topic_id_valid(const char *id);

/* A topic id as a base64 string (librdkafka's rd_kafka_Uuid_base64str()
 * gives the standard alphabet, + and /) into out as Kafka prints it
 * (URL-safe: - and _, no padding).  Returns 0, or -1 when the result is
 * not topic_id_valid() (the zero id too) or does not fit out. */
int topic_id_from_base64(const char *b64, char *out, size_t out_size);

/*
 * A partition's verdict with its topic's id taken into account: a changed
 * id is a recreated topic whatever the log holds (v need not have been
 * judged: pass FP_NONE); the same id makes a log that holds another
 * record at the fingerprint's offset a truncated one (an unclean leader
 * election, then new writes), never a recreated topic; an unknown id
 * leaves v as the fingerprint judged it.
 */
enum fingerprint_verdict fingerprint_with_topic_id(enum topic_id_verdict id,
                                                   enum fingerprint_verdict v);

#endif /* EOSAUDIT_FINGERPRINT_H */
