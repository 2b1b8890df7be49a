#!/usr/bin/env bash
# The flow audit on bad input and after a kill -9, on the real broker:
#   a source without ids             -> counted, and said on stderr
#   a processor group that does not exist -> all pending, said on stderr
#   sink ids never in the source     -> unexpected, exit 1
#   sinks read under read_uncommitted -> the aborted outputs are
#                                       duplicated (kcat agrees), and a warning
#   the auditor killed inside a ledger commit, then run again on its
#   ledger                           -> the same counts as a clean scan
#   the sink deleted and recreated, its records processed again into it
#   (same ledger)                    -> delivered, not duplicated
source "$(dirname "$0")/lib.sh"

source "$(dirname "$0")/flow_lib.sh"

process() {
        PROC_RC=0
        PROC_JSON="$("$EOSAUDIT" process -b "$BOOTSTRAP" --idle-exit-ms 4000 \
                -q "$@")" || PROC_RC=$?
        log "process $* -> exit $PROC_RC: $PROC_JSON"
}

N=2000

log "== a source without ids"
SRC="$(name noid-src)"; SINK="$(name noid-sink)"; G="$(name noid-g)"
create_topic "$SRC" 2
create_topic "$SINK" 2
produce -t "$SRC" --producer "$(name noid-p)" -n "$N" --msgid-from none
process --source "$SRC" --sink "$SINK" --group "$G"
assert_eq "process exit status" 0 "$PROC_RC"
scan_flow -t "$SINK" --source "$SRC" --processor-group "$G"
assert_f flow.source_without_id "$N"
assert_f flow.sink_without_id "$N"
assert_f flow.source_records 0
assert_true "said: no id to trace" grep -q "carries an id" "$IT_TMP/scan.err"

log "== a processor group that does not exist"
SRC="$(name nog-src)"; SINK="$(name nog-sink)"; G="$(name nog-g)"
create_topic "$SRC" 2
create_topic "$SINK" 2
produce -t "$SRC" --producer "$(name nog-p)" -n "$N"
process --source "$SRC" --sink "$SINK" --group "$G" --drop-every 10
DROPPED="$(json_get dropped "$PROC_JSON")"
assert_true "records dropped ($DROPPED)" test "$DROPPED" -gt 0
scan_flow -t "$SINK" --source "$SRC" --processor-group "$(name no-such-group)"
assert_eq "no group: scan exit status" 0 "$SCAN_RC"
assert_f flow.pending "$DROPPED"
assert_f flow.lost 0
assert_f flow.group_committed false
assert_true "said: the group has no committed offset" \
        grep -q "has no committed offset" "$IT_TMP/scan.err"
# The right group: exactly the dropped tenth is lost.
scan_flow -t "$SINK" --source "$SRC" --processor-group "$G"
assert_f flow.lost "$DROPPED"
assert_f flow.pending 0
assert_eq "right group: scan exit status" 1 "$SCAN_RC"

log "== sink ids that were never in the source"
produce -t "$SINK" --producer "$(name stranger)" -n 37
scan_flow -t "$SINK" --source "$SRC" --processor-group "$G"
assert_f flow.unexpected 37
assert_f flow.lost "$DROPPED"
assert_eq "stranger: scan exit status" 1 "$SCAN_RC"
U="$(evidence_count 'x["outcome"] == "unexpected" and x["source"] is None')"
assert_eq "evidence of every unexpected record" 37 "$U"

log "== sinks read under read_uncommitted"
SRC="$(name ru-src)"; SINK="$(name ru-sink)"; G="$(name ru-g)"
create_topic "$SRC" 2
create_topic "$SINK" 2
produce -t "$SRC" --producer "$(name ru-p)" -n "$N"
process --source "$SRC" --sink "$SINK" --group "$G" --batch 100 \
        --abort-every 4
ABORTED="$(json_get aborted "$PROC_JSON")"
assert_true "transactions aborted ($ABORTED)" test "$ABORTED" -gt 0
# kcat under read_uncommitted: ids with more than one copy in the sink.
ODUP="$(kcat -C -b "$BOOTSTRAP" -t "$SINK" -o beginning -e -J -q \
        -X isolation.level=read_uncommitted | python3 -c 'import collections, json, sys
c = collections.Counter()
for line in sys.stdin:
    m = json.loads(line)
    h = m.get("headers") or []
    d = dict(zip(h[0::2], h[1::2]))
    c[d.get("eos.msgid")] += 1
print(sum(1 for n in c.values() if n > 1))')"
scan_flow -t "$SINK" --source "$SRC" --processor-group "$G" \
        --isolation read_uncommitted
assert_true "aborted outputs seen ($ODUP ids)" test "$ODUP" -gt 0
assert_f flow.duplicated "$ODUP"
assert_f flow.lost 0
assert_true "said: read_uncommitted" grep -q "read_uncommitted" "$IT_TMP/scan.err"
scan_flow -t "$SINK" --source "$SRC" --processor-group "$G"
assert_f flow.duplicated 0
assert_f flow.delivered "$N"

log "== kill -9 inside a ledger commit, then the same ledger again"
SRC="$(name k9-src)"; SINK="$(name k9-sink)"; G="$(name k9-g)"
create_topic "$SRC" 3
create_topic "$SINK" 3
produce -t "$SRC" --producer "$(name k9-p)" -n 6000
process --source "$SRC" --sink "$SINK" --group "$G" --rekey --drop-every 9
scan_flow -t "$SINK" --source "$SRC" --processor-group "$G"
counts() {
        local k
        for k in source_records delivered lost duplicated unexpected pending; do
                printf '%s=%s ' "$k" "$(fget "flow.$k")"
        done
}
CLEAN="$(counts)"
assert_true "clean scan: lost = dropped ($CLEAN)" \
        test "$(fget flow.lost)" = "$(json_get dropped "$PROC_JSON")"
# A bound far below what is outstanding between the two topics: entries
# retired past it are revived from the ledger when their copy or source
# comes, so the counts are the clean scan's (the oracle: lost = dropped).
# The side that runs ahead is paused and resumed (a bare resume, no seek:
# librdkafka fetches from the offset after the last record delivered), so
# the same counts also say that no record was skipped around a pause.
scan_flow -t "$SINK" --source "$SRC" --processor-group "$G" \
        --flow-max-ids 100 --log-level debug
assert_eq "--flow-max-ids 100: counts = a clean scan's" "$CLEAN" "$(counts)"
HOLDS="$(grep -c 'flow: the .* run ahead of the .*: held' "$IT_TMP/scan.err" || true)"
assert_true "--flow-max-ids 100: pacing paused a side ($HOLDS times)" \
        test "$HOLDS" -ge 1
assert_f records_total $((6000 + 6000 - $(fget flow.lost)))
assert_true "--flow-max-ids 100: the lost are the retired ones, said once" \
        grep -q "lost or unexpected id(s) were retired past --flow-max-ids (100)" \
        "$IT_TMP/scan.err"
DB="$IT_TMP/k9.db"
# Each run dies inside its second commit (after the first has moved the
# ledger on), until a run finishes within one commit.
KILLS=0
for run in 1 2 3 4 5 6; do
        RC=0
        EOSAUDIT_FAILPOINT_COMMIT=2 "$EOSAUDIT" scan -b "$BOOTSTRAP" -q \
                --no-progress --db "$DB" --commit-records 500 -t "$SINK" \
                --source "$SRC" --processor-group "$G" \
                --flow-max-ids 100 >/dev/null 2>&1 ||
                RC=$?
        [ "$RC" = 137 ] || break
        KILLS=$((KILLS + 1))
done
assert_true "the auditor was killed inside a commit ($KILLS times)" \
        test "$KILLS" -ge 2
# (bounded as above: revivals committed, killed between, and resumed)
scan_flow --db "$DB" -t "$SINK" --source "$SRC" --processor-group "$G" \
        --flow-max-ids 100
AFTER="$(counts)"
assert_eq "counts after three kills = a clean scan's" "$CLEAN" "$AFTER"
assert_f records_total $((6000 + 6000 - $(fget flow.lost)))

log "== the sink recreated, the source processed again into it"
SRC="$(name re-src)"; SINK="$(name re-sink)"; DB="$IT_TMP/re.db"
create_topic "$SRC" 2
create_topic "$SINK" 2
produce -t "$SRC" --producer "$(name re-p)" -n "$N"
process --source "$SRC" --sink "$SINK" --group "$(name re-g1)"
scan_flow --db "$DB" -t "$SINK" --source "$SRC" \
        --processor-group "$(name re-g1)"
assert_f flow.delivered "$N"
out="$("$KAFKA_SH" tool -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
        org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" --delete --topic "$SINK" 2>&1)" ||
        die "cannot delete $SINK: $out"
for ((i = 0; i < 100; i++)); do
        kcat -b "$BOOTSTRAP" -L -t "$SINK" 2>/dev/null |
                grep -q "topic \"$SINK\" with 2 partitions" || break
        sleep 0.2
done
for ((i = 0; i < 50; i++)); do # creation fails while deletion goes on
        "$KAFKA_SH" topic "$SINK" 2 >/dev/null 2>&1 && break
        sleep 0.5
done
[ "$i" -lt 50 ] || die "cannot create $SINK again"
# More than before, so that the new sink's log runs past the ledger's
# offsets (where no topic id could be had, the fingerprint would see
# another record at the last audited one: "recreated" too).
produce -t "$SRC" --producer "$(name re-p2)" -n 100
process --source "$SRC" --sink "$SINK" --group "$(name re-g2)" --batch 50
scan_flow --db "$DB" -t "$SINK" --source "$SRC" \
        --processor-group "$(name re-g2)"
assert_true "said: the sink starts a new incarnation, $N deliveries kept" \
        grep -q "flow: topic '$SINK' starts incarnation 1: .*, $N delivered source record(s) keep it" \
        "$IT_TMP/scan.err"
assert_true "told by the sink's topic id (the source's unchanged)" \
        test "$(grep -c "was deleted and created again: its topic id is" "$IT_TMP/scan.err")/$(grep -c "topic '$SINK' was deleted and created again: its topic id is" "$IT_TMP/scan.err")" = 1/1
assert_f flow.delivered $((N + 100))
assert_f flow.duplicated 0
assert_f flow.lost 0
assert_f flow.unexpected 0
# Exit 1 from the incarnation's coverage events alone (one per partition),
# counted once, as for any recreated topic (t_66).
assert_f coverage_gaps 2
assert_eq "recreated sink: scan exit status (the coverage events)" 1 "$SCAN_RC"

log "== serve: a live flow, the processor running while serve audits it"
SRC="$(name live-src)"; SINK="$(name live-sink)"; G="$(name live-g)"
create_topic "$SRC" 3
create_topic "$SINK" 3
PORT=$((20000 + RANDOM % 20000))
bg_start SERVE "$EOSAUDIT" serve -b "$BOOTSTRAP" --db "$IT_TMP/live.db" \
        --listen "127.0.0.1:$PORT" -t "$SINK" --source "$SRC" \
        --processor-group "$G" >"$IT_TMP/serve.log" 2>&1
bg_start PROC "$EOSAUDIT" process -b "$BOOTSTRAP" -q --source "$SRC" \
        --sink "$SINK" --group "$G" --rekey --drop-every 11 --batch 50 \
        --idle-exit-ms 8000
produce -t "$SRC" --producer "$(name live-p)" -n 4000 --rate 2000
wait_pid "$PROC" 60
assert_eq "live processor exit status" 0 "$WAIT_RC"
# The oracle: source records at offset % 11 == 10.
WANT_LOST="$(kcat -C -b "$BOOTSTRAP" -t "$SRC" -o beginning -e -J -q |
        python3 -c 'import json, sys
print(sum(1 for l in sys.stdin if json.loads(l)["offset"] % 11 == 10))')"
GOT=""
for i in $(seq 1 60); do
        GOT="$(curl -sf "http://127.0.0.1:$PORT/api/v1/flows?limit=5" |
                python3 -c 'import json, sys
f = json.load(sys.stdin)["flow"] or {}
print(f.get("lost"), f.get("delivered"), f.get("pending"))' 2>/dev/null)"
        [ "$GOT" = "$WANT_LOST $((4000 - WANT_LOST)) 0" ] && break
        sleep 1
done
assert_eq "serve: /api/v1/flows lost delivered pending" \
        "$WANT_LOST $((4000 - WANT_LOST)) 0" "$GOT"
PAGE="$(curl -sf "http://127.0.0.1:$PORT/api/v1/flows?limit=5")"
assert_eq "serve: a page of 5 evidence items" 5 \
        "$(python3 -c 'import json,sys; print(len(json.loads(sys.argv[1])["evidence"]))' "$PAGE")"
CUR="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["next_cursor"])' "$PAGE")"
N2="$(curl -sf "http://127.0.0.1:$PORT/api/v1/flows?limit=1000&cursor=$CUR" |
        python3 -c 'import json,sys; print(len(json.load(sys.stdin)["evidence"]))')"
assert_eq "serve: the pages hold every lost record" "$WANT_LOST" "$((5 + N2))"
assert_true "serve: /metrics has eosaudit_flow_records_total" \
        sh -c "curl -sf http://127.0.0.1:$PORT/metrics | grep -qx 'eosaudit_flow_records_total{outcome=\"lost\"} $WANT_LOST'"
for i in $(seq 1 20); do
        grep -q "flow: $WANT_LOST lost, 0 duplicated, 0 unexpected" \
                "$IT_TMP/serve.log" && break
        sleep 0.5
done
assert_true "serve: says the flow lost records" \
        grep -q "flow: $WANT_LOST lost, 0 duplicated, 0 unexpected" \
        "$IT_TMP/serve.log"
assert_true "serve: the sink's forwarded headers raise no anomaly" \
        sh -c "! grep -v ' flow: ' '$IT_TMP/serve.log' |
               grep -qE 'duplicate|gap|out_of_order'"

# The latency histogram: one observation per delivered source record (the
# processor never duplicates here), cumulative up to +Inf.
metric() { # metric NAME: its value on serve's /metrics ("" when absent)
        curl -sf "http://127.0.0.1:$PORT/metrics" |
                awk -v n="$1" '$1 == n { print $2 }'
}
T_OBS=$SECONDS
curl -sf "http://127.0.0.1:$PORT/metrics" >"$IT_TMP/metrics.txt"
assert_true "serve: /metrics of a flow passes promtool check metrics" \
        promtool check metrics <"$IT_TMP/metrics.txt"
assert_eq "serve: latency histogram _count = delivered" \
        "$((4000 - WANT_LOST))" "$(metric eosaudit_flow_latency_seconds_count)"
assert_eq "serve: latency histogram le=+Inf = _count" \
        "$((4000 - WANT_LOST))" \
        "$(metric 'eosaudit_flow_latency_seconds_bucket{le="+Inf"}')"
assert_true "serve: latency _sum > 0" python3 -c \
        'import sys; sys.exit(not float(sys.argv[1]) > 0)' \
        "$(metric eosaudit_flow_latency_seconds_sum)"
# The summary judges the sink by lineage: lost records make it anomalies,
# and the source is reported as a topic of its own.
SUMV="$(curl -sf "http://127.0.0.1:$PORT/api/v1/summary" | python3 -c '
import json, sys
d = json.load(sys.stdin)
t = {x["topic"]: x for x in d["topics"]}
print(d["verdict"], t[sys.argv[1]]["judged_by"], t[sys.argv[1]]["verdict"],
      t[sys.argv[2]]["judged_by"])' "$SINK" "$SRC")"
assert_eq "serve: /api/v1/summary verdict, the sink's, the source's" \
        "anomalies lineage anomalies sequence" "$SUMV"

# The processor's lag: records written to the source after the processor
# stopped are above its group's committed offsets.  serve re-reads them
# every 2 s; the oracle is Kafka's own kafka-consumer-groups.
produce -t "$SRC" --producer "$(name live-p2)" -n 700
LAG=""
for i in $(seq 1 40); do
        LAG="$(metric eosaudit_flow_processor_lag_records)"
        [ "$LAG" = 700 ] && break
        sleep 0.5
done
ORACLE_LAG="$("$KAFKA_SH" tool \
        org.apache.kafka.tools.consumer.group.ConsumerGroupCommand \
        --bootstrap-server "$BOOTSTRAP" --describe --group "$G" 2>/dev/null |
        awk -v t="$SRC" '$2 == t && $6 ~ /^[0-9]+$/ { s += $6 } END { print s + 0 }')"
log "processor lag: /metrics $LAG, kafka-consumer-groups $ORACLE_LAG"
assert_eq "serve: processor lag = kafka-consumer-groups' LAG" "$ORACLE_LAG" "$LAG"
assert_eq "serve: processor lag = the records written after it stopped" 700 "$LAG"
log "the flow's metrics, summary and lag checks took $((SECONDS - T_OBS)) s"

finish
