#!/usr/bin/env bash
# The configuration file (--config) against the real broker: serve takes
# every setting from it (brokers, topics, ledger, listen address, log
# level, kafka.* properties); flags override it (--log-level, --listen);
# scan reads the same file and audits only what serve left; brokers may
# come from kafka.bootstrap.servers alone; a bad line stops serve at once
# with FILE:LINE and exit status 2, and `config-help --check` says the same.
source "$(dirname "$0")/lib.sh"

command -v curl >/dev/null 2>&1 || die "curl not found"

free_port() {
        python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

T="$(name main)"
create_topic "$T" 2
produce -t "$T" --producer "$(name p)" -n 100 --seed 1
[ "$PROD_RC" = 0 ] || die "produce failed"

PORT1="$(free_port)"
CONF="$IT_TMP/eosaudit.conf"
cat >"$CONF" <<CONFEOF
# t_94: everything from here
brokers = $BOOTSTRAP
topics = $T
db = $IT_TMP/ledger.db

listen = 127.0.0.1:$PORT1
commit-interval-ms = 200
gap-grace-ms = 1000
log-level = warn
kafka.client.id = eosaudit-t94
kafka.fetch.wait.max.ms = 50
CONFEOF
assert_true "config-help --check accepts it" "$EOSAUDIT" config-help --check "$CONF"

# metric_wait URL SAMPLE VALUE: waits up to 30 s for the sample's value.
metric_wait() {
        local i m
        for ((i = 0; i < 300; i++)); do
                m="$(curl -sf "${1}metrics")" || m=
                grep -qxF "$2 $3" <<<"$m" && { echo "$3"; return 0; }
                sleep 0.1
        done
        grep -F "$2 " <<<"$m" | awk '{ print $2 }'
        [ -n "$m" ] || echo "<no answer>"
}

# 1. Only the file.
bg_start SERVE "$EOSAUDIT" serve --config "$CONF" >"$IT_TMP/serve1.log" 2>&1
U1="http://127.0.0.1:$PORT1/"
assert_eq "records from the file's settings" 100 \
        "$(metric_wait "$U1" "eosaudit_records_total{topic=\"$T\"}" 100)"
kill -TERM "$SERVE"
wait_pid "$SERVE" 15
assert_eq "serve exit status" 0 "$WAIT_RC"
assert_eq "log-level = warn: no info line" 0 "$(grep -c ' info ' "$IT_TMP/serve1.log")"
assert_true "the ledger is where db says" test -f "$IT_TMP/ledger.db"

# 2. Flags over the file: --log-level and --listen.
PORT2="$(free_port)"
# --msgid-from none: new messages, not resends of run 1's (same keys).
produce -t "$T" --producer "$(name p)" -n 20 --seed 2 --epoch 1 --msgid-from none
bg_start SERVE "$EOSAUDIT" serve --config "$CONF" --log-level info \
        --listen "127.0.0.1:$PORT2" >"$IT_TMP/serve2.log" 2>&1
U2="http://127.0.0.1:$PORT2/"
assert_eq "records after the restart (same ledger)" 120 \
        "$(metric_wait "$U2" "eosaudit_records_total{topic=\"$T\"}" 120)"
assert_true "--log-level info overrides the file" \
        grep -q "http: listening on $U2" "$IT_TMP/serve2.log"
assert_eq "the file's port is not used" 000 \
        "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "${U1}healthz")"
kill -TERM "$SERVE"
wait_pid "$SERVE" 15
assert_eq "serve exit status (flags over the file)" 0 "$WAIT_RC"

# 3. scan reads the same file: only the new records.
produce -t "$T" --producer "$(name p)" -n 30 --seed 3 --epoch 2 --msgid-from none
scan_json --config "$CONF" --listen off
assert_eq "scan exit status" 0 "$SCAN_RC"
assert_scan records_total 150
assert_scan anomalies_total 0

# 4. Brokers from kafka.bootstrap.servers alone; topics from the flag.
cat >"$IT_TMP/kafka-only.conf" <<CONFEOF
kafka.bootstrap.servers = $BOOTSTRAP
log-level = error
CONFEOF
SCAN_RC=0
SCAN_JSON="$("$EOSAUDIT" scan --config "$IT_TMP/kafka-only.conf" -t "$T" --json)" || SCAN_RC=$?
assert_eq "scan with kafka.bootstrap.servers only" 0 "$SCAN_RC"
assert_scan records_total 150

# 5. A bad line: serve stops at once, naming the file and the line.
sed 's/^commit-interval-ms = 200$/commit-interval-ms = 0/' "$CONF" >"$IT_TMP/bad.conf"
bg_start BAD "$EOSAUDIT" serve --config "$IT_TMP/bad.conf" >"$IT_TMP/bad.log" 2>&1
wait_pid "$BAD" 10
assert_eq "serve with a bad line: exit status" 2 "$WAIT_RC"
assert_eq "serve with a bad line: message" \
        "eosaudit: $IT_TMP/bad.conf:7: invalid value '0' for commit-interval-ms (expected an integer from 1 to 3600000)" \
        "$(cat "$IT_TMP/bad.log")"
out="$("$EOSAUDIT" config-help --check "$IT_TMP/bad.conf" 2>&1)"
assert_eq "config-help --check exit status" 2 "$?"
assert_eq "config-help --check message" "$(cat "$IT_TMP/bad.log")" "$out"

finish
