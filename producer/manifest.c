/*
 * manifest.c - --txn-manifests: what a transaction wrote, per partition,
 * and its manifest, written as the transaction's last write (the contract
 * is schema/HEADERS.md "Transactions"; the auditor's reader is
 * auditor/audit/txn.c):
 *   {"v":1,"producer":NAME,"epoch":E,"txn":N,
 *    "parts":[[TOPIC,PARTITION,RECORDS],...],"aborted":[[E,N],...]}
 * keyed by NAME.  N is c->txn_no, the ordinal of the transaction in the
 * run (unique within (NAME, E)); "aborted" lists the transactions aborted
 * since the previous manifest, which are cleared once a manifest commits.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "internal.h"

int producer_manifest_on(const struct producer_ctx *c)
{
        return c->o->txn_manifests && c->o->transactional_id;
}

int producer_manifest_begin(struct producer_ctx *c)
{
        if (!producer_manifest_on(c))
                return 0;
        if (!c->txn_counts) {
                c->txn_counts = calloc((size_t)c->partition_cnt,
                                       sizeof(*c->txn_counts));
                if (!c->txn_counts)
                        return -1;
        }
        memset(c->txn_counts, 0,
               (size_t)c->partition_cnt * sizeof(*c->txn_counts));
        snprintf(c->txn_str, sizeof(c->txn_str), "%" PRIu64, c->txn_no);
        return 0;
}

void producer_manifest_count(struct producer_ctx *c, int32_t partition)
{
        if (c->txn_counts && partition >= 0 && partition < c->partition_cnt)
                c->txn_counts[partition]++;
}

int producer_manifest_aborted(struct producer_ctx *c, int32_t epoch)
{
        if (!producer_manifest_on(c))
                return 0;
        if (c->naborted == c->aborted_cap) {
                size_t cap = c->aborted_cap ? c->aborted_cap * 2 : 8;
                void *p = realloc(c->aborted, cap * sizeof(*c->aborted));
                if (!p)
                        return -1;
                c->aborted = p;
                c->aborted_cap = cap;
        }
        c->aborted[c->naborted].epoch = epoch;
        c->aborted[c->naborted++].txn = c->txn_no;
        return 0;
}

void producer_manifest_committed(struct producer_ctx *c)
{
        c->naborted = 0;
}

/* The manifest of the open transaction, or NULL on allocation failure. */
static char *producer_manifest_json(const struct producer_ctx *c,
                                    const struct producer_inst *in)
{
        json_t *m = json_object(), *parts = json_array(), *ab = json_array();
        char *s = NULL;
        int32_t p;
        size_t i;
        int rc = 0;

        if (!m || !parts || !ab)
                goto out;
        rc |= json_object_set_new(m, "v", json_integer(1));
        rc |= json_object_set_new(m, "producer",
                                  json_stringn(c->o->name, c->name_len));
        rc |= json_object_set_new(m, "epoch", json_integer(in->epoch));
        rc |= json_object_set_new(m, "txn",
                                  json_integer((json_int_t)c->txn_no));
        for (p = 0; p < c->partition_cnt; p++) {
                if (!c->txn_counts[p])
                        continue;
                rc |= json_array_append_new(
                    parts, json_pack("[s,i,I]", c->o->topic, (int)p,
                                     (json_int_t)c->txn_counts[p]));
        }
        for (i = 0; i < c->naborted; i++)
                rc |= json_array_append_new(
                    ab, json_pack("[i,I]", (int)c->aborted[i].epoch,
                                  (json_int_t)c->aborted[i].txn));
        rc |= json_object_set(m, "parts", parts);
        rc |= json_object_set(m, "aborted", ab);
        if (!rc)
                s = json_dumps(m, JSON_COMPACT);
out:
        json_decref(m);
        json_decref(parts);
        json_decref(ab);
        return s;
}

rd_kafka_resp_err_t producer_manifest_write(struct producer_ctx *c,
                                            struct producer_inst *in)
{
        rd_kafka_resp_err_t err;
        char *s;

        if (!producer_manifest_on(c))
                return RD_KAFKA_RESP_ERR_NO_ERROR;
        s = producer_manifest_json(c, in);
        if (!s)
                return RD_KAFKA_RESP_ERR__FAIL;
        for (;;) {
                err = rd_kafka_producev(
                    in->rk, RD_KAFKA_V_TOPIC(c->o->txn_manifests),
                    RD_KAFKA_V_KEY(c->o->name, c->name_len),
                    RD_KAFKA_V_VALUE(s, strlen(s)),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                    RD_KAFKA_V_OPAQUE((void *)PRODUCER_TAG_MANIFEST),
                    RD_KAFKA_V_END);
                if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        break;
                rd_kafka_poll(in->rk, 100);
        }
        free(s);
        return err;
}

void producer_manifest_free(struct producer_ctx *c)
{
        free(c->txn_counts);
        free(c->aborted);
}
