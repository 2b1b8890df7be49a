#!/usr/bin/env bash
# serve --group (issue 17, first slice): three members of one group share a
# 12-partition topic; one is killed with SIGKILL mid-stream and a fourth
# joins.  The group's result is read by this test from the state topic
# (kcat, read_committed; not through eosaudit): the last state record of
# each partition.  Checked, against the producers' manifest:
#  - every partition has a state, its next offset is the partition's end
#    and its counted records equal that offset (these non-transactional
#    producers leave no offset holes: a record audited twice across the
#    kill or a rebalance, or skipped, shows up right there);
#  - the sums equal the manifest exactly: records, duplicates, missing
#    records; no other anomaly;
#  - the events topic (read_committed) holds each anomaly once across the
#    group: its duplicate events add up to the injected duplicates, its
#    gap events to the missing records, and no other kind (a killed
#    member's uncommitted events are not visible, its successor's are);
#  - the killed member had partitions and committed before it died; the
#    others stop cleanly on SIGTERM;
#  - a state topic that exists without cleanup.policy=compact is refused
#    with one clear line;
#  - /api/v1/group of a running member lists three members whose
#    assignments cover the 12 partitions, each once, itself among them;
#  - /api/v1/summary and /api/v1/anomalies of one member answer for the
#    group by default (its totals equal the state topic's, its events the
#    events topic's), ?scope=member for its own part only (less);
#  - two members with one --group-instance-id: the older one is fenced
#    and stops (exit 2, one line), the newer one audits on, each record
#    once (the state topic's counts equal the manifest again);
#  - the state topic deleted under a running member: it stops (exit 2)
#    with one line saying so; a member started then neither creates it
#    again nor starts from zero (exit 2, one line), nor does one started
#    on the topic recreated empty (the group's offsets, no state).
source "$(dirname "$0")/lib.sh"

PARTS=12
T="$(name main)"
G="$(name g)"
STATE="eosaudit-$G-state"
EVENTS="eosaudit-$G-events"
N_BACKLOG=6000
N_LIVE=6000 RATE_LIVE=600 # ~10 s, while members die and join
create_topic "$T" "$PARTS"

member() { # member VAR NAME [OPTION...]: starts serve --group as NAME
        # (LISTEN=ADDR: with a listener)
        local var="$1" nm="$2"
        shift 2
        bg_start "$var" "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --group "$G" \
                --group-member "$nm" --db "$IT_TMP/$nm.db" \
                --listen "${LISTEN:-off}" "$@" \
                --commit-interval-ms 200 --gap-grace-ms 1000 --log-level debug \
                -X session.timeout.ms=6000 -X heartbeat.interval.ms=500 \
                >"$IT_TMP/$nm.log" 2>&1
}

# --- the wrong state topic first: refused, one line ----------------------
BADG="$(name bad)"
create_topic "eosaudit-$BADG-state" 1 cleanup.policy=delete
group_refused "a non-compacted state topic" "$BADG" \
        "eosaudit-$BADG-state exists but its cleanup.policy is not compact"

# --- a backlog, then three members and a live producer ---------------------
produce -t "$T" --producer "$(name p1)" -n "$N_BACKLOG" \
        --inject-duplicates 0.01 --inject-gaps 0.005 --seed 881
[ "$PROD_RC" = 0 ] || die "backlog producer failed (exit $PROD_RC)"
manifest_add "$PROD_JSON"

# Started one after another, so that partitions are revoked from busy
# members (cooperative rebalances mid-stream), not only assigned.
LISTEN=127.0.0.1:0 member MA a
sleep 1
member MB b
sleep 1
member MC c
bg_start PROD2 "$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --json -q \
        --producer "$(name p2)" -n "$N_LIVE" --rate "$RATE_LIVE" \
        --inject-duplicates 0.02 --inject-gaps 0.01 --seed 882 \
        >"$IT_TMP/p2.json" 2>"$IT_TMP/p2.err"

# The member killed (b, else c) must own audited partitions and the group
# have committed before the kill.
V=""
for ((i = 0; i < 150; i++)); do
        [ -z "$V" ] || break
        [ "$(read_topic "$STATE" '%k\n' | wc -l)" -gt 0 ] || { sleep 0.1; continue; }
        for v in b c; do
                grep -q "assigned [1-9][0-9]* partition" "$IT_TMP/$v.log" &&
                        { V=$v; break; }
        done
        [ -n "$V" ] || sleep 0.1
done
[ -n "$V" ] || V=b
MV="M${V^^}"

# /api/v1/group of member a: the three members, their assignments the 12
# partitions each once, none of them empty (the ids topic's partitions
# are another group's: a member's share of the audited ones is balanced
# on its own), polled while a rebalance settles, at most 5 s.
URL="$(sed -n 's|.*http: listening on \(http://[^ ]*\)$|\1|p' "$IT_TMP/a.log")"
[ -n "$URL" ] || { cat "$IT_TMP/a.log"; die "member a printed no URL"; }
t0="$(date +%s%N)"
for ((i = 0; i < 20; i++)); do
        GV="$(curl -s "${URL}api/v1/group" | python3 -c '
import json, sys
d = json.load(sys.stdin)
ps = [(a["topic"], a["partition"]) for m in d["members"]
      for a in m["assignment"]]
own = sorted((a["topic"], a["partition"]) for a in d["owned"])
mine = sorted((a["topic"], a["partition"]) for m in d["members"] if m["self"]
              for a in m["assignment"])
print("group=%s member=%s members=%d assigned=%d distinct=%d topics=%s "
      "self=%d owned_is_its_assignment=%d idle_members=%d" % (
          d["group"], d["member"], len(d["members"]), len(ps), len(set(ps)),
          ",".join(sorted({t for t, _ in ps})),
          sum(m["self"] for m in d["members"]), bool(own) and own == mine,
          sum(not m["assignment"] for m in d["members"])))' 2>&1)"
        [[ "$GV" == *"members=3 assigned=$PARTS distinct=$PARTS "*"=1 idle_members=0" ]] && break
        sleep 0.25
done
log "/api/v1/group of member a ($(( ($(date +%s%N) - t0) / 1000000 )) ms, $((i + 1)) read(s)): $GV"
assert_eq "/api/v1/group: group, member, three members, the $PARTS partitions each once, every member some" \
        "group=$G member=a members=3 assigned=$PARTS distinct=$PARTS topics=$T self=1 owned_is_its_assignment=1 idle_members=0" \
        "$GV"

sleep 2
kill -0 "${!MV}" 2>/dev/null || { cat "$IT_TMP/$V.log"; die "member $V died"; }
kill -KILL "${!MV}"
wait_pid "${!MV}" 10
log "member $V killed (SIGKILL) mid-stream"
assert_true "member $V had audited partitions before the kill" \
        grep -q "assigned [1-9][0-9]* partition" "$IT_TMP/$V.log"
member MD d

wait_pid "$PROD2" 60
[ "$WAIT_RC" = 0 ] || die "live producer failed (exit $WAIT_RC)"
manifest_add "$(cat "$IT_TMP/p2.json")"
log "manifest: delivered $M_DELIVERED, duplicates $M_DUPS, missing $M_GAPS"

# --- the group's result, from the state topic ------------------------------
# The last committed record of each key; polled until every partition is
# audited to its end and its gaps are confirmed (or 40 s).
ENDS="$IT_TMP/ends"
group_ends "$T" "$PARTS" "$ENDS"
for ((i = 0; i < 80; i++)); do
        S="$(group_state_sum "$STATE" "$ENDS")"
        [[ "$S" == *"at_end=$PARTS "* && "$S" == *"missing=$M_GAPS "* ]] && break
        sleep 0.5
done
log "state topic: $S"
assert_eq "partitions with a state" "$PARTS" "$(kv keys)"
assert_eq "partitions audited to their end" "$PARTS" "$(kv at_end)"
assert_eq "partitions whose records equal their offsets (each record once)" \
        "$PARTS" "$(kv exact)"
assert_eq "records across the group" "$M_DELIVERED" "$(kv records)"
assert_eq "duplicates across the group" "$M_DUPS" "$(kv dup)"
assert_eq "missing records across the group" "$M_GAPS" "$(kv missing)"
assert_eq "other anomalies and counters" 0 "$(kv other)"
assert_eq "fenced records (none written)" 0 "$(kv fenced)"
E="$(group_events_sum "$EVENTS")"
log "events topic: $E"
assert_eq "events topic: duplicates, gaps (missing), fenced, others" \
        "dup=$M_DUPS gap=$M_GAPS fenced=0 other=0" "$E"
# One member's reports answer for the whole group (its group view reads
# the same topics; polled while it catches up, at most 10 s).
want="scope=group records=$(kv records) dup=$(kv dup) missing=$(kv missing)"
for ((i = 0; i < 40; i++)); do
        GS="$(curl -s "${URL}api/v1/summary" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("scope=%s records=%d dup=%d missing=%d" % (d["scope"],
      d["records_total"], d["anomalies"]["duplicate"], d["missing_records"]))
' 2>&1)"
        [ "$GS" = "$want" ] && break
        sleep 0.25
done
log "/api/v1/summary of member a ($((i + 1)) read(s)): $GS"
assert_eq "/api/v1/summary of member a: the group's totals (state topic)" "$want" "$GS"
assert_eq "?scope=member: member a's own part, less than the group's" \
        "scope=member part=1" "$(curl -s "${URL}api/v1/summary?scope=member" |
        python3 -c 'import json, sys; d = json.load(sys.stdin)
print("scope=%s part=%d" % (d["scope"], 0 < d["records_total"] < '"$(kv records)"'))')"
assert_eq "/api/v1/anomalies of member a: the group's events (events topic)" \
        "scope=group dup=$M_DUPS gap=$M_GAPS" "$(curl -s "${URL}api/v1/anomalies?limit=1000" |
        python3 -c 'import json, sys; d = json.load(sys.stdin); n = {}
for e in d["anomalies"]: n[e["kind"]] = n.get(e["kind"], 0) + e["count"]
print("scope=%s dup=%d gap=%d" % (d["scope"], n.get("duplicate", 0), n.get("gap", 0)))')"
assert_true "/metrics of member a: eosaudit_group_records_total is the group's" \
        grep -qx "eosaudit_group_records_total{topic=\"$T\"} $(kv records)" \
        <(curl -s "${URL}metrics")
if [ "$(kv exact)" != "$PARTS" ]; then
        log "history of the partitions whose records fell behind:"
        kcat -b "$BOOTSTRAP" -C -t "$STATE" -e -q -o beginning \
                -X isolation.level=read_committed -f '%T\t%k\t%s\n' |
                python3 -c '
import json, sys
prev = {}
for line in sys.stdin:
    t, k, v = line.rstrip("\n").split("\t", 2)
    d = json.loads(v)
    c = d["counts"]
    gap = d["next_offset"] - c["records"]
    p = prev.get(k)
    if gap and (p is None or p[2] != gap):
        print("#  ", t, k, "next", d["next_offset"], "records", c["records"],
              "previous", p)
    prev[k] = (d["next_offset"], c["records"], gap)'
        grep -h "assigned:\|forgotten at" "$IT_TMP"/[abcd].log | sort | sed 's/^/#   /'
fi

# --- the survivors stop cleanly ----------------------------------------------
SURV=(MA MD)
[ "$V" = b ] && SURV+=(MC) || SURV+=(MB)
for m in "${SURV[@]}"; do
        kill -TERM "${!m}"
        wait_pid "${!m}" 30
        assert_eq "member ${m#M} exits 0 on SIGTERM" 0 "$WAIT_RC"
done
assert_true "a member restored partitions from the state topic" \
        grep -qE "assigned [0-9]+ partition\(s\), [1-9][0-9]* restored" \
        "$IT_TMP/a.log" "$IT_TMP/d.log" "$IT_TMP/$([ "$V" = b ] && echo c || echo b).log"

# --- the state topic deleted under a running group ---------------------------
# A member restores every partition, then its state topic is deleted and
# records keep coming: its next transaction fails and it stops, saying so.
# A member started then is refused (the topic is not created again, empty),
# and so is one started after an operator recreated it empty: the group's
# offsets without a state record are never audited from zero.
state_exists() {
        kcat -b "$BOOTSTRAP" -L 2>/dev/null | grep -q "topic \"$STATE\""
}
restored() { # restored NAME: NAME's log says it restored every partition
        for ((i = 0; i < 200; i++)); do
                grep -q "assigned $PARTS partition(s), $PARTS restored" \
                        "$IT_TMP/$1.log" && return 0
                sleep 0.1
        done
        return 1
}
# Static membership first: two members with one group.instance.id, the
# older one fenced (exit 2, one line), the newer one audits on exactly.
# Both listen: their group view's thread (its own consumer on the state
# topic) runs when the topic is deleted, and must not hold the exit.
LISTEN=127.0.0.1:0 member MS s --group-instance-id "$G-i1"
assert_true "member s restored every partition" restored s
LISTEN=127.0.0.1:0 member ME e --group-instance-id "$G-i1"
wait_pid "$MS" 30
assert_eq "member s, fenced by a newer member with its group.instance.id: exit status" \
        2 "$WAIT_RC"
assert_true "member s says it was fenced (one line)" \
        grep -q "fenced: another member joined with group.instance.id $G-i1 (FENCED_INSTANCE_ID)" \
        "$IT_TMP/s.log"
assert_true "member e restored every partition" restored e
produce -t "$T" --producer "$(name p3)" -n 600 --inject-duplicates 0.02 \
        --seed 883
[ "$PROD_RC" = 0 ] || die "producer p3 failed (exit $PROD_RC)"
manifest_add "$PROD_JSON"
group_ends "$T" "$PARTS" "$ENDS"
for ((i = 0; i < 60; i++)); do
        S="$(group_state_sum "$STATE" "$ENDS")"
        [[ "$S" == *"at_end=$PARTS "* && "$S" == *"dup=$M_DUPS "* ]] && break
        sleep 0.5
done
log "state topic after the fence: $S"
assert_eq "after the fence: partitions audited to their end" "$PARTS" "$(kv at_end)"
assert_eq "after the fence: each record once" "$PARTS" "$(kv exact)"
assert_eq "after the fence: records across the group" "$M_DELIVERED" "$(kv records)"
assert_eq "after the fence: duplicates across the group" "$M_DUPS" "$(kv dup)"
assert_eq "after the fence: missing records" "$M_GAPS" "$(kv missing)"

deleted_under_member "member e" "$STATE" "$ME" "$IT_TMP/e.log" 40 \
        "the state topic $STATE was deleted under the running group (UNKNOWN_TOPIC_OR_PART)" \
        -t "$T" --producer "$(name p4)" -n 240 --seed 884
assert_true "member e did not create the state topic again" \
        eval '! state_exists'
out="$(timeout 40 "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --group "$G" \
        --group-member f --db "$IT_TMP/f.db" --listen off 2>&1)"
rc=$?
assert_eq "a member started without the state topic: exit status" 2 "$rc"
assert_true "it says why: the group's offsets, no state topic" \
        grep -q "the state topic $STATE does not exist (UNKNOWN_TOPIC_OR_PART) but group $G has committed offsets" <<<"$out"
assert_true "it did not create the state topic again" eval '! state_exists'
create_topic "$STATE" 1 cleanup.policy=compact
out="$(timeout 40 "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --group "$G" \
        --group-member g --db "$IT_TMP/g.db" --listen off 2>&1)"
rc=$?
assert_eq "a member on a state topic recreated empty: exit status" 2 "$rc"
assert_true "it refuses the partitions the group has offsets for" \
        grep -qE "\[[0-9]+\] refused: the group has committed offset [0-9]+ for it but the state topic $STATE holds no record of it" <<<"$out"
assert_eq "nothing was written to the recreated state topic" "" \
        "$(kcat -b "$BOOTSTRAP" -C -t "$STATE" -e -q -o beginning -f '%k\n' 2>/dev/null)"
finish
