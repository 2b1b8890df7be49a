#!/usr/bin/env bash
# One ledger, one auditor: a second `serve` on the --db a running serve
# holds must refuse to start (exit 2, a message that says the ledger is in
# use and by which pid), without touching the ledger or the lock, while the
# first one keeps auditing: records produced before, during and after the
# refused start must all be in the first serve's ledger, exactly once, when
# it stops (SIGTERM, exit 0).  Then the lock is free again: a new serve on
# that ledger starts, and a final scan --db shows exactly the manifest.
source "$(dirname "$0")/lib.sh"

T="$(name main)"
DB="$IT_TMP/ledger.db"
create_topic "$T" 3
SERVE_ARGS=(-b "$BOOTSTRAP" -t "$T" --db "$DB" --commit-interval-ms 200)


# ledger_records: SUM(records) in the ledger, read while serve writes it.
ledger_records() {
        sqlite3 "file:$DB?mode=ro" "SELECT COALESCE(SUM(records), 0) FROM
                partitions WHERE topic = '$T'" 2>/dev/null || echo -1
}

# wait_ledger N: waits up to 20 s for the ledger to hold N records.
wait_ledger() {
        local i
        for ((i = 0; i < 200; i++)); do
                [ "$(ledger_records)" = "$1" ] && return 0
                sleep 0.1
        done
        return 1
}

produce -t "$T" --producer "$(name p1)" -n 5000 \
        --inject-duplicates 0.01 --inject-gaps 0.01 --seed 8201
[ "$PROD_RC" = 0 ] || die "producer p1 failed"
manifest_add "$PROD_JSON"

bg_start SERVE "$EOSAUDIT" serve "${SERVE_ARGS[@]}" >"$IT_TMP/serve1.log" 2>&1
log "first serve: pid $SERVE"
wait_ledger "$M_DELIVERED" || die "the first serve did not audit the backlog"

# Records keep flowing while the second serve tries.
bg_start PROD "$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --json -q \
        --producer "$(name p2)" -n 4000 --rate 1000 \
        --inject-duplicates 0.01 --inject-gaps 0.01 --seed 8202 \
        >"$IT_TMP/p2.json" 2>"$IT_TMP/p2.err"
sleep 1
lock_before="$(cat "$DB-lock")"
start=$SECONDS
rc=0
timeout 30 "$EOSAUDIT" serve "${SERVE_ARGS[@]}" >"$IT_TMP/serve2.log" 2>&1 || rc=$?
cat "$IT_TMP/serve2.log"
assert_eq "second serve: exit status" 2 "$rc"
assert_true "second serve: refused within 15 s ($((SECONDS - start)) s)" \
        test $((SECONDS - start)) -le 15
assert_true "second serve: says the ledger is in use" \
        grep -q "ledger $DB is in use by another eosaudit process (pid $SERVE)" \
        "$IT_TMP/serve2.log"
assert_eq "second serve: did not start auditing" "" \
        "$(grep -E "stopped; the ledger is committed|failpoint" "$IT_TMP/serve2.log")"
assert_eq "lock file still names the first serve" "$lock_before" \
        "$(cat "$DB-lock")"
assert_eq "lock file content" "$SERVE" "$lock_before"
assert_true "first serve still running" kill -0 "$SERVE"

# The same for a scan --db of that ledger, in the middle of the stream.
rc=0
"$EOSAUDIT" scan -b "$BOOTSTRAP" -t "$T" --db "$DB" --json -q \
        >/dev/null 2>"$IT_TMP/scan-locked.err" || rc=$?
cat "$IT_TMP/scan-locked.err"
assert_eq "scan --db of a held ledger: exit status" 2 "$rc"
assert_true "scan --db of a held ledger: says it is in use" \
        grep -q "is in use by another eosaudit process (pid $SERVE)" \
        "$IT_TMP/scan-locked.err"

wait_pid "$PROD" 60
cat "$IT_TMP/p2.err"
[ "$WAIT_RC" = 0 ] || die "producer p2: exit status $WAIT_RC"
manifest_add "$(cat "$IT_TMP/p2.json")"
produce -t "$T" --producer "$(name p3)" -n 3000 \
        --inject-duplicates 0.01 --inject-gaps 0.01 --seed 8203
[ "$PROD_RC" = 0 ] || die "producer p3 failed"
manifest_add "$PROD_JSON"

wait_ledger "$M_DELIVERED"
assert_eq "records in the first serve's ledger" "$M_DELIVERED" \
        "$(ledger_records)"
assert_true "first serve still running" kill -0 "$SERVE"
kill -TERM "$SERVE"
wait_pid "$SERVE" 15
assert_eq "first serve: exit status after SIGTERM" 0 "$WAIT_RC"
# The records' verdicts, before the final scan confirms the open gaps.
assert_eq "duplicates in the first serve's ledger" "$M_DUPS" \
        "$(sqlite3 "file:$DB?mode=ro" "SELECT SUM(duplicate) FROM partitions
                WHERE topic = '$T'")"
assert_eq "missing + open gap records in the first serve's ledger" "$M_GAPS" \
        "$(sqlite3 "file:$DB?mode=ro" "SELECT (SELECT SUM(missing) FROM
                partitions WHERE topic = '$T') + (SELECT COALESCE(SUM(hi - lo
                + 1), 0) FROM open_gaps WHERE topic = '$T')")"

# The lock went with the first serve: a new one starts and runs.
bg_start SERVE3 "$EOSAUDIT" serve "${SERVE_ARGS[@]}" >"$IT_TMP/serve3.log" 2>&1
sleep 2
assert_true "a new serve runs on the released ledger" kill -0 "$SERVE3"
kill -TERM "$SERVE3"
wait_pid "$SERVE3" 15
cat "$IT_TMP/serve3.log"
assert_eq "new serve: exit status after SIGTERM" 0 "$WAIT_RC"

scan_json -t "$T" --db "$DB"
assert_manifest_scan "final scan"
assert_scan producers 3

finish
