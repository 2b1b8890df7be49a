#!/usr/bin/env bash
# The flow audit (scan --source) on the real broker, against the
# reference processor (eosaudit process) under its faults, each compared
# with an independent oracle: kcat reads both topics and counts ids.
#   A exactly-once, re-keyed, clean        -> nothing lost or duplicated
#   B exactly-once with a crash and aborts -> nothing lost or duplicated
#   C a lossy processor (--drop-every 7)   -> exactly the dropped are lost
#   D at-least-once with a crash           -> exactly the replayed copies
source "$(dirname "$0")/lib.sh"

source "$(dirname "$0")/flow_lib.sh"

# flow_oracle SOURCE SINK [DROP]: reads both topics (read_committed) and
# prints "sources delivered lost duplicated extra unexpected dropped":
# counts over eos.msgid, the id both sides carry; dropped = source records
# whose offset % DROP == DROP - 1 (0 without DROP).
flow_oracle() {
        local drop="${3:-0}"
        { kcat -C -b "$BOOTSTRAP" -t "$1" -o beginning -e -J -q |
                sed 's/^/S /'
          kcat -C -b "$BOOTSTRAP" -t "$2" -o beginning -e -J -q |
                sed 's/^/K /'; } |
                python3 -c 'import collections, json, sys
drop = int(sys.argv[1])
src, sink = set(), collections.Counter()
dropped = 0
for line in sys.stdin:
    side, js = line[0], line[2:]
    m = json.loads(js)
    h = m.get("headers") or []
    d = dict(zip(h[0::2], h[1::2]))
    i = d.get("eos.msgid")
    if side == "S":
        if drop and m["offset"] % drop == drop - 1:
            dropped += 1
        if i:
            src.add(i)
    elif i:
        sink[i] += 1
lost = sum(1 for i in src if sink[i] == 0)
dup = sum(1 for i in src if sink[i] > 1)
extra = sum(sink[i] - 1 for i in src if sink[i] > 1)
unexp = sum(n for i, n in sink.items() if i not in src)
print(len(src), len(src) - lost - dup, lost, dup, extra, unexp, dropped)' "$drop"
}

# process ARGS...: eosaudit process until idle; sets PROC_JSON, PROC_RC.
process() {
        PROC_RC=0
        PROC_JSON="$("$EOSAUDIT" process -b "$BOOTSTRAP" --idle-exit-ms 4000 \
                -q "$@")" || PROC_RC=$?
        log "process $* -> exit $PROC_RC"
        log "  $PROC_JSON"
}

# flow_case NAME PARTS_SRC PARTS_SINK N PROCESS_ARGS...: fresh topics,
# N source records, the processor, the oracle and the scan.
flow_case() {
        local tag="$1" ps="$2" pk="$3" n="$4"
        shift 4
        SRC="$(name "$tag-src")"
        SINK="$(name "$tag-sink")"
        GROUP="$(name "$tag-group")"
        create_topic "$SRC" "$ps"
        create_topic "$SINK" "$pk"
        produce -t "$SRC" --producer "$(name "$tag-p")" -n "$n"
        assert_eq "$tag: produce exit status" 0 "$PROD_RC"
        process --source "$SRC" --sink "$SINK" --group "$GROUP" "$@"
        assert_eq "$tag: process exit status" 0 "$PROC_RC"
        read -r O_SRC O_DEL O_LOST O_DUP O_EXTRA O_UNEXP O_DROP < <(
                flow_oracle "$SRC" "$SINK" "${DROP:-0}")
        log "oracle: sources=$O_SRC delivered=$O_DEL lost=$O_LOST" \
                "duplicated=$O_DUP extra=$O_EXTRA unexpected=$O_UNEXP" \
                "dropped=$O_DROP"
        scan_flow -t "$SINK" --source "$SRC" --processor-group "$GROUP"
        assert_f flow.source_records "$O_SRC"
        assert_f flow.delivered "$O_DEL"
        assert_f flow.lost "$O_LOST"
        assert_f flow.duplicated "$O_DUP"
        assert_f flow.duplicate_copies "$O_EXTRA"
        assert_f flow.unexpected "$O_UNEXP"
        assert_f flow.pending 0
        assert_f flow.group_committed true
        # --json's verdict is the exit status's: the sink judged by
        # lineage, not "not audited" for carrying forwarded headers only.
        assert_f verdict "$([ "$SCAN_RC" = 0 ] && echo clean || echo anomalies)"
        assert_f topics.0.topic "$SINK"
        assert_f topics.0.judged_by lineage
        assert_f topics.1.judged_by sequence
        # Nothing above the group's committed offsets once it is done.
        assert_f flow.processor_lag 0
        # The sink's forwarded eos.* headers raise nothing; the source's
        # own audit is clean.
        assert_f anomalies.duplicate 0
        assert_f anomalies.gap 0
        assert_f anomalies.out_of_order 0
}

N=3000

log "== A: exactly-once, re-keyed"
flow_case a 3 4 "$N" --mode exactly-once --rekey --batch 200
assert_eq "A: oracle sources" "$N" "$O_SRC"
assert_eq "A: oracle lost" 0 "$O_LOST"
assert_eq "A: oracle duplicated" 0 "$O_DUP"
assert_eq "A: scan exit status" 0 "$SCAN_RC"
P50="$(fget flow.latency_ms.p50)"
MAXL="$(fget flow.latency_ms.max)"
assert_true "A: latency measured (p50 $P50 ms, max $MAXL ms)" \
        test "$(fget flow.latency_ms.count)" = "$N"

log "== B: exactly-once, crash after 1100 records, abort every 3rd txn"
flow_case b 3 3 "$N" --mode exactly-once --rekey --batch 100 \
        --crash-after 1100 --abort-every 3
assert_eq "B: restarted" 1 "$(json_get restarts "$PROC_JSON")"
assert_true "B: transactions aborted after the restart" \
        test "$(json_get aborted "$PROC_JSON")" -gt 0
assert_eq "B: oracle lost" 0 "$O_LOST"
assert_eq "B: oracle duplicated" 0 "$O_DUP"
assert_eq "B: scan exit status" 0 "$SCAN_RC"

log "== C: a lossy processor, --drop-every 7"
DROP=7 flow_case c 2 3 "$N" --mode exactly-once --drop-every 7
assert_true "C: some dropped ($O_DROP)" test "$O_DROP" -gt 0
assert_eq "C: oracle lost = dropped" "$O_DROP" "$O_LOST"
assert_eq "C: scan exit status" 1 "$SCAN_RC"
EVN="$(evidence_count 'x["outcome"] == "lost" and x["sink"] is None and x["source"]["offset"] % 7 == 6')"
assert_eq "C: evidence: every lost record, at an offset % 7 == 6" "$O_LOST" "$EVN"

log "== D: at-least-once, crash after 1234 records"
flow_case d 3 3 "$N" --mode at-least-once --batch 100 --crash-after 1234
assert_true "D: duplicates written ($O_DUP)" test "$O_DUP" -gt 0
assert_eq "D: oracle lost" 0 "$O_LOST"
assert_eq "D: scan exit status" 1 "$SCAN_RC"

finish
