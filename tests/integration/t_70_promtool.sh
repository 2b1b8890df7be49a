#!/usr/bin/env bash
# /metrics of `eosaudit serve` on the real broker passes `promtool check
# metrics`, holds the counts the producer reports it injected, and its
# counters survive a restart of serve: the second serve (over HTTPS, with a
# bearer token) must show the same counter samples before it has audited
# anything new.  Label escaping of quotes and backslashes is tested in
# tests/test_http.c: Kafka topic names cannot hold them.
source "$(dirname "$0")/lib.sh"

command -v promtool >/dev/null 2>&1 || die "promtool not found (Debian package prometheus)"
command -v curl >/dev/null 2>&1 || die "curl not found"

T="$(name main)"
DB="$IT_TMP/ledger.db"
create_topic "$T" 3

# Duplicates, gaps and a zombie session.
produce -t "$T" --producer "$(name p)" -n 3000 --inject-duplicates 0.01 \
        --inject-gaps 0.005 --zombie --seed 7
[ "$PROD_RC" = 0 ] || die "produce failed"
DELIVERED="$(json_get delivered "$PROD_JSON")"
DUPS="$(json_get duplicates_injected "$PROD_JSON")"
GAPS="$(json_get gaps_injected "$PROD_JSON")"
ZOMBIE="$(json_get zombie_records "$PROD_JSON")"

# serve_start LOG ARGS...: starts serve with ARGS, sets SERVE and URL.
serve_start() {
        local log="$1" i
        shift
        bg_start SERVE "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --db "$DB" \
                --commit-interval-ms 200 --gap-grace-ms 1000 \
                --listen 127.0.0.1:0 "$@" >"$log" 2>&1
        URL=
        for ((i = 0; i < 300; i++)); do
                URL="$(sed -n 's|.*http: listening on \(http[s]*://[^ ]*\)$|\1|p' "$log")"
                [ -n "$URL" ] && break
                kill -0 "$SERVE" 2>/dev/null || break
                sleep 0.1
        done
        [ -n "$URL" ] || { cat "$log"; die "serve printed no URL"; }
        log "serve pid $SERVE at $URL"
}

# metric TEXT SAMPLE: the value of the sample line SAMPLE (name{labels}).
metric() {
        awk -v s="$2" 'index($0, s " ") == 1 { print $2; found = 1 }
                END { if (!found) print "<none>" }' <<<"$1"
}

# The counter samples, which must not change across a restart.
counters() {
        grep -E '^eosaudit_(records_total|anomalous_records_total|anomaly_events_total|missing_records_total|untracked_records_total|unaudited_offsets_total|open_gaps|producers|producer_partitions)\{' <<<"$1" | sort
}

serve_start "$IT_TMP/serve1.log"
L="{topic=\"$T\"}"
for ((i = 0; i < 600; i++)); do
        M1="$(curl -sf "${URL}metrics")" || M1=
        [ "$(metric "$M1" "eosaudit_records_total$L")" = "$DELIVERED" ] &&
                [ "$(metric "$M1" "eosaudit_missing_records_total$L")" = "$GAPS" ] &&
                [ "$(metric "$M1" "eosaudit_open_gaps$L")" = 0 ] &&
                [ "$(metric "$M1" eosaudit_ready)" = 1 ] && break
        sleep 0.1
done
# Ready comes when every partition was read to its end, a moment after the
# last record is counted: waited for too, or a fast run scrapes between.
log "metrics after $((i / 10)) s"
printf '%s\n' "$M1" >"$IT_TMP/metrics1.txt"
assert_true "promtool check metrics (first serve)" \
        promtool check metrics <"$IT_TMP/metrics1.txt"
assert_eq "records_total" "$DELIVERED" "$(metric "$M1" "eosaudit_records_total$L")"
assert_eq "duplicates" "$DUPS" \
        "$(metric "$M1" "eosaudit_anomalous_records_total{topic=\"$T\",kind=\"duplicate\"}")"
assert_eq "fenced" "$ZOMBIE" \
        "$(metric "$M1" "eosaudit_anomalous_records_total{topic=\"$T\",kind=\"fenced\"}")"
assert_eq "missing records" "$GAPS" "$(metric "$M1" "eosaudit_missing_records_total$L")"
assert_eq "coverage" 0 \
        "$(metric "$M1" "eosaudit_anomaly_events_total{topic=\"$T\",kind=\"coverage\"}")"
assert_eq "ready" 1 "$(metric "$M1" eosaudit_ready)"
for p in 0 1 2; do
        assert_eq "lag of partition $p" 0 \
                "$(metric "$M1" "eosaudit_consumer_lag_records{topic=\"$T\",partition=\"$p\"}")"
done
assert_true "latency histogram of the topic" \
        grep -q "^eosaudit_record_latency_seconds_count$L [1-9]" "$IT_TMP/metrics1.txt"
assert_true "no producer label" bash -c "! grep -q 'producer=' '$IT_TMP/metrics1.txt'"
S="$(curl -sf "${URL}api/v1/summary")" || S='{}'
assert_eq "summary records_total" "$DELIVERED" "$(json_get records_total "$S")"
assert_eq "readyz" 200 "$(curl -s -o /dev/null -w '%{http_code}' "${URL}readyz")"

kill -TERM "$SERVE"
wait_pid "$SERVE" 15
assert_eq "first serve exit status" 0 "$WAIT_RC"

# The restart: HTTPS with a self-signed certificate and a token.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
        -addext subjectAltName=IP:127.0.0.1 -keyout "$IT_TMP/key.pem" \
        -out "$IT_TMP/cert.pem" >/dev/null 2>&1 || die "openssl cannot make a certificate"
echo "it-token-$IT_RUN_ID" >"$IT_TMP/token"
serve_start "$IT_TMP/serve2.log" --http-token-file "$IT_TMP/token" \
        --tls-cert "$IT_TMP/cert.pem" --tls-key "$IT_TMP/key.pem"
C=(curl -s --cacert "$IT_TMP/cert.pem")
AUTH="Authorization: Bearer it-token-$IT_RUN_ID"
assert_true "https URL" test "${URL#https://}" != "$URL"
assert_eq "healthz without token" 200 "$("${C[@]}" -o /dev/null -w '%{http_code}' "${URL}healthz")"
assert_eq "metrics without token" 401 "$("${C[@]}" -o /dev/null -w '%{http_code}' "${URL}metrics")"
M2="$("${C[@]}" -f -H "$AUTH" "${URL}metrics")" || M2=
printf '%s\n' "$M2" >"$IT_TMP/metrics2.txt"
assert_true "promtool check metrics (after the restart)" \
        promtool check metrics <"$IT_TMP/metrics2.txt"
assert_true "counter samples found" test -n "$(counters "$M1")"
assert_eq "counters after the restart" "$(counters "$M1")" "$(counters "$M2")"

kill -TERM "$SERVE"
wait_pid "$SERVE" 15
assert_eq "second serve exit status" 0 "$WAIT_RC"

finish
