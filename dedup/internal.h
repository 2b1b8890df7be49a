/*
 * internal.h - what the engine's files share; not part of the engine's
 * API (dedup.h is).
 *
 *   hdrs.c     parsing of the eos.* record headers
 *   hash.c     the 128-bit identity hash of the id windows (MurmurHash3)
 *   pairs.c    the tracker's tables: names, the pair slab, part indexes
 *              (arrays grown by base/grow.h's grow_array())
 *   event.c    a new event, the producer of a pair's event, a record
 *              counted into the event it continues
 *   session.c  a producer's current session across its partitions
 *   observe.c  classification of a record, events, open gaps
 *   tracker.c  configuration, parts, ticks, persistence views, restore
 *   rewind.c   a partition's records past a truncated log's divergence
 *              point taken back (dedup_tracker_part_rewind())
 *   topic.c    topic-scoped streams (topic.h): windows of seen seqs
 *   window.c   the id windows (struct dedup_windows)
 *   txn.c      the transaction check (txn.h)
 *   flow*.c    the flow audit's engine (flow.h; flow_internal.h maps
 *              them)
 *
 * "Window" is the one name of the id windows: struct dedup_windows holds
 * every id window of one tracker (dedup_windows_*()), the tracker's API
 * for them is dedup_tracker_window_*() and its configuration struct
 * dedup_window_config.  Single-threaded, like the tracker.
 */
#ifndef EOSAUDIT_DEDUP_INTERNAL_H
#define EOSAUDIT_DEDUP_INTERNAL_H

#include "dedup.h"

/* MurmurHash3's 64-bit finalizer: every input bit reaches every output
 * bit.  The tracker's name and pair hashes use it too. */
static inline uint64_t dedup_fmix64(uint64_t k)
{
        k ^= k >> 33;
        k *= 0xff51afd7ed558ccdULL;
        k ^= k >> 33;
        k *= 0xc4ceb9fe1a85ec53ULL;
        k ^= k >> 33;
        return k;
}

/* ------------------------------------------------------------------ */
/* Id windows (window.c)                                               */
/* ------------------------------------------------------------------ */

struct dedup_windows;

/* NULL on allocation failure; conf is copied. */
struct dedup_windows *
dedup_windows_new(const struct dedup_window_config *conf);
void dedup_windows_free(struct dedup_windows *ws);

int dedup_windows_add(struct dedup_windows *ws, uint32_t *window);
uint32_t dedup_windows_count(const struct dedup_windows *ws);
int dedup_windows_gen_open(const struct dedup_windows *ws, uint32_t window,
                           uint64_t gen);
void *dedup_windows_filters(const struct dedup_windows *ws, uint32_t window,
                            size_t *bytes);

void dedup_windows_set_lookup(struct dedup_windows *ws, dedup_id_lookup_cb *cb,
                              void *opaque);

/* Starts loading id's filter block, to check it a little later. */
void dedup_windows_prefetch(const struct dedup_windows *ws, uint32_t window,
                            const struct dedup_id *id);

/*
 * Checks id (seen at part, offset, now) against window.  Returns 1 for a
 * repeat with the first copy's *first_part and *first_offset, 0 for an id
 * not seen before (it is now in the window's current generation), or -1
 * on allocation failure or a failed lookup.
 */
int dedup_windows_check(struct dedup_windows *ws, uint32_t window,
                        const struct dedup_id *id, uint32_t part,
                        int64_t offset, int64_t now_ms, uint32_t *first_part,
                        int64_t *first_offset);

/* Drops generations older than the age bound. */
void dedup_windows_tick(struct dedup_windows *ws, int64_t now_ms);

/* Forgets the batch: new ids, dirty and dropped generations. */
void dedup_windows_batch_clear(struct dedup_windows *ws);

const struct dedup_id_row *
dedup_windows_new_rows(const struct dedup_windows *ws, size_t *n);
int dedup_windows_gens_dirty_foreach(struct dedup_windows *ws,
                                     dedup_gen_cb *cb, void *opaque);
int dedup_windows_gens_closed_foreach(struct dedup_windows *ws,
                                      dedup_gen_rows_cb *cb, void *opaque);
size_t dedup_windows_gens_closed(const struct dedup_windows *ws);
const uint64_t *dedup_windows_gens_dropped(const struct dedup_windows *ws,
                                           size_t *n);
int dedup_windows_gen_restore(struct dedup_windows *ws,
                              const struct dedup_gen_view *gv);
int dedup_windows_id_restore(struct dedup_windows *ws, uint32_t window,
                             uint64_t gen, const struct dedup_id *id);
int dedup_windows_row_restore(struct dedup_windows *ws,
                              const struct dedup_id_row *row);
uint64_t dedup_windows_ids(const struct dedup_windows *ws, uint32_t window);
size_t dedup_windows_memory(const struct dedup_windows *ws);

/* ------------------------------------------------------------------ */
/* The tracker's state (pairs.c, observe.c, tracker.c)                 */
/* ------------------------------------------------------------------ */

#define NONE UINT32_MAX

#define PAIR_LIVE 0x1u
#define PAIR_DIRTY 0x2u
#define PAIR_REBASELINE 0x4u
#define PAIR_GAPLIST 0x8u
/* its confirmed gaps changed since the last dirty_clear */
#define PAIR_DONE_DIRTY 0x10u
/* restored, or dirty at a dirty_clear: the caller has most likely
 * persisted it */
#define PAIR_STORED 0x20u

/*
 * A producer, with its current session across every part: a producer's
 * epoch (and broker producer id) is one for all of its partitions and
 * topics.  retired holds the last producer ids it replaced, newest last,
 * so that a write from one of them is known to be older; session_* is the
 * first record of the current session (session_ms -1 when that record had
 * no timestamp, or the session was restored).
 */
struct dedup_name {
        uint64_t hash;
        uint32_t refcnt;
        uint32_t len;
        int32_t epoch; /* highest of the current pid; -1 none */
        uint32_t session_part;
        int64_t pid; /* -1: unknown */
        int64_t retired[DEDUP_RETIRED_PIDS];
        int64_t session_ms;
        int64_t session_offset;
        int64_t pid_ms; /* restore: last_ms of the newest pair of pid */
        char bytes[];
};

struct dedup_gapset {
        uint32_t n, cap;
        struct dedup_gap g[];
};

struct dedup_pair {
        uint32_t part;
        uint32_t name;
        int32_t epoch;
        uint32_t flags;
        int64_t last_seq; /* -1: none accepted in this epoch yet */
        int64_t pid;      /* eos.pid of the session; -1: unknown */
        int64_t last_ms;
        uint64_t records;
        struct dedup_gapset *gaps;
        struct dedup_gapset *done; /* confirmed gaps still remembered */
        /* The DEDUP_HISTORY_RUNS latest runs, newest first, as arrays so
         * that no padding is paid per run; run 0 ends at the last accepted
         * record, so its offset needs no field of its own. */
        int64_t run_seq[DEDUP_HISTORY_RUNS];
        int64_t run_off[DEDUP_HISTORY_RUNS];
        uint32_t run_len[DEDUP_HISTORY_RUNS];
};

/* The slab grows by blocks, never by realloc: no copy of the whole slab,
 * and at most one block of slack. */
#define PAIR_BLOCK_SHIFT 12
#define PAIR_BLOCK ((uint32_t)1 << PAIR_BLOCK_SHIFT)

struct dedup_part {
        struct dedup_counts counts;
        uint32_t *idx; /* pair slot + 1 by name id, 0 = empty */
        uint32_t mask;
        uint32_t live;                  /* pairs of this part */
        uint32_t chunk_next, chunk_end; /* slab slots reserved for it */
        uint32_t cache;  /* last pair seen on this part, or NONE */
        uint32_t window; /* id window, or NONE */
        int added;
        int from_log_start;
        int compacted;
        /* Topic-scoped streams (topic.c): the part's topic (NONE: none),
         * the latest record time read on it (INT64_MIN: none yet), and
         * whether the caller said it is read to its end. */
        uint32_t topic;
        int at_end;
        int64_t read_ms;
};

struct u32vec {
        uint32_t *v;
        size_t n, cap;
};

struct dedup_tracker {
        struct dedup_config conf;
        int64_t now_ms;   /* the caller's wall clock (dedup_tracker_begin) */
        int64_t rec_ms;   /* the time of the record being observed */
        int64_t clock_ms; /* the records' clock: the latest record time */
        int64_t last_expire_ms;
        int failed;
        size_t mem;

        struct dedup_part *parts;
        uint32_t nparts;

        struct dedup_pair **blocks; /* slab: PAIR_BLOCK pairs each */
        size_t nblocks, blocks_cap;
        uint32_t npairs_slab; /* slots handed out so far */
        size_t live_pairs;
        struct u32vec pair_free;    /* reusable now */
        struct u32vec pair_pending; /* reusable after dirty_clear */

        struct dedup_name **names;
        uint32_t nnames_slab, names_cap;
        size_t live_names;
        struct u32vec name_free;
        uint32_t *name_idx;
        uint32_t name_idx_mask;
        struct dedup_name **graveyard; /* freed at events_clear */
        size_t ngrave, grave_cap;

        struct u32vec dirty;
        struct u32vec gap_pairs; /* pairs with open gaps */
        size_t open_gaps;

        struct dedup_event *ev;
        size_t nev, ev_cap;

        struct dedup_windows *wins;
        struct dedup_txns *txns;     /* txn.c; NULL until dedup_txn_enable() */
        struct dedup_topics *topics; /* topic.c; NULL until a part is
                                        tied to a topic */
        uint64_t redeliv_rec; /* part record count at the last redelivered
                                 record (to coalesce the next one) */
};

static inline struct dedup_pair *dedup_pair_at(const struct dedup_tracker *tr,
                                               uint32_t slot)
{
        return &tr->blocks[slot >> PAIR_BLOCK_SHIFT][slot & (PAIR_BLOCK - 1)];
}

/* pairs.c: heap accounting; failures set tr->failed. */
void *dedup_mem_realloc(struct dedup_tracker *tr, void *p, size_t old_sz,
                        size_t new_sz);
void dedup_mem_free(struct dedup_tracker *tr, void *p, size_t sz);
int dedup_mem_grow(struct dedup_tracker *tr, void **arr, size_t *cap,
                   size_t need, size_t elem);
int dedup_u32vec_push(struct dedup_tracker *tr, struct u32vec *vec,
                      uint32_t x);

/* pairs.c: names and pairs. */
uint64_t dedup_hash_bytes(const char *p, size_t len);
uint64_t dedup_pair_key_hash(uint32_t name);
uint64_t dedup_pair_keyhash(struct dedup_tracker *tr, uint32_t slot);
void dedup_idx_remove(struct dedup_tracker *tr, uint32_t *idx, uint32_t mask,
                      uint32_t slot, uint64_t h,
                      uint64_t (*keyhash)(struct dedup_tracker *, uint32_t));
uint32_t dedup_name_find(struct dedup_tracker *tr, const char *p, size_t len,
                         uint64_t h);
/* Returns the name id with one more reference, or NONE on failure. */
uint32_t dedup_name_ref(struct dedup_tracker *tr, const char *p, size_t len);
void dedup_name_unref(struct dedup_tracker *tr, uint32_t id);
uint32_t dedup_pair_find(struct dedup_tracker *tr, uint32_t part,
                         uint32_t name);
/* Creates a pair for (part, producer); takes a name reference. */
uint32_t dedup_pair_new(struct dedup_tracker *tr, uint32_t part,
                        const char *producer, size_t len);
/* The pair of h's producer on part (created when new: *created = 1),
 * NONE on allocation failure. */
uint32_t dedup_pair_lookup(struct dedup_tracker *tr, struct dedup_part *p,
                           uint32_t part, const struct dedup_hdrs *h,
                           int *created);
void dedup_pair_dirty(struct dedup_tracker *tr, uint32_t slot);
/* Offset of the pair's last accepted record, -1 when none in its epoch. */
int64_t dedup_pair_last_offset(const struct dedup_pair *pr);
size_t dedup_gapset_size(uint32_t cap);

/* observe.c: events and gaps. */
struct dedup_event *dedup_event_new(struct dedup_tracker *tr,
                                    enum dedup_kind kind, uint32_t part);
void dedup_event_pair_fill(struct dedup_tracker *tr, struct dedup_event *ev,
                           const struct dedup_pair *pr);
void dedup_gap_confirm(struct dedup_tracker *tr, struct dedup_pair *pr,
                       const struct dedup_gap *g);
void dedup_gap_remove_at(struct dedup_tracker *tr, struct dedup_pair *pr,
                         uint32_t i);
/* Inserts a gap at position i (gaps are kept in the order they opened,
 * except that split halves stay next to each other). */
int dedup_gap_insert_at(struct dedup_tracker *tr, uint32_t slot, uint32_t i,
                        const struct dedup_gap *g);
/* Frees the gap set if empty; the gap list entry is dropped in a sweep. */
void dedup_gaps_trim(struct dedup_tracker *tr, struct dedup_pair *pr);
/* Remembers a confirmed gap of the pair's epoch (others: nothing). */
int dedup_done_add(struct dedup_tracker *tr, struct dedup_pair *pr,
                   const struct dedup_gap *g);
/* Forgets the pair's confirmed gaps. */
void dedup_done_free(struct dedup_tracker *tr, struct dedup_pair *pr);
/* Confirms the gaps of pair slot past their grace (all when force). */
void dedup_gaps_sweep_pair(struct dedup_tracker *tr, uint32_t slot, int force);
void dedup_gaps_sweep_all(struct dedup_tracker *tr, int force);

/* session.c: how recent pid is among nm's producer ids: 0 (unknown) to
 * 1 + the number of retired ids kept (the current one). */
int dedup_pid_rank(const struct dedup_name *nm, int64_t pid);
/* session.c: follows the producer's current session (across its parts
 * and topics) at this record; returns 1 when the record belongs to an
 * older session of the producer, else 0. */
int dedup_producer_session(struct dedup_tracker *tr, struct dedup_name *nm,
                           const struct dedup_hdrs *h, uint32_t part,
                           int64_t offset);
/* event.c: one counted record of kind, extending the last event when
 * it continues it (same kind, part, producer, epoch, next seq, later
 * offset; a duplicate's first copy on the same part, and, with
 * first_next, at the offset after the last one's: where a stream's seqs
 * and offsets need not advance together). */
void dedup_record_event(struct dedup_tracker *tr, enum dedup_kind kind,
                        uint32_t part, uint32_t name, int32_t epoch,
                        int64_t seq, int64_t offset, uint32_t first_part,
                        int64_t first_offset, int first_next);

/* topic.c: a tracked record whose eos.scope is topic (counted in its
 * part's records already); the topic streams' part of tick and
 * confirm_all, of part_rebaseline, of dirty_clear and of free (no-ops
 * while no part is tied to a topic). */
enum dedup_verdict dedup_topic_observe(struct dedup_tracker *tr, uint32_t part,
                                       int64_t offset,
                                       const struct dedup_hdrs *h);
void dedup_topics_sweep(struct dedup_tracker *tr, int force);
void dedup_topics_rebaseline(struct dedup_tracker *tr, uint32_t part);
void dedup_topics_dirty_clear(struct dedup_tracker *tr);
void dedup_topics_free(struct dedup_tracker *tr);

/* txn.c: the transaction check's part of tick, confirm_all, dirty_clear
 * and free (all no-ops while it is off). */
void dedup_txns_sweep(struct dedup_tracker *tr, int force);
void dedup_txns_dirty_clear(struct dedup_tracker *tr);
void dedup_txns_free(struct dedup_tracker *tr);

#endif /* EOSAUDIT_DEDUP_INTERNAL_H */
