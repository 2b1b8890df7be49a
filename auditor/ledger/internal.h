/*
 * internal.h - what was private to ledger.c before it became this folder:
 * struct ledger, the statements and packed-id format the files share, and
 * their common helpers.  Not part of the ledger's API (ledger.h and
 * ledger_flow.h are);
 * include it only from auditor/ledger/ (as SQLite's vdbeInt.h is only for
 * its vdbe*.c).
 *
 * The files, one job each:
 *   common.c  errors, running statements, counter columns, the parts check
 *   open.c    open (lock, WAL, migrations, prepared statements) and close
 *   load.c    ledger_load(): partitions, pairs and open gaps into a tracker
 *   entries.c the packed ids: writing a blob of them, reading one back,
 *             finding an id in one
 *   idfiles.c closed id generations in files of their own, and the
 *             transactions' ends (ledger_txn, ledger_rollback) that
 *             settle them
 *   ids.c     the id windows: packed ids, loading them, id lookups
 *   commit.c  ledger_commit(): the write path, one transaction per batch
 *   incarnate.c a topic recreated or truncated: its state retired, a new
 *             incarnation begun
 *   flow.c    the flow audit: its state and evidence (schema 0006)
 *   flow_store.c the flow engine's entries, packed: batches, then files
 *             (schema 0016)
 *   query.c   the read model (summary, anomalies, pairs, partitions) that
 *             HTTP threads use on read-only handles
 *   history.c the per-minute history (written by the schema's triggers
 *             on commit; read here)
 *   counts.c  the summary's counts, kept by ledger_commit()
 *   ids_query.c one message id: where the windows and the redelivered
 *             anomalies saw it (for HTTP threads, read-only handles)
 *   txn.c     the transaction check's pending transactions and aborted
 *             tombstones, written with each batch and read back
 *   fingerprint.c  the last audited record of a partition, hashed
 *             (fingerprint.h: a type of ledger.h's)
 *   truncate.c a log truncated under the audit: the runs accepted and
 *             the batches' fingerprints, the truncations
 *             (ledger_trunc.h)
 *   topic.c   topic-scoped streams (schema 0015): written with each
 *             batch, read back by ledger_load()
 *
 * Values the engine marks unknown with -1 (epoch, seq, first offset) are
 * stored as NULL in anomalies; counters are stored clamped to INT64_MAX,
 * the largest SQLite integer.
 */
#ifndef EOSAUDIT_LEDGER_INTERNAL_H
#define EOSAUDIT_LEDGER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "../../dedup/flow.h"
#include "ledger.h"

struct dedup_flow;

_Static_assert(DEDUP_HISTORY_RUNS == 2,
               "pairs has columns for two runs: add a migration");
_Static_assert(DEDUP_RETIRED_PIDS == 2,
               "pairs has columns for two retired producer ids: add a "
               "migration");
_Static_assert(DEDUP_KIND__ANOMALY_CNT == 8,
               "partitions has one counter per anomaly kind: add a migration");

/* The counter columns of partitions, in the order ledger_counts_get()
 * reads them: anomaly kinds in enum dedup_kind order. */
#define LEDGER_COUNT_COLS                                                       \
        "records, untracked, duplicate, gap, out_of_order, fenced, "            \
        "malformed, redelivered, torn, aborted_read, missing, ids, recovered, " \
        "unknown"
#define LEDGER_COUNT_NCOLS (DEDUP_KIND__ANOMALY_CNT + 6)

/* Statements of the commit path, prepared once per writer handle. */
enum ledger_stmt {
        LEDGER_ST_BEGIN,
        LEDGER_ST_COMMIT,
        LEDGER_ST_ROLLBACK,
        LEDGER_ST_PART_PUT,
        LEDGER_ST_PAIR_PUT,
        LEDGER_ST_PAIR_DEL,
        LEDGER_ST_GAPS_DEL,
        LEDGER_ST_GAP_PUT,
        LEDGER_ST_DONE_DEL,
        LEDGER_ST_DONE_PUT,
        LEDGER_ST_ANOMALY_PUT,
        LEDGER_ST_COVERAGE_PUT,
        LEDGER_ST_BATCH_PUT,
        LEDGER_ST_CHUNK_GET,
        LEDGER_ST_GEN_PUT,
        LEDGER_ST_GEN_FILE,
        LEDGER_ST_GEN_BATCHES_DEL,
        LEDGER_ST_GEN_CHUNKS_DEL,
        LEDGER_ST_GEN_DEL,
        /* counts.c: the counts of schema/0005_counts.sql */
        LEDGER_ST_PAIR_SET,
        LEDGER_ST_CTP_ADD,
        LEDGER_ST_CTP_INC,
        LEDGER_ST_CTP_DEL,
        LEDGER_ST_CP_ADD,
        LEDGER_ST_CP_INC,
        LEDGER_ST_CP_DEL,
        LEDGER_ST_COUNTS_PUT,
        LEDGER_ST_COUNTS_ALL,
        LEDGER_ST_FLOW_PUT, /* flow.c */
        LEDGER_ST_FLOW_STATE,
        LEDGER_ST_FLOW_DEL,
        LEDGER_ST_TXN_PUT, /* txn.c */
        LEDGER_ST_TXN_DEL,
        LEDGER_ST_TSTREAM_PUT, /* topic.c */
        LEDGER_ST_TSTREAM_DEL,
        LEDGER_ST__CNT
};

/* Packed ids (entries.c, schema/0012_msgid_entries.sql), little-endian:
 * narrow blobs (a tag byte, then 22 bytes per id) or wide ones (32). */
#define LEDGER_ENTRY_NARROW 22
#define LEDGER_ENTRY_WIDE 32
#define LEDGER_SIGN ((uint64_t)1 << 63)

/* A closed generation whose ids are in a file (idfiles.c): lo of every
 * LEDGER_IDFILE_STEP-th entry, so that a lookup reads two steps' entries
 * with one pread() (never a mapping: mapped pages would count as the
 * process's memory, up to the window's whole size). */
#define LEDGER_IDFILE_STEP 128
struct ledger_idfile {
        uint64_t gen;
        size_t bytes;
        size_t head, size, n; /* the blob: header bytes, entry size, ids */
        uint64_t *lo;         /* n / STEP rounded up */
        int named;            /* its row names its file (file_bytes) */
        int dropped;          /* its row is deleted by the open transaction */
};

/* What the ledger knows of one id window (ledger_windows_load). */
struct ledger_window {
        const char *topic; /* borrowed */
        uint32_t *part_of; /* partition -> part + 1, 0 = not audited */
        size_t npart_of;
};

struct ledger {
        sqlite3 *db;
        int lock_fd; /* holds the flock; -1 for a reader */
        int readonly;
        sqlite3_stmt *st[LEDGER_ST__CNT]; /* writer only */
        ledger_commit_hook *hook;
        void *hook_opaque;
        /* Id windows, by the tracker's window index. */
        struct ledger_window *win;
        uint32_t nwin;
        char *dedup_key;
        int64_t batch_seq;   /* last msgid_batches.seq written */
        unsigned char *ebuf; /* packed entries being written */
        size_t ebuf_cap;
        int lookup_failed; /* a lookup failed: say why at commit */
        char lookup_err[512];
        /* Closed generations in files (idfiles.c): "<path>-ids", and the
         * writer's file generations of its windows plus those the open
         * transaction deletes. */
        char *ids_dir;
        struct ledger_idfile *idf;
        size_t nidf, idf_cap;
        /* The flow audit (flow.c), attached by ledger_flow_load(): written
         * by every commit.  NULL: none. */
        struct dedup_flow *flow;
        struct ledger_flow_store *fs; /* flow_store.c; NULL: not open */
        size_t flow_gen_views;        /* 0: LEDGER_FLOW_GEN_VIEWS */
        const struct ledger_part *flow_parts; /* borrowed */
        size_t flow_nparts;
        const char *flow_expect;
        /* A log truncated under the audit (truncate.c): the runs noted
         * since the last commit, pending truncations, statements. */
        struct ledger_trunc *trunc;
};

/* truncate.c: ledger_commit() writes the runs noted, the dirty parts'
 * fingerprints and pending truncations in its transaction, and forgets
 * them once it committed; ledger_close() frees them. */
int ledger_trunc_write(struct ledger *lg, const struct ledger_part *parts,
                       size_t nparts, int64_t now_ms, char *errstr,
                       size_t errstr_size);
void ledger_trunc_committed(struct ledger *lg);
void ledger_trunc_free(struct ledger *lg);

/* common.c */
void ledger_err(struct ledger *lg, const char *what, char *errstr,
                size_t errstr_size);
uint64_t ledger_u64_get(sqlite3_stmt *st, int col);
/* Counters are stored clamped to INT64_MAX, the largest SQLite integer. */
int64_t ledger_u64_put(uint64_t v);
/* Reads a column that may be NULL (the engine's "unknown", as
 * ledger_bind_opt() writes it) as -1. */
int64_t ledger_col_opt(sqlite3_stmt *st, int col);
/* Binds ?1 to topic, or NULL for all topics. */
int ledger_bind_topic(sqlite3_stmt *st, const char *topic);
void ledger_counts_get(sqlite3_stmt *st, int col, struct dedup_counts *c);
int ledger_bind_key(sqlite3_stmt *st, const struct ledger_part *p,
                    const char *producer, size_t producer_len);
int ledger_step_done(struct ledger *lg, sqlite3_stmt *st, int brc,
                     const char *what, char *errstr, size_t errstr_size);
int ledger_exec(struct ledger *lg, const char *sql, const char *what,
                char *errstr, size_t errstr_size);
int ledger_prepare(struct ledger *lg, const char *sql, sqlite3_stmt **st,
                   char *errstr, size_t errstr_size);
int ledger_query_row(struct ledger *lg, const char *sql, const char *what,
                     sqlite3_stmt **st, char *errstr, size_t errstr_size);
int ledger_parts_check(const struct ledger_part *parts, size_t nparts,
                       char *errstr, size_t errstr_size);

/* counts.c: what one batch changed in the counts of schema/0005_counts.sql,
 * per part (so per topic), written by ledger_counts_flush() at its end. */
struct ledger_counts_delta {
        int64_t pairs, producers, open_gaps, coverage_gaps, coverage_records;
};

/* The batch's pair inserts and deletes summed per (topic, producer)
 * (counts.c); zeroed to start, ledger_counts_free() at the end.  Keeps
 * the topic and producer pointers: they must live until the flush. */
struct ledger_counts_ref_sum;
struct ledger_counts {
        struct ledger_counts_ref_sum *v;
        size_t n, cap;
};

/* A pair (p's topic, producer) was inserted (add) or deleted: counts it in
 * d and sums it in c.  -1 only when out of memory. */
int ledger_counts_pair(struct ledger_counts *c, const struct ledger_part *p,
                       const char *producer, size_t producer_len, int add,
                       struct ledger_counts_delta *d, char *errstr,
                       size_t errstr_size);
void ledger_counts_free(struct ledger_counts *c);
/* Writes c's sums (the distinct producers per topic and in all, adding
 * to d) and the deltas d: one row per topic touched. */
int ledger_counts_flush(struct ledger *lg, const struct ledger_part *parts,
                        size_t nparts, struct ledger_counts_delta *d,
                        const struct ledger_counts *c, char *errstr,
                        size_t errstr_size);

/* entries.c: a blob of packed ids.  Writing: ledger_entry_narrow() says
 * whether an id at partition and offset fits narrow (a blob is narrow
 * when all of its ids do), the blob
 * takes ledger_entries_size() bytes, ledger_entries_put() fills entry i.
 * Reading: a view (-1: the blob is neither format), entry i (hi cut to
 * DEDUP_WINDOW_HI_MASK, as a window compares ids), or id's entry: 1 and
 * where, or 0 (*partition, *offset untouched).  sorted: the blob is sorted by id (a closed generation's
 * chunk), else searched whole (a batch). */
struct ledger_entries {
        const unsigned char *p; /* the first entry */
        size_t n;
        size_t size; /* LEDGER_ENTRY_NARROW or LEDGER_ENTRY_WIDE */
};
int ledger_entry_narrow(int32_t partition, int64_t offset);
size_t ledger_entries_size(size_t n, int narrow);
void ledger_entries_put(unsigned char *blob, int narrow, size_t i,
                        const struct dedup_id *id, int32_t partition,
                        int64_t offset);
int ledger_entries_view(const void *blob, size_t len,
                        struct ledger_entries *v);
void ledger_entries_get(const struct ledger_entries *v, size_t i,
                        struct dedup_id *id, int32_t *partition,
                        int64_t *offset);
int ledger_entries_find(const struct ledger_entries *v, int sorted,
                        const struct dedup_id *id, int32_t *partition,
                        int64_t *offset);
/* The key (h1, h2) to look id's chunk up by: the last chunk of its
 * generation whose (h1, h2) is not above it. */
void ledger_chunk_bound(const struct dedup_id *id, int64_t *h1, int64_t *h2);

/* idfiles.c: closed generations in files of their own.  init names the
 * directory (and a writer creates it); write makes gen's file durable and
 * known (call before the commit that names it); add makes a file of
 * bytes whose entries v shows known (at load); is: whether gen's ids are
 * in a known file; find looks an id up in one (1, 0, -1 with errstr);
 * view maps any gen's file for one reading (the load, readers; *map NULL
 * for 0 bytes), unmap undoes it; drop: gen's
 * row is being deleted, its file goes once the transaction commits.
 * sweep removes files no row names.  ledger_txn() runs BEGIN or COMMIT
 * (a commit unlinks the files the transaction dropped), ledger_rollback()
 * ends a failed transaction if one is open (its drops stay). */
enum ledger_idfile_kind {
        LEDGER_IDFILE_IDS,     /* "<gen>.ids": an id window's generation */
        LEDGER_IDFILE_FLOW,    /* "<gen>.flow": flow entries (flow_store.c) */
        LEDGER_IDFILE_FLOWLOG, /* "<log>.flowlog": the flow store's
                                  batches (flow_store.c) */
};
int ledger_idfiles_init(struct ledger *lg, const char *path, char *errstr,
                        size_t errstr_size);
/* What every kind shares: create writes blob whole as kind's file gen and
 * makes it durable (file, then directory); map maps one of bytes (> 0)
 * read-only, after checking its length (NULL with errstr); pread reads want
 * bytes from at; span: which entries to read for key, given the sparse
 * index lo (every step-th entry's first 8 bytes, little-endian, of n
 * entries sorted by them): first and cnt, two steps at most. */
int ledger_idfile_create(struct ledger *lg, enum ledger_idfile_kind kind,
                         uint64_t gen, const unsigned char *blob, size_t len,
                         char *errstr, size_t errstr_size);
/* append: writes blob at offset at of kind's file gen (created, or
 * emptied, when at is 0) and makes it durable; unlink: removes kind's
 * file gen (a failure is logged: the next load's sweep removes it). */
int ledger_idfile_append(struct ledger *lg, enum ledger_idfile_kind kind,
                         uint64_t gen, size_t at, const unsigned char *blob,
                         size_t len, char *errstr, size_t errstr_size);
void ledger_idfile_unlink(const struct ledger *lg,
                          enum ledger_idfile_kind kind, uint64_t gen);
void *ledger_idfile_map(const struct ledger *lg, enum ledger_idfile_kind kind,
                        uint64_t gen, size_t bytes, char *errstr,
                        size_t errstr_size);
/* open: kind's file gen for reading (its fd, or -1 with errstr);
 * pread_fd: want bytes at at from fd (0, or -1 and errno). */
int ledger_idfile_open(const struct ledger *lg, enum ledger_idfile_kind kind,
                       uint64_t gen, char *errstr, size_t errstr_size);
int ledger_idfile_pread_fd(int fd, size_t at, unsigned char *buf, size_t want);
int ledger_idfile_pread(const struct ledger *lg, enum ledger_idfile_kind kind,
                        uint64_t gen, size_t at, unsigned char *buf,
                        size_t want, char *errstr, size_t errstr_size);
void ledger_idfile_span(const uint64_t *lo, size_t n, size_t step,
                        uint64_t key, size_t *first, size_t *cnt);
int ledger_idfile_write(struct ledger *lg, uint64_t gen,
                        const unsigned char *blob, size_t len, char *errstr,
                        size_t errstr_size);
int ledger_idfile_add(struct ledger *lg, uint64_t gen, size_t bytes,
                      const struct ledger_entries *v);
int ledger_idfile_is(struct ledger *lg, uint64_t gen);
int ledger_idfile_find(struct ledger *lg, uint64_t gen,
                       const struct dedup_id *id, int32_t *partition,
                       int64_t *offset, char *errstr, size_t errstr_size);
int ledger_idfile_view(struct ledger *lg, uint64_t gen, size_t bytes,
                       void **map, struct ledger_entries *v, char *errstr,
                       size_t errstr_size);
void ledger_idfile_unmap(void *map, size_t bytes);
int ledger_idfile_drop(struct ledger *lg, uint64_t gen);
int ledger_txn(struct ledger *lg, enum ledger_stmt which, const char *what,
               char *errstr, size_t errstr_size);
void ledger_rollback(struct ledger *lg);
int ledger_idfiles_sweep(struct ledger *lg, enum ledger_idfile_kind kind,
                         char *errstr, size_t errstr_size);
void ledger_idfiles_free(struct ledger *lg);

/* ids.c */
void ledger_windows_free(struct ledger *lg);
int ledger_gen_step(struct ledger *lg, enum ledger_stmt which, uint64_t gen,
                    const char *what, char *errstr, size_t errstr_size);
int ledger_gen_del(struct ledger *lg, uint64_t gen, char *errstr,
                   size_t errstr_size);
/* Deletes topic's generations (ledger_gen_del(): rows, ids, files), all
 * of them, or those not made under keep_key when it is not NULL. */
int ledger_topic_gens_del(struct ledger *lg, const char *topic,
                          const char *keep_key, char *errstr,
                          size_t errstr_size);

/* flow.c: writes the attached flow's batch (inside the commit's
 * transaction), and clears its dirty set once the commit is done. */
int ledger_flow_write(struct ledger *lg, int64_t now_ms, char *errstr,
                      size_t errstr_size);
void ledger_flow_committed(struct ledger *lg);
/* flow.c: topic starts a new incarnation (incarnate.c, inside its
 * transaction, before ledger_flow_load()).  The live flow entries that
 * name it are retired: not yet judged (pending, awaiting) dropped, as part
 * of the incarnation's coverage gap; judged (delivered, lost, duplicated,
 * unexpected) moved to the retired counters, lost / duplicated /
 * unexpected kept as evidence; a delivered source record of another
 * topic whose copies were in topic kept, its copies forgotten (prior).
 * Returns 0, or -1 with errstr. */
struct ledger_flow_reborn {
        uint64_t unjudged, judged, prior;
};
int ledger_flow_incarnate(struct ledger *lg, const char *topic,
                          struct ledger_flow_reborn *out, char *errstr,
                          size_t errstr_size);
/* flow_store.c: the flow engine's entries, packed (schema/0016).  open
 * reads the topics, indexes the files and keeps the batches' views (a
 * writer also removes files no row names); attach maps lg->flow_parts to
 * stored keys (adding topics); restore fills a new flow with the live
 * entries, in seq order (*dropped: those naming a part not in the flow).
 * A commit: begin, put each retired (live 0) and dirty (live 1) view,
 * flush (inside the transaction; closes the batches into a file first
 * when they hold LEDGER_FLOW_GEN_VIEWS), then committed once it has
 * committed.  find: the latest retired view of id (1, 0, -1 with errstr).
 * incarnate: topic starts a new incarnation (inside the caller's
 * transaction; the store is read again at the next open): its entries'
 * new views appended, what moved counted in *r.  legacy: converts a
 * ledger's flow_entries rows from before the store (sql selects the
 * columns row reads, then live), once. */
#define LEDGER_FLOW_VIEW 128
/* A flow file's sparse index: every 16th view, so that a revival reads
 * 4 KiB, not the 32 KiB an id file's step of 128 would make of views. */
#define LEDGER_FLOW_STEP 16
#define LEDGER_FLOW_GEN_VIEWS 131072
struct ledger_flow_store;
struct ledger_flow_inc {
        uint64_t unjudged, judged, prior;
        uint64_t gone_pending, gone_awaiting, gone;
        struct dedup_flow_counts retired; /* added by the judged */
};
int ledger_flow_store_open(struct ledger *lg, char *errstr,
                           size_t errstr_size);
int ledger_flow_store_attach(struct ledger *lg, char *errstr,
                             size_t errstr_size);
int ledger_flow_store_restore(struct ledger *lg, struct dedup_flow *fl,
                              size_t *dropped, char *errstr,
                              size_t errstr_size);
void ledger_flow_store_begin(struct ledger *lg);
int ledger_flow_store_put(struct ledger *lg, const struct dedup_flow_view *v,
                          int live);
int ledger_flow_store_flush(struct ledger *lg, char *errstr,
                            size_t errstr_size);
void ledger_flow_store_committed(struct ledger *lg);
int ledger_flow_store_find(struct ledger *lg, const struct dedup_id *id,
                           struct dedup_flow_view *out, char *errstr,
                           size_t errstr_size);
/* Calls cb with the latest view of every retired entry (live = 0) of the
 * attached flow, committed; cb returning non-zero (out of memory) stops
 * it.  0, or -1 with errstr. */
typedef int(ledger_flow_view_fn)(void *opaque,
                                 const struct dedup_flow_view *v);
int ledger_flow_store_retired_foreach(struct ledger *lg,
                                      ledger_flow_view_fn *cb, void *opaque,
                                      char *errstr, size_t errstr_size);
int ledger_flow_store_incarnate(struct ledger *lg, const char *topic,
                                struct ledger_flow_inc *r, char *errstr,
                                size_t errstr_size);
int ledger_flow_store_legacy(struct ledger *lg,
                             int (*row)(struct ledger *, sqlite3_stmt *,
                                        struct dedup_flow_view *),
                             const char *sql, char *errstr,
                             size_t errstr_size);
void ledger_flow_store_free(struct ledger *lg);

/* txn.c: the transaction check's dirty state, inside the commit's
 * transaction. */
/* topic.c: the dirty topic-scoped streams, inside ledger_commit()'s
 * transaction; and every stored one into tr (inside ledger_load()'s read
 * snapshot, after the parts were tied to their topics). */
int ledger_topics_put(struct ledger *lg, struct dedup_tracker *tr,
                      const struct ledger_part *parts, size_t nparts,
                      char *errstr, size_t errstr_size);
int ledger_topics_load(struct ledger *lg, struct dedup_tracker *tr,
                       const struct ledger_part *parts, size_t nparts,
                       char *errstr, size_t errstr_size);
int ledger_txns_put(struct ledger *lg, struct dedup_tracker *tr,
                    const struct ledger_part *parts, size_t nparts,
                    char *errstr, size_t errstr_size);

#endif /* EOSAUDIT_LEDGER_INTERNAL_H */
