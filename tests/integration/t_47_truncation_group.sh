#!/usr/bin/env bash
# it-timeout: 420
# it-background: yes (a cluster of its own: run.sh runs it beside the others)
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
#
# The same election cuts a second topic under a running scan (issue 34's
# "a partition that shrinks under a scan"): the scan, slowed by small
# fetches, is held (SIGSTOP) once it has read past where the followers
# stopped, and thawed after the election.  It must take the same handler
# path and end where the log ends then, with the figures of kcat's reading
# of the final log up to that end.
source "$(dirname "$0")/lib.sh"
export CLUSTER_BROKERS=4
source "$IT_DIR/trunc_lib.sh"

T="$(name main)"
T2="$(name scanned)"
G="$(name g)"
STATE="eosaudit-$G-state"
EVENTS="eosaudit-$G-events"
L_A="127.0.0.1:$((TR_BASE + 10))"
L_B="127.0.0.1:$((TR_BASE + 11))"

tr_up
tr_topic "$T"
tr_topic "$T2"
log "topic $T: $(tr_meta "$T"); $T2: $(tr_meta "$T2")"

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
tr_produce PROD "$T" pA 45000 1500

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
# T2's producer from now: a short log before the followers stop, so that
# the slowed scan soon reads past it.
tr_produce PROD2 "$T2" pB 45000 1500
sleep 1

tr_stop_followers "$T"
tr_stop_followers "$T2"
H0="$(kcat -b "127.0.0.1:$((TR_BASE + 1))" -Q -t "$T:0:-1" 2>/dev/null | awk '/offset/ { print $NF }')"
H2="$(kcat -b "127.0.0.1:$((TR_BASE + 1))" -Q -t "$T2:0:-1" 2>/dev/null | awk '/offset/ { print $NF }')"
log "the leader alone from about offset $H0 of $T, $H2 of $T2"
tr_wait_next "$DB" "$T" $((H0 + 3000)) 30 ||
        die "member $OWN did not read what the leader took alone (at $TR_NEXT)"
X="$TR_NEXT"
log "member $OWN read the leader alone up to offset $X"

# The scan of T2, from its start to the end it has now (past H2), held
# once it has committed past H2 + 300 (small fetches: a batch or so a
# round trip).
bg_start SCAN "$EOSAUDIT" scan -b "$TR_BOOT" -t "$T2" --db "$IT_TMP/scan.db" \
        --json --no-progress --threads 1 --commit-records 200 \
        -X message.max.bytes=1000 -X fetch.max.bytes=1024 \
        -X max.partition.fetch.bytes=1024 -X queued.max.messages.kbytes=1 \
        >"$IT_TMP/scan.json" 2>"$IT_TMP/scan.err"
for ((i = 0; i < 600; i++)); do
        n="$(tr_next "$IT_TMP/scan.db" "$T2")"
        [ "${n:-0}" -ge $((H2 + 300)) ] 2>/dev/null && break
        kill -0 "$SCAN" 2>/dev/null || break
        sleep 0.1
done
kill -STOP "$SCAN" 2>/dev/null || die "the scan ended before it could be held (at ${n:-none})"
X2="$(tr_next "$IT_TMP/scan.db" "$T2")"
[ "${X2:-0}" -ge $((H2 + 300)) ] || die "the scan was held at ${X2:-none}, below $((H2 + 300))"
log "the scan of $T2 held at offset $X2"

kill -STOP "$PROD2" 2>/dev/null
tr_kill_leader "$T"
for ((i = 0; i < 120; i++)); do
        m="$(tr_meta "$T2" "127.0.0.1:$((TR_BASE + 2)),127.0.0.1:$((TR_BASE + 3))")"
        [[ "$m" == "leader 2 "* || "$m" == "leader 3 "* ]] && break
        sleep 0.5
done
log "$T2: $m"
# The scan first, then the producer: the scan's position is past the new
# log's end when it fetches again (offset out of range).
kill -CONT "$SCAN"
wait_pid "$SCAN" 120
assert_eq "scan: exit status (anomalies)" 1 "$WAIT_RC"
kill -CONT "$PROD2" 2>/dev/null
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

# --- the scan whose partition shrank ---------------------------------------
wait_pid "$PROD2" 60
SJ="$(cat "$IT_TMP/scan.json")"
TR2="$(sqlite3 "file:$IT_TMP/scan.db?mode=ro" "SELECT offset_lo, offset_hi, log_end, records, how FROM truncations")"
log "scan: $(grep "truncated:" "$IT_TMP/scan.err" | head -2)"
log "scan's truncation (offset_lo|offset_hi|log_end|records|how): $TR2"
IFS='|' read -r lo2 hi2 end2 n2 how2 <<<"$TR2"
assert_eq "scan: one truncation" 1 "$(json_get truncations "$SJ")"
assert_true "scan: the offsets it had read past the new end taken back" \
        test "$lo2" -le "$end2" -a "$hi2" -ge $((X2 - 1))
assert_eq "scan: truncated records" "$n2" "$(json_get truncated_records "$SJ")"
# The oracle: the final log up to the end the scan stopped at (the log's
# end when it found the truncation).
read -r recs2 distinct2 extra2 late2 missing2 < <(log_oracle "$T2" -c "$end2")
log "oracle, $T2 up to $end2: $recs2 records, $extra2 extra, $late2 late, $missing2 missing"
assert_eq "scan: records" "$recs2" "$(json_get records_total "$SJ")"
assert_eq "scan: missing" "$missing2" "$(json_get missing_records "$SJ")"
assert_eq "scan: duplicate" "$extra2" "$(json_get anomalies.duplicate "$SJ")"
assert_eq "scan: out_of_order" "$late2" "$(json_get anomalies.out_of_order "$SJ")"
assert_eq "scan: no new incarnation" 0 \
        "$(sqlite3 "file:$IT_TMP/scan.db?mode=ro" "SELECT COUNT(*) FROM incarnations")"
finish
