#!/usr/bin/env bash
# bench/flow.sh - the flow audit (scan --source) end to end, against kcat
# reading the same two topics, in the same run; then the engine's memory
# per outstanding id, measured from outside (max RSS of bench_flow).
#
# usage: bench/flow.sh [-n RECORDS] [-p PARTITIONS] [-r REPS] [-m MAX_IDS]
#                      [-k] [-P]
#   -n RECORDS     source records (5000000), 100 bytes each, written by
#                  eosaudit produce (idempotent, eos.* headers)
#   -p PARTITIONS  partitions of the source and of the sink (12)
#   -r REPS        runs of every reader (3), interleaved, the order rotated
#                  each round so that no reader always goes first
#   -m MAX_IDS     the flow scan's --flow-max-ids (default RECORDS + 1:
#                  every id stays in memory; the revival reader measures a
#                  bound below the backlog); every verdict must be exact,
#                  or the run stops (the JSON is kept in
#                  build/bench-results/flow-failed.json)
#   -k             keep the two topics (deleted at the end otherwise)
#   -P             profile one flow scan with perf record -g
#
# The sink is written by `eosaudit process` in exactly-once mode (5,000
# records per transaction, the group's offsets sent to each transaction):
# the shape the flow audit is for, transaction markers included, and the
# processor's committed offsets are what make records due.  A plain copy
# would be faster to make but has no group to read.  The processor's
# rate is reported too; it is not the subject.
#
# Readers (each reads both topics, read_committed, to their end):
#   kcat            kcat -C -e -q -o beginning -f '%h\n' (headers parsed, as
#                   the audit needs them) on the source, then on the sink,
#                   with -X queued.min.messages=1000000: with librdkafka's
#                   default (100000) kcat printing headers waits on its
#                   queue most of its time (a 1M-record sink: 4.4 s wall for
#                   1.3 CPU s, against 2.1 s with the setting; BENCHMARKS,
#                   "Quiet re-runs of 2026-12-04"), a baseline too easy to beat
#   flow            eosaudit scan -t SINK --source SRC --processor-group G
#                   (fresh ledger each run); the verdict must be N
#                   delivered and nothing lost, duplicated or unexpected
#   revival         the flow scan with --flow-max-ids RECORDS / 4: three
#                   quarters of the ids leave memory for the ledger and
#                   are revived when their copies come (issue 35's target:
#                   at most 2x the flow scan's CPU); the same exact verdict
#   plain           eosaudit scan -t SRC,SINK (no flow).  Not a lower
#                   bound: the sink's copies carry the source writer's
#                   eos.* headers, which a plain audit of the sink reads
#                   as sequence anomalies (2.3M at 2M records) and writes
# records/s = 2 x RECORDS / wall-clock seconds of the whole command.
# Writes build/bench-results/flow.md, flow.csv and flow_runs.csv.
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

records=5000000 parts=12 reps=3 keep=0 profile=0 maxids=()
while getopts "n:p:r:m:kPh" o; do
  case "$o" in
    n) records=$(bench_uint -n "$OPTARG") ;;
    p) parts=$(bench_uint -p "$OPTARG") ;;
    r) reps=$(bench_uint -r "$OPTARG") ;;
    m) maxids=(--flow-max-ids "$(bench_uint -m "$OPTARG")") ;;
    k) keep=1 ;;
    P) profile=1 ;;
    *) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
[ ${#maxids[@]} -gt 0 ] || maxids=(--flow-max-ids $((records + 1)))

command -v kcat >/dev/null || die "kcat is not installed"
command -v jq >/dev/null || die "jq is not installed"
bench_build build/eosaudit build/bench/bench_flow
bench_broker_up

bench_work
# bench_cleanup deletes $topic (the source) unless -k; the sink here.
src="bench-flow-$(date +%s)" topic=""
sink="$src-sink" group="$src-g"
trap 'bench_cleanup; [ "$keep" -eq 1 ] || bench_topic_delete "$sink"' EXIT

say "producing $(bench_fmt "$records") records into $src ($parts partitions)"
topic="$src"
prod_rps=$(bench_topic_fill "$src" "$parts" "$records") || die "cannot fill topic $src"
say "produced at $(bench_fmt "$prod_rps") records/s"
bench_topic_create "$sink" "$parts"
say "eosaudit process (exactly-once) $src -> $sink"
t0=$(bench_now)
out="$("$EOSAUDIT" process -b "$BROKER" -q --source "$src" --sink "$sink" \
         --group "$group" --batch 5000 --idle-exit-ms 3000 2>"$work/process.err")" ||
  { cat "$work/process.err" >&2; die "eosaudit process failed"; }
t1=$(bench_now)
[ "$(bench_json_int "$out" produced)" = "$records" ] ||
  die "eosaudit process produced $(bench_json_int "$out" produced) records, not $records"
proc_rps=$(bench_rate "$records" "$(bench_secs "$t0" "$t1" | awk '{ print $1 - 3 }')")
say "processed at $(bench_fmt "$proc_rps") records/s (its 3 s idle exit left out)"
say "counting (and warming the page cache) with kcat"
got=$(bench_topic_count "$src")
[ "$got" = "$records" ] || die "the source has $got records, not $records"
got=$(bench_topic_count "$sink")
[ "$got" = "$records" ] || die "the sink has $got committed records, not $records"

runs="$BENCH_RESULTS/flow_runs.csv"
summary="$BENCH_RESULTS/flow.csv"
bench_begin
echo "rep,tool,records,seconds,records_per_s,max_rss_kib,cpu_seconds" >"$runs"
total=$((2 * records))

# The flow's part of ledger $1, in bytes: its tables' pages (dbstat) and
# its files (<ledger>-ids/*.flow, and the batches' log *.flowlog); empty
# when sqlite3 has no dbstat.
flow_bytes=""
flow_ledger_bytes() {
  local t f=0 x
  t=$(sqlite3 "$1" "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'flow%'" 2>/dev/null) || return 0
  for x in "$1"-ids/*.flow "$1"-ids/*.flowlog; do
    [ -f "$x" ] && f=$((f + $(stat -c %s "$x")))
  done
  echo $((t + f))
}

# run_one TOOL REP: one timed read of both topics; appends to $runs.
run_one() {
  local tool="$1" rep="$2" t0 t1 secs rss cpu db rc=0 f
  local tm=(/usr/bin/time -f '%M %U %S' -o "$work/rss")
  t0=$(bench_now)
  case "$tool" in
    kcat)
      "${tm[@]}" sh -c 'for t in "$@"; do
          kcat -b "'"$BROKER"'" -C -e -q -o beginning -X isolation.level=read_committed \
            -X queued.min.messages=1000000 \
            -f "%h\n" -t "$t" >/dev/null || exit 1; done' sh "$src" "$sink" ||
        die "kcat failed" ;;
    flow|revival)
      db="$(bench_db_new "$tool-$rep")"
      local mx=("${maxids[@]}")
      [ "$tool" = flow ] || mx=(--flow-max-ids $((records / 4 > 0 ? records / 4 : 1)))
      "${tm[@]}" "$EOSAUDIT" scan -b "$BROKER" -t "$sink" --source "$src" \
        --processor-group "$group" "${mx[@]}" \
        --db "$db" --json -q --no-progress >"$work/flow.json" || rc=$?
      # 0: clean; anything else is a wrong verdict or an error here.
      if [ "$rc" -ne 0 ]; then
        mkdir -p "$BENCH_RESULTS"
        cp "$work/flow.json" "$BENCH_RESULTS/flow-failed.json"
        jq -c '.flow | del(.evidence)' "$work/flow.json" >&2 || true
        die "the flow scan exited $rc (JSON in $BENCH_RESULTS/flow-failed.json)"
      fi
      f="$(jq -c '.flow | [.source_records, .delivered, .lost, .duplicated, .unexpected, .pending]' "$work/flow.json")"
      [ "$f" = "[$records,$records,0,0,0,0]" ] ||
        die "flow verdict [source_records, delivered, lost, duplicated, unexpected, pending] = $f, not [$records,$records,0,0,0,0]"
      [ "$tool" = revival ] || [ -n "$flow_bytes" ] ||
        flow_bytes=$(flow_ledger_bytes "$db")
      bench_db_rm "$db" ;;
    plain)
      db="$(bench_db_new "plain-$rep")"
      "${tm[@]}" "$EOSAUDIT" scan -b "$BROKER" -t "$src,$sink" --db "$db" \
        --json -q --no-progress >"$work/plain.json" || rc=$?
      [ "$rc" -le 1 ] || die "the plain scan exited $rc"
      [ "$(jq .records_total "$work/plain.json")" = "$total" ] ||
        die "the plain scan counted $(jq .records_total "$work/plain.json") records, not $total"
      bench_db_rm "$db" ;;
  esac
  t1=$(bench_now)
  secs=$(bench_secs "$t0" "$t1")
  read -r rss cpu < <(tail -n 1 "$work/rss" | awk '{ printf "%d %.2f\n", $1, $2 + $3 }')
  echo "$rep,$tool,$total,$secs,$(bench_rate "$total" "$secs"),$rss,$cpu" >>"$runs"
  say "rep $rep: $tool $secs s, CPU $cpu s, max RSS $((rss / 1024)) MiB"
}
bench_rounds "$reps" run_one kcat flow revival plain

label() {
  case "$1" in
    kcat) echo "kcat, source then sink (-f '%h\n', queued.min.messages=1000000)" ;;
    flow) echo "eosaudit scan --source (the flow audit)" ;;
    revival) echo "the flow audit, --flow-max-ids $((records / 4)) (revival)" ;;
    plain) echo "eosaudit scan of both as plain topics" ;;
  esac
}

echo "tool,label,median_records_per_s,min_records_per_s,max_records_per_s,reps,median_seconds,median_max_rss_mib,median_cpu_seconds" >"$summary"
bench_out "source $src: $(bench_fmt "$records") records of 100 bytes, $parts partitions; sink $sink written by eosaudit process (exactly-once, 5,000 records per transaction); read_committed, $reps runs per reader (interleaved); records/s count both topics ($(bench_fmt "$total") records); flow scan ${maxids[*]}"
bench_out ""
bench_out "| reader | records/s (median) | min | max | s (median) | CPU s (median) | max RSS MiB (median) |"
bench_out "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
declare -A med cpu_med
for t in kcat flow revival plain; do
  read -r m lo hi < <(bench_col "$runs" 5 2 "$t" | bench_stats)
  read -r s _ _ < <(bench_col "$runs" 4 2 "$t" | bench_stats)
  read -r r _ _ < <(bench_col "$runs" 6 2 "$t" | bench_stats)
  read -r c _ _ < <(bench_col "$runs" 7 2 "$t" | bench_stats)
  r=$(awk -v k="$r" 'BEGIN { printf "%.0f", k / 1024 }')
  med[$t]=$m cpu_med[$t]=$c
  echo "$t,$(label "$t"),$m,$lo,$hi,$reps,$s,$r,$c" >>"$summary"
  bench_out "| $(label "$t") | $(bench_fmt "$m") | $(bench_fmt "$lo") | $(bench_fmt "$hi") | $s | $c | $r |"
done
bench_out ""
bench_out "flow/kcat = $(awk -v a="${med[flow]}" -v b="${med[kcat]}" 'BEGIN { printf "%.2f", a / b }') (records/s); flow/plain = $(awk -v a="${med[flow]}" -v b="${med[plain]}" 'BEGIN { printf "%.2f", a / b }'); CPU s flow - plain = $(awk -v a="${cpu_med[flow]}" -v b="${cpu_med[plain]}" 'BEGIN { printf "%.2f", a - b }')"
bench_out "revival/flow = $(awk -v a="${cpu_med[revival]}" -v b="${cpu_med[flow]}" 'BEGIN { printf "%.2f", a / b }') (CPU s; wall: $(awk -v a="${med[flow]}" -v b="${med[revival]}" 'BEGIN { printf "%.2f", a / b }'))"
[ -z "$flow_bytes" ] ||
  bench_out "the flow's part of the ledger after a flow scan: $(bench_fmt "$flow_bytes") bytes, $(awk -v b="$flow_bytes" -v n="$records" 'BEGIN { printf "%.0f", b / n }') bytes per source id (its flow_* tables' pages, its .flow files and its log)"
bench_out "(eosaudit produce wrote the source at $(bench_fmt "$prod_rps") records/s, eosaudit process copied it at $(bench_fmt "$proc_rps") records/s)"
bench_out "load average at end: $(bench_load)"

# Memory per outstanding id, from outside the engine: bench_flow's max RSS
# with the sink L records behind the source (L outstanding ids at the
# peak), at two values of L; the slope is the cost of one more id.
mem_at() { # mem_at LAG: max RSS in KiB
  /usr/bin/time -f '%M' -o "$work/rss" "$BENCH_ROOT/build/bench/bench_flow" \
    -n $(($1 + 200000)) -l "$1" -m $(($1 + 1000)) >"$work/bench_flow.out" ||
    die "bench_flow failed"
  tail -n 1 "$work/rss"
}
l1=$((records / 10)) l2=$((records / 5))
[ "$l1" -ge 100000 ] || { l1=100000 l2=200000; }
r1=$(mem_at "$l1")
r2=$(mem_at "$l2")
claim="$(sed -n 's/.*(\([0-9]*\) bytes per live id).*/\1/p' "$work/bench_flow.out")"
per_id=$(awk -v a="$r1" -v b="$r2" -v l1="$l1" -v l2="$l2" 'BEGIN { printf "%.0f", (b - a) * 1024 / (l2 - l1) }')
bench_out ""
bench_out "memory per outstanding id (bench_flow, the sink $(bench_fmt "$l1") then $(bench_fmt "$l2") records behind): max RSS $((r1 / 1024)) MiB then $((r2 / 1024)) MiB: $per_id bytes per id from outside; the engine's own account says $claim"

if [ "$profile" -eq 1 ]; then
  if command -v perf >/dev/null; then
    say "profiling one flow scan (perf record -g)"
    db="$(bench_db_new prof)"
    perf record -q -g -o "$work/perf.data" -- "$EOSAUDIT" scan -b "$BROKER" \
      -t "$sink" --source "$src" --processor-group "$group" \
      "${maxids[@]}" --db "$db" -q --no-progress \
      >/dev/null 2>"$work/perf.err" || true
    perf report -i "$work/perf.data" --no-children --stdio --percent-limit 1 \
      2>/dev/null | grep -v '^$' >"$BENCH_RESULTS/flow-perf.txt" || true
    perf report -i "$work/perf.data" --no-children --stdio -g none \
      --sort comm,dso,sym --percent-limit 1 2>/dev/null |
      grep -E '^ +[0-9]' >"$BENCH_RESULTS/flow-perf-sym.txt" || true
    bench_out ""
    bench_out "perf (--no-children) of one flow scan, by library (>= 1 %):"
    while read -r line; do bench_out "    $line"; done < <(perf report -i "$work/perf.data" \
      --no-children --stdio -g none --sort dso --percent-limit 1 2>/dev/null |
      grep -E '^ +[0-9]' | head -n 8)
    bench_out "by thread, library and symbol (>= 1 %):"
    while read -r line; do bench_out "    $line"; done < <(head -n 20 "$BENCH_RESULTS/flow-perf-sym.txt")
    bench_out "(full report: build/bench-results/flow-perf.txt)"
  else
    say "perf is not installed; no profile"
  fi
fi
say "results: $summary, $runs, $BENCH_MD"
