/*
 * test_ledger_ids.c - the SQLite ledger: message id windows across runs,
 * closed generations, ledger_id_find(), and topic incarnations and ids.
 * The fixture (ledger_fixture.h) is shared with test_ledger.c.
 */
#include "ledger_fixture.h"
#include <dirent.h>

#include "../auditor/ledger/internal.h"

/* ------------------------------------------------------------------ */
/* Id windows                                                          */
/* ------------------------------------------------------------------ */

/* One window per topic of parts_init(): 0 orders, 1 pay"ments, loaded
 * from lg; ledger_windows_load()'s result (err on -1). */
static int windows_load(struct ledger *lg, struct dedup_tracker *tr,
                        const struct ledger_part *parts, const char *key,
                        char *err, size_t err_size)
{
        static const char *const topics[2] = {"orders", "pay\"ments"};
        uint32_t windows[2];
        uint32_t i;

        for (i = 0; i < 2; i++)
                assert_int_equal(dedup_tracker_window_add(tr, &windows[i]), 0);
        for (i = 0; i < NPARTS; i++)
                dedup_tracker_part_set_window(tr, i, i < 2 ? 0 : 1);
        return ledger_windows_load(lg, tr, topics, windows, 2, parts, NPARTS,
                                   key, err, err_size);
}

static void windows_ok(struct ledger *lg, struct dedup_tracker *tr,
                       const struct ledger_part *parts, const char *key)
{
        char err[256];

        if (windows_load(lg, tr, parts, key, err, sizeof(err)))
                fail_msg("ledger_windows_load: %s", err);
}

static enum dedup_verdict observe_id(struct dedup_tracker *tr,
                                     struct ledger_part *parts, uint32_t part,
                                     int64_t offset, const char *id)
{
        struct dedup_hdrs h;

        dedup_hdrs_init(&h);
        h.id = id;
        h.id_len = strlen(id);
        parts[part].next_offset = offset + 1;
        parts[part].dirty = 1;
        return dedup_tracker_observe(tr, part, offset, &h);
}

static int redelivered_cb(void *opaque, const struct ledger_anomaly *a)
{
        struct ledger_anomaly *out = opaque;

        assert_string_equal(a->kind, "redelivered");
        *out = *a;
        out->topic = NULL;
        out->kind = NULL;
        out->producer = NULL;
        /* The evidence must be checked here: strings die with the row. */
        assert_int_equal(a->msgid_stored, 2);
        assert_memory_equal(a->msgid, "m1", 2);
        out->msgid = NULL;
        return 0;
}

/* Ids committed in one run are found by the next (through SQLite, the
 * filters rebuilt from the ledger), per topic; the evidence is stored; a
 * different --dedup-key drops the stored ids. */
static void test_id_windows(void **state)
{
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct ledger_anomaly a;
        struct ledger_anomaly_filter f = {.kind = "redelivered",
                                          .since_ms = -1,
                                          .limit = -1};
        struct ledger_summary sum;
        struct dedup_tracker *tr;
        struct ledger *lg;
        char err[256];

        (void)state;
        tr = reload(fx->a, &lg, parts);
        windows_ok(lg, tr, parts, "msgid");
        dedup_tracker_begin(tr, 1000);
        assert_int_equal(observe_id(tr, parts, 0, 10, "m1"),
                         DEDUP_V_UNTRACKED);
        assert_int_equal(observe_id(tr, parts, 1, 5, "m2"), DEDUP_V_UNTRACKED);
        /* Another topic: another window. */
        assert_int_equal(observe_id(tr, parts, 2, 3, "m1"), DEDUP_V_UNTRACKED);
        commit_ok(lg, tr, parts);
        /* Two open generations (one per topic), a batch each. */
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_batches"),
                         2);
        /* Narrow: a tag byte, then 22 bytes per id. */
        assert_int_equal(
            db_int(fx->a, "SELECT SUM(length(entries)) FROM msgid_batches"),
            2 + 3 * 22);
        dedup_tracker_free(tr);
        ledger_close(lg);

        tr = reload(fx->a, &lg, parts);
        windows_ok(lg, tr, parts, "msgid");
        dedup_tracker_begin(tr, 2000);
        assert_int_equal(observe_id(tr, parts, 1, 6, "m1"),
                         DEDUP_V_REDELIVERED);
        assert_int_equal(observe_id(tr, parts, 2, 4, "m3"), DEDUP_V_UNTRACKED);
        commit_ok(lg, tr, parts);
        memset(&a, 0, sizeof(a));
        if (ledger_anomalies_query(lg, &f, redelivered_cb, &a, err,
                                   sizeof(err)))
                fail_msg("ledger_anomalies_query: %s", err);
        assert_int_equal(a.partition, 1);
        assert_int_equal(a.offset_lo, 6);
        assert_int_equal(a.first_partition, 0);
        assert_int_equal(a.first_offset, 10);
        assert_int_equal(a.first_offset_hi, 10);
        assert_int_equal(a.msgid_len, 2);
        assert_int_equal(a.count, 1);
        if (ledger_summary(lg, NULL, &sum, err, sizeof(err)))
                fail_msg("ledger_summary: %s", err);
        assert_int_equal(sum.anomalies[DEDUP_KIND_REDELIVERED], 1);
        assert_int_equal(sum.ids_checked, 5);
        assert_int_equal(sum.window_ids, 4);
        assert_int_equal(sum.window_gens, 2);
        assert_int_equal(sum.window_oldest_ms, 1000);
        if (ledger_summary(lg, "orders", &sum, err, sizeof(err)))
                fail_msg("ledger_summary: %s", err);
        assert_int_equal(sum.window_ids, 2);
        dedup_tracker_free(tr);
        ledger_close(lg);

        /* Ids made from the record key are not msgids: all dropped. */
        tr = reload(fx->a, &lg, parts);
        windows_ok(lg, tr, parts, "key");
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_batches"),
                         0);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_gens"), 0);
        dedup_tracker_begin(tr, 3000);
        assert_int_equal(observe_id(tr, parts, 1, 7, "m1"), DEDUP_V_UNTRACKED);
        commit_ok(lg, tr, parts);
        assert_int_equal(db_int(fx->a,
                                "SELECT COUNT(*) FROM msgid_gens WHERE "
                                "dedup_key = 'key' AND topic = 'orders'"),
                         1);
        dedup_tracker_free(tr);
        ledger_close(lg);
}

/* Observes ids "i{from}".."i{to - 1}" as new, id i at offset base + i on
 * part i % 2, committing after every `every` of them (0: never). */
static void observe_new_ids(struct ledger *lg, struct dedup_tracker *tr,
                            struct ledger_part *parts, int from, int to,
                            int64_t base, int every)
{
        char id[16];
        int i;

        for (i = from; i < to; i++) {
                snprintf(id, sizeof(id), "i%d", i);
                assert_int_equal(observe_id(tr, parts, (uint32_t)(i % 2),
                                            base + i, id),
                                 DEDUP_V_UNTRACKED);
                if (every && i % every == every - 1)
                        commit_ok(lg, tr, parts);
        }
}

/* Opens path into a tracker whose windows hold max_ids ids. */
static struct dedup_tracker *reload_window(const char *path,
                                           struct ledger **lgp,
                                           struct ledger_part *parts,
                                           uint64_t max_ids)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        char err[256];

        conf_init(&conf);
        conf.window.max_ids = max_ids;
        conf.window.max_age_ms = 0;
        parts_init(parts);
        tr = tracker_new(&conf, parts);
        *lgp = open_ok(path);
        if (ledger_load(*lgp, tr, parts, NPARTS, err, sizeof(err)))
                fail_msg("ledger_load: %s", err);
        windows_ok(*lgp, tr, parts, "msgid");
        return tr;
}

struct first_copy {
        int32_t partition;
        int64_t first_offset, offset;
        int found;
};

static int first_copy_cb(void *opaque, const struct ledger_anomaly *a)
{
        struct first_copy *fc = opaque;

        if (a->offset_lo == fc->offset) {
                fc->partition = a->first_partition;
                fc->first_offset = a->first_offset;
                fc->found++;
        }
        return 0;
}

struct id_copies {
        int n;
        struct ledger_id_copy last;
};

static int id_copy_cb(void *opaque, const struct ledger_id_copy *c)
{
        struct id_copies *ic = opaque;

        ic->n++;
        ic->last = *c;
        ic->last.producer = NULL; /* dies with the row */
        return 0;
}

/* ledger_id_find() on a reader, after test_id_windows_closed's runs:
 * first copies from closed generations (chunks) and the open one
 * (batches), the later copy from the anomalies, a coalesced run's middle
 * record, and ids nobody sent. */
static void ids_find_check(const char *path)
{
        struct ledger_id_seen seen;
        struct id_copies ic;
        struct ledger *rd = NULL;
        char id[16], err[256];
        int i;

        if (ledger_open_reader(&rd, path, err, sizeof(err)))
                fail_msg("ledger_open_reader: %s", err);
        for (i = 0; i < 1000; i += 37) {
                snprintf(id, sizeof(id), "i%d", i);
                memset(&ic, 0, sizeof(ic));
                assert_int_equal(ledger_id_find(rd, "orders", id, strlen(id),
                                                -1, &seen, id_copy_cb, &ic,
                                                err, sizeof(err)),
                                 1);
                assert_true(seen.in_window);
                assert_int_equal(seen.partition, i % 2);
                assert_int_equal(seen.offset, 10000 + i);
                assert_int_equal(seen.gen_closed, i < 900);
                assert_int_equal(seen.gens, 4);
                assert_string_equal(seen.dedup_key, "msgid");
                assert_int_equal(ic.n, 1);
                assert_int_equal(ic.last.partition, 0);
                assert_int_equal(ic.last.offset, 20000 + i);
                assert_int_equal(ic.last.first_partition, i % 2);
                assert_int_equal(ic.last.first_offset, 10000 + i);
        }
        assert_int_equal(db_int(path, "SELECT COUNT(*) FROM anomalies WHERE "
                                      "offset_lo = 21001 AND offset_hi = "
                                      "21005"),
                         1);
        memset(&ic, 0, sizeof(ic));
        assert_int_equal(ledger_id_find(rd, "orders", "run3", 4, -1, &seen,
                                        id_copy_cb, &ic, err, sizeof(err)),
                         1);
        assert_true(seen.in_window);
        assert_int_equal(seen.gen_closed, 0);
        assert_int_equal(seen.partition, 1);
        assert_int_equal(seen.offset, 30003);
        assert_int_equal(ic.last.partition, 0);
        assert_int_equal(ic.last.offset, 21004);
        assert_int_equal(ic.last.first_offset, 30003);
        /* Seen once: in the window, no copy. */
        assert_int_equal(ledger_id_find(rd, "orders", "new", 3, -1, &seen,
                                        id_copy_cb, &ic, err, sizeof(err)),
                         0);
        assert_true(seen.in_window);
        assert_int_equal(seen.offset, 21000);
        /* Never seen, or not in that topic's window. */
        assert_int_equal(ledger_id_find(rd, "orders", "i1000", 5, -1, &seen,
                                        id_copy_cb, &ic, err, sizeof(err)),
                         0);
        assert_false(seen.in_window);
        assert_int_equal(seen.offset, -1);
        assert_int_equal(ledger_id_find(rd, "pay\"ments", "i1", 2, -1, &seen,
                                        id_copy_cb, &ic, err, sizeof(err)),
                         0);
        assert_false(seen.in_window);
        assert_int_equal(seen.gens, 0);
        assert_string_equal(seen.dedup_key, "");
        ledger_close(rd);
}

/* How many "<gen>.ids" files the ledger at path has; check: each is as
 * long as its row says. */
static int ids_files(const char *path, int check)
{
        char dir[512], sql[128];
        struct dirent *de;
        struct stat sb;
        int n = 0;
        DIR *d;

        snprintf(dir, sizeof(dir), "%s-ids", path);
        d = opendir(dir);
        assert_non_null(d);
        while ((de = readdir(d))) {
                char f[1024];
                size_t len = strlen(de->d_name);
                if (len < 5 || strcmp(de->d_name + len - 4, ".ids"))
                        continue;
                n++;
                if (!check)
                        continue;
                snprintf(f, sizeof(f), "%s/%s", dir, de->d_name);
                assert_int_equal(stat(f, &sb), 0);
                snprintf(sql, sizeof(sql),
                         "SELECT file_bytes FROM msgid_gens WHERE gen = %lld",
                         strtoll(de->d_name, NULL, 10));
                assert_int_equal(db_int(path, sql), sb.st_size);
        }
        closedir(d);
        return n;
}

/* The full hash of each of "i0".."i{n-1}" whose low half is lo. */
static struct dedup_id full_id(uint64_t lo, int n)
{
        struct dedup_id h;
        char id[16];
        int i;

        for (i = 0; i < n; i++) {
                snprintf(id, sizeof(id), "i%d", i);
                dedup_id_hash(id, strlen(id), &h);
                if (h.lo == lo)
                        return h;
        }
        fail_msg("no id hashes to %016llx", (unsigned long long)lo);
        return h;
}

/* Rewrites the open generations' batches as wide blobs with whole
 * hashes. */
static void widen_batches(sqlite3 *db, int n)
{
        sqlite3_stmt *sel = NULL, *upd = NULL;
        struct {
                int64_t gen, seq;
                unsigned char *b;
                size_t len;
        } rows[64];
        size_t nrows = 0, r, i;

        assert_int_equal(sqlite3_prepare_v2(db,
                                            "SELECT gen, seq, entries FROM "
                                            "msgid_batches",
                                            -1, &sel, NULL),
                         SQLITE_OK);
        while (sqlite3_step(sel) == SQLITE_ROW) {
                struct ledger_entries v;
                assert_true(nrows < 64);
                assert_int_equal(ledger_entries_view(
                                     sqlite3_column_blob(sel, 2),
                                     (size_t)sqlite3_column_bytes(sel, 2), &v),
                                 0);
                assert_int_equal(v.size, LEDGER_ENTRY_NARROW);
                rows[nrows].gen = sqlite3_column_int64(sel, 0);
                rows[nrows].seq = sqlite3_column_int64(sel, 1);
                rows[nrows].len = ledger_entries_size(v.n, 0);
                rows[nrows].b = malloc(rows[nrows].len);
                assert_non_null(rows[nrows].b);
                for (i = 0; i < v.n; i++) {
                        struct dedup_id id;
                        int32_t part;
                        int64_t off;
                        ledger_entries_get(&v, i, &id, &part, &off);
                        id = full_id(id.lo, n);
                        ledger_entries_put(rows[nrows].b, 0, i, &id, part,
                                           off);
                }
                nrows++;
        }
        sqlite3_finalize(sel);
        assert_int_equal(sqlite3_prepare_v2(db,
                                            "UPDATE msgid_batches SET "
                                            "entries = ?1 WHERE gen = ?2 AND "
                                            "seq = ?3",
                                            -1, &upd, NULL),
                         SQLITE_OK);
        for (r = 0; r < nrows; r++) {
                sqlite3_bind_blob(upd, 1, rows[r].b, (int)rows[r].len,
                                  SQLITE_STATIC);
                sqlite3_bind_int64(upd, 2, rows[r].gen);
                sqlite3_bind_int64(upd, 3, rows[r].seq);
                assert_int_equal(sqlite3_step(upd), SQLITE_DONE);
                sqlite3_reset(upd);
                free(rows[r].b);
        }
        sqlite3_finalize(upd);
}

/* Moves each closed generation's file into wide chunks of 120 ids with
 * whole hashes, keyed by their first id, as builds before 0012 wrote
 * them. */
static void files_to_chunks(sqlite3 *db, const char *path, int n)
{
        sqlite3_stmt *sel = NULL, *put = NULL;
        char file[512];
        static unsigned char buf[1 << 16], chunk[120 * 32];

        assert_int_equal(sqlite3_prepare_v2(db,
                                            "SELECT gen, file_bytes FROM "
                                            "msgid_gens WHERE file_bytes IS "
                                            "NOT NULL",
                                            -1, &sel, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(db,
                                            "INSERT INTO msgid_chunks (gen, "
                                            "h1, h2, entries) VALUES (?1, "
                                            "?2, ?3, ?4)",
                                            -1, &put, NULL),
                         SQLITE_OK);
        while (sqlite3_step(sel) == SQLITE_ROW) {
                int64_t gen = sqlite3_column_int64(sel, 0);
                struct ledger_entries v;
                size_t len, i, k;
                FILE *f;
                snprintf(file, sizeof(file), "%s-ids/%lld.ids", path,
                         (long long)gen);
                f = fopen(file, "rb");
                assert_non_null(f);
                len = fread(buf, 1, sizeof(buf), f);
                fclose(f);
                assert_int_equal(len, sqlite3_column_int64(sel, 1));
                assert_int_equal(ledger_entries_view(buf, len, &v), 0);
                for (i = 0; i < v.n; i += k) {
                        struct dedup_id first = {0, 0};
                        k = v.n - i < 120 ? v.n - i : 120;
                        for (size_t j = 0; j < k; j++) {
                                struct dedup_id id;
                                int32_t part;
                                int64_t off;
                                ledger_entries_get(&v, i + j, &id, &part,
                                                   &off);
                                id = full_id(id.lo, n);
                                if (!j)
                                        first = id;
                                ledger_entries_put(chunk, 0, j, &id, part,
                                                   off);
                        }
                        sqlite3_bind_int64(put, 1, gen);
                        sqlite3_bind_int64(put, 2,
                                           (int64_t)(first.lo ^ LEDGER_SIGN));
                        sqlite3_bind_int64(put, 3,
                                           (int64_t)(first.hi ^ LEDGER_SIGN));
                        sqlite3_bind_blob(put, 4, chunk, (int)(k * 32),
                                          SQLITE_STATIC);
                        assert_int_equal(sqlite3_step(put), SQLITE_DONE);
                        sqlite3_reset(put);
                }
                assert_int_equal(unlink(file), 0);
        }
        sqlite3_finalize(sel);
        sqlite3_finalize(put);
        assert_int_equal(sqlite3_exec(db,
                                      "UPDATE msgid_gens SET file_bytes = "
                                      "NULL",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
}

/* Makes the ledger at path as a build before 0012 wrote it: closed
 * generations in chunks, every blob wide, with all 128 bits of each id
 * ("i0".."i{n-1}"). */
static void ledger_widen(const char *path, int n)
{
        sqlite3 *db = NULL;

        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        files_to_chunks(db, path, n);
        widen_batches(db, n);
        sqlite3_close(db);
}

/* Generations of 300 ids (4800 / 16): 1000 ids, some batches crossing a
 * generation's end, make three closed generations (sorted into narrow
 * chunks of 180 and 120) and an open one (in batches).  After a restart
 * every one of the 1000 is found again - closed ones through a chunk
 * lookup - with the offset of its first copy.  wide: the ledger is made
 * what an earlier build wrote (32-byte entries, all 128 bits) before the
 * restart, and read the same. */
static void id_windows_closed(struct fx *fx, int wide)
{
        char dir[512];
        struct ledger_part parts[NPARTS];
        struct ledger_anomaly_filter f = {.kind = "redelivered",
                                          .since_ms = -1,
                                          .limit = -1};
        struct dedup_tracker *tr;
        struct ledger *lg;
        char id[16], err[256];
        int i;

        tr = reload_window(fx->a, &lg, parts, 4800);
        dedup_tracker_begin(tr, 1000);
        observe_new_ids(lg, tr, parts, 0, 1000, 10000, 170);
        commit_ok(lg, tr, parts);
        assert_int_equal(
            db_int(fx->a, "SELECT COUNT(*) FROM msgid_gens WHERE closed"), 3);
        /* Closed: a narrow file each, none in chunks. */
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_chunks"),
                         0);
        assert_int_equal(db_int(fx->a, "SELECT SUM(file_bytes) FROM "
                                       "msgid_gens WHERE closed"),
                         3 + 900 * 22);
        assert_int_equal(ids_files(fx->a, 1), 3);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_batches"),
                         1);
        assert_int_equal(
            db_int(fx->a, "SELECT SUM(length(entries)) FROM msgid_batches"),
            1 + 100 * 22);
        assert_int_equal(
            db_int(fx->a, "SELECT COUNT(DISTINCT gen) FROM msgid_batches"), 1);
        dedup_tracker_free(tr);
        ledger_close(lg);
        if (wide) {
                ledger_widen(fx->a, 1000);
                assert_int_equal(ids_files(fx->a, 0), 0);
                assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM "
                                               "msgid_chunks"),
                                 9);
                assert_int_equal(db_int(fx->a, "SELECT SUM(length(entries)) "
                                               "FROM msgid_chunks"),
                                 900 * 32);
                assert_int_equal(db_int(fx->a, "SELECT SUM(length(entries)) "
                                               "FROM msgid_batches"),
                                 100 * 32);
        }

        tr = reload_window(fx->a, &lg, parts, 4800);
        dedup_tracker_begin(tr, 2000);
        for (i = 0; i < 1000; i++) {
                snprintf(id, sizeof(id), "i%d", i);
                assert_int_equal(observe_id(tr, parts, 0, 20000 + i, id),
                                 DEDUP_V_REDELIVERED);
        }
        assert_int_equal(observe_id(tr, parts, 0, 21000, "new"),
                         DEDUP_V_UNTRACKED);
        commit_ok(lg, tr, parts);
        for (i = 0; i < 1000; i += 37) {
                struct first_copy fc = {.offset = 20000 + i};
                if (ledger_anomalies_query(lg, &f, first_copy_cb, &fc, err,
                                           sizeof(err)))
                        fail_msg("ledger_anomalies_query: %s", err);
                assert_int_equal(fc.found, 1);
                assert_int_equal(fc.partition, i % 2);
                assert_int_equal(fc.first_offset, 10000 + i);
        }
        /* A run of five redelivered in a row, whose first copies are in a
         * row too: one anomaly. */
        for (i = 0; i < 5; i++) {
                snprintf(id, sizeof(id), "run%d", i);
                assert_int_equal(observe_id(tr, parts, 1, 30000 + i, id),
                                 DEDUP_V_UNTRACKED);
        }
        for (i = 0; i < 5; i++) {
                snprintf(id, sizeof(id), "run%d", i);
                assert_int_equal(observe_id(tr, parts, 0, 21001 + i, id),
                                 DEDUP_V_REDELIVERED);
        }
        commit_ok(lg, tr, parts);
        dedup_tracker_free(tr);
        ledger_close(lg);
        ids_find_check(fx->a);

        /* ledger_remove() takes the files and their directory too. */
        snprintf(dir, sizeof(dir), "%s-ids", fx->a);
        assert_true(wide || ids_files(fx->a, 0) > 0);
        ledger_remove(fx->a);
        assert_int_equal(access(fx->a, F_OK), -1);
        assert_int_equal(access(dir, F_OK), -1);
}

static void test_id_windows_closed(void **state)
{
        id_windows_closed(*state, 0);
}

static void test_id_windows_wide(void **state)
{
        id_windows_closed(*state, 1);
}

/* Opens path's windows, expecting the load to fail; the one-line reason
 * in err. */
static void windows_refused(const char *path, char *err, size_t err_size)
{
        struct ledger_part parts[NPARTS];
        struct dedup_tracker *tr;
        struct ledger *lg;

        tr = reload(path, &lg, parts);
        assert_int_equal(windows_load(lg, tr, parts, "msgid", err, err_size),
                         -1);
        assert_null(strchr(err, '\n'));
        dedup_tracker_free(tr);
        ledger_close(lg);
}

/* Offsets from 2^48 do not fit narrow: their blobs are wide, and found
 * again after a restart with their offsets whole.  A blob in neither
 * format stops the load with a one-line reason. */
static void test_id_windows_far(void **state)
{
        const int64_t base = (int64_t)1 << 48;
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct ledger_anomaly_filter f = {.kind = "redelivered",
                                          .since_ms = -1,
                                          .limit = -1};
        struct dedup_tracker *tr;
        struct ledger *lg;
        char id[16], err[256];
        int i;

        tr = reload_window(fx->a, &lg, parts, 4800);
        dedup_tracker_begin(tr, 1000);
        observe_new_ids(lg, tr, parts, 0, 400, base, 0);
        commit_ok(lg, tr, parts);
        dedup_tracker_free(tr);
        ledger_close(lg);
        /* 300 closed (a wide file), 100 open. */
        assert_int_equal(db_int(fx->a, "SELECT SUM(file_bytes) FROM "
                                       "msgid_gens"),
                         300 * 32);
        assert_int_equal(ids_files(fx->a, 1), 1);
        assert_int_equal(db_int(fx->a, "SELECT SUM(length(entries)) FROM "
                                       "msgid_batches"),
                         100 * 32);

        tr = reload_window(fx->a, &lg, parts, 4800);
        dedup_tracker_begin(tr, 2000);
        for (i = 0; i < 400; i++) {
                snprintf(id, sizeof(id), "i%d", i);
                assert_int_equal(observe_id(tr, parts, 0, 1000 + i, id),
                                 DEDUP_V_REDELIVERED);
        }
        commit_ok(lg, tr, parts);
        for (i = 0; i < 400; i += 23) {
                struct first_copy fc = {.offset = 1000 + i};
                if (ledger_anomalies_query(lg, &f, first_copy_cb, &fc, err,
                                           sizeof(err)))
                        fail_msg("ledger_anomalies_query: %s", err);
                assert_int_equal(fc.found, 1);
                assert_int_equal(fc.partition, i % 2);
                assert_true(fc.first_offset == base + i);
        }
        dedup_tracker_free(tr);
        ledger_close(lg);

        db_exec(fx->a, "UPDATE msgid_batches SET entries = x'0201'");
        windows_refused(fx->a, err, sizeof(err));
        assert_non_null(strstr(err, "in neither packed format"));
}

/* A topic recreated: its state is retired in one transaction, the
 * evidence kept and tagged, the other topic untouched; the fingerprint
 * goes round the ledger with the offsets. */
static void test_topic_incarnation(void **state)
{
        static const struct rec log[] = {
            {1, 0, 0, P1, 0, 0}, {1, 0, 1, P1, 0, 1},
            {1, 0, 2, P1, 0, 1}, /* a duplicate: incarnation 0 */
            {1, 1, 0, P1, 0, 0}, {1, 2, 0, P1, 0, 0},
        };
        const struct fingerprint fp = {2, 77, 0x8000000000000005ULL, 6};
        const struct ledger_incarnation_part why = {0, "recreated", 3,
                                                    2, 0,           NULL};
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct ledger_summary sum;
        struct dedup_tracker *tr;
        struct ledger *lg, *rd = NULL;
        struct seen s;
        int64_t inc = -1;
        char err[256];

        tr = reload(fx->a, &lg, parts);
        windows_ok(lg, tr, parts, "msgid");
        audit(tr, parts, log, 5, 1, 1000);
        assert_int_equal(observe_id(tr, parts, 0, 3, "m1"), DEDUP_V_UNTRACKED);
        assert_int_equal(observe_id(tr, parts, 2, 1, "m1"), DEDUP_V_UNTRACKED);
        parts[0].fp = fp;
        parts[1].fp.offset = parts[1].fp.ts_ms = -1;
        parts[2].fp = fp;
        parts[2].fp.offset = 1;
        commit_ok(lg, tr, parts);
        dedup_tracker_free(tr);
        ledger_close(lg);

        /* The fingerprint comes back with the offsets. */
        tr = reload(fx->a, &lg, parts);
        assert_int_equal(parts[0].next_offset, 4);
        assert_int_equal(parts[0].fp.offset, 2);
        assert_int_equal(parts[0].fp.ts_ms, 77);
        assert_true(parts[0].fp.lo == fp.lo && parts[0].fp.hi == fp.hi);
        assert_int_equal(parts[1].fp.offset, -1);
        assert_int_equal(parts[2].fp.offset, 1);
        assert_int_equal(ledger_topic_incarnation(lg, "orders", &inc, err,
                                                  sizeof(err)),
                         0);
        assert_int_equal(inc, 0);

        assert_int_equal(ledger_topic_incarnate(lg, "orders", &why, 1, &inc,
                                                err, sizeof(err)),
                         0);
        assert_int_equal(inc, 1);
        /* State of orders gone, evidence kept, pay"ments untouched. */
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM partitions "
                                       "WHERE topic = 'orders'"),
                         0);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM pairs WHERE "
                                       "topic = 'orders'"),
                         0);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_gens "
                                       "WHERE topic = 'orders'"),
                         0);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_batches "
                                       "WHERE gen NOT IN (SELECT gen FROM "
                                       "msgid_gens)"),
                         0);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM partitions "
                                       "WHERE topic = 'pay\"ments'"),
                         1);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM pairs WHERE "
                                       "topic = 'pay\"ments'"),
                         1);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_gens "
                                       "WHERE topic = 'pay\"ments'"),
                         1);
        assert_int_equal(db_int(fx->a, "SELECT SUM(records) FROM "
                                       "retired_partitions WHERE topic = "
                                       "'orders' AND incarnation = 0"),
                         5);
        assert_int_equal(db_int(fx->a, "SELECT SUM(duplicate) FROM "
                                       "retired_partitions"),
                         1);
        memset(&s, 0, sizeof(s));
        assert_int_equal(ledger_anomalies_foreach(lg, "orders", -1, seen_cb,
                                                  &s, err, sizeof(err)),
                         0);
        assert_int_equal(s.n, 2);
        assert_string_equal(s.kind[0], "coverage"); /* newest first */
        assert_int_equal(s.a[0].incarnation, 1);
        assert_int_equal(s.a[0].offset_lo, 0);
        assert_int_equal(s.a[0].offset_hi, 2);
        assert_int_equal(s.a[0].first_offset, 2);
        assert_int_equal(s.a[0].count, 3);
        assert_null(s.a[0].producer);
        assert_string_equal(s.kind[1], "duplicate");
        assert_int_equal(s.a[1].incarnation, 0);
        assert_null(s.a[1].reason);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM anomalies WHERE "
                                       "reason = 'recreated'"),
                         1);
        assert_int_equal(ledger_summary(lg, "orders", &sum, err, sizeof(err)),
                         0);
        assert_int_equal(sum.records, 0);
        assert_int_equal(sum.anomalies[DEDUP_KIND_DUPLICATE], 0);
        assert_int_equal(sum.coverage_gaps, 1);
        assert_int_equal(sum.coverage_records, 0);
        assert_int_equal(sum.pairs, 0);
        assert_int_equal(ledger_summary(lg, "pay\"ments", &sum, err,
                                        sizeof(err)),
                         0);
        assert_int_equal(sum.records, 2); /* one with an id only */
        assert_int_equal(sum.coverage_gaps, 0);
        dedup_tracker_free(tr);
        ledger_close(lg);

        /* Loaded again: orders starts from nothing, its old ids unknown;
         * pay"ments keeps its own. */
        tr = reload(fx->a, &lg, parts);
        windows_ok(lg, tr, parts, "msgid");
        assert_int_equal(parts[0].next_offset, -1);
        assert_int_equal(parts[1].next_offset, -1);
        assert_int_equal(parts[2].next_offset, 2);
        dedup_tracker_begin(tr, 2000);
        /* seq 0 again: a first record, not a duplicate */
        assert_int_equal(observe(tr, &log[0]), DEDUP_V_OK);
        assert_int_equal(observe_id(tr, parts, 0, 1, "m1"), DEDUP_V_UNTRACKED);
        assert_int_equal(observe_id(tr, parts, 2, 2, "m1"),
                         DEDUP_V_REDELIVERED);
        commit_ok(lg, tr, parts);

        /* A second time: the count goes on, only the current
         * incarnation's opening rows count as coverage. */
        assert_int_equal(ledger_topic_incarnate(lg, "orders", &why, 1, &inc,
                                                err, sizeof(err)),
                         0);
        assert_int_equal(inc, 2);
        assert_int_equal(ledger_summary(lg, "orders", &sum, err, sizeof(err)),
                         0);
        assert_int_equal(sum.coverage_gaps, 1);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM anomalies WHERE "
                                       "kind = 'coverage'"),
                         2);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM "
                                       "retired_partitions WHERE incarnation "
                                       "= 1"),
                         1);
        dedup_tracker_free(tr);
        ledger_close(lg);

        /* A reader cannot. */
        if (ledger_open_reader(&rd, fx->a, err, sizeof(err)))
                fail_msg("ledger_open_reader: %s", err);
        assert_int_equal(ledger_topic_incarnate(rd, "orders", &why, 1, &inc,
                                                err, sizeof(err)),
                         -1);
        ledger_close(rd);
}

/*
 * Closed generations' files: gone with their generation once its drop is
 * committed; a file no row names (a crash between a file and its commit)
 * removed at the next load, other files left alone; one of the wrong
 * length refused with its path; a retired topic's removed with it.
 */
static void test_id_files(void **state)
{
        const struct ledger_incarnation_part why = {0, "recreated", 3,
                                                    2, 0,           NULL};
        struct fx *fx = *state;
        struct ledger_part parts[NPARTS];
        struct dedup_tracker *tr;
        struct ledger *lg;
        char id[16], err[1024], leftover[512], other[512], file[512];
        static unsigned char saved[4096];
        int64_t inc = -1, gen, bytes;
        FILE *f;
        int i;

        /* A window of 160 ids: generations of 10, 16 live; 400 ids make
         * 40, the last open and 15 closed ones live. */
        tr = reload_window(fx->a, &lg, parts, 160);
        dedup_tracker_begin(tr, 1000);
        observe_new_ids(lg, tr, parts, 0, 400, 100, 25);
        commit_ok(lg, tr, parts);
        /* In the same run: found in the file just written. */
        assert_int_equal(observe_id(tr, parts, 1, 900, "i300"),
                         DEDUP_V_REDELIVERED);
        commit_ok(lg, tr, parts);
        dedup_tracker_free(tr);
        ledger_close(lg);
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM msgid_gens "
                                       "WHERE file_bytes IS NOT NULL"),
                         15);
        assert_int_equal(ids_files(fx->a, 1), 15);

        snprintf(leftover, sizeof(leftover), "%s-ids/999999.ids", fx->a);
        snprintf(other, sizeof(other), "%s-ids/notes.txt", fx->a);
        for (i = 0; i < 2; i++) {
                f = fopen(i ? other : leftover, "w");
                assert_non_null(f);
                fputs("x", f);
                fclose(f);
        }
        tr = reload_window(fx->a, &lg, parts, 160);
        assert_int_equal(access(leftover, F_OK), -1);
        assert_int_equal(access(other, F_OK), 0);
        assert_int_equal(unlink(other), 0);
        assert_int_equal(ids_files(fx->a, 1), 15);
        /* Ids 240..399 are in the live generations, 240..389 in files. */
        dedup_tracker_begin(tr, 2000);
        for (i = 240; i < 400; i++) {
                snprintf(id, sizeof(id), "i%d", i);
                assert_int_equal(observe_id(tr, parts, 0, 1000 + i, id),
                                 DEDUP_V_REDELIVERED);
        }
        commit_ok(lg, tr, parts);
        dedup_tracker_free(tr);
        ledger_close(lg);

        gen = db_int(fx->a, "SELECT MIN(gen) FROM msgid_gens WHERE "
                            "file_bytes IS NOT NULL");
        bytes = db_int(fx->a, "SELECT file_bytes FROM msgid_gens WHERE gen = "
                              "(SELECT MIN(gen) FROM msgid_gens WHERE "
                              "file_bytes IS NOT NULL)");
        snprintf(file, sizeof(file), "%s-ids/%lld.ids", fx->a, (long long)gen);
        f = fopen(file, "rb");
        assert_non_null(f);
        assert_true(bytes <= (int64_t)sizeof(saved));
        assert_int_equal(fread(saved, 1, sizeof(saved), f), bytes);
        fclose(f);
        assert_int_equal(truncate(file, bytes - 1), 0);
        windows_refused(fx->a, err, sizeof(err));
        assert_non_null(strstr(err, file));
        assert_non_null(strstr(err, "the ledger says"));
        assert_int_equal(unlink(file), 0);
        windows_refused(fx->a, err, sizeof(err));
        assert_non_null(strstr(err, file));
        assert_non_null(strstr(err, "No such file"));

        /* Whole again. */
        f = fopen(file, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(saved, 1, (size_t)bytes, f), bytes);
        fclose(f);
        tr = reload_window(fx->a, &lg, parts, 160);
        assert_int_equal(ledger_topic_incarnate(lg, "orders", &why, 1, &inc,
                                                err, sizeof(err)),
                         0);
        assert_int_equal(ids_files(fx->a, 0), 0);
        dedup_tracker_free(tr);
        ledger_close(lg);
}

/*
 * The topic's id (schema/0017_topic_id.sql), kept per incarnation: none
 * in a new ledger, the one stored read back after a reopen, replaced
 * for the same incarnation, and a new incarnation starting with none
 * while the old one's stays as evidence; the coverage row of that
 * incarnation carries the detail that named the two ids.
 */
static void test_topic_id(void **state)
{
        struct fx *fx = *state;
        struct ledger *lg = open_ok(fx->a);
        struct ledger_incarnation_part why = {
            0,
            "recreated",
            10,
            9,
            0,
            "{\"how\":\"topic id\",\"topic_id\":\"B\",\"topic_id_was\":\"A\"}"};
        char id[LEDGER_TOPIC_ID_MAX], err[256];
        int64_t inc = -1;

        assert_int_equal(ledger_topic_id_get(lg, "orders", id, sizeof(id), err,
                                             sizeof(err)),
                         0);
        assert_int_equal(ledger_topic_id_put(lg, "orders",
                                             "AAAAAAAAAAAAAAAAAAAAAQ", 5, err,
                                             sizeof(err)),
                         0);
        assert_int_equal(ledger_topic_id_put(lg, "payments",
                                             "AAAAAAAAAAAAAAAAAAAAAg", 5, err,
                                             sizeof(err)),
                         0);
        ledger_close(lg);

        lg = open_ok(fx->a);
        assert_int_equal(ledger_topic_id_get(lg, "orders", id, sizeof(id), err,
                                             sizeof(err)),
                         1);
        assert_string_equal(id, "AAAAAAAAAAAAAAAAAAAAAQ");
        /* Too small a buffer is an error, not a cut id. */
        assert_int_equal(ledger_topic_id_get(lg, "orders", id, 22, err,
                                             sizeof(err)),
                         -1);
        /* The same one again keeps when it was first seen. */
        assert_int_equal(ledger_topic_id_put(lg, "orders",
                                             "AAAAAAAAAAAAAAAAAAAAAQ", 6, err,
                                             sizeof(err)),
                         0);
        assert_int_equal(db_int(fx->a, "SELECT seen_ms FROM topic_ids WHERE "
                                       "topic = 'orders'"),
                         5);
        assert_int_equal(ledger_topic_incarnate(lg, "orders", &why, 1, &inc,
                                                err, sizeof(err)),
                         0);
        assert_int_equal(inc, 1);
        /* Incarnation 1 has no id yet; 0 keeps its own. */
        assert_int_equal(ledger_topic_id_get(lg, "orders", id, sizeof(id), err,
                                             sizeof(err)),
                         0);
        assert_int_equal(ledger_topic_id_put(lg, "orders",
                                             "AAAAAAAAAAAAAAAAAAAAAw", 7, err,
                                             sizeof(err)),
                         0);
        assert_int_equal(ledger_topic_id_get(lg, "orders", id, sizeof(id), err,
                                             sizeof(err)),
                         1);
        assert_string_equal(id, "AAAAAAAAAAAAAAAAAAAAAw");
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM topic_ids WHERE "
                                       "topic = 'orders' AND incarnation = 0 "
                                       "AND topic_id = "
                                       "'AAAAAAAAAAAAAAAAAAAAAQ'"),
                         1);
        assert_int_equal(db_int(fx->a, "SELECT seen_ms FROM topic_ids WHERE "
                                       "topic = 'orders' AND incarnation = 1"),
                         7);
        /* Another topic's untouched. */
        assert_int_equal(ledger_topic_id_get(lg, "payments", id, sizeof(id),
                                             err, sizeof(err)),
                         1);
        assert_string_equal(id, "AAAAAAAAAAAAAAAAAAAAAg");
        assert_int_equal(db_int(fx->a, "SELECT COUNT(*) FROM anomalies WHERE "
                                       "kind = 'coverage' AND "
                                       "json_extract(detail, '$.topic_id') = "
                                       "'B' AND json_extract(detail, "
                                       "'$.topic_id_was') = 'A'"),
                         1);
        ledger_close(lg);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
        const struct CMUnitTest tests[] = {
            T(test_id_windows),      T(test_id_windows_closed),
            T(test_id_windows_wide), T(test_id_windows_far),
            T(test_id_files),        T(test_topic_incarnation),
            T(test_topic_id),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
