/*
 * test_flow_ledger.c - the flow audit through the ledger: a batch written
 * by ledger_commit(), read back by a new process's flow (same counts,
 * same verdicts afterwards), a batch lost to a crash before COMMIT
 * replayed to the same counts, the evidence walk and the human report;
 * a source or sink topic recreated (a new incarnation): nothing of the
 * old log's outstanding flow carries across.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../auditor/ledger/ledger_flow.h"
#include "../auditor/report/report_flow.h"
#include "../auditor/ledger/ledger.h"

struct fx {
        char dir[64];
        char path[96];
        struct ledger_part parts[3];
        uint64_t max_ids; /* 0: the default */
};

static int fx_setup(void **state)
{
        struct fx *fx = calloc(1, sizeof(*fx));
        uint32_t i;

        if (!fx)
                return -1;
        snprintf(fx->dir, sizeof(fx->dir), "/tmp/eosaudit-flow-XXXXXX");
        if (!mkdtemp(fx->dir))
                return -1;
        snprintf(fx->path, sizeof(fx->path), "%s/l.db", fx->dir);
        /* part 0: the sink; 1, 2: the source's two partitions */
        for (i = 0; i < 3; i++) {
                fx->parts[i].topic = i ? "in" : "out";
                fx->parts[i].partition = i ? (int32_t)i - 1 : 0;
                fx->parts[i].part = i;
                fx->parts[i].next_offset = 0;
                fx->parts[i].coverage_lo = fx->parts[i].coverage_hi = -1;
        }
        *state = fx;
        return 0;
}

static int fx_teardown(void **state)
{
        struct fx *fx = *state;

        ledger_remove(fx->path);
        rmdir(fx->dir);
        free(fx);
        return 0;
}

struct run {
        struct ledger *lg;
        struct dedup_tracker *tr;
        struct dedup_flow *fl;
};

static void run_open(struct fx *fx, struct run *r)
{
        struct dedup_config dc;
        struct dedup_flow_config fc;
        char err[256];
        uint32_t i;

        assert_int_equal(ledger_open(&r->lg, fx->path, err, sizeof(err)), 0);
        dedup_config_defaults(&dc);
        r->tr = dedup_tracker_new(&dc);
        assert_non_null(r->tr);
        for (i = 0; i < 3; i++)
                assert_int_equal(dedup_tracker_part_add(r->tr, i, 0), 0);
        dedup_flow_config_defaults(&fc);
        fc.by_frontier = 1;
        if (fx->max_ids)
                fc.max_ids = fx->max_ids;
        r->fl = dedup_flow_new(&fc);
        assert_non_null(r->fl);
        assert_int_equal(ledger_flow_load(r->lg, r->fl, fx->parts, 3,
                                          "exactly-one", err, sizeof(err)),
                         0);
}

static void run_close(struct run *r)
{
        ledger_close(r->lg);
        dedup_tracker_free(r->tr);
        dedup_flow_free(r->fl);
}

static void commit(struct fx *fx, struct run *r)
{
        char err[256];

        fx->parts[0].dirty = 1;
        assert_int_equal(ledger_commit(r->lg, r->tr, fx->parts, 3, NULL, err,
                                       sizeof(err)),
                         0);
}

static void src(struct run *r, uint32_t part, int64_t off, const char *id)
{
        assert_int_equal(dedup_flow_source(r->fl, part, off, 1000, id,
                                           strlen(id)),
                         0);
}

static void sink(struct run *r, int64_t off, const char *id)
{
        assert_int_equal(dedup_flow_sink(r->fl, 0, off, 1040, id, strlen(id)),
                         0);
}

/* The topic recreated, as audit_resume_check() finds it, between runs. */
static void incarnate(struct fx *fx, const char *topic)
{
        struct ledger *lg;
        struct ledger_incarnation_part why = {0, "recreated", 4, 3, 0, NULL};
        int64_t inc = -1;
        char err[256];

        assert_int_equal(ledger_open(&lg, fx->path, err, sizeof(err)), 0);
        assert_int_equal(ledger_topic_incarnate(lg, topic, &why, 1, &inc, err,
                                                sizeof(err)),
                         0);
        assert_int_equal(inc, 1);
        ledger_close(lg);
}

/* Commits the batch, closes, and opens again: a restart after a committed
 * batch; with recreated, that topic was recreated in between. */
static void reopen(struct fx *fx, struct run *r, const char *recreated)
{
        commit(fx, r);
        run_close(r);
        if (recreated)
                incarnate(fx, recreated);
        run_open(fx, r);
}

struct seen {
        int n, lost, dup, unexp;
        int src_in_ok;
};

static int seen_cb(void *opaque, const struct ledger_flow_row *row)
{
        struct seen *s = opaque;

        s->n++;
        if (!strcmp(row->outcome, "lost")) {
                s->lost++;
                if (row->src_topic && !strcmp(row->src_topic, "in") &&
                    row->sink_topic == NULL)
                        s->src_in_ok++;
        } else if (!strcmp(row->outcome, "duplicated")) {
                s->dup++;
                if (row->copies == 2 && row->sink_offset == 0 &&
                    row->sink_offset_last == 1 && row->id_stored == 1 &&
                    !memcmp(row->id, "a", 1))
                        s->src_in_ok++;
        } else if (!strcmp(row->outcome, "unexpected")) {
                s->unexp++;
                if (!row->src_topic && row->sink_topic)
                        s->src_in_ok++;
        }
        return 0;
}

static void test_roundtrip(void **state)
{
        struct fx *fx = *state;
        struct ledger_flow_summary s;
        struct run r;
        struct seen sn = {0};
        char err[256], *text = NULL;
        size_t len;
        FILE *f;

        run_open(fx, &r);
        src(&r, 1, 0, "a");
        src(&r, 1, 1, "b");
        src(&r, 2, 0, "c");
        sink(&r, 0, "a");
        sink(&r, 1, "a");
        sink(&r, 2, "z");
        /* A new run: the flow comes back, and a frontier judges the
         * restored records as it would have judged them. */
        reopen(fx, &r, NULL);
        dedup_flow_frontier(r.fl, 1, 2);
        dedup_flow_frontier(r.fl, 2, 1);
        dedup_flow_finish(r.fl, 0);
        commit(fx, &r);
        assert_int_equal(ledger_flow_summary(r.lg, &s, err, sizeof(err)), 0);
        assert_true(s.present);
        assert_string_equal(s.expect, "exactly-one");
        assert_int_equal(s.source_records, 3);
        assert_int_equal(s.lost, 2);
        assert_int_equal(s.duplicated, 1);
        assert_int_equal(s.duplicate_copies, 1);
        assert_int_equal(s.unexpected, 1);
        assert_int_equal(s.delivered, 0);
        assert_int_equal(s.pending, 0);
        assert_int_equal(s.lat_count, 1);
        assert_int_equal(s.lat_max_ms, 40);
        assert_int_equal(ledger_flow_evidence_foreach(r.lg, NULL, 0, -1,
                                                      seen_cb, &sn, err,
                                                      sizeof(err)),
                         0);
        assert_int_equal(sn.n, 4);
        assert_int_equal(sn.lost, 2);
        assert_int_equal(sn.dup, 1);
        assert_int_equal(sn.unexp, 1);
        assert_int_equal(sn.src_in_ok, 4);

        f = open_memstream(&text, &len);
        assert_non_null(f);
        assert_int_equal(report_flow_print(f, r.lg, 10, err, sizeof(err)), 0);
        fclose(f);
        assert_non_null(strstr(text, "3 source records: 0 delivered, 2 lost, "
                                     "1 duplicated (1 extra copies)"));
        assert_non_null(strstr(text, "1 unexpected sink records"));
        assert_non_null(strstr(text, "duplicated id 'a'"));
        free(text);
        run_close(&r);
}

/* A batch that never reached COMMIT is replayed: the counts are those of
 * a run that was never interrupted. */
static void test_lost_batch_replayed(void **state)
{
        struct fx *fx = *state;
        struct ledger_flow_summary s;
        struct run r;
        char err[256];

        run_open(fx, &r);
        src(&r, 1, 0, "a");
        sink(&r, 0, "a");
        commit(fx, &r);
        src(&r, 1, 1, "b"); /* this batch dies with the process */
        sink(&r, 1, "b");
        sink(&r, 2, "b");
        run_close(&r);

        run_open(fx, &r);
        src(&r, 1, 1, "b"); /* replayed from the ledger's offsets */
        sink(&r, 1, "b");
        sink(&r, 2, "b");
        dedup_flow_frontier(r.fl, 1, 2);
        commit(fx, &r);
        assert_int_equal(ledger_flow_summary(r.lg, &s, err, sizeof(err)), 0);
        assert_int_equal(s.source_records, 2);
        assert_int_equal(s.delivered, 1);
        assert_int_equal(s.duplicated, 1);
        assert_int_equal(s.duplicate_copies, 1);
        assert_int_equal(s.sink_records, 3);
        run_close(&r);
}

/* Past --flow-max-ids: entries retired and committed in one run are
 * found again in the ledger by a later run and revived (a late copy of a
 * LOST source, a second copy of a DELIVERED one), the revival persists,
 * and a batch that dies uncommitted changes nothing. */
static void test_revive_committed(void **state)
{
        struct fx *fx = *state;
        struct ledger_flow_summary s;
        struct seen sn = {0};
        struct run r;
        char err[256];

        fx->max_ids = 2;
        run_open(fx, &r);
        src(&r, 1, 0, "a");
        src(&r, 1, 1, "b");
        src(&r, 1, 2, "c");
        src(&r, 1, 3, "d");
        sink(&r, 0, "z"); /* a, b, c retired: lost for now */
        commit(fx, &r);
        assert_int_equal(ledger_flow_summary(r.lg, &s, err, sizeof(err)), 0);
        assert_int_equal(s.lost, 3);
        assert_int_equal(s.live, 2);
        run_close(&r);

        run_open(fx, &r);
        sink(&r, 1, "a");   /* from the ledger: delivered; d retired */
        sink(&r, 2, "d");   /* from the retired list; z retired */
        src(&r, 2, 0, "z"); /* idem; a retired, delivered */
        commit(fx, &r);
        assert_int_equal(ledger_flow_summary(r.lg, &s, err, sizeof(err)), 0);
        assert_int_equal(s.lost, 2); /* b, c: still to come */
        assert_int_equal(s.unexpected, 0);
        assert_int_equal(s.delivered, 3);
        assert_int_equal(s.live, 2);
        run_close(&r);

        run_open(fx, &r);
        sink(&r, 3, "b"); /* this batch dies with the process */
        sink(&r, 4, "a");
        run_close(&r);

        run_open(fx, &r);
        assert_int_equal(ledger_flow_summary(r.lg, &s, err, sizeof(err)), 0);
        assert_int_equal(s.lost, 2);
        assert_int_equal(s.delivered, 3);
        sink(&r, 3, "b"); /* replayed */
        sink(&r, 4, "a"); /* a second copy of a retired delivered id */
        dedup_flow_frontier(r.fl, 1, 10);
        dedup_flow_frontier(r.fl, 2, 10);
        dedup_flow_finish(r.fl, 0);
        reopen(fx, &r, NULL);
        assert_int_equal(ledger_flow_summary(r.lg, &s, err, sizeof(err)), 0);
        assert_int_equal(s.source_records, 5);
        assert_int_equal(s.delivered, 3);  /* b, d, z */
        assert_int_equal(s.duplicated, 1); /* a */
        assert_int_equal(s.duplicate_copies, 1);
        assert_int_equal(s.lost, 1); /* c: a real loss */
        assert_int_equal(s.unexpected, 0);
        assert_int_equal(s.sink_records, 5);
        assert_int_equal(s.lat_count, 4);
        assert_int_equal(ledger_flow_evidence_foreach(r.lg, NULL, 0, -1,
                                                      seen_cb, &sn, err,
                                                      sizeof(err)),
                         0);
        assert_int_equal(sn.n, 2);
        assert_int_equal(sn.lost, 1);
        assert_int_equal(sn.dup, 1);
        run_close(&r);
}

static int count_cb(void *opaque, const struct ledger_flow_row *row)
{
        (void)row;
        (*(int *)opaque)++;
        return 0;
}

/* A recreated source: its outstanding ids are not lost (they are gone
 * with the old log, unjudged), what was judged stays judged, and the new
 * log's records, same ids and all, are new entries. */
static void test_source_reborn(void **state)
{
        struct fx *fx = *state;
        struct ledger_flow_summary s;
        struct run r;
        char err[256];
        int ev = 0;

        run_open(fx, &r);
        src(&r, 1, 0, "a"); /* delivered */
        src(&r, 1, 1, "b"); /* duplicated */
        src(&r, 1, 2, "c"); /* due, no copy: lost */
        src(&r, 1, 3, "d"); /* pending at the recreation */
        sink(&r, 0, "a");
        sink(&r, 1, "b");
        sink(&r, 2, "b");
        sink(&r, 3, "e"); /* awaiting: the sink is not recreated */
        dedup_flow_frontier(r.fl, 1, 3);
        reopen(fx, &r, "in");
        assert_int_equal(ledger_flow_summary(r.lg, &s, err, sizeof(err)), 0);
        assert_int_equal(s.pending, 0);
        assert_int_equal(s.source_records, 3);
        assert_int_equal(s.awaiting, 1);
        /* The new log: a again at offset 0, delivered again; the old d
         * must not turn lost when every source record is due. */
        src(&r, 1, 0, "a");
        sink(&r, 4, "a");
        dedup_flow_frontier(r.fl, 1, 1);
        dedup_flow_finish(r.fl, 1);
        commit(fx, &r);
        assert_int_equal(ledger_flow_summary(r.lg, &s, err, sizeof(err)), 0);
        assert_int_equal(s.source_records, 4);
        assert_int_equal(s.delivered, 2);
        assert_int_equal(s.lost, 1);
        assert_int_equal(s.duplicated, 1);
        assert_int_equal(s.duplicate_copies, 1);
        assert_int_equal(s.pending, 0);
        assert_int_equal(s.unexpected, 1); /* e, aged at the scan's end */
        /* The old verdicts' evidence is kept: c lost, b duplicated, e. */
        assert_int_equal(ledger_flow_evidence_foreach(r.lg, NULL, 0, -1,
                                                      count_cb, &ev, err,
                                                      sizeof(err)),
                         0);
        assert_int_equal(ev, 3);
        run_close(&r);
}

/* A recreated sink: a delivered record's copy went with it; a re-delivery
 * into the new sink is its first copy there, not a duplicate, and no
 * re-delivery leaves it delivered (it was), not lost.  Across a restart
 * too (the prior mark is stored). */
static void test_sink_reborn(void **state)
{
        struct fx *fx = *state;
        struct ledger_flow_summary s;
        struct run r;
        char err[256];

        run_open(fx, &r);
        src(&r, 1, 0, "a"); /* delivered, re-delivered later */
        src(&r, 1, 1, "b"); /* duplicated in the old sink */
        src(&r, 2, 0, "c"); /* pending: reaches the new sink */
        src(&r, 2, 1, "f"); /* delivered, never re-delivered */
        sink(&r, 0, "a");
        sink(&r, 1, "b");
        sink(&r, 2, "b");
        sink(&r, 3, "f");
        sink(&r, 4, "w"); /* awaiting, gone with the old sink */
        reopen(fx, &r, "out");
        assert_int_equal(ledger_flow_summary(r.lg, &s, err, sizeof(err)), 0);
        assert_int_equal(s.awaiting, 0);
        assert_int_equal(s.delivered, 2);
        reopen(fx, &r, NULL); /* the prior mark survives a restart */
        sink(&r, 0, "a");     /* the new sink's offsets start again */
        sink(&r, 1, "c");
        dedup_flow_frontier(r.fl, 1, 2);
        dedup_flow_frontier(r.fl, 2, 2);
        dedup_flow_finish(r.fl, 1);
        commit(fx, &r);
        assert_int_equal(ledger_flow_summary(r.lg, &s, err, sizeof(err)), 0);
        assert_int_equal(s.source_records, 4);
        assert_int_equal(s.delivered, 3);  /* a, c, f */
        assert_int_equal(s.duplicated, 1); /* b, in the old sink */
        assert_int_equal(s.duplicate_copies, 1);
        assert_int_equal(s.lost, 0);
        assert_int_equal(s.unexpected, 0);
        assert_int_equal(s.pending, 0);
        run_close(&r);
}

/* Retired past the bound, then a topic's new incarnation: the retired
 * rows follow the live rules, so no revival reaches into the old log. */
static void test_retired_reborn(void **state)
{
        struct fx *fx = *state;
        struct ledger_flow_summary s;
        struct run r;
        char err[256];

        fx->max_ids = 1;
        run_open(fx, &r);
        src(&r, 1, 0, "a");
        sink(&r, 0, "a");   /* delivered */
        src(&r, 1, 1, "b"); /* a retired, delivered */
        sink(&r, 1, "z");   /* b retired, lost for now */
        reopen(fx, &r, "out");
        sink(&r, 0, "a"); /* re-delivered into the new sink: its first copy */
        src(&r, 2, 0, "z"); /* z's copy went with the old sink: new entry */
        dedup_flow_frontier(r.fl, 1, 10);
        dedup_flow_frontier(r.fl, 2, 10);
        dedup_flow_finish(r.fl, 0);
        reopen(fx, &r, NULL);
        assert_int_equal(ledger_flow_summary(r.lg, &s, err, sizeof(err)), 0);
        assert_int_equal(s.duplicated, 0);
        assert_int_equal(s.delivered, 1);  /* a */
        assert_int_equal(s.lost, 2);       /* b (old verdict), z (new) */
        assert_int_equal(s.unexpected, 0); /* z awaited: dropped unjudged */
        run_close(&r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_revive_committed, fx_setup,
                                            fx_teardown),
            cmocka_unit_test_setup_teardown(test_retired_reborn, fx_setup,
                                            fx_teardown),
            cmocka_unit_test_setup_teardown(test_roundtrip, fx_setup,
                                            fx_teardown),
            cmocka_unit_test_setup_teardown(test_lost_batch_replayed, fx_setup,
                                            fx_teardown),
            cmocka_unit_test_setup_teardown(test_source_reborn, fx_setup,
                                            fx_teardown),
            cmocka_unit_test_setup_teardown(test_sink_reborn, fx_setup,
                                            fx_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
