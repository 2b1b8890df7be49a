#!/usr/bin/env bash
# The reference producer (eosaudit produce, librdkafka) against the auditor,
# one topic per case, 3 partitions each.  Exact counts throughout: what the
# producer reports it wrote is what the audit must find.
source "$(dirname "$0")/lib.sh"

# --- idempotent: N records, nothing else ------------------------------------
log "== idempotent"
N=5000
T="$(name idem)"
create_topic "$T" 3
produce -t "$T" --producer "$(name p-idem)" -n "$N"
assert_eq "produce exit status" 0 "$PROD_RC"
assert_prod delivered "$N"
assert_prod failed 0
assert_prod records "$N"
scan_json -t "$T"
assert_clean_scan "$N"
assert_scan producers 1
assert_scan pairs 3

# --- transactional with aborts ---------------------------------------------
# 1000 records in transactions of 50 with every 3rd one aborted: 20 commit,
# 9 abort (the begun transactions 3, 6, ..., 27; the 29th is the 20th
# commit), and each aborted one is produced again with the same seqs.
log "== transactional, --abort-every 3"
N=1000
TXN=50
T="$(name txn)"
create_topic "$T" 3
produce -t "$T" --producer "$(name p-txn)" -n "$N" \
        --transactional-id "$(name txn)" --txn-size "$TXN" --abort-every 3
assert_eq "produce exit status" 0 "$PROD_RC"
assert_prod delivered "$N"
assert_prod failed 0
assert_prod transactions $((N / TXN))
assert_prod aborted_transactions 9
assert_prod aborted $((9 * TXN))
scan_json -t "$T"
assert_clean_scan "$N"
assert_scan producers 1
# read_uncommitted sees the aborted records as well.  librdkafka keeps one
# producer epoch for the whole session (it does not bump it per transaction
# as transactions v2 Java clients do), so the retry of an aborted
# transaction carries the very same (epoch, seq) headers: every aborted
# record shows up as a duplicate of its committed retry, which follows it.
scan_json -t "$T" --isolation read_uncommitted
assert_eq "scan exit status" 1 "$SCAN_RC"
assert_scan records_total $((N + 9 * TXN))
assert_scan anomalies.duplicate $((9 * TXN))
assert_scan anomalies_total $((9 * TXN))
assert_scan missing_records 0

# --- transactional --zombie --------------------------------------------------
# A commits the first half, B (same transactional.id) fences A at the
# broker and commits the second half, then A's last transaction must fail
# as fenced: none of the zombie's records is committed, the audit is clean.
log "== transactional --zombie"
N=1000
T="$(name txn-zombie)"
create_topic "$T" 3
produce -t "$T" --producer "$(name p-txnz)" -n "$N" \
        --transactional-id "$(name txnz)" --txn-size "$TXN" --zombie
assert_eq "produce exit status" 0 "$PROD_RC"
assert_prod zombie_fenced 1
assert_prod zombie_records 0
assert_prod delivered "$N"
assert_prod records "$N"
assert_prod failed 0
zepoch="$(json_get zombie_epoch "$PROD_JSON")"
epoch="$(json_get epoch "$PROD_JSON")"
assert_true "B's epoch $epoch above the zombie's $zepoch" \
        test "$epoch" -gt "$zepoch"
scan_json -t "$T"
assert_clean_scan "$N"
assert_scan producers 1

# --- idempotent --zombie -----------------------------------------------------
# No broker fencing without a transactional.id: the stale session's writes
# land, and the audit must flag exactly those as fenced.
log "== idempotent --zombie"
N=1000
T="$(name idem-zombie)"
create_topic "$T" 3
produce -t "$T" --producer "$(name p-idz)" -n "$N" --zombie
assert_eq "produce exit status" 0 "$PROD_RC"
assert_prod records "$N"
assert_prod zombie_records $((N / 10))
assert_prod zombie_fenced 0
assert_prod failed 0
assert_prod delivered $((N + N / 10))
scan_json -t "$T"
assert_eq "scan exit status" 1 "$SCAN_RC"
assert_scan records_total $((N + N / 10))
assert_scan anomalies.fenced "$(json_get zombie_records "$PROD_JSON")"
assert_scan anomalies_total $((N / 10))
assert_scan missing_records 0
assert_scan producers 1
assert_eq "kinds of the latest anomalies" \
        "$(anomaly_kinds | sed 's/^[0-9]* //')" fenced
assert_scan topics.0.latest_anomalies.0.epoch "$(json_get zombie_epoch "$PROD_JSON")"

# --- injected duplicates and gaps -------------------------------------------
# The producer writes some records twice (a duplicate each) and skips a seq
# before others (one missing record each; adjacent skips merge into one gap,
# so the gap count may be lower, the missing count may not).
log "== --inject-duplicates 0.01 --inject-gaps 0.005"
N=20000
T="$(name inject)"
create_topic "$T" 3
produce -t "$T" --producer "$(name p-inj)" -n "$N" \
        --inject-duplicates 0.01 --inject-gaps 0.005 --seed 20251201
assert_eq "produce exit status" 0 "$PROD_RC"
assert_prod records "$N"
assert_prod failed 0
dups="$(json_get duplicates_injected "$PROD_JSON")"
gaps="$(json_get gaps_injected "$PROD_JSON")"
# Not vacuous: about 200 and 100 at these rates.
assert_true "duplicates injected ($dups) in 100..300" \
        test "$dups" -ge 100 -a "$dups" -le 300
assert_true "gaps injected ($gaps) in 50..150" \
        test "$gaps" -ge 50 -a "$gaps" -le 150
assert_prod delivered $((N + dups))
scan_json -t "$T"
assert_eq "scan exit status" 1 "$SCAN_RC"
assert_scan records_total $((N + dups))
assert_scan anomalies.duplicate "$dups"
assert_scan missing_records "$gaps"
assert_scan open_gaps 0
assert_scan anomalies.out_of_order 0
assert_scan anomalies.fenced 0
assert_scan anomalies.malformed 0
ngap="$(json_get anomalies.gap)"
assert_true "gap events ($ngap) in 1..$gaps" \
        test "$ngap" -ge 1 -a "$ngap" -le "$gaps"

finish
