#!/usr/bin/env bash
# Runs the unit test programs given (make unit-test), UNIT_JOBS (4) at a
# time: most of their time is waiting (time-outs of librdkafka's mock
# cluster, slow HTTP clients), not CPU.  Each one's output goes to
# $BUILD/test-output/unit/NAME.log; prints "== PATH" with its time and,
# for one that fails, its output; exit 1 if any failed, after all ran.
#
#   tests/run_unit.sh BUILD/tests/test_a BUILD/tests/test_b ...
set -uo pipefail

jobs="${UNIT_JOBS:-4}"
[ $# -gt 0 ] || exit 0
out="$(dirname "$(dirname "$1")")/test-output/unit"
mkdir -p "$out"

declare -A pid_of=() start_of=()
failed=0

# The slowest programs first (each waits some 10-30 s on time-outs): one
# that starts last would run on alone after all the others.
slow=" test_producer_msgid test_producer_mock test_broker_down test_http_slow test_pipeline "
order=()
for t in "$@"; do [[ "$slow" == *" $(basename "$t") "* ]] && order+=("$t"); done
for t in "$@"; do [[ "$slow" == *" $(basename "$t") "* ]] || order+=("$t"); done

# reap: waits for one test to end and reports it.
reap() {
        local t p rc=0 done_t=""
        wait -n -p p || rc=$?
        for t in "${!pid_of[@]}"; do
                [ "${pid_of[$t]}" = "$p" ] && done_t="$t"
        done
        [ -n "$done_t" ] || return 0
        unset "pid_of[$done_t]"
        if [ "$rc" = 0 ]; then
                echo "== $done_t ($((SECONDS - start_of[$done_t]))s)"
        else
                echo "== $done_t FAILED (exit $rc, $((SECONDS - start_of[$done_t]))s):"
                cat "$out/$(basename "$done_t").log"
                failed=$((failed + 1))
        fi
}

for t in "${order[@]}"; do
        while [ "${#pid_of[@]}" -ge "$jobs" ]; do reap; done
        "$t" >"$out/$(basename "$t").log" 2>&1 &
        pid_of[$t]=$!
        start_of[$t]=$SECONDS
done
while [ "${#pid_of[@]}" -gt 0 ]; do reap; done
if [ "$failed" -gt 0 ]; then
        echo "$failed of $# unit test programs failed"
        exit 1
fi
echo "$# unit test programs passed"
