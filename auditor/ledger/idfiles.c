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
 * mapped at its first lookup (a lookup is rare: a filter's "maybe" for a
 * closed generation); readers map a file for one lookup.
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

#include "internal.h"

/* "<dir>/<gen>.ids" into buf; -1 if it does not fit. */
static int idfile_path(const struct ledger *lg, uint64_t gen, char *buf,
                       size_t size)
{
        int n = snprintf(buf, size, "%s/%llu.ids", lg->ids_dir,
                         (unsigned long long)gen);

        return n < 0 || (size_t)n >= size ? -1 : 0;
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

/* An entry for gen (named: its row names its file). */
static struct ledger_idfile *idfile_add(struct ledger *lg, uint64_t gen,
                                        size_t bytes, int named)
{
        struct ledger_idfile *f = idfile_of(lg, gen);

        if (f) {
                if (f->map)
                        munmap(f->map, f->bytes);
                f->map = NULL;
                f->bytes = bytes;
                f->named = named;
                return f;
        }
        if (lg->nidf == lg->idf_cap) {
                size_t ncap = lg->idf_cap ? lg->idf_cap * 2 : 32;
                struct ledger_idfile *n =
                        realloc(lg->idf, ncap * sizeof(*n));
                if (!n)
                        return NULL;
                lg->idf = n;
                lg->idf_cap = ncap;
        }
        f = &lg->idf[lg->nidf++];
        memset(f, 0, sizeof(*f));
        f->gen = gen;
        f->bytes = bytes;
        f->named = named;
        return f;
}

int ledger_idfile_add(struct ledger *lg, uint64_t gen, size_t bytes)
{
        return idfile_add(lg, gen, bytes, 1) ? 0 : -1;
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

int ledger_idfile_write(struct ledger *lg, uint64_t gen,
                        const unsigned char *blob, size_t len, char *errstr,
                        size_t errstr_size)
{
        char path[4096];
        size_t done = 0;
        int fd = -1, rc = -1;

        if (idfile_path(lg, gen, path, sizeof(path))) {
                snprintf(errstr, errstr_size, "ledger id directory %s: %s",
                         lg->ids_dir, strerror(ENAMETOOLONG));
                return -1;
        }
        /* A leftover of the same number (written, its commit never made)
         * is overwritten. */
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                goto fail;
        while (done < len) {
                ssize_t n = write(fd, blob + done, len - done);
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
        if (dir_sync(lg, errstr, errstr_size))
                return -1;
        if (!idfile_add(lg, gen, len, 1)) {
                snprintf(errstr, errstr_size, "cannot write ledger ids: %s",
                         strerror(ENOMEM));
                return -1;
        }
        return 0;
fail:
        snprintf(errstr, errstr_size, "cannot write ledger ids to %s: %s",
                 path, strerror(errno));
        if (fd >= 0)
                close(fd);
        return -1;
}

/* Maps gen's file, which must be bytes long (> 0), read-only. */
static void *idfile_map(const struct ledger *lg, uint64_t gen, size_t bytes,
                        char *errstr, size_t errstr_size)
{
        char path[4096];
        struct stat sb;
        void *map = NULL;
        int fd;

        if (idfile_path(lg, gen, path, sizeof(path))) {
                snprintf(errstr, errstr_size, "ledger id directory %s: %s",
                         lg->ids_dir, strerror(ENAMETOOLONG));
                return NULL;
        }
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
        if (bytes && !(*map = idfile_map(lg, gen, bytes, errstr,
                                          errstr_size)))
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
        struct ledger_entries v;

        if (!f || !f->named) {
                snprintf(errstr, errstr_size,
                         "id generation %llu has no file in %s",
                         (unsigned long long)gen, lg->ids_dir);
                return -1;
        }
        if (!f->bytes)
                return 0;
        if (!f->map &&
            !(f->map = idfile_map(lg, gen, f->bytes, errstr, errstr_size)))
                return -1;
        if (ledger_entries_view(f->map, f->bytes, &v)) {
                snprintf(errstr, errstr_size,
                         "ledger ids %s/%llu.ids: in neither packed format",
                         lg->ids_dir, (unsigned long long)gen);
                return -1;
        }
        return ledger_entries_find(&v, 1, id, partition, offset);
}

int ledger_idfile_drop(struct ledger *lg, uint64_t gen)
{
        struct ledger_idfile *f = idfile_of(lg, gen);

        /* One not among the loaded windows' (another topic's, a stale
         * key's, or in chunks) is unlinked after the commit all the same:
         * an unnamed entry, forgotten if the transaction rolls back. */
        if (!f && !(f = idfile_add(lg, gen, 0, 0)))
                return -1;
        f->dropped = 1;
        return 0;
}

void ledger_idfiles_txn_end(struct ledger *lg, int committed)
{
        char path[4096];
        size_t i, k;

        for (i = k = 0; i < lg->nidf; i++) {
                struct ledger_idfile *f = &lg->idf[i];
                if (!f->dropped) {
                        lg->idf[k++] = *f;
                        continue;
                }
                if (!committed) {
                        f->dropped = 0;
                        if (f->named)
                                lg->idf[k++] = *f;
                        continue;
                }
                if (f->map)
                        munmap(f->map, f->bytes);
                /* A file left behind (unlink failed) is swept at the next
                 * load: no row names it any more. */
                if (!idfile_path(lg, f->gen, path, sizeof(path)))
                        (void)unlink(path);
        }
        lg->nidf = k;
}

/* The generation number of a file name "<gen>.ids", or 0. */
static uint64_t idfile_gen(const char *name)
{
        uint64_t gen = 0;
        const char *p;

        for (p = name; *p >= '0' && *p <= '9'; p++) {
                if (gen > (UINT64_MAX - 9) / 10)
                        return 0;
                gen = gen * 10 + (uint64_t)(*p - '0');
        }
        return p != name && !strcmp(p, ".ids") ? gen : 0;
}

int ledger_idfiles_sweep(struct ledger *lg, char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        char path[4096];
        struct dirent *de;
        DIR *d;
        int src, rc = -1;

        if (ledger_prepare(lg,
                           "SELECT 1 FROM msgid_gens WHERE gen = ?1 AND "
                           "file_bytes IS NOT NULL",
                           &st, errstr, errstr_size))
                return -1;
        d = opendir(lg->ids_dir);
        if (!d) {
                snprintf(errstr, errstr_size, "cannot read %s: %s",
                         lg->ids_dir, strerror(errno));
                goto out;
        }
        while ((de = readdir(d))) {
                uint64_t gen = idfile_gen(de->d_name);
                if (!gen || gen > INT64_MAX)
                        continue;
                if (sqlite3_bind_int64(st, 1, (int64_t)gen) != SQLITE_OK) {
                        ledger_err(lg, "cannot read ledger id windows",
                                   errstr, errstr_size);
                        goto out;
                }
                src = sqlite3_step(st);
                sqlite3_reset(st);
                if (src == SQLITE_ROW)
                        continue;
                if (src != SQLITE_DONE) {
                        ledger_err(lg, "cannot read ledger id windows",
                                   errstr, errstr_size);
                        goto out;
                }
                if (!idfile_path(lg, gen, path, sizeof(path)) &&
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
                if (lg->idf[i].map)
                        munmap(lg->idf[i].map, lg->idf[i].bytes);
        free(lg->idf);
        lg->idf = NULL;
        lg->nidf = lg->idf_cap = 0;
}
