/*
 * text.c - the reports for a terminal: an anomaly as one line (the live
 * lines of serve and demo, and scan's examples) and scan's human report.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../../base/hex.h"
#include "internal.h"

/* A message id for a terminal: 'text' when every byte is printable
 * ASCII, else 0x and hex; "..." after it when only its start was kept. */
static void report_id_text(char *buf, size_t size,
                           const struct ledger_anomaly *a)
{
        const unsigned char *u = a->msgid;
        size_t n = a->msgid_stored < DEDUP_ID_EVIDENCE_MAX
                       ? a->msgid_stored
                       : DEDUP_ID_EVIDENCE_MAX;
        const char *more = a->msgid_len > (int64_t)n ? "..." : "";
        char hex[DEDUP_ID_EVIDENCE_MAX * 2 + 1];
        size_t i;

        for (i = 0; i < n && u[i] >= 0x20 && u[i] < 0x7f; i++)
                ;
        if (i == n) {
                snprintf(buf, size, "'%.*s'%s", (int)n, (const char *)u, more);
                return;
        }
        hex_encode(hex, u, n);
        snprintf(buf, size, "0x%s%s", hex, more);
}

/* "offset 7" or "offsets 7..9". */
static void report_offsets_text(char *buf, size_t size, int64_t lo, int64_t hi)
{
        if (hi > lo)
                snprintf(buf, size, "offsets %lld..%lld", (long long)lo,
                         (long long)hi);
        else
                snprintf(buf, size, "offset %lld", (long long)lo);
}

/* Where a redelivered anomaly's first copies are, and their id:
 * " are copies of partition 1 offsets 7..9, id 'x'". */
static void report_copies_text(char *buf, size_t size,
                               const struct ledger_anomaly *a)
{
        char id[DEDUP_ID_EVIDENCE_MAX * 2 + 16] = "", first[64] = "";
        char where[96];
        int many = a->offset_hi > a->offset_lo;

        if (a->first_offset >= 0)
                report_offsets_text(first, sizeof(first), a->first_offset,
                                    a->first_offset_hi > a->first_offset
                                        ? a->first_offset_hi
                                        : a->first_offset);
        if (a->first_offset >= 0 && a->first_partition >= 0)
                snprintf(where, sizeof(where), "partition %d %s",
                         (int)a->first_partition, first);
        else if (a->first_offset >= 0)
                snprintf(where, sizeof(where), "%s", first);
        else
                snprintf(where, sizeof(where), "%s",
                         many ? "earlier records" : "an earlier record");
        if (a->msgid && a->msgid_len >= 0) {
                char text[DEDUP_ID_EVIDENCE_MAX * 2 + 8];

                report_id_text(text, sizeof(text), a);
                snprintf(id, sizeof(id), ", id %s", text);
        }
        snprintf(buf, size, " %s %s%s",
                 many ? "are copies of" : "is a copy of", where, id);
}

int report_event_format(const struct ledger_anomaly *a, char *buf, size_t size)
{
        char who[DEDUP_PRODUCER_MAX * 3 + 32] = "", seq[64] = "";
        char epoch[32] = "";
        char at[64], evidence[DEDUP_ID_EVIDENCE_MAX * 2 + 160] = "";
        const char *what = !strcmp(a->kind, "gap") ? "missing" : "count";
        int lossy;

        if (a->producer) {
                json_t *name = report_bytes_json(a->producer, a->producer_len,
                                                 &lossy);
                snprintf(who, sizeof(who), " producer '%s'",
                         name ? json_string_value(name) : "?");
                json_decref(name);
        }
        int txn = !strcmp(a->kind, "torn") || !strcmp(a->kind, "aborted_read");

        if (txn && a->seq_lo >= 0) /* the transaction's ordinal */
                snprintf(seq, sizeof(seq), " txn %lld", (long long)a->seq_lo);
        else if (a->seq_lo >= 0 && a->seq_hi > a->seq_lo)
                snprintf(seq, sizeof(seq), " seq %lld..%lld",
                         (long long)a->seq_lo, (long long)a->seq_hi);
        else if (a->seq_lo >= 0)
                snprintf(seq, sizeof(seq), " seq %lld", (long long)a->seq_lo);
        report_offsets_text(at, sizeof(at), a->offset_lo, a->offset_hi);
        if (!strcmp(a->kind, "redelivered"))
                report_copies_text(evidence, sizeof(evidence), a);
        else if (a->reason)
                snprintf(evidence, sizeof(evidence),
                         " (%s: not the log audited before, whose last "
                         "audited record was offset %lld; incarnation %lld "
                         "audited from the log start)",
                         a->reason, (long long)a->first_offset,
                         (long long)a->incarnation);
        else if (!strcmp(a->kind, "fenced") && a->first_offset >= 0 &&
                 a->first_partition >= 0)
                snprintf(evidence, sizeof(evidence),
                         " (its new session began at partition %d offset "
                         "%lld)",
                         (int)a->first_partition, (long long)a->first_offset);
        else if (!strcmp(a->kind, "fenced") && a->first_offset >= 0)
                snprintf(evidence, sizeof(evidence),
                         " (its new session began at offset %lld)",
                         (long long)a->first_offset);
        else if (!strcmp(a->kind, "out_of_order") && a->first_offset >= 0)
                snprintf(evidence, sizeof(evidence),
                         " (recovered: its gap, opened at offset %lld, had "
                         "been confirmed)",
                         (long long)a->first_offset);
        else if (!strcmp(a->kind, "torn") && a->first_offset >= 0) {
                /* Short of what its manifest lists; the manifest is in the
                 * manifest topic. */
                char part[32] = "";
                if (a->first_partition >= 0)
                        snprintf(part, sizeof(part), " partition %d",
                                 (int)a->first_partition);
                snprintf(evidence, sizeof(evidence),
                         " (manifest at%s offset %lld)", part,
                         (long long)a->first_offset);
                what = "missing";
        } else if (!strcmp(a->kind, "torn"))
                snprintf(evidence, sizeof(evidence), " (no manifest)");
        else if (a->first_offset >= 0 && a->first_partition >= 0)
                snprintf(evidence, sizeof(evidence),
                         " (first copy at partition %d offset %lld)",
                         (int)a->first_partition, (long long)a->first_offset);
        else if (a->first_offset >= 0)
                snprintf(evidence, sizeof(evidence),
                         " (first copy at offset %lld)",
                         (long long)a->first_offset);
        if (a->epoch >= 0)
                snprintf(epoch, sizeof(epoch), " epoch %d", (int)a->epoch);
        return snprintf(buf, size, "%-12s %s [%d]%s%s%s %s%s, %s %llu",
                        a->kind, a->topic, (int)a->partition, who, epoch, seq,
                        at, evidence, what, (unsigned long long)a->count);
}

/* The redelivered line, and the id window's when ids were checked. */
static void print_redelivered_counts(FILE *f, const struct ledger_summary *s)
{
        char when[32] = "";
        time_t t;
        struct tm tm;

        if (!s->ids_checked) {
                fprintf(f,
                        "  redelivered    %llu records (no message id "
                        "checked)\n",
                        (unsigned long long)
                            s->anomalies[DEDUP_KIND_REDELIVERED]);
                return;
        }
        fprintf(f,
                "  redelivered    %llu records (%llu message ids "
                "checked)\n",
                (unsigned long long)s->anomalies[DEDUP_KIND_REDELIVERED],
                (unsigned long long)s->ids_checked);
        t = (time_t)(s->window_oldest_ms / 1000);
        if (s->window_oldest_ms >= 0 && gmtime_r(&t, &tm))
                strftime(when, sizeof(when), ", since %Y-%m-%dT%H:%M:%SZ",
                         &tm);
        fprintf(f, "  id window      %llu ids in %u generation%s%s\n",
                (unsigned long long)s->window_ids, s->window_gens,
                s->window_gens == 1 ? "" : "s", when);
}

/* The line of what this run added, after the totals. */
static void print_new(FILE *f, const struct ledger_summary *d)
{
        uint64_t bad = report_anomaly_total(d);
        int k, sep = 0;

        if (!d->records && !bad && !d->missing) {
                fprintf(f, "  since last run nothing new (0 records)\n");
                return;
        }
        fprintf(f, "  since last run %llu records, %llu anomalies",
                (unsigned long long)d->records, (unsigned long long)bad);
        for (k = 0; k < DEDUP_KIND__ANOMALY_CNT; k++) {
                if (!d->anomalies[k])
                        continue;
                fprintf(f, "%s%s %llu", sep ? ", " : " (", report_kind_at(k),
                        (unsigned long long)d->anomalies[k]);
                sep = 1;
        }
        if (d->coverage_gaps) {
                fprintf(f, "%scoverage %llu", sep ? ", " : " (",
                        (unsigned long long)d->coverage_gaps);
                sep = 1;
        }
        fprintf(f, "%s\n", sep ? ")" : "");
}

static const char *print_verdict(enum report_verdict v)
{
        switch (v) {
        case REPORT_ANOMALIES:
                return "ANOMALIES FOUND";
        case REPORT_NOT_AUDITED:
                return "NOT AUDITED (no record carries the eos.* headers and "
                       "no message id was checked: nothing is known either "
                       "way)";
        case REPORT_CLEAN:
                break;
        }
        return "clean";
}

/* report_latest()'s callback: each anomaly as a line, with the kcat
 * commands that fetch it and its first copy. */
struct print_walk {
        FILE *f;
        const char *brokers;
};

static int print_walk_cb(void *opaque, const struct ledger_anomaly *a)
{
        struct print_walk *w = opaque;
        char line[REPORT_EVENT_MAX], cmd[REPORT_KCAT_MAX];

        report_event_format(a, line, sizeof(line));
        fprintf(w->f, "    %s\n", line);
        if (!report_kcat_format(a, w->brokers, 0, cmd, sizeof(cmd)))
                fprintf(w->f, "        fetch: %s\n", cmd);
        if (!report_kcat_format(a, w->brokers, 1, cmd, sizeof(cmd)))
                fprintf(w->f, "        first: %s\n", cmd);
        return 0;
}

int report_summary_print(FILE *f, struct ledger *lg, const char *const *topics,
                         size_t n, const struct report_opts *o, char *errstr,
                         size_t errstr_size)
{
        enum report_verdict fv = REPORT_CLEAN;
        size_t i;

        if (o->sinks && report_flow_verdict_get(lg, &fv, errstr, errstr_size))
                return -1;
        for (i = 0; i < n; i++) {
                struct ledger_summary s;
                enum report_verdict v;
                char warn[256];
                if (ledger_summary(lg, topics[i], &s, errstr, errstr_size))
                        return -1;
                v = report_verdict(&s);
                if (i < o->sinks)
                        v = report_sink_verdict(v, fv);
                fprintf(f, "topic %s: %u partitions%s\n", topics[i],
                        s.partitions,
                        i < o->sinks ? " (a flow's sink: judged by lineage, "
                                       "see \"flow\" below)"
                                     : "");
                fprintf(f, "  records        %llu (untracked %llu)\n",
                        (unsigned long long)s.records,
                        (unsigned long long)s.untracked);
                report_untracked_text(&s, warn, sizeof(warn));
                if (warn[0] && i >= o->sinks)
                        fprintf(f, "  WARNING        %s\n", warn);
                fprintf(f,
                        "  producers      %llu on %llu (partition, "
                        "producer) pairs",
                        (unsigned long long)s.producers,
                        (unsigned long long)s.pairs);
                if (s.topic_streams)
                        fprintf(f, " and %llu topic stream%s",
                                (unsigned long long)s.topic_streams,
                                s.topic_streams == 1 ? "" : "s");
                fprintf(f, "\n");
                fprintf(f, "  duplicate      %llu records\n",
                        (unsigned long long)s.anomalies[DEDUP_KIND_DUPLICATE]);
                fprintf(f, "  gap            %llu (%llu records missing",
                        (unsigned long long)s.anomalies[DEDUP_KIND_GAP],
                        (unsigned long long)s.missing);
                if (s.recovered)
                        fprintf(f, ", %llu more came later",
                                (unsigned long long)s.recovered);
                fprintf(f, ")\n");
                fprintf(f, "  out_of_order   %llu records\n",
                        (unsigned long long)
                            s.anomalies[DEDUP_KIND_OUT_OF_ORDER]);
                fprintf(f, "  fenced         %llu records\n",
                        (unsigned long long)s.anomalies[DEDUP_KIND_FENCED]);
                fprintf(f, "  malformed      %llu records\n",
                        (unsigned long long)s.anomalies[DEDUP_KIND_MALFORMED]);
                print_redelivered_counts(f, &s);
                fprintf(f,
                        "  torn           %llu (transaction, partition)s "
                        "short of their manifest\n",
                        (unsigned long long)s.anomalies[DEDUP_KIND_TORN]);
                fprintf(f, "  aborted_read   %llu records\n",
                        (unsigned long long)
                            s.anomalies[DEDUP_KIND_ABORTED_READ]);
                if (s.open_gaps)
                        fprintf(f,
                                "  open gaps      %llu (not confirmed yet)\n",
                                (unsigned long long)s.open_gaps);
                if (s.coverage_gaps)
                        fprintf(f,
                                "  coverage gaps  %llu (%llu offsets "
                                "deleted before they were audited)\n",
                                (unsigned long long)s.coverage_gaps,
                                (unsigned long long)s.coverage_records);
                if (s.unknown)
                        fprintf(f,
                                "  unknown        %llu records of gaps "
                                "open across a coverage gap: maybe "
                                "deleted, maybe lost\n",
                                (unsigned long long)s.unknown);
                if (o->prev && o->prev[i].partitions > 0) {
                        struct ledger_summary d;
                        report_delta(&s, &o->prev[i], &d);
                        print_new(f, &d);
                }
                fprintf(f, "  verdict        %s\n", print_verdict(v));
                if (v == REPORT_ANOMALIES && o->examples > 0) {
                        struct print_walk w = {.f = f, .brokers = o->brokers};
                        fprintf(f,
                                "  latest anomalies (the newest %d of each "
                                "kind):\n",
                                o->examples);
                        if (report_latest(lg, topics[i], o->examples,
                                          print_walk_cb, &w, errstr,
                                          errstr_size))
                                return -1;
                }
        }
        return 0;
}
