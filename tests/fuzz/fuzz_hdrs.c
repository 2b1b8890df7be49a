/*
 * fuzz_hdrs.c - libFuzzer target: arbitrary record headers through the
 * header parser and the engine.
 *
 * Input: a sequence of headers, each  [sel][len][value...]:
 *   sel % 8 picks the name: 0 eos.producer, 1 eos.epoch, 2 eos.seq,
 *   3 eos.pid, 4 eos.msgid, 5 a near miss ("eos.seqx"), 6 another header,
 *   7 a null value for eos.seq; len is one byte (values up to 255 bytes;
 *   0xff means "the rest of the input", for huge values).
 * A 0x00 0x00 0x00 triple ends one record and starts the next, so one
 * input exercises the engine with several records on two partitions.
 *
 * Invariants checked: the status agrees with the seen/bad bits; a tracked
 * record has values in range; every record is counted exactly once.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../dedup/dedup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fuzz_names[] = {
    "eos.producer", "eos.epoch", "eos.seq",     "eos.pid",
    "eos.msgid",    "eos.seqx",  "traceparent", "eos.seq",
};

static void fuzz_check(const struct dedup_hdrs *h)
{
        enum dedup_hdr_status st = dedup_hdrs_status(h);

        if (st == DEDUP_HDR_UNTRACKED && (h->seen & DEDUP_HDR_REQUIRED))
                abort();
        if (st == DEDUP_HDR_TRACKED) {
                if ((h->seen & DEDUP_HDR_REQUIRED) != DEDUP_HDR_REQUIRED ||
                    h->bad)
                        abort();
                if (h->producer_len < 1 ||
                    h->producer_len > DEDUP_PRODUCER_MAX ||
                    memchr(h->producer, '\0', h->producer_len))
                        abort();
                if (h->seq < 0 || h->epoch < 0)
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct dedup_config conf;
        struct dedup_tracker *tr;
        struct dedup_hdrs h;
        uint64_t records = 0, counted;
        uint32_t window;
        size_t i = 0;
        int64_t offset = 0;

        dedup_config_defaults(&conf);
        conf.max_open_gaps = 4;
        /* A tiny id window: generations of 4 ids, rotating often. */
        conf.window.max_ids = 64;
        tr = dedup_tracker_new(&conf);
        if (!tr || dedup_tracker_part_add(tr, 0, 1) ||
            dedup_tracker_part_add(tr, 1, 0) ||
            dedup_tracker_window_add(tr, &window))
                abort();
        dedup_tracker_part_set_window(tr, 0, window);
        dedup_tracker_part_set_window(tr, 1, window);
        dedup_tracker_begin(tr, 1);
        dedup_hdrs_init(&h);
        while (i < size) {
                uint8_t sel, len8;
                size_t len;
                if (i + 3 <= size && !data[i] && !data[i + 1] &&
                    !data[i + 2]) {
                        fuzz_check(&h);
                        h.id = h.msgid;
                        h.id_len = h.msgid_len;
                        dedup_tracker_observe(tr, (uint32_t)(records & 1),
                                              offset++, &h);
                        records++;
                        /* A "commit" now and then: no store behind it,
                         * so committed ids are forgotten by the batch
                         * index but not by the filters. */
                        if (records % 7 == 0) {
                                dedup_tracker_dirty_clear(tr);
                                dedup_tracker_events_clear(tr);
                        }
                        dedup_hdrs_init(&h);
                        i += 3;
                        continue;
                }
                sel = data[i++] % 8;
                if (i >= size)
                        break;
                len8 = data[i++];
                len = len8 == 0xff ? size - i : len8;
                if (len > size - i)
                        len = size - i;
                dedup_hdrs_feed(&h, fuzz_names[sel], strlen(fuzz_names[sel]),
                                sel == 7 ? NULL : (const void *)(data + i),
                                sel == 7 ? 0 : len);
                i += len;
        }
        fuzz_check(&h);
        h.id = h.msgid;
        h.id_len = h.msgid_len;
        dedup_tracker_observe(tr, (uint32_t)(records & 1), offset, &h);
        records++;
        if (dedup_tracker_window_ids(tr, window) > 64)
                abort();
        dedup_tracker_tick(tr);
        dedup_tracker_confirm_all(tr);
        counted = dedup_tracker_part_counts(tr, 0)->records +
                  dedup_tracker_part_counts(tr, 1)->records;
        if (counted != records || dedup_tracker_open_gaps(tr) != 0)
                abort();
        dedup_tracker_free(tr);
        return 0;
}
