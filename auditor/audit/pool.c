/*
 * pool.c - the audit's helper threads: see pool.h.
 */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a thread needs of the job to run its chunks: copied under mu. */
struct pool_job {
        uint32_t gen;
        audit_pool_fn *fn;
        void *opaque;
        size_t n, chunk, wait_max;
        size_t nwait;   /* chunks of [0, wait_max) */
        size_t nchunks; /* nwait + the chunks of [wait_max, n) */
        _Atomic uint32_t *done;
};

struct audit_pool {
        pthread_mutex_t mu;
        pthread_cond_t cv;
        pthread_cond_t done_cv; /* a chunk is done, for a caller that
                                    sleeps in pool_wait_chunks() */
        _Atomic int sleeping;   /* the caller sleeps (or is about to) */
        pthread_t *th;
        unsigned nth;
        int stop;            /* under mu */
        struct pool_job job; /* under mu; gen 0: none yet */
        size_t done_cap;
        /* job.gen << 32 | the next chunk to claim */
        _Atomic uint64_t next;
        /* The caller's own: a job is started and not finished; the
         * chunks of [0, wait_max) known done, from 0. */
        int active;
        size_t waited;
};

static void pool_bounds(const struct pool_job *j, size_t c, size_t *b,
                        size_t *e)
{
        if (c < j->nwait) {
                *b = c * j->chunk;
                *e = *b + j->chunk < j->wait_max ? *b + j->chunk : j->wait_max;
        } else {
                *b = j->wait_max + (c - j->nwait) * j->chunk;
                *e = *b + j->chunk < j->n ? *b + j->chunk : j->n;
        }
}

/* Claims the next chunk of job gen if it is below limit. */
static int pool_claim(struct audit_pool *p, uint32_t gen, size_t limit,
                      size_t *c)
{
        uint64_t cur = atomic_load_explicit(&p->next, memory_order_acquire);

        for (;;) {
                if ((uint32_t)(cur >> 32) != gen || (uint32_t)cur >= limit)
                        return 0;
                if (atomic_compare_exchange_weak_explicit(
                        &p->next, &cur, cur + 1, memory_order_acq_rel,
                        memory_order_acquire)) {
                        *c = (uint32_t)cur;
                        return 1;
                }
        }
}

static void pool_run(const struct pool_job *j, size_t c)
{
        size_t b, e;

        pool_bounds(j, c, &b, &e);
        j->fn(j->opaque, b, e);
        /* seq_cst, against the caller's store of sleeping and load of
         * done (pool_sleep): one of the two sees the other. */
        atomic_store(&j->done[c], j->gen);
}

/* After a helper's chunk: wakes the caller if it sleeps. */
static void pool_wake(struct audit_pool *p)
{
        if (atomic_load(&p->sleeping)) {
                pthread_mutex_lock(&p->mu);
                pthread_cond_broadcast(&p->done_cv);
                pthread_mutex_unlock(&p->mu);
        }
}

static void *pool_thread(void *arg)
{
        struct audit_pool *p = arg;
        struct pool_job j;
        uint32_t seen = 0;
        size_t c;

        /* Told apart from the consumer thread in top and perf. */
        pthread_setname_np(pthread_self(), "eosaudit-help");
        pthread_mutex_lock(&p->mu);
        for (;;) {
                while (!p->stop && p->job.gen == seen)
                        pthread_cond_wait(&p->cv, &p->mu);
                if (p->stop)
                        break;
                j = p->job;
                seen = j.gen;
                pthread_mutex_unlock(&p->mu);
                while (pool_claim(p, j.gen, j.nchunks, &c)) {
                        pool_run(&j, c);
                        pool_wake(p);
                }
                pthread_mutex_lock(&p->mu);
        }
        pthread_mutex_unlock(&p->mu);
        return NULL;
}

struct audit_pool *audit_pool_new(unsigned helpers, char *errstr,
                                  size_t errstr_size)
{
        struct audit_pool *p = calloc(1, sizeof(*p));
        unsigned i;
        int err;

        if (!p || (helpers && !(p->th = calloc(helpers, sizeof(*p->th))))) {
                snprintf(errstr, errstr_size, "out of memory");
                free(p);
                return NULL;
        }
        pthread_mutex_init(&p->mu, NULL);
        pthread_cond_init(&p->cv, NULL);
        pthread_cond_init(&p->done_cv, NULL);
        atomic_init(&p->sleeping, 0);
        atomic_init(&p->next, 0);
        for (i = 0; i < helpers; i++) {
                err = pthread_create(&p->th[i], NULL, pool_thread, p);
                if (err) {
                        snprintf(errstr, errstr_size,
                                 "cannot start audit thread %u: %s", i + 1,
                                 strerror(err));
                        audit_pool_free(p);
                        return NULL;
                }
                p->nth++;
        }
        return p;
}

void audit_pool_free(struct audit_pool *p)
{
        unsigned i;

        if (!p)
                return;
        audit_pool_finish(p);
        pthread_mutex_lock(&p->mu);
        p->stop = 1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        for (i = 0; i < p->nth; i++)
                pthread_join(p->th[i], NULL);
        pthread_cond_destroy(&p->cv);
        pthread_cond_destroy(&p->done_cv);
        pthread_mutex_destroy(&p->mu);
        free(p->job.done);
        free(p->th);
        free(p);
}

unsigned audit_pool_helpers(const struct audit_pool *p)
{
        return p->nth;
}

int audit_pool_start(struct audit_pool *p, audit_pool_fn *fn, void *opaque,
                     size_t n, size_t chunk, size_t wait_max)
{
        size_t nwait, nchunks, i;
        uint32_t gen;

        audit_pool_finish(p);
        if (!chunk || wait_max > n)
                return -1;
        nwait = (wait_max + chunk - 1) / chunk;
        nchunks = nwait + (n - wait_max + chunk - 1) / chunk;
        if (nchunks >= UINT32_MAX)
                return -1;
        /* No chunk of an earlier job runs now: done may move. */
        if (nchunks > p->done_cap) {
                size_t cap = nchunks < 64 ? 64 : nchunks;
                _Atomic uint32_t *d = malloc(cap * sizeof(*d));
                if (!d)
                        return -1;
                for (i = 0; i < cap; i++)
                        atomic_init(&d[i], 0);
                pthread_mutex_lock(&p->mu);
                free(p->job.done);
                p->job.done = d;
                pthread_mutex_unlock(&p->mu);
                p->done_cap = cap;
        }
        pthread_mutex_lock(&p->mu);
        gen = p->job.gen + 1;
        if (!gen) {
                /* After 2^32 jobs: done[] may hold any number; clear. */
                for (i = 0; i < p->done_cap; i++)
                        atomic_store_explicit(&p->job.done[i], 0,
                                              memory_order_relaxed);
                gen = 1;
        }
        p->job.gen = gen;
        p->job.fn = fn;
        p->job.opaque = opaque;
        p->job.n = n;
        p->job.chunk = chunk;
        p->job.wait_max = wait_max;
        p->job.nwait = nwait;
        p->job.nchunks = nchunks;
        atomic_store_explicit(&p->next, (uint64_t)gen << 32,
                              memory_order_release);
        /* One chunk is the caller's: waking helpers for it costs more
         * than it saves (the small batches of a live topic). */
        if (nchunks > 1)
                pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        p->active = 1;
        p->waited = 0;
        return 0;
}

/* Sleeps until chunk c is done (a helper runs it, pool_wake()): on a
 * machine with more threads than cores, spinning or yielding would take
 * the CPU the helper needs and cost a system call per turn. */
static void pool_sleep(struct audit_pool *p, size_t c)
{
        const struct pool_job *j = &p->job;

        pthread_mutex_lock(&p->mu);
        atomic_store(&p->sleeping, 1);
        while (atomic_load(&j->done[c]) != j->gen)
                pthread_cond_wait(&p->done_cv, &p->mu);
        atomic_store(&p->sleeping, 0);
        pthread_mutex_unlock(&p->mu);
}

/* Until chunks [from, to) are done, running unclaimed ones below to. */
static void pool_wait_chunks(struct audit_pool *p, size_t from, size_t to)
{
        const struct pool_job *j = &p->job; /* the caller writes it */
        unsigned spins = 0;
        size_t c = from, k;

        while (c < to) {
                if (atomic_load_explicit(&j->done[c], memory_order_acquire) ==
                    j->gen) {
                        c++;
                        continue;
                }
                if (pool_claim(p, j->gen, to, &k)) {
                        pool_run(j, k);
                        spins = 0;
                        continue;
                }
                /* A helper runs chunk c, a short one: spin a little,
                 * then sleep until it is done. */
                if (++spins < 200) {
#if defined(__x86_64__) || defined(__i386__)
                        __builtin_ia32_pause();
#endif
                } else {
                        pool_sleep(p, c);
                        spins = 0;
                }
        }
}

void audit_pool_wait(struct audit_pool *p, size_t upto)
{
        size_t to;

        if (!p->active || !upto)
                return;
        to = (upto - 1) / p->job.chunk + 1;
        if (to > p->job.nwait)
                to = p->job.nwait;
        if (to <= p->waited)
                return;
        pool_wait_chunks(p, p->waited, to);
        p->waited = to;
}

int audit_pool_done(const struct audit_pool *p, size_t i)
{
        size_t c;

        if (!p->active || i >= p->job.wait_max)
                return 0;
        c = i / p->job.chunk;
        return c < p->waited ||
               atomic_load_explicit(&p->job.done[c], memory_order_acquire) ==
                   p->job.gen;
}

void audit_pool_finish(struct audit_pool *p)
{
        if (!p->active)
                return;
        pool_wait_chunks(p, 0, p->job.nchunks);
        p->active = 0;
}
