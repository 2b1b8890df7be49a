#!/usr/bin/env bash
# SIGTERM while serve is busy: 500,000 records (with injected duplicates
# and gaps) wait in a 6-partition topic and another producer writes more at
# full speed when serve starts.  serve gets SIGTERM right after its first
# ledger commit, in the middle of catching up, with up to a million
# records fetched and queued in librdkafka.  It must finish the batch in
# hand, commit it and exit 0 within 10 s, leaving a consistent ledger
# (each partition's records = its stored offset, PRAGMA integrity_check
# ok) that stopped inside the backlog; a scan --db of that ledger then
# reports exactly what the producers delivered.
source "$(dirname "$0")/lib.sh"

T="$(name main)"
DB="$IT_TMP/ledger.db"
N1=500000 N2=100000
create_topic "$T" 6

sql() { sqlite3 "file:$DB?mode=ro" "$1" 2>/dev/null; }
now_ms() { date +%s%3N; }

produce -t "$T" --producer "$(name p1)" -n "$N1" --size 20 \
        --inject-duplicates 0.001 --inject-gaps 0.001 --seed 8701
[ "$PROD_RC" = 0 ] || die "producer p1 failed (exit $PROD_RC)"
assert_prod failed 0
manifest_add "$PROD_JSON"

bg_start PROD "$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --json -q \
        --producer "$(name p2)" -n "$N2" --size 20 \
        --inject-duplicates 0.001 --inject-gaps 0.001 --seed 8702 \
        >"$IT_TMP/p2.json" 2>"$IT_TMP/p2.err"
bg_start SERVE "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --db "$DB" \
        >"$IT_TMP/serve.log" 2>&1
# The first commit (100,000 records, or 1 s) shows that serve is at work.
for ((i = 0; i < 300; i++)); do
        rec="$(sql "SELECT COALESCE(SUM(records), 0) FROM partitions
                WHERE topic = '$T'")"
        [ "${rec:-0}" -gt 0 ] && break
        sleep 0.05
done
t0=$(now_ms)
kill -TERM "$SERVE"
log "SIGTERM with $rec records in the ledger"
wait_pid "$SERVE" 10
ms=$(($(now_ms) - t0))
log "serve exit status $WAIT_RC after $ms ms"
grep -v " warn \(duplicate\|ignoring\)" "$IT_TMP/serve.log" | tail -n 5
assert_eq "serve exit status after SIGTERM (within 10 s)" 0 "$WAIT_RC"
assert_true "serve says the ledger is committed" \
        grep -q "stopped; the ledger is committed" "$IT_TMP/serve.log"

stopped="$(sql "SELECT SUM(records) FROM partitions WHERE topic = '$T'")"
log "serve stopped at $stopped records"
# Not vacuous: SIGTERM came in the middle of the backlog.
assert_true "serve stopped inside the backlog ($rec <= $stopped < $N1)" \
        test "$stopped" -ge "$rec" -a "$stopped" -lt "$N1"
assert_eq "partitions whose records != next_offset" "" \
        "$(sql "SELECT partition FROM partitions WHERE topic = '$T'
                AND records != next_offset")"
assert_eq "PRAGMA integrity_check" ok "$(sqlite3 "$DB" 'PRAGMA integrity_check')"

wait_pid "$PROD" 60
cat "$IT_TMP/p2.err"
[ "$WAIT_RC" = 0 ] || die "producer p2: exit status $WAIT_RC"
manifest_add "$(cat "$IT_TMP/p2.json")"
log "manifest: delivered $M_DELIVERED, duplicates $M_DUPS, missing $M_GAPS"

scan_json -t "$T" --db "$DB"
assert_manifest_scan "final scan"
assert_scan producers 2
assert_eq "anomaly rows stored twice" 0 \
        "$(sql "SELECT COUNT(*) - (SELECT COUNT(*) FROM (SELECT DISTINCT
                topic, partition, kind, producer, epoch, seq_lo, offset_lo
                FROM anomalies)) FROM anomalies")"

finish
