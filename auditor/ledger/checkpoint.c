/*
 * checkpoint.c - the writer's WAL checkpoints, on a thread of their own.
 *
 * SQLite's automatic checkpoint runs inside the COMMIT that crosses its
 * threshold, on the committing thread: it syncs the WAL, copies its pages
 * into the database and syncs that.  In a scan that was a quarter of the
 * ledger commit's CPU (and its waits for the disk besides), time the
 * consumer thread spent waiting at the commit join (loop.c).  Here the
 * writer's WAL hook only wakes a thread that runs a PASSIVE checkpoint on
 * its own connection to the same file: the same copy, which SQLite runs
 * alongside the writer's next commits (they append to the WAL past the
 * frames being copied), and which never waits for readers or the writer.
 * Durability is unchanged: a commit is in the WAL when COMMIT returns,
 * whoever copies it later.  Without the thread (it could not start),
 * SQLite's own checkpoint in the COMMIT stays, as before.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "../../base/log.h"
#include "internal.h"

/* WAL pages after which a checkpoint starts: 32 MB of 4 KiB pages (the
 * autocheckpoint threshold open.c sets; see there why that size). */
#define LEDGER_CKPT_PAGES 8192
/* A WAL starts again from its beginning only at a write after a
 * checkpoint that copied all of it, which commits faster than the copies
 * never leave: past this many pages, the commit waits for a checkpoint of
 * everything it wrote, as SQLite's own did in every commit that crossed
 * the threshold. */
#define LEDGER_CKPT_PAGES_MAX (2 * LEDGER_CKPT_PAGES)

struct ledger_ckpt {
        pthread_t thr;
        pthread_mutex_t mu;
        pthread_cond_t cv;
        sqlite3 *db; /* the checkpointer's own connection */
        pthread_cond_t done_cv;
        int wanted;  /* the WAL crossed LEDGER_CKPT_PAGES since the last */
        uint64_t started, done; /* checkpoints begun, ended */
        int stop;
        int failing; /* the last checkpoint failed (logged once) */
};

static void *ledger_ckpt_main(void *opaque)
{
        struct ledger_ckpt *c = opaque;

        pthread_mutex_lock(&c->mu);
        for (;;) {
                int rc;

                while (!c->wanted && !c->stop)
                        pthread_cond_wait(&c->cv, &c->mu);
                if (c->stop)
                        break;
                c->wanted = 0;
                c->started++;
                pthread_mutex_unlock(&c->mu);
                rc = sqlite3_wal_checkpoint_v2(c->db, NULL,
                                               SQLITE_CHECKPOINT_PASSIVE,
                                               NULL, NULL);
                /* BUSY: another checkpoint runs (the final one of a
                 * closing reader); the next commit asks again. */
                if (rc != SQLITE_OK && rc != SQLITE_BUSY && !c->failing)
                        log_warn("ledger checkpoint failed: %s (the WAL "
                                 "grows until one succeeds)",
                                 sqlite3_errmsg(c->db));
                else if (rc == SQLITE_OK && c->failing)
                        log_info("ledger checkpoint succeeded again");
                c->failing = rc != SQLITE_OK && rc != SQLITE_BUSY;
                pthread_mutex_lock(&c->mu);
                c->done++;
                pthread_cond_broadcast(&c->done_cv);
        }
        pthread_mutex_unlock(&c->mu);
        return NULL;
}

/* sqlite3_wal_hook: after each commit of the writer, with the WAL's
 * length in pages. */
static int ledger_ckpt_hook(void *opaque, sqlite3 *db, const char *name,
                            int pages)
{
        struct ledger_ckpt *c = opaque;
        uint64_t mine;

        (void)db;
        (void)name;
        if (pages < LEDGER_CKPT_PAGES)
                return SQLITE_OK;
        pthread_mutex_lock(&c->mu);
        c->wanted = 1;
        pthread_cond_signal(&c->cv);
        /* The checkpoint that starts after this commit copies it. */
        mine = c->started + 1;
        while (pages >= LEDGER_CKPT_PAGES_MAX && c->done < mine && !c->stop)
                pthread_cond_wait(&c->done_cv, &c->mu);
        pthread_mutex_unlock(&c->mu);
        return SQLITE_OK;
}

void ledger_ckpt_start(struct ledger *lg, const char *path)
{
        struct ledger_ckpt *c = calloc(1, sizeof(*c));

        if (!c)
                return;
        if (sqlite3_open_v2(path, &c->db,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                            NULL) !=
                    SQLITE_OK ||
            sqlite3_exec(c->db, "PRAGMA synchronous = NORMAL", NULL, NULL,
                         NULL) != SQLITE_OK)
                goto fail;
        if (pthread_mutex_init(&c->mu, NULL))
                goto fail;
        if (pthread_cond_init(&c->cv, NULL)) {
                pthread_mutex_destroy(&c->mu);
                goto fail;
        }
        if (pthread_cond_init(&c->done_cv, NULL)) {
                pthread_cond_destroy(&c->cv);
                pthread_mutex_destroy(&c->mu);
                goto fail;
        }
        if (pthread_create(&c->thr, NULL, ledger_ckpt_main, c)) {
                pthread_cond_destroy(&c->done_cv);
                pthread_cond_destroy(&c->cv);
                pthread_mutex_destroy(&c->mu);
                goto fail;
        }
        /* Replaces SQLite's automatic checkpoint (itself a WAL hook). */
        sqlite3_wal_hook(lg->db, ledger_ckpt_hook, c);
        lg->ckpt = c;
        return;
fail:
        log_debug("ledger checkpoints stay in the commit: no checkpoint "
                  "thread (%s)",
                  c->db ? sqlite3_errmsg(c->db) : "out of memory");
        sqlite3_close(c->db);
        free(c);
}

void ledger_ckpt_stop(struct ledger *lg)
{
        struct ledger_ckpt *c = lg->ckpt;

        if (!c)
                return;
        sqlite3_wal_hook(lg->db, NULL, NULL);
        pthread_mutex_lock(&c->mu);
        c->stop = 1;
        pthread_cond_signal(&c->cv);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->thr, NULL);
        pthread_cond_destroy(&c->done_cv);
        pthread_cond_destroy(&c->cv);
        pthread_mutex_destroy(&c->mu);
        /* First: the writer's close, the last connection, then
         * checkpoints all of the WAL and removes it (open.c). */
        sqlite3_close(c->db);
        free(c);
        lg->ckpt = NULL;
}
