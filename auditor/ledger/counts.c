/*
 * counts.c - the summary's counts (schema/0005_counts.sql: pairs, distinct
 * producers, open gaps, coverage gaps per topic; distinct producers in
 * all), kept by ledger_commit() in the batch's own transaction, so that
 * ledger_summary() reads them instead of counting a million rows.
 *
 * commit.c knows from sqlite3_changes() whether it inserted or deleted a
 * pair, open gap or coverage gap; it adds that to a per-part delta and
 * calls ledger_counts_pair() for a pair (whose producer may be new to the
 * topic, or leave it), which sums them per (topic, producer).
 * ledger_counts_flush() writes the sums and the deltas at the end of the
 * batch: one statement per (topic, producer) and per topic touched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Runs st bound to the (topic?, producer) key and the step n;
 * *changed receives sqlite3_changes(). */
static int ledger_counts_step(struct ledger *lg, enum ledger_stmt which,
                              const char *topic, const char *producer,
                              size_t producer_len, int64_t n, int *changed,
                              char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = lg->st[which];
        int i = 1, brc = SQLITE_OK;

        if (topic)
                brc |= sqlite3_bind_text(st, i++, topic, -1, SQLITE_STATIC);
        brc |= sqlite3_bind_text(st, i++, producer, (int)producer_len,
                                 SQLITE_STATIC);
        brc |= sqlite3_bind_int64(st, i, n);
        if (ledger_step_done(lg, st, brc, "cannot write ledger counts", errstr,
                             errstr_size))
                return -1;
        *changed = sqlite3_changes(lg->db);
        return 0;
}

/* n (not 0) more or fewer pairs of producer in topic (NULL: n more or
 * fewer topics of producer, counts_producer): returns 1 when the
 * producer's row appeared or went, 0 when it only changed, -1 on error. */
static int ledger_counts_ref(struct ledger *lg, int64_t n, const char *topic,
                             const char *producer, size_t producer_len,
                             char *errstr, size_t errstr_size)
{
        enum ledger_stmt ins = topic ? LEDGER_ST_CTP_ADD : LEDGER_ST_CP_ADD;
        enum ledger_stmt inc = topic ? LEDGER_ST_CTP_INC : LEDGER_ST_CP_INC;
        enum ledger_stmt del = topic ? LEDGER_ST_CTP_DEL : LEDGER_ST_CP_DEL;
        int changed;

        /* Adding, the producer is usually known already (it writes to
         * other partitions): the increment first, one statement.
         * Removing, the row goes if it counts exactly -n. */
        if (ledger_counts_step(lg, n > 0 ? inc : del, topic, producer,
                               producer_len, n > 0 ? n : -n, &changed, errstr,
                               errstr_size))
                return -1;
        if (changed)
                return n > 0 ? 0 : 1;
        if (ledger_counts_step(lg, n > 0 ? ins : inc, topic, producer,
                               producer_len, n, &changed, errstr, errstr_size))
                return -1;
        if (changed != 1) {
                snprintf(errstr, errstr_size,
                         "cannot write ledger counts: producer not counted "
                         "in %s",
                         topic ? topic : "any topic");
                return -1;
        }
        return n > 0 ? 1 : 0;
}

/*
 * The batch's pair inserts and deletes, summed per (topic, producer)
 * before they reach counts_topic_producer: a batch of new pairs of few
 * producers over many partitions (a producer's first records everywhere)
 * costs one statement per producer, not one per pair.  Open addressing,
 * cap a power of two, at most half full.
 */
struct ledger_counts_ref_sum {
        const char *topic; /* NULL: empty slot */
        const char *producer;
        size_t producer_len;
        uint64_t hash;
        uint32_t part; /* one part of topic, for the topic's delta */
        int64_t n;
};

static uint64_t ledger_counts_hash(const char *topic, const char *producer,
                                   size_t producer_len)
{
        uint64_t h = 0xcbf29ce484222325ull;
        size_t i;

        for (i = 0; topic[i]; i++)
                h = (h ^ (unsigned char)topic[i]) * 0x100000001b3ull;
        h = (h ^ 0xffu) * 0x100000001b3ull; /* a separator */
        for (i = 0; i < producer_len; i++)
                h = (h ^ (unsigned char)producer[i]) * 0x100000001b3ull;
        return h;
}

static struct ledger_counts_ref_sum *
ledger_counts_slot(struct ledger_counts_ref_sum *v, size_t cap,
                   const char *topic, const char *producer,
                   size_t producer_len, uint64_t h)
{
        size_t i;

        for (i = (size_t)h & (cap - 1); v[i].topic; i = (i + 1) & (cap - 1))
                if (v[i].hash == h && v[i].producer_len == producer_len &&
                    !memcmp(v[i].producer, producer, producer_len) &&
                    (v[i].topic == topic || !strcmp(v[i].topic, topic)))
                        break;
        return &v[i];
}

static int ledger_counts_grow(struct ledger_counts *c)
{
        size_t cap = c->cap ? c->cap * 2 : 256, i;
        struct ledger_counts_ref_sum *v = calloc(cap, sizeof(*v));

        if (!v)
                return -1;
        for (i = 0; i < c->cap; i++)
                if (c->v[i].topic)
                        *ledger_counts_slot(v, cap, c->v[i].topic,
                                            c->v[i].producer,
                                            c->v[i].producer_len,
                                            c->v[i].hash) = c->v[i];
        free(c->v);
        c->v = v;
        c->cap = cap;
        return 0;
}

int ledger_counts_pair(struct ledger_counts *c, const struct ledger_part *p,
                       const char *producer, size_t producer_len, int add,
                       struct ledger_counts_delta *d, char *errstr,
                       size_t errstr_size)
{
        uint64_t h = ledger_counts_hash(p->topic, producer, producer_len);
        struct ledger_counts_ref_sum *e;

        if ((c->n + 1) * 2 > c->cap && ledger_counts_grow(c)) {
                snprintf(errstr, errstr_size,
                         "cannot count ledger pairs: out of memory");
                return -1;
        }
        e = ledger_counts_slot(c->v, c->cap, p->topic, producer, producer_len,
                               h);
        if (!e->topic) {
                e->topic = p->topic;
                e->producer = producer;
                e->producer_len = producer_len;
                e->hash = h;
                e->part = p->part;
                c->n++;
        }
        e->n += add ? 1 : -1;
        d->pairs += add ? 1 : -1;
        return 0;
}

void ledger_counts_free(struct ledger_counts *c)
{
        free(c->v);
        memset(c, 0, sizeof(*c));
}

/* Writes the summed pair changes into counts_topic_producer, and the
 * producers that appeared in or left a topic into counts_producer; adds
 * to d[part].producers and *producers_all. */
static int ledger_counts_refs_put(struct ledger *lg,
                                  const struct ledger_counts *c, size_t nparts,
                                  struct ledger_counts_delta *d,
                                  int64_t *producers_all, char *errstr,
                                  size_t errstr_size)
{
        size_t i;
        int r;

        for (i = 0; i < c->cap; i++) {
                const struct ledger_counts_ref_sum *e = &c->v[i];

                if (!e->topic || !e->n)
                        continue; /* none, or as many gone as came */
                if (e->part >= nparts) {
                        snprintf(errstr, errstr_size,
                                 "cannot write ledger counts: bad part %u",
                                 e->part);
                        return -1;
                }
                r = ledger_counts_ref(lg, e->n, e->topic, e->producer,
                                      e->producer_len, errstr, errstr_size);
                if (r <= 0) {
                        if (r < 0)
                                return -1;
                        continue;
                }
                /* The producer's first pair in the topic, or its last. */
                d[e->part].producers += e->n > 0 ? 1 : -1;
                r = ledger_counts_ref(lg, e->n > 0 ? 1 : -1, NULL, e->producer,
                                      e->producer_len, errstr, errstr_size);
                if (r < 0)
                        return -1;
                if (r > 0)
                        *producers_all += e->n > 0 ? 1 : -1;
        }
        return 0;
}

int ledger_counts_flush(struct ledger *lg, const struct ledger_part *parts,
                        size_t nparts, struct ledger_counts_delta *d,
                        const struct ledger_counts *c, char *errstr,
                        size_t errstr_size)
{
        static const struct ledger_counts_delta zero;
        sqlite3_stmt *st = lg->st[LEDGER_ST_COUNTS_PUT];
        int64_t producers_all = 0;
        size_t i;
        int brc;

        if (ledger_counts_refs_put(lg, c, nparts, d, &producers_all, errstr,
                                   errstr_size))
                return -1;

        for (i = 0; i < nparts; i++) {
                if (!memcmp(&d[i], &zero, sizeof(zero)))
                        continue;
                brc = sqlite3_bind_text(st, 1, parts[i].topic, -1,
                                        SQLITE_STATIC);
                brc |= sqlite3_bind_int64(st, 2, d[i].pairs);
                brc |= sqlite3_bind_int64(st, 3, d[i].producers);
                brc |= sqlite3_bind_int64(st, 4, d[i].open_gaps);
                brc |= sqlite3_bind_int64(st, 5, d[i].coverage_gaps);
                brc |= sqlite3_bind_int64(st, 6, d[i].coverage_records);
                if (ledger_step_done(lg, st, brc, "cannot write ledger counts",
                                     errstr, errstr_size))
                        return -1;
        }
        if (!producers_all)
                return 0;
        st = lg->st[LEDGER_ST_COUNTS_ALL];
        return ledger_step_done(lg, st,
                                sqlite3_bind_int64(st, 1, producers_all),
                                "cannot write ledger counts", errstr,
                                errstr_size);
}
