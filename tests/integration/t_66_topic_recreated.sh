#!/usr/bin/env bash
# A topic deleted and recreated between two audits with the same ledger.
# The first log: producer pA, in its session (epoch) 3, writes 300 records
# (message ids 0..299) over 2 partitions, audited clean by scan --db.  The
# topic is deleted and created again with the same name; pA (a new
# deployment: epoch 0, seqs from 0, ids from 0 again) writes 1000 records,
# more than the ledger's offsets on every partition, with 1% duplicates
# injected.  Without a check the
# audit would resume mid-log: the new records below the old offsets never
# audited, and pA's epoch-0 records, low seqs and old ids called fenced,
# duplicate and redelivered.  The scan with the same --db must see that
# the record it stopped at is not there any more (fingerprint), start a
# new incarnation of the topic (one coverage event per partition, reason
# "recreated", offsets = what the ledger had audited), and audit the new
# log from offset 0: exactly the 1000 records and the injected duplicates,
# nothing fenced or redelivered.  A third scan then resumes normally.
source "$(dirname "$0")/lib.sh"

T="$(name main)"
DB="$IT_TMP/ledger.db"
TC=org.apache.kafka.tools.TopicCommand
sql() { sqlite3 "file:$DB?mode=ro" "$1"; }
topic_cmd() {
        "$KAFKA_SH" tool -XX:TieredStopAtLevel=1 -XX:+UseSerialGC "$TC" \
                --bootstrap-server "$BOOTSTRAP" "$@" 2>&1
}

create_topic "$T" 2
produce -t "$T" --producer "$(name pA)" -n 300 --msgid-from index --epoch 3
[ "$PROD_RC" = 0 ] || die "producer pA (first log) failed"
scan_json -t "$T" --db "$DB"
assert_clean_scan 300
for p in 0 1; do
        OLD[$p]="$(sql "SELECT next_offset FROM partitions WHERE topic = '$T'
                AND partition = $p")"
        FP[$p]="$(sql "SELECT fp_offset FROM partitions WHERE topic = '$T'
                AND partition = $p")"
        log "partition $p: ledger at ${OLD[$p]}, last audited record ${FP[$p]}"
        assert_eq "partition $p: fingerprint is the last record" \
                $((OLD[p] - 1)) "${FP[$p]}"
done

# --- delete, recreate, write more than before --------------------------------
out="$(topic_cmd --delete --topic "$T")" || die "cannot delete $T: $out"
for ((i = 0; i < 100; i++)); do
        kcat -b "$BOOTSTRAP" -L -t "$T" 2>/dev/null | grep -q "topic \"$T\" with 2 partitions" || break
        sleep 0.2
done
# Creation fails while the deletion is still going on: retry.
for ((i = 0; i < 50; i++)); do
        "$KAFKA_SH" topic "$T" 2 >/dev/null 2>&1 && break
        sleep 0.5
done
[ "$i" -lt 50 ] || die "cannot create $T again"
log "topic $T deleted and created again"
produce -t "$T" --producer "$(name pA)" -n 1000 --msgid-from index \
        --inject-duplicates 0.01
[ "$PROD_RC" = 0 ] || die "producer pA (second log) failed"
manifest_add "$PROD_JSON"
for p in 0 1; do
        end="$(kcat -b "$BOOTSTRAP" -Q -t "$T:$p:-1" 2>/dev/null |
                awk '/offset/ { print $NF }')"
        [ "$end" -gt "${OLD[$p]}" ] 2>/dev/null ||
                die "partition $p: the new log ends at '$end', not past the ledger's ${OLD[$p]}"
done

# --- the audit of the new log -------------------------------------------------
SCAN_RC=0
SCAN_JSON="$("$EOSAUDIT" scan -b "$BOOTSTRAP" -t "$T" --db "$DB" --json \
        --no-progress 2>"$IT_TMP/scan2.err")" || SCAN_RC=$?
cat "$IT_TMP/scan2.err"
log "scan of the new log: exit $SCAN_RC"
json_get records_total >/dev/null 2>&1 || die "the scan printed no JSON"
assert_eq "scan exit status (the coverage events are anomalies)" 1 "$SCAN_RC"
assert_scan records_total "$M_DELIVERED"
assert_scan anomalies.duplicate "$M_DUPS"
assert_scan anomalies.fenced 0
assert_scan anomalies.redelivered 0
assert_scan anomalies.gap 0
assert_scan anomalies.out_of_order 0
assert_scan missing_records 0
assert_scan open_gaps 0
assert_scan coverage_gaps 2
assert_scan unaudited_offsets 0
assert_scan anomalies_total $((M_DUPS + 2))
read -r recs distinct extra late missing < <(log_oracle "$T")
assert_eq "oracle: records in the new log" "$M_DELIVERED" "$recs"
assert_eq "oracle: extra copies" "$M_DUPS" "$extra"
assert_eq "the new log audited from offset 0 (partition: from_log_start)" \
        "0|1 1|1" \
        "$(sql "SELECT partition || '|' || from_log_start FROM partitions
                WHERE topic = '$T' ORDER BY partition" | paste -sd' ')"
assert_eq "coverage events (partition|reason|offsets|last audited|incarnation)" \
        "0|recreated|0..$((OLD[0] - 1))|${FP[0]}|1 1|recreated|0..$((OLD[1] - 1))|${FP[1]}|1" \
        "$(sql "SELECT partition || '|' || reason || '|' || offset_lo || '..' ||
                offset_hi || '|' || first_offset || '|' || incarnation
                FROM anomalies WHERE topic = '$T' AND kind = 'coverage'
                ORDER BY partition" | paste -sd' ')"
assert_eq "the first incarnation's partitions kept as evidence" \
        "0|${OLD[0]}|0 1|${OLD[1]}|0" \
        "$(sql "SELECT partition || '|' || next_offset || '|' || incarnation
                FROM retired_partitions WHERE topic = '$T'
                ORDER BY partition" | paste -sd' ')"
assert_eq "retired records" 300 \
        "$(sql "SELECT SUM(records) FROM retired_partitions WHERE topic = '$T'")"
assert_eq "incarnations" "1|recreated" \
        "$(sql "SELECT incarnation || '|' || reason FROM incarnations
                WHERE topic = '$T'")"
assert_eq "warnings: one per partition" 2 \
        "$(grep -c "is another record; the log now spans 0\.\..*: recreated" "$IT_TMP/scan2.err")"
assert_true "a warning that incarnation 1 starts" \
        grep -q "topic '$T' is not the log the ledger knows (2 partition(s) recreated or truncated): incarnation 1 starts" \
        "$IT_TMP/scan2.err"
python3 - "$SCAN_JSON" <<'PY' || die "no coverage event with reason in the report"
import json, sys
d = json.loads(sys.argv[1])
evs = [a for t in d["topics"] for a in t["latest_anomalies"] if a["kind"] == "coverage"]
assert len(evs) == 2 and all(a["reason"] == "recreated" and a["incarnation"] == 1 for a in evs), evs
print("# coverage events in the report:", [(a["partition"], a["offset_lo"], a["offset_hi"]) for a in evs])
PY

# --- and after that, an ordinary resume --------------------------------------
produce -t "$T" --producer "$(name pB)" -n 200
[ "$PROD_RC" = 0 ] || die "producer pB failed"
manifest_add "$PROD_JSON"
SCAN_RC=0
SCAN_JSON="$("$EOSAUDIT" scan -b "$BOOTSTRAP" -t "$T" --db "$DB" --json \
        --no-progress 2>"$IT_TMP/scan3.err")" || SCAN_RC=$?
cat "$IT_TMP/scan3.err"
assert_scan records_total "$M_DELIVERED"
assert_scan anomalies.duplicate "$M_DUPS"
assert_scan anomalies.fenced 0
assert_scan anomalies.redelivered 0
assert_scan coverage_gaps 2
assert_eq "no new incarnation on an ordinary resume" 1 \
        "$(sql "SELECT COUNT(*) FROM incarnations WHERE topic = '$T'")"
assert_eq "no warning on an ordinary resume" 0 \
        "$(grep -c "recreated\|truncated" "$IT_TMP/scan3.err")"

finish
