#!/usr/bin/env bash
# bench/ab.sh - two eosaudit builds scanning the same topic, paired in ABBA
# order: is one faster than the other, on a host whose speed drifts?
#
# usage: bench/ab.sh -a BINARY_A -b BINARY_B [-r ROUNDS] [-n RECORDS]
#                    [-p PARTITIONS] [-t TOPIC] [-k] [-- SCAN_ARGS...]
#   -a, -b         the two eosaudit binaries (copy a build aside first:
#                  make writes build/eosaudit in place)
#   -r ROUNDS      rounds of one run each (6); odd rounds run A then B, even
#                  ones B then A
#   -n RECORDS     records in the fresh topic (5000000), 100 bytes, eos.* headers
#   -p PARTITIONS  partitions (12)
#   -t TOPIC       scan this existing topic instead; -k keeps the topic
#   SCAN_ARGS      passed to both scans (say -- --id-window 0)
#
# Each run is `eosaudit scan` on a fresh ledger under /var/tmp, after a
# `sync` and a 1 s pause (the last run's writes otherwise land in the
# next).  Why ABBA: running the old build first every time favoured the
# second run by about 5 % here (the same binary against itself), more than
# some changes are worth; alternating the order cancels it, and running
# both in the same minutes cancels most of the host's drift.  Prints each
# run, then per build the median and spread of wall and CPU seconds, and
# how many pairs B won.  Writes build/bench-results/ab_runs.csv and ab.md.
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

bin_a="" bin_b="" rounds=6 records=5000000 parts=12 topic="" keep=0
while getopts "a:b:r:n:p:t:kh" o; do
  case "$o" in
    a) bin_a="$OPTARG" ;;
    b) bin_b="$OPTARG" ;;
    r) rounds=$(bench_uint -r "$OPTARG") ;;
    n) records=$(bench_uint -n "$OPTARG") ;;
    p) parts=$(bench_uint -p "$OPTARG") ;;
    t) topic="$OPTARG"; keep=1 ;;
    k) keep=1 ;;
    *) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
scan_args=("$@")
[ -n "$bin_a" ] && [ -n "$bin_b" ] || die "-a and -b are required (bench/ab.sh -h)"
for b in "$bin_a" "$bin_b"; do
  [ -x "$b" ] || die "$b is not an executable"
done
[ -x /usr/bin/time ] || die "/usr/bin/time is not installed (apt-get install time)"

bench_broker_up
scan_pid=""
BENCH_PIDS="scan_pid"
bench_work
bench_topic_prepare bench-ab "$parts" "$records"

runs="$BENCH_RESULTS/ab_runs.csv"
bench_begin
bench_out "A: $bin_a"
bench_out "B: $bin_b"
bench_out "topic $topic: $(bench_fmt "$records") records; eosaudit scan ${scan_args[*]}; $rounds rounds, ABBA"
bench_out ""
echo "round,build,wall_seconds,cpu_seconds,max_rss_kib" >"$runs"

# run_one A|B ROUND
run_one() {
  local v="$1" r="$2" bin db t w u s m
  if [ "$v" = A ]; then bin="$bin_a"; else bin="$bin_b"; fi
  db="$(bench_db_new "ab-$v")"
  sync
  sleep 1
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" \
    "$bin" scan -b "$BROKER" -t "$topic" --db "$db" -q "${scan_args[@]}" >/dev/null 2>"$work/err" &
  scan_pid=$!
  wait "$scan_pid" || { cat "$work/err" >&2; die "build $v: scan exited with an error"; }
  scan_pid=""
  bench_db_rm "$db"
  read -r w u s m <"$work/time"
  t=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
  echo "$r,$v,$w,$t,$m" >>"$runs"
  say "round $r: $v $w s wall, $t s CPU"
}

# Two items: bench_rounds runs A B, then B A, and so on.
bench_rounds "$rounds" run_one A B

bench_out "| build | wall s (median) | min | max | CPU s (median) | min | max | max RSS MiB (median) |"
bench_out "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for v in A B; do
  read -r wm wl wh < <(bench_col "$runs" 3 2 "$v" | bench_stats)
  read -r cm cl ch < <(bench_col "$runs" 4 2 "$v" | bench_stats)
  read -r rm _ _ < <(bench_col "$runs" 5 2 "$v" | bench_stats)
  bench_out "| $v | $wm | $wl | $wh | $cm | $cl | $ch | $(awk -v k="$rm" 'BEGIN { printf "%.0f", k / 1024 }') |"
done
wins=$(awk -F, 'NR > 1 { w[$1, $2] = $3 } END {
    for (k in w) { split(k, p, SUBSEP); if (p[2] == "A" && w[p[1], "B"] < w[k]) n++ }
    print n + 0 }' "$runs")
read -r wa _ _ < <(bench_col "$runs" 3 2 A | bench_stats)
read -r wb _ _ < <(bench_col "$runs" 3 2 B | bench_stats)
bench_out ""
bench_out "B/A wall (medians): $(awk -v a="$wa" -v b="$wb" 'BEGIN { printf "%.3f", b / a }'); B faster in $wins of $rounds pairs"
bench_out "load average at end: $(bench_load)"
say "results: $runs, $BENCH_MD"
