#!/usr/bin/env bash
# bench/producer.sh - the reference producer (eosaudit produce) next to
# Kafka's ProducerPerformance, both idempotent, same record size.
#
# usage: bench/producer.sh [-n RECORDS] [-p PARTITIONS] [-s SIZE] [-r REPS]
#   -n RECORDS     records per run (2000000)
#   -p PARTITIONS  partitions of each fresh topic (12)
#   -s SIZE        value size in bytes (100)
#   -r REPS        runs per producer (3), interleaved, order rotated
#
# Both run with acks=all, enable.idempotence=true,
# max.in.flight.requests.per.connection=5 and linger.ms=5, and otherwise
# their own defaults:
#   eosaudit produce         librdkafka: batch.size 1000000, batch.num.messages
#                            10000; keys NAME-n, murmur2 partitioning, three
#                            eos.* headers per record
#   ProducerPerformance      Java client: batch.size 16384, no key (sticky
#                            partitioner), no headers, random payload
#   ProducerPerformance big  the same with batch.size=1000000, librdkafka's
# Each producer writes to its own topic.  records/s is taken from the tools'
# own figures (eosaudit's elapsed_ms, ProducerPerformance's records/sec,
# neither counts process start) and from our wall clock of the whole command.
# Writes build/bench-results/producer.csv (summary), producer_runs.csv and
# producer.md.
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

records=2000000 parts=12 size=100 reps=3
while getopts "n:p:s:r:h" o; do
  case "$o" in
    n) records=$(bench_uint -n "$OPTARG") ;;
    p) parts=$(bench_uint -p "$OPTARG") ;;
    s) size=$(bench_uint -s "$OPTARG") ;;
    r) reps=$(bench_uint -r "$OPTARG") ;;
    *) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done

bench_build build/eosaudit
bench_broker_up

tools=(eosaudit pperf pperf_big)
bench_topics bench-prod "$parts" "${tools[@]}"

runs="$BENCH_RESULTS/producer_runs.csv"
summary="$BENCH_RESULTS/producer.csv"
bench_begin
echo "rep,tool,records,wall_seconds,wall_records_per_s,own_records_per_s,p99_ms" >"$runs"

idem=(acks=all enable.idempotence=true max.in.flight.requests.per.connection=5 linger.ms=5)

run_one() {
  local tool="$1" rep="$2" t0 t1 out secs own p99="" got
  local extra=()
  t0=$(bench_now)
  case "$tool" in
    eosaudit)
      out="$("$EOSAUDIT" produce -b "$BROKER" -t "${topic[$tool]}" --producer "bench-prod-$rep" \
               -n "$records" --size "$size" -X linger.ms=5 -q --json 2>/dev/null)" ||
        die "eosaudit produce failed"
      got="$(bench_json_int "$out" delivered)"
      own=$(bench_rate "$got" "$(awk -v ms="$(bench_json_int "$out" elapsed_ms)" 'BEGIN { print ms / 1000 }')") ;;
    pperf | pperf_big)
      [ "$tool" = pperf_big ] && extra=(batch.size=1000000)
      out="$("$KAFKA_SH" tool org.apache.kafka.tools.ProducerPerformance \
               --topic "${topic[$tool]}" --num-records "$records" --record-size "$size" \
               --throughput -1 --producer-props bootstrap.servers="$BROKER" "${idem[@]}" \
               "${extra[@]}" 2>"/tmp/bench-producer-$$.err")" ||
        { cat "/tmp/bench-producer-$$.err" >&2; die "ProducerPerformance failed"; }
      rm -f "/tmp/bench-producer-$$.err"
      read -r got own p99 < <(bench_pperf_summary "$out") ;;
  esac
  t1=$(bench_now)
  [ "$got" = "$records" ] || die "$tool delivered ${got:-?} records, not $records"
  secs=$(bench_secs "$t0" "$t1")
  echo "$rep,$tool,$got,$secs,$(bench_rate "$got" "$secs"),$own,$p99" >>"$runs"
  say "rep $rep: $tool $secs s"
}

bench_rounds "$reps" run_one "${tools[@]}"

label() {
  case "$1" in
    eosaudit) echo "eosaudit produce (librdkafka, eos.* headers)" ;;
    pperf) echo "ProducerPerformance (Java defaults: batch.size 16384)" ;;
    pperf_big) echo "ProducerPerformance batch.size=1000000" ;;
  esac
}
bench_out "$(bench_fmt "$records") records of $size bytes per run into a fresh $parts-partition topic per producer; acks=all enable.idempotence=true max.in.flight.requests.per.connection=5 linger.ms=5; $reps runs each (interleaved)"
bench_out ""
bench_out "| producer | records/s, own figure (median) | min | max | records/s, wall incl. start (median) | s (median) |"
bench_out "| --- | ---: | ---: | ---: | ---: | ---: |"
echo "tool,label,median_own_records_per_s,min_own_records_per_s,max_own_records_per_s,median_wall_records_per_s,median_wall_seconds" >"$summary"
for t in "${tools[@]}"; do
  read -r m lo hi < <(bench_col "$runs" 6 2 "$t" | bench_stats)
  read -r w _ _ < <(bench_col "$runs" 5 2 "$t" | bench_stats)
  read -r s _ _ < <(bench_col "$runs" 4 2 "$t" | bench_stats)
  echo "$t,$(label "$t"),$m,$lo,$hi,$w,$s" >>"$summary"
  bench_out "| $(label "$t") | $(bench_fmt "$m") | $(bench_fmt "$lo") | $(bench_fmt "$hi") | $(bench_fmt "$w") | $s |"
done
bench_out ""
bench_out "own figure: eosaudit's elapsed_ms (first send to last delivery report), ProducerPerformance's records/sec; neither includes process (JVM) start."
bench_out "load average at end: $(bench_load)"
say "results: $summary, $runs, $BENCH_MD"
