/*
 * ids.c - the id windows in the ledger (schema/0002_msgids.sql): loading
 * generations and their ids into a tracker, the tracker's id lookups, and
 * deleting generations.  The packed ids themselves are entries.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/le.h"
#include "internal.h"

/* The part of partition in window w, or UINT32_MAX (not audited now). */
static uint32_t ledger_part_of(const struct ledger_window *w,
                               int32_t partition)
{
        if (partition >= 0 && (size_t)partition < w->npart_of &&
            w->part_of[partition])
                return w->part_of[partition] - 1;
        return UINT32_MAX;
}

/* dedup_id_lookup_cb: is id in the closed generation gen?  A binary search
 * in its file, or (closed before files) one chunk read and a binary
 * search in it.  On the writer handle, so it sees what this process
 * committed. */
static int ledger_id_lookup(void *opaque, uint32_t window, uint64_t gen,
                            const struct dedup_id *id, uint32_t *part,
                            int64_t *offset)
{
        struct ledger *lg = opaque;
        sqlite3_stmt *st = lg->st[LEDGER_ST_CHUNK_GET];
        struct ledger_entries v;
        int64_t h1, h2, off;
        int32_t partition;
        int brc, src, rc = -1;

        if (window >= lg->nwin)
                goto out;
        if (ledger_idfile_is(lg, gen)) {
                char err[sizeof(lg->lookup_err) / 2];
                rc = ledger_idfile_find(lg, gen, id, &partition, &off, err,
                                        sizeof(err));
                if (rc < 0 && !lg->lookup_failed) {
                        lg->lookup_failed = 1;
                        snprintf(lg->lookup_err, sizeof(lg->lookup_err),
                                 "cannot look up a message id: %s", err);
                }
                goto found;
        }
        ledger_chunk_bound(id, &h1, &h2);
        brc = sqlite3_bind_int64(st, 1, (int64_t)gen);
        brc |= sqlite3_bind_int64(st, 2, h1);
        brc |= sqlite3_bind_int64(st, 3, h2);
        if (brc != SQLITE_OK)
                goto out;
        src = sqlite3_step(st);
        if (src == SQLITE_DONE) {
                rc = 0;
                goto out;
        }
        if (src != SQLITE_ROW ||
            ledger_entries_view(sqlite3_column_blob(st, 0),
                                (size_t)sqlite3_column_bytes(st, 0), &v))
                goto out;
        rc = ledger_entries_find(&v, 1, id, &partition, &off);
found:
        if (rc > 0) {
                *part = ledger_part_of(&lg->win[window], partition);
                *offset = *part == UINT32_MAX ? -1 : off;
        }
out:
        if (rc < 0 && !lg->lookup_failed) {
                lg->lookup_failed = 1;
                snprintf(lg->lookup_err, sizeof(lg->lookup_err),
                         "cannot look up a message id in the ledger: %s",
                         sqlite3_errmsg(lg->db));
        }
        sqlite3_reset(st);
        return rc;
}

/* Fills the partition -> part map of window w from the parts of topic. */
static int ledger_window_map(struct ledger_window *w,
                             const struct ledger_part *parts, size_t nparts)
{
        size_t i, n = 0;

        for (i = 0; i < nparts; i++)
                if (!strcmp(parts[i].topic, w->topic) &&
                    parts[i].partition >= 0 &&
                    (size_t)parts[i].partition + 1 > n)
                        n = (size_t)parts[i].partition + 1;
        w->part_of = calloc(n ? n : 1, sizeof(*w->part_of));
        if (!w->part_of)
                return -1;
        w->npart_of = n;
        for (i = 0; i < nparts; i++)
                if (!strcmp(parts[i].topic, w->topic) &&
                    parts[i].partition >= 0)
                        w->part_of[parts[i].partition] = parts[i].part + 1;
        return 0;
}

/* Restores the packed ids of gen (rows of st, column 0) into tr: a closed
 * generation's into its filter, an open one's into memory too. */
static int ledger_ids_restore(struct ledger *lg, struct dedup_tracker *tr,
                              sqlite3_stmt *st, uint32_t window, uint64_t gen,
                              int closed, char *errstr, size_t errstr_size)
{
        static const char *const what = "cannot read ledger id windows";
        const struct ledger_window *w = &lg->win[window];
        int src;

        if (sqlite3_bind_int64(st, 1, (int64_t)gen) != SQLITE_OK) {
                ledger_err(lg, what, errstr, errstr_size);
                return -1;
        }
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
                struct ledger_entries v;
                size_t i;
                if (ledger_entries_view(sqlite3_column_blob(st, 0),
                                        (size_t)sqlite3_column_bytes(st, 0),
                                        &v)) {
                        snprintf(errstr, errstr_size,
                                 "%s: ids of generation %llu (topic %s) are "
                                 "%d bytes, in neither packed format",
                                 what, (unsigned long long)gen, w->topic,
                                 sqlite3_column_bytes(st, 0));
                        sqlite3_reset(st);
                        return -1;
                }
                for (i = 0; i < v.n; i++) {
                        struct dedup_id_row r = {.gen = gen, .window = window};
                        int32_t partition;
                        ledger_entries_get(&v, i, &r.id, &partition,
                                           &r.offset);
                        r.part = ledger_part_of(w, partition);
                        /* An id whose partition is not audited now (it
                         * cannot be written back) is left out.  A
                         * generation the tracker refuses (pushed out by a
                         * later one) is skipped whole. */
                        if (closed ? dedup_tracker_id_restore(tr, window, gen,
                                                              &r.id)
                                   : r.part != UINT32_MAX &&
                                         dedup_tracker_row_restore(tr, &r)) {
                                sqlite3_reset(st);
                                return 0;
                        }
                }
        }
        if (src != SQLITE_DONE)
                ledger_err(lg, what, errstr, errstr_size);
        sqlite3_reset(st);
        return src == SQLITE_DONE ? 0 : -1;
}

/* Restores the ids of gen, closed into a file of bytes, into tr's filter,
 * and makes the file known for lookups. */
static int ledger_file_restore(struct ledger *lg, struct dedup_tracker *tr,
                               uint32_t window, uint64_t gen, size_t bytes,
                               char *errstr, size_t errstr_size)
{
        struct ledger_entries v;
        void *map;
        size_t i;
        int rc;

        if (ledger_idfile_view(lg, gen, bytes, &map, &v, errstr, errstr_size))
                return -1;
        for (i = 0; i < v.n; i++) {
                struct dedup_id id;
                int32_t partition;
                int64_t off;
                ledger_entries_get(&v, i, &id, &partition, &off);
                /* A generation the tracker refuses (pushed out by a later
                 * one) is skipped whole. */
                if (dedup_tracker_id_restore(tr, window, gen, &id))
                        break;
        }
        rc = ledger_idfile_add(lg, gen, bytes, &v);
        ledger_idfile_unmap(map, bytes);
        if (rc)
                snprintf(errstr, errstr_size,
                         "cannot load ledger id windows: %s",
                         strerror(ENOMEM));
        return rc;
}

/* Restores the generations of window (topic) and their ids into tr. */
static int ledger_window_load(struct ledger *lg, struct dedup_tracker *tr,
                              sqlite3_stmt *gen_st, sqlite3_stmt *batch_st,
                              sqlite3_stmt *chunk_st, uint32_t window,
                              char *errstr, size_t errstr_size)
{
        static const char *const what = "cannot read ledger id windows";
        struct dedup_gen_view *gens = NULL;
        int64_t *bytes = NULL; /* file_bytes of each, -1 NULL */
        size_t ngens = 0, cap = 0, i;
        int src, rc = -1;

        if (sqlite3_bind_text(gen_st, 1, lg->win[window].topic, -1,
                              SQLITE_STATIC) != SQLITE_OK) {
                ledger_err(lg, what, errstr, errstr_size);
                goto out;
        }
        while ((src = sqlite3_step(gen_st)) == SQLITE_ROW) {
                struct dedup_gen_view gv = {
                    .window = window,
                    .gen = (uint64_t)sqlite3_column_int64(gen_st, 0),
                    .first_ms = sqlite3_column_int64(gen_st, 1),
                    .last_ms = sqlite3_column_int64(gen_st, 2),
                    .ids = ledger_u64_get(gen_st, 3),
                    .closed = sqlite3_column_int64(gen_st, 4) != 0,
                };
                if (ngens == cap) {
                        size_t ncap = cap ? cap * 2 : 64;
                        struct dedup_gen_view *n = realloc(gens,
                                                           ncap * sizeof(*n));
                        int64_t *nb;
                        if (n)
                                gens = n;
                        nb = n ? realloc(bytes, ncap * sizeof(*nb)) : NULL;
                        if (!nb) {
                                snprintf(errstr, errstr_size, "%s: %s", what,
                                         strerror(ENOMEM));
                                goto out;
                        }
                        bytes = nb;
                        cap = ncap;
                }
                bytes[ngens] = ledger_col_opt(gen_st, 5);
                gens[ngens++] = gv;
        }
        if (src != SQLITE_DONE) {
                ledger_err(lg, what, errstr, errstr_size);
                goto out;
        }
        /* Each generation, then its ids: a generation pushed out by a
         * later one (the ledger held more than the window now does) is
         * dropped by the tracker and deleted at the next commit. */
        for (i = 0; i < ngens; i++) {
                if (dedup_tracker_gen_restore(tr, &gens[i])) {
                        snprintf(errstr, errstr_size,
                                 "bad id generation %lld in the ledger for "
                                 "topic %s",
                                 (long long)gens[i].gen,
                                 lg->win[window].topic);
                        goto out;
                }
        }
        for (i = 0; i < ngens; i++) {
                if (gens[i].closed && bytes[i] >= 0) {
                        if (ledger_file_restore(lg, tr, window, gens[i].gen,
                                                (size_t)bytes[i], errstr,
                                                errstr_size))
                                goto out;
                        continue;
                }
                /* Ids of an open generation sit in batches; a generation
                 * closed in memory and never persisted so too; one closed
                 * before files in chunks. */
                if (ledger_ids_restore(lg, tr,
                                       gens[i].closed ? chunk_st : batch_st,
                                       window, gens[i].gen, gens[i].closed,
                                       errstr, errstr_size))
                        goto out;
        }
        rc = 0;
out:
        sqlite3_reset(gen_st);
        free(gens);
        free(bytes);
        return rc;
}

void ledger_windows_free(struct ledger *lg)
{
        uint32_t i;

        for (i = 0; i < lg->nwin; i++)
                free(lg->win[i].part_of);
        free(lg->win);
        free(lg->dedup_key);
        free(lg->ebuf);
        lg->ebuf = NULL;
        lg->ebuf_cap = 0;
        lg->win = NULL;
        lg->nwin = 0;
        lg->dedup_key = NULL;
}

int ledger_windows_load(struct ledger *lg, struct dedup_tracker *tr,
                        const char *const *topics, const uint32_t *windows,
                        size_t ntopics, const struct ledger_part *parts,
                        size_t nparts, const char *dedup_key, char *errstr,
                        size_t errstr_size)
{
        sqlite3_stmt *gen_st = NULL, *batch_st = NULL, *chunk_st = NULL;
        sqlite3_stmt *seq_st = NULL;
        size_t i;
        int rc = -1;

        ledger_windows_free(lg);
        ledger_idfiles_free(lg);
        lg->dedup_key = strdup(dedup_key);
        lg->win = calloc(ntopics ? ntopics : 1, sizeof(*lg->win));
        if (!lg->dedup_key || !lg->win) {
                snprintf(errstr, errstr_size,
                         "cannot load ledger id windows: %s",
                         strerror(ENOMEM));
                goto out;
        }
        for (i = 0; i < ntopics; i++) {
                if (windows[i] != i) {
                        snprintf(errstr, errstr_size,
                                 "id window of topic %s is %u, not %zu",
                                 topics[i], windows[i], i);
                        goto out;
                }
                lg->win[i].topic = topics[i];
                lg->nwin++;
                if (ledger_window_map(&lg->win[i], parts, nparts)) {
                        snprintf(errstr, errstr_size,
                                 "cannot load ledger id windows: %s",
                                 strerror(ENOMEM));
                        goto out;
                }
        }
        if (ledger_prepare(lg,
                           "SELECT gen, first_ms, last_ms, ids, closed, "
                           "file_bytes FROM msgid_gens WHERE topic = ?1 "
                           "ORDER BY gen",
                           &gen_st, errstr, errstr_size) ||
            ledger_prepare(lg,
                           "SELECT entries FROM msgid_batches WHERE gen = ?1",
                           &batch_st, errstr, errstr_size) ||
            ledger_prepare(lg,
                           "SELECT entries FROM msgid_chunks WHERE gen = ?1",
                           &chunk_st, errstr, errstr_size))
                goto out;
        if (ledger_txn(lg, LEDGER_ST_BEGIN, "cannot load ledger id windows",
                       errstr, errstr_size))
                goto out;
        for (i = 0; i < ntopics; i++) {
                /* Ids made from another identity mean nothing now. */
                if (ledger_topic_gens_del(lg, topics[i], dedup_key, errstr,
                                          errstr_size))
                        goto out;
                if (ledger_window_load(lg, tr, gen_st, batch_st, chunk_st,
                                       (uint32_t)i, errstr, errstr_size))
                        goto out;
        }
        if (ledger_query_row(lg,
                             "SELECT COALESCE(MAX(seq), 0) FROM msgid_batches",
                             "cannot load ledger id windows", &seq_st, errstr,
                             errstr_size))
                goto out;
        lg->batch_seq = sqlite3_column_int64(seq_st, 0);
        if (ledger_txn(lg, LEDGER_ST_COMMIT, "cannot load ledger id windows",
                       errstr, errstr_size))
                goto out;
        /* After the commit: the stale generations' files are gone now,
         * and a leftover of a crash is named by no row. */
        if (ledger_idfiles_sweep(lg, LEDGER_IDFILE_IDS, errstr, errstr_size))
                goto out;
        dedup_tracker_set_id_lookup(tr, ledger_id_lookup, lg);
        rc = 0;
out:
        ledger_rollback(lg);
        sqlite3_finalize(gen_st);
        sqlite3_finalize(batch_st);
        sqlite3_finalize(chunk_st);
        sqlite3_finalize(seq_st);
        return rc;
}

/* Runs one of the statements that take a generation as ?1. */
int ledger_gen_step(struct ledger *lg, enum ledger_stmt which, uint64_t gen,
                    const char *what, char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = lg->st[which];

        return ledger_step_done(lg, st,
                                sqlite3_bind_int64(st, 1, (int64_t)gen), what,
                                errstr, errstr_size);
}

/* Deletes generation gen and its ids (a file once the transaction
 * commits). */
int ledger_gen_del(struct ledger *lg, uint64_t gen, char *errstr,
                   size_t errstr_size)
{
        if (ledger_idfile_drop(lg, gen)) {
                snprintf(errstr, errstr_size, "cannot delete ledger ids: %s",
                         strerror(ENOMEM));
                return -1;
        }
        return ledger_gen_step(lg, LEDGER_ST_GEN_BATCHES_DEL, gen,
                               "cannot delete ledger ids", errstr,
                               errstr_size) ||
               ledger_gen_step(lg, LEDGER_ST_GEN_CHUNKS_DEL, gen,
                               "cannot delete ledger ids", errstr,
                               errstr_size) ||
               ledger_gen_step(lg, LEDGER_ST_GEN_DEL, gen,
                               "cannot delete ledger id generation", errstr,
                               errstr_size);
}

int ledger_topic_gens_del(struct ledger *lg, const char *topic,
                          const char *keep_key, char *errstr,
                          size_t errstr_size)
{
        static const char *const what = "cannot read ledger id windows";
        sqlite3_stmt *st = NULL;
        uint64_t *gens = NULL;
        size_t n = 0, cap = 0, i;
        int src, rc = -1;

        if (ledger_prepare(lg,
                           keep_key ? "SELECT gen FROM msgid_gens WHERE "
                                      "topic = ?1 AND dedup_key <> ?2"
                                    : "SELECT gen FROM msgid_gens WHERE "
                                      "topic = ?1",
                           &st, errstr, errstr_size))
                return -1;
        if (sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC) != SQLITE_OK ||
            (keep_key && sqlite3_bind_text(st, 2, keep_key, -1,
                                           SQLITE_STATIC) != SQLITE_OK)) {
                ledger_err(lg, what, errstr, errstr_size);
                goto out;
        }
        /* All of them first: no row is deleted under the running query. */
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
                if (n == cap) {
                        size_t ncap = cap ? cap * 2 : 32;
                        uint64_t *g = realloc(gens, ncap * sizeof(*g));
                        if (!g) {
                                snprintf(errstr, errstr_size, "%s: %s", what,
                                         strerror(ENOMEM));
                                goto out;
                        }
                        gens = g;
                        cap = ncap;
                }
                gens[n++] = (uint64_t)sqlite3_column_int64(st, 0);
        }
        if (src != SQLITE_DONE) {
                ledger_err(lg, what, errstr, errstr_size);
                goto out;
        }
        for (i = 0; i < n; i++)
                if (ledger_gen_del(lg, gens[i], errstr, errstr_size))
                        goto out;
        rc = 0;
out:
        sqlite3_finalize(st);
        free(gens);
        return rc;
}

int ledger_windows_part_add(struct ledger *lg, uint32_t window,
                            const struct ledger_part *p)
{
        struct ledger_window *w;
        uint32_t *m;
        size_t n;

        if (window >= lg->nwin || p->partition < 0)
                return -1;
        w = &lg->win[window];
        n = (size_t)p->partition + 1;
        if (n > w->npart_of) {
                m = realloc(w->part_of, n * sizeof(*m));
                if (!m)
                        return -1;
                memset(m + w->npart_of, 0, (n - w->npart_of) * sizeof(*m));
                w->part_of = m;
                w->npart_of = n;
        }
        w->part_of[p->partition] = p->part + 1;
        return 0;
}
