#!/usr/bin/env bash
# The ledger's offsets and Kafka's committed offsets (group "eosaudit",
# written only so that lag tools see the audit) disagree, both ways: the
# group's offsets are moved with ConsumerGroupCommand --reset-offsets
# between audits with the same --db.
#  - behind (--to-earliest, offset 0): Kafka says the audit is at the
#    start; resuming from there would count every record again;
#  - ahead (--to-latest after more records were written): Kafka says the
#    audit is at the end; resuming from there would skip the new records;
#  - both again under serve instead of scan.
# Each audit must resume from the ledger: the totals equal what the
# producers reported, exactly, after every step.  And every audit writes
# the ledger's offsets back to the group, so lag tools see the truth again.
source "$(dirname "$0")/lib.sh"

T="$(name main)"
DB="$IT_TMP/ledger.db"
GROUP=eosaudit
CGC=org.apache.kafka.tools.consumer.group.ConsumerGroupCommand
# JVM options for a short-lived tool: starts in about half the time.
JVM_FAST=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC)
create_topic "$T" 3

# step NAME SEED: one more producer run with injections; adds to the
# manifest (lib.sh).
step_produce() {
        produce -t "$T" --producer "$(name "$1")" -n 3000 \
                --inject-duplicates 0.01 --inject-gaps 0.01 --seed "$2"
        [ "$PROD_RC" = 0 ] || die "producer $1 failed (exit $PROD_RC)"
        assert_prod failed 0
        manifest_add "$PROD_JSON"
}

# ledger_offsets: "p=next_offset ..." of the topic in the ledger.
ledger_offsets() {
        sqlite3 "file:$DB?mode=ro" "SELECT group_concat(partition || '=' ||
                next_offset, ' ') FROM (SELECT partition, next_offset
                FROM partitions WHERE topic = '$T' ORDER BY partition)"
}

# group_offsets: "p=committed ..." of the topic in the group ("-" when the
# group has no offset for a partition).
group_offsets() {
        local out
        out="$("$KAFKA_SH" tool "${JVM_FAST[@]}" "$CGC" --bootstrap-server "$BOOTSTRAP" \
                --group "$GROUP" --describe 2>&1)" ||
                die "cannot describe group $GROUP: $out"
        awk -v t="$T" '$2 == t { print $3 "=" $4 }' <<<"$out" | sort -n |
                paste -sd' '
}

# group_reset ARGS...: --reset-offsets ARGS for the topic, executed; sets
# RESET_OFFSETS to the new offsets ("p=offset ...") the tool reports.
group_reset() {
        local out
        out="$("$KAFKA_SH" tool "${JVM_FAST[@]}" "$CGC" --bootstrap-server "$BOOTSTRAP" \
                --group "$GROUP" --reset-offsets "$@" --topic "$T" \
                --execute 2>&1)" || die "cannot reset the group's offsets: $out"
        RESET_OFFSETS="$(awk -v t="$T" '$2 == t { print $3 "=" $4 }' <<<"$out" |
                sort -n | paste -sd' ')"
        log "group reset $*: $RESET_OFFSETS"
}

# --- a first audit -----------------------------------------------------------
step_produce pA 8101
scan_json -t "$T" --db "$DB"
assert_manifest_scan "first audit"
first="$(ledger_offsets)"
assert_eq "group offsets after the first audit = the ledger's" "$first" \
        "$(group_offsets)"

# --- Kafka says earlier: offset 0 ----------------------------------------
group_reset --to-earliest
assert_eq "group offsets after --to-earliest" "0=0 1=0 2=0" "$RESET_OFFSETS"
step_produce pB 8102
scan_json -t "$T" --db "$DB"
assert_manifest_scan "group at 0, ledger at the end"
assert_eq "group offsets after the audit = the ledger's" "$(ledger_offsets)" \
        "$(group_offsets)"

# --- Kafka says later: the end, past records the ledger has not seen ------
step_produce pC 8103 # not audited yet
audited="$(ledger_offsets)"
group_reset --to-latest
# Every partition got records from pC: each is now ahead of the ledger.
ahead="$(python3 -c 'import sys
a = dict(w.split("=") for w in sys.argv[1].split())
g = dict(w.split("=") for w in sys.argv[2].split())
print("yes" if len(a) == 3 and a.keys() == g.keys() and
      all(int(g[p]) > int(a[p]) for p in a) else "no")' "$audited" "$RESET_OFFSETS")"
assert_eq "group offsets ($RESET_OFFSETS) all ahead of the ledger's ($audited)" \
        yes "$ahead"
step_produce pD 8104
scan_json -t "$T" --db "$DB"
assert_manifest_scan "group past the ledger"

# --- the same under serve: group at 0, then at an offset past the ledger ---
group_reset --to-earliest
assert_eq "group offsets after --to-earliest" "0=0 1=0 2=0" "$RESET_OFFSETS"
step_produce pE 8105
bg_start SERVE "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --db "$DB" \
        --commit-interval-ms 200 >"$IT_TMP/serve.log" 2>&1
# ledger_records: SUM(records) in the ledger while serve writes it.
ledger_records() {
        sqlite3 "file:$DB?mode=ro" "SELECT COALESCE(SUM(records), 0) FROM
                partitions WHERE topic = '$T'" 2>/dev/null || echo -1
}
for ((i = 0; i < 200; i++)); do
        [ "$(ledger_records)" = "$M_DELIVERED" ] && break
        sleep 0.1
done
assert_eq "serve, group at 0: records in the ledger" "$M_DELIVERED" \
        "$(ledger_records)"
kill -TERM "$SERVE"
wait_pid "$SERVE" 15
assert_eq "serve exit status after SIGTERM" 0 "$WAIT_RC"
# After the serve: its lag commits are the ledger's offsets.
assert_eq "group offsets after serve = the ledger's" "$(ledger_offsets)" \
        "$(group_offsets)"

step_produce pF 8106 # not audited yet
group_reset --to-latest
bg_start SERVE "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --db "$DB" \
        --commit-interval-ms 200 >>"$IT_TMP/serve.log" 2>&1
step_produce pG 8107
for ((i = 0; i < 200; i++)); do
        [ "$(ledger_records)" = "$M_DELIVERED" ] && break
        sleep 0.1
done
assert_eq "serve, group past the ledger: records in the ledger" \
        "$M_DELIVERED" "$(ledger_records)"
kill -TERM "$SERVE"
wait_pid "$SERVE" 15
assert_eq "serve exit status after SIGTERM" 0 "$WAIT_RC"

scan_json -t "$T" --db "$DB"
assert_manifest_scan "after both serves"
assert_scan producers 7

finish
