/*
 * ids_query.c - one message id: where the id windows saw it first (the
 * generations of schema/0002_msgids.sql, as committed) and which
 * redelivered anomalies name other copies of it.  For /api/v1/ids/{id};
 * nothing here writes, and it runs on read-only handles: its statements
 * are prepared per call, never shared with the writer's.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

int ledger_id_key(struct ledger *lg, const char *topic, char *key,
                  size_t key_size, char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        const unsigned char *k;
        int src, rc = -1;

        if (ledger_prepare(lg,
                           "SELECT dedup_key FROM msgid_gens WHERE topic = ?1 "
                           "ORDER BY gen DESC LIMIT 1",
                           &st, errstr, errstr_size))
                goto out;
        if (sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC) != SQLITE_OK) {
                ledger_err(lg, "cannot read ledger id windows", errstr,
                           errstr_size);
                goto out;
        }
        src = sqlite3_step(st);
        if (src != SQLITE_ROW && src != SQLITE_DONE) {
                ledger_err(lg, "cannot read ledger id windows", errstr,
                           errstr_size);
                goto out;
        }
        k = src == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
        snprintf(key, key_size, "%s", k ? (const char *)k : "");
        rc = 0;
out:
        sqlite3_finalize(st);
        return rc;
}

/* Looks id up in generation gen: a closed one's chunk (the last whose
 * first id is not above id, as the audit's own lookup), or every batch of
 * an open one.  1 found, 0 not, -1 an error. */
static int ledger_gen_find(sqlite3_stmt *chunk_st, sqlite3_stmt *batch_st,
                           int64_t gen, int closed, const struct dedup_id *id,
                           int32_t *partition, int64_t *offset)
{
        sqlite3_stmt *st = closed ? chunk_st : batch_st;
        struct ledger_entries v;
        int32_t part = -1;
        int64_t off = -1, h1, h2;
        int brc, src, found = 0;

        brc = sqlite3_bind_int64(st, 1, gen);
        if (closed) {
                ledger_chunk_bound(id, &h1, &h2);
                brc |= sqlite3_bind_int64(st, 2, h1);
                brc |= sqlite3_bind_int64(st, 3, h2);
        }
        if (brc != SQLITE_OK)
                return -1;
        while (!found && (src = sqlite3_step(st)) == SQLITE_ROW) {
                /* A blob in neither format holds nothing to find. */
                if (ledger_entries_view(sqlite3_column_blob(st, 0),
                                        (size_t)sqlite3_column_bytes(st, 0),
                                        &v))
                        continue;
                found = ledger_entries_find(&v, closed, id, &part, &off);
        }
        sqlite3_reset(st);
        if (found) {
                *partition = part;
                *offset = off;
                return 1;
        }
        return src == SQLITE_DONE ? 0 : -1;
}

/* Looks id up in generation gen's file of bytes.  A file that cannot be
 * read (the writer dropped the generation since this read began; a
 * damaged one stops the writer's load instead) holds nothing to find. */
static int ledger_file_find(struct ledger *lg, int64_t gen, size_t bytes,
                            const struct dedup_id *id, int32_t *partition,
                            int64_t *offset)
{
        struct ledger_entries v;
        char err[512];
        void *map;
        int found;

        if (ledger_idfile_view(lg, (uint64_t)gen, bytes, &map, &v, err,
                               sizeof(err)))
                return 0;
        found = ledger_entries_find(&v, 1, id, partition, offset);
        ledger_idfile_unmap(map, bytes);
        return found;
}

/* Fills the window part of *seen: the generations of topic, oldest
 * first, and the first that holds id. */
static int ledger_window_find(struct ledger *lg, const char *topic,
                              const struct dedup_id *id,
                              struct ledger_id_seen *seen)
{
        sqlite3_stmt *gen_st = NULL, *chunk_st = NULL, *batch_st = NULL;
        const unsigned char *key;
        int64_t bytes;
        int src = SQLITE_DONE, f, rc = -1;

        if (sqlite3_prepare_v2(lg->db,
                               "SELECT gen, closed, first_ms, last_ms, "
                               "dedup_key, file_bytes FROM msgid_gens WHERE "
                               "topic = ?1 ORDER BY gen",
                               -1, &gen_st, NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(lg->db,
                               "SELECT entries FROM msgid_chunks WHERE gen = "
                               "?1 AND (h1, h2) <= (?2, ?3) ORDER BY h1 DESC, "
                               "h2 DESC LIMIT 1",
                               -1, &chunk_st, NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(lg->db,
                               "SELECT entries FROM msgid_batches WHERE gen = "
                               "?1 ORDER BY seq",
                               -1, &batch_st, NULL) != SQLITE_OK ||
            sqlite3_bind_text(gen_st, 1, topic, -1, SQLITE_STATIC) !=
                SQLITE_OK)
                goto out;
        while ((src = sqlite3_step(gen_st)) == SQLITE_ROW) {
                int64_t gen = sqlite3_column_int64(gen_st, 0);
                int closed = sqlite3_column_int64(gen_st, 1) != 0;
                if (!seen->gens++) {
                        seen->oldest_ms = sqlite3_column_int64(gen_st, 2);
                }
                key = sqlite3_column_text(gen_st, 4);
                snprintf(seen->dedup_key, sizeof(seen->dedup_key), "%s",
                         key ? (const char *)key : "");
                if (seen->in_window)
                        continue;
                bytes = ledger_col_opt(gen_st, 5);
                f = closed && bytes >= 0
                        ? ledger_file_find(lg, gen, (size_t)bytes, id,
                                           &seen->partition, &seen->offset)
                        : ledger_gen_find(chunk_st, batch_st, gen, closed, id,
                                          &seen->partition, &seen->offset);
                if (f < 0)
                        goto out;
                if (f) {
                        seen->in_window = 1;
                        seen->gen = gen;
                        seen->gen_closed = closed;
                        seen->gen_first_ms = sqlite3_column_int64(gen_st, 2);
                        seen->gen_last_ms = sqlite3_column_int64(gen_st, 3);
                }
        }
        rc = src == SQLITE_DONE ? 0 : -1;
out:
        sqlite3_finalize(gen_st);
        sqlite3_finalize(chunk_st);
        sqlite3_finalize(batch_st);
        return rc;
}

/*
 * The copies: records of the topic's redelivered anomalies whose first
 * copies [first_offset, first_offset_hi] of first_partition hold the
 * window's first copy (an anomaly covers a run of consecutive records
 * whose first copies are consecutive too, so the copy of first offset o
 * is offset_lo + (o - first_offset)), or whose evidence is the id itself
 * (the run's first record: its copy is offset_lo).  The second test finds
 * copies after the window dropped the id's generation.
 */
static int ledger_copies_find(struct ledger *lg, const char *topic,
                              const void *id, size_t len, int64_t limit,
                              const struct ledger_id_seen *seen,
                              ledger_id_copy_cb *cb, void *opaque)
{
        sqlite3_stmt *st = NULL;
        int brc, src = SQLITE_DONE, rc = -1, n = 0;

        if (sqlite3_prepare_v2(
                lg->db,
                "SELECT id, partition, offset_lo, offset_hi, detected_ms, "
                "first_partition, first_offset, producer, "
                "(first_partition = ?2 AND ?3 BETWEEN first_offset AND "
                "first_offset_hi) FROM anomalies WHERE topic = ?1 AND "
                "kind = 'redelivered' AND ((first_partition = ?2 AND ?3 "
                "BETWEEN first_offset AND first_offset_hi) OR "
                "(msgid_len = ?5 AND msgid = ?4)) ORDER BY id LIMIT ?6",
                -1, &st, NULL) != SQLITE_OK)
                goto out;
        brc = sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC);
        if (seen->in_window) {
                brc |= sqlite3_bind_int64(st, 2, seen->partition);
                brc |= sqlite3_bind_int64(st, 3, seen->offset);
        } else {
                brc |= sqlite3_bind_null(st, 2);
                brc |= sqlite3_bind_null(st, 3);
        }
        /* The evidence holds at most DEDUP_ID_EVIDENCE_MAX bytes. */
        brc |= sqlite3_bind_blob(st, 4, len ? id : "",
                                 (int)(len < DEDUP_ID_EVIDENCE_MAX
                                           ? len
                                           : DEDUP_ID_EVIDENCE_MAX),
                                 SQLITE_STATIC);
        brc |= sqlite3_bind_int64(st, 5, (int64_t)len);
        brc |= sqlite3_bind_int64(st, 6, limit < 0 ? -1 : limit);
        if (brc != SQLITE_OK)
                goto out;
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
                struct ledger_id_copy c;
                int64_t lo = sqlite3_column_int64(st, 2);
                int64_t hi = sqlite3_column_int64(st, 3);

                memset(&c, 0, sizeof(c));
                c.anomaly_id = sqlite3_column_int64(st, 0);
                c.partition = (int32_t)sqlite3_column_int64(st, 1);
                c.detected_ms = sqlite3_column_int64(st, 4);
                c.first_partition = (int32_t)ledger_col_opt(st, 5);
                c.first_offset = ledger_col_opt(st, 6);
                c.offset = lo;
                if (sqlite3_column_int64(st, 8) == 1 && c.first_offset >= 0) {
                        /* Differences, not sums: offsets may be large. */
                        int64_t d = seen->offset - c.first_offset;
                        c.offset = d <= hi - lo ? lo + d : hi;
                        c.first_offset = seen->offset;
                }
                if (sqlite3_column_type(st, 7) != SQLITE_NULL) {
                        c.producer = (const char *)sqlite3_column_text(st, 7);
                        c.producer_len = (size_t)sqlite3_column_bytes(st, 7);
                }
                n++;
                if (cb && cb(opaque, &c)) {
                        src = SQLITE_DONE;
                        break;
                }
        }
        rc = src == SQLITE_DONE ? n : -1;
out:
        sqlite3_finalize(st);
        return rc;
}

int ledger_id_find(struct ledger *lg, const char *topic, const void *id,
                   size_t len, int64_t limit, struct ledger_id_seen *seen,
                   ledger_id_copy_cb *cb, void *opaque, char *errstr,
                   size_t errstr_size)
{
        static const char *const what = "cannot look up the id in the ledger";
        struct dedup_id h;
        int n = -1;

        memset(seen, 0, sizeof(*seen));
        seen->partition = -1;
        seen->offset = seen->gen = -1;
        seen->gen_first_ms = seen->gen_last_ms = seen->oldest_ms = -1;
        if (len > INT32_MAX) {
                snprintf(errstr, errstr_size, "%s: id too long", what);
                return -1;
        }
        dedup_id_hash(len ? id : "", len, &h);
        /* Window and anomalies from the same snapshot. */
        if (ledger_exec(lg, "BEGIN", what, errstr, errstr_size))
                return -1;
        if (ledger_window_find(lg, topic, &h, seen) ||
            (n = ledger_copies_find(lg, topic, id, len, limit, seen, cb,
                                    opaque)) < 0) {
                ledger_err(lg, what, errstr, errstr_size);
                n = -1;
                goto out;
        }
        if (ledger_exec(lg, "COMMIT", what, errstr, errstr_size))
                n = -1;
out:
        ledger_rollback(lg);
        return n;
}
