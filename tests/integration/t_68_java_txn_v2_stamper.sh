#!/usr/bin/env bash
# The Java transactional client under transactions v2 (Kafka 4: the broker
# raises the producer epoch at every commit), stamped as schema/HEADERS.md
# says (tests/java TxnStamper: the broker's pid and epoch, seqs from 0 in
# each epoch, eos.prev_epoch/eos.prev_seq on the first record of each epoch
# on a partition).  1,000 transactions must audit clean, each epoch a new
# session; and a record lost at the end of a transaction (stamped, never
# sent) must come out as a gap of exactly one missing record, found through
# the next epoch's eos.prev_*.
source "$(dirname "$0")/lib.sh"

TXNS=1000
PER_TXN=5

# --- 1,000 transactions, nothing lost -----------------------------------------
T="$(name clean)"
create_topic "$T" 3
rc=0
out="$("$JAVA_RUN" TxnStamper "$BOOTSTRAP" "$T" "$(name txn)" "$TXNS" "$PER_TXN" \
        2>"$IT_TMP/java.err")" || rc=$?
cat "$IT_TMP/java.err"
log "java (exit $rc): $out"
[ "$rc" = 0 ] || die "TxnStamper failed (exit $rc)"
assert_eq "java sent" $((TXNS * PER_TXN)) "$(kv_get sent "$out")"
assert_eq "java transaction_v2" true "$(kv_get transaction_v2 "$out")"
# Transactions v2: a new epoch for every transaction.
assert_eq "java epoch changes" $((TXNS - 1)) "$(kv_get epoch_changes "$out")"
scan_json -t "$T"
assert_clean_scan $((TXNS * PER_TXN))
assert_scan anomalies.fenced 0
assert_scan anomalies.duplicate 0
assert_scan producers 1
assert_scan pairs 3

# --- the last record of transaction 100 lost ------------------------------------
T="$(name lost)"
create_topic "$T" 3
rc=0
out="$("$JAVA_RUN" TxnStamper "$BOOTSTRAP" "$T" "$(name txn-lost)" 200 "$PER_TXN" 100 \
        2>"$IT_TMP/java2.err")" || rc=$?
cat "$IT_TMP/java2.err"
log "java (exit $rc): $out"
[ "$rc" = 0 ] || die "TxnStamper failed (exit $rc)"
assert_eq "java dropped" 1 "$(kv_get dropped "$out")"
scan_json -t "$T"
assert_eq "scan exit status" 1 "$SCAN_RC"
assert_scan records_total $((200 * PER_TXN - 1))
assert_scan anomalies.gap 1
assert_scan missing_records 1
assert_scan anomalies_total 1
assert_scan anomalies.fenced 0
assert_scan anomalies.duplicate 0
# The gap names the lost record: records 500..504 (transaction 100) go
# round-robin to partitions 2, 0, 1, 2, 0; the last is partition 0's second
# record of that epoch, seq 1.
python3 - "$SCAN_JSON" <<'PY' || die "bad gap evidence"
import json, sys
d = json.loads(sys.argv[1])
g = [a for t in d["topics"] for a in t["latest_anomalies"] if a["kind"] == "gap"]
assert len(g) == 1, g
g = g[0]
assert g["partition"] == (100 * 5 + 4) % 3, g
assert g["seq_lo"] == g["seq_hi"] == 1 and g["count"] == 1, g
print("# gap:", g["partition"], "epoch", g["epoch"], "seq", g["seq_lo"])
PY

finish
