#!/usr/bin/env bash
# The audit over the broker's SASL_SSL listener (deploy/kafka/secure.sh):
# TLS with host name verification, SASL users, and the StandardAuthorizer
# with only the ACLs docs/SECURITY.md documents.  The reference producer writes
# the usual anomaly mix over SASL_SSL and the auditor must find exactly
# its manifest, as a scan over PLAINTEXT does; a missing ACL, a bad
# password and an untrusted CA must each end `scan` with exit 2 and one
# line naming the cause, and `serve` must answer /readyz 503 with it and
# recover once the ACL is granted.  No secret may show up in any output.
source "$(dirname "$0")/lib.sh"

SB="$("$KAFKA_SH" secure bootstrap)"
CA="$("$KAFKA_SH" secure ca)"
# A broker started before secure.sh existed has no SASL_SSL listener.
if ! (exec 3<>"/dev/tcp/${SB%:*}/${SB##*:}") 2>/dev/null; then
        log "no SASL_SSL listener on $SB: restarting the broker"
        "$KAFKA_SH" down >/dev/null 2>&1
        "$KAFKA_SH" up >/dev/null 2>&1 || die "the broker did not restart"
fi
PW_AUDIT="$("$KAFKA_SH" secure password eosaudit)" || die "no password"
PW_PROD="$("$KAFKA_SH" secure password producer)" || die "no password"
# A data dir formatted before SCRAM-SHA-256 was added has only -512
# credentials: (re)set both for the auditor.
"$KAFKA_SH" secure user eosaudit "$PW_AUDIT" || die "cannot set the SCRAM credentials"
ADMIN_CFG="$IT_TMP/admin.properties"
"$KAFKA_SH" secure admin-config "$ADMIN_CFG"

# SCRAM-SHA-512 (and -256 below): librdkafka >= 2.6.1 authenticates with
# SCRAM to Kafka 4 brokers, and the build requires >= 2.10.
MECH=SCRAM-SHA-512
log "$("$EOSAUDIT" version): SASL mechanism $MECH"

GROUP="eosaudit-98"
# props FILE USER PASSWORD [extra lines]: a librdkafka properties file, 0600.
props() {
        local f="$1" u="$2" p="$3"
        shift 3
        (umask 077 && printf '%s\n' security.protocol=SASL_SSL \
                "sasl.mechanisms=$MECH" "sasl.username=$u" \
                "sasl.password=$p" "ssl.ca.location=$CA" \
                "group.id=$GROUP" "$@" >"$f")
}
A="$IT_TMP/audit.properties"
P="$IT_TMP/producer.properties"
props "$A" eosaudit "$PW_AUDIT"
props "$P" producer "$PW_PROD"

# acl ARGS...: kafka-acls as the admin principal over SASL_SSL (a super
# user through SCRAM-SHA-512, the Java client's).
acl() {
        "$KAFKA_SH" tool org.apache.kafka.tools.AclCommand \
                --bootstrap-server "$SB" --command-config "$ADMIN_CFG" \
                --add "$@" >>"$IT_TMP/acl.log" 2>&1 ||
                die "kafka-acls $* failed: $(tail -n 5 "$IT_TMP/acl.log")"
}

# docs/SECURITY.md's minimal set, per topic prefix of this test.
AUD="it-98_secured-audit"
acl --allow-principal User:eosaudit --operation Describe --operation Read \
        --operation DescribeConfigs --topic "$AUD" --resource-pattern-type prefixed
acl --allow-principal User:eosaudit --operation Read --group "$GROUP"
acl --allow-principal User:producer --operation Write --operation Describe \
        --topic "$AUD" --transactional-id it-98_secured --resource-pattern-type prefixed
# Describe only (no Read), and Describe+Read without DescribeConfigs.
acl --allow-principal User:eosaudit --operation Describe \
        --topic it-98_secured-noread --resource-pattern-type prefixed
acl --allow-principal User:eosaudit --operation Describe --operation Read \
        --topic it-98_secured-nocfg --resource-pattern-type prefixed
log "ACLs set"

OUT="$IT_TMP/outputs" # every output of eosaudit, checked for secrets at the end
: >"$OUT"

# sscan PROPS ARGS...: scan over SASL_SSL; SCAN_RC, SCAN_JSON, SCAN_ERR.
sscan() {
        local f="$1"
        shift
        SCAN_RC=0
        SCAN_JSON="$(timeout 60 "$EOSAUDIT" scan -b "$SB" -F "$f" --json \
                --no-progress "$@" 2>"$IT_TMP/err")" || SCAN_RC=$?
        SCAN_ERR="$(grep -v '^%' "$IT_TMP/err")"
        { echo "$SCAN_JSON"; cat "$IT_TMP/err"; } >>"$OUT"
        log "scan (SASL_SSL) $* -> exit $SCAN_RC"
        [ -n "$SCAN_ERR" ] && echo "$SCAN_ERR" | sed 's/^/#   /'
        return 0
}

# sproduce ARGS...: the reference producer over SASL_SSL.
sproduce() {
        PROD_RC=0
        PROD_JSON="$("$EOSAUDIT" produce -b "$SB" -F "$P" --json -q "$@" \
                2>>"$OUT")" || PROD_RC=$?
        log "produce (SASL_SSL) $* -> exit $PROD_RC"
        json_get delivered "$PROD_JSON" >/dev/null 2>&1 ||
                die "produce $* printed no summary (exit $PROD_RC)"
        manifest_add "$PROD_JSON"
}

# --- the anomaly mix over SASL_SSL ------------------------------------------
log "== anomaly mix, producer and auditor over SASL_SSL"
T="$(name audit)"
create_topic "$T" 3
sproduce -t "$T" --producer "$(name p-inj)" -n 6000 \
        --inject-duplicates 0.01 --inject-gaps 0.005 --seed 9601
assert_eq "produce (injections) exit status" 0 "$PROD_RC"
sproduce -t "$T" --producer "$(name p-z)" -n 1000 --zombie
assert_eq "produce (zombie) exit status" 0 "$PROD_RC"
sproduce -t "$T" --producer "$(name p-txn)" -n 1000 \
        --transactional-id "$(name txn)" --txn-size 50 --abort-every 4
assert_eq "produce (transactional) exit status" 0 "$PROD_RC"
assert_eq "producer failures" 0 "$M_FAILED"
assert_true "duplicates and gaps were injected ($M_DUPS, $M_GAPS)" \
        test "$M_DUPS" -gt 20 -a "$M_GAPS" -gt 10
sscan "$A" -t "$T"
assert_manifest_scan "SASL_SSL scan"
SECURE_JSON="$SCAN_JSON"
# The same audit over PLAINTEXT (no ACLs there) agrees on every figure.
scan_json -t "$T"
for k in records_total missing_records anomalies_total anomalies.duplicate \
        anomalies.gap anomalies.fenced producers pairs; do
        assert_eq "SASL_SSL = PLAINTEXT: $k" "$(json_get "$k")" \
                "$(json_get "$k" "$SECURE_JSON")"
done
# And kcat's count of the log (read_committed) agrees on the records.
read -r o_records _ o_extra _ o_missing < <(log_oracle "$T")
assert_eq "oracle records = scan" "$o_records" "$(json_get records_total "$SECURE_JSON")"

# --- a missing Read ACL -------------------------------------------------------
log "== Describe but no Read"
T="$(name noread)"
T="it-98_secured-noread-$IT_RUN_ID"
create_topic "$T" 2
"$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --producer p -n 100 -q >/dev/null ||
        die "cannot fill $T"
start=$SECONDS
sscan "$A" -t "$T"
assert_eq "no Read: scan exit status" 2 "$SCAN_RC"
# Under --json the error is a JSON object on stdout too, never a report.
assert_eq "no Read: stdout is the JSON error object" "error" \
        "$(json_get verdict "$SCAN_JSON")"
assert_true "no Read: ... naming the refusal" \
        grep -qF "not authorized to read topic '$T'" <<<"$SCAN_JSON"
assert_true "no Read: within 20 s" test $((SECONDS - start)) -le 20
assert_eq "no Read: the error line" \
        "eosaudit: not authorized to read topic '$T' (TOPIC_AUTHORIZATION_FAILED): grant Read on it to this principal" \
        "$(echo "$SCAN_ERR" | grep '^eosaudit:')"
assert_true "no Read: the missing DescribeConfigs is named too" \
        grep -q "grant DescribeConfigs on it" <<<"$SCAN_ERR"

log "== no ACL at all"
T="it-98_secured-hidden-$IT_RUN_ID"
create_topic "$T" 1
sscan "$A" -t "$T"
assert_eq "no Describe: scan exit status" 2 "$SCAN_RC"
assert_eq "no Describe: the error line" \
        "eosaudit: not authorized to describe topic '$T' (TOPIC_AUTHORIZATION_FAILED): grant Describe and Read on it to this principal (or the topic does not exist)" \
        "$SCAN_ERR"

log "== Read without DescribeConfigs, and a group without ACL"
T="it-98_secured-nocfg-$IT_RUN_ID"
create_topic "$T" 2
"$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --producer p -n 300 -q >/dev/null ||
        die "cannot fill $T"
props "$IT_TMP/nogroup.properties" eosaudit "$PW_AUDIT" "group.id=eosaudit-98-nogroup"
start=$SECONDS
sscan "$IT_TMP/nogroup.properties" -t "$T"
assert_eq "no DescribeConfigs: scan exit status" 0 "$SCAN_RC"
# An offset commit sent after the group's refusal waited session.timeout.ms
# (45 s) for a coordinator before the consumer could close.
assert_true "no group ACL: the scan exits within 10 s ($((SECONDS - start)) s)" \
        test $((SECONDS - start)) -le 10
assert_true "no group ACL: one warning naming the group" \
        test "$(grep -c "not authorized to use consumer group 'eosaudit-98-nogroup' (GROUP_AUTHORIZATION_FAILED)" <<<"$SCAN_ERR")" = 1
assert_scan records_total 300
assert_true "no DescribeConfigs: one warning naming it" \
        test "$(grep -c "not authorized to describe the configuration of topic '$T' (TOPIC_AUTHORIZATION_FAILED): grant DescribeConfigs on it to this principal; assuming it is not compacted" <<<"$SCAN_ERR")" = 1

# --- bad password, untrusted CA, SCRAM-SHA-256 ---------------------------------
log "== bad password"
props "$IT_TMP/badpw.properties" eosaudit "not-$PW_AUDIT"
start=$SECONDS
sscan "$IT_TMP/badpw.properties" -t "$AUD-x"
assert_eq "bad password: scan exit status" 2 "$SCAN_RC"
assert_true "bad password: within 10 s" test $((SECONDS - start)) -le 10
assert_true "bad password: one line saying so" \
        grep -q "^eosaudit: the brokers refused the credentials (_AUTHENTICATION): .*invalid credentials with SASL mechanism SCRAM-SHA-512.*: check sasl.username, sasl.password and sasl.mechanisms$" <<<"$SCAN_ERR"

log "== untrusted CA"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=another CA" \
        -keyout "$IT_TMP/other.key" -out "$IT_TMP/other.pem" >/dev/null 2>&1 ||
        die "openssl"
props "$IT_TMP/badca.properties" eosaudit "$PW_AUDIT"
sed -i "s|^ssl.ca.location=.*|ssl.ca.location=$IT_TMP/other.pem|" "$IT_TMP/badca.properties"
start=$SECONDS
sscan "$IT_TMP/badca.properties" -t "$AUD-x"
assert_eq "untrusted CA: scan exit status" 2 "$SCAN_RC"
assert_true "untrusted CA: within 10 s" test $((SECONDS - start)) -le 10
assert_true "untrusted CA: one line saying so" \
        grep -q "^eosaudit: the TLS handshake with the brokers failed (_SSL): .*certificate verify failed.*check ssl.ca.location" <<<"$SCAN_ERR"

log "== SCRAM-SHA-256"
props "$IT_TMP/scram256.properties" eosaudit "$PW_AUDIT"
sed -i "s|^sasl.mechanisms=.*|sasl.mechanisms=SCRAM-SHA-256|" "$IT_TMP/scram256.properties"
sscan "$IT_TMP/scram256.properties" -t "$(name audit)"
assert_eq "SCRAM-SHA-256: scan exit status (the anomaly mix)" 1 "$SCAN_RC"
assert_eq "SCRAM-SHA-256 = SCRAM-SHA-512: records" \
        "$(json_get records_total "$SECURE_JSON")" "$(json_get records_total)"
assert_eq "SCRAM-SHA-256 = SCRAM-SHA-512: anomalies" \
        "$(json_get anomalies_total "$SECURE_JSON")" "$(json_get anomalies_total)"

# --- serve: not ready with the reason, ready once granted --------------------
log "== serve without Read, then granted"
T="it-98_secured-noread-srv-$IT_RUN_ID"
create_topic "$T" 2
"$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --producer p -n 200 -q >/dev/null ||
        die "cannot fill $T"
PORT_HTTP=$((20000 + RANDOM % 20000))
URL="http://127.0.0.1:$PORT_HTTP"
bg_start SRV "$EOSAUDIT" serve -b "$SB" -F "$A" -t "$T" --db "$IT_TMP/serve.db" \
        --listen "127.0.0.1:$PORT_HTTP" --log-level debug 2>"$IT_TMP/serve.err"
ready=""
for _ in $(seq 1 50); do
        ready="$(curl -s -w ' %{http_code}' "$URL/readyz")" || true
        [[ "$ready" == *"not authorized"* ]] && break
        sleep 0.2
done
assert_true "serve: /readyz 503 with the reason ($ready)" \
        grep -q "\"error\": *\"not ready: not authorized to read topic '$T' (TOPIC_AUTHORIZATION_FAILED): grant Read on it to this principal\".* 503$" <<<"$ready"
acl --allow-principal User:eosaudit --operation Read --topic "$T"
code=""
for _ in $(seq 1 100); do
        code="$(curl -s -o /dev/null -w '%{http_code}' "$URL/readyz")" || true
        [ "$code" = 200 ] && break
        sleep 0.3
done
assert_eq "serve: ready once Read is granted" 200 "$code"
recs=""
for _ in $(seq 1 30); do
        recs="$(json_get records_total "$(curl -s "$URL/api/v1/summary")" 2>/dev/null)" || true
        [ "$recs" = 200 ] && break
        sleep 0.3
done
assert_eq "serve: audited the topic" 200 "$recs"
{ curl -s "$URL/api/v1/summary"; curl -s "$URL/metrics"; curl -s "$URL/api/v1/partitions"; } >>"$OUT"
kill -TERM "$SRV"
wait_pid "$SRV" 20
assert_eq "serve: exit status after SIGTERM" 0 "$WAIT_RC"
cat "$IT_TMP/serve.err" >>"$OUT"
assert_eq "serve: the refusal logged once" 1 \
        "$(grep -c "error not authorized to read topic '$T'" "$IT_TMP/serve.err")"

# --- secrets -----------------------------------------------------------------
log "== secrets"
rc=0
err="$("$EOSAUDIT" scan -b "$SB" -F "$A" -X "sasl.password=$PW_AUDIT" -t "$AUD-x" 2>&1)" || rc=$?
assert_eq "-X sasl.password: exit status" 2 "$rc"
assert_true "-X sasl.password: refused, value not echoed" \
        eval 'grep -q "sasl.password: secrets are read from files only" <<<"$err" && ! grep -q "$PW_AUDIT" <<<"$err"'
cp "$A" "$IT_TMP/open.properties"
chmod 644 "$IT_TMP/open.properties"
echo "ssl.endpoint.identification.algorithm=none" >>"$IT_TMP/open.properties"
sscan "$IT_TMP/open.properties" -t "$(name audit)" --log-level debug -X debug=conf,security
assert_eq "world-readable -F file: scan exit status" 1 "$SCAN_RC"
assert_true "world-readable -F file: warned" \
        grep -q "every user can read it (mode 0644)" <<<"$SCAN_ERR"
assert_true "host name verification off: warned" \
        grep -q "ssl.endpoint.identification.algorithm=none" <<<"$SCAN_ERR"
"$EOSAUDIT" scan --help >>"$OUT" 2>&1
"$EOSAUDIT" serve --help >>"$OUT" 2>&1
for pw in "$PW_AUDIT" "$PW_PROD"; do
        assert_eq "a password in $(wc -l <"$OUT") lines of output" 0 \
                "$(grep -c -- "$pw" "$OUT")"
done

finish
