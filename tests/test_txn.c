/*
 * test_txn.c - the transaction check (dedup/txn.h) on exact sequences of
 * records and manifests: each case is a list of steps with the counters
 * (torn per part, aborted_read) and pending transactions expected after
 * it, and at most one event that must be there with its evidence.  Then
 * the persistence walk: what dirty_foreach hands out, restored into a new
 * tracker, gives the verdicts the first one would have given.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <unistd.h>

#include "../auditor/ledger/ledger.h"
#include "../dedup/dedup.h"
#include "../dedup/txn.h"

enum op {
        END = 0,
        REC,     /* a record of (producer, epoch, txn) on part */
        MAN,     /* a manifest, read on part MPART */
        TICK,    /* dedup_tracker_tick() */
        CONFIRM, /* dedup_tracker_confirm_all(): the end of a scan */
};

#define NPARTS 4
#define MPART 3 /* the manifest topic's part */
#define T0 1700000000000LL
#define GRACE 60000

struct step {
        enum op op;
        uint32_t part;
        const char *producer;
        int32_t epoch;
        int64_t txn;
        int64_t ts;
        int64_t offset; /* -1: the next one of part */
        /* MAN: records per part (counts[p] for part p; 0 = not listed) and
         * the aborted (epoch, txn) of the producer, naborted of them. */
        uint64_t counts[MPART];
        struct dedup_txn_key aborted[2];
        size_t naborted;
        int want; /* REC: dedup_txn_record()'s result; MAN: its result */
};

struct want_ev {
        int set;
        enum dedup_kind kind;
        uint32_t part;
        int64_t txn;
        uint64_t count;
        int64_t offset_lo, offset_hi, first_offset;
};

struct txn_case {
        const char *what;
        uint32_t max_pending; /* 0: the default */
        struct step s[12];
        uint64_t torn[MPART], aborted_read;
        size_t torn_events, pending;
        struct want_ev ev;
};

static const struct txn_case cases[] = {
    {"complete: records, then the manifest",
     0,
     {{REC, 0, "p", 0, 1, T0, -1, {0}, {{0}}, 0, 0},
      {REC, 0, "p", 0, 1, T0, -1, {0}, {{0}}, 0, 0},
      {REC, 1, "p", 0, 1, T0, -1, {0}, {{0}}, 0, 0},
      {MAN, MPART, "p", 0, 1, T0, -1, {2, 1, 0}, {{0}}, 0, 0},
      {CONFIRM, 0, NULL, 0, 0, 0, 0, {0}, {{0}}, 0, 0}},
     {0},
     0,
     0,
     0,
     {0}},
    {"complete: the manifest first, records after (other partitions)",
     0,
     {{MAN, MPART, "p", 0, 1, T0, -1, {1, 2, 0}, {{0}}, 0, 0},
      {REC, 1, "p", 0, 1, T0, -1, {0}, {{0}}, 0, 0},
      {REC, 0, "p", 0, 1, T0, -1, {0}, {{0}}, 0, 0},
      {REC, 1, "p", 0, 1, T0, -1, {0}, {{0}}, 0, 0},
      {CONFIRM, 0, NULL, 0, 0, 0, 0, {0}, {{0}}, 0, 0}},
     {0},
     0,
     0,
     0,
     {0}},
    {"torn: one partition short by one",
     0,
     {{REC, 0, "p", 0, 7, T0, 10, {0}, {{0}}, 0, 0},
      {REC, 0, "p", 0, 7, T0, 11, {0}, {{0}}, 0, 0},
      {REC, 1, "p", 0, 7, T0, 4, {0}, {{0}}, 0, 0},
      {MAN, MPART, "p", 0, 7, T0, 30, {3, 1, 0}, {{0}}, 0, 0},
      {CONFIRM, 0, NULL, 0, 0, 0, 0, {0}, {{0}}, 0, 0}},
     {1, 0, 0},
     0,
     1,
     0,
     {1, DEDUP_KIND_TORN, 0, 7, 1, 10, 11, 30}},
    {"torn: a manifest with no records at all",
     0,
     {{MAN, MPART, "p", 2, 0, T0, 5, {2, 3, 0}, {{0}}, 0, 0},
      {CONFIRM, 0, NULL, 0, 0, 0, 0, {0}, {{0}}, 0, 0}},
     {1, 1, 0},
     0,
     2,
     0,
     {1, DEDUP_KIND_TORN, 1, 0, 3, -1, -1, 5}},
    {"torn: records whose manifest never shows",
     0,
     {{REC, 2, "p", 0, 5, T0, 20, {0}, {{0}}, 0, 0},
      {REC, 2, "p", 0, 5, T0, 21, {0}, {{0}}, 0, 0},
      {CONFIRM, 0, NULL, 0, 0, 0, 0, {0}, {{0}}, 0, 0}},
     {0, 0, 1},
     0,
     1,
     0,
     {1, DEDUP_KIND_TORN, 2, 5, 2, 20, 21, -1}},
    {"torn by the grace (records' clock), not before it",
     0,
     {{REC, 0, "p", 0, 1, T0, 0, {0}, {{0}}, 0, 0},
      {REC, 0, "q", 0, 1, T0 + GRACE - 1, -1, {0}, {{0}}, 0, 0},
      {TICK, 0, NULL, 0, 0, 0, 0, {0}, {{0}}, 0, 0},
      {REC, 0, "q", 0, 1, T0 + GRACE, -1, {0}, {{0}}, 0, 0},
      {TICK, 0, NULL, 0, 0, 0, 0, {0}, {{0}}, 0, 0}},
     {1, 0, 0},
     0,
     1,
     1, /* q's transaction is still within its grace */
     {1, DEDUP_KIND_TORN, 0, 1, 1, 0, 0, -1}},
    {"within the grace, the late manifest completes it",
     0,
     {{REC, 0, "p", 0, 1, T0, -1, {0}, {{0}}, 0, 0},
      {REC, 1, "x", 0, 1, T0 + GRACE - 1, -1, {0}, {{0}}, 0, 0},
      {TICK, 0, NULL, 0, 0, 0, 0, {0}, {{0}}, 0, 0},
      {MAN, MPART, "p", 0, 1, T0 + GRACE - 1, -1, {1, 0, 0}, {{0}}, 0, 0},
      {MAN, MPART, "x", 0, 1, T0 + GRACE - 1, -1, {0, 1, 0}, {{0}}, 0, 0},
      {CONFIRM, 0, NULL, 0, 0, 0, 0, {0}, {{0}}, 0, 0}},
     {0},
     0,
     0,
     0,
     {0}},
    {"aborted_read: records of a transaction already named aborted",
     0,
     {{MAN, MPART, "p", 0, 2, T0, -1, {0}, {{0, 1}}, 1, 0},
      {REC, 0, "p", 0, 1, T0, 40, {0}, {{0}}, 0, 1},
      {REC, 0, "p", 0, 1, T0, 41, {0}, {{0}}, 0, 1},
      {REC, 1, "p", 0, 1, T0, 9, {0}, {{0}}, 0, 1},
      {CONFIRM, 0, NULL, 0, 0, 0, 0, {0}, {{0}}, 0, 0}},
     {0},
     3,
     0,
     0,
     {1, DEDUP_KIND_ABORTED_READ, 0, 1, 2, 40, 41, -1}},
    {"aborted_read: records first, the abort known later",
     0,
     {{REC, 0, "p", 0, 1, T0, 50, {0}, {{0}}, 0, 0},
      {REC, 0, "p", 0, 1, T0, 52, {0}, {{0}}, 0, 0},
      {REC, 2, "p", 0, 1, T0, 3, {0}, {{0}}, 0, 0},
      {REC, 0, "p", 0, 2, T0, 53, {0}, {{0}}, 0, 0},
      {MAN, MPART, "p", 0, 2, T0, -1, {1, 0, 0}, {{0, 1}}, 1, 3},
      {CONFIRM, 0, NULL, 0, 0, 0, 0, {0}, {{0}}, 0, 0}},
     {0},
     3,
     0,
     0,
     {1, DEDUP_KIND_ABORTED_READ, 0, 1, 2, 50, 52, -1}},
    {"a repeated manifest, or one of an aborted transaction, changes nothing",
     0,
     {{MAN, MPART, "p", 0, 3, T0, -1, {0}, {{0, 1}}, 1, 0},
      {MAN, MPART, "p", 0, 1, T0, -1, {4, 0, 0}, {{0}}, 0, 0},
      {REC, 0, "p", 0, 2, T0, -1, {0}, {{0}}, 0, 0},
      {MAN, MPART, "p", 0, 2, T0, -1, {1, 0, 0}, {{0}}, 0, 0},
      {MAN, MPART, "p", 0, 2, T0, -1, {1, 0, 0}, {{0}}, 0, 0},
      {CONFIRM, 0, NULL, 0, 0, 0, 0, {0}, {{0}}, 0, 0}},
     {0},
     0,
     0,
     0,
     {0}},
    {"epochs apart: (p, 0, 4) and (p, 1, 4) are two transactions",
     0,
     {{REC, 0, "p", 0, 4, T0, 8, {0}, {{0}}, 0, 0},
      {MAN, MPART, "p", 1, 4, T0, 2, {1, 0, 0}, {{0}}, 0, 0},
      {CONFIRM, 0, NULL, 0, 0, 0, 0, {0}, {{0}}, 0, 0}},
     {2, 0, 0},
     0,
     2,
     0,
     {1, DEDUP_KIND_TORN, 0, 4, 1, -1, -1, 2}},
    {"tombstones are bounded apart: they never decide a pending one early",
     2,
     {{REC, 0, "p", 0, 1, T0, -1, {0}, {{0}}, 0, 0},
      {REC, 1, "p", 0, 2, T0, -1, {0}, {{0}}, 0, 0},
      {MAN, MPART, "p", 0, 2, T0, -1, {0, 1, 0}, {{0}}, 0, 0},
      {REC, 1, "p", 0, 3, T0, -1, {0}, {{0}}, 0, 0},
      {MAN, MPART, "p", 0, 3, T0, -1, {0, 1, 0}, {{0}}, 0, 0},
      {REC, 1, "p", 0, 4, T0, -1, {0}, {{0}}, 0, 0},
      {MAN, MPART, "p", 0, 4, T0, -1, {0, 1, 0}, {{0}}, 0, 0},
      {MAN, MPART, "p", 0, 1, T0, -1, {1, 0, 0}, {{0}}, 0, 0}},
     {0},
     0,
     0,
     0,
     {0}},
    {"the bound: past max_pending the oldest is confirmed early",
     2,
     {{REC, 0, "p", 0, 1, T0, 0, {0}, {{0}}, 0, 0},
      {REC, 0, "p", 0, 2, T0, 1, {0}, {{0}}, 0, 0},
      {REC, 0, "p", 0, 3, T0, 2, {0}, {{0}}, 0, 0}},
     {1, 0, 0},
     0,
     1,
     2,
     {1, DEDUP_KIND_TORN, 0, 1, 1, 0, 0, -1}},
};

struct run {
        struct dedup_tracker *tr;
        int64_t next_off[NPARTS];
        size_t torn_events;
        int found;
};

static struct dedup_tracker *tracker_new(uint32_t max_pending)
{
        struct dedup_config conf;
        struct dedup_txn_config tc = {GRACE, max_pending
                                                 ? max_pending
                                                 : DEDUP_TXN_PENDING_DEFAULT};
        struct dedup_tracker *tr;
        uint32_t p;

        dedup_config_defaults(&conf);
        conf.gap_grace_ms = 0;
        conf.gap_grace_records = 0;
        tr = dedup_tracker_new(&conf);
        assert_non_null(tr);
        for (p = 0; p < NPARTS; p++)
                assert_int_equal(dedup_tracker_part_add(tr, p, 0), 0);
        assert_int_equal(dedup_txn_enable(tr, &tc), 0);
        /* The wall clock well ahead: record times are taken as they are. */
        dedup_tracker_begin(tr, T0 + 1000 * GRACE);
        return tr;
}

/* Looks at the events since the last look; clears them. */
static void events_scan(struct run *r, const struct want_ev *w)
{
        const struct dedup_event *ev;
        size_t n, i;

        ev = dedup_tracker_events(r->tr, &n);
        for (i = 0; i < n; i++) {
                if (ev[i].kind == DEDUP_KIND_TORN)
                        r->torn_events++;
                if (!w->set || ev[i].kind != w->kind ||
                    ev[i].part != w->part || ev[i].seq_lo != w->txn ||
                    ev[i].first_offset != w->first_offset)
                        continue;
                assert_int_equal(ev[i].count, w->count);
                assert_int_equal(ev[i].offset_lo, w->offset_lo);
                assert_int_equal(ev[i].offset_hi, w->offset_hi);
                r->found = 1;
        }
        dedup_tracker_events_clear(r->tr);
}

static void step_run(struct run *r, const struct step *st)
{
        struct dedup_hdrs h;
        int64_t off;

        switch (st->op) {
        case END:
                break;
        case REC:
        case MAN:
                off = st->offset >= 0 ? st->offset : r->next_off[st->part];
                r->next_off[st->part] = off + 1;
                dedup_hdrs_init(&h);
                h.ts_ms = st->ts;
                if (st->op == REC) {
                        char ep[16], tx[24], sq[24];
                        snprintf(ep, sizeof(ep), "%d", (int)st->epoch);
                        snprintf(tx, sizeof(tx), "%lld", (long long)st->txn);
                        snprintf(sq, sizeof(sq), "%lld", (long long)off);
                        dedup_hdrs_feed(&h, "eos.producer", 12, st->producer,
                                        strlen(st->producer));
                        dedup_hdrs_feed(&h, "eos.epoch", 9, ep, strlen(ep));
                        dedup_hdrs_feed(&h, "eos.seq", 7, sq, strlen(sq));
                        dedup_hdrs_feed(&h, "eos.txn", 7, tx, strlen(tx));
                        assert_int_equal(dedup_hdrs_status(&h),
                                         DEDUP_HDR_TRACKED);
                        assert_int_equal(h.txn, st->txn);
                }
                dedup_tracker_observe(r->tr, st->part, off, &h);
                if (st->op == REC) {
                        assert_int_equal(dedup_txn_record(r->tr, st->part, off,
                                                          &h),
                                         st->want);
                } else {
                        struct dedup_txn_count c[MPART];
                        struct dedup_txn_manifest m = {0};
                        size_t n = 0;
                        uint32_t p;
                        for (p = 0; p < MPART; p++)
                                if (st->counts[p]) {
                                        c[n].part = p;
                                        c[n++].records = st->counts[p];
                                }
                        m.producer = st->producer;
                        m.producer_len = strlen(st->producer);
                        m.epoch = st->epoch;
                        m.txn = st->txn;
                        m.counts = c;
                        m.ncounts = n;
                        m.aborted = st->aborted;
                        m.naborted = st->naborted;
                        m.part = MPART;
                        m.offset = off;
                        assert_int_equal(dedup_txn_manifest(r->tr, &m),
                                         st->want);
                }
                break;
        case TICK:
                dedup_tracker_tick(r->tr);
                break;
        case CONFIRM:
                dedup_tracker_confirm_all(r->tr);
                break;
        }
}

static void case_check(const struct txn_case *c, struct run *r)
{
        uint64_t ab = 0;
        uint32_t p;

        for (p = 0; p < MPART; p++) {
                const struct dedup_counts *k = dedup_tracker_part_counts(r->tr,
                                                                         p);
                if (k->anomalies[DEDUP_KIND_TORN] != c->torn[p])
                        fail_msg(
                            "%s: part %u torn %llu, want %llu", c->what, p,
                            (unsigned long long)k->anomalies[DEDUP_KIND_TORN],
                            (unsigned long long)c->torn[p]);
                ab += k->anomalies[DEDUP_KIND_ABORTED_READ];
        }
        if (ab != c->aborted_read || r->torn_events != c->torn_events ||
            dedup_txn_pending(r->tr) != c->pending || (c->ev.set && !r->found))
                fail_msg("%s: aborted_read %llu (want %llu), torn events %zu "
                         "(want %zu), pending %zu (want %zu), event %s",
                         c->what, (unsigned long long)ab,
                         (unsigned long long)c->aborted_read, r->torn_events,
                         c->torn_events, dedup_txn_pending(r->tr), c->pending,
                         c->ev.set && !r->found ? "missing" : "ok");
}

static void test_cases(void **state)
{
        size_t i, j;

        (void)state;
        for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const struct txn_case *c = &cases[i];
                struct run r;

                memset(&r, 0, sizeof(r));
                r.tr = tracker_new(c->max_pending);
                /* Events stay until the end, as they do until a commit
                 * (so that consecutive aborted reads coalesce). */
                for (j = 0; j < 12 && c->s[j].op != END; j++)
                        step_run(&r, &c->s[j]);
                events_scan(&r, &c->ev);
                case_check(c, &r);
                assert_false(dedup_tracker_failed(r.tr));
                dedup_tracker_free(r.tr);
        }
}

/* ------------------------------------------------------------------ */
/* Persistence: dirty walk, restore                                    */
/* ------------------------------------------------------------------ */

struct saved {
        char producer[16];
        struct dedup_txn_view v;
        struct dedup_txn_slot slots[NPARTS];
};

struct store {
        struct saved rows[16];
        size_t n;
        size_t removed;
};

static int store_put(void *opaque, const struct dedup_txn_view *v)
{
        struct store *s = opaque;
        size_t i;

        for (i = 0; i < s->n; i++)
                if (s->rows[i].v.epoch == v->epoch &&
                    s->rows[i].v.txn == v->txn &&
                    !memcmp(s->rows[i].producer, v->producer, v->producer_len))
                        break;
        if (v->removed) {
                assert_true(i < s->n); /* only what was stored is removed */
                s->rows[i] = s->rows[--s->n];
                s->removed++;
                return 0;
        }
        if (i == s->n)
                s->n++;
        assert_true(v->producer_len < sizeof(s->rows[i].producer));
        assert_true(v->nslots <= NPARTS);
        memset(&s->rows[i], 0, sizeof(s->rows[i]));
        memcpy(s->rows[i].producer, v->producer, v->producer_len);
        s->rows[i].v = *v;
        s->rows[i].v.producer = s->rows[i].producer;
        if (v->nslots)
                memcpy(s->rows[i].slots, v->slots,
                       v->nslots * sizeof(*v->slots));
        s->rows[i].v.slots = s->rows[i].slots;
        return 0;
}

static void store_commit(struct store *s, struct dedup_tracker *tr)
{
        assert_int_equal(dedup_txn_dirty_foreach(tr, store_put, s), 0);
        dedup_tracker_dirty_clear(tr);
        dedup_tracker_events_clear(tr);
}

static void test_restore(void **state)
{
        static const struct step before[] = {
            /* txn 1: 2 of 3 records seen, manifest seen: pending */
            {REC, 0, "p", 0, 1, T0, 10, {0}, {{0}}, 0, 0},
            {REC, 1, "p", 0, 1, T0, 20, {0}, {{0}}, 0, 0},
            {MAN, MPART, "p", 0, 1, T0, 7, {2, 1, 0}, {{0, 5}}, 1, 0},
            /* txn 2: complete in this batch: never stored */
            {REC, 2, "p", 0, 2, T0, 30, {0}, {{0}}, 0, 0},
            {MAN, MPART, "p", 0, 2, T0, 8, {0, 0, 1}, {{0}}, 0, 0},
        };
        struct store s;
        struct run r;
        struct dedup_tracker *tr2;
        const struct dedup_counts *k;
        struct dedup_hdrs h;
        size_t i;

        (void)state;
        memset(&s, 0, sizeof(s));
        memset(&r, 0, sizeof(r));
        r.tr = tracker_new(0);
        for (i = 0; i < sizeof(before) / sizeof(before[0]); i++)
                step_run(&r, &before[i]);
        store_commit(&s, r.tr);
        /* Stored: txn 1 and the tombstone of txn 5; txn 2 is complete, a
         * tombstone in memory only. */
        assert_int_equal(s.n, 2);
        assert_int_equal(dedup_txn_pending(r.tr), 1);
        assert_int_equal(dedup_txn_tombstones(r.tr), 2);

        /* A new tracker from the store (tombstone and pending alike). */
        tr2 = tracker_new(0);
        for (i = 0; i < s.n; i++)
                assert_int_equal(dedup_txn_restore(tr2, &s.rows[i].v), 0);
        assert_int_equal(dedup_txn_pending(tr2), 1);
        assert_int_equal(dedup_txn_tombstones(tr2), 1);
        dedup_tracker_free(r.tr);
        r.tr = tr2;
        memset(r.next_off, 0, sizeof(r.next_off));
        r.next_off[0] = 11;

        /* The last record of txn 1 completes it: removed from the store. */
        {
                static const struct step last = {REC, 0,   "p",   0, 1, T0,
                                                 11,  {0}, {{0}}, 0, 0};
                step_run(&r, &last);
        }
        store_commit(&s, r.tr);
        assert_int_equal(s.removed, 1);
        assert_int_equal(s.n, 1);

        /* A record of the aborted txn 5 is still an aborted read. */
        {
                static const struct step ab = {REC, 1,   "p",   0, 5, T0,
                                               21,  {0}, {{0}}, 0, 1};
                step_run(&r, &ab);
        }
        k = dedup_tracker_part_counts(r.tr, 1);
        assert_int_equal(k->anomalies[DEDUP_KIND_ABORTED_READ], 1);
        dedup_tracker_confirm_all(r.tr);
        k = dedup_tracker_part_counts(r.tr, 0);
        assert_int_equal(k->anomalies[DEDUP_KIND_TORN], 0);
        store_commit(&s, r.tr);
        assert_int_equal(s.n, 0);
        assert_int_equal(dedup_txn_pending(r.tr), 0);
        assert_int_equal(dedup_txn_tombstones(r.tr), 0);

        /* eos.txn: an invalid value makes a record malformed. */
        dedup_hdrs_init(&h);
        dedup_hdrs_feed(&h, "eos.producer", 12, "p", 1);
        dedup_hdrs_feed(&h, "eos.epoch", 9, "0", 1);
        dedup_hdrs_feed(&h, "eos.seq", 7, "0", 1);
        dedup_hdrs_feed(&h, "eos.txn", 7, "-1", 2);
        assert_int_equal(dedup_hdrs_status(&h), DEDUP_HDR_MALFORMED);
        assert_true(h.bad & DEDUP_HDR_TXN);
        assert_string_equal(dedup_kind_name(DEDUP_KIND_TORN), "torn");
        assert_string_equal(dedup_kind_name(DEDUP_KIND_ABORTED_READ),
                            "aborted_read");
        dedup_tracker_free(r.tr);
}

/* ------------------------------------------------------------------ */
/* The ledger: pending transactions survive a restart                  */
/* ------------------------------------------------------------------ */

static const char *const topics[NPARTS] = {"orders", "orders", "payments",
                                           "manifests"};

static void parts_init(struct ledger_part *lp)
{
        uint32_t i;

        for (i = 0; i < NPARTS; i++) {
                memset(&lp[i], 0, sizeof(lp[i]));
                lp[i].topic = topics[i];
                lp[i].partition = i == 1 ? 1 : 0;
                lp[i].part = i;
                lp[i].next_offset = -1;
                lp[i].coverage_lo = lp[i].coverage_hi = -1;
        }
}

/* A new tracker and ledger handle, with what the ledger holds loaded. */
static struct dedup_tracker *reopen(const char *path, struct ledger **lg,
                                    struct ledger_part *lp)
{
        struct dedup_tracker *tr = tracker_new(0);
        char err[256];

        parts_init(lp);
        if (ledger_open(lg, path, err, sizeof(err)) ||
            ledger_load(*lg, tr, lp, NPARTS, err, sizeof(err)) ||
            ledger_txns_load(*lg, tr, lp, NPARTS, err, sizeof(err)))
                fail_msg("%s", err);
        return tr;
}

static void commit(struct ledger *lg, struct dedup_tracker *tr,
                   struct ledger_part *lp)
{
        char err[256];
        uint32_t i;

        for (i = 0; i < NPARTS; i++) {
                lp[i].next_offset = 100;
                lp[i].dirty = 1;
        }
        if (ledger_commit(lg, tr, lp, NPARTS, NULL, err, sizeof(err)))
                fail_msg("%s", err);
}

static void test_ledger_restart(void **state)
{
        static const struct step before[] = {
            /* txn 1: manifest (orders/1: 2, payments/0: 1), 1 + 1 seen */
            {REC, 1, "p", 3, 1, T0, 10, {0}, {{0}}, 0, 0},
            {REC, 2, "p", 3, 1, T0, 20, {0}, {{0}}, 0, 0},
            {MAN, MPART, "p", 3, 1, T0, 7, {0, 2, 1}, {{3, 9}}, 1, 0},
            /* txn 2: no manifest yet */
            {REC, 0, "p", 3, 2, T0, 30, {0}, {{0}}, 0, 0},
        };
        static const struct step after[] = {
            {REC, 1, "p", 3, 1, T0, 11, {0}, {{0}}, 0, 0}, /* completes 1 */
            {REC, 0, "p", 3, 9, T0, 31, {0}, {{0}}, 0, 1}, /* aborted 9 */
            {MAN, MPART, "p", 3, 2, T0, 8, {1, 0, 0}, {{0}}, 0, 0},
        };
        char path[] = "/tmp/eosaudit-txn-XXXXXX";
        char db[64];
        struct ledger_part lp[NPARTS];
        struct ledger *lg;
        struct run r;
        size_t i;
        int fd;

        (void)state;
        fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        unlink(path);
        snprintf(db, sizeof(db), "%s.db", path);

        memset(&r, 0, sizeof(r));
        r.tr = reopen(db, &lg, lp);
        for (i = 0; i < sizeof(before) / sizeof(before[0]); i++)
                step_run(&r, &before[i]);
        commit(lg, r.tr, lp);
        assert_int_equal(dedup_txn_pending(r.tr), 2);
        ledger_close(lg);
        dedup_tracker_free(r.tr);

        /* A restart, then the end of a scan at once: what is stored is
         * exactly what was pending - txn 1 short by one on orders/1 (its
         * manifest at offset 7), txn 2 with one record and no manifest.
         * Not committed: the ledger keeps them. */
        r.tr = reopen(db, &lg, lp);
        dedup_tracker_confirm_all(r.tr);
        {
                const struct dedup_event *ev;
                size_t nev, k, seen = 0;
                ev = dedup_tracker_events(r.tr, &nev);
                for (k = 0; k < nev; k++) {
                        assert_int_equal(ev[k].kind, DEDUP_KIND_TORN);
                        if (ev[k].seq_lo == 1) {
                                assert_int_equal(ev[k].part, 1);
                                assert_int_equal(ev[k].count, 1);
                                assert_int_equal(ev[k].offset_lo, 10);
                                assert_int_equal(ev[k].first_offset, 7);
                                assert_int_equal(ev[k].first_part, MPART);
                        } else {
                                assert_int_equal(ev[k].seq_lo, 2);
                                assert_int_equal(ev[k].part, 0);
                                assert_int_equal(ev[k].offset_hi, 30);
                        }
                        seen++;
                }
                assert_int_equal(seen, 2);
        }
        ledger_close(lg);
        dedup_tracker_free(r.tr);

        /* Again: txn 1, txn 2 and the tombstone of txn 9 come back. */
        r.tr = reopen(db, &lg, lp);
        assert_int_equal(dedup_txn_pending(r.tr), 2);
        assert_int_equal(dedup_txn_tombstones(r.tr), 1);
        for (i = 0; i < sizeof(after) / sizeof(after[0]); i++)
                step_run(&r, &after[i]);
        dedup_tracker_confirm_all(r.tr);
        for (i = 0; i < NPARTS; i++)
                assert_int_equal(dedup_tracker_part_counts(r.tr, (uint32_t)i)
                                     ->anomalies[DEDUP_KIND_TORN],
                                 0);
        assert_int_equal(dedup_tracker_part_counts(r.tr, 0)
                             ->anomalies[DEDUP_KIND_ABORTED_READ],
                         1);
        commit(lg, r.tr, lp);
        ledger_close(lg);
        dedup_tracker_free(r.tr);

        /* Nothing is left pending in the ledger. */
        r.tr = reopen(db, &lg, lp);
        assert_int_equal(dedup_txn_pending(r.tr), 0);
        assert_int_equal(dedup_txn_tombstones(r.tr), 0);
        /* The counters were stored with the partition. */
        assert_int_equal(dedup_tracker_part_counts(r.tr, 0)
                             ->anomalies[DEDUP_KIND_ABORTED_READ],
                         1);
        ledger_close(lg);
        dedup_tracker_free(r.tr);
        ledger_remove(db);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cases),
            cmocka_unit_test(test_restore),
            cmocka_unit_test(test_ledger_restart),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
