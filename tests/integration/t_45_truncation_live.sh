#!/usr/bin/env bash
# it-timeout: 420
# it-background: yes (a cluster of its own: run.sh runs it beside the others)
# A log truncated under a running serve: the classic loss of an unclean
# leader election, on a real cluster (cluster.sh: a KRaft controller and
# three brokers).  One partition on brokers 1 (leader), 2 and 3 with
# unclean.leader.election.enable=true; an acks=1 producer writes 30,000
# records at 1,500/s while serve audits them.  Both followers are frozen
# (SIGSTOP): the ISR shrinks to the leader, which alone takes thousands
# of records that serve reads (the high watermark moves with the leader
# alone).  The leader is killed -9, the followers thaw and one of them,
# without those records, is elected: the log is cut below where serve
# reads, and the producer writes on to the new leader.
#
# serve must stay up and ready throughout; its final figures must equal
# what kcat reads of the final log: the records there, each once (no
# duplicate, no out_of_order), and missing = the seqs acknowledged and
# gone; one 'truncated' anomaly names the offsets taken back and the
# producer's seqs, which hold every seq gone that serve had read.
source "$(dirname "$0")/lib.sh"
source "$IT_DIR/trunc_lib.sh"

T="$(name main)"
DB="$IT_TMP/ledger.db"

tr_up
tr_topic "$T"
log "topic $T: $(tr_meta "$T")"
bg_start SERVE "$EOSAUDIT" serve -b "$TR_BOOT" -t "$T" --db "$DB" \
        --listen "$TR_LISTEN" --gap-grace-ms 2000 2>"$IT_TMP/serve.err"
tr_produce PROD "$T" pA 30000 1500
for ((i = 0; i < 60; i++)); do
        n="$(sqlite3 "file:$DB?mode=ro" "SELECT next_offset FROM partitions WHERE topic = '$T'" 2>/dev/null)"
        [ "${n:-0}" -ge 3000 ] 2>/dev/null && break
        sleep 0.5
done
log "serve has audited up to offset ${n:-none}"

tr_stop_followers "$T"
H0="$(kcat -b "127.0.0.1:$((TR_BASE + 1))" -Q -t "$T:0:-1" 2>/dev/null | awk '/offset/ { print $NF }')"
log "the leader alone from about offset $H0"
for ((i = 0; i < 60; i++)); do
        n="$(sqlite3 "file:$DB?mode=ro" "SELECT next_offset FROM partitions WHERE topic = '$T'" 2>/dev/null)"
        [ "${n:-0}" -ge $((H0 + 3000)) ] 2>/dev/null && break
        sleep 0.5
done
X="$n"
log "serve read the leader alone up to offset $X"
[ "$X" -ge $((H0 + 3000)) ] || die "serve did not read what the leader took alone"

tr_kill_leader "$T"
wait_pid "$PROD" 90
assert_eq "producer exit status" 0 "$WAIT_RC"
log "producer: $(cat "$IT_TMP/pA.json")"
ACKED="$(json_get delivered "$(cat "$IT_TMP/pA.json")")"
tr_assert_final "$T" "offset out of range"
finish
