/*
 * test_files.h - removing a test's SQLite ledger: the file and the
 * companions SQLite may leave beside it (WAL, shared memory, the lock
 * file, a rollback journal).  Shared by the test fixtures, which each
 * wrote this loop before.
 */
#ifndef EOSAUDIT_TEST_FILES_H
#define EOSAUDIT_TEST_FILES_H

#include <stdio.h>
#include <unistd.h>

static inline void test_db_remove(const char *db)
{
        static const char *const sfx[] = {"", "-wal", "-shm", "-lock",
                                          "-journal"};
        char p[512];
        size_t i;

        for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
                snprintf(p, sizeof(p), "%s%s", db, sfx[i]);
                unlink(p);
        }
}

#endif
