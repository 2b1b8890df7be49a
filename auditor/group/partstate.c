/*
 * partstate.c - one partition's audit state as a JSON record (see
 * partstate.h).  Import checks everything into views first, then
 * replaces the part: a bad record changes nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../base/hex.h"
#include "partstate.h"

#define ERR(...) snprintf(errstr, errstr_size, __VA_ARGS__)

/* ------------------------------------------------------------------ */
/* Export                                                              */
/* ------------------------------------------------------------------ */

struct exp {
        json_t *pairs;
        int failed;
};

static json_t *gaps_json(const struct dedup_gap *g, uint32_t n)
{
        json_t *a = json_array();
        uint32_t i;

        for (i = 0; a && i < n; i++) {
                if (g[i].opened_rec > INT64_MAX ||
                    json_array_append_new(
                        a, json_pack("[iIIIIIi]", (int)g[i].epoch,
                                     (json_int_t)g[i].lo, (json_int_t)g[i].hi,
                                     (json_int_t)g[i].opened_offset,
                                     (json_int_t)g[i].opened_ms,
                                     (json_int_t)g[i].opened_rec,
                                     g[i].unknown ? 1 : 0))) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

static int pair_export(void *opaque, const struct dedup_pair_view *pv)
{
        struct exp *e = opaque;
        char name[2 * DEDUP_PRODUCER_MAX + 1];
        json_t *runs, *retired, *o;
        unsigned i;

        if (pv->records > INT64_MAX || pv->producer_len > DEDUP_PRODUCER_MAX)
                goto fail;
        hex_encode(name, pv->producer, pv->producer_len);
        runs = json_array();
        retired = json_array();
        for (i = 0; runs && i < DEDUP_HISTORY_RUNS; i++)
                json_array_append_new(runs,
                                      json_pack("[IIi]",
                                                (json_int_t)pv->runs[i].seq,
                                                (json_int_t)pv->runs[i].offset,
                                                (int)pv->runs[i].len));
        for (i = 0; retired && i < DEDUP_RETIRED_PIDS; i++)
                json_array_append_new(retired,
                                      json_integer(
                                          (json_int_t)pv->retired_pids[i]));
        o = json_pack("{s:s, s:i, s:I, s:I, s:I, s:b, s:I, s:o*, s:I, s:o*,"
                      " s:o*, s:o*}",
                      "producer", name, "epoch", (int)pv->epoch, "last_seq",
                      (json_int_t)pv->last_seq, "last_ms",
                      (json_int_t)pv->last_ms, "records",
                      (json_int_t)pv->records, "rebaseline", pv->rebaseline,
                      "pid", (json_int_t)pv->pid, "retired", retired,
                      "session_ms", (json_int_t)pv->session_ms, "runs", runs,
                      "gaps", gaps_json(pv->gaps, pv->ngaps), "done",
                      gaps_json(pv->done_gaps, pv->ndone));
        if (!o || !json_object_get(o, "runs") ||
            !json_object_get(o, "retired") || !json_object_get(o, "gaps") ||
            !json_object_get(o, "done") ||
            json_array_size(json_object_get(o, "runs")) !=
                DEDUP_HISTORY_RUNS ||
            json_array_size(json_object_get(o, "retired")) !=
                DEDUP_RETIRED_PIDS ||
            json_array_append_new(e->pairs, o))
                goto fail;
        return 0;
fail:
        e->failed = 1;
        return 1;
}

static json_t *counts_json(const struct dedup_counts *c)
{
        json_t *an = json_object();
        unsigned k;

        if (c->records > INT64_MAX || c->untracked > INT64_MAX ||
            c->missing > INT64_MAX || c->recovered > INT64_MAX ||
            c->unknown > INT64_MAX || c->ids > INT64_MAX) {
                json_decref(an);
                return NULL;
        }
        for (k = 0; an && k < DEDUP_KIND__ANOMALY_CNT; k++) {
                if (c->anomalies[k] > INT64_MAX ||
                    json_object_set_new(an,
                                        dedup_kind_name((enum dedup_kind)k),
                                        json_integer(
                                            (json_int_t)c->anomalies[k]))) {
                        json_decref(an);
                        return NULL;
                }
        }
        return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:o*}", "records",
                         (json_int_t)c->records, "untracked",
                         (json_int_t)c->untracked, "missing",
                         (json_int_t)c->missing, "recovered",
                         (json_int_t)c->recovered, "unknown",
                         (json_int_t)c->unknown, "ids", (json_int_t)c->ids,
                         "anomalies", an);
}

char *partstate_export(struct dedup_tracker *tr, const struct ledger_part *lp,
                       const char *topic_id, size_t *len, char *errstr,
                       size_t errstr_size)
{
        struct dedup_counts *c = dedup_tracker_part_counts(tr, lp->part);
        struct exp e = {json_array(), 0};
        char lo[17], hi[17];
        json_t *root = NULL, *cj;
        char *s = NULL;

        if (!c || !e.pairs) {
                ERR("partstate: %s/%d: no such part", lp->topic,
                    (int)lp->partition);
                goto out;
        }
        snprintf(lo, sizeof(lo), "%016" PRIx64, lp->fp.lo);
        snprintf(hi, sizeof(hi), "%016" PRIx64, lp->fp.hi);
        if (dedup_tracker_part_foreach(tr, lp->part, pair_export, &e) ||
            e.failed || !(cj = counts_json(c))) {
                ERR("partstate: %s/%d: cannot export (memory, or a counter "
                    "past 2^63)",
                    lp->topic, (int)lp->partition);
                goto out;
        }
        root = json_pack("{s:i, s:s, s:i, s:I, s:i, s:[IIss], s:o, s:O}", "v",
                         PARTSTATE_VERSION, "topic", lp->topic, "partition",
                         (int)lp->partition, "next_offset",
                         (json_int_t)lp->next_offset, "from_log_start",
                         dedup_tracker_part_from_log_start(tr, lp->part), "fp",
                         (json_int_t)lp->fp.offset, (json_int_t)lp->fp.ts_ms,
                         lo, hi, "counts", cj, "pairs", e.pairs);
        if (root && topic_id && *topic_id &&
            json_object_set_new(root, "topic_id", json_string(topic_id))) {
                json_decref(root);
                root = NULL;
        }
        if (!root || !(s = json_dumps(root, JSON_COMPACT))) {
                ERR("partstate: %s/%d: out of memory", lp->topic,
                    (int)lp->partition);
                goto out;
        }
        *len = strlen(s);
out:
        json_decref(root);
        json_decref(e.pairs);
        return s;
}

/* ------------------------------------------------------------------ */
/* Import                                                              */
/* ------------------------------------------------------------------ */

struct imp_pair {
        struct dedup_pair_view pv;
        char name[DEDUP_PRODUCER_MAX];
        struct dedup_gap *gaps, *done;
};

static int int_of(const json_t *j, int64_t lo, int64_t hi, int64_t *out)
{
        if (!json_is_integer(j))
                return -1;
        *out = json_integer_value(j);
        return *out < lo || *out > hi ? -1 : 0;
}

static int u64_of(const json_t *obj, const char *key, uint64_t *out)
{
        int64_t v;

        if (int_of(json_object_get(obj, key), 0, INT64_MAX, &v))
                return -1;
        *out = (uint64_t)v;
        return 0;
}

/* A producer's name from its hex (never empty). */
static int unhex(const char *s, char *out, size_t cap, size_t *len)
{
        long n = hex_decode(out, cap, s, strlen(s));

        if (n <= 0)
                return -1;
        *len = (size_t)n;
        return 0;
}

static int hex64(const char *s, uint64_t *out)
{
        char *end;

        if (!s || strlen(s) != 16 || s[0] == '-' || s[0] == '+')
                return -1;
        errno = 0;
        *out = strtoull(s, &end, 16);
        return errno || *end ? -1 : 0;
}

static int gaps_of(const json_t *a, struct dedup_gap **out, uint32_t *n)
{
        size_t i, cnt;

        *out = NULL;
        *n = 0;
        if (!json_is_array(a))
                return -1;
        cnt = json_array_size(a);
        if (cnt == 0)
                return 0;
        if (cnt > UINT32_MAX || !(*out = calloc(cnt, sizeof(**out))))
                return -1;
        for (i = 0; i < cnt; i++) {
                const json_t *g = json_array_get(a, i);
                int64_t v[7];
                size_t k;
                if (!json_is_array(g) || json_array_size(g) != 7)
                        return -1;
                for (k = 0; k < 7; k++)
                        if (int_of(json_array_get(g, k), INT64_MIN, INT64_MAX,
                                   &v[k]))
                                return -1;
                if (v[0] < 0 || v[0] > DEDUP_EPOCH_MAX || v[1] < 0 ||
                    v[2] < v[1] || v[5] < 0 || (v[6] != 0 && v[6] != 1))
                        return -1;
                (*out)[i].epoch = (int32_t)v[0];
                (*out)[i].lo = v[1];
                (*out)[i].hi = v[2];
                (*out)[i].opened_offset = v[3];
                (*out)[i].opened_ms = v[4];
                (*out)[i].opened_rec = (uint64_t)v[5];
                (*out)[i].unknown = (int)v[6];
        }
        *n = (uint32_t)cnt;
        return 0;
}

/* One pair of the record into ip; -1 when malformed (ip's arrays are the
 * caller's to free either way). */
static int pair_of(const json_t *o, uint32_t part, struct imp_pair *ip)
{
        struct dedup_pair_view *pv = &ip->pv;
        const json_t *runs = json_object_get(o, "runs");
        const json_t *ret = json_object_get(o, "retired");
        const json_t *name = json_object_get(o, "producer");
        const json_t *reb = json_object_get(o, "rebaseline");
        int64_t v;
        size_t i;

        memset(pv, 0, sizeof(*pv));
        pv->part = part;
        if (!json_is_object(o) || !json_is_string(name) ||
            unhex(json_string_value(name), ip->name, sizeof(ip->name),
                  &pv->producer_len))
                return -1;
        pv->producer = ip->name;
        if (int_of(json_object_get(o, "epoch"), 0, DEDUP_EPOCH_MAX, &v))
                return -1;
        pv->epoch = (int32_t)v;
        if (int_of(json_object_get(o, "last_seq"), -1, INT64_MAX,
                   &pv->last_seq) ||
            int_of(json_object_get(o, "last_ms"), INT64_MIN, INT64_MAX,
                   &pv->last_ms) ||
            u64_of(o, "records", &pv->records) || !json_is_boolean(reb) ||
            int_of(json_object_get(o, "pid"), -1, INT64_MAX, &pv->pid) ||
            int_of(json_object_get(o, "session_ms"), INT64_MIN, INT64_MAX,
                   &pv->session_ms))
                return -1;
        pv->rebaseline = json_is_true(reb);
        if (!json_is_array(ret) ||
            json_array_size(ret) != DEDUP_RETIRED_PIDS ||
            !json_is_array(runs) ||
            json_array_size(runs) != DEDUP_HISTORY_RUNS)
                return -1;
        for (i = 0; i < DEDUP_RETIRED_PIDS; i++)
                if (int_of(json_array_get(ret, i), -1, INT64_MAX,
                           &pv->retired_pids[i]))
                        return -1;
        for (i = 0; i < DEDUP_HISTORY_RUNS; i++) {
                const json_t *r = json_array_get(runs, i);
                if (!json_is_array(r) || json_array_size(r) != 3 ||
                    int_of(json_array_get(r, 0), -1, INT64_MAX,
                           &pv->runs[i].seq) ||
                    int_of(json_array_get(r, 1), -1, INT64_MAX,
                           &pv->runs[i].offset) ||
                    int_of(json_array_get(r, 2), 0, UINT32_MAX, &v))
                        return -1;
                pv->runs[i].len = (uint32_t)v;
        }
        if (gaps_of(json_object_get(o, "gaps"), &ip->gaps, &pv->ngaps) ||
            gaps_of(json_object_get(o, "done"), &ip->done, &pv->ndone))
                return -1;
        pv->gaps = ip->gaps;
        pv->done_gaps = ip->done;
        return 0;
}

int partstate_counts_of(const json_t *o, struct dedup_counts *c)
{
        const json_t *an = json_object_get(o, "anomalies");
        unsigned k;

        memset(c, 0, sizeof(*c));
        if (!json_is_object(o) || !json_is_object(an) ||
            u64_of(o, "records", &c->records) ||
            u64_of(o, "untracked", &c->untracked) ||
            u64_of(o, "missing", &c->missing) ||
            u64_of(o, "recovered", &c->recovered) ||
            u64_of(o, "unknown", &c->unknown) || u64_of(o, "ids", &c->ids))
                return -1;
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                if (u64_of(an, dedup_kind_name((enum dedup_kind)k),
                           &c->anomalies[k]))
                        return -1;
        return 0;
}

int partstate_import(struct dedup_tracker *tr, struct ledger_part *lp,
                     const void *buf, size_t len, char *errstr,
                     size_t errstr_size)
{
        struct imp_pair *ips = NULL;
        struct dedup_counts counts, *c;
        struct fingerprint fp;
        const json_t *pairs, *fpj;
        json_t *root;
        json_error_t jerr;
        int64_t ver, partition, next, fls;
        size_t i, n = 0;
        int rc = -1;

        root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root) {
                ERR("partstate: %s/%d: not JSON: %s", lp->topic,
                    (int)lp->partition, jerr.text);
                return -1;
        }
        if (int_of(json_object_get(root, "v"), 0, INT32_MAX, &ver) ||
            ver != PARTSTATE_VERSION) {
                ERR("partstate: %s/%d: not a version %d state record",
                    lp->topic, (int)lp->partition, PARTSTATE_VERSION);
                goto out;
        }
        if (!json_is_string(json_object_get(root, "topic")) ||
            strcmp(json_string_value(json_object_get(root, "topic")),
                   lp->topic) ||
            int_of(json_object_get(root, "partition"), 0, INT32_MAX,
                   &partition) ||
            partition != lp->partition) {
                ERR("partstate: %s/%d: the record is of another partition",
                    lp->topic, (int)lp->partition);
                goto out;
        }
        fpj = json_object_get(root, "fp");
        pairs = json_object_get(root, "pairs");
        if (int_of(json_object_get(root, "next_offset"), -1, INT64_MAX,
                   &next) ||
            int_of(json_object_get(root, "from_log_start"), 0, 1, &fls) ||
            !json_is_array(fpj) || json_array_size(fpj) != 4 ||
            int_of(json_array_get(fpj, 0), -1, INT64_MAX, &fp.offset) ||
            int_of(json_array_get(fpj, 1), INT64_MIN, INT64_MAX, &fp.ts_ms) ||
            hex64(json_string_value(json_array_get(fpj, 2)), &fp.lo) ||
            hex64(json_string_value(json_array_get(fpj, 3)), &fp.hi) ||
            partstate_counts_of(json_object_get(root, "counts"), &counts) ||
            !json_is_array(pairs)) {
                ERR("partstate: %s/%d: malformed state record (offset, "
                    "fingerprint or counts)",
                    lp->topic, (int)lp->partition);
                goto out;
        }
        n = json_array_size(pairs);
        if (n && !(ips = calloc(n, sizeof(*ips)))) {
                ERR("partstate: %s/%d: out of memory", lp->topic,
                    (int)lp->partition);
                goto out;
        }
        for (i = 0; i < n; i++) {
                if (pair_of(json_array_get(pairs, i), lp->part, &ips[i])) {
                        ERR("partstate: %s/%d: malformed pair %zu of the "
                            "state record",
                            lp->topic, (int)lp->partition, i);
                        goto out;
                }
        }
        /* Checked: from here the part is replaced. */
        dedup_tracker_part_forget(tr, lp->part);
        c = dedup_tracker_part_counts(tr, lp->part);
        if (!c || dedup_tracker_part_add(tr, lp->part, (int)fls)) {
                ERR("partstate: %s/%d: no such part", lp->topic,
                    (int)lp->partition);
                goto out;
        }
        for (i = 0; i < n; i++) {
                if (dedup_tracker_restore(tr, &ips[i].pv)) {
                        dedup_tracker_part_forget(tr, lp->part);
                        ERR("partstate: %s/%d: pair %zu not restored (a "
                            "repeated producer, or out of memory)",
                            lp->topic, (int)lp->partition, i);
                        goto out;
                }
        }
        *c = counts;
        lp->next_offset = next;
        lp->from_log_start = (int)fls;
        lp->fp = fp;
        lp->dirty = 1;
        rc = 0;
out:
        for (i = 0; ips && i < n; i++) {
                free(ips[i].gaps);
                free(ips[i].done);
        }
        free(ips);
        json_decref(root);
        return rc;
}

int partstate_topic_id(const void *buf, size_t len, char *out, size_t out_size)
{
        json_t *root = json_loadb(buf, len, 0, NULL);
        const json_t *id;
        int rc = -1;

        if (!root)
                return -1;
        id = json_object_get(root, "topic_id");
        if (!id) {
                rc = 0;
        } else if (json_is_string(id) &&
                   strlen(json_string_value(id)) < out_size) {
                snprintf(out, out_size, "%s", json_string_value(id));
                rc = 1;
        }
        json_decref(root);
        return rc;
}
