/*
 * grow.h - the one growth function of the project's arrays: the engine's
 * tables and rows, the group code's buffers, the reports' lists.  Pure:
 * realloc() only; callable from any thread on an array it owns.
 */
#ifndef EOSAUDIT_GROW_H
#define EOSAUDIT_GROW_H

#include <stddef.h>

/* Grows *arr (of *cap items of elem bytes) to hold at least need items:
 * doubling from first (when *cap is 0) until it does.  Adds the bytes it
 * allocated to *mem when mem is not NULL.  Returns 0, or -1 when memory
 * runs out or the size would overflow (*arr and *cap are then left as
 * they were). */
int grow_array(void **arr, size_t *cap, size_t need, size_t elem, size_t first,
               size_t *mem);

/* grow_array(), and the items it added are zero bytes (arrays indexed by
 * a number whose unset items must read as 0). */
int grow_array_zero(void **arr, size_t *cap, size_t need, size_t elem,
                    size_t first, size_t *mem);

#endif
