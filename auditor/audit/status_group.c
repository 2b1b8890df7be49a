/*
 * status_group.c - serve --group's part of the live figures (status.h):
 * the group's members copied for HTTP threads, and the parser of a
 * member's assignment bytes as the broker reports them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

void status_member_release(struct status_member *m)
{
        size_t i;

        free(m->member_id);
        free(m->client_id);
        free(m->client_host);
        for (i = 0; m->parts && i < m->nparts; i++)
                free(m->parts[i].topic);
        free(m->parts);
        memset(m, 0, sizeof(*m));
}

void status_group_free(struct status_group *g)
{
        size_t i;

        if (!g)
                return;
        free(g->group);
        free(g->member);
        free(g->txn_id);
        free(g->instance_id);
        free(g->state);
        free(g->protocol);
        for (i = 0; g->members && i < g->nmembers; i++)
                status_member_release(&g->members[i]);
        free(g->members);
        free(g);
}

/* strdup of s, NULL staying NULL; *fail set on OOM. */
static char *dup_opt(const char *s, int *fail)
{
        char *d;

        if (!s)
                return NULL;
        d = strdup(s);
        if (!d)
                *fail = 1;
        return d;
}

struct status_group *status_group_copy(const struct status_group *g)
{
        struct status_group *d = calloc(1, sizeof(*d));
        int fail = 0;
        size_t i, k;

        if (!d)
                return NULL;
        *d = *g;
        d->group = dup_opt(g->group, &fail);
        d->member = dup_opt(g->member, &fail);
        d->txn_id = dup_opt(g->txn_id, &fail);
        d->instance_id = dup_opt(g->instance_id, &fail);
        d->state = dup_opt(g->state, &fail);
        d->protocol = dup_opt(g->protocol, &fail);
        d->members = calloc(g->nmembers ? g->nmembers : 1,
                            sizeof(*d->members));
        if (!d->members) {
                d->nmembers = 0;
                fail = 1;
        }
        for (i = 0; d->members && i < g->nmembers; i++) {
                const struct status_member *s = &g->members[i];
                struct status_member *m = &d->members[i];
                *m = *s;
                m->member_id = dup_opt(s->member_id, &fail);
                m->client_id = dup_opt(s->client_id, &fail);
                m->client_host = dup_opt(s->client_host, &fail);
                m->parts = calloc(s->nparts ? s->nparts : 1,
                                  sizeof(*m->parts));
                if (!m->parts) {
                        m->nparts = 0;
                        fail = 1;
                        continue;
                }
                for (k = 0; k < s->nparts; k++) {
                        m->parts[k].topic = dup_opt(s->parts[k].topic, &fail);
                        m->parts[k].partition = s->parts[k].partition;
                }
        }
        if (fail) {
                status_group_free(d);
                return NULL;
        }
        return d;
}

/* Big-endian reads at *o of buf[0..len): 0, or -1 when it would pass
 * the end. */
static int rd16(const unsigned char *b, size_t len, size_t *o, int16_t *v)
{
        if (len - *o < 2)
                return -1;
        *v = (int16_t)(uint16_t)(((unsigned)b[*o] << 8) | b[*o + 1]);
        *o += 2;
        return 0;
}

static int rd32(const unsigned char *b, size_t len, size_t *o, int32_t *v)
{
        if (len - *o < 4)
                return -1;
        *v = (int32_t)(((uint32_t)b[*o] << 24) | ((uint32_t)b[*o + 1] << 16) |
                       ((uint32_t)b[*o + 2] << 8) | (uint32_t)b[*o + 3]);
        *o += 4;
        return 0;
}

int status_assignment_parse(const void *buf, size_t len,
                            struct status_member *m, char *errstr,
                            size_t errstr_size)
{
        const unsigned char *b = buf;
        struct status_tp *parts = NULL, *np;
        size_t o = 0, n = 0, i, name_o;
        int32_t ntopics, t, nparts, k, p;
        int16_t version, tlen;
        char *topic;

        m->parts = NULL;
        m->nparts = 0;
        if (!len)
                return 0; /* nothing assigned (yet) */
        if (!buf || rd16(b, len, &o, &version) || rd32(b, len, &o, &ntopics)) {
                snprintf(errstr, errstr_size,
                         "assignment truncated in its header (%zu bytes)",
                         len);
                return -1;
        }
        if (version < 0 || ntopics < 0) {
                snprintf(errstr, errstr_size,
                         "assignment with version %d and %d topics",
                         (int)version, (int)ntopics);
                return -1;
        }
        for (t = 0; t < ntopics; t++) {
                if (rd16(b, len, &o, &tlen) || tlen < 0 ||
                    len - o < (size_t)tlen) {
                        snprintf(errstr, errstr_size,
                                 "assignment truncated in topic %d's name",
                                 (int)t);
                        goto fail;
                }
                name_o = o;
                o += (size_t)tlen;
                if (rd32(b, len, &o, &nparts) || nparts < 0 ||
                    (len - o) / 4 < (size_t)nparts) {
                        snprintf(errstr, errstr_size,
                                 "assignment truncated in topic %d's "
                                 "partitions",
                                 (int)t);
                        goto fail;
                }
                if (!nparts)
                        continue;
                np = realloc(parts, (n + (size_t)nparts) * sizeof(*parts));
                if (!np) {
                        snprintf(errstr, errstr_size, "out of memory");
                        goto fail;
                }
                parts = np;
                for (k = 0; k < nparts; k++) {
                        (void)rd32(b, len, &o, &p); /* in bounds: above */
                        topic = malloc((size_t)tlen + 1);
                        if (!topic) {
                                snprintf(errstr, errstr_size, "out of memory");
                                goto fail;
                        }
                        memcpy(topic, b + name_o, (size_t)tlen);
                        topic[tlen] = '\0';
                        parts[n].topic = topic;
                        parts[n].partition = p;
                        n++;
                }
        }
        m->parts = parts;
        m->nparts = n;
        return 0;
fail:
        for (i = 0; i < n; i++)
                free(parts[i].topic);
        free(parts);
        return -1;
}
