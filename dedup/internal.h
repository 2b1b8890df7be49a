/*
 * internal.h - what tracker.c and window.c share; not part of the engine's
 * API (dedup.h is).
 *
 * struct dedup_ids holds every id window of one tracker, the ids of their
 * open generations (with a hash index over them, so a repeat there is
 * found without the store), and what the current batch closed and
 * dropped.  Single-threaded, like the tracker.
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

/*
 * Grows *arr (of elem-sized items, *cap of them) to hold at least need,
 * doubling from first; adds the bytes it allocates to *mem.  Returns 0, or
 * -1 leaving *arr and *cap as they were.
 */
int dedup_grow(void **arr, size_t *cap, size_t need, size_t elem,
               size_t first, size_t *mem);

struct dedup_ids;

/* NULL on allocation failure; conf is copied. */
struct dedup_ids *ids_new(const struct dedup_window_config *conf);
void ids_free(struct dedup_ids *ids);

int ids_window_add(struct dedup_ids *ids, uint32_t *window);
uint32_t ids_windows(const struct dedup_ids *ids);
int ids_gen_open(const struct dedup_ids *ids, uint32_t window, uint64_t gen);
void *ids_window_filters(const struct dedup_ids *ids, uint32_t window,
                         size_t *bytes);

void ids_set_lookup(struct dedup_ids *ids, dedup_id_lookup_cb *cb,
                    void *opaque);

/* Starts loading id's filter block, to check it a little later. */
void ids_prefetch(const struct dedup_ids *ids, uint32_t window,
                  const struct dedup_id *id);

/*
 * Checks id (seen at part, offset, now) against window.  Returns 1 for a
 * repeat with the first copy's *first_part and *first_offset, 0 for an id
 * not seen before (it is now in the window's current generation), or -1
 * on allocation failure or a failed lookup.
 */
int ids_check(struct dedup_ids *ids, uint32_t window,
              const struct dedup_id *id, uint32_t part, int64_t offset,
              int64_t now_ms, uint32_t *first_part, int64_t *first_offset);

/* Drops generations older than the age bound. */
void ids_tick(struct dedup_ids *ids, int64_t now_ms);

/* Forgets the batch: new ids, dirty and dropped generations. */
void ids_batch_clear(struct dedup_ids *ids);

const struct dedup_id_row *ids_new_rows(const struct dedup_ids *ids,
                                        size_t *n);
int ids_gens_dirty_foreach(struct dedup_ids *ids, dedup_gen_cb *cb,
                           void *opaque);
int ids_gens_closed_foreach(struct dedup_ids *ids, dedup_gen_rows_cb *cb,
                            void *opaque);
const uint64_t *ids_gens_dropped(const struct dedup_ids *ids, size_t *n);
int ids_gen_restore(struct dedup_ids *ids, const struct dedup_gen_view *gv);
int ids_id_restore(struct dedup_ids *ids, uint32_t window, uint64_t gen,
                   const struct dedup_id *id);
int ids_row_restore(struct dedup_ids *ids, const struct dedup_id_row *row);
uint64_t ids_window_ids(const struct dedup_ids *ids, uint32_t window);
size_t ids_memory(const struct dedup_ids *ids);

#endif /* EOSAUDIT_DEDUP_INTERNAL_H */
