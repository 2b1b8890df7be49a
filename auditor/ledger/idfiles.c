/*
 * idfiles.c - closed id generations in files of their own
 * (schema/0013_msgid_files.sql): "<ledger>-ids/<gen>.ids", one sorted blob
 * of packed ids (entries.c) each.
 *
 * Written once, whole, and made durable before the transaction that names
 * it (file_bytes) commits; unlinked only after the transaction that
 * deletes its row has committed (ledger_idfiles_txn_end()); a file no row
 * names is a leftover of a crash between the two, removed by
 * ledger_idfiles_sweep().  So whatever commit a kill -9 or a power loss
 * leaves last, every file it names is there and whole.
 *
 * The writer keeps the file generations of its windows in lg->idf, each
 * with a sparse index in memory (8 bytes per LEDGER_IDFILE_STEP ids): a
 * lookup (rare: a filter's "maybe" for a closed generation) is one
 * pread() of two steps' entries.  Readers map a file for one lookup.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../base/kconf.h"
#include "../../base/le.h"
#include "../../base/log.h"
#include "internal.h"

/* The file name suffix of each enum ledger_idfile_kind. */
static const char *const idfile_suffix[] = {".ids", ".flow", ".flowlog"};

/* "<dir>/<gen><suffix>" into buf; -1 (and why in errstr, when given) if
 * it does not fit. */
static int idfile_path(const struct ledger *lg, enum ledger_idfile_kind kind,
                       uint64_t gen, char *buf, size_t size, char *errstr,
                       size_t errstr_size)
{
        int n = snprintf(buf, size, "%s/%llu%s", lg->ids_dir,
                         (unsigned long long)gen, idfile_suffix[kind]);

        if (n >= 0 && (size_t)n < size)
                return 0;
        if (errstr)
                snprintf(errstr, errstr_size, "ledger id directory %s: %s",
                         lg->ids_dir, strerror(ENAMETOOLONG));
        return -1;
}

int ledger_idfiles_init(struct ledger *lg, const char *path, char *errstr,
                        size_t errstr_size)
{
        size_t len = strlen(path) + sizeof("-ids");

        lg->ids_dir = malloc(len);
        if (!lg->ids_dir) {
                snprintf(errstr, errstr_size, "cannot open ledger %s: %s",
                         path, strerror(ENOMEM));
                return -1;
        }
        snprintf(lg->ids_dir, len, "%s-ids", path);
        if (lg->readonly)
                return 0;
        if (mkdir(lg->ids_dir, 0755) && errno != EEXIST) {
                snprintf(errstr, errstr_size,
                         "cannot create the ledger's id directory %s: %s",
                         lg->ids_dir, strerror(errno));
                return -1;
        }
        return 0;
}

static struct ledger_idfile *idfile_of(struct ledger *lg, uint64_t gen)
{
        size_t i;

        for (i = 0; i < lg->nidf; i++)
                if (lg->idf[i].gen == gen)
                        return &lg->idf[i];
        return NULL;
}

/* Indexes f from its entries v (NULL: none). */
static int idfile_index(struct ledger_idfile *f,
                        const struct ledger_entries *v)
{
        size_t i,
            k = v ? (v->n + LEDGER_IDFILE_STEP - 1) / LEDGER_IDFILE_STEP : 0;
        uint64_t *lo = k ? malloc(k * sizeof(*lo)) : NULL;

        if (k && !lo)
                return -1;
        for (i = 0; i < k; i++)
                lo[i] = le64_get(v->p + i * LEDGER_IDFILE_STEP * v->size);
        free(f->lo);
        f->lo = lo;
        f->n = v ? v->n : 0;
        f->size = v ? v->size : LEDGER_ENTRY_WIDE;
        f->head = v && v->n ? f->bytes - v->n * v->size : 0;
        return 0;
}

/* An entry for gen (named: its row names its file), indexed from v. */
static struct ledger_idfile *idfile_add(struct ledger *lg, uint64_t gen,
                                        size_t bytes, int named,
                                        const struct ledger_entries *v)
{
        struct ledger_idfile *f = idfile_of(lg, gen);

        if (f) {
                f->bytes = bytes;
                if (idfile_index(f, v))
                        return NULL;
                f->named = named;
                return f;
        }
        if (lg->nidf == lg->idf_cap) {
                size_t ncap = lg->idf_cap ? lg->idf_cap * 2 : 32;
                struct ledger_idfile *n = realloc(lg->idf, ncap * sizeof(*n));
                if (!n)
                        return NULL;
                lg->idf = n;
                lg->idf_cap = ncap;
        }
        f = &lg->idf[lg->nidf];
        memset(f, 0, sizeof(*f));
        f->gen = gen;
        f->bytes = bytes;
        if (idfile_index(f, v))
                return NULL;
        f->named = named;
        lg->nidf++;
        return f;
}

int ledger_idfile_add(struct ledger *lg, uint64_t gen, size_t bytes,
                      const struct ledger_entries *v)
{
        return idfile_add(lg, gen, bytes, 1, v) ? 0 : -1;
}

int ledger_idfile_is(struct ledger *lg, uint64_t gen)
{
        const struct ledger_idfile *f = idfile_of(lg, gen);

        return f && f->named;
}

/* Syncs the directory, so that a file just created is found after a
 * power loss. */
static int dir_sync(const struct ledger *lg, char *errstr, size_t errstr_size)
{
        int fd = open(lg->ids_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

        if (fd < 0 || fsync(fd)) {
                snprintf(errstr, errstr_size, "cannot sync %s: %s",
                         lg->ids_dir, strerror(errno));
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        rc = close(fd);
        return rc ? -1 : 0;
}

int ledger_idfile_create(struct ledger *lg, enum ledger_idfile_kind kind,
                         uint64_t gen, const unsigned char *blob, size_t len,
                         char *errstr, size_t errstr_size)
{
        return ledger_idfile_append(lg, kind, gen, 0, blob, len, errstr,
                                    errstr_size);
}

int ledger_idfile_append(struct ledger *lg, enum ledger_idfile_kind kind,
                         uint64_t gen, size_t at, const unsigned char *blob,
                         size_t len, char *errstr, size_t errstr_size)
{
        char path[4096];
        size_t done = 0;
        int fd = -1, rc;

        if (idfile_path(lg, kind, gen, path, sizeof(path), errstr,
                        errstr_size))
                return -1;
        /* At 0 a new file: a leftover of the same number (its commit never
         * made) is emptied. */
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (at ? 0 : O_TRUNC),
                  0644);
        if (fd < 0)
                goto fail;
        while (done < len) {
                ssize_t n = pwrite(fd, blob + done, len - done,
                                   (off_t)(at + done));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        if (!n)
                                errno = EIO;
                        goto fail;
                }
                done += (size_t)n;
        }
        if (fdatasync(fd))
                goto fail;
        rc = close(fd);
        fd = -1;
        if (rc)
                goto fail;
        return at ? 0 : dir_sync(lg, errstr, errstr_size);
fail:
        snprintf(errstr, errstr_size, "cannot write ledger file %s: %s", path,
                 strerror(errno));
        if (fd >= 0)
                close(fd);
        return -1;
}

void ledger_idfile_unlink(const struct ledger *lg,
                          enum ledger_idfile_kind kind, uint64_t gen)
{
        char path[4096];

        if (!idfile_path(lg, kind, gen, path, sizeof(path), NULL, 0) &&
            unlink(path) && errno != ENOENT)
                log_warn("cannot remove %s: %s (removed at the next load)",
                         path, strerror(errno));
}

int ledger_idfile_write(struct ledger *lg, uint64_t gen,
                        const unsigned char *blob, size_t len, char *errstr,
                        size_t errstr_size)
{
        struct ledger_entries v;

        if (ledger_idfile_create(lg, LEDGER_IDFILE_IDS, gen, blob, len, errstr,
                                 errstr_size))
                return -1;
        if (ledger_entries_view(blob, len, &v)) {
                snprintf(errstr, errstr_size,
                         "cannot write ledger ids: a blob of %zu bytes", len);
                return -1;
        }
        if (!idfile_add(lg, gen, len, 1, &v)) {
                snprintf(errstr, errstr_size, "cannot write ledger ids: %s",
                         strerror(ENOMEM));
                return -1;
        }
        return 0;
}

void *ledger_idfile_map(const struct ledger *lg, enum ledger_idfile_kind kind,
                        uint64_t gen, size_t bytes, char *errstr,
                        size_t errstr_size)
{
        char path[4096];
        struct stat sb;
        void *map = NULL;
        int fd;

        if (idfile_path(lg, kind, gen, path, sizeof(path), errstr,
                        errstr_size))
                return NULL;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &sb)) {
                snprintf(errstr, errstr_size,
                         "cannot read ledger ids %s: %s (restore it with the "
                         "ledger, or start a new ledger)",
                         path, strerror(errno));
                goto out;
        }
        if ((uint64_t)sb.st_size != bytes) {
                snprintf(errstr, errstr_size,
                         "ledger ids %s: %lld bytes, the ledger says %zu "
                         "(restore it with the ledger, or start a new ledger)",
                         path, (long long)sb.st_size, bytes);
                goto out;
        }
        map = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) {
                snprintf(errstr, errstr_size, "cannot map ledger ids %s: %s",
                         path, strerror(errno));
                map = NULL;
        }
out:
        if (fd >= 0)
                close(fd);
        return map;
}

int ledger_idfile_view(struct ledger *lg, uint64_t gen, size_t bytes,
                       void **map, struct ledger_entries *v, char *errstr,
                       size_t errstr_size)
{
        *map = NULL;
        if (bytes && !(*map = ledger_idfile_map(lg, LEDGER_IDFILE_IDS, gen,
                                                bytes, errstr, errstr_size)))
                return -1;
        if (ledger_entries_view(*map, bytes, v)) {
                snprintf(errstr, errstr_size,
                         "ledger ids %s/%llu.ids: %zu bytes, in neither "
                         "packed format",
                         lg->ids_dir, (unsigned long long)gen, bytes);
                ledger_idfile_unmap(*map, bytes);
                *map = NULL;
                return -1;
        }
        return 0;
}

void ledger_idfile_unmap(void *map, size_t bytes)
{
        if (map)
                munmap(map, bytes);
}

int ledger_idfile_find(struct ledger *lg, uint64_t gen,
                       const struct dedup_id *id, int32_t *partition,
                       int64_t *offset, char *errstr, size_t errstr_size)
{
        struct ledger_idfile *f = idfile_of(lg, gen);
        unsigned char buf[2 * LEDGER_IDFILE_STEP * LEDGER_ENTRY_WIDE];
        struct ledger_entries v;
        size_t first, cnt;

        if (!f || !f->named) {
                snprintf(errstr, errstr_size,
                         "id generation %llu has no file in %s",
                         (unsigned long long)gen, lg->ids_dir);
                return -1;
        }
        if (!f->n)
                return 0;
        ledger_idfile_span(f->lo, f->n, LEDGER_IDFILE_STEP, id->lo, &first,
                           &cnt);
        if (ledger_idfile_pread(lg, LEDGER_IDFILE_IDS, gen,
                                f->head + first * f->size, buf, cnt * f->size,
                                errstr, errstr_size))
                return -1;
        v.p = buf;
        v.n = cnt;
        v.size = f->size;
        return ledger_entries_find(&v, 1, id, partition, offset);
}

void ledger_idfile_span(const uint64_t *lo, size_t n, size_t step,
                        uint64_t key, size_t *first, size_t *cnt)
{
        size_t a = 0, b = (n + step - 1) / step;

        /* The last step that starts below key: the entries of that lo
         * begin in it or at the next step's start, so two steps hold them
         * (a run of one lo longer than a step: odds about 2^-64). */
        while (a < b) {
                size_t mid = a + (b - a) / 2;
                if (lo[mid] < key)
                        a = mid + 1;
                else
                        b = mid;
        }
        *first = (a ? a - 1 : 0) * step;
        *cnt = n - *first < 2 * step ? n - *first : 2 * step;
}

int ledger_idfile_open(const struct ledger *lg, enum ledger_idfile_kind kind,
                       uint64_t gen, char *errstr, size_t errstr_size)
{
        char path[4096];
        int fd;

        if (idfile_path(lg, kind, gen, path, sizeof(path), errstr,
                        errstr_size))
                return -1;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                snprintf(errstr, errstr_size, "cannot read ledger ids %s: %s",
                         path, strerror(errno));
        return fd;
}

int ledger_idfile_pread_fd(int fd, size_t at, unsigned char *buf, size_t want)
{
        size_t done = 0;

        while (done < want) {
                ssize_t n = pread(fd, buf + done, want - done,
                                  (off_t)(at + done));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        if (!n)
                                errno = EIO; /* shorter than its row says */
                        return -1;
                }
                done += (size_t)n;
        }
        return 0;
}

int ledger_idfile_pread(const struct ledger *lg, enum ledger_idfile_kind kind,
                        uint64_t gen, size_t at, unsigned char *buf,
                        size_t want, char *errstr, size_t errstr_size)
{
        int fd = ledger_idfile_open(lg, kind, gen, errstr, errstr_size);

        if (fd < 0)
                return -1;
        if (ledger_idfile_pread_fd(fd, at, buf, want)) {
                snprintf(errstr, errstr_size,
                         "cannot read ledger ids %s/%llu%s: %s", lg->ids_dir,
                         (unsigned long long)gen, idfile_suffix[kind],
                         strerror(errno));
                close(fd);
                return -1;
        }
        close(fd);
        return 0;
}

int ledger_idfile_drop(struct ledger *lg, uint64_t gen)
{
        struct ledger_idfile *f = idfile_of(lg, gen);

        /* One not among the loaded windows' (another topic's, a stale
         * key's, or in chunks) is unlinked after the commit all the same:
         * an unnamed entry, forgotten if the transaction rolls back. */
        if (!f && !(f = idfile_add(lg, gen, 0, 0, NULL)))
                return -1;
        f->dropped = 1;
        return 0;
}

static void ledger_idfiles_txn_end(struct ledger *lg, int committed)
{
        char path[4096];
        size_t i, k;

        for (i = k = 0; i < lg->nidf; i++) {
                struct ledger_idfile *f = &lg->idf[i];
                if (!f->dropped) {
                        lg->idf[k++] = *f;
                        continue;
                }
                if (!committed && f->named) {
                        f->dropped = 0;
                        lg->idf[k++] = *f;
                        continue;
                }
                free(f->lo);
                if (!committed)
                        continue;
                /* A file left behind (unlink failed) is swept at the next
                 * load: no row names it any more. */
                if (!idfile_path(lg, LEDGER_IDFILE_IDS, f->gen, path,
                                 sizeof(path), NULL, 0))
                        (void)unlink(path);
        }
        lg->nidf = k;
}

/* The generation number of a file name "<gen><kind's suffix>", or 0. */
static uint64_t idfile_gen(const char *name, enum ledger_idfile_kind kind)
{
        size_t len = strlen(name), sl = strlen(idfile_suffix[kind]);
        char digits[24];
        uint64_t gen;

        if (len <= sl || len - sl >= sizeof(digits) ||
            strcmp(name + len - sl, idfile_suffix[kind]))
                return 0;
        memcpy(digits, name, len - sl);
        digits[len - sl] = '\0';
        return kconf_parse_u64(digits, 1, INT64_MAX, &gen) ? 0 : gen;
}

int ledger_idfiles_sweep(struct ledger *lg, enum ledger_idfile_kind kind,
                         char *errstr, size_t errstr_size)
{
        static const char *const named[] = {
            "SELECT 1 FROM msgid_gens WHERE gen = ?1 AND file_bytes IS NOT "
            "NULL",
            "SELECT 1 FROM flow_gens WHERE gen = ?1",
            "SELECT 1 FROM flow_log WHERE log = ?1",
        };
        sqlite3_stmt *st = NULL;
        char path[4096];
        struct dirent *de;
        DIR *d;
        int src, rc = -1;

        if (ledger_prepare(lg, named[kind], &st, errstr, errstr_size))
                return -1;
        d = opendir(lg->ids_dir);
        if (!d) {
                snprintf(errstr, errstr_size, "cannot read %s: %s",
                         lg->ids_dir, strerror(errno));
                goto out;
        }
        while ((de = readdir(d))) {
                uint64_t gen = idfile_gen(de->d_name, kind);
                if (!gen)
                        continue;
                if (sqlite3_bind_int64(st, 1, (int64_t)gen) != SQLITE_OK) {
                        ledger_err(lg, "cannot read ledger id windows", errstr,
                                   errstr_size);
                        goto out;
                }
                src = sqlite3_step(st);
                sqlite3_reset(st);
                if (src == SQLITE_ROW)
                        continue;
                if (src != SQLITE_DONE) {
                        ledger_err(lg, "cannot read ledger id windows", errstr,
                                   errstr_size);
                        goto out;
                }
                if (!idfile_path(lg, kind, gen, path, sizeof(path), NULL, 0) &&
                    unlink(path) && errno != ENOENT) {
                        snprintf(errstr, errstr_size, "cannot remove %s: %s",
                                 path, strerror(errno));
                        goto out;
                }
        }
        rc = 0;
out:
        if (d)
                closedir(d);
        sqlite3_finalize(st);
        return rc;
}

void ledger_idfiles_free(struct ledger *lg)
{
        size_t i;

        for (i = 0; i < lg->nidf; i++)
                free(lg->idf[i].lo);
        free(lg->idf);
        lg->idf = NULL;
        lg->nidf = lg->idf_cap = 0;
}

void ledger_remove(const char *path)
{
        static const char *const suffix[] = {"", "-wal", "-shm", "-lock",
                                             "-journal"};
        char p[4096], f[4096 + 300];
        struct dirent *de;
        size_t i;
        DIR *d;

        for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++)
                if (snprintf(p, sizeof(p), "%s%s", path, suffix[i]) <
                    (int)sizeof(p))
                        unlink(p);
        if (snprintf(p, sizeof(p), "%s-ids", path) >= (int)sizeof(p))
                return;
        d = opendir(p);
        if (!d)
                return;
        while ((de = readdir(d))) {
                if (!idfile_gen(de->d_name, LEDGER_IDFILE_IDS) &&
                    !idfile_gen(de->d_name, LEDGER_IDFILE_FLOW))
                        continue;
                snprintf(f, sizeof(f), "%s/%s", p, de->d_name);
                unlink(f);
        }
        closedir(d);
        rmdir(p);
}

/* Runs one of the prepared transaction statements.  The transactions'
 * ends live here because they settle the files: a commit unlinks what it
 * dropped, a rollback keeps it. */
int ledger_txn(struct ledger *lg, enum ledger_stmt which, const char *what,
               char *errstr, size_t errstr_size)
{
        if (ledger_step_done(lg, lg->st[which], SQLITE_OK, what, errstr,
                             errstr_size))
                return -1;
        if (which == LEDGER_ST_COMMIT)
                ledger_idfiles_txn_end(lg, 1);
        return 0;
}

/* Ends a failed transaction, if one is open; errors are already said. */
void ledger_rollback(struct ledger *lg)
{
        if (!sqlite3_get_autocommit(lg->db))
                sqlite3_exec(lg->db, "ROLLBACK", NULL, NULL, NULL);
        /* After a COMMIT nothing is dropped any more; otherwise what the
         * transaction dropped stays (a failed COMMIT may have rolled back
         * by itself). */
        ledger_idfiles_txn_end(lg, 0);
}
