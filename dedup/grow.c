/*
 * grow.c - the one growth function of the engine's arrays (pairs.c's
 * tables, window.c's rows and lists).
 */
#include <stdlib.h>

#include "internal.h"

int dedup_grow(void **arr, size_t *cap, size_t need, size_t elem,
               size_t first, size_t *mem)
{
        size_t ncap;
        void *p;

        if (need <= *cap)
                return 0;
        ncap = *cap ? *cap * 2 : first;
        while (ncap < need)
                ncap *= 2;
        p = realloc(*arr, ncap * elem);
        if (!p)
                return -1;
        *mem += (ncap - *cap) * elem;
        *arr = p;
        *cap = ncap;
        return 0;
}
