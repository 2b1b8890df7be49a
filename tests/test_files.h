/*
 * test_files.h - removing a test's SQLite ledger: the file and the
 * companions SQLite may leave beside it (WAL, shared memory, the lock
 * file, a rollback journal) and the directory of its id files.  Shared by
 * the test fixtures, which each wrote this loop before.
 */
#ifndef EOSAUDIT_TEST_FILES_H
#define EOSAUDIT_TEST_FILES_H

#include <dirent.h>
#include <stdio.h>
#include <unistd.h>

static inline void test_db_remove(const char *db)
{
        static const char *const sfx[] = {"", "-wal", "-shm", "-lock",
                                          "-journal"};
        char p[512], f[1024];
        struct dirent *de;
        size_t i;
        DIR *d;

        for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
                snprintf(p, sizeof(p), "%s%s", db, sfx[i]);
                unlink(p);
        }
        /* The closed id generations' files (auditor/ledger/idfiles.c). */
        snprintf(p, sizeof(p), "%s-ids", db);
        d = opendir(p);
        while (d && (de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                snprintf(f, sizeof(f), "%s/%s", p, de->d_name);
                unlink(f);
        }
        if (d)
                closedir(d);
        rmdir(p);
}

#endif
