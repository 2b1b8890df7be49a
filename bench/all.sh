#!/usr/bin/env bash
# bench/all.sh - every benchmark, one after the other, then the chart: about
# 13 minutes on the 2-core VM when it is quiet, 17 when others load it,
# flow.sh another 14 (5M records through a processor, then read 9 times)
# and group.sh and group_ids.sh 2-3 each (serve --group).
#
# usage: bench/all.sh [-q]
#   -q  quick: small sizes and fewer runs, to check that everything works
#       (2-3 minutes; the figures mean little)
#
# One 5,000,000-record topic is produced first and read by throughput.sh
# and serve_load.sh; ledger.sh, cardinality.sh, idwindow.sh, producer.sh,
# flow.sh, group.sh, group_ids.sh and interceptor.sh make their own.  The tables go to stdout and, together, to
# build/bench-results/all.md; every benchmark also writes its CSV files
# there, and throughput.png comes from bench/chart.gp.  BENCHMARKS.md
# quotes a run of this script; copy build/bench-results/throughput.png to
# bench/throughput.png with it.
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

quick=0
while getopts "qh" o; do
  case "$o" in
    q) quick=1 ;;
    *) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done

if [ "$quick" -eq 1 ]; then
  n=300000 reps=1 card=(-p 20 -k 1000 -r 1) ledger=(-n 300000 -r 1) prod=(-n 200000 -r 1)
  ids=(-n 300000 -r 1) flow=(-n 200000 -r 1) group=(-n 200000 -r 1 -K 400)
  gids=(-n 200000 -r 1) icpt=(-n 200000 -r 1)
else
  n=5000000 reps=3 card=(-r 2) ledger=() prod=() ids=(-r 2) flow=() group=()
  gids=() icpt=()
fi

bench_build build/eosaudit build/bench/gen_pairs
bench_broker_up
topic="bench-all-$(date +%s)"
trap 'bench_topic_delete "$topic"' EXIT
start=$SECONDS
say "producing $(bench_fmt "$n") records into $topic (12 partitions)"
rps=$(bench_topic_fill "$topic" 12 "$n") || die "cannot fill topic $topic"
say "eosaudit produce: $(bench_fmt "$rps") records/s"

# A benchmark that fails does not stop the others; all.sh exits 1 then.
dir="$(dirname "$0")"
failed=()
bench() {
  local b="$1"; shift
  rm -f "$BENCH_RESULTS/$b.md"
  "$dir/$b.sh" "$@" || failed+=("$b")
}
bench throughput -t "$topic" -r "$reps"
bench ledger "${ledger[@]}"
bench cardinality "${card[@]}"
bench idwindow "${ids[@]}"
bench serve_load -t "$topic" -r "$reps"
bench producer "${prod[@]}"
bench flow "${flow[@]}"
bench group "${group[@]}"
bench group_ids "${gids[@]}"
bench interceptor "${icpt[@]}"

: >"$BENCH_RESULTS/all.md"
for b in throughput ledger cardinality idwindow serve_load producer flow group group_ids interceptor; do
  if [ -f "$BENCH_RESULTS/$b.md" ]; then
    { cat "$BENCH_RESULTS/$b.md"; echo; } >>"$BENCH_RESULTS/all.md"
  fi
done
say "done in $((SECONDS - start)) s: $BENCH_RESULTS/all.md, $BENCH_RESULTS/throughput.png"
if [ ${#failed[@]} -gt 0 ]; then
  say "failed: ${failed[*]}"
  exit 1
fi
