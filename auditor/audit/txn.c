/*
 * txn.c - --txn-manifests: the manifest topic is read alongside the
 * audited topics (it is one of them, added when not named), each of its
 * records is a transaction's manifest (schema/HEADERS.md "Transactions")
 * handed to the engine's transaction check (dedup/txn.h), and every
 * audited record with eos.txn is handed to it too.
 *
 * A manifest is one JSON object, version 1:
 *   {"v":1,"producer":"P","epoch":E,"txn":N,
 *    "parts":[["orders",0,12],["payments",3,1]],"aborted":[[E,N2]]}
 * Entries of topics that are not audited are passed over (they cannot be
 * checked); a record of the manifest topic that is no manifest is logged
 * (the first few) and counted, never an anomaly of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../base/log.h"
#include "../../dedup/txn.h"
#include "internal.h"

#define AUDIT_TXN_VERSION 1
#define AUDIT_TXN_BAD_LOGGED 10 /* unreadable manifests logged, then quiet */

int audit_txn_topics(struct audit *a, char *errstr, size_t errstr_size)
{
        const char *m = a->conf.txn_manifests;
        size_t t;

        a->txs.topic = SIZE_MAX;
        if (!m)
                return 0;
        if (!*m) {
                snprintf(errstr, errstr_size, "--txn-manifests: empty topic");
                return -1;
        }
        for (t = 0; t < a->conf.topic_cnt; t++)
                if (!strcmp(a->conf.topics[t], m))
                        return 0;
        /* Not among the audited topics: audit it too, last. */
        a->txs.topics = calloc(a->conf.topic_cnt + 1, sizeof(*a->txs.topics));
        if (!a->txs.topics) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        for (t = 0; t < a->conf.topic_cnt; t++)
                a->txs.topics[t] = a->conf.topics[t];
        a->txs.topics[t] = m;
        a->conf.topics = a->txs.topics;
        a->conf.topic_cnt++;
        return 0;
}

int audit_txn_setup(struct audit *a, char *errstr, size_t errstr_size)
{
        struct dedup_txn_config tc;
        size_t t;

        if (!a->conf.txn_manifests)
                return 0;
        for (t = 0; t < a->ntopics; t++)
                if (!strcmp(a->topics[t].name, a->conf.txn_manifests))
                        a->txs.topic = t;
        tc.grace_ms = a->conf.dedup.gap_grace_ms;
        tc.max_pending = DEDUP_TXN_PENDING_DEFAULT;
        if (dedup_txn_enable(a->tr, &tc)) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        if (ledger_txns_load(a->lg, a->tr, a->parts, a->nparts, errstr,
                             errstr_size))
                return -1;
        log_info("transactions: manifests from topic '%s', %zu pending "
                 "from the ledger",
                 a->conf.txn_manifests, dedup_txn_pending(a->tr));
        return 0;
}

void audit_txn_free(struct audit *a)
{
        free(a->txs.topics);
}

/* An integer member of o within [0, max], else -1. */
static int64_t txn_int(json_t *v, int64_t max)
{
        json_int_t n;

        if (!json_is_integer(v))
                return -1;
        n = json_integer_value(v);
        return n < 0 || n > max ? -1 : (int64_t)n;
}

/* The part of (topic, partition), or UINT32_MAX when not audited. */
static uint32_t txn_part(const struct audit *a, const char *topic,
                         int64_t partition)
{
        size_t t;

        for (t = 0; t < a->ntopics; t++)
                if (!strcmp(a->topics[t].name, topic))
                        return partition < a->topics[t].npart
                                   ? a->topics[t].part_of[partition]
                                   : UINT32_MAX;
        return UINT32_MAX;
}

/*
 * Reads the manifest of j into m (counts and aborted allocated, the
 * caller frees them).  Returns NULL, or what is wrong with it.
 */
static const char *txn_parse(const struct audit *a, json_t *j,
                             struct dedup_txn_manifest *m,
                             struct dedup_txn_count **counts,
                             struct dedup_txn_key **aborted)
{
        json_t *parts, *ab, *e;
        size_t i, n;

        if (!json_is_object(j))
                return "not a JSON object";
        if (txn_int(json_object_get(j, "v"), INT32_MAX) != AUDIT_TXN_VERSION)
                return "no \"v\":1 (an unknown manifest version)";
        e = json_object_get(j, "producer");
        if (!json_is_string(e) || !json_string_length(e) ||
            json_string_length(e) > DEDUP_PRODUCER_MAX)
                return "\"producer\" is not a string of 1 to 255 bytes";
        m->producer = json_string_value(e);
        m->producer_len = json_string_length(e);
        m->epoch = (int32_t)txn_int(json_object_get(j, "epoch"), INT32_MAX);
        m->txn = txn_int(json_object_get(j, "txn"), INT64_MAX);
        if (m->epoch < 0 || m->txn < 0)
                return "\"epoch\" or \"txn\" is not a non-negative integer";
        parts = json_object_get(j, "parts");
        ab = json_object_get(j, "aborted");
        if (!json_is_array(parts) || (ab && !json_is_array(ab)))
                return "\"parts\" (or \"aborted\") is not an array";
        n = json_array_size(parts);
        *counts = calloc(n ? n : 1, sizeof(**counts));
        *aborted = calloc(ab && json_array_size(ab) ? json_array_size(ab) : 1,
                          sizeof(**aborted));
        if (!*counts || !*aborted)
                return "out of memory";
        m->counts = *counts;
        m->aborted = *aborted;
        for (i = 0; i < n; i++) {
                json_t *p = json_array_get(parts, i);
                int64_t partition, records;
                uint32_t part;

                if (!json_is_array(p) || json_array_size(p) != 3 ||
                    !json_is_string(json_array_get(p, 0)))
                        return "a \"parts\" entry is not [topic, partition, "
                               "records]";
                partition = txn_int(json_array_get(p, 1), INT32_MAX);
                records = txn_int(json_array_get(p, 2), INT64_MAX);
                if (partition < 0 || records < 0)
                        return "a \"parts\" entry has a bad partition or "
                               "count";
                part = txn_part(a, json_string_value(json_array_get(p, 0)),
                                partition);
                if (part == UINT32_MAX)
                        continue; /* not audited: cannot be checked */
                (*counts)[m->ncounts].part = part;
                (*counts)[m->ncounts++].records = (uint64_t)records;
        }
        for (i = 0; ab && i < json_array_size(ab); i++) {
                json_t *k = json_array_get(ab, i);
                int64_t epoch, txn;

                if (!json_is_array(k) || json_array_size(k) != 2)
                        return "an \"aborted\" entry is not [epoch, txn]";
                epoch = txn_int(json_array_get(k, 0), INT32_MAX);
                txn = txn_int(json_array_get(k, 1), INT64_MAX);
                if (epoch < 0 || txn < 0)
                        return "an \"aborted\" entry has a bad epoch or txn";
                (*aborted)[m->naborted].epoch = (int32_t)epoch;
                (*aborted)[m->naborted++].txn = txn;
        }
        return NULL;
}

static void audit_txn_manifest(struct audit *a, struct ledger_part *lp,
                               const rd_kafka_message_t *rkm)
{
        struct dedup_txn_manifest m;
        struct dedup_txn_count *counts = NULL;
        struct dedup_txn_key *aborted = NULL;
        const char *bad = "an empty value";
        json_error_t jerr;
        json_t *j = NULL;

        memset(&m, 0, sizeof(m));
        m.part = lp->part;
        m.offset = rkm->offset;
        if (rkm->payload && rkm->len) {
                j = json_loadb(rkm->payload, rkm->len, JSON_REJECT_DUPLICATES,
                               &jerr);
                bad = j ? txn_parse(a, j, &m, &counts, &aborted) : "not JSON";
        }
        if (!bad && dedup_txn_manifest(a->tr, &m) < 0)
                bad = "refused by the engine";
        if (bad) {
                a->txs.bad++;
                if (a->txs.bad <= AUDIT_TXN_BAD_LOGGED)
                        log_warn("%s [%d] offset %lld: not a transaction "
                                 "manifest (%s)%s",
                                 lp->topic, (int)lp->partition,
                                 (long long)rkm->offset, bad,
                                 a->txs.bad == AUDIT_TXN_BAD_LOGGED
                                     ? "; no more of these are logged"
                                     : "");
        }
        json_decref(j);
        free(counts);
        free(aborted);
}

void audit_txn_record(struct audit *a, struct ledger_part *lp,
                      const rd_kafka_message_t *rkm,
                      const struct dedup_hdrs *h)
{
        if (a->last_topic == a->txs.topic) {
                audit_txn_manifest(a, lp, rkm);
                return;
        }
        if (h->txn >= 0 && dedup_hdrs_status(h) == DEDUP_HDR_TRACKED)
                dedup_txn_record(a->tr, lp->part, rkm->offset, h);
}
