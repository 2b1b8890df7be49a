/*
 * topic.c - topic-scoped streams' state in the ledger
 * (schema/0015_topic_streams.sql): each dirty stream rewritten whole with
 * each batch (ledger_topics_put(), inside ledger_commit()'s transaction),
 * every stored one read back by ledger_load().  Partitions are stored,
 * never the tracker's part indexes, which may change between runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/le.h"
#include "../../dedup/topic.h"
#include "internal.h"

#define TS_VERSION 1
#define TS_HEAD 13 /* version, nwords, nlocs, ndone */
#define TS_WORD 16
#define TS_LOC 20
#define TS_DONE 29

struct ts_put_ctx {
        struct ledger *lg;
        const struct ledger_part *parts;
        size_t nparts;
        unsigned char *buf;
        size_t cap;
        char *errstr;
        size_t errstr_size;
};

static int ts_bind_key(sqlite3_stmt *st, const char *topic,
                       const struct dedup_topic_view *v)
{
        int rc = sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC);
        rc |= sqlite3_bind_text(st, 2, v->producer, (int)v->producer_len,
                                SQLITE_STATIC);
        rc |= sqlite3_bind_int64(st, 3, v->epoch);
        return rc;
}

static int32_t ts_partition(const struct ts_put_ctx *c, uint32_t part)
{
        return part < c->nparts ? c->parts[part].partition : -1;
}

/* The state blob of v into c->buf; returns its length, or 0 when memory
 * ran out. */
static size_t ts_state(struct ts_put_ctx *c, const struct dedup_topic_view *v)
{
        size_t need = TS_HEAD + (size_t)v->nwords * TS_WORD +
                      (size_t)v->nlocs * TS_LOC + (size_t)v->ndone * TS_DONE;
        unsigned char *p;
        uint32_t i;

        if (need > c->cap) {
                unsigned char *b = realloc(c->buf, need);
                if (!b)
                        return 0;
                c->buf = b;
                c->cap = need;
        }
        p = c->buf;
        *p++ = TS_VERSION;
        le32_put(p, v->nwords);
        le32_put(p + 4, v->nlocs);
        le32_put(p + 8, v->ndone);
        p += 12;
        for (i = 0; i < v->nwords; i++, p += TS_WORD) {
                le64_put(p, v->words[i]);
                le64_put(p + 8, (uint64_t)v->word_ms[i]);
        }
        for (i = 0; i < v->nlocs; i++, p += TS_LOC) {
                le64_put(p, (uint64_t)v->locs[i].seq);
                le32_put(p + 8, (uint32_t)ts_partition(c, v->locs[i].part));
                le64_put(p + 12, (uint64_t)v->locs[i].offset);
        }
        for (i = 0; i < v->ndone; i++, p += TS_DONE) {
                const struct dedup_topic_gap *g = &v->done[i];
                le64_put(p, (uint64_t)g->lo);
                le64_put(p + 8, (uint64_t)g->hi);
                le32_put(p + 16, (uint32_t)ts_partition(c, g->part));
                le64_put(p + 20, (uint64_t)g->offset);
                p[28] = (unsigned char)!!g->unknown;
        }
        return need;
}

/* dedup_topic_cb: deletes a removed stream, or rewrites one. */
static int ts_put(void *opaque, const struct dedup_topic_view *v)
{
        struct ts_put_ctx *c = opaque;
        struct ledger *lg = c->lg;
        const char *topic;
        sqlite3_stmt *st;
        size_t len;
        int brc;

        if (v->part >= c->nparts)
                return 0; /* not the audit's: cannot be */
        topic = c->parts[v->part].topic;
        if (v->removed) {
                st = lg->st[LEDGER_ST_TSTREAM_DEL];
                return ledger_step_done(lg, st, ts_bind_key(st, topic, v),
                                        "cannot delete ledger topic stream",
                                        c->errstr, c->errstr_size);
        }
        len = ts_state(c, v);
        if (!len) {
                snprintf(c->errstr, c->errstr_size,
                         "cannot write ledger topic stream: out of memory");
                return -1;
        }
        st = lg->st[LEDGER_ST_TSTREAM_PUT];
        brc = ts_bind_key(st, topic, v);
        brc |= sqlite3_bind_int64(st, 4, v->floor);
        brc |= sqlite3_bind_int64(st, 5, v->base);
        brc |= sqlite3_bind_int64(st, 6, v->next);
        brc |= sqlite3_bind_int64(st, 7, v->last_ms);
        brc |= sqlite3_bind_int64(st, 8, ledger_u64_put(v->records));
        brc |= sqlite3_bind_blob(st, 9, c->buf, (int)len, SQLITE_STATIC);
        return ledger_step_done(lg, st, brc,
                                "cannot write ledger topic stream", c->errstr,
                                c->errstr_size);
}

int ledger_topics_put(struct ledger *lg, struct dedup_tracker *tr,
                      const struct ledger_part *parts, size_t nparts,
                      char *errstr, size_t errstr_size)
{
        struct ts_put_ctx c = {lg, parts,  nparts,     NULL,
                               0,  errstr, errstr_size};
        int r = dedup_topic_dirty_foreach(tr, ts_put, &c);

        if (r == -1 && !errstr[0])
                snprintf(errstr, errstr_size,
                         "cannot write ledger topic streams: out of memory");
        free(c.buf);
        return r ? -1 : 0;
}

/* The part of partition of topic, or UINT32_MAX when not audited. */
static uint32_t ts_part_of(const struct ledger_part *parts, size_t nparts,
                           const char *topic, int32_t partition)
{
        size_t i;

        for (i = 0; i < nparts; i++)
                if (parts[i].partition == partition &&
                    !strcmp(parts[i].topic, topic))
                        return parts[i].part;
        return UINT32_MAX;
}

/* Arrays of one stream read back. */
struct ts_bufs {
        uint64_t *words;
        int64_t *ms;
        struct dedup_topic_loc *locs;
        struct dedup_topic_gap done[DEDUP_TOPIC_DONE];
};

/* Parses a state blob into v (arrays in b).  Returns 0, or -1 on a bad
 * blob or memory. */
static int ts_parse(const unsigned char *p, size_t len,
                    const struct ledger_part *parts, size_t nparts,
                    const char *topic, struct ts_bufs *b,
                    struct dedup_topic_view *v)
{
        uint32_t nw, nl, nd, i, k;

        if (len < TS_HEAD || p[0] != TS_VERSION)
                return -1;
        nw = le32_get(p + 1);
        nl = le32_get(p + 5);
        nd = le32_get(p + 9);
        if (nd > DEDUP_TOPIC_DONE || nl > DEDUP_TOPIC_LOCS ||
            len != TS_HEAD + (size_t)nw * TS_WORD + (size_t)nl * TS_LOC +
                       (size_t)nd * TS_DONE)
                return -1;
        p += TS_HEAD;
        b->words = malloc(((size_t)nw + 1) * sizeof(*b->words));
        b->ms = malloc(((size_t)nw + 1) * sizeof(*b->ms));
        b->locs = malloc(((size_t)nl + 1) * sizeof(*b->locs));
        if (!b->words || !b->ms || !b->locs)
                return -1;
        for (i = 0; i < nw; i++, p += TS_WORD) {
                b->words[i] = le64_get(p);
                b->ms[i] = (int64_t)le64_get(p + 8);
        }
        for (i = k = 0; i < nl; i++, p += TS_LOC) {
                uint32_t part = ts_part_of(parts, nparts, topic,
                                           (int32_t)le32_get(p + 8));
                if (part == UINT32_MAX)
                        continue;
                b->locs[k].seq = (int64_t)le64_get(p);
                b->locs[k].part = part;
                b->locs[k++].offset = (int64_t)le64_get(p + 12);
        }
        v->nlocs = k;
        for (i = k = 0; i < nd; i++, p += TS_DONE) {
                uint32_t part = ts_part_of(parts, nparts, topic,
                                           (int32_t)le32_get(p + 16));
                if (part == UINT32_MAX)
                        continue;
                b->done[k].lo = (int64_t)le64_get(p);
                b->done[k].hi = (int64_t)le64_get(p + 8);
                b->done[k].part = part;
                b->done[k].offset = (int64_t)le64_get(p + 20);
                b->done[k++].unknown = p[28] != 0;
        }
        v->ndone = k;
        v->words = b->words;
        v->word_ms = b->ms;
        v->nwords = nw;
        v->locs = b->locs;
        v->done = b->done;
        return 0;
}

static void ts_bufs_free(struct ts_bufs *b)
{
        free(b->words);
        free(b->ms);
        free(b->locs);
        b->words = NULL;
        b->ms = NULL;
        b->locs = NULL;
}

int ledger_topics_load(struct ledger *lg, struct dedup_tracker *tr,
                       const struct ledger_part *parts, size_t nparts,
                       char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        struct ts_bufs b;
        int rc = -1, src;

        memset(&b, 0, sizeof(b));
        if (ledger_prepare(lg,
                           "SELECT topic, producer, epoch, floor, base, next, "
                           "last_ms, records, state FROM topic_streams",
                           &st, errstr, errstr_size))
                goto out;
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
                const char *topic = (const char *)sqlite3_column_text(st, 0);
                struct dedup_topic_view v;
                uint32_t part = UINT32_MAX;
                size_t i;

                for (i = 0; topic && i < nparts && part == UINT32_MAX; i++)
                        if (!strcmp(parts[i].topic, topic))
                                part = parts[i].part;
                if (part == UINT32_MAX)
                        continue; /* a topic no longer audited */
                memset(&v, 0, sizeof(v));
                v.part = part;
                v.producer = (const char *)sqlite3_column_text(st, 1);
                v.producer_len = (size_t)sqlite3_column_bytes(st, 1);
                v.epoch = (int32_t)sqlite3_column_int64(st, 2);
                v.floor = sqlite3_column_int64(st, 3);
                v.base = sqlite3_column_int64(st, 4);
                v.next = sqlite3_column_int64(st, 5);
                v.last_ms = sqlite3_column_int64(st, 6);
                v.records = ledger_u64_get(st, 7);
                ts_bufs_free(&b);
                if (ts_parse(sqlite3_column_blob(st, 8),
                             (size_t)sqlite3_column_bytes(st, 8), parts,
                             nparts, topic, &b, &v) ||
                    dedup_topic_restore(tr, &v)) {
                        snprintf(errstr, errstr_size,
                                 "ledger: cannot restore the topic stream of "
                                 "producer '%.*s' epoch %d on %s (a bad "
                                 "state, or --topic-window smaller than when "
                                 "it was written)",
                                 (int)(v.producer_len > 200 ? 200
                                                            : v.producer_len),
                                 v.producer ? v.producer : "", (int)v.epoch,
                                 topic);
                        goto out;
                }
        }
        if (src != SQLITE_DONE) {
                ledger_err(lg, "cannot read ledger topic streams", errstr,
                           errstr_size);
                goto out;
        }
        rc = 0;
out:
        sqlite3_finalize(st);
        ts_bufs_free(&b);
        return rc;
}
