/*
 * truncate.c - what a log truncated under the audit needs from the
 * ledger (ledger_trunc.h, schema/0014_truncation.sql): the runs the
 * engine accepted and the batches' fingerprints, written with each
 * commit; read back newest first to find where a log diverged and what
 * to take back; the truncation itself, written with the commit that
 * rewinds the pairs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/grow.h"
#include "ledger_trunc.h"
#include "internal.h"

/* Runs and fingerprints older than this many offsets below a part's
 * newest are deleted once the part has moved this far again. */
#define LEDGER_TRUNC_PRUNE_STEP 65536

enum {
        TRUNC_ST_RUN_PUT,
        TRUNC_ST_FP_PUT,
        TRUNC_ST_RUNS_PRUNE,
        TRUNC_ST_FPS_PRUNE,
        TRUNC_ST_RUNS_DEL,
        TRUNC_ST_RUN_CUT,
        TRUNC_ST_FPS_DEL,
        TRUNC_ST_TRUNC_PUT,
        TRUNC_ST_ANOMALY_PUT,
        TRUNC_ST__CNT
};

static const char *const trunc_sql[TRUNC_ST__CNT] = {
    [TRUNC_ST_RUN_PUT] =
        "INSERT OR REPLACE INTO audited_runs (topic, partition, "
        "offset_lo, offset_hi, producer, epoch, seq_lo) VALUES "
        "(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [TRUNC_ST_FP_PUT] =
        "INSERT OR REPLACE INTO audited_batches (topic, partition, "
        "offset, fp_ts, fp_lo, fp_hi) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [TRUNC_ST_RUNS_PRUNE] =
        "DELETE FROM audited_runs WHERE topic = ?1 AND partition = ?2 "
        "AND offset_lo < ?3",
    [TRUNC_ST_FPS_PRUNE] = "DELETE FROM audited_batches WHERE topic = ?1 AND "
                           "partition = ?2 AND offset < ?3",
    [TRUNC_ST_RUNS_DEL] =
        "DELETE FROM audited_runs WHERE topic = ?1 AND partition = ?2 "
        "AND offset_lo >= ?3",
    [TRUNC_ST_RUN_CUT] =
        "UPDATE audited_runs SET offset_hi = ?3 - 1 WHERE topic = ?1 "
        "AND partition = ?2 AND offset_lo < ?3 AND offset_hi >= ?3",
    [TRUNC_ST_FPS_DEL] = "DELETE FROM audited_batches WHERE topic = ?1 AND "
                         "partition = ?2 AND offset >= ?3",
    [TRUNC_ST_TRUNC_PUT] =
        "INSERT OR REPLACE INTO truncations (topic, partition, "
        "offset_lo, offset_hi, log_end, records, leader_epoch, how, "
        "detected_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    [TRUNC_ST_ANOMALY_PUT] =
        "INSERT INTO anomalies (topic, partition, kind, offset_lo, "
        "offset_hi, count, detected_ms, incarnation, detail) VALUES "
        "(?1, ?2, 'truncated', ?3, ?4, ?5, ?6, (SELECT "
        "COALESCE(MAX(incarnation), 0) FROM incarnations WHERE "
        "topic = ?1), ?7)",
};

/* A run noted since the last commit; its producer is at prod in the
 * arena. */
struct trunc_run {
        uint32_t part;
        int32_t epoch;
        int64_t offset_lo, offset_hi, seq_lo;
        size_t prod, prod_len;
};

struct trunc_pend {
        uint32_t part;
        struct ledger_truncation t;
        char *how, *detail;
};

struct ledger_trunc {
        sqlite3_stmt *st[TRUNC_ST__CNT];
        struct trunc_run *runs;
        size_t nruns, runs_cap;
        char *arena;
        size_t arena_len, arena_cap;
        size_t *last;    /* per part: its last run + 1, 0 none */
        int64_t *pruned; /* per part: the offset last pruned at */
        size_t nlast;
        struct trunc_pend *pend;
        size_t npend;
        int failed; /* a note ran out of memory */
};

static struct ledger_trunc *trunc_get(struct ledger *lg)
{
        if (!lg->trunc)
                lg->trunc = calloc(1, sizeof(*lg->trunc));
        return lg->trunc;
}

/* The per-part arrays cover part. */
static int trunc_parts(struct ledger_trunc *lt, uint32_t part)
{
        size_t cap = lt->nlast;

        if (part < lt->nlast)
                return 0;
        /* Zeroed: no run of a part yet, never pruned. */
        if (grow_array_zero((void **)&lt->last, &cap, (size_t)part + 1,
                            sizeof(*lt->last), 64, NULL))
                return -1;
        cap = lt->nlast;
        if (grow_array_zero((void **)&lt->pruned, &cap, (size_t)part + 1,
                            sizeof(*lt->pruned), 64, NULL))
                return -1;
        lt->nlast = cap;
        return 0;
}

int ledger_trunc_note(struct ledger *lg, const struct ledger_part *p,
                      int64_t offset, const char *producer,
                      size_t producer_len, int32_t epoch, int64_t seq)
{
        struct ledger_trunc *lt = trunc_get(lg);
        struct trunc_run *r;

        if (!lt)
                return -1;
        if (trunc_parts(lt, p->part))
                goto oom;
        if (lt->last[p->part]) {
                r = &lt->runs[lt->last[p->part] - 1];
                /* Differences, not sums: offsets and seqs may be near
                 * INT64_MAX. */
                if (r->epoch == epoch && offset - r->offset_hi == 1 &&
                    seq - r->seq_lo == offset - r->offset_lo &&
                    r->prod_len == producer_len &&
                    memcmp(lt->arena + r->prod, producer, producer_len) == 0) {
                        r->offset_hi = offset;
                        return 0;
                }
        }
        if (grow_array((void **)&lt->runs, &lt->runs_cap, lt->nruns + 1,
                       sizeof(*lt->runs), 64, NULL) ||
            grow_array((void **)&lt->arena, &lt->arena_cap,
                       lt->arena_len + producer_len, 1, 64, NULL))
                goto oom;
        memcpy(lt->arena + lt->arena_len, producer, producer_len);
        r = &lt->runs[lt->nruns++];
        r->part = p->part;
        r->epoch = epoch;
        r->offset_lo = r->offset_hi = offset;
        r->seq_lo = seq;
        r->prod = lt->arena_len;
        r->prod_len = producer_len;
        lt->arena_len += producer_len;
        lt->last[p->part] = lt->nruns;
        return 0;
oom:
        lt->failed = 1;
        return -1;
}

static sqlite3_stmt *trunc_st(struct ledger *lg, int which, char *errstr,
                              size_t errstr_size)
{
        struct ledger_trunc *lt = trunc_get(lg);

        if (!lt) {
                snprintf(errstr, errstr_size, "out of memory");
                return NULL;
        }
        if (!lt->st[which] &&
            sqlite3_prepare_v3(lg->db, trunc_sql[which], -1,
                               SQLITE_PREPARE_PERSISTENT, &lt->st[which],
                               NULL) != SQLITE_OK) {
                ledger_err(lg, "cannot prepare ledger truncation statement",
                           errstr, errstr_size);
                return NULL;
        }
        return lt->st[which];
}

/* Runs a statement keyed by p and one offset (?3). */
static int trunc_exec_at(struct ledger *lg, int which,
                         const struct ledger_part *p, int64_t offset,
                         char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = trunc_st(lg, which, errstr, errstr_size);
        int brc;

        if (!st)
                return -1;
        brc = ledger_bind_key(st, p, NULL, 0);
        brc |= sqlite3_bind_int64(st, 3, offset);
        return ledger_step_done(lg, st, brc,
                                "cannot write ledger truncation "
                                "state",
                                errstr, errstr_size);
}

static const struct ledger_part *trunc_part(const struct ledger_part *parts,
                                            size_t nparts, uint32_t part)
{
        return part < nparts && parts[part].part == part ? &parts[part] : NULL;
}

/* A pending truncation: its rows, and the stored runs and fingerprints
 * at or past its divergence point gone. */
static int trunc_apply(struct ledger *lg, const struct ledger_part *p,
                       const struct trunc_pend *tp, int64_t now_ms,
                       char *errstr, size_t errstr_size)
{
        const struct ledger_truncation *t = &tp->t;
        sqlite3_stmt *st;
        int brc;

        if (trunc_exec_at(lg, TRUNC_ST_RUNS_DEL, p, t->offset_lo, errstr,
                          errstr_size) ||
            trunc_exec_at(lg, TRUNC_ST_RUN_CUT, p, t->offset_lo, errstr,
                          errstr_size) ||
            trunc_exec_at(lg, TRUNC_ST_FPS_DEL, p, t->offset_lo, errstr,
                          errstr_size))
                return -1;
        if (!(st = trunc_st(lg, TRUNC_ST_TRUNC_PUT, errstr, errstr_size)))
                return -1;
        brc = ledger_bind_key(st, p, NULL, 0);
        brc |= sqlite3_bind_int64(st, 3, t->offset_lo);
        brc |= sqlite3_bind_int64(st, 4, t->offset_hi);
        brc |= sqlite3_bind_int64(st, 5, t->log_end);
        brc |= sqlite3_bind_int64(
            st, 6, (int64_t)(t->records > INT64_MAX ? INT64_MAX : t->records));
        brc |= t->leader_epoch < 0 ? sqlite3_bind_null(st, 7)
                                   : sqlite3_bind_int(st, 7, t->leader_epoch);
        brc |= sqlite3_bind_text(st, 8, tp->how, -1, SQLITE_STATIC);
        brc |= sqlite3_bind_int64(st, 9, now_ms);
        if (ledger_step_done(lg, st, brc, "cannot write ledger truncation",
                             errstr, errstr_size))
                return -1;
        if (!(st = trunc_st(lg, TRUNC_ST_ANOMALY_PUT, errstr, errstr_size)))
                return -1;
        brc = ledger_bind_key(st, p, NULL, 0);
        brc |= sqlite3_bind_int64(st, 3, t->offset_lo);
        brc |= sqlite3_bind_int64(st, 4, t->offset_hi);
        brc |= sqlite3_bind_int64(
            st, 5, (int64_t)(t->records > INT64_MAX ? INT64_MAX : t->records));
        brc |= sqlite3_bind_int64(st, 6, now_ms);
        brc |= tp->detail
                   ? sqlite3_bind_text(st, 7, tp->detail, -1, SQLITE_STATIC)
                   : sqlite3_bind_null(st, 7);
        return ledger_step_done(lg, st, brc, "cannot write ledger anomaly",
                                errstr, errstr_size);
}

static int trunc_run_put(struct ledger *lg, const struct ledger_part *p,
                         const struct trunc_run *r, char *errstr,
                         size_t errstr_size)
{
        sqlite3_stmt *st = trunc_st(lg, TRUNC_ST_RUN_PUT, errstr, errstr_size);
        int brc;

        if (!st)
                return -1;
        brc = ledger_bind_key(st, p, NULL, 0);
        brc |= sqlite3_bind_int64(st, 3, r->offset_lo);
        brc |= sqlite3_bind_int64(st, 4, r->offset_hi);
        brc |= sqlite3_bind_text(st, 5, lg->trunc->arena + r->prod,
                                 (int)r->prod_len, SQLITE_STATIC);
        brc |= sqlite3_bind_int(st, 6, r->epoch);
        brc |= sqlite3_bind_int64(st, 7, r->seq_lo);
        return ledger_step_done(lg, st, brc, "cannot write ledger run", errstr,
                                errstr_size);
}

static int trunc_fp_put(struct ledger *lg, const struct ledger_part *p,
                        char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = trunc_st(lg, TRUNC_ST_FP_PUT, errstr, errstr_size);
        int brc;

        if (!st)
                return -1;
        brc = ledger_bind_key(st, p, NULL, 0);
        brc |= sqlite3_bind_int64(st, 3, p->fp.offset);
        brc |= sqlite3_bind_int64(st, 4, p->fp.ts_ms);
        brc |= sqlite3_bind_int64(st, 5, (int64_t)p->fp.lo);
        brc |= sqlite3_bind_int64(st, 6, (int64_t)p->fp.hi);
        return ledger_step_done(lg, st, brc,
                                "cannot write ledger batch "
                                "fingerprint",
                                errstr, errstr_size);
}

int ledger_trunc_write(struct ledger *lg, const struct ledger_part *parts,
                       size_t nparts, int64_t now_ms, char *errstr,
                       size_t errstr_size)
{
        struct ledger_trunc *lt = trunc_get(lg);
        size_t i;

        if (!lt) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        if (lt->failed) {
                snprintf(errstr, errstr_size,
                         "cannot note audited records: %s", strerror(ENOMEM));
                return -1;
        }
        /* Truncations first: the runs noted after one start at its
         * divergence point and must not be deleted with the old ones. */
        for (i = 0; i < lt->npend; i++) {
                const struct ledger_part *p = trunc_part(parts, nparts,
                                                         lt->pend[i].part);
                if (p && trunc_apply(lg, p, &lt->pend[i], now_ms, errstr,
                                     errstr_size))
                        return -1;
        }
        for (i = 0; i < lt->nruns; i++) {
                const struct ledger_part *p = trunc_part(parts, nparts,
                                                         lt->runs[i].part);
                if (lt->runs[i].offset_lo < 0)
                        continue; /* of a log truncated since */
                if (p &&
                    trunc_run_put(lg, p, &lt->runs[i], errstr, errstr_size))
                        return -1;
        }
        for (i = 0; i < nparts; i++) {
                const struct ledger_part *p = &parts[i];
                if (!p->dirty || p->fp.offset < 0)
                        continue;
                if (trunc_parts(lt, p->part)) {
                        snprintf(errstr, errstr_size, "out of memory");
                        return -1;
                }
                if (trunc_fp_put(lg, p, errstr, errstr_size))
                        return -1;
                if (p->fp.offset - lt->pruned[p->part] <
                    LEDGER_TRUNC_KEEP + LEDGER_TRUNC_PRUNE_STEP)
                        continue;
                if (trunc_exec_at(lg, TRUNC_ST_RUNS_PRUNE, p,
                                  p->fp.offset - LEDGER_TRUNC_KEEP, errstr,
                                  errstr_size) ||
                    trunc_exec_at(lg, TRUNC_ST_FPS_PRUNE, p,
                                  p->fp.offset - LEDGER_TRUNC_KEEP, errstr,
                                  errstr_size))
                        return -1;
                lt->pruned[p->part] = p->fp.offset;
        }
        return 0;
}

void ledger_trunc_committed(struct ledger *lg)
{
        struct ledger_trunc *lt = lg->trunc;
        size_t i;

        if (!lt)
                return;
        for (i = 0; i < lt->npend; i++) {
                free(lt->pend[i].how);
                free(lt->pend[i].detail);
        }
        lt->npend = 0;
        lt->nruns = 0;
        lt->arena_len = 0;
        if (lt->last)
                memset(lt->last, 0, lt->nlast * sizeof(*lt->last));
}

void ledger_trunc_free(struct ledger *lg)
{
        struct ledger_trunc *lt = lg->trunc;
        int i;

        if (!lt)
                return;
        ledger_trunc_committed(lg);
        for (i = 0; i < TRUNC_ST__CNT; i++)
                sqlite3_finalize(lt->st[i]);
        free(lt->runs);
        free(lt->arena);
        free(lt->last);
        free(lt->pruned);
        free(lt->pend);
        free(lt);
        lg->trunc = NULL;
}

int ledger_trunc_pending(struct ledger *lg, const struct ledger_part *p,
                         const struct ledger_truncation *t, char *errstr,
                         size_t errstr_size)
{
        struct ledger_trunc *lt = trunc_get(lg);
        struct trunc_pend *tp, *np;
        size_t i;

        if (!lt)
                goto oom;
        np = realloc(lt->pend, (lt->npend + 1) * sizeof(*np));
        if (!np)
                goto oom;
        lt->pend = np;
        tp = &np[lt->npend];
        tp->part = p->part;
        tp->t = *t;
        tp->how = strdup(t->how ? t->how : "");
        tp->detail = t->detail ? strdup(t->detail) : NULL;
        if (!tp->how || (t->detail && !tp->detail)) {
                free(tp->how);
                free(tp->detail);
                goto oom;
        }
        tp->t.how = tp->how;
        tp->t.detail = tp->detail;
        lt->npend++;
        /* Runs noted (not committed) at or past the divergence point are
         * of the log that is gone. */
        for (i = 0; i < lt->nruns; i++) {
                struct trunc_run *r = &lt->runs[i];
                if (r->part != p->part || r->offset_hi < t->offset_lo)
                        continue;
                if (r->offset_lo < t->offset_lo)
                        r->offset_hi = t->offset_lo - 1;
                else
                        r->offset_lo = -1; /* dropped at the write */
        }
        if (p->part < lt->nlast)
                lt->last[p->part] = 0;
        return 0;
oom:
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
}

/* Prepares sql (a read) with ?1, ?2 p's key and ?3 at; the caller
 * finalizes *st. */
static int trunc_query(struct ledger *lg, const char *sql,
                       const struct ledger_part *p, int64_t at,
                       sqlite3_stmt **st, const char *what, char *errstr,
                       size_t errstr_size)
{
        if (ledger_prepare(lg, sql, st, errstr, errstr_size))
                return -1;
        if (ledger_bind_key(*st, p, NULL, 0) ||
            sqlite3_bind_int64(*st, 3, at)) {
                ledger_err(lg, what, errstr, errstr_size);
                return -1;
        }
        return 0;
}

int ledger_trunc_fps(struct ledger *lg, const struct ledger_part *p,
                     int64_t below, ledger_trunc_fp_cb *cb, void *opaque,
                     char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        int rc = -1, r, s;

        if (trunc_query(lg,
                        "SELECT offset, fp_ts, fp_lo, fp_hi FROM "
                        "audited_batches WHERE topic = ?1 AND partition = ?2 "
                        "AND offset < ?3 ORDER BY offset DESC",
                        p, below, &st, "cannot read batch fingerprints",
                        errstr, errstr_size))
                goto out;
        while ((s = sqlite3_step(st)) == SQLITE_ROW) {
                struct fingerprint fp;
                fp.offset = sqlite3_column_int64(st, 0);
                fp.ts_ms = sqlite3_column_int64(st, 1);
                fp.lo = (uint64_t)sqlite3_column_int64(st, 2);
                fp.hi = (uint64_t)sqlite3_column_int64(st, 3);
                r = cb(opaque, &fp);
                if (r < 0) {
                        snprintf(errstr, errstr_size,
                                 "cannot read the batch at offset %lld of "
                                 "%s [%d]",
                                 (long long)fp.offset, p->topic,
                                 (int)p->partition);
                        goto out;
                }
                if (r)
                        break;
        }
        if (s != SQLITE_ROW && s != SQLITE_DONE) {
                ledger_err(lg, "cannot read batch fingerprints", errstr,
                           errstr_size);
                goto out;
        }
        rc = 0;
out:
        sqlite3_finalize(st);
        return rc;
}

static struct ledger_trunc_stream *
trunc_stream_of(struct ledger_trunc_stream **v, size_t *n, const char *prod,
                size_t len, int *fresh)
{
        struct ledger_trunc_stream *s;
        size_t i;

        *fresh = 0;
        for (i = 0; i < *n; i++)
                if ((*v)[i].producer_len == len &&
                    memcmp((*v)[i].producer, prod, len) == 0)
                        return &(*v)[i];
        s = realloc(*v, (*n + 1) * sizeof(**v));
        if (!s)
                return NULL;
        *v = s;
        s = &s[*n];
        memset(s, 0, sizeof(*s));
        s->producer = malloc(len + 1);
        if (!s->producer)
                return NULL;
        memcpy(s->producer, prod, len);
        s->producer[len] = '\0';
        s->producer_len = len;
        (*n)++;
        *fresh = 1;
        return s;
}

/* The last seq s's producer accepted before offset, in s's epoch, by a
 * run at or past floor. */
static int trunc_last_seq(struct ledger *lg, const struct ledger_part *p,
                          int64_t offset, int64_t floor,
                          struct ledger_trunc_stream *s, char *errstr,
                          size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        int rc = -1, r;

        s->last_seq = s->seq - 1;
        if (trunc_query(lg,
                        "SELECT epoch, seq_lo + (MIN(offset_hi, ?3 - 1) - "
                        "offset_lo) FROM audited_runs WHERE topic = ?1 AND "
                        "partition = ?2 AND producer = ?4 AND offset_lo < ?3 "
                        "AND offset_lo >= ?5 ORDER BY offset_lo DESC LIMIT 1",
                        p, offset, &st, "cannot read audited runs", errstr,
                        errstr_size))
                goto out;
        if (sqlite3_bind_text(st, 4, s->producer, (int)s->producer_len,
                              SQLITE_STATIC) ||
            sqlite3_bind_int64(st, 5, floor)) {
                ledger_err(lg, "cannot read audited runs", errstr,
                           errstr_size);
                goto out;
        }
        r = sqlite3_step(st);
        if (r == SQLITE_ROW) {
                int64_t last = sqlite3_column_int64(st, 1);
                if (sqlite3_column_int(st, 0) != s->epoch)
                        s->last_seq = -1; /* a new epoch from offset on */
                else if (last < s->seq)
                        s->last_seq = last;
        } else if (r != SQLITE_DONE) {
                ledger_err(lg, "cannot read audited runs", errstr,
                           errstr_size);
                goto out;
        }
        rc = 0;
out:
        sqlite3_finalize(st);
        return rc;
}

int ledger_trunc_streams(struct ledger *lg, const struct ledger_part *p,
                         int64_t offset, int64_t floor,
                         struct ledger_trunc_stream **out, size_t *n,
                         char *errstr, size_t errstr_size)
{
        sqlite3_stmt *st = NULL;
        struct ledger_trunc_stream *v = NULL;
        size_t nv = 0, i;
        int rc = -1, s;

        if (trunc_query(lg,
                        "SELECT producer, epoch, seq_lo, offset_lo, "
                        "offset_hi FROM audited_runs WHERE topic = ?1 AND "
                        "partition = ?2 AND offset_hi >= ?3 ORDER BY "
                        "offset_lo",
                        p, offset, &st, "cannot read audited runs", errstr,
                        errstr_size))
                goto out;
        while ((s = sqlite3_step(st)) == SQLITE_ROW) {
                const char *prod = (const char *)sqlite3_column_text(st, 0);
                size_t len = (size_t)sqlite3_column_bytes(st, 0);
                int32_t epoch = sqlite3_column_int(st, 1);
                int64_t seq_lo = sqlite3_column_int64(st, 2);
                int64_t lo = sqlite3_column_int64(st, 3);
                int64_t hi = sqlite3_column_int64(st, 4);
                int64_t first = lo < offset ? offset : lo;
                struct ledger_trunc_stream *t;
                int fresh;

                if (!prod)
                        continue;
                t = trunc_stream_of(&v, &nv, prod, len, &fresh);
                if (!t) {
                        snprintf(errstr, errstr_size, "out of memory");
                        goto out;
                }
                if (fresh) {
                        t->epoch = epoch;
                        t->seq = seq_lo + (first - lo);
                }
                t->epoch_hi = epoch;
                t->seq_hi = seq_lo + (hi - lo);
                t->records += (uint64_t)(hi - first) + 1;
        }
        if (s != SQLITE_DONE) {
                ledger_err(lg, "cannot read audited runs", errstr,
                           errstr_size);
                goto out;
        }
        for (i = 0; i < nv; i++)
                if (trunc_last_seq(lg, p, offset, floor, &v[i], errstr,
                                   errstr_size))
                        goto out;
        *out = v;
        *n = nv;
        v = NULL;
        nv = 0;
        rc = 0;
out:
        sqlite3_finalize(st);
        ledger_trunc_streams_free(v, nv);
        return rc;
}

void ledger_trunc_streams_free(struct ledger_trunc_stream *s, size_t n)
{
        size_t i;

        for (i = 0; i < n; i++)
                free(s[i].producer);
        free(s);
}
