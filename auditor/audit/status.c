/*
 * status.c - see status.h.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

const double status_latency_bounds[STATUS_LATENCY_BUCKETS] = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
const double status_commit_bounds[STATUS_COMMIT_BUCKETS] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5};

struct status {
        pthread_mutex_t lock;
        struct status_view view;
        int published;
        /* serve --group, from the group view's thread (auditor/audit/
         * group_view.c): the member listing, and the group's figures. */
        struct status_group *listing;
        void *snap; /* the group's figures (grouprep.h) */
        void (*snap_put)(void *);
};

struct status *status_new(void)
{
        struct status *st = calloc(1, sizeof(*st));

        if (!st)
                return NULL;
        pthread_mutex_init(&st->lock, NULL);
        return st;
}

void status_free(struct status *st)
{
        if (!st)
                return;
        status_view_release(&st->view);
        status_group_free(st->listing);
        if (st->snap)
                st->snap_put(st->snap);
        pthread_mutex_destroy(&st->lock);
        free(st);
}

static int hist_init(struct status_hist *h, const double *bounds, size_t n)
{
        memset(h, 0, sizeof(*h));
        h->counts = calloc(n + 1, sizeof(*h->counts));
        h->nbuckets = n;
        h->bounds = bounds;
        return h->counts ? 0 : -1;
}

static int hist_copy(struct status_hist *dst, const struct status_hist *src)
{
        *dst = *src;
        dst->counts = malloc((src->nbuckets + 1) * sizeof(*dst->counts));
        if (!dst->counts)
                return -1;
        memcpy(dst->counts, src->counts,
               (src->nbuckets + 1) * sizeof(*dst->counts));
        return 0;
}

void status_hist_observe(struct status_hist *h, double seconds)
{
        size_t lo = 0, hi = h->nbuckets;

        /* First bound >= seconds (Prometheus "le"), else +Inf. */
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (h->bounds[mid] >= seconds)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        h->counts[lo]++;
        h->sum += seconds;
        h->count++;
}

int status_view_init(struct status_view *v, const char *const *topics,
                     size_t ntopics, size_t nparts)
{
        size_t i;

        memset(v, 0, sizeof(*v));
        if (hist_init(&v->commit, status_commit_bounds, STATUS_COMMIT_BUCKETS))
                goto fail;
        v->topics = calloc(ntopics ? ntopics : 1, sizeof(*v->topics));
        v->parts = calloc(nparts ? nparts : 1, sizeof(*v->parts));
        if (!v->topics || !v->parts)
                goto fail;
        v->ntopics = ntopics;
        v->nparts = nparts;
        for (i = 0; i < ntopics; i++) {
                v->topics[i].name = strdup(topics[i]);
                if (!v->topics[i].name ||
                    hist_init(&v->topics[i].latency, status_latency_bounds,
                              STATUS_LATENCY_BUCKETS))
                        goto fail;
        }
        for (i = 0; i < nparts; i++)
                v->parts[i].next_offset = v->parts[i].high_watermark = -1;
        v->flow_lag = -1;
        return 0;
fail:
        status_view_release(v);
        return -1;
}

void status_view_release(struct status_view *v)
{
        size_t i;

        free(v->commit.counts);
        for (i = 0; v->topics && i < v->ntopics; i++) {
                free(v->topics[i].name);
                free(v->topics[i].latency.counts);
        }
        for (i = 0; v->parts && i < v->nparts; i++)
                free(v->parts[i].topic);
        free(v->topics);
        free(v->parts);
        status_group_free(v->group);
        memset(v, 0, sizeof(*v));
}

static int view_copy(struct status_view *dst, const struct status_view *src)
{
        size_t i;

        *dst = *src;
        dst->commit.counts = NULL;
        dst->group = NULL;
        dst->topics = calloc(src->ntopics ? src->ntopics : 1,
                             sizeof(*dst->topics));
        dst->parts = calloc(src->nparts ? src->nparts : 1,
                            sizeof(*dst->parts));
        if (!dst->topics || !dst->parts)
                goto fail;
        if (hist_copy(&dst->commit, &src->commit))
                goto fail;
        for (i = 0; i < src->ntopics; i++) {
                dst->topics[i].name = strdup(src->topics[i].name);
                if (!dst->topics[i].name || hist_copy(&dst->topics[i].latency,
                                                      &src->topics[i].latency))
                        goto fail;
        }
        for (i = 0; i < src->nparts; i++) {
                dst->parts[i] = src->parts[i];
                dst->parts[i].topic = src->parts[i].topic
                                          ? strdup(src->parts[i].topic)
                                          : NULL;
                if (src->parts[i].topic && !dst->parts[i].topic)
                        goto fail;
        }
        if (src->group && !(dst->group = status_group_copy(src->group)))
                goto fail;
        return 0;
fail:
        status_view_release(dst);
        return -1;
}

int status_publish(struct status *st, const struct status_view *v)
{
        struct status_view copy;

        if (view_copy(&copy, v))
                return -1;
        pthread_mutex_lock(&st->lock);
        status_view_release(&st->view);
        st->view = copy;
        st->published = 1;
        pthread_mutex_unlock(&st->lock);
        return 0;
}

void status_refusal_set(struct status *st, const char *line)
{
        pthread_mutex_lock(&st->lock);
        /* Nothing published yet: an empty view, histograms and all, for
         * readers to copy. */
        if (!st->published && status_view_init(&st->view, NULL, 0, 0)) {
                pthread_mutex_unlock(&st->lock);
                return;
        }
        snprintf(st->view.refused, sizeof(st->view.refused), "%s", line);
        /* Not ready either way: the consumer that held the partitions
         * is gone. */
        st->view.assigned = 0;
        st->published = 1;
        pthread_mutex_unlock(&st->lock);
}

int status_read(struct status *st, struct status_view *out)
{
        int rc = -1;

        pthread_mutex_lock(&st->lock);
        if (st->published)
                rc = view_copy(out, &st->view);
        /* The listing comes from the group view's thread, not with the
         * audit thread's view. */
        if (!rc && st->listing && !out->group &&
            !(out->group = status_group_copy(st->listing))) {
                status_view_release(out);
                rc = -1;
        }
        pthread_mutex_unlock(&st->lock);
        if (rc)
                memset(out, 0, sizeof(*out));
        return rc;
}

int status_group_publish(struct status *st, const struct status_group *g)
{
        struct status_group *copy = status_group_copy(g);

        if (!copy)
                return -1;
        pthread_mutex_lock(&st->lock);
        status_group_free(st->listing);
        st->listing = copy;
        pthread_mutex_unlock(&st->lock);
        return 0;
}

void status_snap_publish(struct status *st, void *snap, void (*put)(void *))
{
        void (*old_put)(void *);
        void *old;

        pthread_mutex_lock(&st->lock);
        old = st->snap;
        old_put = st->snap_put;
        st->snap = snap;
        st->snap_put = put;
        pthread_mutex_unlock(&st->lock);
        if (old)
                old_put(old);
}

void *status_snap_get(struct status *st, void *(*ref)(void *))
{
        void *s;

        if (!st)
                return NULL;
        pthread_mutex_lock(&st->lock);
        s = st->snap ? ref(st->snap) : NULL;
        pthread_mutex_unlock(&st->lock);
        return s;
}

struct status_view *status_view_get(struct status *st, struct status_view *v)
{
        if (!st || status_read(st, v)) {
                memset(v, 0, sizeof(*v));
                return NULL;
        }
        return v;
}

size_t status_ready_reasons(const struct status_view *v, const char **why,
                            size_t max)
{
        size_t n = 0;

        if (!v) {
                why[n++] = "the audit has not started yet";
                return n;
        }
        if (n < max && v->refused[0])
                why[n++] = v->refused;
        if (n < max && !v->ledger_open)
                why[n++] = "the ledger is not open";
        if (n < max && !v->assigned)
                why[n++] = "no partition is assigned to the consumer";
        if (n < max && v->brokers_up <= 0)
                why[n++] = "no broker is up";
        if (n < max && v->ledger_paused)
                why[n++] = "ledger commits are failing: the audit is paused";
        return n;
}

int64_t status_part_lag(const struct status_part *p)
{
        if (p->high_watermark < 0 || p->next_offset < 0)
                return -1;
        return p->high_watermark > p->next_offset
                   ? p->high_watermark - p->next_offset
                   : 0;
}

int64_t status_topic_lag(const struct status_view *v, const char *topic)
{
        int64_t sum = -1, lag;
        size_t i;

        for (i = 0; v && i < v->nparts; i++) {
                if (topic &&
                    (!v->parts[i].topic || strcmp(v->parts[i].topic, topic)))
                        continue;
                lag = status_part_lag(&v->parts[i]);
                if (lag >= 0)
                        sum = (sum < 0 ? 0 : sum) + lag;
        }
        return sum;
}
