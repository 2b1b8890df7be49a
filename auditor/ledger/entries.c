/*
 * entries.c - the packed ids of the id windows (schema/0002_msgids.sql,
 * schema/0012_msgid_entries.sql): writing a blob of them, reading one
 * back, finding an id in one.
 *
 * A blob is narrow or wide, and its length says which: narrow is one tag
 * byte then 22 bytes per id (an odd length), wide 32 bytes per id (an even
 * one).  Narrow holds what a window keeps of an id (its hash's low 64 bits
 * and the high half's low 48: DEDUP_WINDOW_HI_MASK), a 16-bit partition
 * and a 48-bit offset; an id that does not fit (a partition above 65535,
 * an offset from 2^48) makes its whole blob wide.  Blobs written before
 * narrow existed are wide, with all 128 bits: reading cuts them to what a
 * window compares.
 */
#include "../../base/le.h"
#include "internal.h"

#define NARROW_TAG 0x01
#define PART_MAX 0xffffu
#define OFFSET_MAX (((int64_t)1 << 48) - 1)

int ledger_entry_narrow(int32_t partition, int64_t offset)
{
        return partition >= 0 && (uint32_t)partition <= PART_MAX &&
               offset >= 0 && offset <= OFFSET_MAX;
}

size_t ledger_entries_size(size_t n, int narrow)
{
        return narrow ? 1 + n * LEDGER_ENTRY_NARROW : n * LEDGER_ENTRY_WIDE;
}

void ledger_entries_put(unsigned char *blob, int narrow, size_t i,
                        const struct dedup_id *id, int32_t partition,
                        int64_t offset)
{
        unsigned char *p;
        uint64_t off = (uint64_t)offset;

        if (!narrow) {
                p = blob + i * LEDGER_ENTRY_WIDE;
                le64_put(p, id->lo);
                le64_put(p + 8, id->hi);
                /* partition (4 bytes), then 4 zero bytes */
                le64_put(p + 16, (uint64_t)(uint32_t)partition);
                le64_put(p + 24, off);
                return;
        }
        blob[0] = NARROW_TAG;
        p = blob + 1 + i * LEDGER_ENTRY_NARROW;
        le64_put(p, id->lo);
        le64_put(p + 8, (id->hi & DEDUP_WINDOW_HI_MASK) |
                            ((uint64_t)(uint32_t)partition << 48));
        le32_put(p + 16, (uint32_t)off);
        p[20] = (unsigned char)(off >> 32);
        p[21] = (unsigned char)(off >> 40);
}

int ledger_entries_view(const void *blob, size_t len, struct ledger_entries *v)
{
        const unsigned char *b = blob;

        v->p = NULL;
        v->n = 0;
        v->size = LEDGER_ENTRY_WIDE;
        if (!len)
                return 0;
        if (!b)
                return -1;
        if (len % 2) {
                if (b[0] != NARROW_TAG || (len - 1) % LEDGER_ENTRY_NARROW)
                        return -1;
                v->p = b + 1;
                v->n = (len - 1) / LEDGER_ENTRY_NARROW;
                v->size = LEDGER_ENTRY_NARROW;
                return 0;
        }
        if (len % LEDGER_ENTRY_WIDE)
                return -1;
        v->p = b;
        v->n = len / LEDGER_ENTRY_WIDE;
        return 0;
}

void ledger_entries_get(const struct ledger_entries *v, size_t i,
                        struct dedup_id *id, int32_t *partition,
                        int64_t *offset)
{
        const unsigned char *p = v->p + i * v->size;
        uint64_t x;

        id->lo = le64_get(p);
        if (v->size == LEDGER_ENTRY_WIDE) {
                id->hi = le64_get(p + 8) & DEDUP_WINDOW_HI_MASK;
                *partition = (int32_t)(uint32_t)le64_get(p + 16);
                *offset = (int64_t)le64_get(p + 24);
                return;
        }
        x = le64_get(p + 8);
        id->hi = x & DEDUP_WINDOW_HI_MASK;
        *partition = (int32_t)(x >> 48);
        *offset = (int64_t)((uint64_t)le32_get(p + 16) |
                            (uint64_t)p[20] << 32 | (uint64_t)p[21] << 40);
}

/* The first entry whose lo is not below lo (entries sorted by lo). */
static size_t lower_bound(const struct ledger_entries *v, uint64_t lo)
{
        size_t a = 0, b = v->n;

        while (a < b) {
                size_t mid = a + (b - a) / 2;
                if (le64_get(v->p + mid * v->size) < lo)
                        a = mid + 1;
                else
                        b = mid;
        }
        return a;
}

int ledger_entries_find(const struct ledger_entries *v, int sorted,
                        const struct dedup_id *id, int32_t *partition,
                        int64_t *offset)
{
        uint64_t hi = id->hi & DEDUP_WINDOW_HI_MASK;
        struct dedup_id x;
        int32_t part;
        int64_t off;
        size_t i;

        /* Sorted by (lo, hi), but a wide blob's by all of hi, which is
         * not the order of what is compared: among entries of one lo
         * (hardly ever more than one), look at each. */
        for (i = sorted ? lower_bound(v, id->lo) : 0; i < v->n; i++) {
                ledger_entries_get(v, i, &x, &part, &off);
                if (x.lo == id->lo && x.hi == hi) {
                        *partition = part;
                        *offset = off;
                        return 1;
                }
                if (sorted && x.lo != id->lo)
                        break;
        }
        return 0;
}

void ledger_chunk_bound(const struct dedup_id *id, int64_t *h1, int64_t *h2)
{
        /* Chunks are keyed by their first id, wide ones by all 128 bits:
         * an id is in the last chunk whose first id is not above the id
         * with its cut bits all set. */
        *h1 = (int64_t)(id->lo ^ LEDGER_SIGN);
        *h2 = (int64_t)((id->hi | ~DEDUP_WINDOW_HI_MASK) ^ LEDGER_SIGN);
}
