#!/usr/bin/env bash
# it-timeout: 420
# A log truncated under serve --group (issue 34): t_45's unclean leader
# election (trunc_lib.sh) under two members of one group.  The cluster
# has a fourth broker that holds the group's state and events topics and
# the brokers' group and transaction coordinators (tr_pin), so that the
# election's brokers 1 to 3 can be stopped and killed under the members.
#
# The member that owns the one partition must take the truncation back
# (the single handler, through the group mode's operations): one
# 'truncated' event in the group's events topic, the rewound state in
# its state record.  It is then stopped (SIGTERM) and the other member
# takes the partition over from that state and reads on to the end.
#
# Checked against oracles that read the topics themselves (kcat): the
# final log (records, each once, and the seqs acknowledged and gone) and
# the group's state and events topics.  The group's figures (its state
# record, and /api/v1/summary of the member left) must be the final log's:
# records, missing = what the log lacks, no duplicate, no out_of_order;
# the truncated event names the offsets taken back and the producer's
# seqs, which hold every seq gone that the owner had read.
source "$(dirname "$0")/lib.sh"
export CLUSTER_BROKERS=4
source "$IT_DIR/trunc_lib.sh"

T="$(name main)"
G="$(name g)"
STATE="eosaudit-$G-state"
EVENTS="eosaudit-$G-events"
L_A="127.0.0.1:$((TR_BASE + 10))"
L_B="127.0.0.1:$((TR_BASE + 11))"

tr_up
tr_topic "$T"
log "topic $T: $(tr_meta "$T")"

# What the group runs on, made now and moved to broker 4: its state and
# events topics (serve --group takes them as they are), and the brokers'
# own topics of group offsets and transactions, made by a first use.
create_topic "$STATE" 1 cleanup.policy=compact
create_topic "$EVENTS" 1 cleanup.policy=delete
create_topic "$(name trig)" 1
timeout 20 kcat -b "$TR_BOOT" -G "$(name trig)" -q -e "$(name trig)" >/dev/null 2>&1 || true
"$EOSAUDIT" produce -b "$TR_BOOT" -t "$(name trig)" --producer trig -n 1 \
        --transactional-id "$(name trig)" -q >/dev/null 2>&1 ||
        die "cannot make the transaction state topic"
tr_pin "$STATE" "$EVENTS" __consumer_offsets __transaction_state

member() { # member VAR NAME LISTEN
        bg_start "$1" "$EOSAUDIT" serve -b "$TR_BOOT" -t "$T" --group "$G" \
                --group-member "$2" --db "$IT_TMP/$2.db" --listen "$3" \
                --id-window 0 --commit-interval-ms 200 --gap-grace-ms 2000 \
                -X session.timeout.ms=6000 -X heartbeat.interval.ms=500 \
                2>"$IT_TMP/$2.err"
}
member MA a "$L_A"
member MB b "$L_B"
tr_produce PROD "$T" pA 30000 1500

# The owner: the member whose ledger audits the partition.
for ((i = 0; i < 120; i++)); do
        if [ "$(tr_next "$IT_TMP/a.db" "$T")" -ge 1000 ] 2>/dev/null; then
                OWN=a OTHER=b OWNPID="$MA" OTHERPID="$MB" OTHERL="$L_B"
                break
        elif [ "$(tr_next "$IT_TMP/b.db" "$T")" -ge 1000 ] 2>/dev/null; then
                OWN=b OTHER=a OWNPID="$MB" OTHERPID="$MA" OTHERL="$L_A"
                break
        fi
        sleep 0.5
done
[ -n "${OWN:-}" ] || die "no member audits $T"
DB="$IT_TMP/$OWN.db"
tr_wait_next "$DB" "$T" 3000 30
log "member $OWN owns $T [0], audited up to offset $TR_NEXT"

tr_stop_followers "$T"
H0="$(kcat -b "127.0.0.1:$((TR_BASE + 1))" -Q -t "$T:0:-1" 2>/dev/null | awk '/offset/ { print $NF }')"
log "the leader alone from about offset $H0"
tr_wait_next "$DB" "$T" $((H0 + 3000)) 30 ||
        die "member $OWN did not read what the leader took alone (at $TR_NEXT)"
X="$TR_NEXT"
log "member $OWN read the leader alone up to offset $X"

tr_kill_leader "$T"
for ((i = 0; i < 120; i++)); do
        grep -q "truncated: the log now ends" "$IT_TMP/$OWN.err" && break
        sleep 0.5
done
assert_true "the owner took the truncation back" \
        grep -q "truncated: producer 'pA' seqs" "$IT_TMP/$OWN.err"
assert_true "the owner is running" kill -0 "$OWNPID"
# Its state record past the truncation committed (the next owner must
# read on from the rewound state, not from before it).
sleep 2
kill -TERM "$OWNPID"
wait_pid "$OWNPID" 30
assert_eq "the owner, stopped after the truncation: exit status" 0 "$WAIT_RC"
log "member $OWN stopped: member $OTHER takes $T [0] over"

wait_pid "$PROD" 90
assert_eq "producer exit status" 0 "$WAIT_RC"
ACKED="$(json_get delivered "$(cat "$IT_TMP/pA.json")")"
END="$(tr_end "$T")"
echo "$END" >"$IT_TMP/ends"
for ((i = 0; i < 120; i++)); do
        S="$(group_state_sum "$STATE" "$IT_TMP/ends")"
        [ "$(kv at_end)" = 1 ] && break
        sleep 0.5
done
sleep 5 # the gap grace (2 s) and a tick, then a commit
S="$(group_state_sum "$STATE" "$IT_TMP/ends")"
log "final log ends at $END (the owner had read up to $X); state topic: $S"

read -r recs distinct extra late missing < <(log_oracle "$T")
RANGES="$(tr_missing_ranges "$T")"
log "oracle: $recs records, $distinct distinct, $extra extra, $late late, $missing missing ($RANGES)"
assert_eq "oracle: no extra copy in the final log" 0 "$extra"
assert_eq "oracle: acknowledged = in the log + gone" "$ACKED" $((distinct + missing))
assert_true "oracle: records were lost" test "$missing" -gt 0

assert_true "member $OTHER is running" kill -0 "$OTHERPID"
assert_eq "state: the partition at the log end" 1 "$(kv at_end)"
assert_eq "state: records" "$recs" "$(kv records)"
assert_eq "state: missing" "$missing" "$(kv missing)"
assert_eq "state: duplicate" 0 "$(kv dup)"
assert_eq "state: fenced" 0 "$(kv fenced)"
assert_eq "state: no other anomaly (out_of_order, ...)" 0 "$(kv other)"

E="$(group_events_sum "$EVENTS")"
log "events topic: $E"
TE="$(read_topic "$EVENTS" '%s\n' | grep '"kind":"truncated"')"
log "truncated events: $TE"
assert_eq "events: one truncated event" 1 "$(grep -c . <<<"$TE")"
assert_eq "events: the gaps' records are the missing ones" "$missing" \
        "$(sed -n 's/.*gap=\([0-9]*\).*/\1/p' <<<"$E")"
assert_eq "events: no duplicate" 0 "$(sed -n 's/.*dup=\([0-9]*\).*/\1/p' <<<"$E")"
python3 - "$TE" "$RANGES" "$END" "$X" "$OWN" <<'PY' || die "the truncated event does not name the loss"
import json, sys
e = json.loads(sys.argv[1])
end, x = int(sys.argv[3]), int(sys.argv[4])
det = e["detail"]
assert e["partition"] == 0 and e["member"].endswith("-" + sys.argv[5]), e
assert e["offset_lo"] <= end and e["offset_hi"] >= x - 1, (e, end, x)
st = det["streams"]
assert len(st) == 1 and st[0]["producer"] == "pA", st
lo, hi = st[0]["seq_lo"], st[0]["seq_hi"]
assert e["count"] == st[0]["records"] == hi - lo + 1, e
gone = [tuple(map(int, r.split("-"))) for r in sys.argv[2].split()]
assert gone and gone[0][0] >= lo, (gone, lo, hi)
print("# truncated (%s): offsets %d..%d, pA seqs %d..%d (%d records); gone %s"
      % (det["how"], e["offset_lo"], e["offset_hi"], lo, hi, e["count"],
         sys.argv[2]))
PY
TCOUNT="$(json_get count "$TE")"

# The member left answers for the group.
SUM="$(curl -sf "http://$OTHERL/api/v1/summary")"
log "member $OTHER, group scope: $SUM"
assert_eq "summary: scope" group "$(json_get scope "$SUM")"
assert_eq "summary: records" "$recs" "$(json_get records_total "$SUM")"
assert_eq "summary: missing" "$missing" "$(json_get missing_records "$SUM")"
assert_eq "summary: duplicate" 0 "$(json_get anomalies.duplicate "$SUM")"
assert_eq "summary: out_of_order" 0 "$(json_get anomalies.out_of_order "$SUM")"
assert_eq "summary: truncations" 1 "$(json_get truncations "$SUM")"
assert_eq "summary: truncated records" "$TCOUNT" "$(json_get truncated_records "$SUM")"
A="$(curl -sf "http://$OTHERL/api/v1/anomalies?kind=truncated")"
assert_eq "anomalies?kind=truncated: the event, its streams" "pA" \
        "$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(",".join(s["producer"] for e in d["anomalies"] for s in e["detail"]["streams"]))' "$A")"
assert_true "/metrics: eosaudit_group_truncated_records_total" \
        grep -q "^eosaudit_group_truncated_records_total{topic=\"$T\"} $TCOUNT\$" \
        <<<"$(curl -sf "http://$OTHERL/metrics")"
assert_eq "no member said the topic was recreated" 0 \
        "$(cat "$IT_TMP/a.err" "$IT_TMP/b.err" | grep -c "recreated\|incarnation")"
finish
