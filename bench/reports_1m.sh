#!/usr/bin/env bash
# bench/reports_1m.sh - /api/v1/summary and /metrics against a ledger of
# 1,000,000 (partition, producer) pairs: latency with wrk.
#
# usage: bench/reports_1m.sh [-p PARTITIONS] [-k PRODUCERS] [-d SECONDS]
#                            [-B OTHER_EOSAUDIT] [-t TOPIC] [-K]
#   -p PARTITIONS  partitions of the fresh topic (100)
#   -k PRODUCERS   producer names, each writing one record to every
#                  partition (10000): PARTITIONS x PRODUCERS pairs
#   -d SECONDS     wrk duration per endpoint (10)
#   -B BINARY      also measure this eosaudit (say, one built from an older
#                  commit: "before"); its own ledger, as the schemas differ
#   -t TOPIC       use this existing topic instead; -K keeps the topic
#
# build/bench/gen_pairs writes the topic.  For each binary (build/eosaudit,
# then -B's): eosaudit scan audits the whole topic into a fresh ledger on
# /var/tmp, then eosaudit serve --listen opens that ledger (nothing left to
# audit: it idles at the end of the topic) and wrk (bench/wrk_report.lua),
# 1 thread, 1 connection, back to back, hits each endpoint for SECONDS.
# Then the same with 4 connections (concurrent readers).
# Writes build/bench-results/reports_1m.csv and reports_1m.md.
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

parts=100 producers=10000 secs=10 other="" topic="" keep=0
while getopts "p:k:d:B:t:Kh" o; do
  case "$o" in
    p) parts=$(bench_uint -p "$OPTARG") ;;
    k) producers=$(bench_uint -k "$OPTARG") ;;
    d) secs=$(bench_uint -d "$OPTARG") ;;
    B) other="$(realpath "$OPTARG")" ;;
    t) topic="$OPTARG"; keep=1 ;;
    K) keep=1 ;;
    *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
for c in wrk curl; do
  command -v "$c" >/dev/null || die "$c is not installed"
done
[ -z "$other" ] || [ -x "$other" ] || die "$other is not an executable"

bench_build build/eosaudit build/bench/gen_pairs
bench_broker_up

serve_pid=""
BENCH_PIDS="serve_pid"
bench_work

if [ -z "$topic" ]; then
  topic="bench-reports-$(date +%s)"
  bench_topic_create "$topic" "$parts"
  say "generating $(bench_fmt $((parts * producers))) pairs into $topic"
  "$BENCH_ROOT/build/bench/gen_pairs" -b "$BROKER" -t "$topic" -p "$parts" \
    -k "$producers" -c 1 -q --json >/dev/null || die "gen_pairs failed"
fi

port=$((18900 + $$ % 800))
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
  port=$((port + 1))
done
url="http://127.0.0.1:$port"

summary="$BENCH_RESULTS/reports_1m.csv"
bench_begin
echo "binary,endpoint,connections,requests,requests_per_s,p50_ms,p99_ms,max_ms,errors,pairs,scan_seconds" >"$summary"

measure() {
  local label="$1" bin="$2" db out t0 scan_s pairs path conns res
  db="$(bench_db_new "reports-$label")"
  say "$label: scanning $topic into $db"
  t0=$(bench_now)
  out="$("$bin" scan -b "$BROKER" -t "$topic" --db "$db" --json -q --no-progress)" ||
    die "$label: eosaudit scan failed or found anomalies"
  scan_s=$(bench_secs "$t0" "$(bench_now)")
  pairs="$(bench_json_int "$out" pairs)"
  "$bin" serve -b "$BROKER" -t "$topic" --db "$db" --listen "127.0.0.1:$port" -q \
    >"$work/serve.log" 2>&1 &
  serve_pid=$!
  until curl -sf -o /dev/null "$url/api/v1/summary"; do
    kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.log" >&2; die "eosaudit serve exited"; }
    sleep 0.1
  done
  curl -sf "$url/api/v1/summary" | grep -Eq "\"pairs\": ?$pairs[,}]" ||
    die "$label: the summary does not say $pairs pairs"
  for conns in 1 4; do
    for path in /api/v1/summary /metrics; do
      res="$(WRK_DELAY_MS=0 wrk -t1 -c"$conns" -d"${secs}s" --timeout 10s \
               -s "$BENCH_ROOT/bench/wrk_report.lua" "$url$path" | grep '^WRK_RESULT')" ||
        die "no result from wrk"
      awk -v b="$label" -v p="$path" -v c="$conns" -v n="$pairs" -v s="$scan_s" '{
          for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          printf "%s,%s,%d,%d,%.1f,%.2f,%.2f,%.2f,%d,%s,%s\n", b, p, c, v["requests"],
            v["requests"] / (v["duration_us"] / 1e6), v["p50_us"] / 1000,
            v["p99_us"] / 1000, v["max_us"] / 1000, v["errors"] + v["status_errors"], n, s }' \
        <<<"$res" >>"$summary"
      say "$label: $path, $conns conn: $(tail -n 1 "$summary")"
    done
  done
  kill -TERM "$serve_pid" 2>/dev/null || true
  wait "$serve_pid" || true
  serve_pid=""
  bench_db_rm "$db"
}

[ -z "$other" ] || measure before "$other"
measure after "$EOSAUDIT"

bench_out "topic $topic: $(bench_fmt $((parts * producers))) records, one per (partition, producer) pair ($parts partitions x $(bench_fmt "$producers") producers); ledger on /var/tmp; eosaudit serve idle on the audited ledger; wrk 1 thread, ${secs} s per row, back to back"
bench_out ""
bench_out "| binary | endpoint | connections | requests/s | p50 ms | p99 ms | max ms | errors | pairs in the ledger | scan s |"
bench_out "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
tail -n +2 "$summary" | while IFS=, read -r b p c n rps p50 p99 pmax errs pairs scan_s; do
  bench_out "| $b | $p | $c | $rps | $p50 | $p99 | $pmax | $errs | $(bench_fmt "$pairs") | $scan_s |"
done
bench_out ""
bench_out "load average at end: $(bench_load)"
say "results: $summary, $BENCH_MD"
