#!/usr/bin/env bash
# Retention deletes records the ledger still expected while no auditor
# runs.  serve --db audits part of a topic (stopped with SIGTERM while
# producer pA is still writing it), pA finishes and pB writes more, then
# DeleteRecords removes records past the ledger's offset on two of the
# three partitions:
#  - partition 0: the next 300 unaudited offsets (pA goes on after them,
#    with a seq jump the audit must not call a gap);
#  - partition 1: all but the last 300 offsets (pA's rest and most of pB:
#    pB first shows up with a seq far above 0, on a partition audited from
#    offset 0, which must not be a gap either);
#  - partition 2: nothing.
# The next scan --db must record exactly one coverage gap per affected
# partition, covering exactly the deleted unaudited offsets, log a warning
# for each, keep those partitions' producers' state but accept their seq
# jump across the hole (no false gap or duplicate), count every surviving
# record once, and exit 1.  A scan after that records nothing new.
# (The first audit is a serve, not a scan: a scan of a topic that is being
# written skips records, see t_84_scan_while_writing.)
source "$(dirname "$0")/lib.sh"

T="$(name main)"
DB="$IT_TMP/ledger.db"
create_topic "$T" 3
DRC=org.apache.kafka.tools.DeleteRecordsCommand
KEEP1=300 # partition 1 keeps its last KEEP1 offsets
DEL0=300  # partition 0 loses the DEL0 offsets after the ledger's

# sql SQL: query the ledger, read-only.
sql() { sqlite3 "file:$DB?mode=ro" "$1"; }

# end_offset P: the high watermark of partition P.
end_offset() {
        kcat -b "$BOOTSTRAP" -Q -t "$T:$1:-1" 2>/dev/null |
                awk '/offset/ { print $NF }'
}

# --- a first audit in the middle of pA ------------------------------------
bg_start PROD "$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --json -q \
        --producer "$(name pA)" -n 8000 --rate 2000 \
        >"$IT_TMP/pA.json" 2>"$IT_TMP/pA.err"
bg_start SERVE "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --db "$DB" \
        --commit-interval-ms 200 >"$IT_TMP/serve.log" 2>&1
# Stop it once it has committed a few hundred of pA's records.
for ((i = 0; i < 100; i++)); do
        [ "$(sql "SELECT COALESCE(SUM(records), 0) FROM partitions
                WHERE topic = '$T'" 2>/dev/null)" -ge 600 ] 2>/dev/null && break
        sleep 0.05
done
kill -TERM "$SERVE"
wait_pid "$SERVE" 15
cat "$IT_TMP/serve.log"
assert_eq "serve exit status after SIGTERM" 0 "$WAIT_RC"
wait_pid "$PROD" 60
cat "$IT_TMP/pA.err"
[ "$WAIT_RC" = 0 ] || die "producer pA: exit status $WAIT_RC"
PA="$(cat "$IT_TMP/pA.json")"
R1="$(sql "SELECT SUM(records) FROM partitions WHERE topic = '$T'")"
log "serve audited $R1 of pA's 8000 records"
# The scenario needs the first audit to stop well inside pA's stream.
[ "$R1" -ge 300 ] 2>/dev/null && [ "$R1" -le 5000 ] ||
        die "serve audited '$R1' of pA's 8000 records, not 300..5000"
assert_eq "first audit: records = the ledger's offsets" "$R1" \
        "$(sql "SELECT SUM(next_offset) FROM partitions WHERE topic = '$T'")"

produce -t "$T" --producer "$(name pB)" -n 3000
[ "$PROD_RC" = 0 ] || die "producer pB failed"
PB="$PROD_JSON"
DELIVERED=$(($(json_get delivered "$PA") + $(json_get delivered "$PB")))
assert_eq "delivered by pA and pB" 11000 "$DELIVERED"

# --- retention, past the ledger's offsets ----------------------------------
for p in 0 1 2; do
        L[$p]="$(sql "SELECT next_offset FROM partitions WHERE topic = '$T'
                AND partition = $p")"
        E[$p]="$(end_offset $p)"
        log "partition $p: ledger at ${L[$p]}, end ${E[$p]}"
        [[ "${E[$p]}" =~ ^[0-9]+$ ]] || die "no end offset for partition $p"
done
DEL_TO[0]=$((L[0] + DEL0))
DEL_TO[1]=$((E[1] - KEEP1))
# pA must go on after the deleted part of partition 0, pB must have
# records on partition 1 both in the deleted part and after it.
pa0_end="$(kcat -b "$BOOTSTRAP" -C -t "$T" -p 0 -o "${DEL_TO[0]}" -c 1 -e \
        -f '%h\n' 2>/dev/null)"
[[ "$pa0_end" == *"eos.producer=$(name pA)"* ]] ||
        die "partition 0 offset ${DEL_TO[0]} is not pA's ($pa0_end)"
[ "${DEL_TO[1]}" -gt $((L[1] + 1000)) ] ||
        die "partition 1: too few offsets to delete (${L[1]}..${DEL_TO[1]})"
cat >"$IT_TMP/delete.json" <<EOF
{"version": 1, "partitions": [
  {"topic": "$T", "partition": 0, "offset": ${DEL_TO[0]}},
  {"topic": "$T", "partition": 1, "offset": ${DEL_TO[1]}}]}
EOF
out="$("$KAFKA_SH" tool -XX:TieredStopAtLevel=1 -XX:+UseSerialGC "$DRC" --bootstrap-server "$BOOTSTRAP" \
        --offset-json-file "$IT_TMP/delete.json" 2>&1)" ||
        die "DeleteRecords failed: $out"
echo "$out"
for p in 0 1; do
        lo="$(kcat -b "$BOOTSTRAP" -Q -t "$T:$p:-2" 2>/dev/null |
                awk '/offset/ { print $NF }')"
        assert_eq "partition $p: log start after DeleteRecords" "${DEL_TO[$p]}" "$lo"
done
COV0=$((DEL_TO[0] - L[0]))
COV1=$((DEL_TO[1] - L[1]))
log "unaudited offsets deleted: $COV0 on partition 0, $COV1 on partition 1"

# --- the audit after retention ------------------------------------------------
# Not -q: the warnings are part of the contract.
SCAN_RC=0
SCAN_JSON="$("$EOSAUDIT" scan -b "$BOOTSTRAP" -t "$T" --db "$DB" --json \
        --no-progress 2>"$IT_TMP/scan2.err")" || SCAN_RC=$?
cat "$IT_TMP/scan2.err"
log "scan after retention: exit $SCAN_RC: $SCAN_JSON"
json_get records_total >/dev/null 2>&1 || die "the scan printed no JSON"
assert_eq "scan exit status (a coverage gap is an anomaly)" 1 "$SCAN_RC"
assert_scan coverage_gaps 2
assert_scan unaudited_offsets $((COV0 + COV1))
assert_scan records_total $((DELIVERED - COV0 - COV1))
assert_scan anomalies.gap 0
assert_scan anomalies.duplicate 0
assert_scan anomalies.out_of_order 0
assert_scan anomalies.fenced 0
assert_scan anomalies.malformed 0
assert_scan missing_records 0
assert_scan open_gaps 0
assert_scan untracked 0
# No gap was open when the records were deleted: nothing is unknown.
assert_scan unknown_records 0
assert_scan recovered_records 0
assert_scan anomalies_total 2
assert_scan producers 2
for p in 0 1; do
        hi=$((DEL_TO[p] - 1))
        assert_true "a warning for partition $p, offsets ${L[$p]}..$hi" \
                grep -q "warn $T \[$p\]: offsets ${L[$p]}\.\.$hi were deleted by retention before they were audited" \
                "$IT_TMP/scan2.err"
done
assert_eq "warnings about retention" 2 \
        "$(grep -c "were deleted by retention" "$IT_TMP/scan2.err")"
assert_eq "coverage gaps in the ledger" \
        "0|${L[0]}|$((DEL_TO[0] - 1)) 1|${L[1]}|$((DEL_TO[1] - 1))" \
        "$(sql "SELECT partition || '|' || offset_lo || '|' || offset_hi
                FROM coverage_gaps WHERE topic = '$T' ORDER BY partition" |
                paste -sd' ')"
assert_eq "coverage anomaly rows" "0|$COV0 1|$COV1" \
        "$(sql "SELECT partition || '|' || count FROM anomalies
                WHERE topic = '$T' AND kind = 'coverage' ORDER BY partition" |
                paste -sd' ')"
# Every partition read to its end; only the untouched one is still
# "audited from offset 0".
assert_eq "partition, next_offset, from_log_start" \
        "0|${E[0]}|0 1|${E[1]}|0 2|${E[2]}|1" \
        "$(sql "SELECT partition || '|' || next_offset || '|' ||
                from_log_start FROM partitions WHERE topic = '$T'
                ORDER BY partition" | paste -sd' ')"

# --- once recorded, a coverage gap is not recorded again ----------------------
produce -t "$T" --producer "$(name pC)" -n 600
[ "$PROD_RC" = 0 ] || die "producer pC failed"
SCAN_RC=0
SCAN_JSON="$("$EOSAUDIT" scan -b "$BOOTSTRAP" -t "$T" --db "$DB" --json \
        --no-progress 2>"$IT_TMP/scan3.err")" || SCAN_RC=$?
cat "$IT_TMP/scan3.err"
assert_eq "scan after that: exit status" 1 "$SCAN_RC"
assert_scan coverage_gaps 2
assert_scan unaudited_offsets $((COV0 + COV1))
assert_scan records_total $((DELIVERED + 600 - COV0 - COV1))
assert_scan anomalies_total 2
assert_scan missing_records 0
assert_eq "warnings about retention in the scan after" 0 \
        "$(grep -c "were deleted by retention" "$IT_TMP/scan3.err")"

finish
