# trunc_lib.sh - helpers of the truncation tests (t_45, t_46), sourced
# after lib.sh: a cluster of its own (cluster.sh: a KRaft controller and
# three brokers), a topic replicated on all three that allows unclean
# leader elections, an acks=1 producer, and the truncation itself.
#
# Ports: TR_BASE (29400) for the controller, +1..+3 the brokers, +10 the
# serve under test.  The cluster stops at the test's exit.

TR_BASE="${TR_BASE:-29400}"
# Beside IT_TMP, not in it: finish removes IT_TMP before the exit trap
# stops the cluster, which needs its pid files.
TR_DIR="$IT_TMP.cluster"
CLUSTER_SH="$IT_DIR/cluster.sh"
TR_BOOT="$("$CLUSTER_SH" bootstrap "$TR_BASE")"
TR_LISTEN="127.0.0.1:$((TR_BASE + 10))"
# The oracle (log_oracle, read_topic) reads the cluster.
BOOTSTRAP="$TR_BOOT"

test_cleanup() {
        local n pid
        [ -n "${PROD:-}" ] && kill -CONT "$PROD" 2>/dev/null
        for n in 1 2 3; do
                pid="$("$CLUSTER_SH" pid "$TR_DIR" "$n")" && kill -CONT "$pid" 2>/dev/null
        done
        "$CLUSTER_SH" down "$TR_DIR"
        rm -rf "$TR_DIR"
}

tr_up() {
        rm -rf "$TR_DIR"
        "$CLUSTER_SH" up "$TR_DIR" "$TR_BASE" 2>&1 | sed 's/^/# /'
        [ "${PIPESTATUS[0]}" = 0 ] || die "the cluster did not start"
}

# tr_topic NAME: one partition on brokers 1 (the leader), 2 and 3;
# unclean leader election on, one in-sync replica enough.
tr_topic() {
        local out
        out="$("$KAFKA_SH" tool -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
                org.apache.kafka.tools.TopicCommand --bootstrap-server "$TR_BOOT" \
                --create --topic "$1" --replica-assignment 1:2:3 \
                --config unclean.leader.election.enable=true \
                --config min.insync.replicas=1 2>&1)" ||
                die "cannot create $1: $out"
}

# tr_meta TOPIC [BROKERS]: "leader L isrs I" of partition 0.
tr_meta() {
        kcat -b "${2:-$TR_BOOT}" -L -t "$1" 2>/dev/null |
                sed -n 's/.*partition 0, leader \([-0-9]*\), replicas: [0-9,]*, isrs: \([0-9,]*\).*/leader \1 isrs \2/p'
}

# tr_produce VAR TOPIC PRODUCER N RATE: the reference producer with
# acks=1 and idempotence off (what loses records in an unclean leader
# election), one request in flight (no reordering on retries), in the
# background; its summary goes to $IT_TMP/PRODUCER.json.
tr_produce() {
        local var="$1" topic="$2" p="$3" n="$4" rate="$5"
        bg_start "$var" "$EOSAUDIT" produce -b "$TR_BOOT" -t "$topic" \
                --producer "$p" -n "$n" --rate "$rate" --msgid-from none \
                -X enable.idempotence=false -X acks=1 \
                -X max.in.flight.requests.per.connection=1 --json -q \
                >"$IT_TMP/$p.json" 2>"$IT_TMP/$p.err"
}

# tr_offsets TOPIC: "low high" of partition 0, from the brokers up.
tr_end() {
        kcat -b "$TR_BOOT" -Q -t "$1:0:-1" 2>/dev/null | awk '/offset/ { print $NF }'
}

# tr_stop_followers: SIGSTOP brokers 2 and 3, then wait (30 s) until the
# leader (1) is alone in the ISR: from then on it alone moves the high
# watermark, and what it takes is on no other replica.
tr_stop_followers() {
        local i m
        kill -STOP "$("$CLUSTER_SH" pid "$TR_DIR" 2)" "$("$CLUSTER_SH" pid "$TR_DIR" 3)" ||
                die "cannot stop the followers"
        for ((i = 0; i < 60; i++)); do
                m="$(tr_meta "$1" "127.0.0.1:$((TR_BASE + 1))")"
                [ "$m" = "leader 1 isrs 1" ] && break
                sleep 0.5
        done
        log "followers stopped: $m"
        [ "$m" = "leader 1 isrs 1" ] || die "the ISR did not shrink to the leader: '$m'"
}

# tr_kill_leader TOPIC: kill -9 broker 1, resume the followers, and wait
# (60 s) until one of them leads: an unclean election of a replica that
# lacks what the leader took alone.  The producer (PROD) is held
# (SIGSTOP) from just before to just after, so that it writes on to the
# new leader however slow the machine, and no request of it is in flight
# as the leader dies.
tr_kill_leader() {
        local i m
        kill -0 "$PROD" 2>/dev/null || die "the producer ended before the election"
        kill -STOP "$PROD"
        kill -KILL "$("$CLUSTER_SH" pid "$TR_DIR" 1)" || die "cannot kill broker 1"
        kill -CONT "$("$CLUSTER_SH" pid "$TR_DIR" 2)" "$("$CLUSTER_SH" pid "$TR_DIR" 3)"
        for ((i = 0; i < 120; i++)); do
                m="$(tr_meta "$1" "127.0.0.1:$((TR_BASE + 2)),127.0.0.1:$((TR_BASE + 3))")"
                [[ "$m" == "leader 2 "* || "$m" == "leader 3 "* ]] && break
                sleep 0.5
        done
        log "leader killed: $m"
        [[ "$m" == "leader 2 "* || "$m" == "leader 3 "* ]] ||
                die "no out-of-sync follower was elected: '$m'"
        kill -CONT "$PROD"
}

# tr_oracle TOPIC: the final log, read by kcat: "records distinct extra
# late missing" (lib.sh) and, on stdout's second line, the missing seqs
# of each stream as "lo-hi" ranges.
tr_missing_ranges() {
        kcat -C -b "$TR_BOOT" -t "$1" -o beginning -e -J -q 2>/dev/null |
                python3 -c 'import json, sys
seqs = set()
for line in sys.stdin:
    m = json.loads(line)
    h = m.get("headers") or []
    d = dict(zip(h[0::2], h[1::2]))
    if "eos.seq" in d:
        seqs.add(int(d["eos.seq"]))
out, lo = [], None
top = max(seqs) if seqs else -1
for s in range(top + 1):
    if s not in seqs:
        lo = s if lo is None else lo
    elif lo is not None:
        out.append("%d-%d" % (lo, s - 1)); lo = None
print(" ".join(out))'
}

# tr_summary: serve's /api/v1/summary.
tr_summary() { curl -sf "http://$TR_LISTEN/api/v1/summary"; }

# tr_wait_audited TOPIC SECS: until serve's ledger has read partition 0
# to the log's end (its next offset is the high watermark).
tr_wait_audited() {
        local i end next
        for ((i = 0; i < $2 * 2; i++)); do
                end="$(tr_end "$1")"
                next="$(sqlite3 "file:$DB?mode=ro" "SELECT next_offset FROM partitions WHERE topic = '$1' AND partition = 0" 2>/dev/null)"
                [ -n "$end" ] && [ "$next" = "$end" ] && return 0
                sleep 0.5
        done
        log "not audited to the end in $2 s: ledger at '$next', log end '$end'"
        return 1
}

# tr_assert_final TOPIC HOW: once the producer is done, serve (SERVE, its
# stderr in $IT_TMP/serve.err, ledger DB) read on to the final log's end,
# and X was the offset it had read up to before the truncation: serve is
# up and ready, its figures are the oracle's (kcat reading the final
# log), and one 'truncated' anomaly, found by HOW, names the offsets and
# the producer's seqs taken back.  ACKED: the producer's delivered count.
tr_assert_final() {
        local T="$1" how="$2" END recs distinct extra late missing RANGES S A M
        tr_wait_audited "$T" 60 || true
        sleep 5 # the gap grace (2 s) and a tick
        END="$(tr_end "$T")"
        log "final log ends at $END (serve had read up to $X)"

        assert_true "serve is running" kill -0 "$SERVE"
        assert_eq "/readyz" 200 "$(curl -s -o /dev/null -w '%{http_code}' "http://$TR_LISTEN/readyz")"
        assert_eq "serve's ledger is at the log end" "$END" \
                "$(sqlite3 "file:$DB?mode=ro" "SELECT next_offset FROM partitions WHERE topic = '$T'")"
        assert_eq "one truncation in the ledger" 1 \
                "$(sqlite3 "file:$DB?mode=ro" "SELECT COUNT(*) FROM truncations")"

        # The oracle: kcat reads the final log.
        read -r recs distinct extra late missing < <(log_oracle "$T")
        RANGES="$(tr_missing_ranges "$T")"
        log "oracle: $recs records, $distinct distinct, $extra extra, $late late, $missing missing ($RANGES)"
        assert_eq "oracle: no extra copy in the final log" 0 "$extra"
        assert_eq "oracle: acknowledged = in the log + gone" "$ACKED" $((distinct + missing))
        assert_true "oracle: records were lost" test "$missing" -gt 0

        S="$(tr_summary)"
        log "serve: $S"
        assert_eq "serve: records" "$recs" "$(json_get records_total "$S")"
        assert_eq "serve: missing" "$missing" "$(json_get missing_records "$S")"
        assert_eq "serve: duplicate" 0 "$(json_get anomalies.duplicate "$S")"
        assert_eq "serve: out_of_order" 0 "$(json_get anomalies.out_of_order "$S")"
        assert_eq "serve: fenced" 0 "$(json_get anomalies.fenced "$S")"
        assert_eq "serve: open gaps" 0 "$(json_get open_gaps "$S")"
        assert_eq "serve: no coverage gap, no new incarnation" 0 "$(json_get coverage_gaps "$S")"
        assert_eq "serve: truncated records" \
                "$(sqlite3 "file:$DB?mode=ro" "SELECT SUM(records) FROM truncations")" \
                "$(json_get truncated_records "$S")"

        A="$(curl -sf "http://$TR_LISTEN/api/v1/anomalies?kind=truncated")"
        log "truncated anomalies: $A"
        python3 - "$A" "$RANGES" "$END" "$X" "$how" <<'PY' || die "the truncated event does not name the loss"
import json, sys
d = json.loads(sys.argv[1])
evs = d["anomalies"] if isinstance(d, dict) else d
assert len(evs) == 1, evs
e = evs[0]
end, x = int(sys.argv[3]), int(sys.argv[4])
det = e["detail"]
assert e["kind"] == "truncated" and e["partition"] == 0, e
# From where the log diverged (at or below the new end) to what serve had read.
assert e["offset_lo"] <= end and e["offset_hi"] >= x - 1, (e, end, x)
assert det["how"] == sys.argv[5], det
st = det["streams"]
assert len(st) == 1, st
pa = [s for s in st if s["producer"] == "pA"]
assert len(pa) == 1, st
lo, hi = pa[0]["seq_lo"], pa[0]["seq_hi"]
assert e["count"] == pa[0]["records"] == hi - lo + 1, (e, pa)
# Every seq gone that serve had read is among those taken back.
gone = [tuple(map(int, r.split("-"))) for r in sys.argv[2].split()]
assert gone and gone[0][0] >= lo, (gone, lo, hi)
print("# truncated: offsets %d..%d, pA seqs %d..%d (%d records); gone %s" %
      (e["offset_lo"], e["offset_hi"], lo, hi, e["count"], sys.argv[2]))
PY
        assert_true "one truncated line per stream in serve's log" \
                grep -q "truncated: producer 'pA' seqs" "$IT_TMP/serve.err"
        assert_eq "serve never said the topic was recreated" 0 \
                "$(grep -c "recreated\|use another --db\|incarnation" "$IT_TMP/serve.err")"
        assert_eq "no new incarnation in the ledger" 0 \
                "$(sqlite3 "file:$DB?mode=ro" "SELECT COUNT(*) FROM incarnations")"
        M="$(curl -sf "http://$TR_LISTEN/metrics")"
        assert_true "/metrics: eosaudit_truncated_records_total" \
                grep -q "^eosaudit_truncated_records_total{topic=\"$T\"} [1-9]" <<<"$M"
}

# --- serve --group on the cluster (t_47) ----------------------------------
# With CLUSTER_BROKERS=4 the fourth broker holds what the group needs to
# run on (its state and events topics, the brokers' group and transaction
# coordinators): the election's brokers 1 to 3 are stopped and killed
# under the members, and a coordinator among them would stop the group
# with them.

# tr_pin TOPIC...: every partition of each TOPIC moved to broker 4 alone
# (ReassignPartitionsCommand), and waited for (60 s) until broker 4 leads
# them.
tr_pin() {
        local t p n json="" out i ok
        for t in "$@"; do
                n="$(kcat -b "$TR_BOOT" -L -t "$t" 2>/dev/null | grep -c 'partition [0-9]*,')"
                [ "$n" -ge 1 ] || die "tr_pin: no partition of $t"
                for ((p = 0; p < n; p++)); do
                        json="${json:+$json,}{\"topic\":\"$t\",\"partition\":$p,\"replicas\":[4]}"
                done
        done
        echo "{\"version\":1,\"partitions\":[$json]}" >"$IT_TMP/pin.json"
        out="$("$KAFKA_SH" tool -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
                org.apache.kafka.tools.reassign.ReassignPartitionsCommand \
                --bootstrap-server "$TR_BOOT" --execute \
                --reassignment-json-file "$IT_TMP/pin.json" 2>&1)" ||
                die "cannot move $* to broker 4: $out"
        for ((i = 0; i < 120; i++)); do
                ok=1
                for t in "$@"; do
                        kcat -b "$TR_BOOT" -L -t "$t" 2>/dev/null |
                                grep 'partition [0-9]*,' |
                                grep -qv 'leader 4, replicas: 4, isrs: 4' && ok=0
                done
                [ "$ok" = 1 ] && break
                sleep 0.5
        done
        [ "$ok" = 1 ] || die "$* not on broker 4 alone after 60 s"
        log "on broker 4 alone: $*"
}

# tr_next DB TOPIC: the next offset of partition 0 in a ledger (empty when
# it has none).
tr_next() {
        sqlite3 "file:$1?mode=ro" "SELECT next_offset FROM partitions WHERE topic = '$2' AND partition = 0" 2>/dev/null
}

# tr_wait_next DB TOPIC MIN SECS: until that next offset is at least MIN;
# sets TR_NEXT to the last one read.
tr_wait_next() {
        local i
        for ((i = 0; i < $4 * 2; i++)); do
                TR_NEXT="$(tr_next "$1" "$2")"
                [ "${TR_NEXT:-0}" -ge "$3" ] 2>/dev/null && return 0
                sleep 0.5
        done
        return 1
}
