/*
 * hdrs.c - parsing of the eos.* record headers (see schema/HEADERS.md).
 */
#include <string.h>

#include "dedup.h"
#include "eos_headers.h"

void dedup_hdrs_init(struct dedup_hdrs *h)
{
        memset(h, 0, sizeof(*h));
        h->pid = -1;
        h->prev_epoch = -1;
        h->prev_seq = -1;
        h->txn = -1;
}

int dedup_parse_decimal(const char *s, size_t len, uint64_t max, uint64_t *out)
{
        uint64_t v = 0;
        size_t i;

        if (!s || len == 0 || len > 20)
                return -1;
        for (i = 0; i < len; i++) {
                unsigned d = (unsigned char)s[i] - '0';
                if (d > 9)
                        return -1;
                if (v > (max - d) / 10)
                        return -1;
                v = v * 10 + d;
        }
        *out = v;
        return 0;
}

/* Records the last occurrence of header bit: present, and valid or not. */
static void hdrs_mark(struct dedup_hdrs *h, unsigned bit, int ok)
{
        h->seen |= bit;
        if (ok)
                h->bad &= ~bit;
        else
                h->bad |= bit;
}

static int hdrs_name_is(const char *name, size_t name_len, const char *want,
                        size_t want_len)
{
        return name_len == want_len && !memcmp(name, want, want_len);
}

#define NAME_IS(lit) hdrs_name_is(name, name_len, lit, sizeof(lit) - 1)

void dedup_hdrs_feed(struct dedup_hdrs *h, const char *name, size_t name_len,
                     const void *value, size_t size)
{
        const char *v = value;
        uint64_t n;
        int ok;

        /* Most headers of most records are not ours: leave fast. */
        if (name_len < EOS_HDR_NAME_MIN ||
            memcmp(name, EOS_HDR_PREFIX, sizeof(EOS_HDR_PREFIX) - 1) != 0)
                return;

        if (NAME_IS(EOS_HDR_SEQ)) {
                ok = dedup_parse_decimal(v, size, DEDUP_SEQ_MAX, &n) == 0;
                h->seq = ok ? (int64_t)n : 0;
                hdrs_mark(h, DEDUP_HDR_SEQ, ok);
        } else if (NAME_IS(EOS_HDR_EPOCH)) {
                ok = dedup_parse_decimal(v, size, DEDUP_EPOCH_MAX, &n) == 0;
                h->epoch = ok ? (int32_t)n : 0;
                hdrs_mark(h, DEDUP_HDR_EPOCH, ok);
        } else if (NAME_IS(EOS_HDR_PRODUCER)) {
                ok = v && size >= 1 && size <= DEDUP_PRODUCER_MAX &&
                     !memchr(v, '\0', size);
                h->producer = ok ? v : NULL;
                h->producer_len = ok ? size : 0;
                hdrs_mark(h, DEDUP_HDR_PRODUCER, ok);
        } else if (NAME_IS(EOS_HDR_PID)) {
                ok = dedup_parse_decimal(v, size, INT64_MAX, &n) == 0;
                h->pid = ok ? (int64_t)n : -1;
                hdrs_mark(h, DEDUP_HDR_PID, ok);
        } else if (NAME_IS(EOS_HDR_PREV_EPOCH)) {
                ok = dedup_parse_decimal(v, size, DEDUP_EPOCH_MAX, &n) == 0;
                h->prev_epoch = ok ? (int32_t)n : -1;
                hdrs_mark(h, DEDUP_HDR_PREV_EPOCH, ok);
        } else if (NAME_IS(EOS_HDR_PREV_SEQ)) {
                ok = dedup_parse_decimal(v, size, DEDUP_SEQ_MAX, &n) == 0;
                h->prev_seq = ok ? (int64_t)n : -1;
                hdrs_mark(h, DEDUP_HDR_PREV_SEQ, ok);
        } else if (NAME_IS(EOS_HDR_TXN)) {
                ok = dedup_parse_decimal(v, size, DEDUP_SEQ_MAX, &n) == 0;
                h->txn = ok ? (int64_t)n : -1;
                hdrs_mark(h, DEDUP_HDR_TXN, ok);
        } else if (NAME_IS(EOS_HDR_SCOPE)) {
                int topic = v && size == sizeof(EOS_SCOPE_TOPIC) - 1 &&
                            !memcmp(v, EOS_SCOPE_TOPIC, size);
                ok = topic || (v && size == sizeof(EOS_SCOPE_PARTITION) - 1 &&
                               !memcmp(v, EOS_SCOPE_PARTITION, size));
                h->scope_topic = topic;
                hdrs_mark(h, DEDUP_HDR_SCOPE, ok);
        } else if (NAME_IS(EOS_HDR_MSGID)) {
                ok = v && size >= 1 && size <= DEDUP_MSGID_MAX;
                h->msgid = ok ? v : NULL;
                h->msgid_len = ok ? size : 0;
                hdrs_mark(h, DEDUP_HDR_MSGID, ok);
        }
}

enum dedup_hdr_status dedup_hdrs_status(const struct dedup_hdrs *h)
{
        unsigned req = h->seen & DEDUP_HDR_REQUIRED;

        /* eos.pid or eos.msgid alone do not make a record tracked. */
        if (!req)
                return DEDUP_HDR_UNTRACKED;
        if (req != DEDUP_HDR_REQUIRED || h->bad)
                return DEDUP_HDR_MALFORMED;
        /* eos.prev_epoch and eos.prev_seq name one record: both or none. */
        if ((h->seen & DEDUP_HDR_PREV) &&
            (h->seen & DEDUP_HDR_PREV) != DEDUP_HDR_PREV)
                return DEDUP_HDR_MALFORMED;
        return DEDUP_HDR_TRACKED;
}
