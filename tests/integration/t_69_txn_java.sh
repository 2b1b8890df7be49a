#!/usr/bin/env bash
# Transactions' atomicity (--txn-manifests) on the real Java client: the
# transactional TxnProducer stamps eos.txn and writes its manifests (the
# contract of schema/HEADERS.md "Transactions"), each transaction spanning
# two topics of 3 partitions, every 3rd one aborted, the last one too (its
# abort is named by a manifest-only transaction at the end).
#
# read_committed: no torn transaction, no aborted record.
# read_uncommitted: every aborted record is an aborted_read, exactly as
# many as kcat finds beyond what read_committed shows.
source "$(dirname "$0")/lib.sh"

count_records() {
        local topic="$1"
        shift
        kcat -C -b "$BOOTSTRAP" -t "$topic" -o beginning -e -q -f 'x\n' "$@" |
                wc -l
}

TXNS=9
PER_TXN=20
ABORT_EVERY=3 # transactions 3, 6 and 9 abort
T1="$(name orders)"
T2="$(name payments)"
M="$(name manifests)"
create_topic "$T1" 3
create_topic "$T2" 3
create_topic "$M" 1

rc=0
out="$("$JAVA_RUN" TxnProducer "$BOOTSTRAP" "$T1" "$(name txn)" \
        "$TXNS" "$PER_TXN" "$ABORT_EVERY" --topic2 "$T2" \
        --txn-manifests "$M" 2>"$IT_TMP/java.err")" || rc=$?
cat "$IT_TMP/java.err"
log "java (exit $rc): $out"
[ "$rc" = 0 ] || die "TxnProducer failed (exit $rc)"

n_abort=$((TXNS / ABORT_EVERY))
committed=$(((TXNS - n_abort) * PER_TXN))
aborted=$((n_abort * PER_TXN))
assert_eq "java committed" "$committed" "$(kv_get committed "$out")"
assert_eq "java aborted" "$aborted" "$(kv_get aborted "$out")"
# One per commit, and one more naming the last abort.
assert_eq "java manifests" $((TXNS - n_abort + 1)) \
        "$(kv_get manifests "$out")"
assert_eq "manifests in the log" $((TXNS - n_abort + 1)) \
        "$(count_records "$M")"

log "== read_committed"
scan_json -t "$T1,$T2" --txn-manifests "$M"
assert_clean_scan "$committed"
assert_scan anomalies.torn 0
assert_scan anomalies.aborted_read 0

log "== read_uncommitted"
oracle=0
for t in "$T1" "$T2"; do
        all="$(count_records "$t" -X isolation.level=read_uncommitted)"
        com="$(count_records "$t")"
        oracle=$((oracle + all - com))
done
log "aborted records in the log (kcat): $oracle"
assert_eq "aborted records, kcat vs the producer" "$aborted" "$oracle"
scan_json -t "$T1,$T2" --txn-manifests "$M" --isolation read_uncommitted
assert_eq "scan exit status" 1 "$SCAN_RC"
assert_scan records_total $((committed + oracle))
assert_scan anomalies.aborted_read "$oracle"
assert_scan anomalies.torn 0

finish
