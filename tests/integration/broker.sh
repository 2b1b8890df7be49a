# broker.sh - which Kafka broker the integration tests use; sourced by
# run.sh and lib.sh (needs ROOT).  Sets and exports KAFKA_PORT,
# KAFKA_DATA_DIR, KAFKA_LOG and KAFKA_PID_FILE for deploy/kafka/kafka.sh.
#
# By default the suite has a broker of its own, apart from the demo
# broker of `make kafka-up` (127.0.0.1:9092) and the benchmarks' (19092):
# 127.0.0.1:29092 (controller 29093), its data, log and pid file in
# deploy/kafka/test/.  When that port or its controller port is taken by
# something this suite did not start, run.sh picks the next free ports
# (29095, 29098, ...: three each) and records them in deploy/kafka/test/port, where a
# test run on its own finds it.  Set KAFKA_PORT (and the others) to use
# another broker; kafka.sh never stops or touches a broker it did not start.
# shellcheck shell=bash

IT_BROKER_DIR="$ROOT/deploy/kafka/test"
# IT_OWN_BROKER=1 comes from run.sh to its tests (and to itself under
# its lock) with the port it chose.
if [ "${IT_OWN_BROKER:-}" = 1 ] || [ -z "${KAFKA_PORT:-}" ]; then
        IT_OWN_BROKER=1
        if [ -z "${KAFKA_PORT:-}" ]; then
                KAFKA_PORT="$(cat "$IT_BROKER_DIR/port" 2>/dev/null)" || KAFKA_PORT=
        fi
        [[ "$KAFKA_PORT" =~ ^[0-9]+$ ]] || KAFKA_PORT=29092
        KAFKA_DATA_DIR="${KAFKA_DATA_DIR:-$IT_BROKER_DIR/data}"
        KAFKA_LOG="${KAFKA_LOG:-$IT_BROKER_DIR/kafka.log}"
        KAFKA_PID_FILE="${KAFKA_PID_FILE:-$IT_BROKER_DIR/kafka.pid}"
        # The controller port follows KAFKA_PORT, as in kafka.sh.
        unset KAFKA_CONTROLLER_PORT
else
        IT_OWN_BROKER=0
        KAFKA_DATA_DIR="${KAFKA_DATA_DIR:-$ROOT/deploy/kafka/data}"
        KAFKA_LOG="${KAFKA_LOG:-$ROOT/deploy/kafka/kafka.log}"
        KAFKA_PID_FILE="${KAFKA_PID_FILE:-$ROOT/deploy/kafka/kafka.pid}"
fi
export KAFKA_PORT KAFKA_DATA_DIR KAFKA_LOG KAFKA_PID_FILE IT_OWN_BROKER

# it_port_free PORT: nothing listens on 127.0.0.1:PORT.
it_port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# it_broker_pick: run.sh, under its lock, before starting the broker.
# Keeps KAFKA_PORT when this suite's broker runs there or its ports are
# free; else moves to the next free triple and records it.  A broker has
# three ports: KAFKA_PORT, the controller's (+1) and SASL_SSL's (+2,
# deploy/kafka/secure.sh).
it_broker_pick() {
        local p i
        [ "$IT_OWN_BROKER" = 1 ] || return 0
        "$ROOT/deploy/kafka/kafka.sh" status >/dev/null 2>&1 && return 0
        # The port recorded (or given) first, as said above: two suites
        # on one machine each keep their own.
        if it_port_free "$KAFKA_PORT" && it_port_free "$((KAFKA_PORT + 1))" &&
                it_port_free "$((KAFKA_PORT + 2))"; then
                return 0
        fi
        for ((i = 0; i < 50; i++)); do
                p=$((29092 + 3 * i))
                if it_port_free "$p" && it_port_free "$((p + 1))" &&
                        it_port_free "$((p + 2))"; then
                        KAFKA_PORT="$p"
                        mkdir -p "$IT_BROKER_DIR"
                        echo "$p" >"$IT_BROKER_DIR/port"
                        return 0
                fi
        done
        echo "run.sh: no three free ports in 29092..29241 for the test broker" >&2
        return 1
}
