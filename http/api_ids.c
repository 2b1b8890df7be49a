/*
 * api_ids.c - /api/v1/ids/{id}?topic=T: where one message id was seen,
 * the first question about a redelivered alert.  The first copy comes from
 * the topic's id window as the ledger holds it (ledger_id_find(): the
 * committed generations, so at most one batch behind the audit), the other
 * copies from the redelivered anomalies.
 *
 * {id} is the rest of the path as the client sent it, percent-decoded
 * here (http_path_decode(): a malformed escape or a NUL byte is a 400;
 * libmicrohttpd's decoding would keep the one and cut the id at the
 * other), 1 to HTTP_ID_MAX bytes: the id as the audit took
 * it for the ledger's --dedup-key (eos.msgid, the header's value, the
 * record key).  With --dedup-key value-hash the identity is a hash of key
 * and value that nobody types: give its 32 hex digits, as an anomaly's
 * msgid_hex shows them.  The query takes the summary's parameter, topic;
 * it may be left out when serve audits one topic.
 *
 * 200 with the answer, 404 (a JSON error) when neither the window nor an
 * anomaly knows the id, 400 for a bad id or topic.
 */
#include <stdio.h>
#include <string.h>

#include "../auditor/report/report.h"
#include "../base/clock.h"
#include "../base/hex.h"
#include "internal.h"

#define HTTP_ID_MAX 255
#define HTTP_ID_RAW_MAX (3 * HTTP_ID_MAX) /* each byte as %XX */
#define HTTP_ID_COPIES_MAX 100 /* copies listed; copies_truncated beyond */
#define HTTP_ID_HASH_LEN 16    /* --dedup-key value-hash */

struct http_ids {
        json_t *copies;
        int failed;
};

static int http_id_copy_cb(void *opaque, const struct ledger_id_copy *c)
{
        struct http_ids *h = opaque;
        json_t *o;

        if (json_array_size(h->copies) >= HTTP_ID_COPIES_MAX)
                return 1;
        o = json_pack("{s:i, s:I, s:I, s:I, s:o, s:o}", "partition",
                      (int)c->partition, "offset", (json_int_t)c->offset,
                      "anomaly_id", (json_int_t)c->anomaly_id, "detected_ms",
                      (json_int_t)c->detected_ms, "first_partition",
                      report_opt_json(c->first_partition), "first_offset",
                      report_opt_json(c->first_offset));
        if (!o)
                return 1;
        report_producer_set(o, c->producer, c->producer_len);
        if (json_array_append_new(h->copies, o))
                h->failed = 1;
        return 0;
}

/* The topic asked about: ?topic=, or the one audited topic.  Unlike the
 * summary's 404, a topic not audited here is a bad request (400) for an
 * id, as is leaving the topic out when several are audited. */
static const char *http_ids_topic(struct http_api *a)
{
        const char *const *topics;
        size_t n;

        if (!a->q->topic && a->rq->conf->topic_cnt != 1) {
                snprintf(a->errstr, sizeof(a->errstr),
                         "say which topic: ?topic=NAME");
                return NULL;
        }
        if (http_api_topics(a, &topics, &n)) {
                a->fail_status = 400;
                return NULL;
        }
        return topics[0];
}

/* The 32 hex digits of a value-hash identity into out; 0, or -1. */
static int http_ids_hex(const char *s, size_t len,
                        unsigned char out[HTTP_ID_HASH_LEN])
{
        if (len != 2 * HTTP_ID_HASH_LEN ||
            hex_decode(out, HTTP_ID_HASH_LEN, s, len) < 0)
                return -1;
        return 0;
}

static json_t *http_ids_first(const struct ledger_id_seen *s)
{
        if (!s->in_window)
                return json_null();
        return json_pack("{s:i, s:I, s:I, s:b, s:I, s:I}", "partition",
                         (int)s->partition, "offset", (json_int_t)s->offset,
                         "generation", (json_int_t)s->gen, "generation_closed",
                         s->gen_closed, "generation_first_ms",
                         (json_int_t)s->gen_first_ms, "generation_last_ms",
                         (json_int_t)s->gen_last_ms);
}

/* The id from the raw path into buf (HTTP_ID_RAW_MAX + 1 bytes); its
 * length, or -1 with errstr. */
static long http_ids_id(struct http_api *a, char *buf)
{
        static const char prefix[] = HTTP_IDS_PATH;
        const char *raw = a->rq->raw_path;
        size_t n;
        long len;

        if (strncmp(raw, prefix, sizeof(prefix) - 1)) {
                snprintf(a->errstr, sizeof(a->errstr),
                         "the path must begin with %s as it is, the id "
                         "percent-encoded after it",
                         prefix);
                return -1;
        }
        raw += sizeof(prefix) - 1;
        n = strlen(raw);
        if (n > HTTP_ID_RAW_MAX) {
                snprintf(a->errstr, sizeof(a->errstr),
                         "the id must be 1 to %d bytes (percent-encoded in "
                         "the path), not %zu or more",
                         HTTP_ID_MAX, n / 3);
                return -1;
        }
        len = http_path_decode(raw, n, buf);
        if (len < 0)
                snprintf(a->errstr, sizeof(a->errstr),
                         "bad percent-encoding (or a NUL byte) in the id");
        return len;
}

static json_t *http_api_ids(struct http_api *a)
{
        char idbuf[HTTP_ID_RAW_MAX + 1];
        const char *id = idbuf, *topic;
        size_t len;
        unsigned char hash[HTTP_ID_HASH_LEN];
        const void *key_bytes = id;
        size_t key_len;
        struct ledger_id_seen seen;
        struct http_ids h = {.copies = json_array()};
        char key[64];
        long dl;
        int n;

        a->fail_status = 400;
        if (!h.copies) {
                a->fail_status = 500;
                return NULL;
        }
        if ((dl = http_ids_id(a, idbuf)) < 0)
                goto fail;
        len = key_len = (size_t)dl;
        if (!len || len > HTTP_ID_MAX) {
                snprintf(a->errstr, sizeof(a->errstr),
                         "the id must be 1 to %d bytes (percent-encoded in "
                         "the path), not %zu",
                         HTTP_ID_MAX, len);
                goto fail;
        }
        if (!(topic = http_ids_topic(a)))
                goto fail;
        a->fail_status = 500;
        if (ledger_id_key(a->lg, topic, key, sizeof(key), a->errstr,
                          sizeof(a->errstr)))
                goto fail;
        if (!strcmp(key, "value-hash")) {
                if (http_ids_hex(id, len, hash)) {
                        a->fail_status = 400;
                        snprintf(a->errstr, sizeof(a->errstr),
                                 "topic '%.255s' is audited with --dedup-key "
                                 "value-hash: give the 32 hex digits of the "
                                 "identity (an anomaly's msgid_hex)",
                                 topic);
                        goto fail;
                }
                key_bytes = hash;
                key_len = sizeof(hash);
        }
        n = ledger_id_find(a->lg, topic, key_bytes, key_len,
                           HTTP_ID_COPIES_MAX + 1, &seen, http_id_copy_cb, &h,
                           a->errstr, sizeof(a->errstr));
        if (n < 0 || h.failed)
                goto fail;
        if (!seen.in_window && n == 0) {
                a->fail_status = 404;
                snprintf(a->errstr, sizeof(a->errstr),
                         "id not seen in topic '%.255s': not in its id "
                         "window (%u generations) nor in its redelivered "
                         "anomalies",
                         topic, seen.gens);
                goto fail;
        }
        /* json_pack() takes h.copies, on failure too (errstr empty: out
         * of memory). */
        return json_pack(
            "{s:o, s:o, s:s, s:b, s:o, s:o, s:b, s:{s:I, s:o}, s:I}", "topic",
            report_bytes_json(topic, strlen(topic), NULL), "id",
            report_bytes_json(id, len, NULL), "dedup_key", seen.dedup_key,
            "in_window", seen.in_window, "first", http_ids_first(&seen),
            "copies", h.copies, "copies_truncated", n > HTTP_ID_COPIES_MAX,
            "window", "generations", (json_int_t)seen.gens, "oldest_ms",
            report_opt_json(seen.oldest_ms), "generated_ms",
            (json_int_t)clock_wall_ms());
fail:
        json_decref(h.copies);
        return NULL;
}

void http_api_ids_handle(const struct http_request *rq, struct http_reply *r)
{
        /* The query takes what the summary's does: topic. */
        http_api_run(rq, r, HTTP_EP_SUMMARY, http_api_ids);
}
