/*
 * ledger_trunc.h - the ledger's part in a log truncated under the audit
 * (an unclean leader election; schema/0014_truncation.sql).
 *
 * Invariants
 *  - What the audit accepted on each partition is noted record by record
 *    (ledger_trunc_note(), the consumer's thread, between commits) into
 *    runs of one producer's stream, and written by the next
 *    ledger_commit() in its transaction, with the fingerprint of each
 *    dirty part's last record (struct ledger_part's fp): what a commit
 *    made durable, and nothing else, is there to be taken back.
 *  - Only the last LEDGER_TRUNC_KEEP offsets of a partition are kept: a
 *    truncation deeper than that cannot be located (the caller treats the
 *    log as another one).
 *  - A truncation (ledger_trunc_pending()) is applied by the next
 *    ledger_commit(), in the same transaction as the rewound pairs and
 *    the part's new next offset: its runs and fingerprints at or past the
 *    divergence point are deleted, a truncations row and a 'truncated'
 *    anomaly are written.
 *  - Strings handed to callbacks belong to SQLite: valid during the call.
 */
#ifndef EOSAUDIT_LEDGER_TRUNC_H
#define EOSAUDIT_LEDGER_TRUNC_H

#include <stddef.h>
#include <stdint.h>

#include "ledger.h"

#define LEDGER_TRUNC_KEEP 1000000 /* offsets per partition */

/* One record of p accepted by the engine (any verdict that moved its
 * pair: ok, baseline, gap opened).  Returns 0, or -1 (out of memory:
 * the next commit fails and says so). */
int ledger_trunc_note(struct ledger *lg, const struct ledger_part *p,
                      int64_t offset, const char *producer,
                      size_t producer_len, int32_t epoch, int64_t seq);

/* Calls cb with the stored fingerprints of p's batches whose last record
 * is below below, newest first, until cb returns non-zero (1: stop, -1:
 * error, returned).  Returns 0, or -1 with errstr. */
typedef int(ledger_trunc_fp_cb)(void *opaque, const struct fingerprint *fp);
int ledger_trunc_fps(struct ledger *lg, const struct ledger_part *p,
                     int64_t below, ledger_trunc_fp_cb *cb, void *opaque,
                     char *errstr, size_t errstr_size);

/* What p's pairs accepted at offsets >= offset, per producer: the first
 * such record (epoch, seq), the last (epoch_hi, seq_hi), how many, and
 * the last seq accepted before offset in epoch (-1: the epoch began at
 * offset; seq - 1 when no stored run tells), read only from runs at or
 * past floor (0: all; serve --group: below it another process accepted
 * the records, and the runs stored there are of an earlier stint).  An
 * array the caller frees with ledger_trunc_streams_free(). */
struct ledger_trunc_stream {
        char *producer;
        size_t producer_len;
        int32_t epoch, epoch_hi;
        int64_t seq, seq_hi, last_seq;
        uint64_t records;
};
int ledger_trunc_streams(struct ledger *lg, const struct ledger_part *p,
                         int64_t offset, int64_t floor,
                         struct ledger_trunc_stream **out, size_t *n,
                         char *errstr, size_t errstr_size);
void ledger_trunc_streams_free(struct ledger_trunc_stream *s, size_t n);

/* A truncation of p found: offsets offset_lo..offset_hi are un-audited
 * (offset_lo the divergence point, offset_hi the ledger's next offset
 * then, minus one), records of them were accepted records, the log ended
 * at log_end; leader_epoch -1 unknown; how names the way it showed
 * ("offset out of range", "fingerprint", "KIP-320"); detail the JSON
 * object of the anomaly (schema/0014_truncation.sql).  Copied; applied by the next ledger_commit().
 * Returns 0, or -1 (out of memory) with errstr. */
struct ledger_truncation {
        int64_t offset_lo, offset_hi, log_end;
        uint64_t records;
        int32_t leader_epoch;
        const char *how;
        const char *detail;
};
int ledger_trunc_pending(struct ledger *lg, const struct ledger_part *p,
                         const struct ledger_truncation *t, char *errstr,
                         size_t errstr_size);

#endif /* EOSAUDIT_LEDGER_TRUNC_H */
