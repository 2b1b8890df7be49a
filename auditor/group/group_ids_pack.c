/*
 * group_ids_pack.c - serve --group, the ids topic: the owner's side, ids
 * entries noted, then packed and produced in the member's transaction
 * (group_ids.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "../../base/clock.h"
#include "../../base/grow.h"
#include "../../base/log.h"
#include "../report/report.h"
#include "group_ids.h"

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */

/*
 * The ids topic deleted under the running member: the judges' windows
 * are gone with it, so redeliveries across the gap would go unseen
 * without a word.  The member stops with one line, as for the state
 * topic.
 */
void group_ids_topic_gone(struct audit *a)
{
        struct audit_group_ids *x = a->grp->ids;
        char why[700];

        snprintf(why, sizeof(why),
                 "%s was deleted under the running group "
                 "(UNKNOWN_TOPIC_OR_PART): the windows of redeliveries "
                 "went with it; to audit on, delete the offsets of "
                 "consumer group %s-ids (they point past the end of a "
                 "new ids topic), or use a new --group",
                 x->topic, a->conf.group);
        audit_group_fail(a, "ids topic", why);
}

int group_ids_push(struct ids_out **v, size_t *n, size_t *cap,
                   unsigned char **arena, size_t *alen, size_t *acap,
                   uint32_t part, int32_t k, const void *bytes, size_t len)
{
        struct ids_out *o;

        if (grow_array((void **)v, cap, *n + 1, sizeof(**v), 64, NULL) ||
            grow_array((void **)arena, acap, *alen + len, 1, 64, NULL))
                return -1;
        memcpy(*arena + *alen, bytes, len);
        o = &(*v)[(*n)++];
        o->part = part;
        o->k = k;
        o->off = *alen;
        o->len = len;
        *alen += len;
        return 0;
}

/* ------------------------------------------------------------------ */
/* Owner side                                                          */
/* ------------------------------------------------------------------ */

void audit_group_ids_note(struct audit *a, const struct ledger_part *lp,
                          int64_t offset, const struct dedup_hdrs *h,
                          enum dedup_verdict v)
{
        struct audit_group_ids *x = a->grp ? a->grp->ids : NULL;
        unsigned char b[GIDS_ENTRY_MAX];
        struct gids_rec r;
        int tracked;

        if (!x || !h->id || v == DEDUP_V_DUPLICATE || v == DEDUP_V_FENCED)
                return;
        if (h->id_hashed)
                r.id = h->id_hash;
        else
                dedup_id_hash(h->id, h->id_len, &r.id);
        tracked = h->producer && dedup_hdrs_status(h) == DEDUP_HDR_TRACKED;
        r.partition = lp->partition;
        r.offset = offset;
        r.ts_ms = h->ts_ms;
        r.epoch = tracked ? h->epoch : -1;
        r.seq = tracked ? h->seq : -1;
        r.topic = lp->topic;
        r.topic_len = strlen(lp->topic); /* Kafka's: at most 249 */
        r.producer = tracked ? h->producer : NULL;
        r.producer_len = tracked ? h->producer_len : 0;
        if (group_ids_push(&x->recs, &x->nrecs, &x->caprecs, &x->arena,
                           &x->alen, &x->acap, lp->part,
                           (int32_t)(r.id.lo % (uint64_t)x->nparts), b,
                           gids_entry_encode(b, &r)))
                audit_group_fail(a, "ids", "out of memory");
}

/* ------------------------------------------------------------------ */
/* The transaction                                                     */
/* ------------------------------------------------------------------ */

int audit_group_ids_pending(const struct audit *a)
{
        const struct audit_group_ids *x = a->grp ? a->grp->ids : NULL;
        int32_t k;

        if (!x)
                return 0;
        if (x->nrecs || x->nevs)
                return 1;
        for (k = 0; k < x->nparts; k++)
                if (x->j[k].owned && x->j[k].next > 0 &&
                    x->j[k].next != x->j[k].sent)
                        return 1;
        return 0;
}

static rd_kafka_resp_err_t ids_produce(struct audit_group *g,
                                       const char *topic, int32_t partition,
                                       const void *val, size_t len)
{
        rd_kafka_resp_err_t err;

        do {
                err = rd_kafka_producev(g->prod, RD_KAFKA_V_TOPIC(topic),
                                        RD_KAFKA_V_PARTITION(partition),
                                        RD_KAFKA_V_VALUE((void *)val, len),
                                        RD_KAFKA_V_MSGFLAGS(
                                            RD_KAFKA_MSG_F_COPY),
                                        RD_KAFKA_V_END);
                if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        rd_kafka_poll(g->prod, 50);
        } while (err == RD_KAFKA_RESP_ERR__QUEUE_FULL);
        return err;
}

/* Produces k's pack, if it holds entries, and empties it. */
static rd_kafka_resp_err_t ids_pack_out(struct audit_group *g,
                                        struct audit_group_ids *x, int32_t k)
{
        const unsigned char *p;
        rd_kafka_resp_err_t err;
        size_t len;

        if (!(p = gids_pack_finish(&x->packs[k], &len)))
                return 0;
        if (!(err = ids_produce(g, x->topic, k, p, len))) {
                x->txn_recs++;
                x->txn_entries += x->packs[k].n;
                x->txn_bytes += len;
        }
        gids_pack_reset(&x->packs[k]);
        return err;
}

/*
 * The ids entries noted since the last transaction (of the audited
 * partitions still owned), packed per ids partition k in the order noted:
 * a pack is produced when full (gids_pack_full()) and at the end, so
 * that every entry is in a record of this transaction, with the offsets
 * of the batches they come from.  Then the verdicts, and the judges'
 * positions into offs.
 */
int audit_group_ids_txn(struct audit *a, rd_kafka_topic_partition_list_t *offs,
                        char *errstr, size_t errstr_size)
{
        struct audit_group *g = a->grp;
        struct audit_group_ids *x = g->ids;
        rd_kafka_resp_err_t err = 0;
        size_t i;
        int32_t k;

        if (!x)
                return 0;
        /* A transaction tried again (after an abort) packs again. */
        x->txn_recs = x->txn_entries = x->txn_bytes = 0;
        for (k = 0; k < x->nparts; k++)
                gids_pack_reset(&x->packs[k]);
        for (i = 0; i < x->nrecs && !err; i++) {
                struct gids_pack *pk = &x->packs[x->recs[i].k];
                if (!a->rt[x->recs[i].part].owned)
                        continue;
                if (gids_pack_add(pk, x->arena + x->recs[i].off,
                                  x->recs[i].len)) {
                        snprintf(errstr, errstr_size, "out of memory");
                        audit_group_fail(a, "ids", errstr);
                        return -1;
                }
                if (gids_pack_full(pk))
                        err = ids_pack_out(g, x, x->recs[i].k);
        }
        for (k = 0; k < x->nparts && !err; k++)
                err = ids_pack_out(g, x, k);
        if (err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
            err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
                group_ids_topic_gone(a);
                return -1;
        }
        for (i = 0; i < x->nevs && !err; i++)
                if (x->j[x->evs[i].k].owned)
                        err = ids_produce(g, g->events_topic,
                                          RD_KAFKA_PARTITION_UA,
                                          x->earena + x->evs[i].off,
                                          x->evs[i].len);
        if (err) {
                snprintf(errstr, errstr_size, "ids or verdict record: %s",
                         rd_kafka_err2str(err));
                audit_group_fail(a, "produce", errstr);
                return -1;
        }
        for (k = 0; k < x->nparts; k++)
                if (x->j[k].owned && x->j[k].next > 0 &&
                    x->j[k].next != x->j[k].sent)
                        rd_kafka_topic_partition_list_add(offs, x->topic, k)
                            ->offset = x->j[k].next;
        return 0;
}

void audit_group_ids_done(struct audit *a)
{
        struct audit_group_ids *x = a->grp ? a->grp->ids : NULL;
        int32_t k;

        if (!x)
                return;
        x->produced += x->txn_recs;
        x->entries += x->txn_entries;
        x->bytes += x->txn_bytes;
        x->txn_recs = x->txn_entries = x->txn_bytes = 0;
        x->nrecs = x->nevs = 0;
        x->alen = x->elen = 0;
        for (k = 0; k < x->nparts; k++)
                if (x->j[k].owned)
                        x->j[k].sent = x->j[k].next;
}
