/*
 * txn.c - the transaction check's state in the ledger (schema/0008_txn.sql):
 * pending transactions and aborted tombstones, written with each batch
 * (ledger_txns_put(), inside ledger_commit()'s transaction) and read back
 * on start (ledger_txns_load()).  Parts are stored by (topic, partition),
 * never by the tracker's index, which may change between runs; they go
 * in one text column, so a transaction costs one statement, not one per
 * partition.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../dedup/txn.h"
#include "internal.h"

#define TXN_STATE_OPEN 0
#define TXN_STATE_MANIFEST 1
#define TXN_STATE_ABORTED 2

/* One part line at most: a topic (249 bytes) and five 20-digit numbers. */
#define TXN_LINE_MAX (249 + 5 * 21 + 2)

struct txn_put_ctx {
        struct ledger *lg;
        const struct ledger_part *parts;
        size_t nparts;
        char *buf; /* the parts text being written */
        size_t cap;
        char *errstr;
        size_t errstr_size;
};

static int txn_bind_key(sqlite3_stmt *st, const struct dedup_txn_view *v)
{
        int rc = sqlite3_bind_text(st, 1, v->producer, (int)v->producer_len,
                                   SQLITE_STATIC);
        rc |= sqlite3_bind_int64(st, 2, v->epoch);
        rc |= sqlite3_bind_int64(st, 3, v->txn);
        return rc;
}

static int64_t txn_clamp(uint64_t v)
{
        return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* The parts column of v into c->buf; returns its length, or -1. */
static int64_t txn_parts_text(struct txn_put_ctx *c,
                              const struct dedup_txn_view *v)
{
        size_t need = (size_t)v->nslots * TXN_LINE_MAX + 1, len = 0;
        uint32_t i;

        if (need > c->cap) {
                char *p = realloc(c->buf, need);
                if (!p)
                        return -1;
                c->buf = p;
                c->cap = need;
        }
        c->buf[0] = '\0';
        for (i = 0; i < v->nslots; i++) {
                const struct dedup_txn_slot *s = &v->slots[i];
                const struct ledger_part *p;
                int n;

                if (s->part >= c->nparts)
                        continue;
                p = &c->parts[s->part];
                n = snprintf(c->buf + len, c->cap - len,
                             "%s %d %lld %lld %lld %lld\n", p->topic,
                             (int)p->partition,
                             (long long)txn_clamp(s->expected),
                             (long long)txn_clamp(s->seen),
                             (long long)s->offset_lo, (long long)s->offset_hi);
                if (n < 0 || (size_t)n >= c->cap - len)
                        return -1;
                len += (size_t)n;
        }
        return (int64_t)len;
}

/* dedup_txn_cb: deletes a forgotten transaction, or rewrites one. */
static int txn_put(void *opaque, const struct dedup_txn_view *v)
{
        struct txn_put_ctx *c = opaque;
        struct ledger *lg = c->lg;
        sqlite3_stmt *st;
        int64_t len;
        int brc;

        if (v->removed) {
                st = lg->st[LEDGER_ST_TXN_DEL];
                return ledger_step_done(lg, st, txn_bind_key(st, v),
                                        "cannot delete ledger transaction",
                                        c->errstr, c->errstr_size);
        }
        len = txn_parts_text(c, v);
        if (len < 0) {
                snprintf(c->errstr, c->errstr_size,
                         "cannot write ledger transaction: out of memory");
                return -1;
        }
        st = lg->st[LEDGER_ST_TXN_PUT];
        brc = txn_bind_key(st, v);
        brc |= sqlite3_bind_int(st, 4,
                                v->aborted    ? TXN_STATE_ABORTED
                                : v->manifest ? TXN_STATE_MANIFEST
                                              : TXN_STATE_OPEN);
        if (v->manifest && v->manifest_part < c->nparts) {
                const struct ledger_part *mp = &c->parts[v->manifest_part];
                brc |= sqlite3_bind_text(st, 5, mp->topic, -1, SQLITE_STATIC);
                brc |= sqlite3_bind_int64(st, 6, mp->partition);
                brc |= sqlite3_bind_int64(st, 7, v->manifest_offset);
        } else {
                brc |= sqlite3_bind_null(st, 5);
                brc |= sqlite3_bind_null(st, 6);
                brc |= sqlite3_bind_null(st, 7);
        }
        brc |= sqlite3_bind_int64(st, 8, v->opened_ms);
        brc |= sqlite3_bind_text(st, 9, c->buf, (int)len, SQLITE_STATIC);
        return ledger_step_done(lg, st, brc, "cannot write ledger transaction",
                                c->errstr, c->errstr_size);
}

int ledger_txns_put(struct ledger *lg, struct dedup_tracker *tr,
                    const struct ledger_part *parts, size_t nparts,
                    char *errstr, size_t errstr_size)
{
        struct txn_put_ctx c = {lg, parts,  nparts,     NULL,
                                0,  errstr, errstr_size};
        int rc = dedup_txn_dirty_foreach(tr, txn_put, &c) ? -1 : 0;

        free(c.buf);
        return rc;
}

/* The part of (topic, partition), or UINT32_MAX when it is not audited. */
static uint32_t txn_part_of(const struct ledger_part *parts, size_t nparts,
                            const char *topic, size_t topic_len,
                            int64_t partition)
{
        size_t i;

        if (!topic)
                return UINT32_MAX;
        for (i = 0; i < nparts; i++)
                if (parts[i].partition == partition &&
                    strlen(parts[i].topic) == topic_len &&
                    !memcmp(parts[i].topic, topic, topic_len))
                        return parts[i].part;
        return UINT32_MAX;
}

/* A decimal (a leading '-' allowed) ending at a blank or newline; -2 on
 * a bad one.  *p moves past it and the one separator. */
static int64_t txn_num(const char **p)
{
        char *end;
        long long v = strtoll(*p, &end, 10);

        if (end == *p || (*end != ' ' && *end != '\n'))
                return -2;
        *p = end + 1;
        return (int64_t)v;
}

/* Parses a parts column into slots (*n of them; lines of partitions no
 * longer audited are dropped).  Returns 0, or -1 on a bad column. */
static int txn_parts_parse(const char *text, const struct ledger_part *parts,
                           size_t nparts, struct dedup_txn_slot **slots,
                           size_t *cap, size_t *n)
{
        const char *p = text;

        *n = 0;
        while (*p) {
                /* "TOPIC PARTITION EXPECTED SEEN LO HI\n" */
                const char *line = p, *sp = strchr(p, ' ');
                int64_t f[5];
                uint32_t part;
                int i;

                if (!sp || memchr(line, '\n', (size_t)(sp - line)))
                        return -1;
                for (i = 0, p = sp + 1; i < 5; i++)
                        if ((f[i] = txn_num(&p)) == -2)
                                return -1;
                if (p[-1] != '\n' || f[1] < 0 || f[2] < 0)
                        return -1;
                part = txn_part_of(parts, nparts, line, (size_t)(sp - line),
                                   f[0]);
                if (part == UINT32_MAX)
                        continue; /* no longer audited */
                if (*n == *cap) {
                        size_t ncap = *cap ? *cap * 2 : 8;
                        void *q = realloc(*slots, ncap * sizeof(**slots));
                        if (!q)
                                return -1;
                        *slots = q;
                        *cap = ncap;
                }
                (*slots)[*n].part = part;
                (*slots)[*n].expected = (uint64_t)f[1];
                (*slots)[*n].seen = (uint64_t)f[2];
                (*slots)[*n].offset_lo = f[3];
                (*slots)[(*n)++].offset_hi = f[4];
        }
        return 0;
}

int ledger_txns_load(struct ledger *lg, struct dedup_tracker *tr,
                     const struct ledger_part *parts, size_t nparts,
                     char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        struct dedup_txn_slot *slots = NULL;
        size_t cap = 0, n;
        int rc = -1, src;

        if (ledger_prepare(lg,
                           "SELECT producer, epoch, txn, state, "
                           "manifest_topic, manifest_partition, "
                           "manifest_offset, opened_ms, parts FROM "
                           "txn_pending ORDER BY opened_ms",
                           &st, errstr, errstr_size))
                goto out;
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
                struct dedup_txn_view v;
                int state = sqlite3_column_int(st, 3);
                const char *mt = (const char *)sqlite3_column_text(st, 4);

                memset(&v, 0, sizeof(v));
                v.producer = (const char *)sqlite3_column_text(st, 0);
                v.producer_len = (size_t)sqlite3_column_bytes(st, 0);
                v.epoch = (int32_t)sqlite3_column_int64(st, 1);
                v.txn = sqlite3_column_int64(st, 2);
                v.aborted = state == TXN_STATE_ABORTED;
                v.manifest = state == TXN_STATE_MANIFEST;
                v.manifest_part = txn_part_of(parts, nparts, mt,
                                              mt ? strlen(mt) : 0,
                                              sqlite3_column_int64(st, 5));
                v.manifest_offset = sqlite3_column_type(st, 6) == SQLITE_NULL
                                        ? -1
                                        : sqlite3_column_int64(st, 6);
                v.opened_ms = sqlite3_column_int64(st, 7);
                if (txn_parts_parse((const char *)sqlite3_column_text(st, 8),
                                    parts, nparts, &slots, &cap, &n)) {
                        snprintf(errstr, errstr_size,
                                 "ledger: bad parts of transaction %lld of "
                                 "producer '%.*s' epoch %d",
                                 (long long)v.txn, (int)v.producer_len,
                                 v.producer, (int)v.epoch);
                        goto out;
                }
                v.slots = slots;
                v.nslots = (uint32_t)n;
                if (dedup_txn_restore(tr, &v)) {
                        snprintf(errstr, errstr_size,
                                 "cannot restore transaction %lld of "
                                 "producer '%.*s' epoch %d",
                                 (long long)v.txn, (int)v.producer_len,
                                 v.producer, (int)v.epoch);
                        goto out;
                }
        }
        if (src != SQLITE_DONE) {
                ledger_err(lg, "cannot read ledger transactions", errstr,
                           errstr_size);
                goto out;
        }
        rc = 0;
out:
        sqlite3_finalize(st);
        free(slots);
        return rc;
}
