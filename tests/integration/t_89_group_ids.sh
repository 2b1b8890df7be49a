#!/usr/bin/env bash
# serve --group, redeliveries across members (issue 17): three members of
# one group share a 6-partition topic and the 4 partitions of the ids
# topic.  Producer p1 writes a backlog (restarts that resend records on
# their own partitions, in-session duplicates); producer p2, live, writes
# copies of p1's message ids under other keys, so most copies land on
# other partitions, owned by other members; one member is killed with
# SIGKILL mid-stream and another joins.  Checked, independently of
# eosaudit (kcat over the audited topic and over the events topic,
# read_committed), against the producers' manifest:
#  - the redelivered events add up to the copies of each message id after
#    the first (the oracle: records grouped by eos.msgid, in-session
#    repeats, same (producer, epoch, partition, seq), left out), which is
#    also what the manifest says (p1's replays, every record of p2);
#  - each redelivered record is named by exactly one event across the
#    group, and its first copy is another record with the same id;
#  - the duplicates are events of their own, never also redelivered;
#  - the state topic's redelivered counts are 0 (the engine's window is
#    off in group mode: the ids judges are the one source);
#  - an ids topic that exists without cleanup.policy=delete is refused
#    with one line.
# Also printed: bytes per ids record, the latency from a live copy's
# timestamp to its verdict on the events topic.
source "$(dirname "$0")/lib.sh"

PARTS=6
IDS_PARTS=4
T="$(name main)"
G="$(name g)"
IDS="eosaudit-$G-ids"
EVENTS="eosaudit-$G-events"
STATE="eosaudit-$G-state"
P1="$(name p1)" P2="$(name p2)"
create_topic "$T" "$PARTS"

member() { # member VAR NAME: starts serve --group as NAME
        local var="$1" nm="$2"
        bg_start "$var" "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --group "$G" \
                --group-member "$nm" --db "$IT_TMP/$nm.db" --listen off \
                --group-ids-partitions "$IDS_PARTS" \
                --commit-interval-ms 200 --gap-grace-ms 1000 --log-level debug \
                -X session.timeout.ms=6000 -X heartbeat.interval.ms=500 \
                >"$IT_TMP/$nm.log" 2>&1
}

# --- an ids topic with the wrong policy: refused, one line ---------------
BADG="$(name bad)"
create_topic "eosaudit-$BADG-ids" 2 cleanup.policy=compact
group_refused "a compacted ids topic" "$BADG" \
        "eosaudit-$BADG-ids exists but its cleanup.policy is not delete"

# --- an events topic made by hand with three partitions: refused ------------
# (its records are read from partition 0: the events' offsets are their ids)
BADG2="$(name bad2)"
create_topic "eosaudit-$BADG2-events" 3
group_refused "a 3-partition events topic" "$BADG2" \
        "the events topic eosaudit-$BADG2-events has 3 partitions: it must have one"

# --- the backlog, three members, the live copies -----------------------------
produce -t "$T" --producer "$P1" -n 2000 --msgid-from index \
        --restart-every 700 --restart-replay 15 --inject-duplicates 0.01 \
        --seed 891
[ "$PROD_RC" = 0 ] || die "backlog producer failed (exit $PROD_RC)"
manifest_add "$PROD_JSON"
R1="$(json_get redelivered_injected "$PROD_JSON")"

member MA a
member MB b
member MC c
# All three judge ids partitions and b has committed ids records (of the
# backlog) before the live copies start.
for ((i = 0; i < 200; i++)); do
        [ "$(grep -l "judging [1-9][0-9]* ids partition" "$IT_TMP"/[abc].log |
                wc -l)" = 3 ] &&
                [ "$(read_topic "$IDS" '.\n' | wc -l)" -gt 0 ] && break
        sleep 0.1
done
P2_MS=$(date +%s%3N)
bg_start PROD2 "$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --json -q \
        --producer "$P2" -n 1200 --msgid-from index --rate 150 \
        --restart-every 400 --restart-replay 10 --seed 892 \
        >"$IT_TMP/p2.json" 2>"$IT_TMP/p2.err"
sleep 3
kill -0 "$MB" 2>/dev/null || { cat "$IT_TMP/b.log"; die "member b died"; }
kill -KILL "$MB"
log "killed $(($(date +%s%3N) - P2_MS)) ms into the live producer's ~8 s"
wait_pid "$MB" 10
log "member b killed (SIGKILL) mid-stream; what it held:"
grep -h "assigned [0-9]* partition\|judging\|revoked" "$IT_TMP/b.log" | sed 's/^/#   /'
assert_true "member b judged ids partitions before the kill" \
        grep -q "judging [1-9][0-9]* ids partition" "$IT_TMP/b.log"
member MD d

wait_pid "$PROD2" 60
[ "$WAIT_RC" = 0 ] || die "live producer failed (exit $WAIT_RC)"
P2J="$(cat "$IT_TMP/p2.json")"
manifest_add "$P2J"
# Every record p2 delivered is a copy of one of p1's ids (0..1199).
EXPECT=$((R1 + $(json_get delivered "$P2J")))
log "manifest: redelivered copies $EXPECT, duplicates $M_DUPS"

# --- the oracle, over the audited topic --------------------------------------
kcat -C -b "$BOOTSTRAP" -t "$T" -o beginning -e -J -q >"$IT_TMP/topic.json"
ORACLE="$(python3 - "$IT_TMP/topic.json" <<'EOF'
import json, sys
seen, copies = set(), {}
for line in open(sys.argv[1]):
    m = json.loads(line)
    h = m.get("headers") or []
    d = dict(zip(h[0::2], h[1::2]))
    k = (d["eos.producer"], d["eos.epoch"], m["partition"], d["eos.seq"])
    if k in seen:
        continue  # an in-session repeat: a duplicate, not a redelivery
    seen.add(k)
    copies[d["eos.msgid"]] = copies.get(d["eos.msgid"], 0) + 1
print(sum(c - 1 for c in copies.values()))
EOF
)"
assert_eq "oracle (kcat): copies after the first of each id" "$EXPECT" "$ORACLE"

# --- the events topic: each redelivered record once --------------------------
check_events() {
        kcat -C -b "$BOOTSTRAP" -t "$EVENTS" -o beginning -e -J -q \
                -X isolation.level=read_committed >"$IT_TMP/events.json" \
                2>/dev/null
        python3 - "$IT_TMP/topic.json" "$P2" "$IT_TMP/events.json" <<'EOF'
import json, sys
ids, taken, seen = {}, {}, set()
for line in open(sys.argv[1]):
    m = json.loads(line)
    h = m.get("headers") or []
    d = dict(zip(h[0::2], h[1::2]))
    where = (m["partition"], m["offset"])
    ids[where] = d["eos.msgid"]
    k = (d["eos.producer"], d["eos.epoch"], m["partition"], d["eos.seq"])
    if k not in seen:
        seen.add(k)
        taken[d["eos.msgid"]] = taken.get(d["eos.msgid"], 0) + 1
n = {"redelivered": 0, "dup": 0, "other": 0, "twice": 0, "bad": 0,
     "cross_partition": 0, "judges": 0, "per_id_wrong": 0}
named, per_id, judges, lat, bypart = set(), {}, set(), [], {}
for line in open(sys.argv[3]):
    m = json.loads(line)
    e = json.loads(m["payload"])
    if e["kind"] == "duplicate":
        n["dup"] += e["count"]
        continue
    if e["kind"] != "redelivered":
        n["other"] += e["count"]
        continue
    n["redelivered"] += e["count"]
    judges.add(e["member"])
    for off in range(e["offset_lo"], e["offset_hi"] + 1):
        w = (e["partition"], off)
        if w in named:
            n["twice"] += 1
        named.add(w)
    w, f = (e["partition"], e["offset_lo"]), (e["first_partition"], e["first_offset"])
    if w == f or w not in ids or ids.get(f) != ids[w]:
        n["bad"] += 1
    per_id[ids.get(w)] = per_id.get(ids.get(w), 0) + 1
    n["cross_partition"] += w[0] != f[0]
    if e.get("producer") == sys.argv[2] and m.get("ts", 0) > 0:
        lat.append(m["ts"] - e.get("detected_ms", e.get("when_ms", 0)))
        bypart[e["partition"]] = max(bypart.get(e["partition"], 0), lat[-1])
n["per_id_wrong"] = sum(1 for i, c in taken.items() if per_id.get(i, 0) != c - 1)
n["judges"] = len(judges)
lat.sort()
print(" ".join("%s=%d" % kv for kv in sorted(n.items())),
      "latency_ms_p50=%d latency_ms_max=%d" % (
          lat[len(lat) // 2] if lat else -1, lat[-1] if lat else -1),
      "max_by_partition=%s" % ",".join("%d:%d" % kv for kv in sorted(bypart.items())))
EOF
}
for ((i = 0; i < 80; i++)); do
        E="$(check_events)"
        [[ "$E" == *" redelivered=$EXPECT "* ]] && break
        sleep 0.5
done
sleep 1 # nothing more may come
E="$(check_events)"
log "events topic: $E"
kv() { sed -n "s/.*\b$1=\([0-9-]*\).*/\1/p" <<<"$E"; }
assert_eq "redelivered records across the group (events topic)" "$EXPECT" "$(kv redelivered)"
assert_eq "records named redelivered twice" 0 "$(kv twice)"
assert_eq "events whose first copy is not another copy of the id" 0 "$(kv bad)"
assert_eq "ids whose events are not their copies after the first" 0 "$(kv per_id_wrong)"
assert_eq "duplicates (in-session repeats, never redelivered too)" "$M_DUPS" "$(kv dup)"
assert_eq "other anomalies" 0 "$(kv other)"
assert_true "copies on other partitions were caught ($(kv cross_partition))" \
        test "$(kv cross_partition)" -gt 500
assert_true "more than one member judged ($(kv judges))" test "$(kv judges)" -gt 1

# The engine's window is off in group mode: no redelivered in the state.
SR="$(read_topic "$STATE" '%s\n' | python3 -c '
import json, sys
print(sum(json.loads(l)["counts"]["anomalies"]["redelivered"] for l in sys.stdin if l.strip()))')"
assert_eq "redelivered counted in the state topic" 0 "$SR"

# What it costs: the ids records (each packs up to 1,000 entries) and their value bytes.
read_topic "$IDS" '%S\n' |
        awk '{n++; b += $1} END {printf "# ids topic: %d records, %.1f value bytes each\n", n, b / n}'

for m in MA MC MD; do
        kill -TERM "${!m}"
        wait_pid "${!m}" 30
        assert_eq "member ${m#M} exits 0 on SIGTERM" 0 "$WAIT_RC"
done
assert_true "a member read an ids window back after the kill" \
        grep -qE "judging [0-9]+ ids partition\(s\), [1-9][0-9]* ids read back" \
        "$IT_TMP/a.log" "$IT_TMP/c.log" "$IT_TMP/d.log"

# --- the ids topic deleted under a running member: it stops, one line -------
# (and exits: librdkafka 2.0.2 waits forever destroying a consumer of a
# deleted topic, so the member leaves that handle to the ending process)
member MG g
for ((i = 0; i < 100; i++)); do
        grep -q "judging $IDS_PARTS ids partition" "$IT_TMP/g.log" && break
        sleep 0.1
done
deleted_under_member "member g" "$IDS" "$MG" "$IT_TMP/g.log" 30 \
        "ids topic: $IDS was deleted under the running group (UNKNOWN_TOPIC_OR_PART)" \
        -t "$T" --producer "$(name p3)" -n 100 --seed 893
[ "$WAIT_RC" = 2 ] ||
        grep -v "kafka ERROR\|PARTCNT" "$IT_TMP/g.log" | cut -c1-200 | sed 's/^/#   /' >&2
finish
