/*
 * refresh.c - partitions added to a topic while the audit follows it.
 * The partition list is read again every metadata_refresh_ms; a new
 * partition gets a part at the end of the arrays and is audited from its
 * log start, like a partition of a new ledger.  The topics' ids are
 * read again at the same time: a topic deleted and created again under
 * the running audit stops it (topic_id.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/log.h"
#include "../../dedup/topic.h"
#include "internal.h"

/* Room for one more part in parts[] and rt[]. */
static int audit_parts_grow(struct audit *a)
{
        uint32_t cap = a->parts_cap ? a->parts_cap * 2 : 8;
        struct ledger_part *parts;
        struct audit_rt *rt;

        if (a->nparts < a->parts_cap)
                return 0;
        parts = realloc(a->parts, cap * sizeof(*parts));
        if (!parts)
                return -1;
        a->parts = parts;
        rt = realloc(a->rt, cap * sizeof(*rt));
        if (!rt)
                return -1;
        a->rt = rt;
        memset(a->rt + a->parts_cap, 0, (cap - a->parts_cap) * sizeof(*a->rt));
        if (a->fls.pend) { /* the flow audit's frontier, per part */
                int64_t *pend = realloc(a->fls.pend, cap * sizeof(*pend));
                if (!pend)
                        return -1;
                a->fls.pend = pend;
                memset(pend + a->nparts, 0, (cap - a->nparts) * sizeof(*pend));
        }
        a->parts_cap = cap;
        return 0;
}

int audit_part_add(struct audit *a, size_t t, int32_t p)
{
        struct audit_topic *at = &a->topics[t];
        uint32_t *part_of;
        uint32_t i = a->nparts;
        struct ledger_part *lp;

        if (audit_parts_grow(a))
                goto oom;
        part_of = realloc(at->part_of, ((size_t)p + 1) * sizeof(*part_of));
        if (!part_of)
                goto oom;
        at->part_of = part_of;
        lp = &a->parts[i];
        audit_part_init(lp, at->name, p, i);
        memset(&a->rt[i], 0, sizeof(a->rt[i]));
        a->rt[i].owned = 1; /* follow mode alone: the single mode's */
        a->rt[i].flow_role = at->flow_role;
        if (dedup_tracker_part_add(a->tr, i, 0))
                goto oom;
        if (a->conf.dedup.window.max_ids) {
                /* audit_windows(): topic t's window is window t. */
                dedup_tracker_part_set_window(a->tr, i, (uint32_t)t);
                if (ledger_windows_part_add(a->lg, (uint32_t)t, lp))
                        goto oom;
        }
        dedup_tracker_part_set_compacted(a->tr, i, at->compacted);
        if (dedup_tracker_part_set_topic(a->tr, i, (uint32_t)t))
                goto oom;
        if (audit_view_part_add(a, lp))
                goto oom;
        at->part_of[p] = i;
        at->npart = p + 1;
        a->nparts++;
        a->stats.partitions = a->nparts;
        return 0;
oom:
        return -1;
}

/* Adds partition p (the topic's next) of topic t as a new part,
 * positioned at its log start. */
static int audit_part_new(struct audit *a, size_t t, int32_t p, char *errstr,
                          size_t errstr_size)
{
        struct ledger_part *lp;

        if (audit_part_add(a, t, p)) {
                snprintf(errstr, errstr_size, "out of memory");
                return -1;
        }
        lp = &a->parts[a->nparts - 1];
        if (audit_position(a, lp, errstr, errstr_size) < 0)
                return -1;
        log_info("%s [%d]: new partition: auditing it from offset %lld "
                 "(its log start)",
                 lp->topic, (int)lp->partition, (long long)lp->next_offset);
        return 0;
}

int audit_refresh(struct audit *a, int64_t now, char *errstr,
                  size_t errstr_size)
{
        uint32_t before = a->nparts;
        size_t t;

        a->last_meta_ms = now;
        for (t = 0; t < a->ntopics; t++) {
                const struct rd_kafka_metadata *md = NULL;
                rd_kafka_t *rk = audit_rk_of(a, a->topics[t].name);
                rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk,
                                                           a->topics[t].name,
                                                           NULL);
                rd_kafka_resp_err_t err;
                int32_t p, cnt;

                if (!rkt)
                        continue;
                err = rd_kafka_metadata(rk, 0, rkt, &md,
                                        AUDIT_META_TIMEOUT_MS);
                rd_kafka_topic_destroy(rkt);
                if (err || md->topic_cnt != 1 || md->topics[0].err) {
                        /* Brokers away for a moment: the next look. */
                        log_debug("cannot read the partitions of '%s': %s",
                                  a->topics[t].name,
                                  rd_kafka_err2str(
                                      err ? err
                                      : md->topic_cnt
                                          ? md->topics[0].err
                                          : RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC));
                        if (md)
                                rd_kafka_metadata_destroy(md);
                        continue;
                }
                cnt = md->topics[0].partition_cnt;
                rd_kafka_metadata_destroy(md);
                for (p = a->topics[t].npart; p < cnt; p++)
                        if (audit_part_new(a, t, p, errstr, errstr_size))
                                return -1;
        }
        /* A topic deleted and created again since the audit began:
         * another topic id.  Its new log is not the ledger's. */
        if (audit_topic_ids_check(a, NULL, errstr, errstr_size))
                return -1;
        /* The whole assignment again, every partition at the ledger's
         * next offset: what was fetched and not yet audited is fetched
         * again. */
        if (a->nparts != before)
                return audit_assign(a, errstr, errstr_size);
        return 0;
}
