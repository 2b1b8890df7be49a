#!/usr/bin/env bash
# it-timeout: 420
# it-background: yes (a cluster of its own: run.sh runs it beside the others)
# The same truncation as t_45 (cluster.sh; an unclean leader election cuts
# the log below what serve had read), but while serve is stopped: serve
# reads what the leader takes alone, stops (SIGTERM), the leader is killed
# -9 and a follower without those records elected, the producer writes on
# (past the offset serve had stopped at: another record is there now).
# serve started again on the same ledger must see that the log is the one
# it knows up to a batch it remembers (fingerprints), take back what it
# had counted past it, and read on: the same figures as t_45 against the
# oracle, one 'truncated' anomaly (found by "fingerprint"), and no new
# incarnation of the topic.
source "$(dirname "$0")/lib.sh"
source "$IT_DIR/trunc_lib.sh"

T="$(name main)"
DB="$IT_TMP/ledger.db"
next_offset() {
        sqlite3 "file:$DB?mode=ro" "SELECT next_offset FROM partitions WHERE topic = '$T'" 2>/dev/null
}

tr_up
tr_topic "$T"
bg_start SERVE "$EOSAUDIT" serve -b "$TR_BOOT" -t "$T" --db "$DB" \
        --listen "$TR_LISTEN" --gap-grace-ms 2000 2>"$IT_TMP/serve.err"
tr_produce PROD "$T" pA 30000 1500
for ((i = 0; i < 60; i++)); do
        n="$(next_offset)"
        [ "${n:-0}" -ge 3000 ] 2>/dev/null && break
        sleep 0.5
done
tr_stop_followers "$T"
H0="$(kcat -b "127.0.0.1:$((TR_BASE + 1))" -Q -t "$T:0:-1" 2>/dev/null | awk '/offset/ { print $NF }')"
for ((i = 0; i < 60; i++)); do
        n="$(next_offset)"
        [ "${n:-0}" -ge $((H0 + 3000)) ] 2>/dev/null && break
        sleep 0.5
done
kill -STOP "$PROD" # it writes on after the election (tr_kill_leader)
kill -TERM "$SERVE"
wait_pid "$SERVE" 30
assert_eq "serve stopped cleanly" 0 "$WAIT_RC"
X="$(next_offset)"
log "serve stopped at offset $X (the leader alone from about $H0)"
[ "$X" -ge $((H0 + 3000)) ] || die "serve did not read what the leader took alone"

kill -CONT "$PROD"
tr_kill_leader "$T"
wait_pid "$PROD" 90
assert_eq "producer exit status" 0 "$WAIT_RC"
log "producer: $(cat "$IT_TMP/pA.json")"
ACKED="$(json_get delivered "$(cat "$IT_TMP/pA.json")")"
END="$(tr_end "$T")"
log "the log ends at $END now; serve had stopped at $X"

bg_start SERVE "$EOSAUDIT" serve -b "$TR_BOOT" -t "$T" --db "$DB" \
        --listen "$TR_LISTEN" --gap-grace-ms 2000 2>>"$IT_TMP/serve.err"
tr_assert_final "$T" "fingerprint"
finish
