/*
 * pool.h - the audit's helper threads (--threads N: N - 1 helpers and the
 * consumer thread).  Not part of the API; include it only from
 * auditor/audit/ (and its unit test).
 *
 * One job at a time: items [0, n) cut into chunks of `chunk` items, each
 * chunk handed to fn() exactly once, by a helper or by the caller.  The
 * caller starts a job, then goes through the items in order and, before
 * it reads item i's result, calls audit_pool_wait(p, i + 1): that returns
 * once every chunk holding an item below i + 1 is done, and while it
 * waits the caller runs still unclaimed chunks below that bound itself,
 * so that a job progresses even when the helpers get no CPU.  Items at or
 * past `wait_max` (audit_pool_start) are chunks the caller never waits
 * for one by one, only through audit_pool_finish() (the audit destroys
 * the previous batch's messages there).
 *
 * Ordering: fn()'s writes to a chunk's items happen before
 * audit_pool_wait() / audit_pool_done() report the chunk done (release /
 * acquire).  The caller must not touch the job's items or start another
 * job before audit_pool_finish(); fn must not touch what the caller
 * changes meanwhile.
 *
 * Chunks are claimed through one atomic counter that carries the job's
 * number, so that a helper that wakes late, after its job has ended,
 * claims nothing of the next one.
 */
#ifndef EOSAUDIT_AUDIT_POOL_H
#define EOSAUDIT_AUDIT_POOL_H

#include <stddef.h>

struct audit_pool;

/* Items [begin, end) of the current job. */
typedef void audit_pool_fn(void *opaque, size_t begin, size_t end);

/* A pool of `helpers` threads (0: none; every chunk then runs on the
 * caller).  NULL with errstr on failure. */
struct audit_pool *audit_pool_new(unsigned helpers, char *errstr,
                                  size_t errstr_size);

/* Finishes the current job, stops and joins the helpers.  NULL: no-op. */
void audit_pool_free(struct audit_pool *p);

unsigned audit_pool_helpers(const struct audit_pool *p);

/* Starts a job (the previous one must be finished): fn(opaque, b, e) over
 * [0, n) in chunks of `chunk` (> 0) items; the chunks at or past
 * wait_max (<= n) are only waited for by audit_pool_finish().  Returns 0,
 * or -1 when out of memory (nothing started: run fn yourself). */
int audit_pool_start(struct audit_pool *p, audit_pool_fn *fn, void *opaque,
                     size_t n, size_t chunk, size_t wait_max);

/* Returns once every item below upto (<= wait_max) is done, running
 * unclaimed chunks below it meanwhile. */
void audit_pool_wait(struct audit_pool *p, size_t upto);

/* Whether item i's chunk is done (no waiting). */
int audit_pool_done(const struct audit_pool *p, size_t i);

/* Returns once the whole job is done, running unclaimed chunks itself.
 * No job: returns at once. */
void audit_pool_finish(struct audit_pool *p);

#endif /* EOSAUDIT_AUDIT_POOL_H */
