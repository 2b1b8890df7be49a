/*
 * flow.c - the flow audit in the ledger (see ../ledger_flow.h and
 * schema/0006_flow.sql): writing the engine's batch inside
 * ledger_commit(), loading it back, and the figures and evidence reports
 * read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/log.h"
#include "ledger_flow.h"
#include "internal.h"

/* The numbers of struct dedup_flow_state, in the order they are stored.
 * The last, the latency sum, came after the first ledgers with a flow: a
 * state one number short is read with a sum of 0 (the sum then counts
 * from that run on; /metrics' _sum says so by its rate). */
#define FLOW_STATE_NUMS (DEDUP_FLOW__OUTCOMES + 11 + DEDUP_FLOW_LAT_BUCKETS)

static void state_nums(const struct dedup_flow_state *s, int64_t *v)
{
        size_t k = 0, i;

        for (i = 0; i < DEDUP_FLOW__OUTCOMES; i++)
                v[k++] = (int64_t)s->retired.outcome[i];
        v[k++] = (int64_t)s->retired.duplicate_copies;
        v[k++] = (int64_t)s->source_reads;
        v[k++] = (int64_t)s->sink_reads;
        v[k++] = (int64_t)s->source_repeats;
        v[k++] = (int64_t)s->source_no_id;
        v[k++] = (int64_t)s->sink_no_id;
        v[k++] = s->source_clock;
        v[k++] = s->sink_clock;
        v[k++] = (int64_t)s->next_seq;
        v[k++] = s->lat_max_ms;
        for (i = 0; i < DEDUP_FLOW_LAT_BUCKETS; i++)
                v[k++] = (int64_t)s->lat[i];
        v[k++] = (int64_t)s->lat_sum_ms;
}

static void state_from(struct dedup_flow_state *s, const int64_t *v)
{
        size_t k = 0, i;

        for (i = 0; i < DEDUP_FLOW__OUTCOMES; i++)
                s->retired.outcome[i] = (uint64_t)v[k++];
        s->retired.duplicate_copies = (uint64_t)v[k++];
        s->source_reads = (uint64_t)v[k++];
        s->sink_reads = (uint64_t)v[k++];
        s->source_repeats = (uint64_t)v[k++];
        s->source_no_id = (uint64_t)v[k++];
        s->sink_no_id = (uint64_t)v[k++];
        s->source_clock = v[k++];
        s->sink_clock = v[k++];
        s->next_seq = (uint64_t)v[k++];
        s->lat_max_ms = v[k++];
        for (i = 0; i < DEDUP_FLOW_LAT_BUCKETS; i++)
                s->lat[i] = (uint64_t)v[k++];
        s->lat_sum_ms = (uint64_t)v[k++];
}

/* The stored state text p into v.  Returns 0, or -1 when it is damaged
 * (not FLOW_STATE_NUMS numbers, or one short: see FLOW_STATE_NUMS). */
static int state_parse(const char *p, int64_t *v)
{
        char *end;
        size_t i;

        if (!p)
                return -1;
        memset(v, 0, sizeof(*v) * FLOW_STATE_NUMS);
        for (i = 0; i < FLOW_STATE_NUMS; i++) {
                while (*p == ' ')
                        p++;
                if (!*p)
                        break;
                errno = 0;
                v[i] = strtoll(p, &end, 10);
                if (end == p || errno)
                        return -1;
                p = end;
        }
        if (i < FLOW_STATE_NUMS - 1 || *p)
                return -1;
        return 0;
}

/* v as the stored state's text.  Returns 0, or -1 with errstr. */
static int state_text(const int64_t *v, char *text, size_t size, size_t *len,
                      char *errstr, size_t errstr_size)
{
        size_t i;
        int n;

        *len = 0;
        for (i = 0; i < FLOW_STATE_NUMS; i++) {
                n = snprintf(text + *len, size - *len, "%s%" PRId64,
                             i ? " " : "", v[i]);
                if (n < 0 || (size_t)n >= size - *len) {
                        snprintf(errstr, errstr_size,
                                 "flow state does not fit its buffer");
                        return -1;
                }
                *len += (size_t)n;
        }
        return 0;
}

static const struct ledger_part *flow_part(const struct ledger *lg,
                                           uint32_t part)
{
        return part < lg->flow_nparts ? &lg->flow_parts[part] : NULL;
}

static int bind_where(sqlite3_stmt *st, int col, const struct ledger *lg,
                      uint32_t part, int64_t offset)
{
        const struct ledger_part *p = flow_part(lg, part);
        int rc;

        if (!p)
                return sqlite3_bind_null(st, col) |
                       sqlite3_bind_null(st, col + 1) |
                       sqlite3_bind_null(st, col + 2);
        rc = sqlite3_bind_text(st, col, p->topic, -1, SQLITE_STATIC);
        rc |= sqlite3_bind_int64(st, col + 1, p->partition);
        rc |= sqlite3_bind_int64(st, col + 2, offset);
        return rc;
}

struct flow_wctx {
        struct ledger *lg;
        char *errstr;
        size_t errstr_size;
};

static int flow_put(struct ledger *lg, const struct dedup_flow_view *v,
                    int live, char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = lg->st[LEDGER_ST_FLOW_PUT];
        size_t kept = v->id_len < DEDUP_FLOW_ID_KEEP ? v->id_len
                                                     : DEDUP_FLOW_ID_KEEP;
        int brc;

        brc = sqlite3_bind_int64(st, 1, (int64_t)v->seq);
        brc |= sqlite3_bind_int64(st, 2, (int64_t)v->id.lo);
        brc |= sqlite3_bind_int64(st, 3, (int64_t)v->id.hi);
        brc |= sqlite3_bind_text(st, 4, dedup_flow_outcome_name(v->outcome),
                                 -1, SQLITE_STATIC);
        brc |= sqlite3_bind_int(st, 5, live);
        if (v->src_seen) {
                brc |= bind_where(st, 6, lg, v->src_part, v->src_offset);
                brc |= sqlite3_bind_int64(st, 9, v->src_ts);
        } else {
                brc |= bind_where(st, 6, lg, UINT32_MAX, -1);
                brc |= sqlite3_bind_null(st, 9);
        }
        brc |= sqlite3_bind_int64(st, 10, v->copies);
        if (v->copies) {
                brc |= bind_where(st, 11, lg, v->sink_part, v->sink_offset);
                brc |= bind_where(st, 14, lg, v->sink_part_last,
                                  v->sink_offset_last);
                brc |= sqlite3_bind_int64(st, 17, v->sink_ts);
        } else {
                brc |= bind_where(st, 11, lg, UINT32_MAX, -1);
                brc |= bind_where(st, 14, lg, UINT32_MAX, -1);
                brc |= sqlite3_bind_null(st, 17);
        }
        brc |= sqlite3_bind_int64(st, 18, (int64_t)v->born);
        brc |= sqlite3_bind_int(st, 19, v->due);
        brc |= sqlite3_bind_int(st, 20, v->latency_done);
        brc |= sqlite3_bind_blob(st, 21, v->id_bytes, (int)kept,
                                 SQLITE_STATIC);
        brc |= sqlite3_bind_int64(st, 22, (int64_t)v->id_len);
        brc |= sqlite3_bind_int(st, 23, v->prior);
        return ledger_step_done(lg, st, brc, "cannot write a flow entry",
                                errstr, errstr_size);
}

/* v, about to be persisted live (1) or retired (0): its packed view, and
 * its evidence row: written when its outcome is lost, duplicated or
 * unexpected, deleted when it was (v->evid) and is no more. */
static int flow_keep(struct ledger *lg, const struct dedup_flow_view *v,
                     int live, char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = lg->st[LEDGER_ST_FLOW_DEL];

        if (ledger_flow_store_put(lg, v, live)) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        if (dedup_flow_outcome_bad(v->outcome))
                return flow_put(lg, v, live, errstr, errstr_size);
        if (!v->evid)
                return 0;
        return ledger_step_done(lg, st,
                                sqlite3_bind_int64(st, 1, (int64_t)v->seq),
                                "cannot delete a flow entry", errstr,
                                errstr_size);
}

static int flow_put_cb(void *opaque, const struct dedup_flow_view *v)
{
        struct flow_wctx *w = opaque;

        return flow_keep(w->lg, v, 1, w->errstr, w->errstr_size);
}

static int flow_state_put(struct ledger *lg, int64_t now_ms, char *errstr,
                          size_t errstr_size)
{
        sqlite3_stmt *st = lg->st[LEDGER_ST_FLOW_STATE];
        struct dedup_flow_state s;
        struct dedup_flow_stats fs;
        int64_t v[FLOW_STATE_NUMS];
        char text[FLOW_STATE_NUMS * 21 + 1];
        size_t len = 0;
        int brc;

        dedup_flow_state_get(lg->flow, &s);
        dedup_flow_stats_get(lg->flow, &fs);
        state_nums(&s, v);
        if (state_text(v, text, sizeof(text), &len, errstr, errstr_size))
                return -1;
        brc = sqlite3_bind_text(st, 1, text, (int)len, SQLITE_STATIC);
        brc |= sqlite3_bind_text(st, 2, lg->flow_expect, -1, SQLITE_STATIC);
        brc |= sqlite3_bind_int64(st, 3, (int64_t)fs.source_records);
        brc |= sqlite3_bind_int64(st, 4,
                                  (int64_t)fs.c.outcome[DEDUP_FLOW_DELIVERED]);
        brc |= sqlite3_bind_int64(st, 5,
                                  (int64_t)fs.c.outcome[DEDUP_FLOW_LOST]);
        brc |= sqlite3_bind_int64(
            st, 6, (int64_t)fs.c.outcome[DEDUP_FLOW_DUPLICATED]);
        brc |= sqlite3_bind_int64(st, 7, (int64_t)fs.c.duplicate_copies);
        brc |= sqlite3_bind_int64(st, 8,
                                  (int64_t)fs.c.outcome[DEDUP_FLOW_PENDING]);
        brc |= sqlite3_bind_int64(st, 9,
                                  (int64_t)fs.c.outcome[DEDUP_FLOW_AWAITING]);
        brc |= sqlite3_bind_int64(
            st, 10, (int64_t)fs.c.outcome[DEDUP_FLOW_UNEXPECTED]);
        brc |= sqlite3_bind_int64(st, 11, (int64_t)fs.source_repeats);
        brc |= sqlite3_bind_int64(st, 12, (int64_t)fs.source_no_id);
        brc |= sqlite3_bind_int64(st, 13, (int64_t)fs.sink_no_id);
        brc |= sqlite3_bind_int64(st, 14, (int64_t)fs.sink_records);
        brc |= sqlite3_bind_int64(st, 15, (int64_t)fs.live);
        brc |= sqlite3_bind_int64(st, 16, (int64_t)fs.lat_count);
        brc |= sqlite3_bind_int64(st, 17, fs.lat_p50_ms);
        brc |= sqlite3_bind_int64(st, 18, fs.lat_p99_ms);
        brc |= sqlite3_bind_int64(st, 19, fs.lat_max_ms);
        brc |= sqlite3_bind_int64(st, 20, now_ms);
        return ledger_step_done(lg, st, brc, "cannot write the flow state",
                                errstr, errstr_size);
}

int ledger_flow_write(struct ledger *lg, int64_t now_ms, char *errstr,
                      size_t errstr_size)
{
        struct flow_wctx w = {lg, errstr, errstr_size};
        const struct dedup_flow_view *r;
        size_t n, i;

        if (dedup_flow_failed(lg->flow)) {
                snprintf(errstr, errstr_size,
                         "cannot commit: the flow audit ran out of memory "
                         "and its state is not trustworthy");
                return -1;
        }
        /* Retired first, every outcome (a retired entry may be revived
         * by a later record: schema/0010_flow_id_index.sql); then the
         * dirty ones, among them the revived, live again under the same
         * seq. */
        ledger_flow_store_begin(lg);
        r = dedup_flow_retired(lg->flow, &n);
        for (i = 0; i < n; i++)
                if (flow_keep(lg, &r[i], 0, errstr, errstr_size))
                        return -1;
        if (dedup_flow_dirty_foreach(lg->flow, flow_put_cb, &w) ||
            ledger_flow_store_flush(lg, errstr, errstr_size))
                return -1;
        return flow_state_put(lg, now_ms, errstr, errstr_size);
}

void ledger_flow_committed(struct ledger *lg)
{
        if (!lg->flow)
                return;
        dedup_flow_dirty_clear(lg->flow);
        ledger_flow_store_committed(lg);
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

/* The part of (topic, partition) among lg's flow parts; UINT32_MAX when
 * none.  *hint caches the last topic's first part. */
static uint32_t part_find(const struct ledger *lg, const unsigned char *topic,
                          int64_t partition, size_t *hint)
{
        size_t i;

        if (!topic)
                return UINT32_MAX;
        if (*hint < lg->flow_nparts &&
            strcmp(lg->flow_parts[*hint].topic, (const char *)topic))
                *hint = 0;
        for (i = *hint; i < lg->flow_nparts; i++)
                if (!strcmp(lg->flow_parts[i].topic, (const char *)topic) &&
                    lg->flow_parts[i].partition == partition) {
                        return (uint32_t)i;
                }
        for (i = 0; i < *hint && i < lg->flow_nparts; i++)
                if (!strcmp(lg->flow_parts[i].topic, (const char *)topic) &&
                    lg->flow_parts[i].partition == partition)
                        return (uint32_t)i;
        return UINT32_MAX;
}

/* The stored state's numbers into v.  *present = 0 (and v untouched) when
 * no flow was ever committed.  Returns 0, or -1 with errstr. */
static int state_read(struct ledger *lg, int64_t *v, int *present,
                      char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        int rc = -1, src;

        *present = 0;
        if (ledger_prepare(lg, "SELECT state FROM flow_state WHERE one = 1",
                           &st, errstr, errstr_size))
                return -1;
        src = sqlite3_step(st);
        if (src == SQLITE_DONE) {
                rc = 0; /* a new flow */
                goto out;
        }
        if (src != SQLITE_ROW) {
                ledger_err(lg, "cannot read the flow state", errstr,
                           errstr_size);
                goto out;
        }
        if (state_parse((const char *)sqlite3_column_text(st, 0), v)) {
                snprintf(errstr, errstr_size,
                         "the ledger's flow state is damaged");
                goto out;
        }
        *present = 1;
        rc = 0;
out:
        sqlite3_finalize(st);
        return rc;
}

static int state_load(struct ledger *lg, struct dedup_flow *fl, char *errstr,
                      size_t errstr_size)
{
        struct dedup_flow_state s;
        int64_t v[FLOW_STATE_NUMS];
        int present;

        if (state_read(lg, v, &present, errstr, errstr_size))
                return -1;
        if (!present)
                return 0;
        memset(&s, 0, sizeof(s));
        state_from(&s, v);
        dedup_flow_state_set(fl, &s);
        return 0;
}

/* A row of flow_entries, columns as ledger_flow_load()'s legacy query's,
 * into *v.
 * Returns 0, or 1 when it names a topic or partition not in this flow. */
static int row_view(const struct ledger *lg, sqlite3_stmt *st,
                    struct dedup_flow_view *v, size_t *hint)
{
        const char *o;
        int n;

        memset(v, 0, sizeof(*v));
        v->seq = (uint64_t)sqlite3_column_int64(st, 0);
        v->id.lo = (uint64_t)sqlite3_column_int64(st, 1);
        v->id.hi = (uint64_t)sqlite3_column_int64(st, 2);
        v->src_seen = sqlite3_column_type(st, 3) != SQLITE_NULL;
        v->src_part = part_find(lg, sqlite3_column_text(st, 3),
                                sqlite3_column_int64(st, 4), hint);
        v->src_offset = sqlite3_column_int64(st, 5);
        v->src_ts = sqlite3_column_int64(st, 6);
        v->copies = (uint32_t)sqlite3_column_int64(st, 7);
        v->sink_part = part_find(lg, sqlite3_column_text(st, 8),
                                 sqlite3_column_int64(st, 9), hint);
        v->sink_offset = sqlite3_column_int64(st, 10);
        v->sink_part_last = part_find(lg, sqlite3_column_text(st, 11),
                                      sqlite3_column_int64(st, 12), hint);
        v->sink_offset_last = sqlite3_column_int64(st, 13);
        v->sink_ts = sqlite3_column_int64(st, 14);
        v->born = (uint64_t)sqlite3_column_int64(st, 15);
        v->due = sqlite3_column_int(st, 16);
        v->latency_done = sqlite3_column_int(st, 17);
        n = sqlite3_column_bytes(st, 18);
        if (n > DEDUP_FLOW_ID_KEEP)
                n = DEDUP_FLOW_ID_KEEP;
        if (n > 0)
                memcpy(v->id_bytes, sqlite3_column_blob(st, 18), (size_t)n);
        v->id_len = (size_t)sqlite3_column_int64(st, 19);
        v->prior = sqlite3_column_int(st, 20);
        o = (const char *)sqlite3_column_text(st, 21);
        if (!o || dedup_flow_outcome_parse(o, &v->outcome))
                v->outcome = DEDUP_FLOW__OUTCOMES; /* counted by nothing */
        if ((v->src_seen && v->src_part == UINT32_MAX) ||
            (v->copies &&
             (v->sink_part == UINT32_MAX || v->sink_part_last == UINT32_MAX)))
                return 1;
        return 0;
}

/* dedup_flow_lookup_cb: the latest retired view of id, in the packed
 * store (flow_store.c); what the engine retired since the last commit is
 * in its own retired list, searched first. */
static int ledger_flow_lookup(void *opaque, const struct dedup_id *id,
                              struct dedup_flow_view *out)
{
        struct ledger *lg = opaque;
        char err[256];
        int rc = ledger_flow_store_find(lg, id, out, err, sizeof(err));

        if (rc < 0 && !lg->lookup_failed) {
                lg->lookup_failed = 1;
                snprintf(lg->lookup_err, sizeof(lg->lookup_err),
                         "cannot look up a retired flow entry: %s", err);
        }
        return rc;
}

/* ------------------------------------------------------------------ */
/* A truncated partition                                               */
/* ------------------------------------------------------------------ */

struct trunc_ctx {
        struct dedup_flow *fl;
        enum dedup_flow_side side;
        uint32_t part;
        int64_t d;
        uint64_t changed;
};

static int trunc_retired_cb(void *opaque, const struct dedup_flow_view *v)
{
        struct trunc_ctx *c = opaque;
        int r = dedup_flow_retired_truncated(c->fl, c->side, c->part, c->d, v);

        if (r < 0)
                return 1; /* out of memory */
        c->changed += (uint64_t)r;
        return 0;
}

int ledger_flow_truncated(struct ledger *lg, enum dedup_flow_side side,
                          uint32_t part, int64_t d, uint64_t *changed,
                          char *errstr, size_t errstr_size)
{
        struct trunc_ctx c = {lg->flow, side, part, d, 0};
        struct dedup_flow_state s;
        unsigned o;
        int any = 0;

        *changed = 0;
        if (!lg->flow) {
                snprintf(errstr, errstr_size, "no flow is loaded");
                return -1;
        }
        if (dedup_flow_truncated(lg->flow, side, part, d, &c.changed)) {
                snprintf(errstr, errstr_size,
                         "the flow audit ran out of memory");
                return -1;
        }
        /* The retired entries already committed: one walk of the store
         * (a truncation is rare), none when nothing was ever retired. */
        dedup_flow_state_get(lg->flow, &s);
        for (o = 0; o < DEDUP_FLOW__OUTCOMES; o++)
                any |= s.retired.outcome[o] != 0;
        if (any && ledger_flow_store_retired_foreach(lg, trunc_retired_cb, &c,
                                                     errstr, errstr_size))
                return -1;
        *changed = c.changed;
        return 0;
}

/* row_view() for ledger_flow_store_legacy(). */
static int legacy_row(struct ledger *lg, sqlite3_stmt *st,
                      struct dedup_flow_view *v)
{
        size_t hint = 0;

        if (row_view(lg, st, v, &hint))
                return 1;
        v->evid = v->outcome != DEDUP_FLOW__OUTCOMES &&
                  dedup_flow_outcome_bad(v->outcome);
        return 0;
}

int ledger_flow_load(struct ledger *lg, struct dedup_flow *fl,
                     const struct ledger_part *parts, size_t nparts,
                     const char *expect, char *errstr, size_t errstr_size)
{
        size_t dropped = 0;

        lg->flow_parts = parts;
        lg->flow_nparts = nparts;
        lg->flow_expect = expect;
        if (state_load(lg, fl, errstr, errstr_size) ||
            ledger_flow_store_open(lg, errstr, errstr_size) ||
            ledger_flow_store_attach(lg, errstr, errstr_size) ||
            ledger_flow_store_legacy(
                lg, legacy_row,
                "SELECT seq, id_lo, id_hi, src_topic, src_partition, "
                "src_offset, src_ts, copies, sink_topic, sink_partition, "
                "sink_offset, sink_topic_last, sink_partition_last, "
                "sink_offset_last, sink_ts, born, due, latency_done, id, "
                "id_len, prior, outcome, live FROM flow_entries WHERE live "
                "IN (0, 1) ORDER BY seq",
                errstr, errstr_size) ||
            ledger_flow_store_restore(lg, fl, &dropped, errstr, errstr_size))
                return -1;
        if (dropped)
                log_warn("flow: %zu stored entries name a topic or partition "
                         "that is not in this flow; they are left out",
                         dropped);
        dedup_flow_set_lookup(fl, ledger_flow_lookup, lg);
        lg->flow = fl;
        return 0;
}

/* ------------------------------------------------------------------ */
/* A topic's new incarnation                                           */
/* ------------------------------------------------------------------ */

int ledger_flow_incarnate(struct ledger *lg, const char *topic,
                          struct ledger_flow_reborn *out, char *errstr,
                          size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        struct ledger_flow_inc r;
        int64_t v[FLOW_STATE_NUMS];
        char text[FLOW_STATE_NUMS * 21 + 1];
        size_t len, o;
        int present, rc = -1;

        memset(out, 0, sizeof(*out));
        if (state_read(lg, v, &present, errstr, errstr_size))
                return -1;
        if (!present)
                return 0; /* no flow in this ledger */
        /* The packed views (flow_store.c has the rules); the evidence
         * rows that name the topic are an old incarnation's now, never
         * revived (an id of the new log is a new entry). */
        if (ledger_flow_store_incarnate(lg, topic, &r, errstr, errstr_size) ||
            ledger_prepare(lg,
                           "UPDATE flow_entries SET live = 2 WHERE live IN "
                           "(0, 1) AND (src_topic = ?1 OR sink_topic = ?1 OR "
                           "sink_topic_last = ?1)",
                           &st, errstr, errstr_size) ||
            ledger_step_done(
                lg, st, sqlite3_bind_text(st, 1, topic, -1, SQLITE_STATIC),
                "cannot retire a flow entry", errstr, errstr_size))
                goto out;
        sqlite3_finalize(st);
        st = NULL;
        out->unjudged = r.unjudged;
        out->judged = r.judged;
        out->prior = r.prior;
        if (!out->unjudged && !out->judged && !out->prior)
                return 0;
        for (o = 0; o < DEDUP_FLOW__OUTCOMES; o++)
                v[o] += (int64_t)r.retired.outcome[o];
        v[DEDUP_FLOW__OUTCOMES] += (int64_t)r.retired.duplicate_copies;
        /* The figures for reports follow (the next commit rewrites them
         * from the engine anyway). */
        if (state_text(v, text, sizeof(text), &len, errstr, errstr_size) ||
            ledger_prepare(lg,
                           "UPDATE flow_state SET state = ?1, pending = "
                           "pending - ?2, source_records = source_records - "
                           "?2, awaiting = awaiting - ?3, live = live - ?4 "
                           "WHERE one = 1",
                           &st, errstr, errstr_size))
                goto out;
        if (ledger_step_done(
                lg, st,
                sqlite3_bind_text(st, 1, text, (int)len, SQLITE_STATIC) |
                    sqlite3_bind_int64(st, 2, (int64_t)r.gone_pending) |
                    sqlite3_bind_int64(st, 3, (int64_t)r.gone_awaiting) |
                    sqlite3_bind_int64(st, 4, (int64_t)r.gone),
                "cannot write the flow state", errstr, errstr_size))
                goto out;
        rc = 0;
out:
        sqlite3_finalize(st);
        return rc;
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

int ledger_flow_summary(struct ledger *lg, struct ledger_flow_summary *s,
                        char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        struct dedup_flow_state fs;
        int64_t v[FLOW_STATE_NUMS];
        int rc = -1, src;

        memset(s, 0, sizeof(*s));
        s->lat_p50_ms = s->lat_p99_ms = s->lat_max_ms = -1;
        if (ledger_prepare(lg,
                           "SELECT expect, source_records, delivered, lost, "
                           "duplicated, duplicate_copies, pending, awaiting, "
                           "unexpected, source_repeats, source_no_id, "
                           "sink_no_id, sink_records, live, lat_count, "
                           "lat_p50_ms, lat_p99_ms, lat_max_ms, updated_ms, "
                           "state FROM flow_state WHERE one = 1",
                           &st, errstr, errstr_size))
                return -1;
        src = sqlite3_step(st);
        if (src == SQLITE_ROW) {
                const unsigned char *e = sqlite3_column_text(st, 0);
                s->present = 1;
                snprintf(s->expect, sizeof(s->expect), "%s",
                         e ? (const char *)e : "");
                s->source_records = ledger_u64_get(st, 1);
                s->delivered = ledger_u64_get(st, 2);
                s->lost = ledger_u64_get(st, 3);
                s->duplicated = ledger_u64_get(st, 4);
                s->duplicate_copies = ledger_u64_get(st, 5);
                s->pending = ledger_u64_get(st, 6);
                s->awaiting = ledger_u64_get(st, 7);
                s->unexpected = ledger_u64_get(st, 8);
                s->source_repeats = ledger_u64_get(st, 9);
                s->source_no_id = ledger_u64_get(st, 10);
                s->sink_no_id = ledger_u64_get(st, 11);
                s->sink_records = ledger_u64_get(st, 12);
                s->live = ledger_u64_get(st, 13);
                s->lat_count = ledger_u64_get(st, 14);
                s->lat_p50_ms = sqlite3_column_int64(st, 15);
                s->lat_p99_ms = sqlite3_column_int64(st, 16);
                s->lat_max_ms = sqlite3_column_int64(st, 17);
                s->updated_ms = sqlite3_column_int64(st, 18);
                /* The histogram lives in the engine's state. */
                if (state_parse((const char *)sqlite3_column_text(st, 19),
                                v)) {
                        snprintf(errstr, errstr_size,
                                 "the ledger's flow state is damaged");
                        goto out;
                }
                memset(&fs, 0, sizeof(fs));
                state_from(&fs, v);
                memcpy(s->lat, fs.lat, sizeof(s->lat));
                s->lat_sum_ms = fs.lat_sum_ms;
        } else if (src != SQLITE_DONE) {
                ledger_err(lg, "cannot read the flow state", errstr,
                           errstr_size);
                goto out;
        }
        rc = 0;
out:
        sqlite3_finalize(st);
        return rc;
}

int ledger_flow_evidence_foreach(struct ledger *lg, const char *outcome,
                                 int64_t after_seq, int64_t limit,
                                 ledger_flow_row_cb *cb, void *opaque,
                                 char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        struct ledger_flow_row r;
        int rc = -1, src, brc;

        if (ledger_prepare(
                lg,
                "SELECT seq, outcome, live = 1, src_topic, src_partition, "
                "src_offset, src_ts, copies, sink_topic, sink_partition, "
                "sink_offset, sink_topic_last, sink_partition_last, "
                "sink_offset_last, sink_ts, id, id_len FROM flow_entries "
                "WHERE (?1 IS NULL AND outcome IN ('lost', 'duplicated', "
                "'unexpected') OR outcome = ?1) AND seq > ?2 ORDER BY seq "
                "LIMIT ?3",
                &st, errstr, errstr_size))
                return -1;
        brc = outcome ? sqlite3_bind_text(st, 1, outcome, -1, SQLITE_STATIC)
                      : sqlite3_bind_null(st, 1);
        brc |= sqlite3_bind_int64(st, 2, after_seq);
        brc |= sqlite3_bind_int64(st, 3, limit);
        if (brc != SQLITE_OK) {
                ledger_err(lg, "cannot read the flow evidence", errstr,
                           errstr_size);
                goto out;
        }
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
                memset(&r, 0, sizeof(r));
                r.seq = sqlite3_column_int64(st, 0);
                r.outcome = (const char *)sqlite3_column_text(st, 1);
                r.live = sqlite3_column_int(st, 2);
                r.src_topic = (const char *)sqlite3_column_text(st, 3);
                r.src_partition = (int32_t)ledger_col_opt(st, 4);
                r.src_offset = ledger_col_opt(st, 5);
                r.src_ts = ledger_col_opt(st, 6);
                r.copies = (uint32_t)sqlite3_column_int64(st, 7);
                r.sink_topic = (const char *)sqlite3_column_text(st, 8);
                r.sink_partition = (int32_t)ledger_col_opt(st, 9);
                r.sink_offset = ledger_col_opt(st, 10);
                r.sink_topic_last = (const char *)sqlite3_column_text(st, 11);
                r.sink_partition_last = (int32_t)ledger_col_opt(st, 12);
                r.sink_offset_last = ledger_col_opt(st, 13);
                r.sink_ts = ledger_col_opt(st, 14);
                r.id = sqlite3_column_blob(st, 15);
                r.id_stored = (size_t)sqlite3_column_bytes(st, 15);
                r.id_len = sqlite3_column_int64(st, 16);
                if (cb(opaque, &r)) {
                        rc = 0;
                        goto out;
                }
        }
        if (src != SQLITE_DONE) {
                ledger_err(lg, "cannot read the flow evidence", errstr,
                           errstr_size);
                goto out;
        }
        rc = 0;
out:
        sqlite3_finalize(st);
        return rc;
}
