#!/usr/bin/env bash
# bench/throughput.sh - how fast eosaudit scan reads a topic to its end,
# next to kcat and Kafka's ConsumerPerformance on the same topic.
#
# usage: bench/throughput.sh [-n RECORDS] [-p PARTITIONS] [-r REPS]
#                            [-t TOPIC] [-k] [-P]
#   -n RECORDS     records to produce (5000000), 100 bytes each, with the
#                  eos.* headers, by eosaudit produce (idempotent)
#   -p PARTITIONS  partitions of the fresh topic (12)
#   -r REPS        runs of every reader (3), interleaved, the order rotated
#                  each round so that no reader always goes first
#   -t TOPIC       read this existing topic instead of producing one
#   -k             keep the topic (it is deleted at the end otherwise)
#   -P             profile one eosaudit scan with perf even when it keeps up
#                  (done anyway when eosaudit/kcat < 0.9)
#
# Every reader is read_committed and reads from the beginning to the end:
#   kcat            kcat -C -e -q -o beginning -X isolation.level=read_committed > /dev/null
#   kcat+tcmalloc   the same with LD_PRELOAD=libtcmalloc_minimal (eosaudit links tcmalloc)
#   kcat -f '%h'    kcat printing each record's headers instead of its value:
#                   it parses every record's headers (rd_kafka_message_headers),
#                   as eosaudit must; plain kcat never does.  With eosaudit's
#                   fetch wake-up (-X topic.metadata.refresh.interval.ms=50,
#                   metadata.max.age.ms=900000; auditor/audit/settings.c):
#                   without it librdkafka < 2.2 sleeps 1 s whenever the slower
#                   reader's queue fills, and this kcat took 18.6 s, not 5
#   ConsumerPerformance  --consumer.config with isolation.level=read_committed;
#                   its own nMsg.sec (and fetch.nMsg.sec, which leaves out
#                   the group join), and our wall clock including JVM start
#   bench_read      build/bench/bench_read: the topic read with nothing
#                   audited, each record's headers parsed as eosaudit parses
#                   them and its eos.msgid hashed (-H), with eosaudit's fetch
#                   settings and tcmalloc: on 1 thread, on 2 consumers (one
#                   per thread), on 2 threads fed by per-partition queues
#                   (rd_kafka_queue_get_partition): the ceiling of a
#                   partitioned audit on this machine
#   eosaudit        eosaudit scan --db FILE --threads 2 (a fresh ledger under
#                   /var/tmp each run); every record's eos.msgid goes through
#                   the id window
#   eosaudit --threads 1  the same on one thread (no helper)
#   eosaudit --id-window 0  the same without id checks (sequence checks
#                   only), with 2 threads and with 1
# eosaudit links tcmalloc itself (Makefile ALLOC_LIBS): no LD_PRELOAD row.
# records/s = records / wall-clock seconds of the whole command (start-up
# included), except the ConsumerPerformance "own" row.  Writes
# build/bench-results/throughput.csv (summary), throughput_runs.csv (every
# run), throughput.md (the table) and throughput.png (when gnuplot exists).
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

records=5000000 parts=12 reps=3 topic="" keep=0 profile=0
while getopts "n:p:r:t:kPh" o; do
  case "$o" in
    n) records=$(bench_uint -n "$OPTARG") ;;
    p) parts=$(bench_uint -p "$OPTARG") ;;
    r) reps=$(bench_uint -r "$OPTARG") ;;
    t) topic="$OPTARG"; keep=1 ;;
    k) keep=1 ;;
    P) profile=1 ;;
    *) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done

command -v kcat >/dev/null || die "kcat is not installed"
bench_build build/eosaudit build/bench/bench_read
bench_broker_up

bench_work

prod_rps=""
bench_topic_prepare bench-tput "$parts" "$records"

printf 'isolation.level=read_committed\nauto.offset.reset=earliest\n' >"$work/consumer.properties"

runs="$BENCH_RESULTS/throughput_runs.csv"
summary="$BENCH_RESULTS/throughput.csv"
bench_begin
rm -f "$BENCH_RESULTS"/throughput-perf*.txt
echo "rep,tool,records,seconds,records_per_s,max_rss_kib,cpu_seconds" >"$runs"

# run_one TOOL REP: one timed read of the whole topic; appends to $runs.
run_one() {
  local tool="$1" rep="$2" t0 t1 secs got out rss cpu db own="" fetch="" hdr
  local x
  local tm=(/usr/bin/time -f '%M %U %S' -o "$work/rss")
  t0=$(bench_now)
  case "$tool" in
    kcat)
      "${tm[@]}" kcat -b "$BROKER" -C -e -q -o beginning \
        -X isolation.level=read_committed -t "$topic" >/dev/null ||
        die "kcat failed"
      got=$records ;;
    kcat_tcmalloc)
      LD_PRELOAD="$TCMALLOC" "${tm[@]}" kcat -b "$BROKER" -C -e -q -o beginning \
        -X isolation.level=read_committed -t "$topic" >/dev/null ||
        die "kcat (tcmalloc) failed"
      got=$records ;;
    kcat_hdrs)
      "${tm[@]}" kcat -b "$BROKER" -C -e -q -o beginning -f '%h\n' \
        -X topic.metadata.refresh.interval.ms=50 -X metadata.max.age.ms=900000 \
        -X isolation.level=read_committed -t "$topic" >/dev/null ||
        die "kcat -f '%h' failed"
      got=$records ;;
    read1 | read2c | read2q)
      case "$tool" in
        read1) x=(-n 1) ;;
        read2c) x=(-n 2) ;;
        read2q) x=(-m queues -n 2) ;;
      esac
      out="$(LD_PRELOAD="$TCMALLOC" "${tm[@]}" "$BENCH_ROOT/build/bench/bench_read" \
               -b "$BROKER" -t "$topic" -H "${x[@]}" 2>/dev/null)" ||
        die "bench_read failed"
      got="${out%% *}" ;;
    cperf)
      out="$("${tm[@]}" "$KAFKA_SH" tool org.apache.kafka.tools.ConsumerPerformance \
               --bootstrap-server "$BROKER" --topic "$topic" --messages "$records" \
               --consumer.config "$work/consumer.properties" \
               --group "bench-cperf-$$-$rep" --timeout 30000 2>"$work/cperf.err")" ||
        { cat "$work/cperf.err" >&2; die "ConsumerPerformance failed"; }
      # Header and values are ", "-separated; pick columns by name.
      hdr="$(grep -m1 'nMsg.sec' <<<"$out")"
      own="$(awk -F', *' -v h="$hdr" '
        BEGIN { n = split(h, H, /, */); for (i = 1; i <= n; i++) c[H[i]] = i }
        $0 != h && NF >= n && $1 ~ /^[0-9]/ {
          print $(c["data.consumed.in.nMsg"]), $(c["nMsg.sec"]), $(c["fetch.nMsg.sec"])
          exit }' <<<"$out")"
      read -r got own fetch <<<"$own"
      [ -n "$own" ] || die "cannot parse ConsumerPerformance output: $out" ;;
    eosaudit | eosaudit_t1 | eosaudit_noids | eosaudit_noids_t1)
      x=(--threads 2)
      case "$tool" in *_t1) x=(--threads 1) ;; esac
      case "$tool" in eosaudit_noids*) x+=(--id-window 0) ;; esac
      db="$(bench_db_new "tput-$tool-$rep")"
      out="$("${tm[@]}" "$EOSAUDIT" scan -b "$BROKER" -t "$topic" --db "$db" \
               --json -q --no-progress "${x[@]}")" || die "eosaudit scan failed or found anomalies"
      got="$(bench_json_int "$out" records_total)"
      bench_db_rm "$db" ;;
  esac
  t1=$(bench_now)
  [ "$got" = "$records" ] || die "$tool read $got records, not $records"
  secs=$(bench_secs "$t0" "$t1")
  read -r rss cpu < <(tail -n 1 "$work/rss" | awk '{ printf "%d %.2f\n", $1, $2 + $3 }')
  if [ "$tool" = cperf ]; then
    {
      echo "$rep,cperf_wall,$got,$secs,$(bench_rate "$got" "$secs"),$rss,$cpu"
      echo "$rep,cperf_own,$got,,$own,,"
      echo "$rep,cperf_fetch,$got,,$fetch,,"
    } >>"$runs"
  else
    echo "$rep,$tool,$got,$secs,$(bench_rate "$got" "$secs"),$rss,$cpu" >>"$runs"
  fi
  say "rep $rep: $tool $secs s"
}

bench_rounds "$reps" run_one kcat kcat_tcmalloc kcat_hdrs read1 read2c read2q cperf eosaudit eosaudit_t1 \
  eosaudit_noids eosaudit_noids_t1

label() {
  case "$1" in
    kcat) echo "kcat" ;;
    kcat_tcmalloc) echo "kcat + tcmalloc (LD_PRELOAD)" ;;
    kcat_hdrs) echo "kcat -f '%h' (parses every record's headers)" ;;
    read1) echo "bench_read -H, 1 thread (no audit)" ;;
    read2c) echo "bench_read -H, 2 consumers (no audit)" ;;
    read2q) echo "bench_read -H, 2 partition queues (no audit)" ;;
    cperf_own) echo "ConsumerPerformance (its nMsg.sec)" ;;
    cperf_fetch) echo "ConsumerPerformance (its fetch.nMsg.sec)" ;;
    cperf_wall) echo "ConsumerPerformance (wall incl. JVM start)" ;;
    eosaudit) echo "eosaudit scan --threads 2 (ledger on disk; ids checked)" ;;
    eosaudit_t1) echo "eosaudit scan --threads 1 (ledger on disk; ids checked)" ;;
    eosaudit_noids) echo "eosaudit scan --threads 2 --id-window 0 (ledger on disk)" ;;
    eosaudit_noids_t1) echo "eosaudit scan --threads 1 --id-window 0 (ledger on disk)" ;;
  esac
}

short() {
  case "$1" in
    kcat) echo "kcat" ;;
    kcat_tcmalloc) echo "kcat|+ tcmalloc" ;;
    kcat_hdrs) echo "kcat -f '%h'|headers parsed" ;;
    read1) echo "bench_read|1 thread" ;;
    read2c) echo "bench_read|2 consumers" ;;
    read2q) echo "bench_read|2 queues" ;;
    cperf_own) echo "ConsumerPerf.|nMsg.sec" ;;
    cperf_fetch) echo "ConsumerPerf.|fetch.nMsg.sec" ;;
    cperf_wall) echo "ConsumerPerf.|wall + JVM start" ;;
    eosaudit) echo "eosaudit|2 thr. + ids" ;;
    eosaudit_t1) echo "eosaudit|1 thr. + ids" ;;
    eosaudit_noids) echo "eosaudit|2 thr. no ids" ;;
    eosaudit_noids_t1) echo "eosaudit|1 thr. no ids" ;;
  esac
}

echo "tool,label,median_records_per_s,min_records_per_s,max_records_per_s,reps,median_seconds,median_max_rss_mib,short,median_cpu_seconds" >"$summary"
bench_out "topic $topic: $(bench_fmt "$records") records of 100 bytes, $parts partitions, read_committed, $reps runs per reader (interleaved)"
bench_out ""
bench_out "| reader | records/s (median) | min | max | s (median) | CPU s (median) | records per CPU s | max RSS MiB |"
bench_out "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
declare -A per_cpu
declare -A med
for t in kcat kcat_tcmalloc kcat_hdrs read1 read2c read2q cperf_own cperf_fetch cperf_wall eosaudit eosaudit_t1 eosaudit_noids eosaudit_noids_t1; do
  read -r m lo hi < <(bench_col "$runs" 5 2 "$t" | bench_stats)
  read -r s _ _ < <(bench_col "$runs" 4 2 "$t" | { grep . || true; } | bench_stats)
  read -r r _ _ < <(bench_col "$runs" 6 2 "$t" | { grep . || true; } | bench_stats)
  read -r c _ _ < <(bench_col "$runs" 7 2 "$t" | { grep . || true; } | bench_stats)
  r=$(awk -v k="$r" 'BEGIN { printf "%.0f", k / 1024 }')
  med[$t]=$m
  # No commas inside a CSV field (chart.gp splits on every comma).
  l=$(label "$t")
  echo "$t,${l//,/;},$m,$lo,$hi,$reps,$s,$r,$(short "$t"),$c" >>"$summary"
  case "$t" in
    cperf_own | cperf_fetch) s="-" r="-" c="-" pc="-" ;;
    *) pc=$(bench_rate "$records" "$c"); per_cpu[$t]=$pc ;;
  esac
  bench_out "| $(label "$t") | $(bench_fmt "$m") | $(bench_fmt "$lo") | $(bench_fmt "$hi") | $s | $c | $(bench_fmt "$pc") | $r |"
done
ratio=$(awk -v a="${med[eosaudit]}" -v b="${med[kcat]}" 'BEGIN { printf "%.2f", a / b }')
ratio_tc=$(awk -v a="${med[eosaudit]}" -v b="${med[kcat_tcmalloc]}" 'BEGIN { printf "%.2f", a / b }')
bench_out ""
bench_out "records/s: records over the wall-clock time of the whole command, start-up included; CPU s: user + system time of the command (the JVM's includes JIT and GC threads);"
bench_out "ConsumerPerformance's own figures leave out JVM start, and fetch.nMsg.sec also the group join."
ratio_cpu=$(awk -v a="${per_cpu[eosaudit]}" -v b="${per_cpu[kcat]}" 'BEGIN { printf "%.2f", a / b }')
bench_out ""
ratio_noids=$(awk -v a="${med[eosaudit_noids]}" -v b="${med[kcat]}" 'BEGIN { printf "%.2f", a / b }')
ratio_t1=$(awk -v a="${med[eosaudit_t1]}" -v b="${med[kcat]}" 'BEGIN { printf "%.2f", a / b }')
ratio_t1_tc=$(awk -v a="${med[eosaudit_t1]}" -v b="${med[kcat_tcmalloc]}" 'BEGIN { printf "%.2f", a / b }')
ratio_hdrs=$(awk -v a="${med[eosaudit]}" -v b="${med[kcat_hdrs]}" 'BEGIN { printf "%.2f", a / b }')
ratio_t1_hdrs=$(awk -v a="${med[eosaudit_t1]}" -v b="${med[kcat_hdrs]}" 'BEGIN { printf "%.2f", a / b }')
scale=$(awk -v a="${med[eosaudit]}" -v b="${med[eosaudit_t1]}" 'BEGIN { printf "%.2f", a / b }')
scale_noids=$(awk -v a="${med[eosaudit_noids]}" -v b="${med[eosaudit_noids_t1]}" 'BEGIN { printf "%.2f", a / b }')
bench_out "ids checked: eosaudit/kcat = $ratio with 2 threads, $ratio_t1 with 1 (target >= 1.0); eosaudit/(kcat + tcmalloc) = $ratio_tc and $ratio_t1_tc (target >= 0.8); per CPU second (2 threads), eosaudit/kcat = $ratio_cpu"
bench_out "against kcat -f '%h' (every record's headers parsed, as eosaudit must): eosaudit/kcat = $ratio_hdrs with 2 threads, $ratio_t1_hdrs with 1"
ratio_read=$(awk -v a="${med[read1]}" -v b="${med[kcat]}" 'BEGIN { printf "%.2f", a / b }')
ratio_read2=$(awk -v a="${med[read2c]}" -v b="${med[read1]}" 'BEGIN { printf "%.2f", a / b }')
ratio_read2q=$(awk -v a="${med[read2q]}" -v b="${med[read1]}" 'BEGIN { printf "%.2f", a / b }')
bench_out "reading alone (bench_read -H, no audit): 1 thread = $ratio_read x kcat; 2 consumers x$ratio_read2, 2 partition queues x$ratio_read2q of 1 thread"
bench_out "without id checks (--id-window 0, 2 threads) eosaudit/kcat = $ratio_noids; 1 -> 2 threads: x$scale with ids, x$scale_noids without"
[ -n "$prod_rps" ] && bench_out "(eosaudit produce wrote the topic at $(bench_fmt "$prod_rps") records/s)"
bench_out "load average at end: $(bench_load)"

if [ "$profile" -eq 1 ] || awk -v r="$ratio" 'BEGIN { exit !(r < 0.9) }'; then
  if command -v perf >/dev/null; then
    say "profiling one eosaudit scan (perf record -g)"
    db="$(bench_db_new prof)"
    perf record -q -g -o "$work/perf.data" -- "$EOSAUDIT" scan -b "$BROKER" -t "$topic" \
      --db "$db" -q --no-progress >/dev/null 2>"$work/perf.err" || true
    perf report -i "$work/perf.data" --no-children --stdio --percent-limit 1.5 \
      2>/dev/null | grep -v '^$' >"$BENCH_RESULTS/throughput-perf.txt" || true
    perf report -i "$work/perf.data" --no-children --stdio -g none --sort comm,dso \
      2>/dev/null | grep -E '^ +[0-9]' >"$BENCH_RESULTS/throughput-perf-thread.txt" || true
    bench_out ""
    bench_out "perf (--no-children) of one eosaudit scan, by thread and library:"
    while read -r line; do bench_out "    $line"; done < <(head -n 10 "$BENCH_RESULTS/throughput-perf-thread.txt")
    bench_out "(full report: build/bench-results/throughput-perf.txt)"
  else
    say "perf is not installed; no profile"
  fi
fi

if command -v gnuplot >/dev/null; then
  gnuplot -e "results='$BENCH_RESULTS'" "$BENCH_ROOT/bench/chart.gp" &&
    say "chart: $BENCH_RESULTS/throughput.png"
fi
say "results: $summary, $runs, $BENCH_MD"
