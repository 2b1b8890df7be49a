/*
 * le.h - little-endian integers in byte buffers: the one encoding of the
 * ledger's packed ids, the ids topic's entries and the fingerprints'
 * hash frames.  Each is a memcpy and a byte swap only on a big-endian
 * host, which the compiler makes one move; p need not be aligned.
 */
#ifndef EOSAUDIT_LE_H
#define EOSAUDIT_LE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline void le64_put(unsigned char *p, uint64_t v)
{
        v = htole64(v);
        memcpy(p, &v, sizeof(v));
}

static inline void le32_put(unsigned char *p, uint32_t v)
{
        v = htole32(v);
        memcpy(p, &v, sizeof(v));
}

static inline uint64_t le64_get(const unsigned char *p)
{
        uint64_t v;

        memcpy(&v, p, sizeof(v));
        return le64toh(v);
}

static inline uint32_t le32_get(const unsigned char *p)
{
        uint32_t v;

        memcpy(&v, p, sizeof(v));
        return le32toh(v);
}

#endif /* EOSAUDIT_LE_H */
