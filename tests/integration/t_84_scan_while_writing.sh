#!/usr/bin/env bash
# scan --db of a topic that is being written, three times while the
# producer runs and once after: each scan audits up to the high watermarks
# of its start and must store exactly that as the ledger's offsets, so the
# next scan goes on where it stopped.  Nothing may be skipped: after every
# scan each partition's counted records equal its stored next offset (a
# plain idempotent producer leaves no offset holes), and the last scan
# reports exactly what the producer delivered, with no gap.
#
# A scan stops consuming a partition at its start watermark, but records
# past it are already fetched; librdkafka then reports the partition's
# end (PARTITION_EOF) at the newer watermark, and taking that as "only
# markers in between" would move the ledger's offset past records that
# were never audited.
source "$(dirname "$0")/lib.sh"

N=12000 RATE=2000 # 6 s of producing
T="$(name main)"
DB="$IT_TMP/ledger.db"
create_topic "$T" 3

# offsets_vs_records: the partitions whose records != next_offset.
offsets_vs_records() {
        sqlite3 "file:$DB?mode=ro" "SELECT group_concat('[' || partition ||
                '] records ' || records || ' next_offset ' || next_offset,
                '; ') FROM partitions WHERE topic = '$T'
                AND records != next_offset"
}

bg_start PROD "$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --json -q \
        --producer "$(name p)" -n "$N" --rate "$RATE" \
        >"$IT_TMP/p.json" 2>"$IT_TMP/p.err"
prev=0
for i in 1 2 3; do
        sleep 0.8
        scan_json -t "$T" --db "$DB"
        got="$(json_get records_total)"
        assert_eq "scan $i during the write: exit status" 0 "$SCAN_RC"
        assert_eq "scan $i: partitions whose offset passed unaudited records" \
                "" "$(offsets_vs_records)"
        assert_true "scan $i saw more than scan $((i - 1)) ($got > $prev)" \
                test "$got" -gt "$prev"
        prev=$got
done
wait_pid "$PROD" 60
cat "$IT_TMP/p.err"
[ "$WAIT_RC" = 0 ] || die "producer: exit status $WAIT_RC"
PROD_JSON="$(cat "$IT_TMP/p.json")"
assert_prod delivered "$N"
# Not vacuous: the scans above stopped inside the stream.
assert_true "the scans during the write saw part of it ($prev < $N)" \
        test "$prev" -lt "$N"

scan_json -t "$T" --db "$DB"
assert_clean_scan "$N"
assert_eq "after the last scan: partitions whose offset passed unaudited records" \
        "" "$(offsets_vs_records)"

finish
