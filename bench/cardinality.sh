#!/usr/bin/env bash
# bench/cardinality.sh - eosaudit scan of a topic holding 1,000,000
# (partition, producer) pairs: resident memory and throughput.
#
# usage: bench/cardinality.sh [-p PARTITIONS] [-k PRODUCERS] [-c PER_PAIR]
#                             [-r REPS] [-t TOPIC] [-K]
#   -p PARTITIONS  partitions of the fresh topic (100)
#   -k PRODUCERS   producer names, each writing to every partition (10000)
#   -c PER_PAIR    records per (partition, producer) pair (2)
#   -r REPS        scans per configuration (3), interleaved
#   -t TOPIC       scan this existing topic instead of generating one
#   -K             keep the topic (deleted at the end otherwise)
#
# build/bench/gen_pairs (bench/gen_pairs.c) writes the topic: an idempotent
# librdkafka producer stamping eos.* headers for PRODUCERS names across
# PARTITIONS partitions, choosing each record's partition, 100-byte values.
# Each scan gets a fresh ledger under /var/tmp and runs under
# /usr/bin/time -v (max RSS; target <= 256 MiB).  Two configurations:
#   default      eosaudit scan as shipped: a prefetch budget of 150000
#                messages / 8 MiB for the one consumer queue, 4 MiB
#                fetches, and a wake-up of the fetcher every 100 ms
#   prefetch1M   the settings before that budget ($old_x below): 1000000
#                queued messages (librdkafka 2.0.2 sleeps up to 1 s once its
#                queue is full, so the queue had to hold a second of
#                records), 64 MiB, 50 MiB fetches, no wake-up
#   kcat         kcat -C -e -q -o beginning -X isolation.level=read_committed
#                > /dev/null, interleaved with the scans: the ratio
#                eosaudit/kcat of the medians is printed at the end
#                (target >= 0.5)
# Writes build/bench-results/cardinality.csv (summary),
# cardinality_runs.csv and cardinality.md.
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

parts=100 producers=10000 per_pair=2 reps=3 topic="" keep=0
while getopts "p:k:c:r:t:Kh" o; do
  case "$o" in
    p) parts=$(bench_uint -p "$OPTARG") ;;
    k) producers=$(bench_uint -k "$OPTARG") ;;
    c) per_pair=$(bench_uint -c "$OPTARG") ;;
    r) reps=$(bench_uint -r "$OPTARG") ;;
    t) topic="$OPTARG"; keep=1 ;;
    K) keep=1 ;;
    *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done

old_x=(-X queued.min.messages=1000000 -X queued.max.messages.kbytes=65536
  -X fetch.max.bytes=52428800 -X topic.metadata.refresh.interval.ms=300000)

bench_build build/eosaudit build/bench/gen_pairs
bench_broker_up

bench_work

gen_rps=""
if [ -z "$topic" ]; then
  topic="bench-card-$(date +%s)"
  bench_topic_create "$topic" "$parts"
  say "generating $(bench_fmt $((parts * producers))) pairs x $per_pair records into $topic"
  t0=$(bench_now)
  out="$("$BENCH_ROOT/build/bench/gen_pairs" -b "$BROKER" -t "$topic" -p "$parts" \
           -k "$producers" -c "$per_pair" -q --json)" || die "gen_pairs failed"
  t1=$(bench_now)
  gen_rps=$(bench_rate "$(bench_json_int "$out" delivered)" "$(bench_secs "$t0" "$t1")")
fi
say "counting (and warming the page cache) with kcat"
records=$(bench_topic_count "$topic")
[ "$records" -gt 0 ] || die "topic $topic is empty"

runs="$BENCH_RESULTS/cardinality_runs.csv"
summary="$BENCH_RESULTS/cardinality.csv"
bench_begin
echo "rep,config,records,pairs,seconds,records_per_s,max_rss_kib,ledger_bytes,cpu_seconds" >"$runs"

run_one() {
  local cfg="$1" rep="$2" db out t0 t1 secs rss pairs got size cpu
  local x=()
  if [ "$cfg" = kcat ]; then
    t0=$(bench_now)
    /usr/bin/time -v -o "$work/time" kcat -b "$BROKER" -C -e -q -o beginning \
      -X isolation.level=read_committed -t "$topic" >/dev/null || die "kcat failed"
    t1=$(bench_now)
    secs=$(bench_secs "$t0" "$t1")
    rss="$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$work/time")"
    cpu="$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$work/time")"
    echo "$rep,$cfg,$records,,$secs,$(bench_rate "$records" "$secs"),$rss,0,$cpu" >>"$runs"
    say "rep $rep: kcat $secs s"
    return
  fi
  [ "$cfg" = prefetch1M ] && x=("${old_x[@]}")
  db="$(bench_db_new "card-$cfg-$rep")"
  t0=$(bench_now)
  out="$(/usr/bin/time -v -o "$work/time" "$EOSAUDIT" scan -b "$BROKER" -t "$topic" \
           --db "$db" --json -q --no-progress "${x[@]}")" ||
    die "eosaudit scan failed or found anomalies"
  t1=$(bench_now)
  secs=$(bench_secs "$t0" "$t1")
  got="$(bench_json_int "$out" records_total)"
  pairs="$(bench_json_int "$out" pairs)"
  [ "$got" = "$records" ] || die "scan counted $got records, not $records"
  rss="$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$work/time")"
  cpu="$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$work/time")"
  size=$(du -cb "$db"* | tail -n 1 | cut -f1)
  bench_db_rm "$db"
  echo "$rep,$cfg,$got,$pairs,$secs,$(bench_rate "$got" "$secs"),$rss,$size,$cpu" >>"$runs"
  say "rep $rep: $cfg $secs s, max RSS $((rss / 1024)) MiB"
}

command -v kcat >/dev/null || die "kcat is not installed"
cfgs=(default prefetch1M kcat)
bench_rounds "$reps" run_one "${cfgs[@]}"

pairs=$(bench_col "$runs" 4 2 default | head -n 1)
bench_out "topic $topic: $(bench_fmt "$records") records of 100 bytes, $(bench_fmt "$pairs") (partition, producer) pairs ($parts partitions x $(bench_fmt "$producers") producers x $per_pair records), $reps scans per configuration, ledger on /var/tmp"
bench_out ""
bench_out "| configuration | max RSS MiB (median) | min | max | records/s (median) | min | max | CPU s (median) | ledger MiB |"
bench_out "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
echo "config,median_max_rss_mib,min_max_rss_mib,max_max_rss_mib,median_records_per_s,min_records_per_s,max_records_per_s,ledger_mib,median_cpu_seconds,pairs,records" >"$summary"
for cfg in "${cfgs[@]}"; do
  read -r rm rlo rhi < <(bench_col "$runs" 7 2 "$cfg" | awk '{ print $1 / 1024 }' | bench_stats)
  read -r m lo hi < <(bench_col "$runs" 6 2 "$cfg" | bench_stats)
  read -r lb _ _ < <(bench_col "$runs" 8 2 "$cfg" | awk '{ print $1 / 1048576 }' | bench_stats)
  read -r cp _ _ < <(bench_col "$runs" 9 2 "$cfg" | bench_stats)
  label="eosaudit scan (default)"
  [ "$cfg" = prefetch1M ] && label="eosaudit scan ${old_x[*]}"
  [ "$cfg" = kcat ] && label="kcat (read_committed, to /dev/null)"
  printf -v row '%.0f,%.0f,%.0f,%s,%s,%s,%.0f,%s' "$rm" "$rlo" "$rhi" "$m" "$lo" "$hi" "$lb" "$cp"
  echo "$cfg,$row,$pairs,$records" >>"$summary"
  IFS=, read -r rm rlo rhi _ _ _ lb _ <<<"$row"
  bench_out "| $label | $rm | $rlo | $rhi | $(bench_fmt "$m") | $(bench_fmt "$lo") | $(bench_fmt "$hi") | $cp | $lb |"
done
rss_def=$(awk -F, '$1 == "default" { print $2 }' "$summary")
ratio=$(awk -F, '$1 == "default" { e = $5 } $1 == "kcat" { k = $5 }
  END { printf "%.2f", (k > 0 ? e / k : 0) }' "$summary")
bench_out ""
bench_out "eosaudit scan (default) / kcat, medians of records/s: $ratio (target >= 0.5)"
if [ "$rss_def" -le 256 ]; then
  bench_out "max RSS (default) $rss_def MiB: within the 256 MiB target"
else
  bench_out "max RSS (default) $rss_def MiB: ABOVE the 256 MiB target"
fi
[ -n "$gen_rps" ] && bench_out "(gen_pairs wrote the topic at $(bench_fmt "$gen_rps") records/s)"
bench_out "load average at end: $(bench_load)"
say "results: $summary, $runs, $BENCH_MD"
