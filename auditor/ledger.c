/*
 * ledger.c - the durable audit ledger on SQLite (see ledger.h and
 * schema/0001_init.sql).
 *
 * Values the engine marks unknown with -1 (epoch, seq, first offset) are
 * stored as NULL in anomalies; counters are stored clamped to INT64_MAX,
 * the largest SQLite integer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "../base/clock.h"
#include "ledger.h"

/* Generated from schema/NNNN_*.sql by schema/embed.sh: migration i moves
 * a ledger from user_version i to i + 1. */
extern const char *const ledger_migrations[];
extern const size_t ledger_migrations_cnt;

/* Readers (HTTP threads) and the checkpointer may hold the database for a
 * moment; wait rather than fail. */
#define LEDGER_BUSY_TIMEOUT_MS 5000

_Static_assert(DEDUP_HISTORY_RUNS == 2,
               "pairs has columns for two runs: add a migration");
_Static_assert(DEDUP_KIND__ANOMALY_CNT == 6,
               "partitions has one counter per anomaly kind: add a migration");

/* The counter columns of partitions, in the order ledger_counts_get()
 * reads them: anomaly kinds in enum dedup_kind order. */
#define LEDGER_COUNT_COLS                                                     \
        "records, untracked, duplicate, gap, out_of_order, fenced, "          \
        "malformed, redelivered, missing, ids"
#define LEDGER_COUNT_NCOLS (DEDUP_KIND__ANOMALY_CNT + 4)

/* Statements of the commit path, prepared once per writer handle. */
enum ledger_stmt {
        LEDGER_ST_BEGIN,
        LEDGER_ST_COMMIT,
        LEDGER_ST_ROLLBACK,
        LEDGER_ST_PART_PUT,
        LEDGER_ST_PAIR_PUT,
        LEDGER_ST_PAIR_DEL,
        LEDGER_ST_GAPS_DEL,
        LEDGER_ST_GAP_PUT,
        LEDGER_ST_ANOMALY_PUT,
        LEDGER_ST_COVERAGE_PUT,
        LEDGER_ST_BATCH_PUT,
        LEDGER_ST_CHUNK_PUT,
        LEDGER_ST_CHUNK_GET,
        LEDGER_ST_GEN_PUT,
        LEDGER_ST_GEN_BATCHES_DEL,
        LEDGER_ST_GEN_CHUNKS_DEL,
        LEDGER_ST_GEN_DEL,
        LEDGER_ST__CNT
};

static const char *const ledger_stmt_sql[LEDGER_ST__CNT] = {
        [LEDGER_ST_BEGIN] = "BEGIN IMMEDIATE",
        [LEDGER_ST_COMMIT] = "COMMIT",
        [LEDGER_ST_ROLLBACK] = "ROLLBACK",
        /* The counter columns follow enum dedup_kind. */
        [LEDGER_ST_PART_PUT] =
                "INSERT OR REPLACE INTO partitions (topic, partition, "
                "next_offset, from_log_start, " LEDGER_COUNT_COLS ", "
                "updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                "?10, ?11, ?12, ?13, ?14, ?15)",
        [LEDGER_ST_PAIR_PUT] =
                "INSERT OR REPLACE INTO pairs (topic, partition, producer, "
                "epoch, last_seq, last_offset, last_ms, records, rebaseline, "
                "run0_seq, run0_offset, run0_len, run1_seq, run1_offset, "
                "run1_len) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                "?11, ?12, ?13, ?14, ?15)",
        [LEDGER_ST_PAIR_DEL] = "DELETE FROM pairs WHERE topic = ?1 AND "
                               "partition = ?2 AND producer = ?3",
        [LEDGER_ST_GAPS_DEL] = "DELETE FROM open_gaps WHERE topic = ?1 AND "
                               "partition = ?2 AND producer = ?3",
        [LEDGER_ST_GAP_PUT] =
                "INSERT INTO open_gaps (topic, partition, producer, ord, "
                "epoch, lo, hi, opened_offset, opened_ms, opened_rec) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        [LEDGER_ST_ANOMALY_PUT] =
                "INSERT INTO anomalies (topic, partition, producer, kind, "
                "epoch, seq_lo, seq_hi, offset_lo, offset_hi, first_offset, "
                "count, detected_ms, malformed_bits, first_partition, "
                "first_offset_hi, msgid, msgid_len) VALUES (?1, ?2, ?3, ?4, "
                "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        /* A coverage gap already stored (same start) is not stored again,
         * nor is its anomaly row. */
        [LEDGER_ST_COVERAGE_PUT] =
                "INSERT INTO coverage_gaps (topic, partition, offset_lo, "
                "offset_hi, detected_ms) VALUES (?1, ?2, ?3, ?4, ?5) "
                "ON CONFLICT DO NOTHING",
        [LEDGER_ST_BATCH_PUT] = "INSERT INTO msgid_batches (gen, seq, "
                                "entries) VALUES (?1, ?2, ?3)",
        [LEDGER_ST_CHUNK_PUT] = "INSERT INTO msgid_chunks (gen, h1, h2, "
                                "entries) VALUES (?1, ?2, ?3, ?4)",
        [LEDGER_ST_CHUNK_GET] =
                "SELECT entries FROM msgid_chunks WHERE gen = ?1 AND "
                "(h1, h2) <= (?2, ?3) ORDER BY h1 DESC, h2 DESC LIMIT 1",
        [LEDGER_ST_GEN_PUT] =
                "INSERT OR REPLACE INTO msgid_gens (gen, topic, dedup_key, "
                "first_ms, last_ms, ids, closed) VALUES (?1, ?2, ?3, ?4, "
                "?5, ?6, ?7)",
        [LEDGER_ST_GEN_BATCHES_DEL] =
                "DELETE FROM msgid_batches WHERE gen = ?1",
        [LEDGER_ST_GEN_CHUNKS_DEL] = "DELETE FROM msgid_chunks WHERE gen = ?1",
        [LEDGER_ST_GEN_DEL] = "DELETE FROM msgid_gens WHERE gen = ?1",
};

/* What the ledger knows of one id window (ledger_windows_load). */
struct ledger_window {
        const char *topic;  /* borrowed */
        uint32_t *part_of;  /* partition -> part + 1, 0 = not audited */
        size_t npart_of;
};

struct ledger {
        sqlite3 *db;
        int lock_fd; /* holds the flock; -1 for a reader */
        int readonly;
        sqlite3_stmt *st[LEDGER_ST__CNT]; /* writer only */
        ledger_commit_hook *hook;
        void *hook_opaque;
        /* Id windows, by the tracker's window index. */
        struct ledger_window *win;
        uint32_t nwin;
        char *dedup_key;
        int64_t batch_seq;      /* last msgid_batches.seq written */
        unsigned char *ebuf;    /* packed entries being written */
        size_t ebuf_cap;
        int lookup_failed; /* a lookup failed: say why at commit */
        char lookup_err[256];
};

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/* "what: sqlite's message" */
static void ledger_err(struct ledger *lg, const char *what, char *errstr,
                       size_t errstr_size)
{
        snprintf(errstr, errstr_size, "%s: %s", what, sqlite3_errmsg(lg->db));
}

static int64_t ledger_u64_put(uint64_t v)
{
        return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static uint64_t ledger_u64_get(sqlite3_stmt *st, int col)
{
        int64_t v = sqlite3_column_int64(st, col);

        return v < 0 ? 0 : (uint64_t)v;
}

static uint64_t ledger_sat_add(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Reads the counter columns records, untracked, one per anomaly kind (in
 * enum dedup_kind order) and missing, starting at column col. */
static void ledger_counts_get(sqlite3_stmt *st, int col,
                              struct dedup_counts *c)
{
        int k;

        c->records = ledger_u64_get(st, col);
        c->untracked = ledger_u64_get(st, col + 1);
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                c->anomalies[k] = ledger_u64_get(st, col + 2 + k);
        c->missing = ledger_u64_get(st, col + 2 + DEDUP_KIND__ANOMALY_CNT);
        c->ids = ledger_u64_get(st, col + 3 + DEDUP_KIND__ANOMALY_CNT);
}

/* Adds the counters of c to sum, saturating. */
static void ledger_counts_add(struct dedup_counts *sum,
                              const struct dedup_counts *c)
{
        int k;

        sum->records = ledger_sat_add(sum->records, c->records);
        sum->untracked = ledger_sat_add(sum->untracked, c->untracked);
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                sum->anomalies[k] =
                        ledger_sat_add(sum->anomalies[k], c->anomalies[k]);
        sum->missing = ledger_sat_add(sum->missing, c->missing);
        sum->ids = ledger_sat_add(sum->ids, c->ids);
}

/* Binds v, or NULL when it is negative (the engine's "unknown"). */
static int ledger_bind_opt(sqlite3_stmt *st, int i, int64_t v)
{
        return v < 0 ? sqlite3_bind_null(st, i) : sqlite3_bind_int64(st, i, v);
}

/* Reads a column written by ledger_bind_opt(). */
static int64_t ledger_col_opt(sqlite3_stmt *st, int col)
{
        if (sqlite3_column_type(st, col) == SQLITE_NULL)
                return -1;
        return sqlite3_column_int64(st, col);
}

/* Binds ?1 topic, ?2 partition and, when producer is non-NULL,
 * ?3 producer (bytes, not necessarily UTF-8). */
static int ledger_bind_key(sqlite3_stmt *st, const struct ledger_part *p,
                           const char *producer, size_t producer_len)
{
        int rc;

        rc = sqlite3_bind_text(st, 1, p->topic, -1, SQLITE_STATIC);
        rc |= sqlite3_bind_int64(st, 2, p->partition);
        if (producer)
                rc |= sqlite3_bind_text(st, 3, producer, (int)producer_len,
                                        SQLITE_STATIC);
        return rc;
}

/*
 * Runs a bound write statement to completion and resets it.  brc is the
 * OR of the bind results (SQLITE_OK is 0).
 */
static int ledger_step_done(struct ledger *lg, sqlite3_stmt *st, int brc,
                            const char *what, char *errstr,
                            size_t errstr_size)
{
        int rc = -1;

        if (brc != SQLITE_OK) {
                ledger_err(lg, what, errstr, errstr_size);
                goto out;
        }
        if (sqlite3_step(st) != SQLITE_DONE) {
                ledger_err(lg, what, errstr, errstr_size);
                goto out;
        }
        rc = 0;
out:
        sqlite3_reset(st);
        return rc;
}

/* Runs SQL without results (possibly several statements). */
static int ledger_exec(struct ledger *lg, const char *sql, const char *what,
                       char *errstr, size_t errstr_size)
{
        if (sqlite3_exec(lg->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
                ledger_err(lg, what, errstr, errstr_size);
                return -1;
        }
        return 0;
}

/* Ends a failed transaction, if one is open; errors are already said. */
static void ledger_rollback(struct ledger *lg)
{
        if (!sqlite3_get_autocommit(lg->db))
                sqlite3_exec(lg->db, "ROLLBACK", NULL, NULL, NULL);
}

static int ledger_prepare(struct ledger *lg, const char *sql,
                          sqlite3_stmt **st, char *errstr, size_t errstr_size)
{
        if (sqlite3_prepare_v2(lg->db, sql, -1, st, NULL) != SQLITE_OK) {
                ledger_err(lg, "cannot prepare ledger query", errstr,
                           errstr_size);
                return -1;
        }
        return 0;
}

/* Prepares sql and steps to its first row; the caller finalizes *st. */
static int ledger_query_row(struct ledger *lg, const char *sql,
                            const char *what, sqlite3_stmt **st,
                            char *errstr, size_t errstr_size)
{
        if (sqlite3_prepare_v2(lg->db, sql, -1, st, NULL) != SQLITE_OK ||
            sqlite3_step(*st) != SQLITE_ROW) {
                ledger_err(lg, what, errstr, errstr_size);
                return -1;
        }
        return 0;
}

/*
 * Reads the schema version into *out and refuses a ledger newer than this
 * binary or, when exact, one not fully migrated either.
 */
static int ledger_version_check(struct ledger *lg, const char *path,
                                int exact, size_t *out, char *errstr,
                                size_t errstr_size)
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

/* ------------------------------------------------------------------ */
/* Open and close                                                      */
/* ------------------------------------------------------------------ */

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

static struct ledger *ledger_new(const char *path, char *errstr,
                                 size_t errstr_size)
{
        struct ledger *lg = calloc(1, sizeof(*lg));

        if (!lg) {
                snprintf(errstr, errstr_size, "cannot open ledger %s: %s",
                         path, strerror(ENOMEM));
                return NULL;
        }
        lg->lock_fd = -1;
        return lg;
}

int ledger_open(struct ledger **out, const char *path, char *errstr,
                size_t errstr_size)
{
        struct ledger *lg = ledger_new(path, errstr, errstr_size);
        int i, rc = -1;

        if (!lg)
                goto out;
        /* Lock first: no two processes may migrate or write at once. */
        if (ledger_lock(lg, path, errstr, errstr_size) ||
            ledger_db_open(lg, path,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, errstr,
                           errstr_size) ||
            ledger_pragmas(lg, path, errstr, errstr_size) ||
            ledger_migrate(lg, path, errstr, errstr_size))
                goto out;
        for (i = 0; i < LEDGER_ST__CNT; i++) {
                if (sqlite3_prepare_v3(lg->db, ledger_stmt_sql[i], -1,
                                       SQLITE_PREPARE_PERSISTENT, &lg->st[i],
                                       NULL) != SQLITE_OK) {
                        ledger_err(lg, "cannot prepare ledger statement",
                                   errstr, errstr_size);
                        goto out;
                }
        }
        *out = lg;
        lg = NULL;
        rc = 0;
out:
        ledger_close(lg);
        return rc;
}

int ledger_open_reader(struct ledger **out, const char *path, char *errstr,
                       size_t errstr_size)
{
        struct ledger *lg = ledger_new(path, errstr, errstr_size);
        size_t version;
        int rc = -1;

        if (!lg)
                goto out;
        lg->readonly = 1;
        if (ledger_db_open(lg, path, SQLITE_OPEN_READONLY, errstr,
                           errstr_size) ||
            ledger_version_check(lg, path, 1, &version, errstr, errstr_size))
                goto out;
        *out = lg;
        lg = NULL;
        rc = 0;
out:
        ledger_close(lg);
        return rc;
}

static void ledger_windows_free(struct ledger *lg)
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

void ledger_close(struct ledger *lg)
{
        int i;

        if (!lg)
                return;
        ledger_windows_free(lg);
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

/* parts[i].part must be i: events and pairs name parts by that index. */
static int ledger_parts_check(const struct ledger_part *parts, size_t nparts,
                              char *errstr, size_t errstr_size)
{
        size_t i;

        for (i = 0; i < nparts; i++) {
                if (parts[i].part != i || !parts[i].topic) {
                        snprintf(errstr, errstr_size,
                                 "bad ledger part %zu: part %u, topic %s", i,
                                 parts[i].part,
                                 parts[i].topic ? parts[i].topic : "(null)");
                        return -1;
                }
        }
        return 0;
}

/* ------------------------------------------------------------------ */
/* Load                                                                */
/* ------------------------------------------------------------------ */

/* Reads the open gaps of the pair in pv, oldest first, into *gaps. */
static int ledger_gaps_load(struct ledger *lg, sqlite3_stmt *st,
                            const struct ledger_part *p,
                            struct dedup_pair_view *pv,
                            struct dedup_gap **gaps, size_t *cap,
                            char *errstr, size_t errstr_size)
{
        size_t n = 0;
        int src, rc = -1;

        if (ledger_bind_key(st, p, pv->producer, pv->producer_len) !=
            SQLITE_OK) {
                ledger_err(lg, "cannot read ledger open gaps", errstr,
                           errstr_size);
                goto out;
        }
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
                struct dedup_gap *g;
                int64_t epoch = sqlite3_column_int64(st, 0);
                if (n == *cap) {
                        size_t ncap = *cap ? *cap * 2 : 16;
                        struct dedup_gap *ng =
                                realloc(*gaps, ncap * sizeof(*ng));
                        if (!ng) {
                                snprintf(errstr, errstr_size,
                                         "cannot read ledger open gaps: %s",
                                         strerror(ENOMEM));
                                goto out;
                        }
                        *gaps = ng;
                        *cap = ncap;
                }
                if (epoch < 0 || epoch > DEDUP_EPOCH_MAX) {
                        snprintf(errstr, errstr_size,
                                 "bad open gap in ledger for %s [%d]: epoch "
                                 "%lld",
                                 p->topic, (int)p->partition,
                                 (long long)epoch);
                        goto out;
                }
                g = &(*gaps)[n++];
                g->epoch = (int32_t)epoch;
                g->lo = sqlite3_column_int64(st, 1);
                g->hi = sqlite3_column_int64(st, 2);
                g->opened_offset = sqlite3_column_int64(st, 3);
                g->opened_ms = sqlite3_column_int64(st, 4);
                g->opened_rec = ledger_u64_get(st, 5);
        }
        if (src != SQLITE_DONE) {
                ledger_err(lg, "cannot read ledger open gaps", errstr,
                           errstr_size);
                goto out;
        }
        if (n > UINT32_MAX) {
                snprintf(errstr, errstr_size,
                         "too many open gaps in ledger for %s [%d]", p->topic,
                         (int)p->partition);
                goto out;
        }
        pv->gaps = *gaps;
        pv->ngaps = (uint32_t)n;
        rc = 0;
out:
        sqlite3_reset(st);
        return rc;
}

/* Restores every pair of part p (with its gaps) into tr. */
static int ledger_pairs_load(struct ledger *lg, struct dedup_tracker *tr,
                             sqlite3_stmt *pair_st, sqlite3_stmt *gap_st,
                             const struct ledger_part *p,
                             struct dedup_gap **gaps, size_t *gaps_cap,
                             char *errstr, size_t errstr_size)
{
        struct dedup_pair_view pv;
        int src, i, rc = -1;

        if (ledger_bind_key(pair_st, p, NULL, 0) != SQLITE_OK) {
                ledger_err(lg, "cannot read ledger pairs", errstr,
                           errstr_size);
                goto out;
        }
        while ((src = sqlite3_step(pair_st)) == SQLITE_ROW) {
                int64_t epoch = sqlite3_column_int64(pair_st, 1);
                memset(&pv, 0, sizeof(pv));
                pv.part = p->part;
                pv.producer = (const char *)sqlite3_column_text(pair_st, 0);
                pv.producer_len = (size_t)sqlite3_column_bytes(pair_st, 0);
                pv.epoch = (int32_t)epoch;
                pv.last_seq = sqlite3_column_int64(pair_st, 2);
                pv.last_offset = sqlite3_column_int64(pair_st, 3);
                pv.last_ms = sqlite3_column_int64(pair_st, 4);
                pv.records = ledger_u64_get(pair_st, 5);
                pv.rebaseline = sqlite3_column_int64(pair_st, 6) != 0;
                for (i = 0; i < DEDUP_HISTORY_RUNS; i++) {
                        int64_t len =
                                sqlite3_column_int64(pair_st, 9 + 3 * i);
                        pv.runs[i].seq =
                                sqlite3_column_int64(pair_st, 7 + 3 * i);
                        pv.runs[i].offset =
                                sqlite3_column_int64(pair_st, 8 + 3 * i);
                        pv.runs[i].len = len < 0 || len > UINT32_MAX
                                                 ? 0
                                                 : (uint32_t)len;
                }
                if (!pv.producer || epoch < 0 || epoch > DEDUP_EPOCH_MAX) {
                        snprintf(errstr, errstr_size,
                                 "bad pair in ledger for %s [%d]", p->topic,
                                 (int)p->partition);
                        goto out;
                }
                if (ledger_gaps_load(lg, gap_st, p, &pv, gaps, gaps_cap,
                                     errstr, errstr_size))
                        goto out;
                if (dedup_tracker_restore(tr, &pv)) {
                        snprintf(errstr, errstr_size,
                                 "cannot restore a pair of %s [%d] from the "
                                 "ledger: invalid state or out of memory",
                                 p->topic, (int)p->partition);
                        goto out;
                }
        }
        if (src != SQLITE_DONE) {
                ledger_err(lg, "cannot read ledger pairs", errstr,
                           errstr_size);
                goto out;
        }
        rc = 0;
out:
        sqlite3_reset(pair_st);
        return rc;
}

/* Loads part p's offsets and counters (if stored), then its pairs. */
static int ledger_part_load(struct ledger *lg, struct dedup_tracker *tr,
                            sqlite3_stmt *part_st, struct ledger_part *p,
                            char *errstr, size_t errstr_size)
{
        struct dedup_counts *c;
        int src, rc = -1;

        if (ledger_bind_key(part_st, p, NULL, 0) != SQLITE_OK) {
                ledger_err(lg, "cannot read ledger partitions", errstr,
                           errstr_size);
                goto out;
        }
        src = sqlite3_step(part_st);
        if (src == SQLITE_DONE) {
                rc = 0; /* never audited */
                goto out;
        }
        if (src != SQLITE_ROW) {
                ledger_err(lg, "cannot read ledger partitions", errstr,
                           errstr_size);
                goto out;
        }
        p->next_offset = sqlite3_column_int64(part_st, 0);
        p->from_log_start = sqlite3_column_int64(part_st, 1) != 0;
        if (dedup_tracker_part_add(tr, p->part, p->from_log_start) ||
            !(c = dedup_tracker_part_counts(tr, p->part))) {
                snprintf(errstr, errstr_size,
                         "cannot add %s [%d] to the tracker: %s", p->topic,
                         (int)p->partition, strerror(ENOMEM));
                goto out;
        }
        ledger_counts_get(part_st, 2, c);
        rc = 0;
out:
        sqlite3_reset(part_st);
        return rc;
}

int ledger_load(struct ledger *lg, struct dedup_tracker *tr,
                struct ledger_part *parts, size_t nparts, char *errstr,
                size_t errstr_size)
{
        sqlite3_stmt *part_st = NULL, *pair_st = NULL, *gap_st = NULL;
        struct dedup_gap *gaps = NULL;
        size_t gaps_cap = 0, i;
        int rc = -1;

        if (ledger_parts_check(parts, nparts, errstr, errstr_size) ||
            ledger_prepare(lg,
                           "SELECT next_offset, from_log_start, "
                           LEDGER_COUNT_COLS " FROM partitions "
                           "WHERE topic = ?1 AND partition = ?2",
                           &part_st, errstr, errstr_size) ||
            ledger_prepare(lg,
                           "SELECT producer, epoch, last_seq, last_offset, "
                           "last_ms, records, rebaseline, run0_seq, "
                           "run0_offset, run0_len, run1_seq, run1_offset, "
                           "run1_len FROM pairs "
                           "WHERE topic = ?1 AND partition = ?2",
                           &pair_st, errstr, errstr_size) ||
            ledger_prepare(lg,
                           "SELECT epoch, lo, hi, opened_offset, opened_ms, "
                           "opened_rec FROM open_gaps WHERE topic = ?1 AND "
                           "partition = ?2 AND producer = ?3 ORDER BY ord",
                           &gap_st, errstr, errstr_size))
                goto out;
        /* One snapshot for all parts. */
        if (ledger_exec(lg, "BEGIN", "cannot read ledger", errstr,
                        errstr_size))
                goto out;
        for (i = 0; i < nparts; i++) {
                if (ledger_part_load(lg, tr, part_st, &parts[i], errstr,
                                     errstr_size) ||
                    ledger_pairs_load(lg, tr, pair_st, gap_st, &parts[i],
                                      &gaps, &gaps_cap, errstr, errstr_size))
                        goto out;
        }
        if (ledger_exec(lg, "COMMIT", "cannot read ledger", errstr,
                        errstr_size))
                goto out;
        rc = 0;
out:
        ledger_rollback(lg);
        sqlite3_finalize(part_st);
        sqlite3_finalize(pair_st);
        sqlite3_finalize(gap_st);
        free(gaps);
        return rc;
}

/* ------------------------------------------------------------------ */
/* Id windows                                                          */
/* ------------------------------------------------------------------ */

static int ledger_txn(struct ledger *lg, enum ledger_stmt which,
                      const char *what, char *errstr, size_t errstr_size);
static int ledger_gen_del(struct ledger *lg, uint64_t gen, char *errstr,
                          size_t errstr_size);

/* Packed ids (see schema/0002_msgids.sql): 32 bytes, little-endian. */
#define LEDGER_ENTRY 32
#define LEDGER_CHUNK_IDS 120 /* 3840 bytes: one page, no overflow */
#define LEDGER_SIGN ((uint64_t)1 << 63)

static void ledger_le_put(unsigned char *p, uint64_t v, int n)
{
        int i;

        for (i = 0; i < n; i++)
                p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t ledger_le_get(const unsigned char *p, int n)
{
        uint64_t v = 0;
        int i;

        for (i = 0; i < n; i++)
                v |= (uint64_t)p[i] << (8 * i);
        return v;
}

static void ledger_entry_put(unsigned char *p, const struct dedup_id *id,
                             int32_t partition, int64_t offset)
{
        ledger_le_put(p, id->lo, 8);
        ledger_le_put(p + 8, id->hi, 8);
        ledger_le_put(p + 16, (uint32_t)partition, 4);
        ledger_le_put(p + 20, 0, 4);
        ledger_le_put(p + 24, (uint64_t)offset, 8);
}

static void ledger_entry_get(const unsigned char *p, struct dedup_id *id,
                             int32_t *partition, int64_t *offset)
{
        id->lo = ledger_le_get(p, 8);
        id->hi = ledger_le_get(p + 8, 8);
        *partition = (int32_t)(uint32_t)ledger_le_get(p + 16, 4);
        *offset = (int64_t)ledger_le_get(p + 24, 8);
}

/* Makes room for n packed entries in lg->ebuf. */
static int ledger_ebuf(struct ledger *lg, size_t n)
{
        unsigned char *b;

        if (n > (size_t)INT32_MAX / LEDGER_ENTRY)
                return -1;
        if (n * LEDGER_ENTRY <= lg->ebuf_cap)
                return 0;
        b = realloc(lg->ebuf, n * LEDGER_ENTRY);
        if (!b)
                return -1;
        lg->ebuf = b;
        lg->ebuf_cap = n * LEDGER_ENTRY;
        return 0;
}

/* The part of partition in window w, or UINT32_MAX (not audited now). */
static uint32_t ledger_part_of(const struct ledger_window *w,
                               int32_t partition)
{
        if (partition >= 0 && (size_t)partition < w->npart_of &&
            w->part_of[partition])
                return w->part_of[partition] - 1;
        return UINT32_MAX;
}

/* dedup_id_lookup_cb: is id in the closed generation gen?  One chunk read
 * and a binary search in it.  On the writer handle, so it sees what this
 * process committed. */
static int ledger_id_lookup(void *opaque, uint32_t window, uint64_t gen,
                            const struct dedup_id *id, uint32_t *part,
                            int64_t *offset)
{
        struct ledger *lg = opaque;
        sqlite3_stmt *st = lg->st[LEDGER_ST_CHUNK_GET];
        const unsigned char *e;
        size_t lo = 0, hi;
        int brc, src, rc = -1;

        if (window >= lg->nwin)
                goto out;
        brc = sqlite3_bind_int64(st, 1, (int64_t)gen);
        brc |= sqlite3_bind_int64(st, 2, (int64_t)(id->lo ^ LEDGER_SIGN));
        brc |= sqlite3_bind_int64(st, 3, (int64_t)(id->hi ^ LEDGER_SIGN));
        if (brc != SQLITE_OK)
                goto out;
        src = sqlite3_step(st);
        if (src == SQLITE_DONE) {
                rc = 0;
                goto out;
        }
        if (src != SQLITE_ROW)
                goto out;
        e = sqlite3_column_blob(st, 0);
        hi = (size_t)sqlite3_column_bytes(st, 0) / LEDGER_ENTRY;
        rc = 0;
        while (e && lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                struct dedup_id x;
                int32_t partition;
                int64_t off;
                ledger_entry_get(e + mid * LEDGER_ENTRY, &x, &partition, &off);
                if (x.lo == id->lo && x.hi == id->hi) {
                        *part = ledger_part_of(&lg->win[window], partition);
                        *offset = *part == UINT32_MAX ? -1 : off;
                        rc = 1;
                        break;
                }
                if (x.lo < id->lo || (x.lo == id->lo && x.hi < id->hi))
                        lo = mid + 1;
                else
                        hi = mid;
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
                              sqlite3_stmt *st, uint32_t window,
                              uint64_t gen, int closed)
{
        const struct ledger_window *w = &lg->win[window];
        int src;

        if (sqlite3_bind_int64(st, 1, (int64_t)gen) != SQLITE_OK)
                return -1;
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
                const unsigned char *e = sqlite3_column_blob(st, 0);
                size_t n = (size_t)sqlite3_column_bytes(st, 0) / LEDGER_ENTRY;
                size_t i;
                for (i = 0; e && i < n; i++) {
                        struct dedup_id_row r = {.gen = gen, .window = window};
                        int32_t partition;
                        ledger_entry_get(e + i * LEDGER_ENTRY, &r.id,
                                         &partition, &r.offset);
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
        sqlite3_reset(st);
        return src == SQLITE_DONE ? 0 : -1;
}

/* Restores the generations of window (topic) and their ids into tr. */
static int ledger_window_load(struct ledger *lg, struct dedup_tracker *tr,
                              sqlite3_stmt *gen_st, sqlite3_stmt *batch_st,
                              sqlite3_stmt *chunk_st, uint32_t window,
                              char *errstr, size_t errstr_size)
{
        static const char *const what = "cannot read ledger id windows";
        struct dedup_gen_view *gens = NULL;
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
                        struct dedup_gen_view *n =
                                realloc(gens, ncap * sizeof(*n));
                        if (!n) {
                                snprintf(errstr, errstr_size, "%s: %s", what,
                                         strerror(ENOMEM));
                                goto out;
                        }
                        gens = n;
                        cap = ncap;
                }
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
                /* Ids of an open generation sit in batches; a generation
                 * closed in memory and never persisted so too. */
                if (ledger_ids_restore(lg, tr,
                                       gens[i].closed ? chunk_st : batch_st,
                                       window, gens[i].gen, gens[i].closed)) {
                        ledger_err(lg, what, errstr, errstr_size);
                        goto out;
                }
        }
        rc = 0;
out:
        sqlite3_reset(gen_st);
        free(gens);
        return rc;
}

int ledger_windows_load(struct ledger *lg, struct dedup_tracker *tr,
                        const char *const *topics, const uint32_t *windows,
                        size_t ntopics, const struct ledger_part *parts,
                        size_t nparts, const char *dedup_key, char *errstr,
                        size_t errstr_size)
{
        sqlite3_stmt *gen_st = NULL, *batch_st = NULL, *chunk_st = NULL;
        sqlite3_stmt *stale_st = NULL, *seq_st = NULL;
        size_t i;
        int rc = -1;

        ledger_windows_free(lg);
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
                           "SELECT gen FROM msgid_gens WHERE topic = ?1 AND "
                           "dedup_key <> ?2",
                           &stale_st, errstr, errstr_size) ||
            ledger_prepare(lg,
                           "SELECT gen, first_ms, last_ms, ids, closed FROM "
                           "msgid_gens WHERE topic = ?1 ORDER BY gen",
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
                int src;
                /* Ids made from another identity mean nothing now. */
                if (sqlite3_bind_text(stale_st, 1, topics[i], -1,
                                      SQLITE_STATIC) != SQLITE_OK ||
                    sqlite3_bind_text(stale_st, 2, dedup_key, -1,
                                      SQLITE_STATIC) != SQLITE_OK) {
                        ledger_err(lg, "cannot load ledger id windows",
                                   errstr, errstr_size);
                        goto out;
                }
                while ((src = sqlite3_step(stale_st)) == SQLITE_ROW)
                        if (ledger_gen_del(lg,
                                           (uint64_t)sqlite3_column_int64(
                                                   stale_st, 0),
                                           errstr, errstr_size))
                                goto out;
                sqlite3_reset(stale_st);
                if (src != SQLITE_DONE) {
                        ledger_err(lg, "cannot load ledger id windows",
                                   errstr, errstr_size);
                        goto out;
                }
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
        dedup_tracker_set_id_lookup(tr, ledger_id_lookup, lg);
        rc = 0;
out:
        ledger_rollback(lg);
        sqlite3_finalize(stale_st);
        sqlite3_finalize(gen_st);
        sqlite3_finalize(batch_st);
        sqlite3_finalize(chunk_st);
        sqlite3_finalize(seq_st);
        return rc;
}

/* ------------------------------------------------------------------ */
/* Commit                                                              */
/* ------------------------------------------------------------------ */

struct ledger_commit_ctx {
        struct ledger *lg;
        struct ledger_part *parts;
        size_t nparts;
        unsigned char *touched; /* [nparts]: counters may have changed */
        char *errstr;
        size_t errstr_size;
};

/* dedup_pair_cb: writes one dirty pair and rewrites its open gaps. */
static int ledger_pair_put(void *opaque, const struct dedup_pair_view *pv)
{
        struct ledger_commit_ctx *cc = opaque;
        struct ledger *lg = cc->lg;
        const struct ledger_part *p;
        sqlite3_stmt *st;
        uint32_t i;
        int brc;

        if (pv->part >= cc->nparts || !pv->producer ||
            pv->producer_len > DEDUP_PRODUCER_MAX) {
                snprintf(cc->errstr, cc->errstr_size,
                         "cannot write pair of part %u: not among the %zu "
                         "parts, or bad producer",
                         pv->part, cc->nparts);
                return -1;
        }
        p = &cc->parts[pv->part];
        cc->touched[pv->part] = 1;

        st = lg->st[LEDGER_ST_PAIR_PUT];
        brc = ledger_bind_key(st, p, pv->producer, pv->producer_len);
        brc |= sqlite3_bind_int64(st, 4, pv->epoch);
        brc |= sqlite3_bind_int64(st, 5, pv->last_seq);
        brc |= sqlite3_bind_int64(st, 6, pv->last_offset);
        brc |= sqlite3_bind_int64(st, 7, pv->last_ms);
        brc |= sqlite3_bind_int64(st, 8, ledger_u64_put(pv->records));
        brc |= sqlite3_bind_int(st, 9, !!pv->rebaseline);
        for (i = 0; i < DEDUP_HISTORY_RUNS; i++) {
                brc |= sqlite3_bind_int64(st, 10 + 3 * (int)i,
                                          pv->runs[i].seq);
                brc |= sqlite3_bind_int64(st, 11 + 3 * (int)i,
                                          pv->runs[i].offset);
                brc |= sqlite3_bind_int64(st, 12 + 3 * (int)i,
                                          pv->runs[i].len);
        }
        if (ledger_step_done(lg, st, brc, "cannot write ledger pair",
                             cc->errstr, cc->errstr_size))
                return -1;

        st = lg->st[LEDGER_ST_GAPS_DEL];
        brc = ledger_bind_key(st, p, pv->producer, pv->producer_len);
        if (ledger_step_done(lg, st, brc, "cannot delete ledger open gaps",
                             cc->errstr, cc->errstr_size))
                return -1;

        st = lg->st[LEDGER_ST_GAP_PUT];
        for (i = 0; i < pv->ngaps; i++) {
                const struct dedup_gap *g = &pv->gaps[i];
                brc = ledger_bind_key(st, p, pv->producer, pv->producer_len);
                brc |= sqlite3_bind_int64(st, 4, i);
                brc |= sqlite3_bind_int64(st, 5, g->epoch);
                brc |= sqlite3_bind_int64(st, 6, g->lo);
                brc |= sqlite3_bind_int64(st, 7, g->hi);
                brc |= sqlite3_bind_int64(st, 8, g->opened_offset);
                brc |= sqlite3_bind_int64(st, 9, g->opened_ms);
                brc |= sqlite3_bind_int64(st, 10,
                                          ledger_u64_put(g->opened_rec));
                if (ledger_step_done(lg, st, brc,
                                     "cannot write ledger open gap",
                                     cc->errstr, cc->errstr_size))
                        return -1;
        }
        return 0;
}

/* Deletes an expired pair and its open gaps. */
static int ledger_pair_del(struct ledger_commit_ctx *cc,
                           const struct dedup_event *ev)
{
        struct ledger *lg = cc->lg;
        const struct ledger_part *p = &cc->parts[ev->part];
        sqlite3_stmt *st;
        int brc;

        st = lg->st[LEDGER_ST_PAIR_DEL];
        brc = ledger_bind_key(st, p, ev->producer, ev->producer_len);
        if (ledger_step_done(lg, st, brc, "cannot delete expired ledger pair",
                             cc->errstr, cc->errstr_size))
                return -1;
        st = lg->st[LEDGER_ST_GAPS_DEL];
        brc = ledger_bind_key(st, p, ev->producer, ev->producer_len);
        return ledger_step_done(lg, st, brc,
                                "cannot delete expired ledger open gaps",
                                cc->errstr, cc->errstr_size);
}

/* Appends one anomaly row; ev->producer may be NULL. */
static int ledger_anomaly_put(struct ledger_commit_ctx *cc,
                              const struct ledger_part *p, const char *kind,
                              const struct dedup_event *ev)
{
        struct ledger *lg = cc->lg;
        sqlite3_stmt *st = lg->st[LEDGER_ST_ANOMALY_PUT];
        int brc;

        brc = ledger_bind_key(st, p, NULL, 0);
        if (ev->producer)
                brc |= sqlite3_bind_text(st, 3, ev->producer,
                                         (int)ev->producer_len,
                                         SQLITE_STATIC);
        else
                brc |= sqlite3_bind_null(st, 3);
        brc |= sqlite3_bind_text(st, 4, kind, -1, SQLITE_STATIC);
        brc |= ledger_bind_opt(st, 5, ev->epoch);
        brc |= ledger_bind_opt(st, 6, ev->seq_lo);
        brc |= ledger_bind_opt(st, 7, ev->seq_hi);
        brc |= sqlite3_bind_int64(st, 8, ev->offset_lo);
        brc |= sqlite3_bind_int64(st, 9, ev->offset_hi);
        brc |= ledger_bind_opt(st, 10, ev->first_offset);
        brc |= sqlite3_bind_int64(st, 11, ledger_u64_put(ev->count));
        brc |= sqlite3_bind_int64(st, 12, ev->when_ms);
        brc |= sqlite3_bind_int64(st, 13, ev->malformed_bits);
        if (ev->kind == DEDUP_KIND_REDELIVERED) {
                size_t stored = ev->id_len < DEDUP_ID_EVIDENCE_MAX
                                        ? ev->id_len
                                        : DEDUP_ID_EVIDENCE_MAX;
                brc |= ledger_bind_opt(
                        st, 14,
                        ev->first_part < cc->nparts
                                ? cc->parts[ev->first_part].partition
                                : -1);
                brc |= ledger_bind_opt(st, 15, ev->first_offset_hi);
                brc |= sqlite3_bind_blob(st, 16, stored ? (const void *)ev->id : "",
                                         (int)stored, SQLITE_STATIC);
                brc |= sqlite3_bind_int64(st, 17, ledger_u64_put(ev->id_len));
        } else {
                brc |= sqlite3_bind_null(st, 14);
                brc |= sqlite3_bind_null(st, 15);
                brc |= sqlite3_bind_null(st, 16);
                brc |= sqlite3_bind_null(st, 17);
        }
        return ledger_step_done(lg, st, brc, "cannot write ledger anomaly",
                                cc->errstr, cc->errstr_size);
}

/* Events of the batch, oldest first: expiries delete, the rest append. */
static int ledger_events_put(struct ledger_commit_ctx *cc,
                             struct dedup_tracker *tr)
{
        const struct dedup_event *evs, *ev;
        const char *kind;
        size_t n, i;

        evs = dedup_tracker_events(tr, &n);
        for (i = 0; i < n; i++) {
                ev = &evs[i];
                kind = dedup_kind_name(ev->kind);
                if (ev->part >= cc->nparts || !kind) {
                        snprintf(cc->errstr, cc->errstr_size,
                                 "cannot write event of kind %d for part %u: "
                                 "unknown kind or part",
                                 (int)ev->kind, ev->part);
                        return -1;
                }
                cc->touched[ev->part] = 1;
                if (ev->kind == DEDUP_KIND_EXPIRED) {
                        if (!ev->producer) {
                                snprintf(cc->errstr, cc->errstr_size,
                                         "cannot delete expired pair of part "
                                         "%u: no producer",
                                         ev->part);
                                return -1;
                        }
                        if (ledger_pair_del(cc, ev))
                                return -1;
                } else if (ledger_anomaly_put(cc, &cc->parts[ev->part], kind,
                                              ev)) {
                        return -1;
                }
        }
        return 0;
}

/* Stores a coverage gap and, if it is new, its anomaly row. */
static int ledger_coverage_put(struct ledger_commit_ctx *cc,
                               const struct ledger_part *p, int64_t now_ms)
{
        struct ledger *lg = cc->lg;
        sqlite3_stmt *st = lg->st[LEDGER_ST_COVERAGE_PUT];
        struct dedup_event ev;
        int brc;

        if (p->coverage_hi < p->coverage_lo) {
                snprintf(cc->errstr, cc->errstr_size,
                         "bad coverage gap for %s [%d]: offsets %lld..%lld",
                         p->topic, (int)p->partition,
                         (long long)p->coverage_lo, (long long)p->coverage_hi);
                return -1;
        }
        brc = ledger_bind_key(st, p, NULL, 0);
        brc |= sqlite3_bind_int64(st, 3, p->coverage_lo);
        brc |= sqlite3_bind_int64(st, 4, p->coverage_hi);
        brc |= sqlite3_bind_int64(st, 5, now_ms);
        if (ledger_step_done(lg, st, brc, "cannot write ledger coverage gap",
                             cc->errstr, cc->errstr_size))
                return -1;
        if (sqlite3_changes(lg->db) == 0)
                return 0; /* already stored */

        memset(&ev, 0, sizeof(ev));
        ev.part = p->part;
        ev.epoch = -1;
        ev.seq_lo = ev.seq_hi = -1;
        ev.offset_lo = p->coverage_lo;
        ev.offset_hi = p->coverage_hi;
        ev.first_offset = ev.first_offset_hi = -1;
        /* Differences, not sums: offsets may be near INT64_MAX. */
        ev.count = (uint64_t)(p->coverage_hi - p->coverage_lo) + 1;
        ev.when_ms = now_ms;
        return ledger_anomaly_put(cc, p, "coverage", &ev);
}

/* dedup_gen_cb: writes a generation created or changed by the batch. */
static int ledger_gen_put(void *opaque, const struct dedup_gen_view *gv)
{
        struct ledger_commit_ctx *cc = opaque;
        struct ledger *lg = cc->lg;
        sqlite3_stmt *st = lg->st[LEDGER_ST_GEN_PUT];
        int brc;

        if (gv->window >= lg->nwin || gv->gen > INT64_MAX) {
                snprintf(cc->errstr, cc->errstr_size,
                         "cannot write id generation %llu: unknown window %u",
                         (unsigned long long)gv->gen, gv->window);
                return -1;
        }
        brc = sqlite3_bind_int64(st, 1, (int64_t)gv->gen);
        brc |= sqlite3_bind_text(st, 2, lg->win[gv->window].topic, -1,
                                 SQLITE_STATIC);
        brc |= sqlite3_bind_text(st, 3, lg->dedup_key, -1, SQLITE_STATIC);
        brc |= sqlite3_bind_int64(st, 4, gv->first_ms);
        brc |= sqlite3_bind_int64(st, 5, gv->last_ms);
        brc |= sqlite3_bind_int64(st, 6, ledger_u64_put(gv->ids));
        brc |= sqlite3_bind_int(st, 7, !!gv->closed);
        return ledger_step_done(lg, st, brc,
                                "cannot write ledger id generation",
                                cc->errstr, cc->errstr_size);
}

/* Runs one of the statements that take a generation as ?1. */
static int ledger_gen_step(struct ledger *lg, enum ledger_stmt which,
                           uint64_t gen, const char *what, char *errstr,
                           size_t errstr_size)
{
        sqlite3_stmt *st = lg->st[which];

        return ledger_step_done(lg, st,
                                sqlite3_bind_int64(st, 1, (int64_t)gen), what,
                                errstr, errstr_size);
}

/* Deletes generation gen and its ids. */
static int ledger_gen_del(struct ledger *lg, uint64_t gen, char *errstr,
                          size_t errstr_size)
{
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

/* Packs rows[0..n) into lg->ebuf (n > 0, all of parts[]). */
static int ledger_rows_pack(struct ledger_commit_ctx *cc,
                            const struct dedup_id_row *rows, size_t n)
{
        size_t i;

        if (ledger_ebuf(cc->lg, n)) {
                snprintf(cc->errstr, cc->errstr_size,
                         "cannot write ledger ids: %s", strerror(ENOMEM));
                return -1;
        }
        for (i = 0; i < n; i++) {
                if (rows[i].part >= cc->nparts) {
                        snprintf(cc->errstr, cc->errstr_size,
                                 "cannot write id of part %u: not among the "
                                 "%zu parts",
                                 rows[i].part, cc->nparts);
                        return -1;
                }
                ledger_entry_put(cc->lg->ebuf + i * LEDGER_ENTRY, &rows[i].id,
                                 cc->parts[rows[i].part].partition,
                                 rows[i].offset);
        }
        return 0;
}

/* dedup_gen_rows_cb: a closed generation's ids, sorted, as chunks; its
 * batches go. */
static int ledger_gen_closed(void *opaque, const struct dedup_gen_view *gv,
                             const struct dedup_id_row *rows, size_t n)
{
        struct ledger_commit_ctx *cc = opaque;
        struct ledger *lg = cc->lg;
        sqlite3_stmt *st = lg->st[LEDGER_ST_CHUNK_PUT];
        size_t i, k;
        int brc;

        for (i = 0; i < n; i += k) {
                k = n - i < LEDGER_CHUNK_IDS ? n - i : LEDGER_CHUNK_IDS;
                if (ledger_rows_pack(cc, rows + i, k))
                        return -1;
                brc = sqlite3_bind_int64(st, 1, (int64_t)gv->gen);
                brc |= sqlite3_bind_int64(
                        st, 2, (int64_t)(rows[i].id.lo ^ LEDGER_SIGN));
                brc |= sqlite3_bind_int64(
                        st, 3, (int64_t)(rows[i].id.hi ^ LEDGER_SIGN));
                brc |= sqlite3_bind_blob(st, 4, lg->ebuf,
                                         (int)(k * LEDGER_ENTRY),
                                         SQLITE_STATIC);
                if (ledger_step_done(lg, st, brc, "cannot write ledger ids",
                                     cc->errstr, cc->errstr_size))
                        return -1;
        }
        return ledger_gen_step(lg, LEDGER_ST_GEN_BATCHES_DEL, gv->gen,
                               "cannot delete ledger ids", cc->errstr,
                               cc->errstr_size);
}

/*
 * The batch's id window changes: generations written, new ids (one packed
 * row per open generation they went to), closed generations sorted into
 * chunks (their new ids with them), dropped ones deleted.
 */
static int ledger_windows_put(struct ledger_commit_ctx *cc,
                              struct dedup_tracker *tr)
{
        struct ledger *lg = cc->lg;
        sqlite3_stmt *st = lg->st[LEDGER_ST_BATCH_PUT];
        const struct dedup_id_row *rows;
        const uint64_t *dropped;
        size_t n, i, j;
        int brc, rc;

        if (dedup_tracker_gens_dirty_foreach(tr, ledger_gen_put, cc))
                return -1;
        rows = dedup_tracker_ids_new(tr, &n);
        for (i = 0; i < n; i = j) {
                for (j = i + 1; j < n && rows[j].gen == rows[i].gen; j++)
                        ;
                /* A generation closed by this batch gets its ids sorted
                 * into chunks below; a dropped one is deleted. */
                if (!dedup_tracker_gen_open(tr, rows[i].window, rows[i].gen))
                        continue;
                if (ledger_rows_pack(cc, rows + i, j - i))
                        return -1;
                brc = sqlite3_bind_int64(st, 1, (int64_t)rows[i].gen);
                brc |= sqlite3_bind_int64(st, 2, ++lg->batch_seq);
                brc |= sqlite3_bind_blob(st, 3, lg->ebuf,
                                         (int)((j - i) * LEDGER_ENTRY),
                                         SQLITE_STATIC);
                if (ledger_step_done(lg, st, brc, "cannot write ledger ids",
                                     cc->errstr, cc->errstr_size))
                        return -1;
        }
        cc->errstr[0] = '\0';
        rc = dedup_tracker_gens_closed_foreach(tr, ledger_gen_closed, cc);
        if (rc) {
                if (!cc->errstr[0])
                        snprintf(cc->errstr, cc->errstr_size,
                                 "cannot sort ledger ids: %s",
                                 strerror(ENOMEM));
                return -1;
        }
        dropped = dedup_tracker_gens_dropped(tr, &n);
        for (i = 0; i < n; i++)
                if (ledger_gen_del(lg, dropped[i], cc->errstr,
                                   cc->errstr_size))
                        return -1;
        return 0;
}

/* Writes the row of part p: the caller's offset, the tracker's counters. */
static int ledger_part_put(struct ledger_commit_ctx *cc,
                           struct dedup_tracker *tr,
                           const struct ledger_part *p, int64_t now_ms)
{
        struct ledger *lg = cc->lg;
        sqlite3_stmt *st = lg->st[LEDGER_ST_PART_PUT];
        const struct dedup_counts *c = dedup_tracker_part_counts(tr, p->part);
        int brc, k;

        if (!c) {
                snprintf(cc->errstr, cc->errstr_size,
                         "cannot write %s [%d]: part %u is not in the tracker",
                         p->topic, (int)p->partition, p->part);
                return -1;
        }
        brc = ledger_bind_key(st, p, NULL, 0);
        brc |= sqlite3_bind_int64(st, 3, p->next_offset);
        brc |= sqlite3_bind_int(
                st, 4, !!dedup_tracker_part_from_log_start(tr, p->part));
        brc |= sqlite3_bind_int64(st, 5, ledger_u64_put(c->records));
        brc |= sqlite3_bind_int64(st, 6, ledger_u64_put(c->untracked));
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                brc |= sqlite3_bind_int64(st, 7 + k,
                                          ledger_u64_put(c->anomalies[k]));
        brc |= sqlite3_bind_int64(st, 7 + DEDUP_KIND__ANOMALY_CNT,
                                  ledger_u64_put(c->missing));
        brc |= sqlite3_bind_int64(st, 8 + DEDUP_KIND__ANOMALY_CNT,
                                  ledger_u64_put(c->ids));
        brc |= sqlite3_bind_int64(st, 9 + DEDUP_KIND__ANOMALY_CNT, now_ms);
        return ledger_step_done(lg, st, brc, "cannot write ledger partition",
                                cc->errstr, cc->errstr_size);
}

/* Runs one of the prepared transaction statements. */
static int ledger_txn(struct ledger *lg, enum ledger_stmt which,
                      const char *what, char *errstr, size_t errstr_size)
{
        return ledger_step_done(lg, lg->st[which], SQLITE_OK, what, errstr,
                                errstr_size);
}

int ledger_commit(struct ledger *lg, struct dedup_tracker *tr,
                  struct ledger_part *parts, size_t nparts,
                  int64_t *commit_us, char *errstr, size_t errstr_size)
{
        struct ledger_commit_ctx cc = {
                .lg = lg,
                .parts = parts,
                .nparts = nparts,
                .errstr = errstr,
                .errstr_size = errstr_size,
        };
        int64_t t0 = clock_mono_us(), now_ms = clock_wall_ms();
        int in_txn = 0, rc = -1;
        size_t i;

        if (lg->readonly) {
                snprintf(errstr, errstr_size,
                         "cannot commit to a read-only ledger handle");
                goto out;
        }
        if (dedup_tracker_failed(tr)) {
                if (lg->lookup_failed)
                        snprintf(errstr, errstr_size,
                                 "cannot commit: %s; the tracker's state is "
                                 "not trustworthy",
                                 lg->lookup_err);
                else
                        snprintf(errstr, errstr_size,
                                 "cannot commit: the tracker ran out of "
                                 "memory and its state is not trustworthy");
                goto out;
        }
        if (ledger_parts_check(parts, nparts, errstr, errstr_size))
                goto out;
        cc.touched = calloc(nparts ? nparts : 1, 1);
        if (!cc.touched) {
                snprintf(errstr, errstr_size, "cannot commit: %s",
                         strerror(ENOMEM));
                goto out;
        }
        if (ledger_txn(lg, LEDGER_ST_BEGIN,
                       "cannot begin ledger transaction", errstr, errstr_size))
                goto out;
        in_txn = 1;
        /*
         * Events first, in order: a pair that expired and came back in
         * the same batch is deleted, then written again as it is now.
         */
        if (ledger_events_put(&cc, tr) ||
            dedup_tracker_dirty_foreach(tr, ledger_pair_put, &cc) ||
            ledger_windows_put(&cc, tr))
                goto out;
        /*
         * A part's counters change without the caller marking it dirty
         * when dedup_tracker_tick() confirms or expires: write every part
         * that a pair or event touched as well.
         */
        for (i = 0; i < nparts; i++) {
                if (!parts[i].dirty && !cc.touched[i] &&
                    parts[i].coverage_lo < 0)
                        continue;
                if (ledger_part_put(&cc, tr, &parts[i], now_ms))
                        goto out;
                if (parts[i].coverage_lo >= 0 &&
                    ledger_coverage_put(&cc, &parts[i], now_ms))
                        goto out;
        }
        if (lg->hook)
                lg->hook(lg->hook_opaque);
        if (ledger_txn(lg, LEDGER_ST_COMMIT,
                       "cannot commit ledger transaction", errstr,
                       errstr_size))
                goto out;
        in_txn = 0;

        dedup_tracker_dirty_clear(tr);
        dedup_tracker_events_clear(tr);
        for (i = 0; i < nparts; i++) {
                parts[i].dirty = 0;
                parts[i].coverage_lo = parts[i].coverage_hi = -1;
        }
        rc = 0;
out:
        if (in_txn)
                ledger_rollback(lg);
        free(cc.touched);
        if (commit_us)
                *commit_us = clock_mono_us() - t0;
        return rc;
}

/* ------------------------------------------------------------------ */
/* Reports                                                             */
/* ------------------------------------------------------------------ */

/* Binds ?1 to topic, or NULL for all topics. */
static int ledger_bind_topic(sqlite3_stmt *st, const char *topic)
{
        return topic ? sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC)
                     : sqlite3_bind_null(st, 1);
}

int ledger_summary(struct ledger *lg, const char *topic,
                   struct ledger_summary *out, char *errstr,
                   size_t errstr_size)
{
        static const char *const what = "cannot read ledger summary";
        struct dedup_counts sum;
        struct ledger_summary s;
        sqlite3_stmt *part_st = NULL, *agg_st = NULL;
        int src, k, rc = -1;

        memset(&s, 0, sizeof(s));
        memset(&sum, 0, sizeof(sum));
        /* Counters are summed here, saturating, as SQL SUM() would fail
         * on overflow. */
        if (ledger_prepare(lg,
                           "SELECT " LEDGER_COUNT_COLS " "
                           "FROM partitions WHERE ?1 IS NULL OR topic = ?1",
                           &part_st, errstr, errstr_size) ||
            ledger_prepare(
                    lg,
                    "SELECT (SELECT COUNT(DISTINCT producer) FROM pairs "
                    "        WHERE ?1 IS NULL OR topic = ?1),"
                    "       (SELECT COUNT(*) FROM pairs "
                    "        WHERE ?1 IS NULL OR topic = ?1),"
                    "       (SELECT COUNT(*) FROM open_gaps "
                    "        WHERE ?1 IS NULL OR topic = ?1),"
                    "       (SELECT COUNT(*) FROM coverage_gaps "
                    "        WHERE ?1 IS NULL OR topic = ?1),"
                    "       (SELECT SUM(offset_hi - offset_lo + 1) "
                    "        FROM coverage_gaps "
                    "        WHERE ?1 IS NULL OR topic = ?1),"
                    "       (SELECT SUM(ids) FROM msgid_gens "
                    "        WHERE ?1 IS NULL OR topic = ?1),"
                    "       (SELECT COUNT(*) FROM msgid_gens "
                    "        WHERE ?1 IS NULL OR topic = ?1),"
                    "       (SELECT MIN(first_ms) FROM msgid_gens "
                    "        WHERE ?1 IS NULL OR topic = ?1)",
                    &agg_st, errstr, errstr_size))
                goto out;
        if (ledger_bind_topic(part_st, topic) != SQLITE_OK ||
            ledger_bind_topic(agg_st, topic) != SQLITE_OK) {
                ledger_err(lg, what, errstr, errstr_size);
                goto out;
        }
        /* Both queries see the same snapshot. */
        if (ledger_exec(lg, "BEGIN", what, errstr, errstr_size))
                goto out;
        while ((src = sqlite3_step(part_st)) == SQLITE_ROW) {
                struct dedup_counts c;
                ledger_counts_get(part_st, 0, &c);
                ledger_counts_add(&sum, &c);
                s.partitions++;
        }
        if (src != SQLITE_DONE || sqlite3_step(agg_st) != SQLITE_ROW) {
                ledger_err(lg, what, errstr, errstr_size);
                goto out;
        }
        s.producers = ledger_u64_get(agg_st, 0);
        s.pairs = ledger_u64_get(agg_st, 1);
        s.open_gaps = ledger_u64_get(agg_st, 2);
        s.coverage_gaps = ledger_u64_get(agg_st, 3);
        s.coverage_records = ledger_u64_get(agg_st, 4);
        s.window_ids = ledger_u64_get(agg_st, 5);
        s.window_gens = (uint32_t)ledger_u64_get(agg_st, 6);
        s.window_oldest_ms = ledger_col_opt(agg_st, 7);
        s.records = sum.records;
        s.untracked = sum.untracked;
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                s.anomalies[k] = sum.anomalies[k];
        s.missing = sum.missing;
        s.ids_checked = sum.ids;
        sqlite3_reset(part_st);
        sqlite3_reset(agg_st);
        if (ledger_exec(lg, "COMMIT", what, errstr, errstr_size))
                goto out;
        *out = s;
        rc = 0;
out:
        sqlite3_finalize(part_st);
        sqlite3_finalize(agg_st);
        ledger_rollback(lg);
        return rc;
}

/*
 * Report queries pick their WHERE clause from fixed conditions, by which
 * filters are set, so that SQLite can use the index that fits (a
 * "?1 IS NULL OR topic = ?1" would keep it from doing so).  Values are
 * always bound by name, never written into the text.
 */
#define LEDGER_SQL_MAX 1024
#define LEDGER_CONDS_MAX 8

struct ledger_sql {
        char text[LEDGER_SQL_MAX];
        const char *conds[LEDGER_CONDS_MAX];
        size_t nconds;
};

static void ledger_sql_cond(struct ledger_sql *q, int when, const char *cond)
{
        if (when && q->nconds < LEDGER_CONDS_MAX)
                q->conds[q->nconds++] = cond;
}

/* Prepares head, the conditions joined by AND, then tail. */
static int ledger_sql_prepare(struct ledger *lg, struct ledger_sql *q,
                              const char *head, const char *tail,
                              sqlite3_stmt **st, char *errstr,
                              size_t errstr_size)
{
        size_t len, i;
        int n;

        n = snprintf(q->text, sizeof(q->text), "%s", head);
        for (i = 0; n >= 0 && (size_t)n < sizeof(q->text) && i < q->nconds;
             i++) {
                len = (size_t)n;
                n = snprintf(q->text + len, sizeof(q->text) - len, "%s%s",
                             i ? " AND " : " WHERE ", q->conds[i]);
                n = n < 0 ? n : n + (int)len;
        }
        if (n >= 0 && (size_t)n < sizeof(q->text)) {
                len = (size_t)n;
                n = snprintf(q->text + len, sizeof(q->text) - len, " %s",
                             tail);
                n = n < 0 ? n : n + (int)len;
        }
        if (n < 0 || (size_t)n >= sizeof(q->text)) {
                snprintf(errstr, errstr_size,
                         "cannot prepare ledger query: text too long");
                return -1;
        }
        return ledger_prepare(lg, q->text, st, errstr, errstr_size);
}

/* Binding by name: a parameter the text does not hold is skipped. */
static int ledger_bind_named_text(sqlite3_stmt *st, const char *name,
                                  const char *p, size_t len)
{
        int i = sqlite3_bind_parameter_index(st, name);

        if (!i || !p)
                return SQLITE_OK;
        if (len > INT32_MAX)
                return SQLITE_TOOBIG;
        return sqlite3_bind_text(st, i, p, (int)len, SQLITE_STATIC);
}

static int ledger_bind_named_int(sqlite3_stmt *st, const char *name,
                                 int64_t v)
{
        int i = sqlite3_bind_parameter_index(st, name);

        return i ? sqlite3_bind_int64(st, i, v) : SQLITE_OK;
}

static int ledger_bind_named_str(sqlite3_stmt *st, const char *name,
                                 const char *s)
{
        return ledger_bind_named_text(st, name, s, s ? strlen(s) : 0);
}

int ledger_anomalies_foreach(struct ledger *lg, const char *topic,
                             int64_t limit, ledger_anomaly_cb *cb,
                             void *opaque, char *errstr, size_t errstr_size)
{
        struct ledger_anomaly_filter f = {
                .topic = topic,
                .since_ms = -1,
                .limit = limit,
        };

        return ledger_anomalies_query(lg, &f, cb, opaque, errstr,
                                      errstr_size);
}

/* The caller's callback of a walk, and its argument. */
struct ledger_walk {
        union {
                ledger_anomaly_cb *anomaly;
                ledger_pair_cb *pair;
                ledger_partition_cb *partition;
        } cb;
        void *opaque;
};

/* Decodes the current row of st and passes it on: < 0 a bad row, 0 go on,
 * > 0 the caller's callback said stop. */
typedef int(ledger_row_fn)(sqlite3_stmt *st, const struct ledger_walk *w);

/* Steps the bound statement st (brc: the OR of its bind results) through
 * its rows; the caller finalizes st. */
static int ledger_walk(struct ledger *lg, sqlite3_stmt *st, int brc,
                       const char *what, ledger_row_fn *row,
                       const struct ledger_walk *w, char *errstr,
                       size_t errstr_size)
{
        int src = SQLITE_DONE, r = 0;

        if (brc != SQLITE_OK) {
                ledger_err(lg, what, errstr, errstr_size);
                return -1;
        }
        while (!r && (src = sqlite3_step(st)) == SQLITE_ROW)
                r = row(st, w);
        if (r < 0 || (!r && src != SQLITE_DONE)) {
                ledger_err(lg, what, errstr, errstr_size);
                return -1;
        }
        return 0;
}

static int ledger_anomaly_row(sqlite3_stmt *st, const struct ledger_walk *w)
{
        struct ledger_anomaly a;

        memset(&a, 0, sizeof(a));
        a.id = sqlite3_column_int64(st, 0);
        a.topic = (const char *)sqlite3_column_text(st, 1);
        a.partition = (int32_t)sqlite3_column_int64(st, 2);
        a.kind = (const char *)sqlite3_column_text(st, 3);
        a.producer = (const char *)sqlite3_column_text(st, 4);
        a.producer_len = (size_t)sqlite3_column_bytes(st, 4);
        a.epoch = (int32_t)ledger_col_opt(st, 5);
        a.seq_lo = ledger_col_opt(st, 6);
        a.seq_hi = ledger_col_opt(st, 7);
        a.offset_lo = sqlite3_column_int64(st, 8);
        a.offset_hi = sqlite3_column_int64(st, 9);
        a.first_offset = ledger_col_opt(st, 10);
        a.count = ledger_u64_get(st, 11);
        a.detected_ms = sqlite3_column_int64(st, 12);
        a.malformed_bits = (unsigned)sqlite3_column_int64(st, 13);
        a.first_partition = (int32_t)ledger_col_opt(st, 14);
        a.first_offset_hi = ledger_col_opt(st, 15);
        if (sqlite3_column_type(st, 16) != SQLITE_NULL) {
                a.msgid = sqlite3_column_blob(st, 16);
                a.msgid_stored = (size_t)sqlite3_column_bytes(st, 16);
                a.msgid = a.msgid ? a.msgid : "";
        }
        a.msgid_len = ledger_col_opt(st, 17);
        if (!a.topic || !a.kind)
                return -1;
        return w->cb.anomaly(w->opaque, &a) ? 1 : 0;
}

int ledger_anomalies_query(struct ledger *lg,
                           const struct ledger_anomaly_filter *f,
                           ledger_anomaly_cb *cb, void *opaque, char *errstr,
                           size_t errstr_size)
{
        const struct ledger_walk w = {.cb.anomaly = cb, .opaque = opaque};
        struct ledger_sql q = {0};
        sqlite3_stmt *st = NULL;
        int brc, rc = -1;

        ledger_sql_cond(&q, f->topic != NULL, "topic = :topic");
        ledger_sql_cond(&q, f->kind != NULL, "kind = :kind");
        ledger_sql_cond(&q, f->producer != NULL, "producer = :producer");
        ledger_sql_cond(&q, f->since_ms >= 0, "detected_ms >= :since");
        ledger_sql_cond(&q, f->before_id > 0, "id < :before");
        if (ledger_sql_prepare(lg, &q,
                               "SELECT id, topic, partition, kind, producer, "
                               "epoch, seq_lo, seq_hi, offset_lo, offset_hi, "
                               "first_offset, count, detected_ms, "
                               "malformed_bits, first_partition, "
                               "first_offset_hi, msgid, msgid_len "
                               "FROM anomalies",
                               "ORDER BY id DESC LIMIT :limit", &st, errstr,
                               errstr_size))
                goto out;
        brc = ledger_bind_named_str(st, ":topic", f->topic);
        brc |= ledger_bind_named_str(st, ":kind", f->kind);
        brc |= ledger_bind_named_text(st, ":producer", f->producer,
                                      f->producer_len);
        brc |= ledger_bind_named_int(st, ":since", f->since_ms);
        brc |= ledger_bind_named_int(st, ":before", f->before_id);
        brc |= ledger_bind_named_int(st, ":limit",
                                     f->limit < 0 ? -1 : f->limit);
        rc = ledger_walk(lg, st, brc, "cannot read ledger anomalies",
                         ledger_anomaly_row, &w, errstr, errstr_size);
out:
        sqlite3_finalize(st);
        return rc;
}

static int ledger_pair_row(sqlite3_stmt *st, const struct ledger_walk *w)
{
        struct ledger_pair pr;

        memset(&pr, 0, sizeof(pr));
        pr.topic = (const char *)sqlite3_column_text(st, 0);
        pr.partition = (int32_t)sqlite3_column_int64(st, 1);
        pr.producer = (const char *)sqlite3_column_text(st, 2);
        pr.producer_len = (size_t)sqlite3_column_bytes(st, 2);
        pr.epoch = (int32_t)sqlite3_column_int64(st, 3);
        pr.last_seq = sqlite3_column_int64(st, 4);
        pr.last_offset = sqlite3_column_int64(st, 5);
        pr.last_ms = sqlite3_column_int64(st, 6);
        pr.records = ledger_u64_get(st, 7);
        pr.open_gaps = ledger_u64_get(st, 8);
        if (!pr.topic || !pr.producer)
                return -1;
        return w->cb.pair(w->opaque, &pr) ? 1 : 0;
}

int ledger_pairs_foreach(struct ledger *lg, const struct ledger_pair_filter *f,
                         ledger_pair_cb *cb, void *opaque, char *errstr,
                         size_t errstr_size)
{
        const struct ledger_walk w = {.cb.pair = cb, .opaque = opaque};
        const struct ledger_pair_key *k = f->after;
        int after = k && k->topic && k->producer;
        struct ledger_sql q = {0};
        sqlite3_stmt *st = NULL;
        int brc, rc = -1;

        ledger_sql_cond(&q, f->topic != NULL, "p.topic = :topic");
        ledger_sql_cond(&q, f->producer != NULL, "p.producer = :producer");
        ledger_sql_cond(&q, after,
                        "(p.topic, p.partition, p.producer) > "
                        "(:after_topic, :after_partition, :after_producer)");
        if (ledger_sql_prepare(
                    lg, &q,
                    "SELECT p.topic, p.partition, p.producer, p.epoch, "
                    "p.last_seq, p.last_offset, p.last_ms, p.records, "
                    "(SELECT COUNT(*) FROM open_gaps g WHERE g.topic = "
                    "p.topic AND g.partition = p.partition AND g.producer = "
                    "p.producer) FROM pairs p",
                    "ORDER BY p.topic, p.partition, p.producer LIMIT :limit",
                    &st, errstr, errstr_size))
                goto out;
        brc = ledger_bind_named_str(st, ":topic", f->topic);
        brc |= ledger_bind_named_text(st, ":producer", f->producer,
                                      f->producer_len);
        if (after) {
                brc |= ledger_bind_named_str(st, ":after_topic", k->topic);
                brc |= ledger_bind_named_int(st, ":after_partition",
                                             k->partition);
                brc |= ledger_bind_named_text(st, ":after_producer",
                                              k->producer, k->producer_len);
        }
        brc |= ledger_bind_named_int(st, ":limit",
                                     f->limit < 0 ? -1 : f->limit);
        rc = ledger_walk(lg, st, brc, "cannot read ledger pairs",
                         ledger_pair_row, &w, errstr, errstr_size);
out:
        sqlite3_finalize(st);
        return rc;
}

static int ledger_partition_row(sqlite3_stmt *st,
                                const struct ledger_walk *w)
{
        struct ledger_partition pt;

        memset(&pt, 0, sizeof(pt));
        pt.topic = (const char *)sqlite3_column_text(st, 0);
        pt.partition = (int32_t)sqlite3_column_int64(st, 1);
        pt.next_offset = sqlite3_column_int64(st, 2);
        pt.from_log_start = sqlite3_column_int64(st, 3) != 0;
        ledger_counts_get(st, 4, &pt.counts);
        pt.updated_ms = sqlite3_column_int64(st, 4 + LEDGER_COUNT_NCOLS);
        pt.open_gaps = ledger_u64_get(st, 5 + LEDGER_COUNT_NCOLS);
        if (!pt.topic)
                return -1;
        return w->cb.partition(w->opaque, &pt) ? 1 : 0;
}

int ledger_partitions_foreach(struct ledger *lg, const char *topic,
                              ledger_partition_cb *cb, void *opaque,
                              char *errstr, size_t errstr_size)
{
        const struct ledger_walk w = {.cb.partition = cb, .opaque = opaque};
        struct ledger_sql q = {0};
        sqlite3_stmt *st = NULL;
        int rc = -1;

        ledger_sql_cond(&q, topic != NULL, "p.topic = :topic");
        /* The counter columns follow ledger_counts_get(). */
        if (ledger_sql_prepare(
                    lg, &q,
                    "SELECT p.topic, p.partition, p.next_offset, "
                    "p.from_log_start, " LEDGER_COUNT_COLS ", "
                    "p.updated_ms, (SELECT COUNT(*) FROM "
                    "open_gaps g WHERE g.topic = p.topic AND g.partition = "
                    "p.partition) FROM partitions p",
                    "ORDER BY p.topic, p.partition", &st, errstr,
                    errstr_size))
                goto out;
        rc = ledger_walk(lg, st, ledger_bind_named_str(st, ":topic", topic),
                         "cannot read ledger partitions",
                         ledger_partition_row, &w, errstr, errstr_size);
out:
        sqlite3_finalize(st);
        return rc;
}
