#!/usr/bin/env bash
# Partitions added to a topic while serve audits it.  serve follows a
# 2-partition topic (with --metadata-refresh-ms 4000) and audits pA's 400
# clean records; then the topic is grown to 4 partitions with Kafka's
# TopicCommand --alter, and pB writes 1200 records over all four with a
# known mix of injected duplicates and gaps.  serve must log the two new
# partitions within the refresh time (one info line each), audit them from
# offset 0 (from_log_start), and hold exactly what the log holds: every
# record once, pB's duplicates and missing records on each partition as an
# independent oracle (kcat) counts them.  A final scan on the same ledger
# confirms the open gaps, and the whole must match the manifest.
source "$(dirname "$0")/lib.sh"

T="$(name main)"
DB="$IT_TMP/ledger.db"
REFRESH_MS=4000
TC=org.apache.kafka.tools.TopicCommand
sql() { sqlite3 "file:$DB?mode=ro" "$1"; }
end_offset() {
        kcat -b "$BOOTSTRAP" -Q -t "$T:$1:-1" 2>/dev/null |
                awk '/offset/ { print $NF }'
}
# audited_to P END SECONDS: waits until the ledger's next offset of
# partition P reaches END.
audited_to() {
        local i
        for ((i = 0; i < $3 * 10; i++)); do
                [ "$(sql "SELECT next_offset FROM partitions WHERE
                        topic = '$T' AND partition = $1" 2>/dev/null)" \
                        -ge "$2" ] 2>/dev/null && return 0
                sleep 0.1
        done
        return 1
}

create_topic "$T" 2
bg_start SERVE "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --db "$DB" \
        --listen off --commit-interval-ms 200 \
        --metadata-refresh-ms "$REFRESH_MS" >"$IT_TMP/serve.log" 2>&1
produce -t "$T" --producer "$(name pA)" -n 400
[ "$PROD_RC" = 0 ] || die "producer pA failed"
manifest_add "$PROD_JSON"
for p in 0 1; do
        audited_to $p "$(end_offset $p)" 30 || die "serve did not audit partition $p"
done
assert_eq "partitions in the ledger before the change" 2 \
        "$(sql "SELECT COUNT(*) FROM partitions WHERE topic = '$T'")"

# --- grow the topic ------------------------------------------------------------
out="$("$KAFKA_SH" tool -XX:TieredStopAtLevel=1 -XX:+UseSerialGC "$TC" \
        --bootstrap-server "$BOOTSTRAP" --alter --topic "$T" --partitions 4 2>&1)" ||
        die "cannot add partitions: $out"
ALTERED=$(date +%s%N)
log "topic $T grown to 4 partitions"
# The producer must see 4 partitions (librdkafka reads the metadata at start).
for ((i = 0; i < 50; i++)); do
        kcat -b "$BOOTSTRAP" -L -t "$T" 2>/dev/null | grep -q "with 4 partitions" && break
        sleep 0.2
done
produce -t "$T" --producer "$(name pB)" -n 1200 --inject-duplicates 0.02 \
        --inject-gaps 0.01
[ "$PROD_RC" = 0 ] || die "producer pB failed"
manifest_add "$PROD_JSON"

# Found within the refresh time (plus a second for the metadata request
# and the log line), each with one info line.
for p in 2 3; do
        found=""
        for ((i = 0; i < (REFRESH_MS / 1000 + 10) * 10; i++)); do
                if grep -q "info $T \[$p\]: new partition: auditing it from offset 0 (its log start)" "$IT_TMP/serve.log"; then
                        found=$(date +%s%N)
                        break
                fi
                sleep 0.1
        done
        [ -n "$found" ] || die "serve did not log partition $p as new"
        # The line appears when it is found: the time since the change is
        # at most the refresh interval (and the 0.1 s poll here).
        ms=$(((found - ALTERED) / 1000000))
        log "partition $p found $ms ms after the change"
        assert_true "partition $p found within ${REFRESH_MS} ms + 1.5 s ($ms ms)" \
                test "$ms" -le $((REFRESH_MS + 1500))
done
assert_eq "new-partition lines in the log" 2 \
        "$(grep -c "new partition: auditing it" "$IT_TMP/serve.log")"
for p in 0 1 2 3; do
        E[$p]="$(end_offset $p)"
        audited_to $p "${E[$p]}" 30 || die "serve did not audit partition $p to ${E[$p]}"
done
kill -TERM "$SERVE"
wait_pid "$SERVE" 15
assert_eq "serve exit status after SIGTERM" 0 "$WAIT_RC"
cat "$IT_TMP/serve.log"

# --- what serve recorded for the new partitions -------------------------------
assert_eq "new partitions audited from offset 0 to their end" \
        "2|${E[2]}|1 3|${E[3]}|1" \
        "$(sql "SELECT partition || '|' || next_offset || '|' || from_log_start
                FROM partitions WHERE topic = '$T' AND partition >= 2
                ORDER BY partition" | paste -sd' ')"
for p in 2 3; do
        read -r recs distinct extra late missing < <(log_oracle "$T" -p "$p")
        log "partition $p oracle: $recs records, $extra extra, $late late, $missing missing"
        assert_true "partition $p has pB's records" test "$recs" -gt 0
        assert_eq "partition $p: records (serve)" "$recs" \
                "$(sql "SELECT records FROM partitions WHERE topic = '$T' AND partition = $p")"
        assert_eq "partition $p: duplicates (serve)" "$extra" \
                "$(sql "SELECT duplicate FROM partitions WHERE topic = '$T' AND partition = $p")"
        # Open until confirmed (grace) or the scan below confirms them.
        assert_eq "partition $p: missing seqs open or confirmed (serve)" "$missing" \
                "$(sql "SELECT (SELECT missing FROM partitions WHERE topic = '$T' AND partition = $p)
                        + COALESCE((SELECT SUM(hi - lo + 1) FROM open_gaps
                        WHERE topic = '$T' AND partition = $p), 0)")"
done
assert_eq "records audited by serve" "$M_DELIVERED" \
        "$(sql "SELECT SUM(records) FROM partitions WHERE topic = '$T'")"

# --- the same ledger, scanned: every gap confirmed, the manifest ------------
scan_json -t "$T" --db "$DB"
assert_manifest_scan "after the change"
assert_true "some duplicates and gaps injected ($M_DUPS, $M_GAPS)" \
        test "$M_DUPS" -gt 0 -a "$M_GAPS" -gt 0

finish
