#!/usr/bin/env bash
# The Java client in transactions: instance A runs TXNS transactions, B
# (same transactional.id) fences A and runs TXNS more, then A tries one more
# transaction and must be fenced.  Every ABORT_EVERY-th transaction is
# aborted (the counter runs across A and B).
#
# read_committed (the default): exactly the committed records, no anomaly.
#
# read_uncommitted: the aborted records show up too, and on a broker with
# transactions v2 (KIP-890, the default of Kafka 4.x: TxnProducer reports
# transaction_v2=true) they are still clean.  Every commit or abort bumps
# the producer epoch and TxnProducer stamps the epoch the broker assigned,
# so each transaction, aborted or not, is its own session starting at
# seq 0, and the next transaction's higher epoch is a new session, not a
# duplicate.  (With transactions v1 the epoch would stay put and the
# transaction after an abort would reuse its seqs: duplicates.)  The
# zombie's last transaction never reaches the log (the broker rejects its
# old epoch), so it is in neither count.
source "$(dirname "$0")/lib.sh"

TXNS=6        # per instance
PER_TXN=20
ABORT_EVERY=3 # transactions 3, 6, 9, 12 are aborted
T="$(name main)"
create_topic "$T" 3

rc=0
out="$("$JAVA_RUN" TxnProducer "$BOOTSTRAP" "$T" "$(name txn)" \
        "$TXNS" "$PER_TXN" "$ABORT_EVERY" --zombie 2>"$IT_TMP/java.err")" ||
        rc=$?
cat "$IT_TMP/java.err"
log "java (exit $rc): $out"
[ "$rc" = 0 ] || die "TxnProducer failed (exit $rc)"

n_txn=$((2 * TXNS))
n_abort=$((n_txn / ABORT_EVERY))
committed=$(((n_txn - n_abort) * PER_TXN))
aborted=$((n_abort * PER_TXN))
assert_eq "java committed" "$committed" "$(kv_get committed "$out")"
assert_eq "java aborted" "$aborted" "$(kv_get aborted "$out")"
assert_eq "java fenced" 1 "$(kv_get fenced "$out")"
assert_eq "java zombie_attempted" "$PER_TXN" "$(kv_get zombie_attempted "$out")"
assert_eq "java epoch_source" reflection "$(kv_get epoch_source "$out")"
tv2="$(kv_get transaction_v2 "$out")"
log "transactions v2: $tv2"

scan_json -t "$T"
assert_clean_scan "$committed"
assert_scan producers 1
assert_scan pairs 3

read -r records distinct extra late missing <<<"$(log_oracle "$T" \
        -X isolation.level=read_uncommitted)"
log "read_uncommitted log: $records records, $distinct distinct," \
        "$extra extra copies, $late late, $missing missing"
assert_eq "records in the log, read_uncommitted" \
        $((committed + aborted)) "$records"
if [ "$tv2" = true ]; then
        assert_eq "extra copies (transactions v2: none)" 0 "$extra"
else
        assert_true "extra copies ($extra): aborted seqs reused" \
                test "$extra" -gt 0
fi
scan_json -t "$T" --isolation read_uncommitted
assert_eq "scan exit status" $((extra + late + missing > 0 ? 1 : 0)) "$SCAN_RC"
assert_scan records_total $((committed + aborted))
assert_scan anomalies.duplicate "$extra"
assert_scan anomalies.out_of_order "$late"
assert_scan missing_records "$missing"
assert_scan anomalies.fenced 0
assert_scan anomalies.malformed 0
assert_scan open_gaps 0
assert_scan producers 1

finish
