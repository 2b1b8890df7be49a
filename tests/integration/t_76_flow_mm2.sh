#!/usr/bin/env bash
# A flow that crosses clusters: Kafka's MirrorMaker 2 (dedicated mode,
# org.apache.kafka.connect.mirror.MirrorMaker) copies a stamped topic from
# a second single-node broker (the source cluster, on the next free ports
# from 29600) to the suite's broker (the target), and the flow audit reads
# the source there (--source-bootstrap) and the copy here.  MirrorMaker
# commits no consumer group: the offsets it copied up to go to its
# Connect offsets topic, mm2-offsets.ALIAS.internal on the target, and
# that is the frontier (--processor-offsets-topic); the target topic has
# LogAppendTime, so the flow latency is the replication latency.  Each
# check against an oracle that reads the topics with kcat
# (read_committed) and counts ids:
#   A at-least-once: MirrorMaker killed -9 mid-stream, records produced
#     while it is down pending, then delivered after its restart; the
#     audit's duplicated is the oracle's count of ids copied twice
#   B exactly.once.source.support=enabled (KIP-618): the same kill, no
#     copy twice: the audit is clean
# it-timeout: 900
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/flow_lib.sh"

command -v kcat >/dev/null || die "kcat not found"
"$KAFKA_SH" mirror-fetch >"$IT_TMP/mirror-fetch.log" 2>&1 ||
        { cat "$IT_TMP/mirror-fetch.log"; die "no MirrorMaker 2 jars"; }

# --- the source cluster: a second broker -----------------------------------
SRC_DIR="$IT_TMP/source-cluster"
src_kafka() {
        KAFKA_PORT="$SRC_PORT" KAFKA_DATA_DIR="$SRC_DIR/data" \
                KAFKA_LOG="$SRC_DIR/kafka.log" KAFKA_PID_FILE="$SRC_DIR/kafka.pid" \
                KAFKA_HEAP_OPTS="-Xms128m -Xmx384m" "$KAFKA_SH" "$@"
}
SRC_PORT=
for p in $(seq 29600 3 29660); do
        if it_port_free "$p" && it_port_free $((p + 1)) && it_port_free $((p + 2)); then
                SRC_PORT=$p
                break
        fi
done
[ -n "$SRC_PORT" ] || die "no three free ports in 29600..29662"
MM_PID=
test_cleanup() {
        [ -n "$MM_PID" ] && kill -KILL "$MM_PID" 2>/dev/null
        src_kafka down >/dev/null 2>&1
}
mkdir -p "$SRC_DIR"
src_kafka up >"$SRC_DIR/up.log" 2>&1 ||
        { tail -n 30 "$SRC_DIR/up.log"; die "the source cluster did not start"; }
SRC_BOOT="127.0.0.1:$SRC_PORT"
log "source cluster $SRC_BOOT, target cluster $BOOTSTRAP"

# src_produce ARGS...: eosaudit produce into the source cluster.
src_produce() {
        "$EOSAUDIT" produce -b "$SRC_BOOT" --json -q "$@" >>"$IT_TMP/produce.json" ||
                die "produce $* into the source cluster failed"
}

# mm_start ALIAS PROPS...: MirrorMaker 2 copying SRC from cluster ALIAS to
# the target (alias tgt-ALIAS), in the background (MM_PID); PROPS are extra
# lines of its properties.  Its offsets are flushed every 5 s (a worker
# setting: MirrorMaker takes it per target cluster, TARGET.KEY, and
# ignores it at the top level): a kill between two flushes leaves records
# copied but not recorded as copied.
mm_start() {
        local alias="$1" props="$IT_TMP/mm2-$1.properties"
        shift
        {
                echo "clusters = $alias, tgt-$alias"
                echo "$alias.bootstrap.servers = $SRC_BOOT"
                echo "tgt-$alias.bootstrap.servers = $BOOTSTRAP"
                echo "$alias->tgt-$alias.enabled = true"
                echo "$alias->tgt-$alias.topics = $SRC"
                echo "tgt-$alias->$alias.enabled = false"
                echo "tasks.max = 1"
                # Plugins from their manifests, not a scan of every jar:
                # half a minute less at each start on a busy machine.
                echo "plugin.discovery = service_load"
                for k in replication.factor offset.storage.replication.factor \
                        status.storage.replication.factor \
                        config.storage.replication.factor \
                        offset-syncs.topic.replication.factor \
                        checkpoints.topic.replication.factor \
                        heartbeats.topic.replication.factor; do
                        echo "$k = 1"
                done
                echo "emit.heartbeats.enabled = false"
                echo "emit.checkpoints.enabled = false"
                echo "sync.group.offsets.enabled = false"
                echo "sync.topic.acls.enabled = false"
                echo "sync.topic.configs.enabled = false"
                echo "refresh.topics.interval.seconds = 5"
                echo "tgt-$alias.offset.flush.interval.ms = 5000"
                printf '%s\n' "$@"
        } >"$props"
        KAFKA_MIRROR_HEAP="-Xmx256m" "$KAFKA_SH" mirror "$props" \
                >>"$IT_TMP/mm2-$alias.log" 2>&1 &
        MM_PID=$!
        IT_BG_PIDS+=("$MM_PID")
        log "MirrorMaker 2 ($alias -> tgt-$alias) started, pid $MM_PID"
}

mm_kill() {
        kill -KILL "$MM_PID" 2>/dev/null
        wait "$MM_PID" 2>/dev/null
        log "MirrorMaker 2 killed -9 (pid $MM_PID)"
        MM_PID=
}

# count_ids BOOTSTRAP TOPIC: "records distinct_ids ids_seen_more_than_once
# extra_copies" of TOPIC by eos.msgid, read by kcat (read_committed).
count_ids() {
        kcat -C -b "$1" -t "$2" -o beginning -e -q \
                -X isolation.level=read_committed -f '%h\n' 2>/dev/null |
                python3 -c 'import collections, re, sys
c = collections.Counter()
n = 0
for line in sys.stdin:
    m = re.search(r"(?:^|,)eos\.msgid=([^,]*)", line.rstrip("\n"))
    n += 1
    if m:
        c[m.group(1)] += 1
print(n, len(c), sum(1 for v in c.values() if v > 1),
      sum(v - 1 for v in c.values() if v > 1))'
}

# wait_copied N SECONDS: until the sink holds N distinct ids.
wait_copied() {
        local want="$1" limit="$2" start=$SECONDS got
        while ((SECONDS - start < limit)); do
                read -r _ got _ _ < <(count_ids "$BOOTSTRAP" "$SINK")
                [ "${got:-0}" -ge "$want" ] && return 0
                sleep 1
        done
        log "sink $SINK holds ${got:-0} distinct ids, not $want, after $limit s"
        tail -n 20 "$IT_TMP/mm2-$ALIAS.log"
        return 1
}

# flow_scan: the flow audit, the source on the other cluster, the
# frontier MirrorMaker's offsets.
flow_scan() {
        scan_flow -t "$SINK" --source "$SRC" --source-bootstrap "$SRC_BOOT" \
                --processor-offsets-topic "mm2-offsets.$ALIAS.internal"
}

# mm_case TAG PROPS...: the scenario of the header, with MirrorMaker's
# extra PROPS; sets O_* (the oracle at the end) and leaves the last scan.
mm_case() {
        local tag="$1" n0=400 n1=3000 down_ms t_kill t_restart
        shift
        ALIAS="src$tag"
        SRC="$(name "$tag-src")"
        SINK="$ALIAS.$SRC" # DefaultReplicationPolicy: ALIAS.TOPIC
        BOOTSTRAP="$SRC_BOOT" create_topic "$SRC" 2
        # The copy's timestamps are the target's append times: latency.
        create_topic "$SINK" 2 message.timestamp.type=LogAppendTime
        src_produce -t "$SRC" --producer "$(name "$tag-p")" -n "$n0"
        mm_start "$ALIAS" "$@"
        wait_copied "$n0" 300 || die "$tag: MirrorMaker copied nothing"
        log "$tag: the first $n0 records copied"
        # A stream, and MirrorMaker killed in its middle.
        "$EOSAUDIT" produce -b "$SRC_BOOT" -q -t "$SRC" \
                --producer "$(name "$tag-p2")" -n "$n1" --rate 250 \
                >/dev/null 2>&1 &
        local ppid=$!
        sleep 5
        mm_kill
        t_kill=$(date +%s%3N)
        wait "$ppid" || die "$tag: the stream's producer failed"
        read -r s_rec s_ids _ _ < <(count_ids "$SRC_BOOT" "$SRC")
        read -r _ k_ids _ _ < <(count_ids "$BOOTSTRAP" "$SINK")
        log "$tag: while MirrorMaker is down: source $s_rec records," \
                "$s_ids ids; sink $k_ids ids"
        assert_eq "$tag: source records" "$((n0 + n1))" "$s_ids"
        assert_true "$tag: some records not copied yet ($k_ids of $s_ids)" \
                test "$k_ids" -lt "$s_ids"
        flow_scan
        assert_f flow.due_by processor-offsets
        assert_f flow.group_committed true
        assert_f flow.source_records "$s_ids"
        assert_f flow.pending "$((s_ids - k_ids))"
        assert_f flow.lost 0
        assert_f flow.unexpected 0
        # Pending lies above the offsets MirrorMaker recorded.
        local lag
        lag="$(fget flow.processor_lag)"
        assert_true "$tag: processor lag $lag >= pending $((s_ids - k_ids))" \
                test "$lag" -ge "$((s_ids - k_ids))"
        # Restarted: it goes on from its last flushed offsets.
        sleep 2
        t_restart=$(date +%s%3N)
        mm_start "$ALIAS" "$@"
        wait_copied "$s_ids" 300 || die "$tag: MirrorMaker did not catch up"
        mm_kill
        down_ms=$((t_restart - t_kill))
        read -r O_REC O_IDS O_DUP O_EXTRA < <(count_ids "$BOOTSTRAP" "$SINK")
        log "$tag: oracle: sink $O_REC records, $O_IDS ids, $O_DUP ids" \
                "copied more than once ($O_EXTRA extra copies);" \
                "MirrorMaker down $down_ms ms"
        flow_scan
        assert_f flow.source_records "$s_ids"
        assert_f flow.pending 0
        assert_f flow.lost 0
        assert_f flow.unexpected 0
        assert_f flow.duplicated "$O_DUP"
        assert_f flow.duplicate_copies "$O_EXTRA"
        assert_f flow.delivered "$((s_ids - O_DUP))"
        assert_f verdict "$([ "$O_DUP" = 0 ] && echo clean || echo anomalies)"
        # Replication latency: the records produced while MirrorMaker was
        # down waited for it.
        local maxl
        maxl="$(fget flow.latency_ms.max)"
        assert_true "$tag: replication latency max $maxl ms >= half the downtime ($down_ms ms)" \
                test "$maxl" -ge "$((down_ms / 2))"
}

log "== A: at-least-once, killed -9 mid-stream and restarted"
mm_case a
assert_true "A: the kill made copies twice ($O_DUP)" test "$O_DUP" -gt 0
assert_eq "A: scan exit status" 1 "$SCAN_RC"

log "== B: exactly.once.source.support=enabled, the same kill"
mm_case b "tgt-srcb.exactly.once.source.support = enabled"
assert_eq "B: oracle: no id copied twice" 0 "$O_DUP"
assert_eq "B: scan exit status" 0 "$SCAN_RC"

finish
