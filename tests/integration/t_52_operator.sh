#!/usr/bin/env bash
# What an operator sees on the first try (issue 20):
#  1. an unreachable broker: one line naming the cause (refused, or a name
#     that does not resolve), no raw librdkafka lines, a JSON error object
#     on stdout under --json, within a few seconds;
#  2. a topic written by kcat without the eos.* headers, and an empty
#     topic: verdict "not audited", exit status 3, a warning - never
#     "clean"; a topic mostly untracked says so;
#  3. scan --db run again: what is new since the previous run beside the
#     totals (nothing, then the new records), the verdict and
#     anomalies_total in the JSON;
#  4. the evidence: the newest anomalies of every kind, each with a kcat
#     command that, pasted, fetches exactly the records in question;
#  5. --listen :PORT is accepted; -h works on every command.
source "$(dirname "$0")/lib.sh"

for c in scan serve produce demo config-help version; do
        assert_true "eosaudit $c -h: usage on stdout, status 0" \
                bash -c "'$EOSAUDIT' $c -h | grep -q ."
done
assert_true "eosaudit -h names redelivered and the first command" \
        bash -c "'$EOSAUDIT' -h | grep -q redelivered &&
                 '$EOSAUDIT' -h | grep -q 'eosaudit scan -b BROKER:9092 -t TOPIC'"

# --- 1. unreachable brokers -----------------------------------------------
for case in "127.0.0.1:1|Connection refused" \
        "nosuch.invalid:9092|Failed to resolve 'nosuch.invalid:9092'"; do
        b="${case%%|*}" cause="${case#*|}"
        start=$SECONDS
        rc=0
        "$EOSAUDIT" scan -b "$b" -t orders --json --log-level error \
                >"$IT_TMP/down.out" 2>"$IT_TMP/down.err" || rc=$?
        took=$((SECONDS - start))
        log "scan -b $b: exit $rc after $took s"
        cat "$IT_TMP/down.out" "$IT_TMP/down.err"
        assert_eq "scan -b $b: exit status" 2 "$rc"
        assert_true "... within 5 s ($took s)" test "$took" -le 5
        assert_eq "... one line on stderr with --log-level error" 1 \
                "$(wc -l <"$IT_TMP/down.err")"
        assert_true "... naming the cause: $cause" \
                grep -q "^eosaudit: cannot reach brokers '$b': .*$cause" \
                "$IT_TMP/down.err"
        assert_eq "... no raw librdkafka line" 0 \
                "$(grep -c '^%[0-9]|' "$IT_TMP/down.err")"
        assert_eq "... a JSON error object on stdout" "error" \
                "$(json_get verdict "$(cat "$IT_TMP/down.out")")"
        assert_true "... whose error names the cause" \
                grep -qF "$cause" "$IT_TMP/down.out"
done
# Without --log-level error librdkafka's lines go through our logger.
"$EOSAUDIT" scan -b 127.0.0.1:1 -t orders 2>"$IT_TMP/down.err" >/dev/null
assert_eq "default log level: librdkafka's lines in our format" 0 \
        "$(grep -vc -e '^eosaudit: ' -e '^[0-9T:.-]*Z warn kafka ' \
                "$IT_TMP/down.err")"

# --- 2. nothing audited ---------------------------------------------------
T="$(name untracked)"
create_topic "$T" 2
seq 1 500 | kcat -P -b "$BOOTSTRAP" -t "$T" || die "kcat failed"
scan_json -t "$T"
assert_eq "kcat-written topic: exit status (not audited)" 3 "$SCAN_RC"
assert_scan verdict not_audited
assert_scan records_total 500
assert_scan untracked 500
assert_scan topics.0.verdict not_audited
rc=0
"$EOSAUDIT" scan -b "$BOOTSTRAP" -t "$T" --no-progress \
        >"$IT_TMP/untracked.txt" 2>"$IT_TMP/untracked.err" || rc=$?
cat "$IT_TMP/untracked.txt" "$IT_TMP/untracked.err"
assert_eq "human report: exit status" 3 "$rc"
assert_true "human report: verdict NOT AUDITED" \
        grep -q "^  verdict        NOT AUDITED" "$IT_TMP/untracked.txt"
assert_true "human report: WARNING line for the untracked records" \
        grep -q "^  WARNING        500 of 500 records (100%) carry no eos" \
        "$IT_TMP/untracked.txt"
assert_true "a warning on stderr" \
        grep -q "warn topic '$T' was not audited" "$IT_TMP/untracked.err"
assert_eq "never 'clean'" 0 "$(grep -c 'clean' "$IT_TMP/untracked.txt")"

E="$(name empty)"
create_topic "$E" 1
scan_json -t "$E"
assert_eq "empty topic: exit status (not audited)" 3 "$SCAN_RC"
assert_scan verdict not_audited

# The same untracked records with their ids checked (--dedup-key key
# needs keys; kcat writes none, value-hash works): audited, clean.
scan_json -t "$T" --dedup-key value-hash
assert_eq "--dedup-key value-hash on distinct records: exit status" 0 \
        "$SCAN_RC"
assert_scan verdict clean
assert_scan ids_checked 500

# Mostly untracked: 100 stamped records beside the 500.
produce -t "$T" --producer "$(name p-few)" -n 100
assert_prod delivered 100
scan_json -t "$T"
assert_eq "mostly untracked topic: exit status (clean)" 0 "$SCAN_RC"
assert_scan verdict clean
assert_true "mostly untracked: a warning in the JSON" \
        grep -qF '500 of 600 records (83%) carry no eos.* headers' \
        <<<"$SCAN_JSON"

# --- 3. scan --db again ------------------------------------------------------
D="$(name dups)"
DB="$IT_TMP/ledger.db"
create_topic "$D" 2
produce -t "$D" --producer "$(name p-dup)" -n 4000 --inject-duplicates 0.01 \
        --inject-gaps 0.005 --seed 52
scan_json -t "$D" --db "$DB"
assert_eq "first scan --db: exit status" 1 "$SCAN_RC"
assert_scan verdict anomalies
assert_scan previous_run false
TOTAL="$(json_get anomalies_total)"
RECORDS="$(json_get records_total)"
assert_scan new.anomalies_total "$TOTAL"
assert_scan new.records_total "$RECORDS"
# Every kind found is among the latest anomalies, each with its command.
assert_eq "latest anomalies: every kind found" "duplicate gap" \
        "$(json_get topics.0.latest_anomalies | python3 -c 'import json, sys
print(" ".join(sorted({a["kind"] for a in json.load(sys.stdin)})))')"
FIRST="$SCAN_JSON"

scan_json -t "$D" --db "$DB"
assert_eq "rerun, nothing new: exit status (the ledger's totals)" 1 \
        "$SCAN_RC"
assert_scan previous_run true
assert_scan anomalies_total "$TOTAL"
assert_scan new.records_total 0
assert_scan new.anomalies_total 0
rc=0
"$EOSAUDIT" scan -b "$BOOTSTRAP" -t "$D" --db "$DB" --no-progress -q \
        >"$IT_TMP/rerun.txt" || rc=$?
cat "$IT_TMP/rerun.txt"
assert_true "human rerun: 'since last run nothing new'" \
        grep -q "^  since last run nothing new" "$IT_TMP/rerun.txt"
assert_true "human rerun: the newest of every kind, with kcat commands" \
        grep -q "^        fetch: kcat -C -b $BOOTSTRAP -t $D " \
        "$IT_TMP/rerun.txt"
produce -t "$D" --producer "$(name p-more)" -n 300
scan_json -t "$D" --db "$DB"
assert_scan new.records_total 300
assert_scan new.anomalies_total 0

# --- 4. the kcat commands fetch the records in question ------------------
dup_check() {
        python3 -c 'import json, subprocess, sys
d = json.loads(sys.argv[1])
dups = [a for a in d["topics"][0]["latest_anomalies"] if a["kind"] == "duplicate"]
assert dups, "no duplicate"
a = dups[0]
def fetch(cmd):
    out = subprocess.run(cmd, shell=True, capture_output=True, text=True,
                         timeout=30).stdout
    return [json.loads(l) for l in out.splitlines() if l.strip()]
def seqs(recs):
    r = []
    for m in recs:
        h = m.get("headers") or []
        r.append(dict(zip(h[0::2], h[1::2])).get("eos.seq"))
    return r
got = fetch(a["kcat"])
assert [m["offset"] for m in got][0] == a["offset_lo"], (a, got)
assert len(got) == a["count"], (a, got)
first = fetch(a["kcat_first"])
assert first[0]["offset"] == a["first_offset"], (a, first)
assert seqs(got)[0] == seqs(first)[0] == str(a["seq_lo"]), (seqs(got), seqs(first))
print("ok")' "$1"
}
assert_eq "a duplicate's kcat and kcat_first fetch both copies of its seq" \
        ok "$(dup_check "$FIRST" 2>&1)"

# --- 4b. serve: a zombie makes a few grouped lines, not one per batch ----
Z="$(name zombie)"
create_topic "$Z" 3
produce -t "$Z" --producer "$(name p-z)" -n 6000 --zombie
FENCED="$(json_get zombie_records "$PROD_JSON")"
bg_start SERVE "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$Z" \
        --db "$IT_TMP/z.db" --listen 127.0.0.1:0 >"$IT_TMP/z.log" 2>&1
URL=
for ((i = 0; i < 100; i++)); do
        URL="$(grep -oE 'listening on http://[0-9.:]+/' "$IT_TMP/z.log" | head -n 1)"
        [ -n "$URL" ] && break
        sleep 0.1
done
URL="${URL#listening on }"
got=
for ((i = 0; i < 200; i++)); do
        got="$(json_get anomalies.fenced \
                "$(curl -sS -m 5 "${URL}api/v1/summary")" 2>/dev/null)" || got=
        [ "$got" = "$FENCED" ] && break
        sleep 0.1
done
assert_eq "serve: fenced records" "$FENCED" "$got"
kill -TERM "$SERVE"
wait_pid "$SERVE" 20
grep ' warn fenced ' "$IT_TMP/z.log" | cut -c1-240
lines="$(grep -c ' warn fenced ' "$IT_TMP/z.log")"
log "serve: $lines fenced lines for $FENCED records"
assert_true "serve: at most 2 fenced lines per partition ($lines)" \
        test "$lines" -ge 1 -a "$lines" -le 6
# Each partition's last line counts its whole group: the summary's
# "count N in all", or the first line's count when it was alone.
assert_eq "serve: the groups' counts add up to the fenced records" \
        "$FENCED" "$(grep ' warn fenced ' "$IT_TMP/z.log" | python3 -c '
import re, sys
last = {}
for l in sys.stdin:
    m = re.search(r"\[(\d+)\].*?count (\d+)", l)
    last[m.group(1)] = int(m.group(2))
print(sum(last.values()))')"
assert_true "serve: each first line with its kcat command" \
        grep -q " warn fenced .*; fetch: kcat -C -b $BOOTSTRAP -t $Z -p " \
        "$IT_TMP/z.log"

# --- 5. --listen :PORT ------------------------------------------------------
rc=0
"$EOSAUDIT" scan -b "$BOOTSTRAP" -t "$D" --db "$IT_TMP/l.db" --listen :0 \
        --no-progress -q >/dev/null 2>"$IT_TMP/listen.err" || rc=$?
cat "$IT_TMP/listen.err"
assert_eq "scan --listen :0: exit status" 1 "$rc"

finish
