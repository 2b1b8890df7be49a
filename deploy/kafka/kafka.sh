#!/usr/bin/env bash
# Runs a real single-node Apache Kafka broker (KRaft, broker+controller in
# one JVM) for eosaudit's tests.  The jars come from Maven Central through
# pom.xml beside this script.
#
#   kafka.sh up                      fetch jars if needed, format, start, wait until it answers
#   kafka.sh down                    stop (SIGTERM, then SIGKILL after 30 s)
#   kafka.sh status                  exit 0 if the broker is up and answering
#   kafka.sh reset                   down + delete the data dir
#   kafka.sh fetch                   only fetch the jars
#   kafka.sh topic NAME PARTS [k=v]  create a topic if it does not exist (RF 1)
#   kafka.sh tool CLASS ARGS...      run a Kafka tool class, e.g.
#                                    org.apache.kafka.tools.ConsumerPerformance
#                                    (KAFKA_EXTRA_CLASSPATH: jars to add)
#   kafka.sh bootstrap               print host:port
#   kafka.sh mirror PROPS            run MirrorMaker 2 in dedicated mode
#                                    (org.apache.kafka.connect.mirror.MirrorMaker)
#                                    with PROPS, in the foreground; its jars
#                                    (mirror/pom.xml) in lib-mirror/
#                                    (KAFKA_MIRROR_HEAP="-Xmx256m")
#   kafka.sh mirror-fetch            only fetch MirrorMaker's jars
#   kafka.sh secure ...              the SASL_SSL listener on KAFKA_PORT+2 (secure.sh)
#
# Environment (all optional):
#   KAFKA_PORT=9092  KAFKA_CONTROLLER_PORT=$((KAFKA_PORT+1))
#   KAFKA_DATA_DIR=<dir>/data  KAFKA_LOG=<dir>/kafka.log  KAFKA_PID_FILE=<dir>/kafka.pid
#   KAFKA_HEAP_OPTS="-Xms256m -Xmx1g"  KAFKA_UP_TIMEOUT=90  KAFKA_CLUSTER_ID=<22-char base64 uuid>
#   KAFKA_VERSION=<x.y.z>   another Apache Kafka release than pom.xml's (its
#       jars in lib-<x.y.z>/; e.g. 3.9.1 for the tests of the 3.x line)
#   KAFKA_FORMAT_ARGS="--feature transaction.version=1"   extra args for the first
#       format of the data dir only (e.g. to turn off KIP-890 transactions v2,
#       under which every commit/abort bumps the producer epoch)
set -euo pipefail

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# pom.xml's Kafka unless KAFKA_VERSION names another, in a folder of its own.
KVER="${KAFKA_VERSION:-}"
LIB="$DIR/lib${KVER:+-$KVER}"
HOST=127.0.0.1
PORT="${KAFKA_PORT:-9092}"
CPORT="${KAFKA_CONTROLLER_PORT:-$((PORT + 1))}"
BOOTSTRAP="$HOST:$PORT"
DATA="${KAFKA_DATA_DIR:-$DIR/data}"
LOG="${KAFKA_LOG:-$DIR/kafka.log}"
PIDF="${KAFKA_PID_FILE:-$DIR/kafka.pid}"
HEAP="${KAFKA_HEAP_OPTS:--Xms256m -Xmx1g}"
UP_TIMEOUT="${KAFKA_UP_TIMEOUT:-90}"
# Fixed so that re-formatting is reproducible; base64url("eosauditkafka001").
CLUSTER_ID="${KAFKA_CLUSTER_ID:-ZW9zYXVkaXRrYWZrYTAwMQ}"
STAMP="$LIB/.fetched"
source "$DIR/secure.sh"

say() { echo "kafka.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }

need_java() {
  command -v java >/dev/null 2>&1 || die "java not found (run deploy/install-deps.sh)"
}

# --- jars -----------------------------------------------------------------

pom_sum() { { cat "$DIR/pom.xml"; echo "$KVER"; } | sha256sum | cut -d' ' -f1; }

fetch() {
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(pom_sum)" ]; then
    return 0
  fi
  command -v mvn >/dev/null 2>&1 || die "mvn not found (run deploy/install-deps.sh)"
  say "fetching Kafka jars from Maven Central into $LIB ..."
  rm -rf "$LIB"
  mkdir -p "$LIB"
  if ! mvn -q -B -f "$DIR/pom.xml" ${KVER:+-Dkafka.version="$KVER"} \
       -Dkafka.lib="$LIB" dependency:copy-dependencies >"$DIR/fetch.log" 2>&1; then
    tail -n 40 "$DIR/fetch.log" >&2
    die "maven could not fetch the Kafka jars (log: $DIR/fetch.log)"
  fi
  ls "$LIB"/kafka_2.13-*.jar >/dev/null 2>&1 || die "no kafka_2.13 jar in $LIB after mvn"
  pom_sum >"$STAMP"
  rm -f "$DIR/fetch.log"
}

# MirrorMaker 2's jars (the Connect runtime, jetty, jersey: more than the
# broker needs) apart, in lib-mirror/, from mirror/pom.xml.
MIRROR_LIB="$DIR/lib-mirror"

mirror_fetch() {
  local sum
  sum="$(sha256sum <"$DIR/mirror/pom.xml" | cut -d' ' -f1)"
  if [ -f "$MIRROR_LIB/.fetched" ] && [ "$(cat "$MIRROR_LIB/.fetched")" = "$sum" ]; then
    return 0
  fi
  command -v mvn >/dev/null 2>&1 || die "mvn not found (run deploy/install-deps.sh)"
  say "fetching MirrorMaker 2's jars from Maven Central into $MIRROR_LIB ..."
  rm -rf "$MIRROR_LIB"
  mkdir -p "$MIRROR_LIB"
  if ! mvn -q -B -f "$DIR/mirror/pom.xml" -Dkafka.lib="$MIRROR_LIB" \
       dependency:copy-dependencies >"$DIR/mirror-fetch.log" 2>&1; then
    tail -n 40 "$DIR/mirror-fetch.log" >&2
    die "maven could not fetch MirrorMaker's jars (log: $DIR/mirror-fetch.log)"
  fi
  ls "$MIRROR_LIB"/connect-mirror-[0-9]*.jar >/dev/null 2>&1 ||
    die "no connect-mirror jar in $MIRROR_LIB after mvn"
  echo "$sum" >"$MIRROR_LIB/.fetched"
  rm -f "$DIR/mirror-fetch.log"
}

# exec: the caller's $! is MirrorMaker's JVM (a test kills it with -9).
mirror() {
  [ $# -ge 1 ] || die "usage: kafka.sh mirror PROPS"
  mirror_fetch; need_java
  # shellcheck disable=SC2086
  exec java ${KAFKA_MIRROR_HEAP:--Xmx256m} -XX:TieredStopAtLevel=1 \
    -XX:+UseSerialGC -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$DIR/log4j2-tools.properties" \
    -cp "$MIRROR_LIB/*" org.apache.kafka.connect.mirror.MirrorMaker "$@"
}

# java with the broker classpath, and KAFKA_EXTRA_CLASSPATH after it
# (e.g. build/eosaudit-interceptor.jar for a tool's producer); $1 = log4j2
# config file.
kjava() {
  local l4j="$1"; shift
  java -cp "$LIB/*${KAFKA_EXTRA_CLASSPATH:+:$KAFKA_EXTRA_CLASSPATH}" \
       -Dlog4j2.configurationFile="$l4j" \
       -Djava.awt.headless=true "$@"
}

tool() {
  fetch; need_java
  # A tool runs for a second or two: the client compiler only and the
  # serial collector start the JVM in half the time.
  kjava "$DIR/log4j2-tools.properties" -Xmx512m -XX:TieredStopAtLevel=1 \
    -XX:+UseSerialGC "$@"
}

# --- process / readiness --------------------------------------------------

recorded_pid() {
  [ -f "$PIDF" ] || return 1
  local pid
  pid="$(cat "$PIDF" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  # Alive and really our broker (not a recycled pid)?
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka' || return 1
  echo "$pid"
}

# Does a broker answer metadata requests on $BOOTSTRAP?
answers() {
  port_busy "$PORT" || return 1
  if command -v kcat >/dev/null 2>&1; then
    local out
    out="$(timeout 10 kcat -b "$BOOTSTRAP" -L -m 3 2>/dev/null)" || return 1
    [[ "$out" == *" brokers:"* ]]
  else
    timeout 30 java -cp "$LIB/*" -Dlog4j2.configurationFile="$DIR/log4j2-tools.properties" \
      org.apache.kafka.tools.BrokerApiVersionsCommand --bootstrap-server "$BOOTSTRAP" \
      >/dev/null 2>&1
  fi
}

port_busy() {
  # bash /dev/tcp: succeeds if something listens.
  (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}

runtime_config() {
  local cfg="$DATA/server.runtime.properties"
  {
    cat "$DIR/server.properties"
    echo
    echo "# --- appended by kafka.sh ---"
    echo "log.dirs=$DATA/log"
    echo "listeners=PLAINTEXT://$HOST:$PORT,CONTROLLER://$HOST:$CPORT"
    echo "advertised.listeners=PLAINTEXT://$HOST:$PORT"
    echo "controller.quorum.voters=1@$HOST:$CPORT"
    secure_config
  } >"$cfg"
  echo "$cfg"
}

up() {
  local pid
  if pid="$(recorded_pid)"; then
    if answers; then
      say "broker already up (pid $pid, $BOOTSTRAP)"
      return 0
    fi
    say "pid $pid is alive but the broker does not answer yet; waiting"
  else
    rm -f "$PIDF"
    if port_busy "$PORT" || port_busy "$CPORT"; then
      die "port $PORT or $CPORT on $HOST is already in use by a process this script did not start"
    fi
    fetch
    need_java
    mkdir -p "$DATA"
    local cfg
    cfg="$(runtime_config)"
    if [ ! -f "$DATA/log/meta.properties" ]; then
      say "formatting $DATA/log (cluster id $CLUSTER_ID)"
      if ! kjava "$DIR/log4j2-tools.properties" -Xmx256m -XX:TieredStopAtLevel=1 \
             -XX:+UseSerialGC kafka.tools.StorageTool format \
             -t "$CLUSTER_ID" -c "$cfg" --ignore-formatted ${KAFKA_FORMAT_ARGS:-} $(secure_format_args) >"$DATA/format.log" 2>&1; then
        cat "$DATA/format.log" >&2
        die "kafka-storage format failed"
      fi
    fi
    mkdir -p "$(dirname "$LOG")" "$(dirname "$PIDF")"
    # The log is appended to across runs; keep one old generation past 50 MB.
    if [ -f "$LOG" ] && [ "$(stat -c %s "$LOG")" -gt 52428800 ]; then
      mv -f "$LOG" "$LOG.1"
    fi
    # shellcheck disable=SC2086
    setsid nohup java $HEAP -server \
      -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
      -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError \
      -Djava.awt.headless=true \
      -Dlog4j2.configurationFile="$DIR/log4j2.properties" \
      -Dkafka.logs.dir="$DATA" \
      -cp "$LIB/*" kafka.Kafka "$cfg" \
      >>"$LOG" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$PIDF"
    say "started broker pid $pid, log $LOG"
  fi

  local start=$SECONDS
  while (( SECONDS - start < UP_TIMEOUT )); do
    if ! kill -0 "$pid" 2>/dev/null; then
      say "error: broker process $pid exited during startup; last 40 lines of $LOG:"
      tail -n 40 "$LOG" >&2
      rm -f "$PIDF"
      exit 1
    fi
    # Still alive a second after its first answer: a broker whose
    # controller port was taken (another suite picked it meanwhile)
    # answers on its own port for a moment, then exits.
    if answers && sleep 1 && kill -0 "$pid" 2>/dev/null && answers; then
      say "broker up on $BOOTSTRAP (pid $pid) after $((SECONDS - start)) s"
      return 0
    fi
    sleep 0.5
  done
  say "error: broker did not answer on $BOOTSTRAP within ${UP_TIMEOUT}s; last 40 lines of $LOG:"
  tail -n 40 "$LOG" >&2
  exit 1
}

down() {
  local pid
  if ! pid="$(recorded_pid)"; then
    rm -f "$PIDF"
    say "broker not running"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < 60; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "broker pid $pid did not stop in 30 s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 20; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
  fi
  rm -f "$PIDF"
  say "broker stopped (pid $pid)"
}

status() {
  local pid
  if pid="$(recorded_pid)" && answers; then
    echo "kafka up: pid $pid, $BOOTSTRAP"
    return 0
  fi
  echo "kafka down"
  return 1
}

reset() {
  down
  rm -rf "$DATA"
  say "deleted $DATA"
}

topic() {
  [ $# -ge 2 ] || die "usage: kafka.sh topic NAME PARTITIONS [key=value ...]"
  local name="$1" parts="$2"; shift 2
  local cfgs=() kv
  for kv in "$@"; do cfgs+=(--config "$kv"); done
  tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" \
    --create --if-not-exists --topic "$name" --partitions "$parts" \
    --replication-factor 1 "${cfgs[@]}"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  up) up ;;
  down) down ;;
  status) status ;;
  reset) reset ;;
  fetch) fetch ;;
  topic) topic "$@" ;;
  tool) [ $# -ge 1 ] || die "usage: kafka.sh tool CLASS ARGS..."; tool "$@" ;;
  bootstrap) echo "$BOOTSTRAP" ;;
  mirror) mirror "$@" ;;
  mirror-fetch) mirror_fetch ;;
  secure) secure_cmd "$@" ;;
  *) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
