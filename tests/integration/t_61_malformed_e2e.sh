#!/usr/bin/env bash
# Malformed headers of every kind, end to end on the real broker: missing,
# repeated, empty, null, NUL bytes, 1 MiB values, non-UTF-8 producer
# names, overflowing numbers.  A small librdkafka producer (hdrprod.c,
# compiled here) writes them, because kcat can send neither NUL bytes nor
# 1 MiB values.  Each record below carries the verdict schema/HEADERS.md
# gives it; the audit must count exactly those, keep going past them (a
# tail of valid records after the last bad one must be audited), and
# neither crash nor trip ASan/UBSan: the same checks run with
# build-san/eosaudit when it exists (make SANITIZE=address,undefined
# build-san/eosaudit), as a scan and as serve answering the API.
source "$(dirname "$0")/lib.sh"

T="$(name main)"
# 1 MiB header values make records over the broker's default 1 MiB limit.
create_topic "$T" 2 max.message.bytes=5000000
HDRPROD="$BUILD/hdrprod"
cc -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror -o "$HDRPROD" \
        "$IT_DIR/hdrprod.c" $(rdkafka_flags) || die "cannot compile hdrprod.c"

SPEC="$IT_TMP/records"
: >"$SPEC"
N_OK=0 N_MALFORMED=0 N_UNTRACKED=0
declare -A NEXT # next seq of each (partition, producer) stream
PRODUCERS=()    # distinct valid producer names (percent-encoded)
PAIRS=0

# put VERDICT PART HEADER...: one record (hdrprod syntax) and its verdict.
put() {
        local v="$1" p="$2"
        shift 2
        echo "$p $*" >>"$SPEC"
        case "$v" in
        ok) N_OK=$((N_OK + 1)) ;;
        malformed) N_MALFORMED=$((N_MALFORMED + 1)) ;;
        untracked) N_UNTRACKED=$((N_UNTRACKED + 1)) ;;
        *) die "unknown verdict $v" ;;
        esac
}

# seq PART PRODUCER: the next seq of that stream (what an ok record
# carries).  Both partitions are audited from offset 0, so every stream
# starts at seq 0.
seq_of() { echo "${NEXT[$1/$2]:-0}"; }

# ok PART PRODUCER [HEADER...]: the stream's next record, plus HEADERs
# (which must leave it tracked).
ok() {
        local p="$1" pr="$2" s
        shift 2
        s="$(seq_of "$p" "$pr")"
        if [ "$s" = 0 ]; then
                PAIRS=$((PAIRS + 1))
                [[ " ${PRODUCERS[*]-} " == *" $pr "* ]] || PRODUCERS+=("$pr")
        fi
        put ok "$p" "eos.producer=$pr" eos.epoch=0 "eos.seq=$s" "$@"
        NEXT[$p/$pr]=$((s + 1))
}

# The cases, on both partitions (each its own producer h0, h1).
cases() {
        local p="$1" h="h$1" s i
        ok "$p" "$h"
        # Missing one of the three.
        s="$(seq_of "$p" "$h")"
        put malformed "$p" eos.epoch=0 "eos.seq=$s"
        put malformed "$p" "eos.producer=$h" "eos.seq=$s"
        put malformed "$p" "eos.producer=$h" eos.epoch=0
        ok "$p" "$h"
        # Repeated: the last one counts, valid or not.
        s="$(seq_of "$p" "$h")"
        put malformed "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=$s" eos.seq=x
        put malformed "$p" "eos.producer=$h" eos.producer= eos.epoch=0 "eos.seq=$s"
        put malformed "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=$s" eos.epoch=1x
        # ok stamps eos.seq=$s, then x replaces it, then $s again: valid.
        ok "$p" "$h" eos.seq=x "eos.seq=$s"
        local many=()
        for ((i = 0; i < 200; i++)); do many+=(eos.epoch=0); done
        ok "$p" "$h" "${many[@]}"
        # Empty values.
        s="$(seq_of "$p" "$h")"
        put malformed "$p" eos.producer= eos.epoch=0 "eos.seq=$s"
        put malformed "$p" "eos.producer=$h" eos.epoch= "eos.seq=$s"
        put malformed "$p" "eos.producer=$h" eos.epoch=0 eos.seq=
        put malformed "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=$s" eos.msgid=
        put malformed "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=$s" eos.pid=
        # Null values (a Kafka header with no value).
        put malformed "$p" eos.producer eos.epoch=0 "eos.seq=$s"
        put malformed "$p" "eos.producer=$h" eos.epoch "eos.seq=$s"
        put malformed "$p" "eos.producer=$h" eos.epoch=0 eos.seq
        put malformed "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=$s" eos.pid
        put untracked "$p" eos.pid eos.msgid
        # Not ours: no eos.* header, only optional ones, names in the wrong
        # case, near misses.
        put untracked "$p"
        put untracked "$p" eos.pid=7 eos.msgid=m1 other=1
        put untracked "$p" "EOS.PRODUCER=$h" EOS.EPOCH=0 "EOS.SEQ=$s"
        put untracked "$p" "eos.producerx=$h" eos.epochs=0 "eos.seq.=$s" eos.=1
        ok "$p" "$h" "Eos.seq=x" "eos.seqx=x"
        # NUL bytes.
        s="$(seq_of "$p" "$h")"
        put malformed "$p" "eos.producer=$h%00" eos.epoch=0 "eos.seq=$s"
        put malformed "$p" "eos.producer=%00" eos.epoch=0 "eos.seq=$s"
        put malformed "$p" "eos.producer=$h" eos.epoch=0%00 "eos.seq=$s"
        put malformed "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=%00$s"
        put malformed "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=$s" eos.pid=1%00
        ok "$p" "$h" eos.msgid=a%00b # msgid: any bytes
        # 1 MiB values (and a 3 MiB record).
        s="$(seq_of "$p" "$h")"
        put malformed "$p" "eos.producer=*1048576" eos.epoch=0 "eos.seq=$s"
        put malformed "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=*1048576"
        put malformed "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=$s" "eos.msgid=*1048576"
        ok "$p" "$h" "x-big=*1048576"
        ok "$p" "$h" "x-big=*1048576" "x-big2=*1048576" "x-big3=*1048576"
        s="$(seq_of "$p" "$h")"
        put malformed "$p" "eos.producer=*256" eos.epoch=0 "eos.seq=$s"
        ok "$p" "*255" # the longest valid name
        # Non-UTF-8 and hostile producer names are valid: bytes compared.
        ok "$p" "%FF%FE%80"
        ok "$p" "%C3%28"
        ok "$p" "%ED%A0%80"      # an encoded surrogate
        ok "$p" "%27%3B--%0A%22" # '   ;--  newline  "
        ok "$p" "%FF%FE%80"
        # Overflowing and otherwise bad numbers.
        s="$(seq_of "$p" "$h")"
        put malformed "$p" "eos.producer=$h" eos.epoch=2147483648 "eos.seq=$s"
        put malformed "$p" "eos.producer=$h" eos.epoch=0 eos.seq=9223372036854775808
        put malformed "$p" "eos.producer=$h" eos.epoch=0 eos.seq=18446744073709551616
        put malformed "$p" "eos.producer=$h" eos.epoch=0 eos.seq=99999999999999999999999
        put malformed "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=$(printf '%021d' "$s")"
        put malformed "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=$s" eos.pid=9223372036854775808
        put malformed "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=-$s"
        put malformed "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=%2B$s"
        put malformed "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=%20$s"
        put malformed "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=${s}e0"
        put ok "$p" "eos.producer=$h" eos.epoch=0 "eos.seq=$(printf '%020d' "$s")" \
                eos.pid=9223372036854775807
        NEXT[$p/$h]=$((s + 1))
        # A new session at the largest epoch: numbering restarts at 0.
        put ok "$p" "eos.producer=$h" eos.epoch=2147483647 eos.seq=0
        put ok "$p" "eos.producer=$h" eos.epoch=2147483647 eos.seq=1
        # The tail: the partition must keep moving after all of that.
        for ((i = 2; i < 202; i++)); do
                put ok "$p" "eos.producer=$h" eos.epoch=2147483647 "eos.seq=$i"
        done
}
cases 0
cases 1
TOTAL=$((N_OK + N_MALFORMED + N_UNTRACKED))
log "records: $TOTAL ($N_OK ok, $N_MALFORMED malformed, $N_UNTRACKED untracked)"
log "producers: ${#PRODUCERS[@]}, pairs: $PAIRS"

out="$("$HDRPROD" "$BOOTSTRAP" "$T" <"$SPEC" 2>"$IT_TMP/hdrprod.err")" ||
        { cat "$IT_TMP/hdrprod.err"; die "hdrprod failed: $out"; }
log "hdrprod: $out"
assert_eq "records delivered" "delivered $TOTAL failed 0" "$out"

# check_scan LABEL: the counts the contract gives, on $SCAN_JSON.
check_scan() {
        log "--- $1"
        assert_eq "$1: scan exit status (anomalies found)" 1 "$SCAN_RC"
        assert_scan records_total "$TOTAL"
        assert_scan untracked "$N_UNTRACKED"
        assert_scan anomalies.malformed "$N_MALFORMED"
        # The cases run on both partitions, so each valid eos.msgid ("m1",
        # "a\0b") comes twice in the topic: the second copies are
        # redelivered (the invalid ones, empty, null or 1 MiB, are never
        # checked).
        assert_scan anomalies.redelivered 2
        assert_scan ids_checked 4
        assert_scan anomalies_total $((N_MALFORMED + 2))
        assert_scan missing_records 0
        assert_scan open_gaps 0
        assert_scan coverage_gaps 0
        assert_scan producers "${#PRODUCERS[@]}"
        assert_scan pairs "$PAIRS"
        assert_scan partitions 2
}

# san_clean LOG: no sanitizer report in LOG.
san_clean() { ! grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1"; }

scan_json -t "$T" 2>"$IT_TMP/scan.err"
check_scan "build/eosaudit scan"

SAN="$ROOT/build-san/eosaudit"
if [ -x "$SAN" ] && [ "$SAN" != "$EOSAUDIT" ]; then
        EOSAUDIT_SAVED="$EOSAUDIT"
        EOSAUDIT="$SAN"
        scan_json -t "$T" 2>"$IT_TMP/scan-san.err"
        check_scan "build-san/eosaudit scan"
        assert_true "no ASan/UBSan report from the scan" san_clean "$IT_TMP/scan-san.err"
        EOSAUDIT="$EOSAUDIT_SAVED"
        SERVE_BIN="$SAN"
else
        log "no build-san/eosaudit: the sanitizer runs are skipped"
        SERVE_BIN="$EOSAUDIT"
fi

# serve on the same records: the ledger's totals, and the API answers
# about them (non-UTF-8 names, 1 MiB-record offsets) with 200.
DB="$IT_TMP/serve.db"
bg_start SERVE "$SERVE_BIN" serve -b "$BOOTSTRAP" -t "$T" --db "$DB" \
        --listen 127.0.0.1:0 --commit-interval-ms 200 >"$IT_TMP/serve.log" 2>&1
URL=
for ((i = 0; i < 100; i++)); do
        URL="$(grep -oE 'listening on http://[0-9.:]+/' "$IT_TMP/serve.log" | head -n 1)"
        [ -n "$URL" ] && break
        sleep 0.1
done
URL="${URL#listening on }"
[ -n "$URL" ] || { cat "$IT_TMP/serve.log"; die "serve printed no URL"; }
log "serve ($SERVE_BIN) at $URL"
# api PATH: sets API_CODE and API_BODY.
api() {
        API_BODY="$(curl -sS -m 10 -o - -w '\n%{http_code}' "$URL$1")"
        API_CODE="${API_BODY##*$'\n'}"
        API_BODY="${API_BODY%$'\n'*}"
}
for ((i = 0; i < 300; i++)); do
        api "api/v1/summary"
        got="$(json_get records_total "$API_BODY" 2>/dev/null)" || got=
        [ "$got" = "$TOTAL" ] && break
        sleep 0.2
done
assert_eq "serve: records_total" "$TOTAL" "$got"
assert_eq "serve: malformed" "$N_MALFORMED" "$(json_get anomalies.malformed "$API_BODY")"
assert_eq "serve: untracked" "$N_UNTRACKED" "$(json_get untracked "$API_BODY")"
# The partitions' lag comes from the high watermarks the consumer last
# saw, which can trail the records' count by a statistics interval: it
# must reach 0, not be 0 at once (under load, 512 was seen once).
for ((i = 0; i < 100; i++)); do
        api "api/v1/partitions"
        [ "$API_CODE" = 200 ] || break
        lag="$(python3 -c 'import json, sys
print(sum(p["lag"] or 0 for p in json.loads(sys.argv[1])["partitions"]))' "$API_BODY")"
        [ "$lag" = 0 ] && break
        sleep 0.2
done
assert_eq "serve: /api/v1/partitions status" 200 "$API_CODE"
assert_eq "serve: lag after the tail (the partitions kept moving)" 0 "$lag"
api "api/v1/anomalies?kind=malformed&limit=1000"
assert_eq "serve: /api/v1/anomalies?kind=malformed status" 200 "$API_CODE"
n="$(python3 -c 'import json, sys
print(sum(a["count"] for a in json.loads(sys.argv[1])["anomalies"]))' "$API_BODY")"
assert_eq "serve: malformed records in the anomaly events" "$N_MALFORMED" "$n"
api "api/v1/producers?limit=10000"
assert_eq "serve: /api/v1/producers status" 200 "$API_CODE"
hexes="$(python3 -c 'import json, sys
print(" ".join(sorted(p.get("producer_hex", "-") for p in json.loads(sys.argv[1])["producers"])))' "$API_BODY")"
# The three names that are not UTF-8 come with their bytes in hex.
assert_eq "serve: producer_hex of the non-UTF-8 names" \
        "- - - - - - c328 c328 eda080 eda080 fffe80 fffe80" "$hexes"
api "metrics"
assert_eq "serve: /metrics status" 200 "$API_CODE"
kill -TERM "$SERVE"
wait_pid "$SERVE" 30
assert_eq "serve: exit status after SIGTERM" 0 "$WAIT_RC"
assert_true "serve: no ASan/UBSan report" san_clean "$IT_TMP/serve.log"

finish
