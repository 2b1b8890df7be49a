#!/usr/bin/env bash
# eosaudit serve follows a topic while the reference producer writes at a
# steady rate; the broker is stopped for a few seconds and started again
# under both of them.  Neither may lose or duplicate a record: the
# idempotent producer's retries across the restart must be deduplicated by
# the broker, and serve must resume where it was.  Then SIGTERM stops serve
# (exit 0, promptly), its ledger must already hold every record, and a
# later scan --db of that ledger must report exactly what was produced,
# clean.
source "$(dirname "$0")/lib.sh"

N1=600 RATE1=200 # ~3 s, the broker goes down ~1 s in
N2=400 RATE2=400 # after the restart, a new session (epoch from --state)
T="$(name main)"
DB="$IT_TMP/ledger.db"
STATE="$IT_TMP/producer.state"
create_topic "$T" 3
# librdkafka backs off reconnecting up to 10 s by default; keep the test short.
FAST=(-X reconnect.backoff.max.ms=500)

# If anything below fails while the broker is down, bring it back for the
# tests after this one.
test_cleanup() {
        broker_up || "$KAFKA_SH" up >/dev/null 2>&1 ||
                echo "ERROR: could not restart the broker"
}

# ledger_sum COLUMN: SUM(COLUMN) over the topic's partitions in the ledger,
# read while serve may be writing it (WAL: readers do not block it).
ledger_sum() {
        python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=5)
r = db.execute("SELECT COALESCE(SUM(%s), 0) FROM partitions WHERE topic = ?"
               % sys.argv[2], (sys.argv[3],)).fetchone()
print(r[0])' "$DB" "$1" "$T" 2>/dev/null || echo -1
}

bg_start SERVE "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --db "$DB" \
        --commit-interval-ms 200 "${FAST[@]}" >"$IT_TMP/serve.log" 2>&1
log "serve pid $SERVE"

# Phase 1, with the broker restart in the middle of it.
bg_start PROD "$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --json -q \
        --producer "$(name p)" --state "$STATE" -n "$N1" --rate "$RATE1" "${FAST[@]}" \
        >"$IT_TMP/produce1.json" 2>"$IT_TMP/produce1.err"
sleep 1
"$KAFKA_SH" down || die "cannot stop the broker"
log "broker down"
sleep 2
kill -0 "$SERVE" 2>/dev/null || die "serve exited while the broker was down"
"$KAFKA_SH" up || die "cannot start the broker again"
log "broker up again"
wait_pid "$PROD" 120
cat "$IT_TMP/produce1.err"
[ "$WAIT_RC" != 124 ] || die "phase 1 producer still running after 120 s"
assert_eq "phase 1 produce exit status" 0 "$WAIT_RC"
PROD_JSON="$(cat "$IT_TMP/produce1.json")"
log "phase 1: $PROD_JSON"
assert_prod delivered "$N1"
assert_prod failed 0
assert_prod epoch 0 # the first session of a fresh --state file
# Nominally N1 / RATE1 = 3 s: the records really waited for the broker.
el="$(json_get elapsed_ms "$PROD_JSON")"
assert_true "phase 1 spanned the outage (elapsed $el ms > 5000)" \
        test "$el" -gt 5000

# Phase 2: the next session of the same producer, broker up.  Its records
# are new messages, but the reference producer would stamp them with the
# ids of phase 1 (keys p-0, p-1, ...): no ids this time.
produce -t "$T" --producer "$(name p)" --state "$STATE" -n "$N2" --rate "$RATE2" \
        --msgid-from none
assert_eq "phase 2 produce exit status" 0 "$PROD_RC"
assert_prod delivered "$N2"
assert_prod failed 0
assert_prod epoch 1

TOTAL=$((N1 + N2))
# serve must get there by itself; it commits every 200 ms.
for ((i = 0; i < 300; i++)); do
        [ "$(ledger_sum records)" = "$TOTAL" ] && break
        sleep 0.1
done
log "serve's ledger after $((i / 10)) s: $(ledger_sum records) records"

# The ledger is locked while serve runs: a scan of it must refuse.
rc=0
"$EOSAUDIT" scan -b "$BOOTSTRAP" -t "$T" --db "$DB" --json -q \
        >/dev/null 2>"$IT_TMP/locked.err" || rc=$?
cat "$IT_TMP/locked.err"
assert_eq "scan --db of a ledger serve holds: exit status" 2 "$rc"

start=$SECONDS
kill -TERM "$SERVE"
wait_pid "$SERVE" 15
log "serve exit status $WAIT_RC after $((SECONDS - start)) s"
assert_eq "serve exit status after SIGTERM (within 15 s)" 0 "$WAIT_RC"
tail -n 5 "$IT_TMP/serve.log"
assert_eq "records in serve's ledger" "$TOTAL" "$(ledger_sum records)"
for col in duplicate gap out_of_order fenced malformed missing untracked; do
        assert_eq "$col in serve's ledger" 0 "$(ledger_sum "$col")"
done

scan_json -t "$T" --db "$DB"
assert_clean_scan "$TOTAL"
assert_scan producers 1
assert_scan pairs 3

finish
