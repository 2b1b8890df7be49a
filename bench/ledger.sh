#!/usr/bin/env bash
# bench/ledger.sh - what the SQLite ledger costs eosaudit scan: tmpfs vs
# disk, the commit cadence, and the replay after a crash.
#
# usage: bench/ledger.sh [-n RECORDS] [-p PARTITIONS] [-r REPS] [-s SEED]
#                        [-t TOPIC] [-k]
#   -n RECORDS     records in the fresh topic (2000000), 100 bytes, eos.* headers
#   -p PARTITIONS  partitions (12)
#   -r REPS        runs of every configuration (3), interleaved
#   -s SEED        seed for the kill points (random)
#   -t TOPIC       use this existing topic; -k keeps the topic
#
# 1. Throughput of a full scan with a fresh ledger on /dev/shm (tmpfs) and on
#    /var/tmp (disk), at the default cadence and at a commit every 1000
#    records.
# 2. Commit cadence (ledger on disk): --commit-records 1k/10k/100k/1M (with
#    --commit-interval-ms 3600000 so that only the count triggers),
#    --commit-interval-ms 100/1000 (with --commit-records 100000000), and
#    the default (1000 ms or 100000 records, whichever first).
# 3. Crash replay, per cadence and rep: the scan is frozen (SIGSTOP) at a
#    random point between 20 % and 80 % of that cadence's run time,
#    then killed with SIGKILL, and restarted on the same ledger.  (The
#    point is drawn from that cadence's fastest full run.)
#      held       sqlite3 DB 'select sum(records) from partitions' after the kill
#      processed  records the killed scan had classified, read from the frozen
#                 process with gdb (its `a->stats.records`); needs gdb
#      read twice = processed - held: audited by the killed scan and again
#                 by the restart (the uncommitted batch)
#      replayed   = total - held: what the restart reads
#    and the restart's wall time.  After the restart the ledger must count
#    every record once with no anomaly ("exact").
# Writes build/bench-results/ledger.csv (summary), ledger_runs.csv,
# ledger_crash.csv and ledger.md.
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

records=2000000 parts=12 reps=3 seed=$RANDOM topic="" keep=0
while getopts "n:p:r:s:t:kh" o; do
  case "$o" in
    n) records=$(bench_uint -n "$OPTARG") ;;
    p) parts=$(bench_uint -p "$OPTARG") ;;
    r) reps=$(bench_uint -r "$OPTARG") ;;
    s) seed=$(bench_uint -s "$OPTARG") ;;
    t) topic="$OPTARG"; keep=1 ;;
    k) keep=1 ;;
    *) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
command -v sqlite3 >/dev/null || die "sqlite3 is not installed"
have_gdb=0
command -v gdb >/dev/null && have_gdb=1
[ "$have_gdb" -eq 1 ] || say "warning: no gdb; 'read twice' cannot be measured"

bench_build build/eosaudit
bench_broker_up

scan_pid=""
BENCH_PIDS="scan_pid"
bench_work

bench_topic_prepare bench-ledger "$parts" "$records"

# Cadence name -> scan flags.
declare -A flags=(
  [rec1k]="--commit-records 1000 --commit-interval-ms 3600000"
  [rec10k]="--commit-records 10000 --commit-interval-ms 3600000"
  [rec100k]="--commit-records 100000 --commit-interval-ms 3600000"
  [rec1M]="--commit-records 1000000 --commit-interval-ms 3600000"
  [ms100]="--commit-interval-ms 100 --commit-records 100000000"
  [ms1000]="--commit-interval-ms 1000 --commit-records 100000000"
  [default]=""
)
declare -A label=(
  [rec1k]="every 1,000 records"
  [rec10k]="every 10,000 records"
  [rec100k]="every 100,000 records"
  [rec1M]="every 1,000,000 records"
  [ms100]="every 100 ms"
  [ms1000]="every 1000 ms"
  [default]="default (1000 ms or 100,000 records)"
)
cadences=(rec1k rec10k rec100k rec1M ms100 ms1000 default)

runs="$BENCH_RESULTS/ledger_runs.csv"
crash="$BENCH_RESULTS/ledger_crash.csv"
summary="$BENCH_RESULTS/ledger.csv"
bench_begin
echo "rep,storage,cadence,records,seconds,records_per_s,cpu_seconds" >"$runs"
echo "rep,cadence,kill_after_s,processed_at_kill,held_at_kill,read_twice,replayed,restart_seconds,exact" >"$crash"

# scan DB CADENCE: one scan; prints "records seconds anomalies cpu_seconds".
scan() {
  local db="$1" cad="$2" out t0 t1 cpu
  t0=$(bench_now)
  # shellcheck disable=SC2086 # the flags split on purpose
  out="$(/usr/bin/time -f '%U %S' -o "$work/scan.time" "$EOSAUDIT" scan -b "$BROKER" \
           -t "$topic" --db "$db" --json -q --no-progress ${flags[$cad]})" ||
    die "eosaudit scan failed or found anomalies"
  t1=$(bench_now)
  cpu=$(tail -n 1 "$work/scan.time" | awk '{ printf "%.2f", $1 + $2 }')
  echo "$(bench_json_int "$out" records_total) $(bench_secs "$t0" "$t1") $(bench_json_int "$out" anomalies_total) $cpu"
}

# run_tput STORAGE/CADENCE REP: one full scan on a fresh ledger.
run_tput() {
  local storage="${1%%/*}" cad="${1#*/}" rep="$2" dir=$BENCH_TMP db got secs cpu
  if [ "$storage" = tmpfs ]; then dir=/dev/shm; fi
  db="$(bench_db_new "ledger-$storage-$cad-$rep" "$dir")"
  read -r got secs _ cpu < <(scan "$db" "$cad")
  bench_db_rm "$db"
  [ "$got" = "$records" ] || die "scan counted $got records, not $records"
  echo "$rep,$storage,$cad,$got,$secs,$(bench_rate "$got" "$secs"),$cpu" >>"$runs"
  say "rep $rep: $storage $cad $secs s"
}

proc_state() { awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null || echo gone; }

# run_crash CADENCE REP: freeze, measure, kill -9 and restart one scan.
# The kill point is uniform in 20..80 % of that cadence's fastest full
# run; a scan that still finishes first is tried again with half the delay.
run_crash() {
  local cad="$1" rep="$2" r fastest delay db held processed="" twice="" got secs anom exact _
  fastest=$(awk -F, -v c="$cad" 'NR > 1 && $2 == "disk" && $3 == c { print $5 }' "$runs" |
    bench_stats | cut -d' ' -f2)
  r=$RANDOM # here, not in the $(...) subshell, so that the seed holds
  delay=$(awk -v m="$fastest" -v r="$r" 'BEGIN { printf "%.3f", m * (0.2 + 0.6 * r / 32767) }')
  db="$(bench_db_new "crash-$cad-$rep")"
  for _ in 1 2 3 4; do
    bench_db_rm "$db"
    # shellcheck disable=SC2086 # the flags split on purpose
    "$EOSAUDIT" scan -b "$BROKER" -t "$topic" --db "$db" -q --no-progress \
      ${flags[$cad]} >/dev/null 2>&1 &
    scan_pid=$!
    sleep "$delay"
    kill -STOP "$scan_pid" 2>/dev/null && [ "$(proc_state "$scan_pid")" != Z ] && break
    wait "$scan_pid" || true
    scan_pid=""
    say "rep $rep: $cad finished before the kill at $delay s; again with half the delay"
    delay=$(awk -v d="$delay" 'BEGIN { printf "%.3f", d / 2 }')
  done
  if [ -z "$scan_pid" ]; then
    say "rep $rep: $cad: no kill point found; skipped"
    return 0
  fi
  while [ "$(proc_state "$scan_pid")" = R ] || [ "$(proc_state "$scan_pid")" = S ]; do
    sleep 0.01
  done
  if [ "$have_gdb" -eq 1 ]; then
    # shellcheck disable=SC2016 # gdb and sed syntax, not shell
    processed="$({ timeout 60 gdb -p "$scan_pid" -batch -nx -ex 'frame function cmd_audit' \
                     -ex 'print a->stats.records' 2>/dev/null || true; } |
                   sed -n 's/^\$1 = \([0-9]*\)$/\1/p')"
    [ -n "$processed" ] || say "warning: gdb could not read the scan's record count"
  fi
  kill -KILL "$scan_pid" 2>/dev/null || true
  wait "$scan_pid" 2>/dev/null || true
  scan_pid=""
  held="$(sqlite3 -cmd '.timeout 5000' "$db" 'select coalesce(sum(records), 0) from partitions' 2>/dev/null || echo 0)"
  [ -n "$processed" ] && twice=$((processed - held))
  read -r got secs anom _ < <(scan "$db" "$cad")
  exact=no
  [ "$got" = "$records" ] && [ "$anom" = 0 ] && exact=yes
  bench_db_rm "$db"
  echo "$rep,$cad,$delay,$processed,$held,$twice,$((records - held)),$secs,$exact" >>"$crash"
  say "rep $rep: $cad killed after $delay s: processed ${processed:-?}, held $held, restart $secs s ($exact)"
}

bench_rounds "$reps" run_tput "${cadences[@]/#/disk/}" tmpfs/default tmpfs/rec1k
RANDOM=$seed
bench_rounds "$reps" run_crash "${cadences[@]}"

stats_of() { bench_col "$1" "$2" "$3" "$4" | { grep . || true; } | bench_stats; }

bench_out "topic $topic: $(bench_fmt "$records") records of 100 bytes, $parts partitions, $reps runs per configuration (interleaved), kill seed $seed"
bench_out ""
bench_out "Ledger on tmpfs vs disk (full scan, fresh ledger; records/s, median of $reps):"
bench_out ""
bench_out "| commit cadence | tmpfs (/dev/shm) | disk (/var/tmp) | disk/tmpfs | CPU s tmpfs | CPU s disk |"
bench_out "| --- | ---: | ---: | ---: | ---: | ---: |"
echo "section,storage,cadence,median_records_per_s,min_records_per_s,max_records_per_s,median_read_twice,max_read_twice,median_replayed,median_restart_seconds,exact_restarts,crash_runs,median_cpu_seconds" >"$summary"
for cad in default rec1k; do
  awk -F, -v c="$cad" 'NR > 1 && $3 == c { print $2, $6, $7 }' "$runs" >"$work/st"
  read -r mt lt ht < <(awk '$1 == "tmpfs" { print $2 }' "$work/st" | bench_stats)
  read -r ct _ _ < <(awk '$1 == "tmpfs" { print $3 }' "$work/st" | bench_stats)
  read -r cd _ _ < <(awk '$1 == "disk" { print $3 }' "$work/st" | bench_stats)
  read -r md _ _ < <(awk '$1 == "disk" { print $2 }' "$work/st" | bench_stats)
  echo "storage,tmpfs,$cad,$mt,$lt,$ht,,,,,,,$ct" >>"$summary"
  bench_out "| ${label[$cad]} | $(bench_fmt "$mt") | $(bench_fmt "$md") | $(awk -v a="$md" -v b="$mt" 'BEGIN { printf "%.2f", a / b }') | $ct | $cd |"
done
bench_out ""
bench_out "Commit cadence (ledger on disk) and a kill -9 at a random point:"
bench_out ""
bench_out "| commit | records/s (median) | min | max | CPU s (median) | read twice (median) | max | replayed by restart (median) | restart s (median) | exact |"
bench_out "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for cad in "${cadences[@]}"; do
  read -r m lo hi < <(awk -F, -v c="$cad" 'NR > 1 && $2 == "disk" && $3 == c { print $6 }' "$runs" | bench_stats)
  read -r cp _ _ < <(awk -F, -v c="$cad" 'NR > 1 && $2 == "disk" && $3 == c { print $7 }' "$runs" | bench_stats)
  read -r tw _ twmax < <(stats_of "$crash" 6 2 "$cad")
  read -r rp _ _ < <(stats_of "$crash" 7 2 "$cad")
  read -r rs _ _ < <(stats_of "$crash" 8 2 "$cad")
  nx=$(bench_col "$crash" 9 2 "$cad" | grep -c yes || true)
  nc=$(bench_col "$crash" 9 2 "$cad" | grep -c . || true)
  echo "cadence,disk,$cad,$m,$lo,$hi,$tw,$twmax,$rp,$rs,$nx,$nc,$cp" >>"$summary"
  bench_out "| ${label[$cad]} | $(bench_fmt "$m") | $(bench_fmt "$lo") | $(bench_fmt "$hi") | $cp | $(bench_fmt "$tw") | $(bench_fmt "$twmax") | $(bench_fmt "$rp") | $rs | $nx/$nc |"
done
bench_out ""
bench_out "CPU s: user + system time of the scan, less disturbed than wall time by the other work on the machine."
bench_out "read twice: records the killed scan had audited beyond its last ledger commit (gdb on the frozen process minus the ledger's sum(records)); replayed: total minus the ledger's count at the kill, i.e. all the restart reads; exact: the restarted ledger holds every record once and no anomaly."
bench_out "load average at end: $(bench_load)"
say "results: $summary, $runs, $crash, $BENCH_MD"
