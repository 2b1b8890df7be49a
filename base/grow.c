/*
 * grow.c - see grow.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

int grow_array(void **arr, size_t *cap, size_t need, size_t elem, size_t first,
               size_t *mem)
{
        size_t ncap;
        void *p;

        if (need <= *cap)
                return 0;
        ncap = *cap ? *cap : (first ? first : 1);
        while (ncap < need) {
                if (ncap > SIZE_MAX / 2)
                        return -1;
                ncap *= 2;
        }
        if (elem && ncap > SIZE_MAX / elem)
                return -1;
        p = realloc(*arr, ncap * elem);
        if (!p)
                return -1;
        if (mem)
                *mem += (ncap - *cap) * elem;
        *arr = p;
        *cap = ncap;
        return 0;
}

int grow_array_zero(void **arr, size_t *cap, size_t need, size_t elem,
                    size_t first, size_t *mem)
{
        size_t old = *cap;

        if (grow_array(arr, cap, need, elem, first, mem))
                return -1;
        if (*cap > old)
                memset((char *)*arr + old * elem, 0, (*cap - old) * elem);
        return 0;
}
