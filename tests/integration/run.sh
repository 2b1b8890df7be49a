#!/usr/bin/env bash
# Runs the real-broker integration tests (make integration-test).
#
#   BUILD=build tests/integration/run.sh [PATTERN...]
#
# Uses $BUILD/eosaudit as built by make (this script builds nothing).
# Starts the broker (deploy/kafka/kafka.sh up) unless one is already up,
# and then stops it again at the end, also on failure or interrupt.  Runs
# each tests/integration/t_*.sh (or those whose name contains a PATTERN) in
# order, each in its own bash with a time limit, its output in
# $BUILD/test-output/integration/NAME.log.  Prints PASS/FAIL per test with
# its time, then the slowest eight and one last line "N passed, M failed";
# exit 1 if any failed.
#
# The broker is the suite's own (broker.sh: 127.0.0.1:29092 or the next
# free port pair, data in deploy/kafka/test/), never the demo broker of
# `make kafka-up` on 9092 nor one this script did not start.
#
# Runs wait for each other (one lock per machine for the suite's own
# broker, one per bootstrap address for a KAFKA_PORT given; exit 75 after
# IT_LOCK_WAIT=1800 s).
#
# A test with a line "# it-background: yes" needs nothing of the others
# nor of the suite's broker (a broker, cluster, compose stack or container
# of its own: t_31, t_45, t_46, t_96, t_97): those run one after another
# in a lane of their own beside the others, from the start, under
# nice -n 19 so that the tests in the sequence keep the CPU they had;
# their PASS/FAIL lines come at the end.
#
# Environment: IT_TEST_TIMEOUT=180 (s per test; a test may ask for more
# with a line "# it-timeout: SECONDS"), IT_KEEP_TOPICS=1 (keep the topics
# of the tests that passed too; a failed test's are always kept),
# KAFKA_PORT etc. as for kafka.sh (another broker).
set -uo pipefail

IT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$IT_DIR/../.." && pwd)"
KAFKA_SH="$ROOT/deploy/kafka/kafka.sh"
source "$IT_DIR/broker.sh"

# One run at a time per broker: runs share the broker, some tests stop or
# freeze it, and a run that started it stops it at the end.  flock -o: the
# broker and the tests do not inherit the lock.
if [ -z "${IT_LOCK_HELD:-}" ]; then
        export IT_LOCK_HELD=1
        if [ "$IT_OWN_BROKER" = 1 ]; then
                lock="${TMPDIR:-/tmp}/eosaudit-integration.lock"
        else
                lock="${TMPDIR:-/tmp}/eosaudit-integration-127.0.0.1-$KAFKA_PORT.lock"
        fi
        if ! flock -n "$lock" true; then
                echo "waiting for another integration run on this broker ($lock) ..."
        fi
        exec flock -o -w "${IT_LOCK_WAIT:-1800}" -E 75 "$lock" "$0" "$@"
fi

# Job control: every test runs in its own process group, so an interrupt
# or a time-out ends the test and everything it started.
set -m

BUILD="${BUILD:-build}"
[[ "$BUILD" == /* ]] || BUILD="$ROOT/$BUILD"
export BUILD
OUT="$BUILD/test-output/integration"
source "$IT_DIR/python.sh"
TIMEOUT="${IT_TEST_TIMEOUT:-180}"
export IT_RUN_ID="${IT_RUN_ID:-$(date +%s)-$$}"

passed=0
passed_names=()
timings=()
failed=0
started_broker=0
test_pid=
# The background tests' lane (run_lane).
lane_pid=
summary_done=0

summary() {
        [ "$summary_done" = 1 ] && return
        summary_done=1
        echo "$passed passed, $failed failed"
}

# t_60 freezes the broker with SIGSTOP and thaws it in a trap; a test
# killed at its time limit gets no trap, so thaw it here too.
thaw_broker() {
        local pid
        pid="$(cat "$KAFKA_PID_FILE" 2>/dev/null)" || return 0
        [[ "$pid" =~ ^[0-9]+$ ]] && kill -CONT "$pid" 2>/dev/null
        return 0
}

stop_broker() {
        if [ "$started_broker" = 1 ]; then
                started_broker=0
                "$KAFKA_SH" down >>"$OUT/kafka.log" 2>&1 ||
                        echo "run.sh: could not stop the broker (see $OUT/kafka.log)" >&2
        fi
}

on_exit() {
        stop_broker
}

on_signal() {
        trap '' INT TERM
        if [ -n "$lane_pid" ]; then
                kill -TERM "$lane_pid" 2>/dev/null
                wait "$lane_pid" 2>/dev/null
                echo "FAIL background tests (interrupted)"
                failed=$((failed + 1))
        fi
        if [ -n "$test_pid" ]; then
                kill -TERM -- "-$test_pid" 2>/dev/null
                wait "$test_pid" 2>/dev/null
                thaw_broker
                echo "FAIL $current (interrupted)"
                failed=$((failed + 1))
        fi
        summary
        stop_broker
        exit 130
}
trap on_exit EXIT
trap on_signal INT TERM

if [ ! -x "$BUILD/eosaudit" ]; then
        echo "run.sh: $BUILD/eosaudit is not built (make)" >&2
        exit 2
fi
mkdir -p "$OUT"
: >"$OUT/kafka.log"

if ! "$KAFKA_SH" status >/dev/null 2>&1; then
        # Ports are picked, not reserved: another suite on the machine may
        # take one before the broker binds it.  Then the next free ones,
        # twice more.
        for attempt in 1 2 3; do
                it_broker_pick || exit 1
                echo "starting the test broker on 127.0.0.1:$KAFKA_PORT (deploy/kafka/kafka.sh up) ..."
                # Set before up: an interrupted start must still be stopped.
                started_broker=1
                "$KAFKA_SH" up >>"$OUT/kafka.log" 2>&1 && break
                grep -q 'already in use\|Unable to start acceptor\|exited during startup' \
                        "$OUT/kafka.log" && [ "$attempt" -lt 3 ] || break
                echo "run.sh: the broker's ports were taken meanwhile; picking others" >&2
        done
        if ! "$KAFKA_SH" status >/dev/null 2>&1; then
                cat "$OUT/kafka.log" >&2
                echo "run.sh: the broker did not start" >&2
                summary
                exit 1
        fi
fi

tests=()
for t in "$IT_DIR"/t_*.sh; do
        n="$(basename "$t" .sh)"
        if [ $# -gt 0 ]; then
                keep=0
                for p in "$@"; do [[ "$n" == *"$p"* ]] && keep=1; done
                [ "$keep" = 1 ] || continue
        fi
        tests+=("$t")
done

test_limit() {
        local limit
        limit="$(sed -n 's/^# it-timeout: \([0-9][0-9]*\)$/\1/p' "$1" | head -n 1)"
        echo "${limit:-$TIMEOUT}"
}

# report NAME SECS RC LIMIT: PASS or FAIL with the log's end on failure.
report() {
        local name="$1" secs="$2" rc="$3" limit="$4" log="$OUT/$1.log" why
        timings+=("$secs $name")
        if [ "$rc" = 0 ]; then
                echo "PASS $name (${secs}s)"
                passed=$((passed + 1))
                passed_names+=("$name")
        else
                why="exit $rc"
                [ "$rc" = 124 ] && why="timed out after ${limit}s"
                [ "$rc" = 137 ] && why="killed: timed out after ${limit}s, then no exit on SIGTERM"
                echo "FAIL $name (${secs}s, $why; log: $log)"
                grep -E '^(FAIL|ERROR)' "$log" | head -n 20 | sed 's/^/    /'
                echo "    --- last lines:"
                tail -n 25 "$log" | sed 's/^/    /'
                failed=$((failed + 1))
        fi
}

# run_lane TEST...: the background tests, one after another, each niced
# in its own process group (timeout's) under its time limit; a line
# "NAME RC SECS LIMIT" for each in $OUT/background.results.  SIGTERM ends
# the one running.
run_lane() {
        local t name limit start rc lane_test=
        trap '[ -n "$lane_test" ] && kill -TERM -- "-$lane_test" 2>/dev/null; exit 130' TERM INT
        for t in "$@"; do
                name="$(basename "$t" .sh)"
                name="${name#t_}"
                limit="$(test_limit "$t")"
                start=$SECONDS
                nice -n 19 timeout -k 10 "$limit" bash "$t" >"$OUT/$name.log" 2>&1 </dev/null &
                lane_test=$!
                rc=0
                wait "$lane_test" || rc=$?
                lane_test=
                echo "$name $rc $((SECONDS - start)) $limit" >>"$OUT/background.results"
        done
}

suite_start=$SECONDS
seq_tests=()
bg_tests=()
for t in "${tests[@]}"; do
        if grep -qE '^# it-background: yes( |$)' "$t"; then
                bg_tests+=("$t")
        else
                seq_tests+=("$t")
        fi
done
: >"$OUT/background.results"
if [ ${#bg_tests[@]} -gt 0 ]; then
        run_lane "${bg_tests[@]}" &
        lane_pid=$!
        echo "in the background, one after another (niced): $(for t in "${bg_tests[@]}"; do
                n="$(basename "$t" .sh)"; printf '%s ' "${n#t_}"; done)"
fi

for t in "${seq_tests[@]}"; do
        current="$(basename "$t" .sh)"
        current="${current#t_}"
        log="$OUT/$current.log"
        start=$SECONDS
        # timeout kills the test's whole process group when the limit hits.
        limit="$(test_limit "$t")"
        timeout -k 10 "$limit" bash "$t" >"$log" 2>&1 </dev/null &
        test_pid=$!
        rc=0
        { wait "$test_pid"; } 2>/dev/null || rc=$?
        test_pid=
        thaw_broker
        report "$current" $((SECONDS - start)) "$rc" "$limit"
        # A test that stopped the broker and could not restart it would fail
        # every later test for the wrong reason.
        if ! "$KAFKA_SH" status >/dev/null 2>&1; then
                echo "run.sh: the broker is down after $current; starting it" >&2
                "$KAFKA_SH" up >>"$OUT/kafka.log" 2>&1 || {
                        echo "run.sh: the broker did not start; the tests after $current did not run" >&2
                        break
                }
        fi
done
if [ -n "$lane_pid" ]; then
        { wait "$lane_pid"; } 2>/dev/null
        lane_pid=
        while read -r current rc secs limit; do
                report "$current" "$secs" "$rc" "$limit"
        done <"$OUT/background.results"
fi
# Tests that did not run (the broker died) count as failed.
failed=$((${#tests[@]} - passed))

# Delete the topics of the tests that passed (lib.sh: it-NAME-...-RUN_ID);
# a failed test's stay for a look.
if [ ${#passed_names[@]} -gt 0 ] && [ "${IT_KEEP_TOPICS:-0}" != 1 ] &&
        "$KAFKA_SH" status >/dev/null 2>&1; then
        re="$(IFS='|'; echo "${passed_names[*]}")"
        "$KAFKA_SH" tool org.apache.kafka.tools.TopicCommand \
                --bootstrap-server "$("$KAFKA_SH" bootstrap)" --delete \
                --if-exists --topic "it-($re)-.*-$IT_RUN_ID" \
                >>"$OUT/kafka.log" 2>&1 ||
                echo "run.sh: could not delete this run's topics (see $OUT/kafka.log)" >&2
fi

echo "integration tests: $((SECONDS - suite_start))s, logs in $OUT"
# The suite must stay well under make test's 20 minutes: where it goes.
if [ ${#timings[@]} -gt 1 ]; then
        echo "slowest: $(printf '%s\n' "${timings[@]}" | sort -rn | head -n 8 |
                awk '{ printf "%s%s %ss", (NR > 1 ? ", " : ""), $2, $1 }')"
fi
summary
stop_broker
[ "$failed" = 0 ] || exit 1
exit 0
