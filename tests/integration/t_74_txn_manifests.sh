#!/usr/bin/env bash
# Transactions' atomicity (--txn-manifests) with the reference producer
# and with crafted records, exact counts throughout.
#
# 1. Two topics (3 partitions each) written in transactions with aborts
#    (every 3rd, every 4th) by two transactional producers that write
#    their manifests to one manifest topic: read_committed sees no torn
#    transaction and no aborted record.
# 2. The same topics read_uncommitted: every aborted record is an
#    aborted_read, exactly as many as the log holds beyond what
#    read_committed shows (counted with kcat, and as the producers said).
# 3. Torn transactions cannot be made by a healthy broker: crafted with
#    kcat (plain writes, so visible): a manifest claiming more records than
#    were written, a manifest with no record, records whose manifest never
#    comes, and records of a transaction a manifest names aborted.
source "$(dirname "$0")/lib.sh"

# count_records TOPIC [KCAT_ARGS...]: records in the log (kcat, whose
# default isolation is read_committed).
count_records() {
        local topic="$1"
        shift
        kcat -C -b "$BOOTSTRAP" -t "$topic" -o beginning -e -q -f 'x\n' "$@" |
                wc -l
}

M="$(name manifests)"
T1="$(name orders)"
T2="$(name payments)"
create_topic "$M" 2
create_topic "$T1" 3
create_topic "$T2" 3

# --- 1. read_committed: clean ---------------------------------------------
# T1: 1000 records in transactions of 50, every 3rd aborted: 20 commit, 9
# abort.  T2: 800 in transactions of 40, every 4th aborted: 20 commit, 6
# abort (the begun transactions 4, 8, ..., 24; the 26th is the last).
log "== read_committed"
produce -t "$T1" --producer "$(name p1)" -n 1000 \
        --transactional-id "$(name txn1)" --txn-size 50 --abort-every 3 \
        --txn-manifests "$M"
assert_eq "produce 1 exit status" 0 "$PROD_RC"
assert_prod transactions 20
assert_prod aborted_transactions 9
ab1="$(json_get aborted "$PROD_JSON")"
produce -t "$T2" --producer "$(name p2)" -n 800 \
        --transactional-id "$(name txn2)" --txn-size 40 --abort-every 4 \
        --txn-manifests "$M"
assert_eq "produce 2 exit status" 0 "$PROD_RC"
assert_prod transactions 20
assert_prod aborted_transactions 6
ab2="$(json_get aborted "$PROD_JSON")"
assert_eq "manifests in the log (one per commit)" 40 \
        "$(count_records "$M")"

scan_json -t "$T1,$T2" --txn-manifests "$M"
assert_clean_scan 1800
assert_scan anomalies.torn 0
assert_scan anomalies.aborted_read 0

# --- 2. read_uncommitted: every aborted record is an aborted_read ----------
log "== read_uncommitted"
oracle=0
for t in "$T1" "$T2"; do
        all="$(count_records "$t" -X isolation.level=read_uncommitted)"
        com="$(count_records "$t")"
        oracle=$((oracle + all - com))
done
log "aborted records in the log (kcat): $oracle; the producers: $((ab1 + ab2))"
assert_eq "aborted records, kcat vs the producers" $((ab1 + ab2)) "$oracle"
assert_true "some records were aborted" test "$oracle" -gt 0
scan_json -t "$T1,$T2" --txn-manifests "$M" --isolation read_uncommitted
assert_eq "scan exit status" 1 "$SCAN_RC"
assert_scan records_total $((1800 + oracle))
assert_scan anomalies.aborted_read "$oracle"
assert_scan anomalies.torn 0

# --- 3. crafted torn transactions and aborted reads -------------------------
log "== crafted"
C="$(name crafted)"
CM="$(name crafted-manifests)"
create_topic "$C" 2
create_topic "$CM" 1
seqs=(0 0)
# rec PARTITION TXN: one record of producer c, epoch 0, transaction TXN,
# the next seq of its partition (no gap, no duplicate: only the
# transactions are wrong).
rec() {
        local seq="${seqs[$1]}"
        echo "r$seq" | kcat -P -b "$BOOTSTRAP" -t "$C" -p "$1" \
                -H eos.producer=c -H eos.epoch=0 -H "eos.seq=$seq" \
                -H "eos.txn=$2" || die "kcat cannot write to $C"
        seqs[$1]=$((seq + 1))
}
man() {
        echo "$1" | kcat -P -b "$BOOTSTRAP" -t "$CM" -p 0 -k c ||
                die "kcat cannot write to $CM"
}
# txn 0: 2 records on partition 0, none on 1; its manifest says 3 and 1.
rec 0 0
rec 0 0
man '{"v":1,"producer":"c","epoch":0,"txn":0,"parts":[["'"$C"'",0,3],["'"$C"'",1,1]],"aborted":[]}'
# txn 1: a manifest with no record at all (2 on partition 0).
man '{"v":1,"producer":"c","epoch":0,"txn":1,"parts":[["'"$C"'",0,2]]}'
# txn 2: 3 records on partition 1 whose manifest never comes.
rec 1 2
rec 1 2
rec 1 2
# txn 3 (complete: 1 record) names txn 4 aborted; 2 records of txn 4 are
# visible anyway.
rec 0 3
man '{"v":1,"producer":"c","epoch":0,"txn":3,"parts":[["'"$C"'",0,1]],"aborted":[[0,4]]}'
rec 0 4
rec 1 4
# Something that is no manifest: logged, not an anomaly.
man 'not a manifest'

scan_json -t "$C" --txn-manifests "$CM"
assert_eq "scan exit status" 1 "$SCAN_RC"
assert_scan records_total 8
# Torn: txn 0 on partitions 0 and 1, txn 1 on 0, txn 2 on 1.
assert_scan anomalies.torn 4
assert_scan anomalies.aborted_read 2
assert_scan anomalies_total 6
kinds="$(anomaly_kinds)"
log "latest anomalies: $kinds"
assert_eq "latest anomalies by kind" "2 aborted_read,4 torn" "$kinds"
# The evidence: txn 0 on partition 0 is short by 1, seen at offsets 0..1,
# its manifest at offset 0 of the manifest topic.
ev="$(python3 -c 'import json, sys
d = json.loads(sys.argv[1])
for a in d["topics"][0]["latest_anomalies"]:
    if a["kind"] == "torn" and a["partition"] == 0 and a["seq_lo"] == 0:
        print(a["count"], a["offset_lo"], a["offset_hi"], a["first_offset"])' \
        "$SCAN_JSON")"
assert_eq "torn txn 0 on partition 0: missing, offsets, manifest offset" \
        "1 0 1 0" "$ev"

# The human report names both kinds.
out="$("$EOSAUDIT" scan -b "$BOOTSTRAP" --no-progress -q -t "$C" \
        --txn-manifests "$CM" 2>&1)"
assert_true "report: torn line" grep -q "torn           4" <<<"$out"
assert_true "report: aborted_read line" \
        grep -q "aborted_read   2 records" <<<"$out"
assert_true "report: a torn transaction with its manifest" \
        grep -q "torn .* txn 0 .*(manifest at partition 0 offset 0), missing 1" <<<"$out"

finish
