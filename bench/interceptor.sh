#!/usr/bin/env bash
# bench/interceptor.sh - what the Java interceptor (build/eosaudit-
# interceptor.jar) costs Kafka's ProducerPerformance: the same run with and
# without interceptor.classes, in one broker, rounds interleaved.
#
# usage: bench/interceptor.sh [-n RECORDS] [-p PARTITIONS] [-s SIZE] [-r REPS] [-k]
#   -n RECORDS     records per run (1000000)
#   -p PARTITIONS  partitions of each fresh topic (12)
#   -s SIZE        value size in bytes (100)
#   -r REPS        runs per variant (5), interleaved, order rotated
#   -k             the interceptor with eos.msgid=key (the records have no
#                  key: measures the lookup, stamps no id)
#
# Both run with acks=all, enable.idempotence=true, linger.ms=5 and the Java
# client's other defaults (batch.size 16384, sticky partitioner, no key).
# The interceptor adds four headers per record (eos.producer, eos.epoch,
# eos.seq, eos.scope: some 60 bytes).  records/s is ProducerPerformance's
# own figure (no JVM start).  Writes build/bench-results/interceptor.csv
# (summary), interceptor_runs.csv and interceptor.md; the overhead line is
# 1 - median(with) / median(without).  Then bench/InterceptorCost.java
# times onSend alone (CPU ns per record, one thread, no client, no
# broker) and counts the bytes the stamps add, to tell the interceptor's
# own cost from the cost of carrying its headers.
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

records=1000000 parts=12 size=100 reps=5 msgid=none
while getopts "n:p:s:r:kh" o; do
  case "$o" in
    n) records=$(bench_uint -n "$OPTARG") ;;
    p) parts=$(bench_uint -p "$OPTARG") ;;
    s) size=$(bench_uint -s "$OPTARG") ;;
    r) reps=$(bench_uint -r "$OPTARG") ;;
    k) msgid=key ;;
    *) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done

JAR="$BENCH_ROOT/build/eosaudit-interceptor.jar"
bench_build build/eosaudit-interceptor.jar
bench_broker_up

variants=(plain interceptor)
bench_topics bench-icpt "$parts" "${variants[@]}"

runs="$BENCH_RESULTS/interceptor_runs.csv"
summary="$BENCH_RESULTS/interceptor.csv"
bench_begin
echo "rep,variant,records,own_records_per_s,p99_ms" >"$runs"

props=(acks=all enable.idempotence=true linger.ms=5)

run_one() {
  local v="$1" rep="$2" out got own p99 extra=()
  [ "$v" = interceptor ] &&
    extra=(interceptor.classes=io.eosaudit.interceptor.EosAuditInterceptor
           eos.producer="bench-icpt-$rep" eos.msgid="$msgid")
  out="$(KAFKA_EXTRA_CLASSPATH="$JAR" "$KAFKA_SH" tool \
           org.apache.kafka.tools.ProducerPerformance \
           --topic "${topic[$v]}" --num-records "$records" --record-size "$size" \
           --throughput -1 --producer-props bootstrap.servers="$BROKER" "${props[@]}" \
           "${extra[@]}" 2>"/tmp/bench-interceptor-$$.err")" ||
    { cat "/tmp/bench-interceptor-$$.err" >&2; die "ProducerPerformance failed"; }
  rm -f "/tmp/bench-interceptor-$$.err"
  read -r got own p99 < <(bench_pperf_summary "$out")
  [ "$got" = "$records" ] || die "$v delivered ${got:-?} records, not $records"
  echo "$rep,$v,$got,$own,$p99" >>"$runs"
  say "rep $rep: $v $(bench_fmt "$own") records/s"
}

bench_rounds "$reps" run_one "${variants[@]}"

bench_out "$(bench_fmt "$records") records of $size bytes per run into a fresh $parts-partition topic per variant; acks=all enable.idempotence=true linger.ms=5; eos.msgid=$msgid; $reps runs each (interleaved)"
bench_out ""
bench_out "| ProducerPerformance | records/s (median) | min | max | p99 ms (median) |"
bench_out "| --- | ---: | ---: | ---: | ---: |"
echo "variant,median_records_per_s,min_records_per_s,max_records_per_s,median_p99_ms" >"$summary"
declare -A med
for v in "${variants[@]}"; do
  read -r m lo hi < <(bench_col "$runs" 4 2 "$v" | bench_stats)
  read -r p _ _ < <(bench_col "$runs" 5 2 "$v" | bench_stats)
  med[$v]="$m"
  echo "$v,$m,$lo,$hi,$p" >>"$summary"
  bench_out "| $v | $(bench_fmt "$m") | $(bench_fmt "$lo") | $(bench_fmt "$hi") | $p |"
done
bench_out ""
bench_out "overhead of the interceptor: $(awk -v a="${med[interceptor]}" -v b="${med[plain]}" \
  'BEGIN { printf "%.1f %%", (1 - a / b) * 100 }') of the median throughput"
read -r ns hbytes _ < <(java -Xmx256m -cp "$JAR:$BENCH_ROOT/deploy/kafka/lib/*" \
  -Dlog4j2.configurationFile="$BENCH_ROOT/deploy/kafka/log4j2-tools.properties" \
  "$BENCH_ROOT/bench/InterceptorCost.java" 5000000) || die "InterceptorCost failed"
bench_out "onSend alone: $ns ns of CPU per record (one thread, 5,000,000 records, no client, no broker); the stamps add $hbytes bytes of header keys and values to each record"
bench_out "load average at end: $(bench_load)"
say "results: $summary, $runs, $BENCH_MD"
