/*
 * grouprep.c - the group's figures from its state and events topics (see
 * grouprep.h).  The state records are read boundedly: a scanner walks
 * the top-level object without allocating, jansson parses only the few
 * small values wanted, and the pairs (most of a record's bytes) are only
 * counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../base/hex.h"
#include "../audit/status.h"
#include "grouprep.h"
#include "partstate.h"

#define GROUPREP_DEPTH_MAX 64

struct grouprep {
        struct grouprep_part *parts; /* sorted by topic, partition */
        size_t nparts, cap;
        struct grouprep_tp *expected;
        int64_t *hws;
        struct grouprep_evcounts *evc; /* parallel to expected */
        size_t nexpected, expcap;
        struct grouprep_event *ring; /* ring[(head + i) % size] */
        size_t ring_size, head, nring;
        uint64_t state_records, state_malformed, events_read, events_malformed;
        char error[256];
};

/* ------------------------------------------------------------------ */
/* A scanner of JSON text: skips values, allocates nothing             */
/* ------------------------------------------------------------------ */

static const char *ws(const char *p, const char *end)
{
        while (p < end &&
               (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
                p++;
        return p;
}

/* Past the string at p (its opening quote), or NULL. */
static const char *skip_string(const char *p, const char *end)
{
        for (p++; p < end; p++) {
                if (*p == '\\') {
                        p++;
                        continue;
                }
                if (*p == '"')
                        return p + 1;
        }
        return NULL;
}

/* Past the value at p, or NULL when it is not one (or nests too deep). */
static const char *skip_value(const char *p, const char *end, int depth)
{
        char close;

        p = ws(p, end);
        if (p >= end || depth > GROUPREP_DEPTH_MAX)
                return NULL;
        if (*p == '"')
                return skip_string(p, end);
        if (*p != '{' && *p != '[') {
                const char *s = p;
                while (p < end && strchr("-+.0123456789eEtruefalsn", *p))
                        p++;
                return p > s ? p : NULL;
        }
        close = *p == '{' ? '}' : ']';
        p = ws(p + 1, end);
        if (p < end && *p == close)
                return p + 1;
        for (;;) {
                if (close == '}') {
                        p = ws(p, end);
                        if (p >= end || *p != '"' ||
                            !(p = skip_string(p, end)))
                                return NULL;
                        p = ws(p, end);
                        if (p >= end || *p++ != ':')
                                return NULL;
                }
                if (!(p = skip_value(p, end, depth + 1)))
                        return NULL;
                p = ws(p, end);
                if (p >= end)
                        return NULL;
                if (*p == close)
                        return p + 1;
                if (*p++ != ',')
                        return NULL;
        }
}

/* The elements of the array at p..end (a whole value), or -1. */
static int64_t count_elements(const char *p, const char *end)
{
        int64_t n = 0;

        p = ws(p, end);
        if (p >= end || *p != '[')
                return -1;
        p = ws(p + 1, end);
        if (p < end && *p == ']')
                return 0;
        for (;;) {
                if (!(p = skip_value(p, end, 1)))
                        return -1;
                n++;
                p = ws(p, end);
                if (p >= end)
                        return -1;
                if (*p == ']')
                        return n;
                if (*p++ != ',')
                        return -1;
        }
}

/* ------------------------------------------------------------------ */
/* State records                                                       */
/* ------------------------------------------------------------------ */

/* The counters, as partstate_import() requires them. */
static int counts_of(json_t *j, struct grouprep_counts *out)
{
        struct dedup_counts c;

        if (partstate_counts_of(j, &c))
                return -1;
        out->records = c.records;
        out->untracked = c.untracked;
        out->missing = c.missing;
        out->recovered = c.recovered;
        out->unknown = c.unknown;
        out->ids = c.ids;
        memcpy(out->anomalies, c.anomalies, sizeof(out->anomalies));
        return 0;
}

/* One wanted value of the record, parsed alone. */
static json_t *value_of(const char *p, const char *end)
{
        return json_loadb(p, (size_t)(end - p), JSON_DECODE_ANY, NULL);
}

/* The wanted fields of a state record into *out (topic malloc'd). */
static int state_parse(const char *p, size_t len, struct grouprep_part *out)
{
        const char *end = p + len, *k, *ke, *v, *ve;
        json_t *j;
        int have = 0, version = -1, rc = -1;

        memset(out, 0, sizeof(*out));
        p = ws(p, end);
        if (p >= end || *p++ != '{')
                return -1;
        p = ws(p, end);
        if (p < end && *p == '}')
                return -1;
        for (;;) {
                p = ws(p, end);
                if (p >= end || *p != '"' || !(ke = skip_string(p, end)))
                        goto out;
                k = p + 1;
                ke--; /* the closing quote */
                p = ws(ke + 1, end);
                if (p >= end || *p++ != ':')
                        goto out;
                v = ws(p, end);
                if (!(ve = skip_value(v, end, 1)))
                        goto out;
                p = ve;
#define KEY_IS(s)                                                             \
        ((size_t)(ke - k) == sizeof(s) - 1 && !memcmp(k, s, sizeof(s) - 1))
                if (KEY_IS("pairs")) {
                        int64_t n = count_elements(v, ve);
                        if (n < 0)
                                goto out;
                        out->pairs = (uint64_t)n;
                        have |= 1;
                } else if (KEY_IS("counts")) {
                        if (ve - v > GROUPREP_COUNTS_MAX ||
                            !(j = value_of(v, ve)))
                                goto out;
                        if (counts_of(j, &out->c)) {
                                json_decref(j);
                                goto out;
                        }
                        json_decref(j);
                        have |= 2;
                } else if (KEY_IS("topic") || KEY_IS("v") ||
                           KEY_IS("partition") || KEY_IS("next_offset")) {
                        if (ve - v > 1024 || !(j = value_of(v, ve)))
                                goto out;
                        if (KEY_IS("topic") && json_is_string(j) &&
                            !out->topic) {
                                out->topic = strdup(json_string_value(j));
                                if (!out->topic) {
                                        json_decref(j);
                                        goto out;
                                }
                                have |= 4;
                        } else if (json_is_integer(j) && KEY_IS("v")) {
                                version = (int)json_integer_value(j);
                        } else if (json_is_integer(j) && KEY_IS("partition") &&
                                   json_integer_value(j) >= 0 &&
                                   json_integer_value(j) <= INT32_MAX) {
                                out->partition = (int32_t)json_integer_value(
                                    j);
                                have |= 8;
                        } else if (json_is_integer(j) &&
                                   KEY_IS("next_offset")) {
                                out->next_offset = json_integer_value(j);
                                have |= 16;
                        } else {
                                json_decref(j);
                                goto out;
                        }
                        json_decref(j);
                }
#undef KEY_IS
                p = ws(p, end);
                if (p >= end)
                        goto out;
                if (*p == '}')
                        break;
                if (*p++ != ',')
                        goto out;
        }
        if (ws(p + 1, end) != end || version != 1 || have != 31)
                goto out;
        rc = 0;
out:
        if (rc) {
                free(out->topic);
                out->topic = NULL;
        }
        return rc;
}

static int part_cmp(const char *topic, int32_t partition,
                    const struct grouprep_part *p)
{
        int c = strcmp(topic, p->topic);

        if (c)
                return c;
        return partition < p->partition ? -1 : partition > p->partition;
}

/* The index of (topic, partition) in parts, or where it would go (*found
 * says which). */
static size_t part_find(const struct grouprep_part *parts, size_t n,
                        const char *topic, int32_t partition, int *found)
{
        size_t lo = 0, hi = n;

        *found = 0;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = part_cmp(topic, partition, &parts[mid]);
                if (!c) {
                        *found = 1;
                        return mid;
                }
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return lo;
}

/* "topic/partition" into topic (NUL-terminated, size bytes) and *part. */
static int key_parse(const char *key, size_t klen, char *topic, size_t size,
                     int32_t *part)
{
        const char *slash = NULL;
        size_t i;
        int64_t n = 0;

        for (i = 0; i < klen; i++)
                if (key[i] == '/')
                        slash = key + i;
        if (!slash || slash == key || (size_t)(slash - key) >= size ||
            slash + 1 == key + klen || memchr(key, '\0', klen))
                return -1;
        for (i = (size_t)(slash + 1 - key); i < klen; i++) {
                if (key[i] < '0' || key[i] > '9' || n > INT32_MAX / 10)
                        return -1;
                n = n * 10 + (key[i] - '0');
        }
        if (n > INT32_MAX)
                return -1;
        memcpy(topic, key, (size_t)(slash - key));
        topic[slash - key] = '\0';
        *part = (int32_t)n;
        return 0;
}

int grouprep_state(struct grouprep *g, const void *key, size_t klen,
                   const void *val, size_t len)
{
        struct grouprep_part np;
        char topic[256];
        int32_t part;
        size_t at;
        int found;

        g->state_records++;
        if (!key || key_parse(key, klen, topic, sizeof(topic), &part)) {
                g->state_malformed++;
                return 1;
        }
        at = part_find(g->parts, g->nparts, topic, part, &found);
        if (!val) { /* a tombstone: the partition's state is gone */
                if (found) {
                        free(g->parts[at].topic);
                        memmove(&g->parts[at], &g->parts[at + 1],
                                (g->nparts - at - 1) * sizeof(*g->parts));
                        g->nparts--;
                }
                return 0;
        }
        if (state_parse(val, len, &np) || strcmp(np.topic, topic) ||
            np.partition != part) {
                free(np.topic);
                g->state_malformed++;
                return 1;
        }
        if (found) {
                free(g->parts[at].topic);
                g->parts[at] = np;
                return 0;
        }
        if (g->nparts == g->cap) {
                size_t cap = g->cap ? 2 * g->cap : 64;
                struct grouprep_part *p = realloc(g->parts, cap * sizeof(*p));
                if (!p) {
                        free(np.topic);
                        return -1;
                }
                g->parts = p;
                g->cap = cap;
        }
        memmove(&g->parts[at + 1], &g->parts[at],
                (g->nparts - at) * sizeof(*g->parts));
        g->parts[at] = np;
        g->nparts++;
        return 0;
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

static void event_release(struct grouprep_event *e)
{
        free(e->topic);
        free(e->producer);
        free(e->member);
        free(e->first_topic);
        free(e->msgid);
        free(e->reason);
        free(e->detail);
        memset(e, 0, sizeof(*e));
}

/* The bytes of hex string s (even length, at most max bytes) into *out
 * (malloc'd, NUL after them) and *n.  0, or -1 (*out freed). */
static int hex_dup(const char *s, size_t max, char **out, size_t *n)
{
        size_t len = strlen(s);
        long got;

        *out = NULL;
        if (len % 2 || len / 2 > max || !(*out = malloc(len / 2 + 1)))
                return -1;
        if ((got = hex_decode(*out, len / 2, s, len)) < 0) {
                free(*out);
                *out = NULL;
                return -1;
        }
        (*out)[got] = '\0';
        *n = (size_t)got;
        return 0;
}

/* "producer": null, a string, or {"hex": "..."} (not UTF-8), as the ids
 * topic's verdicts were written before they took the one format. */
static int producer_of(json_t *v, struct grouprep_event *e)
{
        const char *s;
        size_t n;

        if (!v || json_is_null(v))
                return 0;
        if (json_is_string(v)) {
                n = json_string_length(v);
                if (n > DEDUP_PRODUCER_MAX || !(e->producer = malloc(n + 1)))
                        return -1;
                memcpy(e->producer, json_string_value(v), n);
                e->producer[n] = '\0';
                e->producer_len = n;
                return 0;
        }
        s = json_string_value(json_object_get(v, "hex"));
        return s ? hex_dup(s, DEDUP_PRODUCER_MAX, &e->producer,
                           &e->producer_len)
                 : -1;
}

/* Bytes from "NAME_hex" when present (the exact bytes of a value that
 * is not UTF-8), else from the string "NAME" (report_bytes_json());
 * into *out (malloc'd, NUL after them) and *n.  Neither: 0, *out NULL.
 * Returns 0, or -1 when malformed, longer than max or memory ran out. */
static int bytes_of(json_t *o, const char *name, size_t max, char **out,
                    size_t *n)
{
        char key[64];
        const char *s;
        size_t len;
        json_t *v;

        *out = NULL;
        *n = 0;
        snprintf(key, sizeof(key), "%s_hex", name);
        v = json_object_get(o, key);
        if (json_is_string(v)) {
                s = json_string_value(v);
                return hex_dup(s, max, out, n);
        }
        v = json_object_get(o, name);
        if (!v || json_is_null(v))
                return 0;
        if (!json_is_string(v) || (len = json_string_length(v)) > max ||
            !(*out = malloc(len + 1)))
                return -1;
        memcpy(*out, json_string_value(v), len);
        (*out)[len] = '\0';
        *n = len;
        return 0;
}

static int64_t int_of(json_t *o, const char *name, int64_t dflt)
{
        json_t *v = json_object_get(o, name);

        return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

static int event_parse(const void *val, size_t len, struct grouprep_event *e,
                       enum dedup_kind *kind)
{
        json_t *j = len <= GROUPREP_EVENT_MAX ? json_loadb(val, len, 0, NULL)
                                              : NULL;
        const char *topic, *k, *member, *ft, *reason;
        int64_t part, count, fp;
        int rc = -1;

        memset(e, 0, sizeof(*e));
        if (!json_is_object(j))
                goto out;
        topic = json_string_value(json_object_get(j, "topic"));
        k = json_string_value(json_object_get(j, "kind"));
        member = json_string_value(json_object_get(j, "member"));
        part = int_of(j, "partition", -1);
        count = int_of(j, "count", -1);
        fp = int_of(j, "first_partition", -1);
        ft = json_string_value(json_object_get(j, "first_topic"));
        reason = json_string_value(json_object_get(j, "reason"));
        /* "truncated": not an engine's kind (DEDUP_KIND__CNT here). */
        if (k && !strcmp(k, "truncated"))
                *kind = DEDUP_KIND__CNT;
        else if (!k || dedup_kind_parse(k, kind))
                goto out;
        if (!topic || part < 0 || part > INT32_MAX || count < 0 ||
            strlen(k) >= sizeof(e->kind) || fp > INT32_MAX)
                goto out;
        /* The producer: "producer" with "producer_hex" (the one format),
         * or {"hex": ...} as older ids verdicts wrote it. */
        if (json_is_object(json_object_get(j, "producer"))
                ? producer_of(json_object_get(j, "producer"), e)
                : bytes_of(j, "producer", DEDUP_PRODUCER_MAX, &e->producer,
                           &e->producer_len))
                goto out;
        if (bytes_of(j, "msgid", DEDUP_ID_EVIDENCE_MAX, &e->msgid,
                     &e->msgid_stored))
                goto out;
        if (!(e->topic = strdup(topic)) ||
            (member && !(e->member = strdup(member))) ||
            (ft && !(e->first_topic = strdup(ft))) ||
            (reason && !(e->reason = strdup(reason))))
                goto out;
        if (*kind == DEDUP_KIND__CNT &&
            json_is_object(json_object_get(j, "detail")) &&
            !(e->detail = json_dumps(json_object_get(j, "detail"),
                                     JSON_COMPACT)))
                goto out;
        snprintf(e->kind, sizeof(e->kind), "%s", k);
        e->partition = (int32_t)part;
        e->count = (uint64_t)count;
        e->epoch = (int32_t)int_of(j, "epoch", -1);
        e->seq_lo = int_of(j, "seq_lo", -1);
        e->seq_hi = int_of(j, "seq_hi", -1);
        e->offset_lo = int_of(j, "offset_lo", -1);
        e->offset_hi = int_of(j, "offset_hi", -1);
        e->first_offset = int_of(j, "first_offset", -1);
        e->first_partition = fp < 0 ? -1 : (int32_t)fp;
        e->first_offset_hi = int_of(j, "first_offset_hi", -1);
        e->msgid_len = e->msgid
                           ? int_of(j, "msgid_len", (int64_t)e->msgid_stored)
                           : -1;
        e->when_ms = int_of(j, "detected_ms", int_of(j, "when_ms", -1));
        rc = 0;
out:
        if (rc)
                event_release(e);
        json_decref(j);
        return rc;
}

/* A redelivered or truncated event's records onto its audited partition
 * (a linear search: anomalies only).  A partition not expected (added to
 * its topic after this view started) becomes expected: every member
 * counts the same events, whenever it started. */
#define GROUPREP_EXPECT_MAX (1u << 20) /* partitions an event can add */

static void evc_add(struct grouprep *g, const struct grouprep_event *e,
                    enum dedup_kind kind)
{
        size_t i;

        for (i = 0; i < g->nexpected; i++)
                if (g->expected[i].partition == e->partition &&
                    !strcmp(g->expected[i].topic, e->topic))
                        break;
        /* (Bounded: events are other processes' bytes.) */
        if (i == g->nexpected && (g->nexpected >= GROUPREP_EXPECT_MAX ||
                                  grouprep_expect(g, e->topic, e->partition)))
                return; /* out of memory: not counted */
        if (kind == DEDUP_KIND_REDELIVERED) {
                g->evc[i].redelivered += e->count;
        } else {
                g->evc[i].truncations++;
                g->evc[i].truncated_records += e->count;
        }
}

int grouprep_event(struct grouprep *g, int32_t partition, int64_t offset,
                   const void *val, size_t len)
{
        struct grouprep_event e;
        enum dedup_kind kind;
        size_t at;

        g->events_read++;
        if (!val || event_parse(val, len, &e, &kind)) {
                g->events_malformed++;
                return 1;
        }
        e.offset = offset;
        e.events_partition = partition;
        if (kind == DEDUP_KIND_REDELIVERED || kind == DEDUP_KIND__CNT)
                evc_add(g, &e, kind);
        if (g->nring == g->ring_size) { /* the oldest gives way */
                event_release(&g->ring[g->head]);
                g->head = (g->head + 1) % g->ring_size;
                g->nring--;
        }
        at = (g->head + g->nring) % g->ring_size;
        g->ring[at] = e;
        g->nring++;
        return 0;
}

/* ------------------------------------------------------------------ */
/* The aggregation                                                     */
/* ------------------------------------------------------------------ */

struct grouprep *grouprep_new(size_t ring)
{
        struct grouprep *g = calloc(1, sizeof(*g));

        if (!g)
                return NULL;
        if (ring < 1)
                ring = 1;
        if (ring > GROUPREP_EVENTS_MAX)
                ring = GROUPREP_EVENTS_MAX;
        g->ring = calloc(ring, sizeof(*g->ring));
        if (!g->ring) {
                free(g);
                return NULL;
        }
        g->ring_size = ring;
        return g;
}

void grouprep_free(struct grouprep *g)
{
        size_t i;

        if (!g)
                return;
        for (i = 0; i < g->nparts; i++)
                free(g->parts[i].topic);
        free(g->parts);
        for (i = 0; i < g->nexpected; i++)
                free(g->expected[i].topic);
        free(g->expected);
        free(g->hws);
        free(g->evc);
        for (i = 0; i < g->ring_size; i++)
                event_release(&g->ring[i]);
        free(g->ring);
        free(g);
}

int grouprep_expect(struct grouprep *g, const char *topic, int32_t partition)
{
        if (g->nexpected == g->expcap) {
                size_t cap = g->expcap ? 2 * g->expcap : 64;
                struct grouprep_tp *e = realloc(g->expected, cap * sizeof(*e));
                int64_t *h;
                struct grouprep_evcounts *r;
                if (!e)
                        return -1;
                g->expected = e;
                h = realloc(g->hws, cap * sizeof(*h));
                if (!h)
                        return -1;
                g->hws = h;
                r = realloc(g->evc, cap * sizeof(*r));
                if (!r)
                        return -1;
                g->evc = r;
                g->expcap = cap;
        }
        g->expected[g->nexpected].topic = strdup(topic);
        if (!g->expected[g->nexpected].topic)
                return -1;
        g->expected[g->nexpected].partition = partition;
        g->hws[g->nexpected] = -1;
        memset(&g->evc[g->nexpected], 0, sizeof(g->evc[0]));
        g->nexpected++;
        return 0;
}

void grouprep_high_watermark(struct grouprep *g, const char *topic,
                             int32_t partition, int64_t hw)
{
        size_t i;

        for (i = 0; i < g->nexpected; i++)
                if (g->expected[i].partition == partition &&
                    !strcmp(g->expected[i].topic, topic))
                        g->hws[i] = hw;
}

void grouprep_error(struct grouprep *g, const char *line)
{
        snprintf(g->error, sizeof(g->error), "%s", line ? line : "");
}

/* ------------------------------------------------------------------ */
/* Snapshots                                                           */
/* ------------------------------------------------------------------ */

static void snap_free(struct grouprep_snap *s)
{
        size_t i;

        for (i = 0; s->parts && i < s->nparts; i++)
                free(s->parts[i].topic);
        free(s->parts);
        for (i = 0; s->unstated && i < s->nunstated; i++)
                free(s->unstated[i].topic);
        free(s->unstated);
        for (i = 0; s->expected && i < s->nexpected; i++)
                free(s->expected[i].topic);
        free(s->expected);
        free(s->evc);
        for (i = 0; s->events && i < s->nevents; i++)
                event_release(&s->events[i]);
        free(s->events);
        free(s);
}

static char *dupn(const char *p, size_t n, int *fail)
{
        char *d;

        if (!p)
                return NULL;
        if (!(d = malloc(n + 1))) {
                *fail = 1;
                return NULL;
        }
        memcpy(d, p, n);
        d[n] = '\0';
        return d;
}

struct grouprep_snap *grouprep_snap_make(const struct grouprep *g,
                                         int64_t now_ms)
{
        struct grouprep_snap *s = calloc(1, sizeof(*s));
        size_t i, n = 0, at;
        int fail = 0, found;

        if (!s)
                return NULL;
        atomic_init(&s->refs, 1);
        s->made_ms = now_ms;
        s->state_records = g->state_records;
        s->state_malformed = g->state_malformed;
        s->events_read = g->events_read;
        s->events_malformed = g->events_malformed;
        snprintf(s->error, sizeof(s->error), "%s", g->error);
        s->parts = calloc(g->nparts + 1, sizeof(*s->parts));
        s->unstated = calloc(g->nexpected + 1, sizeof(*s->unstated));
        s->expected = calloc(g->nexpected + 1, sizeof(*s->expected));
        s->evc = calloc(g->nexpected + 1, sizeof(*s->evc));
        s->events = calloc(g->nring + 1, sizeof(*s->events));
        if (!s->parts || !s->unstated || !s->expected || !s->evc || !s->events)
                goto fail;
        for (i = 0; i < g->nparts; i++, s->nparts++) {
                s->parts[i] = g->parts[i];
                s->parts[i].topic = dupn(g->parts[i].topic,
                                         strlen(g->parts[i].topic), &fail);
                s->parts[i].high_watermark = -1;
        }
        for (i = 0; i < g->nexpected; i++, s->nexpected++) {
                s->expected[i].topic = dupn(g->expected[i].topic,
                                            strlen(g->expected[i].topic),
                                            &fail);
                s->expected[i].partition = g->expected[i].partition;
                s->evc[i] = g->evc[i];
                at = part_find(g->parts, g->nparts, g->expected[i].topic,
                               g->expected[i].partition, &found);
                if (found) {
                        /* Here, once: not per part and request. */
                        s->parts[at].high_watermark = g->hws[i];
                        continue;
                }
                s->unstated[n].topic = dupn(g->expected[i].topic,
                                            strlen(g->expected[i].topic),
                                            &fail);
                s->unstated[n++].partition = g->expected[i].partition;
                s->nunstated = n;
        }
        for (i = 0; i < g->nring; i++, s->nevents++) {
                const struct grouprep_event *e =
                    &g->ring[(g->head + i) % g->ring_size];
                struct grouprep_event *d = &s->events[i];
                *d = *e;
                d->topic = dupn(e->topic, strlen(e->topic), &fail);
                d->producer = dupn(e->producer, e->producer_len, &fail);
                d->member = e->member
                                ? dupn(e->member, strlen(e->member), &fail)
                                : NULL;
                d->first_topic = e->first_topic
                                     ? dupn(e->first_topic,
                                            strlen(e->first_topic), &fail)
                                     : NULL;
                d->msgid = dupn(e->msgid, e->msgid_stored, &fail);
                d->reason = e->reason
                                ? dupn(e->reason, strlen(e->reason), &fail)
                                : NULL;
                d->detail = e->detail
                                ? dupn(e->detail, strlen(e->detail), &fail)
                                : NULL;
        }
        if (fail)
                goto fail;
        return s;
fail:
        snap_free(s);
        return NULL;
}

struct grouprep_snap *grouprep_snap_ref(struct grouprep_snap *s)
{
        if (s)
                atomic_fetch_add(&s->refs, 1);
        return s;
}

void grouprep_snap_put(struct grouprep_snap *s)
{
        if (s && atomic_fetch_sub(&s->refs, 1) == 1)
                snap_free(s);
}

size_t grouprep_snap_sum(const struct grouprep_snap *s, const char *topic,
                         struct grouprep_counts *out, uint64_t *pairs,
                         int64_t *lag)
{
        size_t i, n = 0, e;
        int k;

        memset(out, 0, sizeof(*out));
        if (pairs)
                *pairs = 0;
        if (lag)
                *lag = -1;
        for (i = 0; i < s->nparts; i++) {
                const struct grouprep_part *p = &s->parts[i];
                if (topic && strcmp(topic, p->topic))
                        continue;
                n++;
                out->records += p->c.records;
                out->untracked += p->c.untracked;
                out->missing += p->c.missing;
                out->recovered += p->c.recovered;
                out->unknown += p->c.unknown;
                out->ids += p->c.ids;
                for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++)
                        out->anomalies[k] += p->c.anomalies[k];
                if (pairs)
                        *pairs += p->pairs;
                if (lag && p->high_watermark >= 0)
                        *lag = (*lag < 0 ? 0 : *lag) +
                               (p->high_watermark > p->next_offset
                                    ? p->high_watermark - p->next_offset
                                    : 0);
        }
        /* Redeliveries are judged through the ids topic, apart from the
         * partitions' owners, and a truncation is an event, not a state:
         * counted from the events topic. */
        for (e = 0; e < s->nexpected; e++) {
                if (topic && strcmp(topic, s->expected[e].topic))
                        continue;
                out->anomalies[DEDUP_KIND_REDELIVERED] +=
                    s->evc[e].redelivered;
                out->truncations += s->evc[e].truncations;
                out->truncated_records += s->evc[e].truncated_records;
        }
        return n;
}

static void *grouprep_snap_ref_any(void *s)
{
        return grouprep_snap_ref(s);
}

static void grouprep_snap_put_any(void *s)
{
        grouprep_snap_put(s);
}

void status_grouprep_publish(struct status *st, struct grouprep_snap *s)
{
        status_snap_publish(st, s, grouprep_snap_put_any);
}

struct grouprep_snap *status_grouprep_get(struct status *st)
{
        return status_snap_get(st, grouprep_snap_ref_any);
}
