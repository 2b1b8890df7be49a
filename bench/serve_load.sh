#!/usr/bin/env bash
# bench/serve_load.sh - HTTP load on eosaudit serve while it ingests a topic
# at full speed: the endpoints' latency, and what the load costs the ingest.
#
# usage: bench/serve_load.sh [-n RECORDS] [-p PARTITIONS] [-r REPS]
#                            [-t TOPIC] [-k] [-l LOADS]
#   -n RECORDS     records in the fresh topic (5000000), 100 bytes, eos.* headers
#   -p PARTITIONS  partitions (12)
#   -r REPS        runs of every load (3), interleaved, order rotated
#   -t TOPIC       ingest this existing topic instead; -k keeps the topic
#   -l LOADS       these loads only, comma-separated (none is always run)
#
# Every run starts eosaudit serve --listen 127.0.0.1:PORT on a fresh ledger
# under /var/tmp and lets it ingest the whole topic, with one of these loads
# (wrk, bench/wrk_report.lua) running from the moment HTTP answers until
# the ledger holds every record:
#   none            no request (the baseline)
#   metrics paced   GET /metrics, 1 connection, 20 ms between requests
#                   (about 50 requests/s, far above any Prometheus scrape)
#   summary paced   GET /api/v1/summary, the same
#   metrics flood   GET /metrics, 1 thread, 4 connections, no pause
#   summary flood   GET /api/v1/summary, the same
#   hostile         tests/integration/hostile_http.py attack: slow clients
#                   above the connection limit, a connect flood, oversized
#                   and malformed requests, and its probe (/healthz,
#                   /readyz, /metrics, /api/v1/summary every 0.5 s, whose
#                   latencies the row gives); t_62 checks the answers
# The ingest rate is the slope of the ledger's sum(records) (sqlite3, every
# 50 ms) between 10 % and 90 % of the topic, so start-up is left out.
# Last, the CPU cost of one request of each endpoint on an idle serve
# (serve's CPU time over 3 s of back-to-back requests, per request).  The
# drop is against the baseline's median (target: under 5 %).  On this
# 2-core machine the flood's wrk itself takes CPU from serve and the broker;
# the paced rows are the realistic ones.
# Writes build/bench-results/serve_load.csv (summary), serve_load_runs.csv
# and serve_load.md.
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

records=5000000 parts=12 reps=3 topic="" keep=0
loads=(none metrics_paced summary_paced metrics_flood summary_flood hostile)
while getopts "n:p:r:t:kl:h" o; do
  case "$o" in
    n) records=$(bench_uint -n "$OPTARG") ;;
    p) parts=$(bench_uint -p "$OPTARG") ;;
    r) reps=$(bench_uint -r "$OPTARG") ;;
    t) topic="$OPTARG"; keep=1 ;;
    k) keep=1 ;;
    l) IFS=, read -r -a want <<<"$OPTARG"
       for l in "${want[@]}"; do
         [[ " ${loads[*]} " == *" $l "* ]] || die "-l: unknown load '$l' (${loads[*]})"
       done
       loads=(none); for l in "${want[@]}"; do [ "$l" = none ] || loads+=("$l"); done ;;
    *) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
for c in wrk sqlite3 curl; do
  command -v "$c" >/dev/null || die "$c is not installed"
done

bench_build build/eosaudit
"$EOSAUDIT" serve --help 2>&1 | grep -q -- '--listen' ||
  die "this eosaudit serve has no --listen flag yet"
bench_broker_up

serve_pid="" wrk_pid=""
BENCH_PIDS="wrk_pid serve_pid"
bench_work

bench_topic_prepare bench-serve "$parts" "$records"

# A free port: one nobody answers on.
port=$((18100 + $$ % 800))
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
  port=$((port + 1))
done
url="http://127.0.0.1:$port"

runs="$BENCH_RESULTS/serve_load_runs.csv"
summary="$BENCH_RESULTS/serve_load.csv"
bench_begin
echo "rep,load,records,ingest_seconds,ingest_records_per_s,requests,requests_per_s,errors,p50_ms,p99_ms,max_ms,serve_cpu_seconds,error_kinds" >"$runs"

held() {
  sqlite3 -readonly -cmd '.timeout 1000' "$1" \
    'select coalesce(sum(records), 0) from partitions' 2>/dev/null || true
}

run_one() {
  local load="$1" rep="$2" db t0 t1 h now path="" wargs=() delay=0 res
  local rate reqs="" rps="" errs="" p50="" p99="" pmax="" kinds="" cpu
  case "$load" in
    metrics_paced) path=/metrics delay=20 wargs=(-t1 -c1) ;;
    summary_paced) path=/api/v1/summary delay=20 wargs=(-t1 -c1) ;;
    metrics_flood) path=/metrics wargs=(-t1 -c4) ;;
    summary_flood) path=/api/v1/summary wargs=(-t1 -c4) ;;
    hostile) path=hostile ;;
  esac
  db="$(bench_db_new "serve-$load-$rep")"
  : >"$work/samples"
  t0=$(bench_now)
  "$EOSAUDIT" serve -b "$BROKER" -t "$topic" --db "$db" --listen "127.0.0.1:$port" -q \
    >"$work/serve.log" 2>&1 &
  serve_pid=$!
  until curl -s -o /dev/null "$url/healthz"; do
    kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.log" >&2; die "eosaudit serve exited"; }
    sleep 0.01
  done
  if [ "$path" = hostile ]; then
    python3 "$BENCH_ROOT/tests/integration/hostile_http.py" "$port" attack --seconds 600 \
      >"$work/hostile.json" 2>"$work/hostile.err" &
    wrk_pid=$!
  elif [ -n "$path" ]; then
    WRK_DELAY_MS=$delay wrk "${wargs[@]}" -d 600s --timeout 10s \
      -s "$BENCH_ROOT/bench/wrk_report.lua" "$url$path" >"$work/wrk.out" 2>&1 &
    wrk_pid=$!
  fi
  while :; do
    now=$(bench_now)
    if [ -f "$db" ]; then
      h=$(held "$db")
      [ -n "$h" ] && echo "$now $h" >>"$work/samples"
      [ "${h:-0}" -ge "$records" ] && break
    fi
    [ $(((now - t0) / 1000000000)) -lt 600 ] || die "serve did not ingest $records records in 600 s"
    kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.log" >&2; die "eosaudit serve exited"; }
    sleep 0.05
  done
  t1=$(bench_now)
  if [ "$path" = hostile ]; then
    kill -INT "$wrk_pid" 2>/dev/null || true
    wait "$wrk_pid" || true
    wrk_pid=""
    # The probe's figures; errors: any answer but a 200 (but /readyz's
    # 503s before the audit's first status).
    read -r reqs rps errs p50 p99 pmax kinds < <(python3 - "$work/hostile.json" \
      "$(bench_secs "$t0" "$t1")" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))["probe"]
bad = sum(n for k, per in p["codes"].items() if k != "/readyz starting"
          for c, n in per.items() if c != "200")
print(p["requests"], "%.1f" % (p["requests"] / float(sys.argv[2])), bad,
      p["p50_ms"], p["p99_ms"], p["max_ms"], "probe")
EOF
    ) || { cat "$work/hostile.err" >&2; die "no result from hostile_http.py"; }
  elif [ -n "$wrk_pid" ]; then
    kill -INT "$wrk_pid" 2>/dev/null || true
    wait "$wrk_pid" || true
    wrk_pid=""
    res="$(grep '^WRK_RESULT' "$work/wrk.out" || true)"
    [ -n "$res" ] || { cat "$work/wrk.out" >&2; die "no result from wrk"; }
    read -r reqs rps errs p50 p99 pmax kinds < <(awk '{
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        printf "%d %.1f %d %.2f %.2f %.2f %s\n", v["requests"],
          v["requests"] / (v["duration_us"] / 1e6), v["errors"] + v["status_errors"],
          v["p50_us"] / 1000, v["p99_us"] / 1000, v["max_us"] / 1000, v["kinds"] }' <<<"$res")
  fi
  # utime + stime of serve (all its threads, HTTP included), in seconds.
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$serve_pid/stat")
  kill -TERM "$serve_pid" 2>/dev/null || true
  wait "$serve_pid" || say "warning: serve exited $? after SIGTERM"
  serve_pid=""
  bench_db_rm "$db"
  # Least-squares slope of records over time, 10 % to 90 % of the topic.
  rate=$(awk -v n="$records" -v t0="$t0" '$2 >= 0.1 * n && $2 <= 0.9 * n {
      x = ($1 - t0) / 1e9; y = $2; k++; sx += x; sy += y; sxx += x * x; sxy += x * y }
    END {
      d = k * sxx - sx * sx
      if (k >= 3 && d > 0) printf "%.0f", (k * sxy - sx * sy) / d; else print "" }' "$work/samples")
  [ -n "$rate" ] || rate=$(bench_rate "$records" "$(bench_secs "$t0" "$t1")")
  echo "$rep,$load,$records,$(bench_secs "$t0" "$t1"),$rate,$reqs,$rps,$errs,$p50,$p99,$pmax,$cpu,$kinds" >>"$runs"
  say "rep $rep: $load: $(bench_fmt "$rate") records/s${p99:+, p99 $p99 ms, $rps req/s}"
}

bench_rounds "$reps" run_one "${loads[@]}"

# The cost of one request, away from the ingest: serve has audited the
# whole topic and idles; wrk sends back to back on one connection for 3 s;
# serve's CPU time over those 3 s per request answered.
idle_cost() {
  local db path c0 c1 hz res
  hz=$(getconf CLK_TCK)
  db="$(bench_db_new serve-idle)"
  "$EOSAUDIT" serve -b "$BROKER" -t "$topic" --db "$db" --listen "127.0.0.1:$port" -q \
    >"$work/serve.log" 2>&1 &
  serve_pid=$!
  until [ -f "$db" ] && [ "$(held "$db")" = "$records" ]; do
    kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.log" >&2; die "eosaudit serve exited"; }
    sleep 0.2
  done
  sleep 1
  for path in /metrics /api/v1/summary; do
    c0=$(awk '{ print $14 + $15 }' "/proc/$serve_pid/stat")
    res="$(WRK_DELAY_MS=0 wrk -t1 -c1 -d3s -s "$BENCH_ROOT/bench/wrk_report.lua" "$url$path" |
             grep '^WRK_RESULT')" || die "no result from wrk"
    c1=$(awk '{ print $14 + $15 }' "/proc/$serve_pid/stat")
    awk -v p="$path" -v t="$((c1 - c0))" -v hz="$hz" '{
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        printf "%s,%d,%.3f,%.2f,%.2f\n", p, v["requests"], 1000 * t / hz / v["requests"],
          v["p50_us"] / 1000, v["p99_us"] / 1000 }' <<<"$res" >>"$work/idle.csv"
  done
  kill -TERM "$serve_pid" 2>/dev/null || true
  wait "$serve_pid" || true
  serve_pid=""
  bench_db_rm "$db"
}
: >"$work/idle.csv"
idle_cost

label() {
  case "$1" in
    none) echo "none (baseline)" ;;
    metrics_paced) echo "/metrics, paced (1 conn, 20 ms pause)" ;;
    summary_paced) echo "/api/v1/summary, paced (1 conn, 20 ms pause)" ;;
    metrics_flood) echo "/metrics, flood (4 conns)" ;;
    summary_flood) echo "/api/v1/summary, flood (4 conns)" ;;
    hostile) echo "hostile clients (t_62's attack; the probe's latencies)" ;;
  esac
}
read -r base _ _ < <(bench_col "$runs" 5 2 none | bench_stats)
bench_out "topic $topic: $(bench_fmt "$records") records, $parts partitions; eosaudit serve on a fresh ledger per run (/var/tmp), $reps runs per load (interleaved)"
bench_out ""
bench_out "| HTTP load | requests/s | p50 ms | p99 ms | max ms | errors | ingest records/s (median) | min | max | drop vs baseline | serve CPU s (median) |"
bench_out "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
echo "load,label,requests_per_s,p50_ms,p99_ms,max_ms,errors,median_ingest_records_per_s,min_ingest_records_per_s,max_ingest_records_per_s,drop_pct,median_serve_cpu_seconds" >"$summary"
for l in "${loads[@]}"; do
  read -r m lo hi < <(bench_col "$runs" 5 2 "$l" | bench_stats)
  drop=$(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.1f", 100 * (1 - a / b) }')
  read -r cp _ _ < <(bench_col "$runs" 12 2 "$l" | bench_stats)
  if [ "$l" = none ]; then
    rps=- p50=- p99=- pmax=- errs=- drop_s=-
  else
    read -r rps _ _ < <(bench_col "$runs" 7 2 "$l" | bench_stats)
    read -r p50 _ _ < <(bench_col "$runs" 9 2 "$l" | bench_stats)
    read -r p99 _ _ < <(bench_col "$runs" 10 2 "$l" | bench_stats)
    read -r pmax _ _ < <(bench_col "$runs" 11 2 "$l" | bench_stats)
    errs=$(bench_col "$runs" 8 2 "$l" | awk '{ s += $1 } END { print s + 0 }')
    printf -v rps '%.0f' "$rps"
    drop_s="$drop %"
  fi
  echo "$l,$(label "$l"),$rps,$p50,$p99,$pmax,$errs,$m,$lo,$hi,$drop,$cp" >>"$summary"
  bench_out "| $(label "$l") | $rps | $p50 | $p99 | $pmax | $errs | $(bench_fmt "$m") | $(bench_fmt "$lo") | $(bench_fmt "$hi") | $drop_s | $cp |"
done
bench_out ""
bench_out "One request on an idle serve (the topic audited; wrk, 1 connection, back to back, 3 s):"
bench_out ""
bench_out "| endpoint | requests | serve CPU ms per request | p50 ms | p99 ms |"
bench_out "| --- | ---: | ---: | ---: | ---: |"
while IFS=, read -r path n ms p50 p99; do
  echo "idle$path,one request on an idle serve,,$p50,$p99,,,,,,,$ms" >>"$summary"
  bench_out "| $path | $n | $ms | $p50 | $p99 |"
done <"$work/idle.csv"
bench_out ""
bench_out "HTTP figures: medians over the runs of wrk's own percentiles; ingest: slope of the ledger's record count from 10 % to 90 % of the topic; serve CPU s: user + system time of the serve process over the whole run (its HTTP threads included)."
bench_out "load average at end: $(bench_load)"
say "results: $summary, $runs, $BENCH_MD"
