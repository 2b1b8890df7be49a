/*
 * readers.c - the pool of read-only ledger connections (see internal.h).
 * A request takes one for its duration; at most one per worker thread is
 * in use, and a connection stays open for the next request unless a query
 * on it failed.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

void http_readers_init(struct http_readers *rs, const char *db_path, size_t n)
{
        memset(rs, 0, sizeof(*rs));
        rs->db_path = db_path;
        rs->n = n < HTTP_READERS_MAX ? n : HTTP_READERS_MAX;
        pthread_mutex_init(&rs->lock, NULL);
}

void http_readers_close(struct http_readers *rs)
{
        size_t i;

        for (i = 0; i < HTTP_READERS_MAX; i++) {
                ledger_close(rs->r[i].lg);
                rs->r[i].lg = NULL;
        }
        pthread_mutex_destroy(&rs->lock);
}

struct ledger *http_reader_get(struct http_readers *rs, char *errstr,
                               size_t errstr_size)
{
        struct http_reader *r = NULL;
        size_t i;

        pthread_mutex_lock(&rs->lock);
        /* An open one first: opening costs a file open and a query. */
        for (i = 0; i < rs->n; i++) {
                if (!rs->r[i].busy && (!r || (!r->lg && rs->r[i].lg)))
                        r = &rs->r[i];
        }
        if (r)
                r->busy = 1;
        pthread_mutex_unlock(&rs->lock);
        if (!r) {
                snprintf(errstr, errstr_size, "all ledger readers are busy");
                return NULL;
        }
        if (!r->lg) {
                /* Opened outside the lock; published under it, as
                 * http_reader_put() looks at every slot. */
                struct ledger *lg = NULL;
                int failed = ledger_open_reader(&lg, rs->db_path, errstr,
                                                errstr_size);
                pthread_mutex_lock(&rs->lock);
                if (failed)
                        r->busy = 0;
                else
                        r->lg = lg;
                pthread_mutex_unlock(&rs->lock);
                if (failed)
                        return NULL;
        }
        return r->lg;
}

void http_reader_put(struct http_readers *rs, struct ledger *lg, int broken)
{
        size_t i;

        if (!lg)
                return;
        pthread_mutex_lock(&rs->lock);
        for (i = 0; i < rs->n; i++) {
                if (rs->r[i].lg != lg)
                        continue;
                if (broken)
                        rs->r[i].lg = NULL;
                rs->r[i].busy = 0;
                break;
        }
        pthread_mutex_unlock(&rs->lock);
        if (broken)
                ledger_close(lg);
}
