#!/usr/bin/env bash
# The flow audit against a real Kafka Streams application (tests/java
# StreamsRekey: re-keys every record, headers forwarded), once with
# exactly_once_v2 and once with at_least_once, each killed with SIGKILL
# mid-stream and restarted, compared with an independent oracle (kcat
# reads both topics and counts ids).  exactly_once_v2: nothing lost or
# duplicated; at_least_once: the duplicates the kill caused, exactly.
source "$(dirname "$0")/lib.sh"

# flow_oracle SOURCE SINK: "sources delivered lost duplicated extra
# unexpected" over eos.msgid (read_committed).
flow_oracle() {
        { kcat -C -b "$BOOTSTRAP" -t "$1" -o beginning -e -J -q |
                sed 's/^/S /'
          kcat -C -b "$BOOTSTRAP" -t "$2" -o beginning -e -J -q |
                sed 's/^/K /'; } |
                python3 -c 'import collections, json, sys
src, sink = set(), collections.Counter()
for line in sys.stdin:
    m = json.loads(line[2:])
    h = m.get("headers") or []
    i = dict(zip(h[0::2], h[1::2])).get("eos.msgid")
    if not i:
        continue
    if line[0] == "S":
        src.add(i)
    else:
        sink[i] += 1
lost = sum(1 for i in src if sink[i] == 0)
dup = sum(1 for i in src if sink[i] > 1)
extra = sum(sink[i] - 1 for i in src if sink[i] > 1)
unexp = sum(n for i, n in sink.items() if i not in src)
print(len(src), len(src) - lost - dup, lost, dup, extra, unexp)'
}

# sink_count SINK: records in SINK (read_committed).
sink_count() {
        kcat -C -b "$BOOTSTRAP" -t "$1" -o beginning -e -q -f 'x\n' | wc -l
}

# wait_running LOG SECONDS: until the app printed state=RUNNING.
wait_running() {
        local i
        for ((i = 0; i < $2 * 2; i++)); do
                grep -q "state=RUNNING" "$1" && return 0
                sleep 0.5
        done
        return 1
}

N=20000

streams_case() {
        local g="$1" tag="$2"
        SRC="$(name "$tag-src")"
        SINK="$(name "$tag-sink")"
        APP="$(name "$tag-app")"
        create_topic "$SRC" 3
        create_topic "$SINK" 4
        bg_start APP1 "$JAVA_RUN" StreamsRekey "$BOOTSTRAP" "$SRC" "$SINK" \
                "$APP" "$g" "$IT_TMP/state-$tag" >"$IT_TMP/$tag-1.log" 2>&1
        wait_running "$IT_TMP/$tag-1.log" 90 ||
                die "$tag: the application did not start"
        # The records come while the application runs: 10 s of them.
        bg_start PRODUCER "$EOSAUDIT" produce -b "$BOOTSTRAP" -q -t "$SRC" \
                --producer "$(name "$tag-p")" -n "$N" --rate 2000
        # Kill it mid-stream: 4 s into the 10 s of records.  (Reading the
        # sink to watch it is no good: kcat -e waits for the end of
        # partitions that open transactions hold back.)
        sleep 4
        kill -KILL "$APP1"
        BEFORE="$(sink_count "$SINK")"
        log "$tag: SIGKILL with $BEFORE records in the sink"
        assert_true "$tag: killed mid-stream ($BEFORE of $N in the sink)" \
                test "$BEFORE" -lt "$N"
        bg_start APP2 "$JAVA_RUN" StreamsRekey "$BOOTSTRAP" "$SRC" "$SINK" \
                "$APP" "$g" "$IT_TMP/state-$tag" >"$IT_TMP/$tag-2.log" 2>&1
        wait_running "$IT_TMP/$tag-2.log" 90 ||
                die "$tag: the application did not restart"
        wait_pid "$PRODUCER" 60
        # Until every source record is in the sink at least once, and
        # the group has committed the lot.
        for i in $(seq 1 120); do
                read -r O_SRC O_DEL O_LOST O_DUP O_EXTRA O_UNEXP < <(
                        flow_oracle "$SRC" "$SINK")
                [ "$O_SRC" = "$N" ] && [ "$O_LOST" = 0 ] && break
                sleep 1
        done
        sleep 3
        kill -TERM "$APP2"
        wait_pid "$APP2" 60
        read -r O_SRC O_DEL O_LOST O_DUP O_EXTRA O_UNEXP < <(
                flow_oracle "$SRC" "$SINK")
        log "$tag oracle: sources=$O_SRC delivered=$O_DEL lost=$O_LOST" \
                "duplicated=$O_DUP extra=$O_EXTRA unexpected=$O_UNEXP"
        RC=0
        "$EOSAUDIT" scan -b "$BOOTSTRAP" --json --no-progress -t "$SINK" \
                --source "$SRC" --processor-group "$APP" \
                >"$IT_TMP/$tag.json" 2>"$IT_TMP/$tag.err" || RC=$?
        cat "$IT_TMP/$tag.err"
        [ "$RC" != 2 ] || die "$tag: scan failed"
        F="$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
f = d["flow"]
print(f["source_records"], f["delivered"], f["lost"], f["duplicated"], f["duplicate_copies"], f["unexpected"], f["pending"], d["anomalies_total"], f["latency_ms"]["p50"], f["latency_ms"]["p99"], f["latency_ms"]["max"])' "$IT_TMP/$tag.json")"
        log "$tag scan: $F (exit $RC)"
        read -r S_SRC S_DEL S_LOST S_DUP S_EXTRA S_UNEXP S_PEND S_ANOM P50 P99 PMAX <<<"$F"
        assert_eq "$tag: source records (oracle)" "$N" "$O_SRC"
        assert_eq "$tag: scan source records = oracle" "$O_SRC" "$S_SRC"
        assert_eq "$tag: scan delivered = oracle" "$O_DEL" "$S_DEL"
        assert_eq "$tag: scan lost = oracle" "$O_LOST" "$S_LOST"
        assert_eq "$tag: scan duplicated = oracle" "$O_DUP" "$S_DUP"
        assert_eq "$tag: scan extra copies = oracle" "$O_EXTRA" "$S_EXTRA"
        assert_eq "$tag: scan unexpected = oracle" "$O_UNEXP" "$S_UNEXP"
        assert_eq "$tag: nothing pending" 0 "$S_PEND"
        assert_eq "$tag: no sequence anomaly (forwarded headers)" 0 "$S_ANOM"
        # Kafka Streams gives an output record its input's timestamp:
        # the end-to-end latency reads 0 (a processor that stamps its
        # own time, or LogAppendTime on the sink, shows the real one).
        log "$tag: latency p50 $P50 ms, p99 $P99 ms, max $PMAX ms"
}

log "== exactly_once_v2, SIGKILL mid-stream, restart"
streams_case exactly_once_v2 eos
assert_eq "eos: lost" 0 "$S_LOST"
assert_eq "eos: duplicated" 0 "$S_DUP"
assert_eq "eos: scan exit status" 0 "$RC"

log "== at_least_once, SIGKILL mid-stream, restart"
streams_case at_least_once alo
assert_eq "alo: lost" 0 "$S_LOST"
if [ "$S_DUP" -gt 0 ]; then
        assert_eq "alo: scan exit status (duplicates)" 1 "$RC"
else
        log "alo: the kill fell right after a commit: no duplicate this time"
fi

finish
