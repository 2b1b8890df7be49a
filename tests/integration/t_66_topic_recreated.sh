#!/usr/bin/env bash
# it-timeout: 360
# A topic deleted and recreated between two audits with the same ledger,
# told by its topic id (schema/0017_topic_id.sql); then under a running
# serve; then with a ledger that has no id (written before schema 17),
# told by the fingerprint once.
# The first log: producer pA, in its session (epoch) 3, writes 300 records
# (message ids 0..299) over 2 partitions, audited clean by scan --db, which
# stores the topic's id: the one the broker recorded (partition.metadata).  The topic is
# deleted and created again with the same name (another id); pA (a new
# deployment: epoch 0, seqs from 0, ids from 0 again) writes 1000 records,
# more than the ledger's offsets on every partition, with 1% duplicates
# injected.  Without a check the audit would resume mid-log: the new
# records below the old offsets never audited, and pA's epoch-0 records,
# low seqs and old ids called fenced, duplicate and redelivered.  The scan
# with the same --db must see the new topic id (one line naming both ids,
# no record read back: no fingerprint line), start a new incarnation of
# the topic (one coverage event per partition, reason "recreated", offsets
# = what the ledger had audited, the two ids in its detail), and audit the
# new log from offset 0: exactly the 1000 records and the injected
# duplicates, nothing fenced or redelivered.  A third scan then resumes
# normally.
# Under a running serve (frozen while the topic is deleted and created
# again, so that the consumer does not meet the deleted topic first): it
# stops, exit 2, with one line naming both ids; a scan then starts the
# next incarnation by id.  Then the ledger's ids deleted (an older
# ledger) and the topic recreated once more: the fingerprint tells it, and
# the new id is recorded.  Last, serve --group: its state records name
# the topic id (read from the state topic with kcat); the member stopped
# and the topic recreated, a member started then refuses the old topic's
# states, naming both ids.  (A running member that sees the id change
# stops as serve does; not tested here: a member frozen with its
# transaction open fails on that transaction first.)
source "$(dirname "$0")/lib.sh"

T="$(name main)"
DB="$IT_TMP/ledger.db"
sql() { sqlite3 "file:$DB?mode=ro" "$1"; }
# The topic's id as the broker recorded it for partition 0 (its
# partition.metadata, "topic_id: ID", as kafka-topics --describe prints
# it): the oracle, without another JVM.  Written as the partition's log is
# made: waited for.
topic_id() {
        local f="$KAFKA_DATA_DIR/log/$T-0/partition.metadata" i id=""
        for ((i = 0; i < 100; i++)); do
                id="$(sed -n 's/^topic_id: *\([A-Za-z0-9_-]*\)$/\1/p' "$f" 2>/dev/null)"
                [ -n "$id" ] && break
                sleep 0.1
        done
        echo "$id"
}
# Deletes the topic, waits until it is gone, creates it again (2
# partitions).
recreate() {
        local out i
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
}
# The new log must end past the ledger's offsets (OLD) on both partitions.
past_ledger() {
        local p end
        for p in 0 1; do
                end="$(kcat -b "$BOOTSTRAP" -Q -t "$T:$p:-1" 2>/dev/null |
                        awk '/offset/ { print $NF }')"
                [ "$end" -gt "${OLD[$p]}" ] 2>/dev/null ||
                        die "partition $p: the new log ends at '$end', not past the ledger's ${OLD[$p]}"
        done
}
# scan_db N: scan --json with the ledger; SCAN_RC, SCAN_JSON, its stderr
# in scanN.err (and the test log).
scan_db() {
        SCAN_RC=0
        SCAN_JSON="$("$EOSAUDIT" scan -b "$BOOTSTRAP" -t "$T" --db "$DB" \
                --json --no-progress 2>"$IT_TMP/scan$1.err")" || SCAN_RC=$?
        cat "$IT_TMP/scan$1.err"
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
ID1="$(topic_id)"
[ -n "$ID1" ] || die "the broker recorded no topic id for $T"
assert_eq "the ledger keeps the topic's id (incarnation|id)" "0|$ID1" \
        "$(sql "SELECT incarnation || '|' || topic_id FROM topic_ids
                WHERE topic = '$T'")"

# --- delete, recreate, write more than before --------------------------------
recreate
ID2="$(topic_id)"
log "topic $T deleted and created again: id $ID1 -> $ID2"
[ -n "$ID2" ] && [ "$ID2" != "$ID1" ] || die "the new topic's id is '$ID2'"
produce -t "$T" --producer "$(name pA)" -n 1000 --msgid-from index \
        --inject-duplicates 0.01
[ "$PROD_RC" = 0 ] || die "producer pA (second log) failed"
manifest_add "$PROD_JSON"
past_ledger

# --- the audit of the new log -------------------------------------------------
scan_db 2
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
assert_eq "the id told it: one line naming both ids" 1 \
        "$(grep -c "topic '$T' was deleted and created again: its topic id is $ID2, the ledger's is $ID1\$" "$IT_TMP/scan2.err")"
assert_eq "no record read back: no fingerprint line" 0 \
        "$(grep -c "is another record\|is gone\|outside the log" "$IT_TMP/scan2.err")"
assert_eq "the ledger's ids, one per incarnation" "0|$ID1 1|$ID2" \
        "$(sql "SELECT incarnation || '|' || topic_id FROM topic_ids
                WHERE topic = '$T' ORDER BY incarnation" | paste -sd' ')"
assert_eq "the coverage events name both ids" "topic id|$ID2|$ID1 topic id|$ID2|$ID1" \
        "$(sql "SELECT json_extract(detail, '$.how') || '|' ||
                json_extract(detail, '$.topic_id') || '|' ||
                json_extract(detail, '$.topic_id_was') FROM anomalies
                WHERE topic = '$T' AND kind = 'coverage' ORDER BY partition" |
                paste -sd' ')"
assert_true "a warning that incarnation 1 starts" \
        grep -q "topic '$T' is not the log the ledger knows (2 partition(s) recreated or truncated): incarnation 1 starts" \
        "$IT_TMP/scan2.err"
python3 - "$SCAN_JSON" <<'PY' || die "no coverage event with reason in the report"
import json, sys
d = json.loads(sys.argv[1])
evs = [a for t in d["topics"] for a in t["latest_anomalies"] if a["kind"] == "coverage"]
assert len(evs) == 2 and all(a["reason"] == "recreated" and a["incarnation"] == 1 for a in evs), evs
assert all(a["detail"]["how"] == "topic id" and a["detail"]["topic_id"] != a["detail"]["topic_id_was"] for a in evs), evs
print("# coverage events in the report:", [(a["partition"], a["offset_lo"], a["offset_hi"]) for a in evs])
PY

# --- and after that, an ordinary resume --------------------------------------
produce -t "$T" --producer "$(name pB)" -n 200
[ "$PROD_RC" = 0 ] || die "producer pB failed"
manifest_add "$PROD_JSON"
scan_db 3
assert_scan records_total "$M_DELIVERED"
assert_scan anomalies.duplicate "$M_DUPS"
assert_scan anomalies.fenced 0
assert_scan anomalies.redelivered 0
assert_scan coverage_gaps 2
assert_eq "no new incarnation on an ordinary resume" 1 \
        "$(sql "SELECT COUNT(*) FROM incarnations WHERE topic = '$T'")"
assert_eq "no warning on an ordinary resume" 0 \
        "$(grep -c "recreated\|truncated\|created again\|topic id" "$IT_TMP/scan3.err")"

# --- under a running serve ----------------------------------------------------
# Frozen while the topic goes and comes back: its consumer never sees the
# topic missing, only, when it runs on, the same name with another id.
SERVE_LOG="$IT_TMP/serve.log"
bg_start SERVE "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --db "$DB" \
        --listen off --metadata-refresh-ms 1000 2>"$SERVE_LOG"
produce -t "$T" --producer "$(name pC)" -n 50
[ "$PROD_RC" = 0 ] || die "producer pC failed"
want=$((M_DELIVERED + 50))
for ((i = 0; i < 150; i++)); do
        [ "$(sql "SELECT SUM(records) FROM partitions WHERE topic = '$T'")" = "$want" ] && break
        sleep 0.2
done
assert_eq "serve audited pC's records" "$want" \
        "$(sql "SELECT SUM(records) FROM partitions WHERE topic = '$T'")"
kill -STOP "$SERVE"
recreate
ID3="$(topic_id)"
log "topic $T deleted and created again under serve: id $ID2 -> $ID3"
[ -n "$ID3" ] && [ "$ID3" != "$ID2" ] || die "the new topic's id is '$ID3'"
kill -CONT "$SERVE"
wait_pid "$SERVE" 30
cat "$SERVE_LOG"
assert_eq "serve, the topic recreated under it: exit status" 2 "$WAIT_RC"
assert_true "serve says so, naming both ids" \
        grep -q "topic '$T' was deleted and created again under the audit (its topic id is now $ID3, the audit began with $ID2)" "$SERVE_LOG"
assert_eq "the ledger kept incarnation 1" 1 \
        "$(sql "SELECT COALESCE(MAX(incarnation), 0) FROM incarnations WHERE topic = '$T'")"
produce -t "$T" --producer "$(name pA)" -n 400 --msgid-from index
[ "$PROD_RC" = 0 ] || die "producer pA (third log) failed"
scan_db 4
assert_eq "scan after serve stopped: exit status" 1 "$SCAN_RC"
read -r recs distinct extra late missing < <(log_oracle "$T")
assert_scan records_total "$recs"
assert_scan anomalies.duplicate "$extra"
assert_scan anomalies.fenced 0
assert_scan anomalies.redelivered 0
assert_scan anomalies.out_of_order 0
assert_eq "incarnation 2, by id" 1 \
        "$(grep -c "topic '$T' was deleted and created again: its topic id is $ID3, the ledger's is $ID2\$" "$IT_TMP/scan4.err")"
assert_eq "the ledger's ids" "0|$ID1 1|$ID2 2|$ID3" \
        "$(sql "SELECT incarnation || '|' || topic_id FROM topic_ids
                WHERE topic = '$T' ORDER BY incarnation" | paste -sd' ')"

# --- a ledger with no id: the fingerprint, once -------------------------------
for p in 0 1; do
        OLD[$p]="$(sql "SELECT next_offset FROM partitions WHERE topic = '$T'
                AND partition = $p")"
done
sqlite3 "$DB" "DELETE FROM topic_ids" || die "cannot delete the ledger's ids"
recreate
ID4="$(topic_id)"
[ -n "$ID4" ] && [ "$ID4" != "$ID3" ] || die "the new topic's id is '$ID4'"
log "topic $T deleted and created again, the ledger without ids: id $ID3 -> $ID4"
# More than the ledger's offsets: another record where the audit stopped.
produce -t "$T" --producer "$(name pD)" -n $((2 * (OLD[0] + OLD[1]) + 100))
[ "$PROD_RC" = 0 ] || die "producer pD failed"
past_ledger
scan_db 5
assert_eq "scan, no id in the ledger: exit status" 1 "$SCAN_RC"
read -r recs distinct extra late missing < <(log_oracle "$T")
assert_scan records_total "$recs"
assert_scan anomalies.fenced 0
assert_eq "the fingerprint told it: one line per partition" 2 \
        "$(grep -c "is another record; the log now spans 0\.\..*: recreated" "$IT_TMP/scan5.err")"
assert_true "the new id recorded, said once" \
        test "$(grep -c "topic '$T': its topic id $ID4 is now in the ledger, which had none" "$IT_TMP/scan5.err")" = 1
assert_eq "incarnation 3, recreated" "3|recreated" \
        "$(sql "SELECT incarnation || '|' || reason FROM incarnations
                WHERE topic = '$T' ORDER BY incarnation DESC LIMIT 1")"
assert_eq "its coverage events carry no id" 2 \
        "$(sql "SELECT COUNT(*) FROM anomalies WHERE topic = '$T'
                AND kind = 'coverage' AND incarnation = 3 AND detail IS NULL")"
assert_eq "the ledger's id now" "3|$ID4" \
        "$(sql "SELECT incarnation || '|' || topic_id FROM topic_ids
                WHERE topic = '$T'")"

# --- serve --group: the state records name the id ----------------------------
G="$(name g)"
STATE="eosaudit-$G-state"
bg_start M1 "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --group "$G" \
        --group-member m1 --db "$IT_TMP/m1.db" --listen off \
        --commit-interval-ms 200 >"$IT_TMP/m1.log" 2>&1
for ((i = 0; i < 300; i++)); do
        n="$(kcat -b "$BOOTSTRAP" -C -t "$STATE" -e -q -o beginning \
                -X isolation.level=read_committed -f '%k %s\n' 2>/dev/null |
                grep -c "^$T/[01] .*\"topic_id\":\"$ID4\"")"
        [ "$n" -ge 2 ] && break
        sleep 0.2
done
assert_true "the group's state records of both partitions name topic id $ID4" \
        test "$n" -ge 2
kill -TERM "$M1"
wait_pid "$M1" 30
assert_eq "group member m1 stops cleanly" 0 "$WAIT_RC"
recreate
ID5="$(topic_id)"
[ -n "$ID5" ] && [ "$ID5" != "$ID4" ] || die "the new topic's id is '$ID5'"
log "topic $T deleted and created again under the group: id $ID4 -> $ID5"
produce -t "$T" --producer "$(name pE)" -n 100
[ "$PROD_RC" = 0 ] || die "producer pE failed"
out="$(timeout 60 "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --group "$G" \
        --group-member m2 --db "$IT_TMP/m2.db" --listen off 2>&1)"
rc=$?
echo "$out"
assert_eq "a member given the old topic's states: exit status" 2 "$rc"
assert_true "it refuses them, naming both ids" \
        grep -q "$T \[[01]\] refused: its state record in $STATE is of topic id $ID4, and the topic's id is now $ID5" <<<"$out"

finish
