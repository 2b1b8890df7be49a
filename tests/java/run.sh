#!/usr/bin/env bash
# Runs one of the Java interop programs, building them first if needed.
#   tests/java/run.sh IdempotentProducer BOOTSTRAP TOPIC NAME COUNT [PARTITIONS] [EPOCH]
#   tests/java/run.sh TxnProducer BOOTSTRAP TOPIC TXN_ID TXNS PER_TXN ABORT_EVERY [--zombie]
# A bare class name means eosaudit.interop.CLASS.  Works from any cwd;
# concurrent invocations build only once (flock).
set -euo pipefail
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
JAR="$DIR/target/eosaudit-interop.jar"

[ $# -ge 1 ] || { sed -n '2,6p' "$0" >&2; exit 2; }

stale() {
  [ -f "$JAR" ] && [ -d "$DIR/target/lib" ] || return 0
  [ -n "$(find "$DIR/src" "$DIR/pom.xml" -newer "$JAR" -print -quit)" ]
}

if stale; then
  mkdir -p "$DIR/target"
  exec 9>"$DIR/target/.build.lock"
  flock 9
  if stale; then
    command -v mvn >/dev/null 2>&1 || { echo "run.sh: mvn not found (run deploy/install-deps.sh)" >&2; exit 1; }
    rm -rf "$DIR/target/lib"
    if ! mvn -q -B -f "$DIR/pom.xml" package >"$DIR/target/build.log" 2>&1; then
      cat "$DIR/target/build.log" >&2
      echo "run.sh: build of tests/java failed" >&2
      exit 1
    fi
    touch "$JAR"
  fi
  flock -u 9
  exec 9>&-
fi

cls="$1"; shift
[[ "$cls" == *.* ]] || cls="eosaudit.interop.$cls"
exec java -Xmx256m -XX:TieredStopAtLevel=1 \
  -Dorg.slf4j.simpleLogger.defaultLogLevel="${EOS_JAVA_LOG_LEVEL:-warn}" \
  -Dorg.slf4j.simpleLogger.logFile=System.err \
  -Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient="${EOS_JAVA_NETLOG_LEVEL:-error}" \
  -cp "$JAR:$DIR/target/lib/*" "$cls" "$@"
