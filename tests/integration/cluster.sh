#!/usr/bin/env bash
# cluster.sh - a multi-node Apache Kafka cluster on loopback for the tests
# that need replication (t_45, t_46: a log truncated by an unclean leader
# election).  One KRaft controller and three brokers, each its own JVM
# with a small heap, from the jars deploy/kafka/kafka.sh fetches.
#
#   cluster.sh up DIR BASE       format (first time) and start; wait until
#                                every broker is registered
#   cluster.sh down DIR          stop every node this script started there
#   cluster.sh pid DIR N         the pid of node N (0: the controller)
#   cluster.sh bootstrap BASE    the brokers' host:port list
#
# Ports: the controller listens on BASE, broker N (1..3, or
# 1..CLUSTER_BROKERS) on BASE + N.
# Settings chosen for the scenario: followers that stop fetching leave the
# ISR within 2 s (replica.lag.time.max.ms) and a broker that stops
# heartbeating is fenced within 3 s, so the leader alone moves the high
# watermark; eligible leader replicas (KIP-966) are off so that
# unclean.leader.election.enable means what it says.
set -euo pipefail

DIR0="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$DIR0/../.." && pwd)"
KAFKA_SH="$ROOT/deploy/kafka/kafka.sh"
LIB="$ROOT/deploy/kafka/lib"
HOST=127.0.0.1
CLUSTER_ID=ZW9zYXVkaXRjbHVzdGVyMQ
# CLUSTER_BROKERS: brokers (default 3); t_47 adds a fourth that holds the
# group's own topics out of the election's way.
NBROKERS="${CLUSTER_BROKERS:-3}"

say() { echo "cluster.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }

bootstrap() {
        local base="$1" n s=
        for ((n = 1; n <= NBROKERS; n++)); do
                s="${s:+$s,}$HOST:$((base + n))"
        done
        echo "$s"
}

config() { # DIR BASE N
        local dir="$1" base="$2" n="$3"
        echo "node.id=$n"
        echo "controller.quorum.voters=0@$HOST:$base"
        echo "controller.listener.names=CONTROLLER"
        echo "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
        echo "log.dirs=$dir/node$n/log"
        if [ "$n" = 0 ]; then
                echo "process.roles=controller"
                echo "listeners=CONTROLLER://$HOST:$base"
                echo "broker.session.timeout.ms=3000"
        else
                echo "process.roles=broker"
                echo "listeners=PLAINTEXT://$HOST:$((base + n))"
                echo "advertised.listeners=PLAINTEXT://$HOST:$((base + n))"
                echo "inter.broker.listener.name=PLAINTEXT"
                echo "broker.heartbeat.interval.ms=500"
                echo "replica.lag.time.max.ms=2000"
                echo "replica.socket.timeout.ms=2000"
                echo "replica.fetch.wait.max.ms=200"
                echo "num.partitions=1"
                echo "default.replication.factor=1"
                echo "min.insync.replicas=1"
                echo "offsets.topic.replication.factor=1"
                echo "offsets.topic.num.partitions=1"
                echo "transaction.state.log.replication.factor=1"
                echo "transaction.state.log.min.isr=1"
                echo "transaction.state.log.num.partitions=1"
                echo "share.coordinator.state.topic.replication.factor=1"
                echo "share.coordinator.state.topic.min.isr=1"
                echo "group.initial.rebalance.delay.ms=0"
                echo "auto.create.topics.enable=false"
                echo "num.network.threads=1"
                echo "num.io.threads=2"
                echo "num.replica.fetchers=1"
                echo "background.threads=2"
                echo "log.segment.bytes=16777216"
        fi
}

kjava() {
        java -cp "$LIB/*" -Dlog4j2.configurationFile="$ROOT/deploy/kafka/log4j2-tools.properties" \
                -Djava.awt.headless=true "$@"
}

node_pid() { # DIR N: the pid recorded, if it is alive and ours
        local f="$1/node$2.pid" pid
        [ -f "$f" ] || return 1
        pid="$(cat "$f")"
        [[ "$pid" =~ ^[0-9]+$ ]] || return 1
        kill -0 "$pid" 2>/dev/null || return 1
        tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka' || return 1
        echo "$pid"
}

port_busy() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

start_node() { # DIR BASE N
        local dir="$1" base="$2" n="$3" cfg pid
        cfg="$dir/node$n.properties"
        if node_pid "$dir" "$n" >/dev/null; then
                return 0
        fi
        mkdir -p "$dir/node$n"
        config "$dir" "$base" "$n" >"$cfg"
        [ -f "$dir/node$n/log/meta.properties" ] ||
                die "node $n is not formatted"
        setsid nohup java -Xms64m -Xmx256m -XX:+UseSerialGC \
                -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError \
                -Djava.awt.headless=true \
                -Dlog4j2.configurationFile="$ROOT/deploy/kafka/log4j2.properties" \
                -Dkafka.logs.dir="$dir/node$n" \
                -cp "$LIB/*" kafka.Kafka "$cfg" \
                >>"$dir/node$n.log" 2>&1 </dev/null &
        pid=$!
        echo "$pid" >"$dir/node$n.pid"
        say "node $n: pid $pid"
}

# Every broker registered and unfenced: kcat lists all of them.
all_up() { # BASE
        local out
        out="$(timeout 10 kcat -b "$(bootstrap "$1")" -L -m 5 2>/dev/null)" || return 1
        [[ "$out" == *" $NBROKERS brokers:"* ]]
}

up() { # DIR BASE
        local dir="$1" base="$2" n start
        "$KAFKA_SH" fetch
        mkdir -p "$dir"
        for ((n = 0; n <= NBROKERS; n++)); do
                if ! node_pid "$dir" "$n" >/dev/null &&
                        port_busy "$((base + n))"; then
                        die "port $((base + n)) is in use by a process this script did not start"
                fi
        done
        # The formats at once: each is a JVM's start, slow on a busy
        # machine.
        local pids=()
        for ((n = 0; n <= NBROKERS; n++)); do
                mkdir -p "$dir/node$n"
                config "$dir" "$base" "$n" >"$dir/node$n.properties"
                [ -f "$dir/node$n/log/meta.properties" ] && continue
                kjava -Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
                        kafka.tools.StorageTool format -t "$CLUSTER_ID" \
                        -c "$dir/node$n.properties" --ignore-formatted \
                        --feature eligible.leader.replicas.version=0 \
                        >"$dir/node$n.format.log" 2>&1 &
                pids+=("$!")
        done
        for n in "${pids[@]}"; do
                wait "$n" || { cat "$dir"/node*.format.log >&2; die "a format failed"; }
        done
        for ((n = 0; n <= NBROKERS; n++)); do
                start_node "$dir" "$base" "$n"
        done
        start=$SECONDS
        while ((SECONDS - start < 120)); do
                for ((n = 0; n <= NBROKERS; n++)); do
                        node_pid "$dir" "$n" >/dev/null ||
                                { tail -n 30 "$dir/node$n.log" >&2; die "node $n exited"; }
                done
                if all_up "$base"; then
                        say "up after $((SECONDS - start)) s: $(bootstrap "$base")"
                        return 0
                fi
                sleep 0.5
        done
        die "the cluster did not come up within 120 s (logs in $dir)"
}

# stop_nodes DIR N...: SIGTERM to those nodes at once, SIGKILL to any
# still there after 10 s.
stop_nodes() {
        local dir="$1" n pid i alive pids=()
        shift
        for n in "$@"; do
                pid="$(node_pid "$dir" "$n")" || { rm -f "$dir/node$n.pid"; continue; }
                kill -CONT "$pid" 2>/dev/null || true
                kill -TERM "$pid" 2>/dev/null || true
                pids+=("$pid")
        done
        for ((i = 0; i < 40 && ${#pids[@]} > 0; i++)); do
                alive=0
                for pid in "${pids[@]}"; do
                        kill -0 "$pid" 2>/dev/null && alive=1
                done
                [ "$alive" = 0 ] && break
                sleep 0.25
        done
        for pid in "${pids[@]}"; do
                kill -KILL "$pid" 2>/dev/null || true
        done
        for n in "$@"; do
                rm -f "$dir/node$n.pid"
        done
}
down() { # DIR
        local dir="$1" n brokers=()
        # The brokers together (one after another, each controlled shutdown
        # was waited for in turn), then the controller they report to.
        for ((n = 1; n <= NBROKERS; n++)); do
                brokers+=("$n")
        done
        stop_nodes "$dir" "${brokers[@]}"
        stop_nodes "$dir" 0
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
up) [ $# = 2 ] || die "usage: cluster.sh up DIR BASE"; up "$1" "$2" ;;
down) [ $# = 1 ] || die "usage: cluster.sh down DIR"; down "$1" ;;
start) [ $# = 3 ] || die "usage: cluster.sh start DIR BASE N"; start_node "$1" "$2" "$3" ;;
pid) [ $# = 2 ] || die "usage: cluster.sh pid DIR N"; node_pid "$1" "$2" ;;
bootstrap) [ $# = 1 ] || die "usage: cluster.sh bootstrap BASE"; bootstrap "$1" ;;
*) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
