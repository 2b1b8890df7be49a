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
