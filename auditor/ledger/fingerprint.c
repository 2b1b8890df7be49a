/*
 * fingerprint.c - the last audited record of a partition, hashed, and
 * what the log says about it when the audit resumes, with what the
 * topic's id says (see fingerprint.h).
 */
#include "fingerprint.h"

#include <string.h>

#include "../../base/le.h"
#include "../../dedup/dedup.h"

#define FP_PIECE_KEY 1u
#define FP_PIECE_VALUE 2u
#define FP_PIECE_HDR_NAME 3u
#define FP_PIECE_HDR_VALUE 4u
#define FP_PIECE_FINAL 5u

/*
 * Chains one piece into the running hash: hash(kind, null flag, length,
 * running hash, hash of the bytes).  The inner hash keeps the frame small
 * whatever the piece's size; kind and length keep pieces from shifting
 * into one another.
 */
static void fp_feed(struct fingerprint_hasher *h, unsigned kind, const void *p,
                    size_t len)
{
        unsigned char frame[2 + 8 + 16 + 16];
        struct dedup_id inner, out;

        dedup_id_hash(p ? p : "", p ? len : 0, &inner);
        frame[0] = (unsigned char)kind;
        frame[1] = (unsigned char)(p != NULL);
        le64_put(frame + 2, p ? (uint64_t)len : 0);
        le64_put(frame + 10, h->lo);
        le64_put(frame + 18, h->hi);
        le64_put(frame + 26, inner.lo);
        le64_put(frame + 34, inner.hi);
        dedup_id_hash(frame, sizeof(frame), &out);
        h->lo = out.lo;
        h->hi = out.hi;
}

void fingerprint_hasher_init(struct fingerprint_hasher *h)
{
        h->lo = h->hi = 0;
}

void fingerprint_hasher_key(struct fingerprint_hasher *h, const void *key,
                            size_t len)
{
        fp_feed(h, FP_PIECE_KEY, key, len);
}

void fingerprint_hasher_value(struct fingerprint_hasher *h, const void *val,
                              size_t len)
{
        fp_feed(h, FP_PIECE_VALUE, val, len);
}

void fingerprint_hasher_header(struct fingerprint_hasher *h, const char *name,
                               size_t name_len, const void *val, size_t len)
{
        fp_feed(h, FP_PIECE_HDR_NAME, name ? name : "", name_len);
        fp_feed(h, FP_PIECE_HDR_VALUE, val, len);
}

void fingerprint_hasher_final(const struct fingerprint_hasher *h,
                              int64_t offset, int64_t ts_ms,
                              struct fingerprint *out)
{
        struct fingerprint_hasher f = *h;

        fp_feed(&f, FP_PIECE_FINAL, "", 0);
        out->offset = offset;
        out->ts_ms = ts_ms;
        out->lo = f.lo;
        out->hi = f.hi;
}

int fingerprint_equal(const struct fingerprint *a, const struct fingerprint *b)
{
        return a->offset == b->offset && a->ts_ms == b->ts_ms &&
               a->lo == b->lo && a->hi == b->hi;
}

enum fingerprint_verdict fingerprint_check(const struct fingerprint *stored,
                                           int64_t next_offset,
                                           const struct fingerprint_probe *p)
{
        if (stored->offset < 0)
                return FP_NONE;
        /* The log ends at or below the last audited record: records the
         * ledger counted are not there any more. */
        if (p->hi <= stored->offset)
                return FP_TRUNCATED;
        if (p->lo > stored->offset) {
                /* Retention deletes from the start and never moves the
                 * end back; a log that now ends below where the audit
                 * stopped is not the same log. */
                return p->hi >= next_offset ? FP_RETENTION : FP_TRUNCATED;
        }
        if (!p->found || p->rec.offset != stored->offset) {
                /* Gone from inside the log: only compaction removes a
                 * record there. */
                if (p->compacted && p->hi >= next_offset)
                        return FP_COMPACTED;
                return FP_RECREATED;
        }
        if (!fingerprint_equal(&p->rec, stored))
                return FP_RECREATED;
        return p->hi >= next_offset ? FP_SAME : FP_REWIND;
}

int fingerprint_verdict_new_log(enum fingerprint_verdict v)
{
        return v == FP_RECREATED || v == FP_TRUNCATED;
}

const char *fingerprint_verdict_name(enum fingerprint_verdict v)
{
        switch (v) {
        case FP_NONE:
                return "none";
        case FP_SAME:
                return "same";
        case FP_REWIND:
                return "rewind";
        case FP_RETENTION:
                return "retention";
        case FP_COMPACTED:
                return "compacted";
        case FP_RECREATED:
                return "recreated";
        case FP_TRUNCATED:
                return "truncated";
        }
        return "unknown";
}

enum topic_id_verdict topic_id_compare(const char *stored, const char *now)
{
        if (!stored || !now || !*stored || !*now)
                return TOPIC_ID_UNKNOWN;
        return strcmp(stored, now) ? TOPIC_ID_CHANGED : TOPIC_ID_SAME;
}

#define TOPIC_ID_LEN 22

int topic_id_valid(const char *id)
{
        size_t i;
        int zero = 1;

        for (i = 0; i < TOPIC_ID_LEN; i++) {
                char c = id[i];
                if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                      (c >= '0' && c <= '9') || c == '-' || c == '_'))
                        return 0;
                zero &= c == 'A';
        }
        return id[TOPIC_ID_LEN] == '\0' && !zero;
}

int topic_id_from_base64(const char *b64, char *out, size_t out_size)
{
        size_t i, n = 0;

        for (i = 0; b64[i] && b64[i] != '='; i++) {
                if (n + 1 >= out_size)
                        return -1;
                out[n++] = b64[i] == '+' ? '-' : b64[i] == '/' ? '_' : b64[i];
        }
        if (!out_size)
                return -1;
        out[n] = '\0';
        return topic_id_valid(out) ? 0 : -1;
}

enum fingerprint_verdict fingerprint_with_topic_id(enum topic_id_verdict id,
                                                   enum fingerprint_verdict v)
{
        if (id == TOPIC_ID_CHANGED)
                return FP_RECREATED;
        if (id == TOPIC_ID_SAME && v == FP_RECREATED)
                return FP_TRUNCATED;
        return v;
}
