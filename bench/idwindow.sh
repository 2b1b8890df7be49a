#!/usr/bin/env bash
# bench/idwindow.sh - the id window at 10 million ids: eosaudit scan of a
# topic whose every record carries a distinct eos.msgid, with the window
# sized to hold them all, against the same scan with the window off.
#
# usage: bench/idwindow.sh [-n RECORDS] [-p PARTITIONS] [-r REPS] [-t TOPIC] [-K]
#   -n RECORDS     records of the fresh topic (10000000)
#   -p PARTITIONS  its partitions (12)
#   -r REPS        scans per configuration (3), interleaved
#   -t TOPIC       scan this existing topic instead of generating one
#   -K             keep the topic (deleted at the end otherwise)
#
# The topic is written by the reference producer (eos.msgid = the record
# key, distinct per record, 100-byte values).  Configurations:
#   off        --id-window 0: no id checks (sequence checks only)
#   window     --id-window RECORDS --id-window-age-ms 0: every id is
#              checked and kept, so the last scan ends with RECORDS ids in
#              memory and in the ledger
# Each scan gets a fresh ledger under /var/tmp and runs under
# /usr/bin/time -v.  After each "window" scan the same ledger is scanned
# again with nothing new to read: that run's time is the start-up cost of
# loading RECORDS ids back into the filters ("restart").  The scans must
# find no anomaly.  Writes build/bench-results/idwindow.csv (summary),
# idwindow_runs.csv and idwindow.md.
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

n=10000000 parts=12 reps=3 topic="" keep=0
while getopts "n:p:r:t:Kh" o; do
  case "$o" in
    n) n=$(bench_uint -n "$OPTARG") ;;
    p) parts=$(bench_uint -p "$OPTARG") ;;
    r) reps=$(bench_uint -r "$OPTARG") ;;
    t) topic="$OPTARG"; keep=1 ;;
    K) keep=1 ;;
    *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done

bench_build build/eosaudit
bench_broker_up
bench_work
prod_rps=""
bench_topic_prepare bench-ids "$parts" "$n"

runs="$BENCH_RESULTS/idwindow_runs.csv"
summary="$BENCH_RESULTS/idwindow.csv"
bench_begin
echo "rep,config,records,ids_checked,window_ids,seconds,records_per_s,max_rss_kib,ledger_bytes,cpu_seconds,restart_seconds,restart_max_rss_kib" >"$runs"

# scan LEDGER ARGS...: runs one scan; sets $out, $secs, $rss, $cpu.
scan() {
  local db="$1" t0 t1
  shift
  t0=$(bench_now)
  out="$(/usr/bin/time -v -o "$work/time" "$EOSAUDIT" scan -b "$BROKER" -t "$topic" \
           --db "$db" --json -q --no-progress "$@")" ||
    die "eosaudit scan failed or found anomalies"
  t1=$(bench_now)
  secs=$(bench_secs "$t0" "$t1")
  rss="$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$work/time")"
  cpu="$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$work/time")"
}

run_one() {
  local cfg="$1" rep="$2" db got ids wids size rsecs="" rrss=""
  local x=(--id-window 0)
  [ "$cfg" = window ] && x=(--id-window "$records" --id-window-age-ms 0)
  db="$(bench_db_new "ids-$cfg-$rep")"
  scan "$db" "${x[@]}"
  got="$(bench_json_int "$out" records_total)"
  ids="$(bench_json_int "$out" ids_checked)"
  wids="$(bench_json_int "$out" ids)"
  [ "$got" = "$records" ] || die "scan counted $got records, not $records"
  size=$(du -cb "$db"* | tail -n 1 | cut -f1)
  local s1="$secs" r1="$rss" c1="$cpu"
  if [ "$cfg" = window ]; then
    [ "$ids" = "$records" ] || die "the window checked $ids ids, not $records"
    scan "$db" "${x[@]}"
    rsecs="$secs" rrss="$rss"
  fi
  bench_db_rm "$db"
  echo "$rep,$cfg,$got,${ids:-0},${wids:-0},$s1,$(bench_rate "$got" "$s1"),$r1,$size,$c1,$rsecs,$rrss" >>"$runs"
  say "rep $rep: $cfg $s1 s, max RSS $((r1 / 1024)) MiB, ledger $((size / 1048576)) MiB${rsecs:+, restart $rsecs s}"
}

cfgs=(off window)
bench_rounds "$reps" run_one "${cfgs[@]}"

bench_out "topic $topic: $(bench_fmt "$records") records of 100 bytes over $parts partitions, each with a distinct eos.msgid; $reps scans per configuration, ledger on /var/tmp"
bench_out ""
bench_out "| configuration | records/s (median) | min | max | max RSS MiB (median) | CPU s (median) | ledger MiB | restart s (median) | restart max RSS MiB |"
bench_out "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
echo "config,median_records_per_s,min_records_per_s,max_records_per_s,median_max_rss_mib,median_cpu_seconds,ledger_mib,median_restart_seconds,median_restart_max_rss_mib,records" >"$summary"
for cfg in "${cfgs[@]}"; do
  read -r m lo hi < <(bench_col "$runs" 7 2 "$cfg" | bench_stats)
  read -r rm _ _ < <(bench_col "$runs" 8 2 "$cfg" | awk '{ print $1 / 1024 }' | bench_stats)
  read -r cp _ _ < <(bench_col "$runs" 10 2 "$cfg" | bench_stats)
  read -r lb _ _ < <(bench_col "$runs" 9 2 "$cfg" | awk '{ print $1 / 1048576 }' | bench_stats)
  rs=- rr=-
  if [ "$cfg" = window ]; then
    read -r rs _ _ < <(bench_col "$runs" 11 2 "$cfg" | bench_stats)
    read -r rr _ _ < <(bench_col "$runs" 12 2 "$cfg" | awk '{ print $1 / 1024 }' | bench_stats)
  fi
  label="eosaudit scan --id-window 0"
  [ "$cfg" = window ] && label="eosaudit scan --id-window $(bench_fmt "$records")"
  printf -v row '%s,%s,%s,%.0f,%s,%.0f,%s,%s' "$m" "$lo" "$hi" "$rm" "$cp" "$lb" "$rs" "$rr"
  echo "$cfg,$row,$records" >>"$summary"
  [ "$rr" != - ] && rr=$(printf '%.0f' "$rr")
  bench_out "| $label | $(bench_fmt "$m") | $(bench_fmt "$lo") | $(bench_fmt "$hi") | $(printf '%.0f' "$rm") | $cp | $(printf '%.0f' "$lb") | $rs | $rr |"
done
m_off=$(awk -F, '$1 == "off" { print $2 }' "$summary")
m_win=$(awk -F, '$1 == "window" { print $2 }' "$summary")
bench_out ""
bench_out "window / off throughput: $(awk -v a="$m_win" -v b="$m_off" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
[ -n "$prod_rps" ] && bench_out "(the reference producer wrote the topic at $(bench_fmt "$prod_rps") records/s)"
bench_out "load average at end: $(bench_load)"
say "results: $summary, $runs, $BENCH_MD"
