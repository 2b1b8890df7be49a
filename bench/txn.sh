#!/usr/bin/env bash
# bench/txn.sh - the cost of the transaction check (--txn-manifests): a
# scan of a topic written in transactions, with and without the check.
#
# usage: bench/txn.sh [-n RECORDS] [-p PARTITIONS] [-s TXN_SIZE] [-r REPS]
#   -n RECORDS     records of the fresh topic (1000000)
#   -p PARTITIONS  its partitions (12)
#   -s TXN_SIZE    records per transaction (100); every 10th is aborted
#   -r REPS        scans per configuration (3), interleaved
#
# The reference producer writes the topic with --transactional-id and
# --txn-manifests (eos.txn on every record, one manifest per committed
# transaction into a 1-partition manifest topic).  Configurations:
#   off   eosaudit scan --id-window 0 (the records' eos.txn is ignored)
#   txn   the same with --txn-manifests: every transaction checked
# Each scan gets a fresh ledger and runs under /usr/bin/time; both must
# find no anomaly.  Writes build/bench-results/txn.md and txn_runs.csv.
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

n=1000000 parts=12 size=100 reps=3
while getopts "n:p:s:r:h" o; do
  case "$o" in
    n) n=$(bench_uint -n "$OPTARG") ;;
    p) parts=$(bench_uint -p "$OPTARG") ;;
    s) size=$(bench_uint -s "$OPTARG") ;;
    r) reps=$(bench_uint -r "$OPTARG") ;;
    *) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done

bench_build build/eosaudit
bench_broker_up
bench_work
mkdir -p "$BENCH_RESULTS"
topic="txn-$(date +%s)" keep=0
mtopic="$topic-manifests"
bench_topic_create "$topic" "$parts"
bench_topic_create "$mtopic" 1
say "producing $n records in transactions of $size into $topic"
out="$("$EOSAUDIT" produce -b "$BROKER" -t "$topic" --producer "bench-$topic" \
        -n "$n" --transactional-id "bench-$topic" --txn-size "$size" \
        --abort-every 10 --txn-manifests "$mtopic" -q --json)" ||
  die "eosaudit produce failed"
txns=$(bench_json_int "$out" transactions)
records=$(bench_topic_count "$topic")
[ "$records" = "$n" ] || die "the topic holds $records records, not $n"

runs="$BENCH_RESULTS/txn_runs.csv"
echo "config,rep,secs,records_per_s,cpu_s,max_rss_kib" >"$runs"
scan_one() {
  local cfg="$1" rep="$2" db extra=() t rc=0
  db="$(bench_db_new "$cfg")"
  [ "$cfg" = txn ] && extra=(--txn-manifests "$mtopic")
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" \
    "$EOSAUDIT" scan -b "$BROKER" -t "$topic" --db "$db" --id-window 0 \
    --no-progress -q --json "${extra[@]}" >"$work/scan.json" || rc=$?
  [ "$rc" = 0 ] || die "scan $cfg found anomalies or failed (exit $rc)"
  read -r t u s m <"$work/time"
  echo "$cfg,$rep,$t,$(bench_rate "$records" "$t"),$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }'),$m" >>"$runs"
  say "$cfg #$rep: $t s, max RSS $m KiB"
  bench_db_rm "$db"
}
bench_rounds "$reps" scan_one off txn

md="$BENCH_RESULTS/txn.md"
{
  echo "$records records, $parts partitions, $txns committed transactions of $size (every 10th aborted and retried), $reps scans each"
  echo
  echo "| configuration | records/s (median) | min | max | CPU s (median) | max RSS MiB (median) |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: |"
  for cfg in off txn; do
    read -r rm rmin rmax <<<"$(grep "^$cfg," "$runs" | cut -d, -f4 | bench_stats)"
    read -r cpu _ _ <<<"$(grep "^$cfg," "$runs" | cut -d, -f5 | bench_stats)"
    read -r rss _ _ <<<"$(grep "^$cfg," "$runs" | cut -d, -f6 | bench_stats)"
    echo "| $cfg | $(bench_fmt "${rm%.*}") | $(bench_fmt "${rmin%.*}") | $(bench_fmt "${rmax%.*}") | $cpu | $((${rss%.*} / 1024)) |"
  done
} | tee "$md"
bench_topic_delete "$mtopic"
