/*
 * txn.c - the transaction check's state in the ledger (schema/0008_txn.sql):
 * pending transactions and aborted tombstones, written with each batch
 * (ledger_txns_put(), inside ledger_commit()'s transaction) and read back
 * on start (ledger_txns_load()).  Parts are stored by (topic, partition),
 * never by the tracker's index, which may change between runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../dedup/txn.h"
#include "internal.h"

#define TXN_STATE_OPEN 0
#define TXN_STATE_MANIFEST 1
#define TXN_STATE_ABORTED 2

struct txn_put_ctx {
        struct ledger *lg;
        const struct ledger_part *parts;
        size_t nparts;
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

/* dedup_txn_cb: deletes a forgotten transaction, or rewrites one. */
static int txn_put(void *opaque, const struct dedup_txn_view *v)
{
        struct txn_put_ctx *c = opaque;
        struct ledger *lg = c->lg;
        sqlite3_stmt *st;
        uint32_t i;
        int brc;

        st = lg->st[LEDGER_ST_TXN_PARTS_DEL];
        if (ledger_step_done(lg, st, txn_bind_key(st, v),
                             "cannot delete ledger transaction parts",
                             c->errstr, c->errstr_size))
                return -1;
        if (v->removed) {
                st = lg->st[LEDGER_ST_TXN_DEL];
                return ledger_step_done(lg, st, txn_bind_key(st, v),
                                        "cannot delete ledger transaction",
                                        c->errstr, c->errstr_size);
        }
        st = lg->st[LEDGER_ST_TXN_PUT];
        brc = txn_bind_key(st, v);
        brc |= sqlite3_bind_int(st, 4,
                                v->aborted ? TXN_STATE_ABORTED
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
        if (ledger_step_done(lg, st, brc, "cannot write ledger transaction",
                             c->errstr, c->errstr_size))
                return -1;
        st = lg->st[LEDGER_ST_TXN_PART_PUT];
        for (i = 0; i < v->nslots; i++) {
                const struct dedup_txn_slot *s = &v->slots[i];
                const struct ledger_part *p;
                if (s->part >= c->nparts)
                        continue;
                p = &c->parts[s->part];
                brc = txn_bind_key(st, v);
                brc |= sqlite3_bind_text(st, 4, p->topic, -1, SQLITE_STATIC);
                brc |= sqlite3_bind_int64(st, 5, p->partition);
                brc |= sqlite3_bind_int64(st, 6,
                                          s->expected > INT64_MAX
                                                  ? INT64_MAX
                                                  : (int64_t)s->expected);
                brc |= sqlite3_bind_int64(st, 7,
                                          s->seen > INT64_MAX
                                                  ? INT64_MAX
                                                  : (int64_t)s->seen);
                brc |= sqlite3_bind_int64(st, 8, s->offset_lo);
                brc |= sqlite3_bind_int64(st, 9, s->offset_hi);
                if (ledger_step_done(lg, st, brc,
                                     "cannot write ledger transaction part",
                                     c->errstr, c->errstr_size))
                        return -1;
        }
        return 0;
}

int ledger_txns_put(struct ledger *lg, struct dedup_tracker *tr,
                    const struct ledger_part *parts, size_t nparts,
                    char *errstr, size_t errstr_size)
{
        struct txn_put_ctx c = {lg, parts, nparts, errstr, errstr_size};

        return dedup_txn_dirty_foreach(tr, txn_put, &c) ? -1 : 0;
}

/* The part of (topic, partition), or UINT32_MAX when it is not audited. */
static uint32_t txn_part_of(const struct ledger_part *parts, size_t nparts,
                            const char *topic, int64_t partition)
{
        size_t i;

        if (!topic)
                return UINT32_MAX;
        for (i = 0; i < nparts; i++)
                if (parts[i].partition == partition &&
                    !strcmp(parts[i].topic, topic))
                        return parts[i].part;
        return UINT32_MAX;
}

int ledger_txns_load(struct ledger *lg, struct dedup_tracker *tr,
                     const struct ledger_part *parts, size_t nparts,
                     char *errstr, size_t errstr_size)
{
        sqlite3_stmt *txn_st = NULL, *part_st = NULL;
        struct dedup_txn_slot *slots = NULL;
        size_t cap = 0;
        int rc = -1, src;

        if (ledger_prepare(lg,
                           "SELECT producer, epoch, txn, state, "
                           "manifest_topic, manifest_partition, "
                           "manifest_offset, opened_ms FROM txn_pending "
                           "ORDER BY opened_ms",
                           &txn_st, errstr, errstr_size) ||
            ledger_prepare(lg,
                           "SELECT topic, partition, expected, seen, "
                           "offset_lo, offset_hi FROM txn_parts WHERE "
                           "producer = ?1 AND epoch = ?2 AND txn = ?3",
                           &part_st, errstr, errstr_size))
                goto out;
        while ((src = sqlite3_step(txn_st)) == SQLITE_ROW) {
                struct dedup_txn_view v;
                int state = sqlite3_column_int(txn_st, 3);
                size_t n = 0;

                memset(&v, 0, sizeof(v));
                v.producer = (const char *)sqlite3_column_text(txn_st, 0);
                v.producer_len = (size_t)sqlite3_column_bytes(txn_st, 0);
                v.epoch = (int32_t)sqlite3_column_int64(txn_st, 1);
                v.txn = sqlite3_column_int64(txn_st, 2);
                v.aborted = state == TXN_STATE_ABORTED;
                v.manifest = state == TXN_STATE_MANIFEST;
                v.manifest_part = txn_part_of(
                    parts, nparts,
                    (const char *)sqlite3_column_text(txn_st, 4),
                    sqlite3_column_int64(txn_st, 5));
                v.manifest_offset = sqlite3_column_type(txn_st, 6) ==
                                            SQLITE_NULL
                                        ? -1
                                        : sqlite3_column_int64(txn_st, 6);
                v.opened_ms = sqlite3_column_int64(txn_st, 7);
                if (sqlite3_bind_text(part_st, 1, v.producer,
                                      (int)v.producer_len, SQLITE_STATIC) ||
                    sqlite3_bind_int64(part_st, 2, v.epoch) ||
                    sqlite3_bind_int64(part_st, 3, v.txn)) {
                        ledger_err(lg, "cannot read ledger transactions",
                                   errstr, errstr_size);
                        goto out;
                }
                while ((src = sqlite3_step(part_st)) == SQLITE_ROW) {
                        struct dedup_txn_slot *s;
                        uint32_t part = txn_part_of(
                            parts, nparts,
                            (const char *)sqlite3_column_text(part_st, 0),
                            sqlite3_column_int64(part_st, 1));
                        if (part == UINT32_MAX)
                                continue; /* no longer audited */
                        if (n == cap) {
                                size_t ncap = cap ? cap * 2 : 8;
                                void *p = realloc(slots, ncap * sizeof(*slots));
                                if (!p) {
                                        snprintf(errstr, errstr_size,
                                                 "out of memory");
                                        goto out;
                                }
                                slots = p;
                                cap = ncap;
                        }
                        s = &slots[n++];
                        s->part = part;
                        s->expected = ledger_u64_get(part_st, 2);
                        s->seen = ledger_u64_get(part_st, 3);
                        s->offset_lo = sqlite3_column_int64(part_st, 4);
                        s->offset_hi = sqlite3_column_int64(part_st, 5);
                }
                sqlite3_reset(part_st);
                if (src != SQLITE_DONE) {
                        ledger_err(lg, "cannot read ledger transaction parts",
                                   errstr, errstr_size);
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
        sqlite3_finalize(txn_st);
        sqlite3_finalize(part_st);
        free(slots);
        return rc;
}
