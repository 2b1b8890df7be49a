#!/usr/bin/env bash
# The Java client (kafka-clients 4.1, enable.idempotence=true, acks=all,
# retries=MAX, 5 in flight) writes N records round robin over 3 partitions:
# the audit must count exactly N records from one producer, on 3 pairs,
# with no anomaly.  Then one record whose headers copy a Java record's
# (kcat) must come out as exactly one duplicate: the clean result above
# really comes from reading the Java client's headers.
source "$(dirname "$0")/lib.sh"

N=3000
T="$(name main)"
create_topic "$T" 3

out="$("$JAVA_RUN" IdempotentProducer "$BOOTSTRAP" "$T" jidem "$N" 2>&1)" ||
        die "IdempotentProducer failed: $out"
log "java: $out"
assert_eq "java delivered" "$N" "$(kv_get delivered "$out")"
assert_eq "java failed" 0 "$(kv_get failed "$out")"

scan_json -t "$T"
assert_clean_scan "$N"
assert_scan producers 1
assert_scan pairs 3
assert_scan partitions 3
assert_scan topics.0.topic "$T"
assert_scan topics.0.records_total "$N"

# Partition 1 holds records 1, 4, 7, ...: seq 0..N/3-1.  Write seq 5 again.
echo dup | kcat -P -b "$BOOTSTRAP" -t "$T" -p 1 \
        -H eos.producer=jidem -H eos.epoch=0 -H eos.seq=5 ||
        die "kcat could not write"
scan_json -t "$T"
assert_eq "scan exit status" 1 "$SCAN_RC"
assert_scan records_total $((N + 1))
assert_scan anomalies.duplicate 1
assert_scan anomalies_total 1
assert_scan topics.0.latest_anomalies.0.kind duplicate
assert_scan topics.0.latest_anomalies.0.partition 1
assert_scan topics.0.latest_anomalies.0.seq_lo 5
assert_scan topics.0.latest_anomalies.0.offset_lo $((N / 3))
assert_scan topics.0.latest_anomalies.0.first_offset 5

finish
