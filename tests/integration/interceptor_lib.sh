# interceptor_lib.sh - helpers of the Java interceptor's integration tests
# (t_55..t_58), sourced after lib.sh: Kafka's own producers with
# build/eosaudit-interceptor.jar (perf_test, console_producer), the oracle
# that reads the stamps itself (scope_oracle), and the audit checked
# against it (assert_scope_scan).
# shellcheck shell=bash

ICPT_JAR="$BUILD/eosaudit-interceptor.jar"
ICPT_CLASS=io.eosaudit.interceptor.EosAuditInterceptor
[ -f "$ICPT_JAR" ] || die "$ICPT_JAR not built (make)"

# perf_test TOPIC N THROUGHPUT PROP=VALUE...: Kafka's ProducerPerformance
# (kafka-producer-perf-test) writing N records of 100 bytes, unkeyed, at
# THROUGHPUT records/s (-1: no limit), with the interceptor and the
# producer properties given; its output on stdout.
perf_test() {
        local t="$1" n="$2" rate="$3"
        shift 3
        KAFKA_EXTRA_CLASSPATH="$ICPT_JAR" "$KAFKA_SH" tool \
                org.apache.kafka.tools.ProducerPerformance --topic "$t" \
                --num-records "$n" --record-size 100 --throughput "$rate" \
                --producer-props bootstrap.servers="$BOOTSTRAP" \
                interceptor.classes="$ICPT_CLASS" "$@" 2>&1
}

# console_producer TOPIC PROP=VALUE...: Kafka's ConsoleProducer
# (kafka-console-producer) with the interceptor, keyed ("key:value" lines on
# its stdin) and the producer properties given.
console_producer() {
        local t="$1" p args=()
        shift
        for p in "$@"; do args+=(--producer-property "$p"); done
        KAFKA_EXTRA_CLASSPATH="$ICPT_JAR" "$KAFKA_SH" tool \
                org.apache.kafka.tools.ConsoleProducer \
                --bootstrap-server "$BOOTSTRAP" --topic "$t" \
                --property parse.key=true --property key.separator=: \
                --producer-property interceptor.classes="$ICPT_CLASS" \
                "${args[@]}"
}

# jvm_of PID: the pid of the java process that PID (a perf_test or
# console_producer started with bg_start) runs, found among its descendants
# by parent pid; nothing is looked up by name.
jvm_of() {
        local pids="$1" next p i
        for ((i = 0; i < 5; i++)); do
                next=
                for p in $pids; do
                        if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = java ]; then
                                echo "$p"
                                return 0
                        fi
                        next+=" $(pgrep -P "$p")"
                done
                pids="$next"
        done
        return 1
}

# wait_records TOPIC N WHO: TOPIC holds N records (read_committed) within
# 60 s, or the test ends saying how many WHO wrote.  Sets COUNT.
wait_records() {
        local i
        COUNT=0
        for ((i = 0; i < 300; i++)); do
                COUNT="$(kcat -C -b "$BOOTSTRAP" -t "$1" -o beginning -e -q \
                        -f '.\n' 2>/dev/null | wc -l)"
                [ "$COUNT" -ge "$2" ] && return 0
                sleep 0.2
        done
        die "$3 wrote $COUNT of $2 records in 60 s"
}

# scope_oracle TOPIC [--skip-every N]: what the topic holds, read by kcat
# and counted by scope_oracle.py (its words in $S, for kv; the epochs in
# $EPOCHS).
scope_oracle() {
        local t="$1"
        shift
        S="$(kcat -C -b "$BOOTSTRAP" -t "$t" -o beginning -e -J -q |
                python3 "$IT_DIR/scope_oracle.py" "$@")" ||
                die "the oracle could not read $t"
        EPOCHS="$(sed -n 's/.*\bepochs=\([^ ]*\).*/\1/p' <<<"$S")"
        log "oracle $t: $S"
}

# assert_oracle NAME WANT: kv NAME of the last scope_oracle is WANT.
assert_oracle() {
        assert_eq "oracle: $1" "$2" "$(kv "$1")"
}

# assert_stamps WHAT RECORDS STREAMS: what every run checks of the stamps
# themselves: RECORDS records, all topic-scoped, over every partition, in
# STREAMS streams.
assert_stamps() {
        log "-- $1"
        assert_oracle records "$2"
        assert_oracle untracked 0
        assert_oracle other 0
        assert_oracle streams "$3"
}

# assert_epoch_grew WHAT BEFORE AFTER: EPOCHS of one producer before a
# restart ("p:e1") and after it ("p:e1/e2"): one epoch more, larger.
assert_epoch_grew() {
        assert_true "$1: a new, larger epoch ($2 then $3)" python3 -c 'import sys
a = sys.argv[1].split(":")[-1].split("/")
b = sys.argv[2].split(":")[-1].split("/")
sys.exit(not (len(a) == 1 and len(b) == 2 and b[0] == a[0] and int(b[1]) > int(a[0])))' \
                "$2" "$3"
}

# connect_fetch: the standalone Connect worker's jars (connect-runtime,
# connect-file) from Maven Central into tests/connect/lib, once per
# version of tests/connect/pom.xml.
CONNECT_DIR="$ROOT/tests/connect"
connect_fetch() {
        local stamp="$CONNECT_DIR/lib/.fetched" sum
        sum="$(sha256sum "$CONNECT_DIR/pom.xml" | cut -d' ' -f1)"
        [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ] && return 0
        rm -rf "$CONNECT_DIR/lib"
        mvn -q -B -f "$CONNECT_DIR/pom.xml" dependency:copy-dependencies \
                >"$IT_TMP/connect-fetch.log" 2>&1 ||
                die "maven could not fetch the Connect jars: $(tail -n 20 "$IT_TMP/connect-fetch.log")"
        echo "$sum" >"$stamp"
}

# connect_standalone WORKER_PROPS CONNECTOR_PROPS: Kafka Connect's
# standalone worker with the interceptor jar on its classpath (the
# connector's producer loads it from there).
# Its log: warnings, and the interceptor's lines from INFO up.
connect_standalone() {
        cat >"$IT_TMP/connect-log4j2.properties" <<'L4J'
status = warn
appender.stderr.type = Console
appender.stderr.name = STDERR
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = STDERR
logger.eos.name = io.eosaudit
logger.eos.level = info
L4J
        java -Xmx384m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
                -Dlog4j2.configurationFile="$IT_TMP/connect-log4j2.properties" \
                -cp "$CONNECT_DIR/lib/*:$ICPT_JAR" \
                org.apache.kafka.connect.cli.ConnectStandalone "$@"
}

# assert_scope_scan WHAT TOPIC: eosaudit scan of TOPIC finds exactly what
# the last scope_oracle counted there: its records, duplicate copies,
# missing seqs, fenced and redelivered records, and nothing else.
assert_scope_scan() {
        local bad
        bad=$(($(kv extra) + $(kv missing) + $(kv fenced) + $(kv redelivered)))
        scan_json -t "$2"
        log "-- $1: the audit against the oracle"
        assert_eq "$1: scan exit status" $((bad > 0 ? 1 : 0)) "$SCAN_RC"
        assert_scan records_total "$(($(kv records) + $(kv untracked)))"
        assert_scan untracked "$(kv untracked)"
        assert_scan anomalies.duplicate "$(kv extra)"
        assert_scan missing_records "$(kv missing)"
        assert_scan anomalies.fenced "$(kv fenced)"
        assert_scan anomalies.redelivered "$(kv redelivered)"
        assert_scan anomalies.out_of_order 0
        assert_scan anomalies.malformed 0
        assert_scan open_gaps 0
        assert_scan coverage_gaps 0
}
