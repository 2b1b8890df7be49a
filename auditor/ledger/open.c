/*
 * open.c - opening a ledger (process lock, WAL, migrations, the
 * writer's prepared statements) and closing it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <sys/file.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "internal.h"

/* Generated from schema/NNNN_*.sql by schema/embed.sh: migration i moves
 * a ledger from user_version i to i + 1. */
extern const char *const ledger_migrations[];
extern const size_t ledger_migrations_cnt;

/* Readers (HTTP threads) and the checkpointer may hold the database for a
 * moment; wait rather than fail. */
#define LEDGER_BUSY_TIMEOUT_MS 5000

/* A writer refuses to start with less free space than this on the
 * ledger's filesystem: its first commit would fail seconds later. */
#define LEDGER_MIN_FREE_BYTES (128 * 1024)

/* The text of each enum ledger_stmt, prepared once by ledger_open(). */
static const char *const ledger_stmt_sql[LEDGER_ST__CNT] = {
    [LEDGER_ST_BEGIN] = "BEGIN IMMEDIATE",
    [LEDGER_ST_COMMIT] = "COMMIT",
    [LEDGER_ST_ROLLBACK] = "ROLLBACK",
    /* The counter columns follow enum dedup_kind. */
    [LEDGER_ST_PART_PUT] =
        "INSERT OR REPLACE INTO partitions (topic, partition, "
        "next_offset, from_log_start, " LEDGER_COUNT_COLS ", "
        "updated_ms, fp_offset, fp_ts, fp_lo, fp_hi) VALUES (?1, ?2, "
        "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
        "?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)",
    /* A pair is inserted if new, else updated (not INSERT OR
         * REPLACE): sqlite3_changes() of the insert says which, for the
         * counts of schema/0005_counts.sql (counts.c). */
    [LEDGER_ST_PAIR_PUT] =
        "INSERT INTO pairs (topic, partition, producer, "
        "epoch, last_seq, last_offset, last_ms, records, rebaseline, "
        "run0_seq, run0_offset, run0_len, run1_seq, run1_offset, "
        "run1_len, pid, retired_pid0, retired_pid1, session_ms) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
        "?13, ?14, ?15, ?16, ?17, ?18, ?19) ON CONFLICT DO NOTHING",
    [LEDGER_ST_PAIR_SET] =
        "UPDATE pairs SET epoch = ?4, last_seq = ?5, "
        "last_offset = ?6, last_ms = ?7, records = ?8, "
        "rebaseline = ?9, run0_seq = ?10, run0_offset = ?11, "
        "run0_len = ?12, run1_seq = ?13, run1_offset = ?14, "
        "run1_len = ?15, pid = ?16, retired_pid0 = ?17, "
        "retired_pid1 = ?18, session_ms = ?19 WHERE topic = ?1 AND "
        "partition = ?2 AND "
        "producer = ?3",
    [LEDGER_ST_CTP_ADD] =
        "INSERT INTO counts_topic_producer (topic, producer, pairs) "
        "VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
    [LEDGER_ST_CTP_INC] =
        "UPDATE counts_topic_producer SET pairs = pairs + ?3 "
        "WHERE topic = ?1 AND producer = ?2",
    [LEDGER_ST_CTP_DEL] =
        "DELETE FROM counts_topic_producer WHERE topic = ?1 AND "
        "producer = ?2 AND pairs = ?3",
    [LEDGER_ST_CP_ADD] = "INSERT INTO counts_producer (producer, topics) "
                         "VALUES (?1, ?2) ON CONFLICT DO NOTHING",
    [LEDGER_ST_CP_INC] = "UPDATE counts_producer SET topics = topics + ?2 "
                         "WHERE producer = ?1",
    [LEDGER_ST_CP_DEL] = "DELETE FROM counts_producer WHERE producer = "
                         "?1 AND topics = ?2",
    [LEDGER_ST_COUNTS_PUT] =
        "INSERT INTO counts_topic (topic, pairs, producers, "
        "open_gaps, coverage_gaps, coverage_records) VALUES (?1, ?2, "
        "?3, ?4, ?5, ?6) ON CONFLICT (topic) DO UPDATE SET "
        "pairs = pairs + excluded.pairs, "
        "producers = producers + excluded.producers, "
        "open_gaps = open_gaps + excluded.open_gaps, "
        "coverage_gaps = coverage_gaps + excluded.coverage_gaps, "
        "coverage_records = min(coverage_records + "
        "excluded.coverage_records, 9223372036854775807)",
    [LEDGER_ST_COUNTS_ALL] =
        "UPDATE counts_all SET producers = producers + ?1",
    [LEDGER_ST_PAIR_DEL] = "DELETE FROM pairs WHERE topic = ?1 AND "
                           "partition = ?2 AND producer = ?3",
    [LEDGER_ST_GAPS_DEL] = "DELETE FROM open_gaps WHERE topic = ?1 AND "
                           "partition = ?2 AND producer = ?3",
    [LEDGER_ST_GAP_PUT] =
        "INSERT INTO open_gaps (topic, partition, producer, ord, "
        "epoch, lo, hi, opened_offset, opened_ms, opened_rec) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [LEDGER_ST_DONE_DEL] = "DELETE FROM confirmed_gaps WHERE topic = ?1 "
                           "AND partition = ?2 AND producer = ?3",
    [LEDGER_ST_DONE_PUT] =
        "INSERT INTO confirmed_gaps (topic, partition, producer, ord, "
        "epoch, lo, hi, opened_offset, opened_ms, unknown) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [LEDGER_ST_ANOMALY_PUT] =
        "INSERT INTO anomalies (topic, partition, producer, kind, "
        "epoch, seq_lo, seq_hi, offset_lo, offset_hi, first_offset, "
        "count, detected_ms, malformed_bits, first_partition, "
        "first_offset_hi, msgid, msgid_len, incarnation, reason) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
        "?13, ?14, ?15, ?16, ?17, (SELECT COALESCE(MAX(incarnation), "
        "0) FROM incarnations WHERE topic = ?1), ?18)",
    /* A coverage gap already stored (same start) is not stored again,
         * nor is its anomaly row. */
    [LEDGER_ST_COVERAGE_PUT] =
        "INSERT INTO coverage_gaps (topic, partition, offset_lo, "
        "offset_hi, detected_ms) VALUES (?1, ?2, ?3, ?4, ?5) "
        "ON CONFLICT DO NOTHING",
    [LEDGER_ST_BATCH_PUT] = "INSERT INTO msgid_batches (gen, seq, "
                            "entries) VALUES (?1, ?2, ?3)",
    [LEDGER_ST_CHUNK_GET] =
        "SELECT entries FROM msgid_chunks WHERE gen = ?1 AND "
        "(h1, h2) <= (?2, ?3) ORDER BY h1 DESC, h2 DESC LIMIT 1",
    /* An upsert, not a replace: file_bytes stays. */
    [LEDGER_ST_GEN_PUT] =
        "INSERT INTO msgid_gens (gen, topic, dedup_key, first_ms, "
        "last_ms, ids, closed) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
        "ON CONFLICT (gen) DO UPDATE SET topic = excluded.topic, "
        "dedup_key = excluded.dedup_key, first_ms = "
        "excluded.first_ms, last_ms = excluded.last_ms, ids = "
        "excluded.ids, closed = excluded.closed",
    [LEDGER_ST_GEN_FILE] =
        "UPDATE msgid_gens SET file_bytes = ?2 WHERE gen = ?1",
    [LEDGER_ST_GEN_BATCHES_DEL] = "DELETE FROM msgid_batches WHERE gen = ?1",
    [LEDGER_ST_GEN_CHUNKS_DEL] = "DELETE FROM msgid_chunks WHERE gen = ?1",
    [LEDGER_ST_GEN_DEL] = "DELETE FROM msgid_gens WHERE gen = ?1",
    [LEDGER_ST_FLOW_PUT] =
        "INSERT OR REPLACE INTO flow_entries (seq, id_lo, id_hi, "
        "outcome, live, src_topic, src_partition, src_offset, src_ts, "
        "copies, sink_topic, sink_partition, sink_offset, "
        "sink_topic_last, sink_partition_last, sink_offset_last, "
        "sink_ts, born, due, latency_done, id, id_len, prior) VALUES "
        "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
        "?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)",
    [LEDGER_ST_FLOW_DEL] = "DELETE FROM flow_entries WHERE seq = ?1",
    [LEDGER_ST_FLOW_STATE] =
        "INSERT OR REPLACE INTO flow_state (one, state, expect, "
        "source_records, delivered, lost, duplicated, duplicate_copies, "
        "pending, awaiting, unexpected, source_repeats, source_no_id, "
        "sink_no_id, sink_records, live, lat_count, lat_p50_ms, "
        "lat_p99_ms, lat_max_ms, updated_ms) VALUES (1, ?1, ?2, ?3, ?4, "
        "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
        "?18, ?19, ?20)",
    /* Transactions (txn.c), keyed by (producer, epoch, txn). */
    [LEDGER_ST_TXN_PUT] =
        "INSERT OR REPLACE INTO txn_pending (producer, epoch, txn, "
        "state, manifest_topic, manifest_partition, manifest_offset, "
        "opened_ms, parts) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
        "?9)",
    [LEDGER_ST_TXN_DEL] = "DELETE FROM txn_pending WHERE producer = ?1 "
                          "AND epoch = ?2 AND txn = ?3",
    [LEDGER_ST_TSTREAM_PUT] =
        "INSERT OR REPLACE INTO topic_streams (topic, producer, epoch, "
        "floor, base, next, last_ms, records, state) VALUES (?1, ?2, "
        "?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    [LEDGER_ST_TSTREAM_DEL] = "DELETE FROM topic_streams WHERE topic = ?1 "
                              "AND producer = ?2 AND epoch = ?3",
};

/*
 * Reads the schema version into *out and refuses a ledger newer than this
 * binary or, when exact, one not fully migrated either.
 */
static int ledger_version_check(struct ledger *lg, const char *path, int exact,
                                size_t *out, char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        int64_t version;
        int rc = -1;

        if (ledger_query_row(lg, "PRAGMA user_version",
                             "cannot read ledger schema version", &st, errstr,
                             errstr_size))
                goto out;
        version = sqlite3_column_int64(st, 0);
        if (version < 0 || (uint64_t)version > ledger_migrations_cnt) {
                snprintf(errstr, errstr_size,
                         "ledger %s: schema version %lld is newer than this "
                         "eosaudit (%zu)",
                         path, (long long)version, ledger_migrations_cnt);
                goto out;
        }
        if (exact && (uint64_t)version < ledger_migrations_cnt) {
                snprintf(errstr, errstr_size,
                         "ledger %s: schema version %lld is older than this "
                         "eosaudit (%zu) and must be migrated by the auditor "
                         "first",
                         path, (long long)version, ledger_migrations_cnt);
                goto out;
        }
        *out = (size_t)version;
        rc = 0;
out:
        sqlite3_finalize(st);
        return rc;
}

/* The pid written into the lock file by its holder, or -1. */
static long ledger_lock_owner(int fd)
{
        char buf[32];
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
        char *end;
        long pid;

        if (n <= 0)
                return -1;
        buf[n] = '\0';
        errno = 0;
        pid = strtol(buf, &end, 10);
        if (errno || end == buf || (*end && *end != '\n') || pid <= 0)
                return -1;
        return pid;
}

/*
 * Takes the process lock: an flock() on "<path>-lock", held for the life of
 * the handle and released by the kernel however the process ends.  The file
 * is never removed: unlinking a lock file races with a process that has just
 * opened it.
 */
static int ledger_lock(struct ledger *lg, const char *path, char *errstr,
                       size_t errstr_size)
{
        size_t len = strlen(path) + sizeof("-lock");
        char *lpath = malloc(len);
        char pidbuf[32];
        int fd = -1, n, rc = -1;
        long owner;

        if (!lpath) {
                snprintf(errstr, errstr_size, "cannot lock ledger %s: %s",
                         path, strerror(ENOMEM));
                goto out;
        }
        snprintf(lpath, len, "%s-lock", path);
        fd = open(lpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) {
                snprintf(errstr, errstr_size, "cannot open lock file %s: %s",
                         lpath, strerror(errno));
                goto out;
        }
        if (flock(fd, LOCK_EX | LOCK_NB)) {
                if (errno != EWOULDBLOCK) {
                        snprintf(errstr, errstr_size, "cannot lock %s: %s",
                                 lpath, strerror(errno));
                        goto out;
                }
                owner = ledger_lock_owner(fd);
                if (owner > 0)
                        snprintf(errstr, errstr_size,
                                 "ledger %s is in use by another eosaudit "
                                 "process (pid %ld)",
                                 path, owner);
                else
                        snprintf(errstr, errstr_size,
                                 "ledger %s is in use by another eosaudit "
                                 "process (pid unknown)",
                                 path);
                goto out;
        }
        n = snprintf(pidbuf, sizeof(pidbuf), "%ld\n", (long)getpid());
        if (n < 0 || (size_t)n >= sizeof(pidbuf) || ftruncate(fd, 0) ||
            pwrite(fd, pidbuf, (size_t)n, 0) != n) {
                snprintf(errstr, errstr_size, "cannot write pid to %s: %s",
                         lpath, strerror(errno));
                goto out;
        }
        lg->lock_fd = fd;
        fd = -1;
        rc = 0;
out:
        if (fd >= 0)
                close(fd);
        free(lpath);
        return rc;
}

static int ledger_db_open(struct ledger *lg, const char *path, int flags,
                          char *errstr, size_t errstr_size)
{
        /* A handle is used by one thread at a time (see ledger.h). */
        if (sqlite3_open_v2(path, &lg->db, flags | SQLITE_OPEN_NOMUTEX,
                            NULL) != SQLITE_OK) {
                if (lg->db)
                        snprintf(errstr, errstr_size,
                                 "cannot open ledger %s: %s", path,
                                 sqlite3_errmsg(lg->db));
                else
                        snprintf(errstr, errstr_size,
                                 "cannot open ledger %s: out of memory", path);
                return -1;
        }
        if (sqlite3_busy_timeout(lg->db, LEDGER_BUSY_TIMEOUT_MS) !=
            SQLITE_OK) {
                ledger_err(lg, "cannot set ledger busy timeout", errstr,
                           errstr_size);
                return -1;
        }
        return 0;
}

/*
 * WAL lets HTTP readers work while the consumer commits.  With WAL,
 * synchronous=NORMAL syncs only at checkpoints, not at every COMMIT: a
 * committed transaction is in the WAL file (the kernel's page cache) once
 * COMMIT returns, so it survives a crash or kill of the process.  A power
 * loss or kernel crash may roll back the last few commits, never corrupt
 * the database; since each batch's offsets are in the same transaction as
 * its counts, that only means those records are audited again.
 */
static int ledger_pragmas(struct ledger *lg, const char *path, char *errstr,
                          size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        const unsigned char *mode;
        int rc = -1;

        if (ledger_query_row(lg, "PRAGMA journal_mode = WAL",
                             "cannot set ledger journal mode", &st, errstr,
                             errstr_size))
                goto out;
        mode = sqlite3_column_text(st, 0);
        if (!mode || strcmp((const char *)mode, "wal") != 0) {
                snprintf(errstr, errstr_size,
                         "cannot use WAL for ledger %s: journal mode is %s",
                         path, mode ? (const char *)mode : "unknown");
                goto out;
        }
        if (ledger_exec(lg, "PRAGMA synchronous = NORMAL",
                        "cannot set ledger synchronous mode", errstr,
                        errstr_size))
                goto out;
        /*
         * A commit of 100,000 ids dirties about 8 MB (the batch's ids, a
         * closed generation's sorted chunks, the deleted batches): with
         * SQLite's default 2 MB cache it spilled pages into the WAL
         * mid-transaction and read overflow chains back from the file
         * to delete them.  And a checkpoint every 1,000 pages (4 MB)
         * copied each commit's pages to the database, pages the next
         * commits freed and rewrote; every 8,192 pages (32 MB), a page
         * is copied once for several commits.  A 16 MB cache (its most
         * RSS) did as well as 32 MB; together about a sixth less CPU in
         * the commit (BENCHMARKS.md, section 1).  Durability is
         * unchanged: a commit is in the WAL when COMMIT returns.
         */
        if (ledger_exec(lg, "PRAGMA cache_size = -16384",
                        "cannot set ledger cache size", errstr, errstr_size) ||
            ledger_exec(lg, "PRAGMA wal_autocheckpoint = 8192",
                        "cannot set ledger checkpoint interval", errstr,
                        errstr_size) ||
            /* Debian builds SQLite with SECURE_DELETE on: every page
             * freed (each closed generation's batches, each dropped
             * generation's chunks: most of what a long scan writes) was
             * written again as zeros.  What the ledger deletes (id
             * hashes; a recreated topic's old state) is nothing to scrub
             * from a file the operator owns anyway; off, a 5M-record
             * scan's commits took a fifth less time (BENCHMARKS.md,
             * section 1). */
            ledger_exec(lg, "PRAGMA secure_delete = OFF",
                        "cannot set ledger secure_delete", errstr,
                        errstr_size))
                goto out;
        rc = 0;
out:
        sqlite3_finalize(st);
        return rc;
}

/* Applies the missing migrations, each in its own transaction. */
static int ledger_migrate(struct ledger *lg, const char *path, char *errstr,
                          size_t errstr_size)
{
        char sql[64], what[96];
        size_t i;

        if (ledger_version_check(lg, path, 0, &i, errstr, errstr_size))
                return -1;
        for (; i < ledger_migrations_cnt; i++) {
                snprintf(what, sizeof(what),
                         "cannot apply ledger migration %zu", i + 1);
                snprintf(sql, sizeof(sql), "PRAGMA user_version = %zu", i + 1);
                if (ledger_exec(lg, "BEGIN IMMEDIATE", what, errstr,
                                errstr_size) ||
                    ledger_exec(lg, ledger_migrations[i], what, errstr,
                                errstr_size) ||
                    ledger_exec(lg, sql, what, errstr, errstr_size) ||
                    ledger_exec(lg, "COMMIT", what, errstr, errstr_size)) {
                        ledger_rollback(lg);
                        return -1;
                }
        }
        return 0;
}

/*
 * Whether the writer can write at all, before anything is created next to
 * the ledger (SQLite would make its -wal and -shm files with the ledger's
 * permissions, 0444 ones for a read-only ledger, and the failure would
 * show only at the first commit): the ledger file itself when it exists,
 * its directory, and some free space there.
 */
static int ledger_writable(const char *path, char *errstr, size_t errstr_size)
{
        char *copy = strdup(path), *dir;
        struct statvfs vfs;
        int fd, rc = -1;

        if (!copy) {
                snprintf(errstr, errstr_size, "cannot open ledger %s: %s",
                         path, strerror(ENOMEM));
                return -1;
        }
        dir = dirname(copy);
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0 && errno != ENOENT) {
                snprintf(errstr, errstr_size, "ledger %s is not writable: %s",
                         path, strerror(errno));
                goto out;
        }
        if (fd >= 0)
                close(fd);
        if (access(dir, W_OK | X_OK)) {
                snprintf(errstr, errstr_size,
                         "ledger %s: cannot write in its directory %s: %s",
                         path, dir, strerror(errno));
                goto out;
        }
        if (!statvfs(dir, &vfs) &&
            (uint64_t)vfs.f_bavail * vfs.f_frsize < LEDGER_MIN_FREE_BYTES) {
                snprintf(errstr, errstr_size,
                         "ledger %s: its filesystem is full (%llu KiB free; "
                         "at least %d KiB are needed to start)",
                         path,
                         (unsigned long long)((uint64_t)vfs.f_bavail *
                                              vfs.f_frsize / 1024),
                         LEDGER_MIN_FREE_BYTES / 1024);
                goto out;
        }
        rc = 0;
out:
        free(copy);
        return rc;
}

/* The writer: lock first, as no two processes may migrate or write at
 * once; then WAL, the migrations and the commit path's statements.  A
 * ledger that cannot be written fails here, at once, never at its first
 * commit. */
static int ledger_writer_init(struct ledger *lg, const char *path,
                              char *errstr, size_t errstr_size)
{
        int i;

        if (ledger_writable(path, errstr, errstr_size) ||
            ledger_lock(lg, path, errstr, errstr_size) ||
            ledger_db_open(lg, path,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, errstr,
                           errstr_size))
                return -1;
        /* SQLite falls back to read-only where it may not write (a
         * read-only mount, a file it cannot open for writing). */
        if (sqlite3_db_readonly(lg->db, "main") == 1) {
                snprintf(errstr, errstr_size, "ledger %s is read-only", path);
                return -1;
        }
        if (ledger_pragmas(lg, path, errstr, errstr_size) ||
            ledger_migrate(lg, path, errstr, errstr_size))
                return -1;
        for (i = 0; i < LEDGER_ST__CNT; i++) {
                if (sqlite3_prepare_v3(lg->db, ledger_stmt_sql[i], -1,
                                       SQLITE_PREPARE_PERSISTENT, &lg->st[i],
                                       NULL) != SQLITE_OK) {
                        ledger_err(lg, "cannot prepare ledger statement",
                                   errstr, errstr_size);
                        return -1;
                }
        }
        return 0;
}

/* A reader: no lock, no migrations, and a ledger fully migrated. */
static int ledger_reader_init(struct ledger *lg, const char *path,
                              char *errstr, size_t errstr_size)
{
        size_t version;

        if (ledger_db_open(lg, path, SQLITE_OPEN_READONLY, errstr,
                           errstr_size) ||
            ledger_version_check(lg, path, 1, &version, errstr, errstr_size))
                return -1;
        return 0;
}

static int ledger_open_as(struct ledger **out, const char *path, int readonly,
                          char *errstr, size_t errstr_size)
{
        struct ledger *lg = calloc(1, sizeof(*lg));
        int rc = -1;

        if (!lg) {
                snprintf(errstr, errstr_size, "cannot open ledger %s: %s",
                         path, strerror(ENOMEM));
                goto out;
        }
        lg->lock_fd = -1;
        lg->readonly = readonly;
        if ((readonly ? ledger_reader_init(lg, path, errstr, errstr_size)
                      : ledger_writer_init(lg, path, errstr, errstr_size)) ||
            ledger_idfiles_init(lg, path, errstr, errstr_size))
                goto out;
        *out = lg;
        lg = NULL;
        rc = 0;
out:
        ledger_close(lg);
        return rc;
}

int ledger_open(struct ledger **out, const char *path, char *errstr,
                size_t errstr_size)
{
        return ledger_open_as(out, path, 0, errstr, errstr_size);
}

int ledger_open_reader(struct ledger **out, const char *path, char *errstr,
                       size_t errstr_size)
{
        return ledger_open_as(out, path, 1, errstr, errstr_size);
}

void ledger_close(struct ledger *lg)
{
        int i;

        if (!lg)
                return;
        ledger_windows_free(lg);
        ledger_idfiles_free(lg);
        ledger_trunc_free(lg);
        ledger_flow_store_free(lg);
        free(lg->ids_dir);
        for (i = 0; i < LEDGER_ST__CNT; i++)
                sqlite3_finalize(lg->st[i]);
        /* Close (and checkpoint) before the lock goes, so that the next
         * owner finds the database at rest. */
        sqlite3_close(lg->db);
        if (lg->lock_fd >= 0)
                close(lg->lock_fd);
        free(lg);
}

void ledger_commit_hook_set(struct ledger *lg, ledger_commit_hook *hook,
                            void *opaque)
{
        lg->hook = hook;
        lg->hook_opaque = opaque;
}
