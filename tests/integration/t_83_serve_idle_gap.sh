#!/usr/bin/env bash
# A gap at the end of an idle live topic: serve reads records seq 0, 1, 3 of
# one producer and then nothing more.  The engine runs on record time, so
# with no later record its clock would stand still and the gap would never
# be confirmed (a missed loss).  At the head of the log the audit advances
# the records' clock to the wall clock: the gap (seq 2, 1 missing record)
# must be confirmed within the grace period (3 s here) while no record
# comes, and a backlog read by a second serve of a fresh ledger must give
# the same verdict.
source "$(dirname "$0")/lib.sh"

T="$(name main)"
DB="$IT_TMP/ledger.db"
create_topic "$T" 1

put() {
        echo "record $1" | kcat -P -b "$BOOTSTRAP" -t "$T" -p 0 \
                -H eos.producer=idle -H eos.epoch=0 -H "eos.seq=$1" ||
                die "kcat failed at seq $1"
}

# ledger_get COLUMN: the partition's COLUMN in the ledger, read while serve
# writes it (-1 while there is no row yet).
ledger_get() {
        sqlite3 "file:$DB?mode=ro" "SELECT COALESCE(SUM($1), -1) FROM
                partitions WHERE topic = '$T'" 2>/dev/null || echo -1
}

bg_start SERVE "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --db "$DB" \
        --commit-interval-ms 200 --gap-grace-ms 3000 >"$IT_TMP/serve.log" 2>&1
log "serve: pid $SERVE"
for s in 0 1 3; do put "$s"; done
start=$SECONDS
for ((i = 0; i < 200; i++)); do
        [ "$(ledger_get records)" = 3 ] && break
        sleep 0.1
done
assert_eq "records audited" 3 "$(ledger_get records)"
assert_eq "gap not confirmed before the grace" 0 "$(ledger_get gap)"
# Idle from here on: only the wall clock can confirm the gap.
for ((i = 0; i < 300; i++)); do
        [ "$(ledger_get gap)" = 1 ] && break
        sleep 0.1
done
waited=$((SECONDS - start))
assert_eq "gap confirmed while idle" 1 "$(ledger_get gap)"
assert_eq "missing records" 1 "$(ledger_get missing)"
assert_true "confirmed after the grace, within 20 s ($waited s)" \
        test "$waited" -ge 3 -a "$waited" -le 20
assert_eq "open gaps left" 0 "$(sqlite3 "file:$DB?mode=ro" \
        "SELECT COUNT(*) FROM open_gaps WHERE topic = '$T'")"
kill -TERM "$SERVE"
wait_pid "$SERVE" 15
assert_eq "serve exit status" 0 "$WAIT_RC"

# The same records as a backlog: a scan confirms the gap at its end.
scan_json -t "$T"
assert_eq "scan exit status" 1 "$SCAN_RC"
assert_scan records_total 3
assert_scan anomalies.gap 1
assert_scan missing_records 1
finish
