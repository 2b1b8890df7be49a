#!/usr/bin/env bash
# bench/flow.sh - the flow audit end to end: a source topic of N records
# (the reference producer), the reference processor (exactly-once) writing
# them to a sink, then, timed in the same run: eosaudit scan --source of
# the pair against kcat reading both topics with their headers.
#
# usage: bench/flow.sh [N] [PARTITIONS]   (1000000, 6)
# The broker must be up (deploy/kafka/kafka.sh up).  Topics are deleted at
# the end.  Prints one line per step with seconds, records/s and max RSS.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
E="$ROOT/build/eosaudit"
K="$ROOT/deploy/kafka/kafka.sh"
B="$("$K" bootstrap)"
N="${1:-1000000}" P="${2:-6}"
id="bench-flow-$(date +%s)-$$"
SRC="$id-src" SINK="$id-sink" G="$id-g"
"$K" topic "$SRC" "$P" >/dev/null
"$K" topic "$SINK" "$P" >/dev/null
trap '"$K" tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$B" --delete --topic "$SRC" >/dev/null 2>&1 || true; "$K" tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$B" --delete --topic "$SINK" >/dev/null 2>&1 || true' EXIT

step() {
        local what="$1"; shift
        local t0 t1 rss
        t0=$(date +%s.%N)
        /usr/bin/time -f '%M' -o /tmp/bench-flow-rss.$$ "$@" >/tmp/bench-flow-out.$$ 2>/dev/null || true
        t1=$(date +%s.%N)
        rss=$(tail -1 /tmp/bench-flow-rss.$$)
        python3 -c 'import sys
w, t0, t1, n, rss = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
print("%-28s %7.2f s  %9.0f records/s  max RSS %6.1f MiB" % (w, t1 - t0, n / (t1 - t0), rss / 1024))' \
                "$what" "$t0" "$t1" "$STEP_N" "$rss"
}

STEP_N=$N step "produce (source)" "$E" produce -b "$B" -q -t "$SRC" \
        --producer "$id" -n "$N"
STEP_N=$N step "process (exactly-once)" "$E" process -b "$B" -q \
        --source "$SRC" --sink "$SINK" --group "$G" --batch 5000 \
        --idle-exit-ms 3000
STEP_N=$((2 * N)) step "kcat, both topics" sh -c \
        "kcat -C -b $B -t $SRC -o beginning -e -q -f '%h\n' >/dev/null &&
         kcat -C -b $B -t $SINK -o beginning -e -q -f '%h\n' >/dev/null"
STEP_N=$((2 * N)) step "scan --source (flow)" "$E" scan -b "$B" -q \
        --no-progress --json -t "$SINK" --source "$SRC" --processor-group "$G" \
        --flow-max-ids $((N + 1))
python3 -c 'import json, sys
f = json.load(open(sys.argv[1]))["flow"]
print("flow: source_records %d delivered %d lost %d duplicated %d unexpected %d pending %d" % (f["source_records"], f["delivered"], f["lost"], f["duplicated"], f["unexpected"], f["pending"]))' /tmp/bench-flow-out.$$
STEP_N=$((2 * N)) step "scan, both as plain topics" "$E" scan -b "$B" -q \
        --no-progress -t "$SINK,$SRC"
rm -f /tmp/bench-flow-rss.$$ /tmp/bench-flow-out.$$
