/*
 * hash.c - the 128-bit identity hash of the id window: MurmurHash3
 * x64_128 (Austin Appleby, public domain), seed 0, little-endian reads.
 * Not cryptographic: it spreads ids, it does not resist an adversary who
 * wants two ids to collide (see schema/HEADERS.md, "Message ids").
 */
#include <string.h>

#include "internal.h"

static uint64_t rotl64(uint64_t x, int r)
{
        return (x << r) | (x >> (64 - r));
}

/* A little-endian 64-bit load of 8 bytes (portable, no alignment). */
static uint64_t load64(const unsigned char *p)
{
        return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
               (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 |
               (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
               (uint64_t)p[7] << 56;
}

void dedup_id_hash_seeded(const void *key, size_t len, uint32_t seed,
                          struct dedup_id *out)
{
        const uint64_t c1 = 0x87c37b91114253d5ULL;
        const uint64_t c2 = 0x4cf5ad432745937fULL;
        const unsigned char *p = key;
        const unsigned char *tail;
        size_t nblocks = len / 16, i;
        uint64_t h1 = seed, h2 = seed, k1, k2;

        for (i = 0; i < nblocks; i++) {
                k1 = load64(p + i * 16);
                k2 = load64(p + i * 16 + 8);
                k1 *= c1;
                k1 = rotl64(k1, 31);
                k1 *= c2;
                h1 ^= k1;
                h1 = rotl64(h1, 27);
                h1 += h2;
                h1 = h1 * 5 + 0x52dce729;
                k2 *= c2;
                k2 = rotl64(k2, 33);
                k2 *= c1;
                h2 ^= k2;
                h2 = rotl64(h2, 31);
                h2 += h1;
                h2 = h2 * 5 + 0x38495ab5;
        }

        tail = p + nblocks * 16;
        k1 = k2 = 0;
        switch (len & 15) {
        case 15:
                k2 ^= (uint64_t)tail[14] << 48; /* fall through */
        case 14:
                k2 ^= (uint64_t)tail[13] << 40; /* fall through */
        case 13:
                k2 ^= (uint64_t)tail[12] << 32; /* fall through */
        case 12:
                k2 ^= (uint64_t)tail[11] << 24; /* fall through */
        case 11:
                k2 ^= (uint64_t)tail[10] << 16; /* fall through */
        case 10:
                k2 ^= (uint64_t)tail[9] << 8; /* fall through */
        case 9:
                k2 ^= (uint64_t)tail[8];
                k2 *= c2;
                k2 = rotl64(k2, 33);
                k2 *= c1;
                h2 ^= k2;
                /* fall through */
        case 8:
                k1 ^= (uint64_t)tail[7] << 56; /* fall through */
        case 7:
                k1 ^= (uint64_t)tail[6] << 48; /* fall through */
        case 6:
                k1 ^= (uint64_t)tail[5] << 40; /* fall through */
        case 5:
                k1 ^= (uint64_t)tail[4] << 32; /* fall through */
        case 4:
                k1 ^= (uint64_t)tail[3] << 24; /* fall through */
        case 3:
                k1 ^= (uint64_t)tail[2] << 16; /* fall through */
        case 2:
                k1 ^= (uint64_t)tail[1] << 8; /* fall through */
        case 1:
                k1 ^= (uint64_t)tail[0];
                k1 *= c1;
                k1 = rotl64(k1, 31);
                k1 *= c2;
                h1 ^= k1;
                break;
        default:
                break;
        }

        h1 ^= (uint64_t)len;
        h2 ^= (uint64_t)len;
        h1 += h2;
        h2 += h1;
        h1 = dedup_fmix64(h1);
        h2 = dedup_fmix64(h2);
        h1 += h2;
        h2 += h1;
        out->lo = h1;
        out->hi = h2;
}

void dedup_id_hash(const void *key, size_t len, struct dedup_id *out)
{
        dedup_id_hash_seeded(key, len, 0, out);
}
