/*
 * test_evlog.c - the grouped, rate-limited anomaly lines of serve and the
 * demo (cmd/evlog.h): one line for the first event of a cause, one summary
 * when it ends, a "continuing" line while it goes on, a note for what the
 * rate limit held back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cmd/evlog.h"

struct seen {
        char lines[64][2048];
        char kcat[64][1024];
        enum evlog_line what[64];
        size_t n;
};

static void sink(void *opaque, enum evlog_line what, const char *line,
                 const char *kcat)
{
        struct seen *s = opaque;

        assert_true(s->n < 64);
        snprintf(s->lines[s->n], sizeof(s->lines[0]), "%s", line);
        snprintf(s->kcat[s->n], sizeof(s->kcat[0]), "%s", kcat ? kcat : "");
        s->what[s->n++] = what;
}

static struct dedup_event ev_make(enum dedup_kind kind, const char *producer,
                                  int32_t epoch, int64_t off, uint64_t count)
{
        struct dedup_event ev;

        memset(&ev, 0, sizeof(ev));
        ev.kind = kind;
        ev.producer = producer;
        ev.producer_len = producer ? strlen(producer) : 0;
        ev.epoch = epoch;
        ev.seq_lo = off;
        ev.seq_hi = off + (int64_t)count - 1;
        ev.offset_lo = off;
        ev.offset_hi = off + (int64_t)count - 1;
        ev.first_offset = -1;
        ev.first_offset_hi = -1;
        ev.count = count;
        return ev;
}

/* A zombie's 174 batches: one first line, one summary when it ends. */
static void test_group_one_cause(void **state)
{
        struct evlog *l = calloc(1, sizeof(*l));
        struct seen *s = calloc(1, sizeof(*s));
        struct dedup_event ev;
        int i;

        (void)state;
        evlog_init(l, sink, s, "b:9092");
        for (i = 0; i < 174; i++) {
                ev = ev_make(DEDUP_KIND_FENCED, "orders", 0, 100 + i * 10, 10);
                evlog_event(l, "demo", 2, &ev, 1000 + i * 10);
                evlog_tick(l, 1000 + i * 10);
        }
        assert_int_equal(s->n, 1);
        assert_int_equal(s->what[0], EVLOG_FIRST);
        assert_string_equal(s->lines[0],
                            "fenced       demo [2] producer 'orders' epoch 0 "
                            "seq 100..109 offsets 100..109, count 10");
        assert_string_equal(s->kcat[0], "kcat -C -b b:9092 -t demo -p 2 "
                                        "-o 100 -c 10 -e -J");
        /* Another producer's duplicate is another cause. */
        ev = ev_make(DEDUP_KIND_DUPLICATE, "billing", 3, 50, 1);
        evlog_event(l, "demo", 2, &ev, 2800);
        assert_int_equal(s->n, 2);
        evlog_tick(l, 1000 + 173 * 10 + EVLOG_QUIET_MS - 1);
        assert_int_equal(s->n, 2);
        evlog_tick(l, 1000 + 173 * 10 + EVLOG_QUIET_MS);
        assert_int_equal(s->n, 3);
        assert_int_equal(s->what[2], EVLOG_SUMMARY);
        assert_string_equal(s->lines[2],
                            "fenced       demo [2] producer 'orders' epoch 0 "
                            "offsets 100..1839, count 1740 in all: 174 events "
                            "over 2 s, ended");
        assert_string_equal(s->kcat[2], "kcat -C -b b:9092 -t demo -p 2 "
                                        "-o 100 -c 1740 -e -J");
        /* A single event ends with no summary. */
        evlog_flush(l, 100000);
        assert_int_equal(s->n, 3);
        free(l);
        free(s);
}

/* A cause that goes on says so every EVLOG_REPEAT_MS. */
static void test_group_continuing(void **state)
{
        struct evlog *l = calloc(1, sizeof(*l));
        struct seen *s = calloc(1, sizeof(*s));
        struct dedup_event ev;
        int64_t t;

        (void)state;
        evlog_init(l, sink, s, NULL);
        for (t = 0; t <= EVLOG_REPEAT_MS; t += 1000) {
                ev = ev_make(DEDUP_KIND_DUPLICATE, "p", 1, t, 1);
                evlog_event(l, "orders", 0, &ev, t);
                evlog_tick(l, t);
        }
        assert_int_equal(s->n, 2);
        assert_int_equal(s->what[1], EVLOG_SUMMARY);
        assert_non_null(strstr(s->lines[1], "in all: 61 events over 60 s, "
                                            "continuing"));
        /* Sparse records: no one command fetches them. */
        assert_string_equal(s->kcat[1], "");
        evlog_flush(l, t);
        assert_int_equal(s->n, 2); /* nothing new since */
        free(l);
        free(s);
}

/* Past EVLOG_BURST first lines in a window, groups are counted and one
 * note says how many. */
static void test_rate_limit(void **state)
{
        struct evlog *l = calloc(1, sizeof(*l));
        struct seen *s = calloc(1, sizeof(*s));
        struct dedup_event ev;
        char name[16];
        int i;

        (void)state;
        evlog_init(l, sink, s, NULL);
        for (i = 0; i < EVLOG_BURST + 7; i++) {
                snprintf(name, sizeof(name), "p%d", i);
                ev = ev_make(DEDUP_KIND_GAP, name, 0, 10, 1);
                evlog_event(l, "orders", 1, &ev, 100 + i);
                ev.offset_lo = ev.offset_hi = 20; /* a second event */
                evlog_event(l, "orders", 1, &ev, 100 + i);
        }
        assert_int_equal(s->n, EVLOG_BURST);
        evlog_tick(l, 100 + EVLOG_WINDOW_MS);
        /* The groups said end with their summaries (a held one does not:
         * the note counts it), then the window's note. */
        assert_int_equal(s->n, 2 * EVLOG_BURST + 1);
        assert_int_equal(s->what[EVLOG_BURST], EVLOG_SUMMARY);
        assert_int_equal(s->what[2 * EVLOG_BURST], EVLOG_NOTE);
        assert_non_null(strstr(s->lines[2 * EVLOG_BURST],
                               "7 more anomaly groups in the last 10 s were "
                               "not logged"));
        evlog_flush(l, 100 + EVLOG_WINDOW_MS);
        assert_int_equal(s->n, 2 * EVLOG_BURST + 1);
        assert_int_equal(l->n, 0);
        free(l);
        free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_group_one_cause),
            cmocka_unit_test(test_group_continuing),
            cmocka_unit_test(test_rate_limit),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
