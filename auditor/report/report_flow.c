/*
 * report_flow.c - see report_flow.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../base/hex.h"
#include "internal.h"

static json_t *where_json(const char *topic, int32_t partition, int64_t offset,
                          int64_t ts)
{
        if (!topic)
                return json_null();
        return json_pack("{s:s, s:i, s:I, s:o}", "topic", topic, "partition",
                         (int)partition, "offset", (json_int_t)offset,
                         "timestamp", report_opt_json(ts));
}

json_t *report_flow_row_json(const struct ledger_flow_row *r)
{
        json_t *o, *sink;
        int lossy = 0;

        if (r->copies && r->sink_topic) {
                sink = json_pack("{s:s, s:i, s:I, s:s?, s:i, s:I, s:I, s:o}",
                                 "topic", r->sink_topic, "partition",
                                 (int)r->sink_partition, "offset",
                                 (json_int_t)r->sink_offset, "last_topic",
                                 r->sink_topic_last, "last_partition",
                                 (int)r->sink_partition_last, "last_offset",
                                 (json_int_t)r->sink_offset_last, "copies",
                                 (json_int_t)r->copies, "timestamp",
                                 report_opt_json(r->sink_ts));
        } else {
                sink = json_null();
        }
        o = json_pack("{s:s, s:o, s:I, s:o, s:o, s:b}", "outcome", r->outcome,
                      "id",
                      report_bytes_json(r->id ? r->id : "", r->id_stored,
                                        &lossy),
                      "id_len", (json_int_t)r->id_len, "source",
                      where_json(r->src_topic, r->src_partition, r->src_offset,
                                 r->src_ts),
                      "sink", sink, "retired", !r->live);
        if (o && lossy) {
                char hex[2 * DEDUP_FLOW_ID_KEEP + 1];
                hex_encode(hex, r->id,
                           r->id_stored < DEDUP_FLOW_ID_KEEP
                               ? r->id_stored
                               : DEDUP_FLOW_ID_KEEP);
                json_object_set_new(o, "id_hex", json_string(hex));
        }
        return o;
}

struct ev_ctx {
        json_t *arr;
        FILE *f;
        int64_t left;
        int more;
};

static int ev_json_cb(void *opaque, const struct ledger_flow_row *r)
{
        struct ev_ctx *c = opaque;
        json_t *o;

        if (c->left == 0) {
                c->more = 1;
                return 1;
        }
        o = report_flow_row_json(r);
        if (!o || json_array_append_new(c->arr, o))
                return -1;
        if (c->left > 0)
                c->left--;
        return 0;
}

json_t *report_flow_summary_json(const struct ledger_flow_summary *sp)
{
        const struct ledger_flow_summary s = *sp;

        return json_pack(
            "{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
            "s:o, s:o, s:{s:o, s:o, s:o, s:o}, s:o}",
            "expect", s.present ? s.expect : "exactly-one", "source_records",
            report_u64_json(s.source_records), "delivered",
            report_u64_json(s.delivered), "lost", report_u64_json(s.lost),
            "duplicated", report_u64_json(s.duplicated), "duplicate_copies",
            report_u64_json(s.duplicate_copies), "unexpected",
            report_u64_json(s.unexpected), "pending",
            report_u64_json(s.pending), "awaiting_source",
            report_u64_json(s.awaiting), "source_repeats",
            report_u64_json(s.source_repeats), "source_without_id",
            report_u64_json(s.source_no_id), "sink_without_id",
            report_u64_json(s.sink_no_id), "sink_records",
            report_u64_json(s.sink_records), "outstanding_ids",
            report_u64_json(s.live), "latency_ms", "count",
            report_u64_json(s.lat_count), "p50", report_opt_json(s.lat_p50_ms),
            "p99", report_opt_json(s.lat_p99_ms), "max",
            report_opt_json(s.lat_max_ms), "updated_ms",
            report_opt_json(s.present ? s.updated_ms : -1));
}

json_t *report_flow_json(struct ledger *lg, int64_t evidence_limit,
                         char *errstr, size_t errstr_size)
{
        struct ledger_flow_summary s;
        struct ev_ctx c = {0};
        json_t *o;

        if (ledger_flow_summary(lg, &s, errstr, errstr_size))
                return NULL;
        c.arr = json_array();
        c.left = evidence_limit;
        if (!c.arr ||
            ledger_flow_evidence_foreach(
                lg, NULL, 0, evidence_limit < 0 ? -1 : evidence_limit + 1,
                ev_json_cb, &c, errstr, errstr_size)) {
                json_decref(c.arr);
                return NULL;
        }
        o = report_flow_summary_json(&s);
        if (!o) {
                json_decref(c.arr);
                snprintf(errstr, errstr_size, "out of memory");
                return NULL;
        }
        json_object_set_new(o, "evidence", c.arr);
        json_object_set_new(o, "evidence_truncated", json_boolean(c.more));
        return o;
}

static int ev_print_cb(void *opaque, const struct ledger_flow_row *r)
{
        struct ev_ctx *c = opaque;
        int n = (int)(r->id_stored < 64 ? r->id_stored : 64);

        if (c->left == 0) {
                c->more = 1;
                return 1;
        }
        if (c->left > 0)
                c->left--;
        fprintf(c->f, "    %-10s id '%.*s'%s", r->outcome, n,
                r->id ? (const char *)r->id : "",
                r->id_len > (int64_t)r->id_stored ? "..." : "");
        if (r->src_topic)
                fprintf(c->f, "  source %s [%d] @%" PRId64, r->src_topic,
                        (int)r->src_partition, r->src_offset);
        else
                fputs("  source: none", c->f);
        if (r->copies && r->sink_topic) {
                fprintf(c->f, "  sink %s [%d] @%" PRId64, r->sink_topic,
                        (int)r->sink_partition, r->sink_offset);
                if (r->copies > 1)
                        fprintf(c->f, " .. %s [%d] @%" PRId64 " (%u copies)",
                                r->sink_topic_last ? r->sink_topic_last : "?",
                                (int)r->sink_partition_last,
                                r->sink_offset_last, r->copies);
        } else {
                fputs("  sink: none", c->f);
        }
        fputc('\n', c->f);
        return 0;
}

int report_flow_print(FILE *f, struct ledger *lg, int64_t evidence_limit,
                      char *errstr, size_t errstr_size)
{
        struct ledger_flow_summary s;
        struct ev_ctx c = {0};

        if (ledger_flow_summary(lg, &s, errstr, errstr_size))
                return -1;
        fprintf(f,
                "\nflow (expect %s): %" PRIu64 " source records: %" PRIu64
                " delivered, %" PRIu64 " lost, %" PRIu64
                " duplicated (%" PRIu64 " extra copies), %" PRIu64
                " pending; %" PRIu64 " unexpected sink records, %" PRIu64
                " awaiting their source\n",
                s.present ? s.expect : "exactly-one", s.source_records,
                s.delivered, s.lost, s.duplicated, s.duplicate_copies,
                s.pending, s.unexpected, s.awaiting);
        if (s.source_no_id || s.sink_no_id)
                fprintf(f,
                        "  without an id (not in the flow audit): %" PRIu64
                        " source, %" PRIu64 " sink records\n",
                        s.source_no_id, s.sink_no_id);
        if (s.lat_count)
                fprintf(f,
                        "  end-to-end latency: p50 <= %" PRId64
                        " ms, p99 <= %" PRId64 " ms, max %" PRId64
                        " ms (%" PRIu64 " records)\n",
                        s.lat_p50_ms, s.lat_p99_ms, s.lat_max_ms, s.lat_count);
        if (!report_flow_bad(&s))
                return 0;
        c.f = f;
        c.left = evidence_limit;
        if (ledger_flow_evidence_foreach(
                lg, NULL, 0, evidence_limit < 0 ? -1 : evidence_limit + 1,
                ev_print_cb, &c, errstr, errstr_size))
                return -1;
        if (c.more)
                fputs("    ... (scan --json lists them all)\n", f);
        return 0;
}
