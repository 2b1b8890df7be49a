/*
 * eos_headers.h - the names of the eos.* record headers: the wire
 * contract of schema/HEADERS.md, spelled once.  The parser
 * (dedup/hdrs.c) reads them and the reference producer (producer/)
 * writes them; a tool in another language must use the same bytes.
 *
 * Invariants
 *  - Names are exact and case-sensitive; every one starts with
 *    EOS_HDR_PREFIX, and none is shorter than EOS_HDR_NAME_MIN bytes, so
 *    that a header that cannot be ours is passed over after one compare.
 *  - EOS_HDR_PRODUCER, EOS_HDR_EPOCH and EOS_HDR_SEQ are required for a
 *    record to be tracked; EOS_HDR_PID and EOS_HDR_MSGID are optional
 *    (DEDUP_HDR_REQUIRED in dedup.h); so are the rest.
 *  - No allocation, no code: string literals only, usable in initializers
 *    and with sizeof (length = sizeof(NAME) - 1).
 */
#ifndef EOSAUDIT_EOS_HEADERS_H
#define EOSAUDIT_EOS_HEADERS_H

#define EOS_HDR_PREFIX "eos."
#define EOS_HDR_PRODUCER "eos.producer" /* identity, 1..255 bytes */
#define EOS_HDR_EPOCH "eos.epoch"       /* session, decimal 0..2^31-1 */
#define EOS_HDR_SEQ "eos.seq"           /* position, decimal 0..2^63-1 */
#define EOS_HDR_PID "eos.pid"           /* broker producer id (evidence) */
#define EOS_HDR_MSGID "eos.msgid"       /* the message's id, 1..255 bytes */
/* The last record of the previous epoch, on the first record of a new one
 * (both or neither): what of it is missing opens a gap. */
#define EOS_HDR_PREV_EPOCH "eos.prev_epoch"
#define EOS_HDR_PREV_SEQ "eos.prev_seq"
/* The transaction's ordinal within (eos.producer, eos.epoch), decimal
 * 0..2^63-1: its records are checked against the transaction's manifest
 * (dedup/txn.h, schema/HEADERS.md "Transactions"). */
#define EOS_HDR_TXN "eos.txn"
/* What eos.seq numbers: "partition" (the default: the stream is per
 * partition) or "topic" (per topic, across its partitions: dedup/topic.h,
 * schema/HEADERS.md "Topic-scoped streams"); any other value is
 * malformed. */
#define EOS_HDR_SCOPE "eos.scope"
#define EOS_SCOPE_PARTITION "partition"
#define EOS_SCOPE_TOPIC "topic"

/* The shortest name above ("eos.seq", "eos.pid"). */
#define EOS_HDR_NAME_MIN (sizeof(EOS_HDR_SEQ) - 1)

#endif /* EOSAUDIT_EOS_HEADERS_H */
