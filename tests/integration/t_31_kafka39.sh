#!/usr/bin/env bash
# The brokers people run: the anomaly mix (duplicates, gaps, a zombie, and
# transactions committed and aborted) audited against Apache Kafka 3.9,
# the last 3.x line (KRaft), as the suite's own broker (pom.xml's 4.x)
# audits it everywhere else.  A broker of its own, started from the 3.9
# jars (deploy/kafka/kafka.sh with KAFKA_VERSION), on the next free ports
# from 29700; the scan must find exactly the producers' manifest, and
# kcat's read of the log (read_committed) must agree on the records.
# it-timeout: 240
# it-background: yes (a broker of its own: run.sh runs it beside the others)
source "$(dirname "$0")/lib.sh"

K39_VERSION="${IT_KAFKA39_VERSION:-3.9.2}"
K39_DIR="$IT_TMP/kafka-$K39_VERSION"
k39() {
        KAFKA_VERSION="$K39_VERSION" KAFKA_PORT="$K39_PORT" \
                KAFKA_DATA_DIR="$K39_DIR/data" KAFKA_LOG="$K39_DIR/kafka.log" \
                KAFKA_PID_FILE="$K39_DIR/kafka.pid" \
                KAFKA_HEAP_OPTS="-Xms128m -Xmx512m" "$KAFKA_SH" "$@"
}
K39_PORT=
for p in $(seq 29700 3 29760); do
        if it_port_free "$p" && it_port_free $((p + 1)) && it_port_free $((p + 2)); then
                K39_PORT=$p
                break
        fi
done
[ -n "$K39_PORT" ] || die "no three free ports in 29700..29762"
test_cleanup() { k39 down >/dev/null 2>&1; }
mkdir -p "$K39_DIR"
k39 up >"$K39_DIR/up.log" 2>&1 || { tail -n 30 "$K39_DIR/up.log"; die "Kafka $K39_VERSION did not start"; }
BOOTSTRAP="127.0.0.1:$K39_PORT"
ver="$(grep -o 'Kafka version: [0-9.]*' "$K39_DIR/kafka.log" "$K39_DIR/data/"*.log 2>/dev/null | head -n 1)"
log "Apache Kafka $K39_VERSION on $BOOTSTRAP (${ver:-version line not logged})"

M_DELIVERED=0 M_DUPS=0 M_GAPS=0 M_ZOMBIE=0 M_FAILED=0
T="$(name mix)"
create_topic "$T" 3
produce -t "$T" --producer "$(name p-inj)" -n 6000 \
        --inject-duplicates 0.01 --inject-gaps 0.005 --seed 3901
manifest_add "$PROD_JSON"
produce -t "$T" --producer "$(name p-z)" -n 1000 --zombie
manifest_add "$PROD_JSON"
produce -t "$T" --producer "$(name p-txn)" -n 1000 \
        --transactional-id "$(name txn)" --txn-size 50 --abort-every 4
manifest_add "$PROD_JSON"
assert_eq "producer failures" 0 "$M_FAILED"
assert_true "aborted transactions ($(json_get aborted_transactions "$PROD_JSON"))" \
        test "$(json_get aborted_transactions "$PROD_JSON")" -gt 0
assert_true "duplicates and gaps were injected ($M_DUPS, $M_GAPS)" \
        test "$M_DUPS" -gt 20 -a "$M_GAPS" -gt 10

scan_json -t "$T"
assert_manifest_scan "Kafka $K39_VERSION"
# kcat reads the log itself (read_committed): the records, the extra
# copies and the missing seqs must be the scan's.
read -r o_records _ o_extra _ o_missing < <(log_oracle "$T")
assert_eq "oracle records = scan" "$o_records" "$(json_get records_total)"
assert_eq "oracle extra copies = scan duplicates" "$o_extra" "$(json_get anomalies.duplicate)"
assert_eq "oracle missing = scan missing" "$o_missing" "$(json_get missing_records)"
finish
