#!/usr/bin/env bash
# serve --group (issue 17): the phases t_88 leaves out.  Three members on
# a 12-partition topic while a producer writes (duplicates and gaps
# injected; later a zombie producer session whose stale writes land and
# must each be flagged fenced), then:
#  - shrink: one member stopped with SIGTERM while records flow (exit 0);
#    /api/v1/group of a survivor lists two members covering the 12
#    partitions, each once;
#  - partitions added while the group runs: the topic grown to 16
#    (TopicCommand --alter) and written to; the group finds them within
#    --metadata-refresh-ms (1 s here; the consumer's
#    topic.metadata.refresh.interval.ms) and audits them from their first
#    offset (no state record and no committed offset: new, not lost);
#  - restart all: every member stopped (SIGTERM), records written while
#    none runs, three started again;
#  then the state topic (read here with kcat, read_committed, not through
#  eosaudit) must equal the producers' manifest exactly: every partition
#  audited to its end, its records equal to its offsets (these producers
#  leave no offset holes: a record audited twice or skipped shows there),
#  the sums of records, duplicates, missing and fenced records equal the
#  manifest's, no other anomaly; the events topic holds each anomaly once.
#  - idle: no record flows and the state topic is deleted: every member
#    notices within a few seconds (its idle check of the state topic, no
#    transaction needed), says so in one line and exits 2, and none
#    creates the topic again.
source "$(dirname "$0")/lib.sh"

PARTS=12
PARTS2=16
REFRESH_MS=1000
T="$(name main)"
G="$(name g)"
STATE="eosaudit-$G-state"
EVENTS="eosaudit-$G-events"
create_topic "$T" "$PARTS"
T_START=$(date +%s)

member() { # member VAR NAME [OPTION...]: starts serve --group as NAME
        # (LISTEN=ADDR: with a listener); the log is appended to
        local var="$1" nm="$2"
        shift 2
        bg_start "$var" "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --group "$G" \
                --group-member "$nm" --db "$IT_TMP/$nm.db" \
                --listen "${LISTEN:-off}" "$@" \
                --commit-interval-ms 200 --gap-grace-ms 1000 --log-level debug \
                --metadata-refresh-ms "$REFRESH_MS" \
                -X session.timeout.ms=6000 -X heartbeat.interval.ms=500 \
                >>"$IT_TMP/$nm.log" 2>&1
}
stop() { # stop VAR: SIGTERM, exit 0 within 30 s
        kill -TERM "${!1}"
        wait_pid "${!1}" 30
        local nm="${1#M}"
        assert_eq "member ${nm,,} exits 0 on SIGTERM$2" 0 "$WAIT_RC"
}
topic_cmd() {
        "$KAFKA_SH" tool -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
                org.apache.kafka.tools.TopicCommand \
                --bootstrap-server "$BOOTSTRAP" "$@" 2>&1
}
# group_view WANT_MEMBERS WANT_PARTS: /api/v1/group of member a, polled
# (at most 10 s) until it lists WANT_MEMBERS members whose assignments
# cover WANT_PARTS partitions each once; the last summary in GV.
group_view() {
        local i t0
        t0="$(date +%s%N)"
        for ((i = 0; i < 40; i++)); do
                GV="$(curl -s "${URL}api/v1/group" | python3 -c '
import json, sys
d = json.load(sys.stdin)
ps = [(a["topic"], a["partition"]) for m in d["members"]
      for a in m["assignment"]]
print("members=%d assigned=%d distinct=%d self=%d" % (
    len(d["members"]), len(ps), len(set(ps)),
    sum(m["self"] for m in d["members"])))' 2>&1)"
                [ "$GV" = "members=$1 assigned=$2 distinct=$2 self=1" ] && break
                sleep 0.25
        done
        log "/api/v1/group ($(( ($(date +%s%N) - t0) / 1000000 )) ms, $((i + 1)) read(s)): $GV"
}
url_of() {
        local i u
        for ((i = 0; i < 50; i++)); do
                u="$(sed -n 's|.*http: listening on \(http://[^ ]*\)$|\1|p' "$IT_TMP/$1.log" | tail -1)"
                [ -n "$u" ] && { echo "$u"; return 0; }
                sleep 0.1
        done
        return 1
}

# --- three members and a live producer ------------------------------------
LISTEN=127.0.0.1:0 member MA a
member MB b
member MC c
URL="$(url_of a)" || { cat "$IT_TMP/a.log"; die "member a printed no URL"; }
bg_start PL "$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --json -q \
        --producer "$(name pl)" -n 4800 --rate 600 \
        --inject-duplicates 0.02 --inject-gaps 0.01 --seed 871 \
        >"$IT_TMP/pl.json" 2>"$IT_TMP/pl.err"
group_view 3 "$PARTS"
assert_eq "/api/v1/group: three members, the $PARTS partitions each once" \
        "members=3 assigned=$PARTS distinct=$PARTS self=1" \
        "$GV"

# --- shrink to two while records flow --------------------------------------
# c must own partitions and audit some of the flow before it is stopped
# (a cooperative rebalance may give a new member nothing at first).
for ((i = 0; i < 100; i++)); do
        grep -q "assigned [1-9][0-9]* partition" "$IT_TMP/c.log" && break
        sleep 0.1
done
sleep 1
kill -0 "$PL" 2>/dev/null || die "the live producer ended before the shrink"
stop MC " (shrink to two, records flowing)"
assert_true "member c had partitions and gave them up (committed) as it left" \
        grep -q "group $G: [1-9][0-9]* partition(s) revoked" "$IT_TMP/c.log"
group_view 2 "$PARTS"
assert_eq "/api/v1/group after the shrink: two members, the $PARTS partitions each once" \
        "members=2 assigned=$PARTS distinct=$PARTS self=1" \
        "$GV"

# --- partitions added while the group runs -----------------------------------
out="$(topic_cmd --alter --topic "$T" --partitions "$PARTS2")" ||
        die "cannot add partitions: $out"
log "topic $T grown to $PARTS2 partitions (records still flowing: $(kill -0 "$PL" 2>/dev/null && echo yes || echo no))"
for ((i = 0; i < 50; i++)); do
        kcat -b "$BOOTSTRAP" -L -t "$T" 2>/dev/null |
                grep -q "with $PARTS2 partitions" && break
        sleep 0.2
done
produce -t "$T" --producer "$(name pn)" -n 800 --inject-duplicates 0.02 \
        --inject-gaps 0.01 --seed 872
[ "$PROD_RC" = 0 ] || die "producer pn failed (exit $PROD_RC)"
manifest_add "$PROD_JSON"
group_view 2 "$PARTS2"
assert_eq "/api/v1/group after the topic grew: two members, the $PARTS2 partitions each once" \
        "members=2 assigned=$PARTS2 distinct=$PARTS2 self=1" \
        "$GV"
assert_true "a member says it found partitions added since it started" \
        grep -q "added to $T since this member started" \
        "$IT_TMP/a.log" "$IT_TMP/b.log"

# --- restart all: every member stopped, records written meanwhile ---------------
wait_pid "$PL" 30
[ "$WAIT_RC" = 0 ] || die "live producer failed (exit $WAIT_RC)"
manifest_add "$(cat "$IT_TMP/pl.json")"
stop MA " (restart all)"
stop MB " (restart all)"
produce -t "$T" --producer "$(name pr)" -n 1200 --inject-duplicates 0.02 \
        --inject-gaps 0.01 --seed 873
[ "$PROD_RC" = 0 ] || die "producer pr failed (exit $PROD_RC)"
manifest_add "$PROD_JSON"
# A zombie: an idempotent session that a newer one of the same producer
# replaced goes on writing (no transactional.id, so no broker fences it):
# each of its records that lands is fenced, on whichever member.
produce -t "$T" --producer "$(name pz)" -n 600 --zombie
[ "$PROD_RC" = 0 ] || die "producer pz failed (exit $PROD_RC)"
manifest_add "$PROD_JSON"
LISTEN=127.0.0.1:0 member MA a
member MB b
member MC c
log "manifest: delivered $M_DELIVERED, duplicates $M_DUPS, missing $M_GAPS, fenced $M_ZOMBIE"

# --- the group's result, from the state topic ---------------------------------
ENDS="$IT_TMP/ends"
group_ends "$T" "$PARTS2" "$ENDS"
t0="$(date +%s%N)"
for ((i = 0; i < 80; i++)); do
        S="$(group_state_sum "$STATE" "$ENDS" "$PARTS")"
        [[ "$S" == *"at_end=$PARTS2 "* && "$S" == *"missing=$M_GAPS "* ]] && break
        sleep 0.5
done
log "state topic after the restart ($(( ($(date +%s%N) - t0) / 1000000 )) ms): $S"
assert_eq "partitions with a state" "$PARTS2" "$(kv keys)"
assert_eq "partitions audited to their end" "$PARTS2" "$(kv at_end)"
assert_eq "partitions whose records equal their offsets (each record once)" \
        "$PARTS2" "$(kv exact)"
assert_eq "added partitions audited from their first offset" \
        "$((PARTS2 - PARTS))" "$(kv new_from_first)"
assert_eq "records across the group" "$M_DELIVERED" "$(kv records)"
assert_eq "duplicates across the group" "$M_DUPS" "$(kv dup)"
assert_eq "missing records across the group" "$M_GAPS" "$(kv missing)"
assert_eq "fenced (zombie) records across the group" "$M_ZOMBIE" "$(kv fenced)"
assert_eq "other anomalies and counters" 0 "$(kv other)"
assert_true "some duplicates, gaps and zombie writes injected ($M_DUPS, $M_GAPS, $M_ZOMBIE)" \
        test "$M_DUPS" -gt 0 -a "$M_GAPS" -gt 0 -a "$M_ZOMBIE" -gt 0
E="$(group_events_sum "$EVENTS")"
log "events topic: $E"
assert_eq "events topic: duplicates, gaps (missing), fenced, others" \
        "dup=$M_DUPS gap=$M_GAPS fenced=$M_ZOMBIE other=0" "$E"
assert_true "the restarted members restored partitions from the state topic" \
        grep -qE "assigned [0-9]+ partition\(s\), [1-9][0-9]* restored" \
        "$IT_TMP/a.log" "$IT_TMP/b.log" "$IT_TMP/c.log"

# --- idle members, the state topic deleted ------------------------------------
# No record flows, so no member has a transaction that could fail: each
# must notice on its own (a check of the state topic while idle).
sleep 1
out="$(topic_cmd --delete --topic "$STATE")" || die "cannot delete $STATE: $out"
DELETED="$(date +%s%N)"
log "state topic $STATE deleted under three idle members"
for m in MA MB MC; do
        nm="${m#M}"
        nm="${nm,,}"
        wait_pid "${!m}" 20
        assert_eq "idle member $nm, its state topic deleted: exit status" 2 "$WAIT_RC"
        assert_true "idle member $nm says its state topic was deleted (one line)" \
                grep -q "the state topic $STATE was deleted under the running group (UNKNOWN_TOPIC_OR_PART)" \
                "$IT_TMP/$nm.log"
done
ms=$(( ($(date +%s%N) - DELETED) / 1000000 ))
log "the three idle members stopped $ms ms after the deletion"
assert_true "they stopped within 10 s of the deletion ($ms ms)" test "$ms" -le 10000
assert_true "no member created the state topic again" \
        eval '! kcat -b "$BOOTSTRAP" -L 2>/dev/null | grep -q "topic \"$STATE\""'
log "phases took $(( $(date +%s) - T_START )) s"
finish
