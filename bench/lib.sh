# shellcheck shell=bash disable=SC2034
# bench/lib.sh - helpers shared by the bench/*.sh scripts.  Source it; it
# does nothing on its own.
#
# Every benchmark talks to its own broker, not to the one the test suite
# uses on 9092.  These variables pick it (defaults in parentheses) and are
# passed on to deploy/kafka/kafka.sh, which starts it when it is down:
#   KAFKA_PORT (19092)  KAFKA_DATA_DIR (/tmp/bench-kafka/data)
#   KAFKA_LOG (/tmp/bench-kafka/kafka.log)  KAFKA_PID_FILE (/tmp/bench-kafka/kafka.pid)
# Results go to $BENCH_RESULTS (build/bench-results), ledgers to
# $BENCH_TMP (/var/tmp).
set -Eeuo pipefail
trap 'echo "$(basename "$0"): error: line $LINENO: \"$BASH_COMMAND\" exited $?" >&2' ERR

BENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export KAFKA_PORT="${KAFKA_PORT:-19092}"
export KAFKA_DATA_DIR="${KAFKA_DATA_DIR:-/tmp/bench-kafka/data}"
export KAFKA_LOG="${KAFKA_LOG:-/tmp/bench-kafka/kafka.log}"
export KAFKA_PID_FILE="${KAFKA_PID_FILE:-/tmp/bench-kafka/kafka.pid}"
BROKER="127.0.0.1:$KAFKA_PORT"
KAFKA_SH="$BENCH_ROOT/deploy/kafka/kafka.sh"
EOSAUDIT="$BENCH_ROOT/build/eosaudit"
BENCH_RESULTS="${BENCH_RESULTS:-$BENCH_ROOT/build/bench-results}"
BENCH_TMP="${BENCH_TMP:-/var/tmp}"
TCMALLOC=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4

# Like with like: kcat (Debian's, linked against librdkafka.so.1) runs on
# the librdkafka eosaudit was built with, not on the system's older one
# (deploy/librdkafka.sh; nothing to do when the system's is used).
RDKAFKA_PREFIX="$("$BENCH_ROOT/deploy/librdkafka.sh" prefix 2>/dev/null)" || RDKAFKA_PREFIX=
if [ -n "$RDKAFKA_PREFIX" ]; then
  export LD_LIBRARY_PATH="$RDKAFKA_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# bench_same_librdkafka: die unless kcat and eosaudit run on one librdkafka.
bench_same_librdkafka() {
  local k e
  k="$(kcat -V 2>&1 | sed -n 's/.*librdkafka \([0-9.]*\).*/\1/p' | head -n 1)"
  e="$("$EOSAUDIT" version | sed -n 's/.*librdkafka \([0-9.]*\).*/\1/p')"
  [ -n "$k" ] && [ "$k" = "$e" ] ||
    die "kcat runs on librdkafka '${k:-?}', eosaudit on '${e:-?}': not like with like"
  say "kcat and eosaudit on librdkafka $e"
}

bench_name="$(basename "$0" .sh)"
say() { echo "$bench_name: $*" >&2; }
die() { say "error: $*"; exit 2; }

# A positive integer option value, or die.
bench_uint() {
  if ! [[ "$2" =~ ^[0-9]+$ ]] || [ "$2" -eq 0 ]; then
    die "$1 wants a positive integer, not '$2'"
  fi
  echo "$2"
}

# make the given targets; when that fails (someone may be editing the
# sources right now) but the binaries exist, go on with them.
bench_build() {
  local t missing=0
  if ! make -s -C "$BENCH_ROOT" "$@" >&2; then
    for t in "$@"; do
      [ -x "$BENCH_ROOT/$t" ] || missing=1
    done
    [ "$missing" -eq 0 ] || die "make $* failed"
    say "warning: make $* failed; using the binaries already built"
  fi
  bench_same_librdkafka
}

bench_broker_up() {
  if ! "$KAFKA_SH" up 2>&1 | sed "s/^/$bench_name: /" >&2; then
    die "the benchmark broker on $BROKER did not start"
  fi
}

bench_topic_create() {
  "$KAFKA_SH" topic "$1" "$2" >/dev/null 2>&1 || die "cannot create topic $1"
}

bench_topic_delete() {
  "$KAFKA_SH" tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$BROKER" \
    --delete --topic "$1" >/dev/null 2>&1 || say "warning: cannot delete topic $1"
}

# Records a read_committed reader sees in topic $1 (also warms the page cache).
bench_topic_count() {
  kcat -b "$BROKER" -C -e -q -o beginning -X isolation.level=read_committed \
    -f 'x' -t "$1" | wc -c
}

# Fresh topic $1 with $2 partitions and $3 records of 100 bytes from the
# reference producer (idempotent, header contract); prints records/s.
bench_topic_fill() {
  local topic="$1" parts="$2" n="$3" out t0 t1
  bench_topic_create "$topic" "$parts"
  t0=$(bench_now)
  out="$("$EOSAUDIT" produce -b "$BROKER" -t "$topic" --producer "bench-$topic" \
         -n "$n" --size 100 -q --json 2>/dev/null)" || die "eosaudit produce into $topic failed"
  t1=$(bench_now)
  [ "$(bench_json_int "$out" delivered)" = "$n" ] || die "eosaudit produce delivered less than $n records"
  bench_rate "$n" "$(bench_secs "$t0" "$t1")"
}

# bench_topic_prepare PREFIX PARTITIONS RECORDS: unless $topic is already
# set (-t), fills a fresh topic PREFIX-<time> as bench_topic_fill does and
# sets $topic and $prod_rps; then sets $records to what a read_committed
# reader sees in $topic (which also warms the page cache).
bench_topic_prepare() {
  if [ -z "$topic" ]; then
    topic="$1-$(date +%s)"
    say "producing $(bench_fmt "$3") records into $topic ($2 partitions)"
    prod_rps=$(bench_topic_fill "$topic" "$2" "$3") || die "cannot fill topic $topic"
    say "produced at $(bench_fmt "$prod_rps") records/s"
  fi
  say "counting (and warming the page cache) with kcat"
  records=$(bench_topic_count "$topic")
  [ "$records" -gt 0 ] || die "topic $topic is empty"
}

# A ledger path; bench_db_rm removes it with its WAL and lock files.
bench_db() { echo "${2:-$BENCH_TMP}/eosaudit-bench-$$-$1.db"; }
bench_db_rm() { rm -f "$1" "$1-wal" "$1-shm" "$1-lock" "$1-journal"; rm -rf "$1-ids"; }

# Scratch space and clean-up.  bench_work makes $work and arranges, at exit:
# SIGKILL to the pids held in the variables named in BENCH_PIDS (say
# BENCH_PIDS="scan_pid"), removal of every ledger from bench_db_new and of
# $work, and deletion of $topic when $keep is 0.
bench_work() {
  work="$(mktemp -d "/tmp/bench-$bench_name.XXXXXX")"
  trap bench_cleanup EXIT
}

bench_cleanup() {
  local v db
  for v in ${BENCH_PIDS:-}; do
    if [ -n "${!v:-}" ]; then kill -KILL "${!v}" 2>/dev/null || true; fi
  done
  for db in "$work"/*.dbpath; do
    if [ -f "$db" ]; then bench_db_rm "$(cat "$db")"; fi
  done
  rm -rf "$work"
  if [ "${keep:-1}" -eq 0 ] && [ -n "${topic:-}" ]; then
    bench_topic_delete "$topic"
  fi
}

# bench_db_new NAME [DIR]: the path of a fresh ledger (any old one is
# removed); bench_cleanup removes it if a run leaves it behind.
bench_db_new() {
  local db
  db="$(bench_db "$1" "${2:-}")"
  echo "$db" >"$work/$1.dbpath"
  bench_db_rm "$db"
  echo "$db"
}

# bench_rounds REPS FUNC ITEM...: runs FUNC ITEM REP for every item, REPS
# times; each round starts one item later, so no item always goes first.
bench_rounds() {
  local reps="$1" fn="$2" rep i
  shift 2
  local items=("$@")
  for ((rep = 1; rep <= reps; rep++)); do
    for ((i = 0; i < ${#items[@]}; i++)); do
      "$fn" "${items[(i + rep - 1) % ${#items[@]}]}" "$rep"
    done
  done
}

bench_now() { date +%s%N; }
bench_secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
bench_rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }'; }

# Integer member $2 of the top level of one JSON object $1 (no jq needed).
bench_json_int() {
  { grep -o "\"$2\":-\{0,1\}[0-9][0-9]*" <<<"$1" || true; } | sed -n '1s/.*://p'
}

# median min max of the numbers on stdin, one per line.
bench_stats() {
  sort -g | awk '{ v[NR] = $1 }
    END {
      if (NR == 0) { print "nan nan nan"; exit }
      m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      printf "%.10g %.10g %.10g\n", m, v[1], v[NR]
    }'
}

# Column $2 of the CSV rows of file $1 whose column $3 equals $4.
bench_col() {
  awk -F, -v c="$2" -v k="$3" -v want="$4" 'NR > 1 && $k == want { print $c }' "$1"
}

# 1234567 -> 1,234,567
bench_fmt() {
  awk -v x="$1" 'BEGIN {
    if (x !~ /^-?[0-9.]+$/) { print x; exit }
    s = sprintf("%.0f", x); neg = s ~ /^-/; if (neg) s = substr(s, 2)
    o = ""; while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) }
    print (neg ? "-" : "") s o
  }'
}

bench_machine() {
  local model mem
  model="$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)"
  mem="$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "$(nproc) CPUs, $model, $mem RAM, $(uname -sr)"
}

bench_load() { cut -d' ' -f1-3 /proc/loadavg; }

# Starts the results file set: prints the header lines of the table.
bench_begin() {
  mkdir -p "$BENCH_RESULTS"
  BENCH_MD="$BENCH_RESULTS/$bench_name.md"
  : >"$BENCH_MD"
  bench_out "## $bench_name ($(date -u '+%Y-%m-%d %H:%M UTC'))"
  bench_out ""
  bench_out "machine: $(bench_machine); load average at start: $(bench_load)"
  bench_out ""
}

# One line of the printed report, also kept in build/bench-results/NAME.md.
bench_out() { printf '%s\n' "$*" | tee -a "$BENCH_MD"; }
