/*
 * fpmsg.c - a record's fingerprint (ledger/fingerprint.h) hashed from the
 * message librdkafka handed out: its key, value and headers.  record.c
 * takes it of each batch's last records; trunc_detect.c of the records it
 * reads back to find where a truncated log diverged.
 */
#include <string.h>

#include "internal.h"

void audit_fingerprint_msg(const rd_kafka_message_t *rkm,
                           struct fingerprint *out)
{
        struct fingerprint_hasher h;
        rd_kafka_headers_t *hdrs;

        fingerprint_hasher_init(&h);
        fingerprint_hasher_key(&h, rkm->key, rkm->key ? rkm->key_len : 0);
        fingerprint_hasher_value(&h, rkm->payload,
                                 rkm->payload ? rkm->len : 0);
        if (rd_kafka_message_headers(rkm, &hdrs) ==
            RD_KAFKA_RESP_ERR_NO_ERROR) {
                const char *name;
                const void *val;
                size_t size, i;
                for (i = 0;
                     !rd_kafka_header_get_all(hdrs, i, &name, &val, &size);
                     i++)
                        fingerprint_hasher_header(&h, name, strlen(name), val,
                                                  val ? size : 0);
        }
        fingerprint_hasher_final(&h, rkm->offset,
                                 rd_kafka_message_timestamp(rkm, NULL), out);
}
