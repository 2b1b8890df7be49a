#!/usr/bin/env bash
# Hand-written headers (kcat, one record per invocation) into a 1-partition
# topic, audited from offset 0: each line below is one record and the
# verdict schema/HEADERS.md gives it.  The totals at the end are the sums of
# that column, so a wrong verdict for any single record shows.
source "$(dirname "$0")/lib.sh"

T="$(name main)"
create_topic "$T" 1

OFFSET=0
# put VERDICT [-H name=value ...]: one record on partition 0.  A bare
# "-H name" (no =) makes kcat send a null value.
put() {
        local verdict="$1"
        shift
        printf '%-13s offset %2d: %s\n' "$verdict" "$OFFSET" "$*"
        echo "record $OFFSET" | kcat -P -b "$BOOTSTRAP" -t "$T" -p 0 "$@" ||
                die "kcat failed at offset $OFFSET"
        OFFSET=$((OFFSET + 1))
}
P=(-H eos.producer=k1)
E0=(-H eos.epoch=0)
E1=(-H eos.epoch=1)
LONG255="$(printf 'p%.0s' {1..255})"
LONG256="${LONG255}p"

put ok            "${P[@]}" "${E0[@]}" -H eos.seq=0
put ok            "${P[@]}" "${E0[@]}" -H eos.seq=1
put duplicate     "${P[@]}" "${E0[@]}" -H eos.seq=1
put ok            "${P[@]}" "${E0[@]}" -H eos.seq=2
put ok            "${P[@]}" "${E0[@]}" -H eos.seq=5        # opens gap 3..4
put untracked
put untracked     -H eos.pid=7 -H eos.msgid=m1 -H other=1  # no producer/epoch/seq
put malformed     "${P[@]}" "${E0[@]}" -H eos.seq=-1
put malformed     "${P[@]}" -H eos.epoch=abc -H eos.seq=6
put malformed     "${P[@]}" "${E0[@]}"                     # no eos.seq
put malformed     -H eos.epoch=0 -H eos.seq=6              # no eos.producer
put malformed     -H eos.producer= "${E0[@]}" -H eos.seq=0 # empty producer
put malformed     "${P[@]}" "${E0[@]}" -H eos.seq=9223372036854775808
put malformed     "${P[@]}" -H eos.epoch=2147483648 -H eos.seq=6
put malformed     "${P[@]}" "${E0[@]}" -H "eos.seq= 6"
put malformed     "${P[@]}" "${E0[@]}" -H eos.seq=+6
put malformed     "${P[@]}" "${E0[@]}" -H eos.seq=
put malformed     "${P[@]}" "${E0[@]}" -H eos.seq                # null value
put malformed     "${P[@]}" "${E0[@]}" -H eos.seq=0x6
put malformed     "${P[@]}" "${E0[@]}" -H eos.seq=6 -H eos.pid=abc  # bad optional header
put malformed     -H "eos.producer=$LONG256" "${E0[@]}" -H eos.seq=0
put malformed     "${P[@]}" "${E0[@]}" -H eos.seq=6 -H eos.seq=x    # last one counts
put ok            "${P[@]}" "${E0[@]}" -H eos.seq=x -H eos.seq=6    # last one counts
put out_of_order  "${P[@]}" "${E0[@]}" -H eos.seq=3        # gap 3..4 -> 4..4
put duplicate     "${P[@]}" "${E0[@]}" -H eos.seq=3        # no longer in the gap
put ok            "${P[@]}" "${E1[@]}" -H eos.seq=0        # new session
put fenced        "${P[@]}" "${E0[@]}" -H eos.seq=7
put ok            "${P[@]}" "${E1[@]}" -H eos.seq=001      # leading zeros: 1
put ok            -H eos.producer=K1 "${E0[@]}" -H eos.seq=0  # K1 is not k1
put ok            -H eos.producer=k2 -H eos.epoch=2147483647 -H eos.seq=0
put ok            -H eos.producer=k2 -H eos.epoch=2147483647 -H eos.seq=1 -H eos.pid=9223372036854775807
put ok            -H "eos.producer=$LONG255" "${E0[@]}" -H eos.seq=0
put gap_2         -H eos.producer=k3 "${E0[@]}" -H eos.seq=2  # from log start: 0..1 missing

scan_json -t "$T"
assert_eq "scan exit status" 1 "$SCAN_RC"
assert_scan records_total "$OFFSET"
assert_scan untracked 2
assert_scan anomalies.malformed 15
assert_scan anomalies.duplicate 2
assert_scan anomalies.out_of_order 1
assert_scan anomalies.fenced 1
# k1 epoch 0: 4..4 (3 came late); k3: 0..1.  Both confirmed at the scan's end.
assert_scan anomalies.gap 2
assert_scan missing_records 3
assert_scan open_gaps 0
assert_scan anomalies_total $((15 + 2 + 1 + 1 + 2))
# k1, K1, k2, the 255-byte one, k3: malformed records make no producer.
assert_scan producers 5
assert_scan pairs 5
assert_scan partitions 1

# The evidence: each anomaly at its offset, newest first.
anoms="$(python3 -c 'import json, sys
for a in json.loads(sys.argv[1])["topics"][0]["latest_anomalies"]:
    print(a["kind"], a["offset_lo"], a["offset_hi"], a["producer"], a["epoch"],
          a["seq_lo"], a["seq_hi"], a["count"])' \
        "$SCAN_JSON" | sort -k2,2n -k1,1)"
echo "$anoms" | sed 's/^/#   /'
has() { grep -qxF "$1" <<<"$anoms"; }
assert_eq "anomaly events" 7 "$(wc -l <<<"$anoms")"
assert_true "duplicate at offset 2 (k1 0 seq 1)" has "duplicate 2 2 k1 0 1 1 1"
assert_true "gap 3..4 opened at offset 4, 1 missing" has "gap 4 4 k1 0 4 4 1"
# Malformed records on one partition with nothing else in between are one
# event (dedup.h: coalesced, no producer, epoch or seq).
assert_true "malformed: one event, offsets 7..21" \
        has "malformed 7 21 None None None None 15"
assert_true "out_of_order at offset 23 (seq 3)" has "out_of_order 23 23 k1 0 3 3 1"
assert_true "duplicate at offset 24 (seq 3)" has "duplicate 24 24 k1 0 3 3 1"
assert_true "fenced at offset 26 (epoch 0 seq 7)" has "fenced 26 26 k1 0 7 7 1"
assert_true "gap 0..1 of k3 at offset 32" has "gap 32 32 k3 0 0 1 2"

finish
