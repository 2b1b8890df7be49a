#!/usr/bin/env bash
# Time is the records' time: a backlog written eight days ago, audited now,
# gets the verdicts of a live read.  The same record sequence is written
# twice, to two topics, each audited by its own serve: once with timestamps
# of now (live), once with the same timestamps eight days back (a backlog
# after an auditor down for eight days).  Producer P writes seqs 0..49,
# Q seqs 0..9; the audit sits idle for 3 s (ticks run); P writes 50..99
# without 70 (a real loss) and R resends P's message id P-5 (a
# redelivery); then P writes seq 100 six seconds of record time later, past
# the gap grace (--gap-grace-ms 5000), which confirms the gap.
# With the wall clock, the backlog's first tick expired P and Q (idle 8
# days > the 7-day TTL), P's next record then opened a false gap from 0
# (50 missing), and the 1-day id window dropped P-5 before R resent it.
# Both audits must report exactly: 111 records, 1 gap of 1 missing record,
# 1 redelivered, nothing else, 3 pairs, no expiry.  The records carry
# CreateTime set by the producer (tests/integration/hdrprod.c PARTITION@MS);
# no clock is faked.
source "$(dirname "$0")/lib.sh"

HDRPROD="$BUILD/hdrprod"
cc -O1 -o "$HDRPROD" "$IT_DIR/hdrprod.c" $(rdkafka_flags) || die "cannot compile hdrprod.c"
DAY=86400000

# run_case LABEL SHIFT_MS: writes the sequence with timestamps SHIFT_MS in
# the past, audits it with serve, and sets RESULT to the ledger's verdicts,
# "records gap missing duplicate out_of_order fenced redelivered open_gaps
# pairs", and EXPIRED to the expiries serve logged.
run_case() {
        local label="$1" shift_ms="$2" T DB base serve i s out
        T="$(name "$label")"
        DB="$IT_TMP/$label.db"
        # Eight-day-old records must not meet the 7-day default retention.
        create_topic "$T" 1 retention.ms=-1
        bg_start serve "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --db "$DB" \
                --listen off --commit-interval-ms 200 --gap-grace-ms 5000 \
                >"$IT_TMP/$label.log" 2>&1
        base=$(($(date +%s%3N) - shift_ms))
        rec() { # SEQ PRODUCER TS [MSGID]
                echo "0@$3 eos.producer=$2 eos.epoch=0 eos.seq=$1 eos.msgid=${4:-$2-$1}"
        }
        {
                for ((s = 0; s < 50; s++)); do rec $s P $((base + s * 10)); done
                for ((s = 0; s < 10; s++)); do rec $s Q $((base + s * 10 + 5)); done
        } | "$HDRPROD" "$BOOTSTRAP" "$T" >&2 || die "$label: hdrprod failed"
        audited "$DB" "$T" 60 || die "$label: serve did not audit phase 1"
        sleep 3 # idle: the audit ticks
        {
                for ((s = 50; s < 100; s++)); do
                        [ $s = 70 ] || rec $s P $((base + 3000 + (s - 50) * 10))
                done
                rec 0 R $((base + 3600)) P-5
        } | "$HDRPROD" "$BOOTSTRAP" "$T" >&2 || die "$label: hdrprod failed"
        audited "$DB" "$T" 110 || die "$label: serve did not audit phase 2"
        # Live, the last record is written when its time has come.
        while [ "$(date +%s%3N)" -lt $((base + shift_ms + 9000)) ]; do sleep 0.2; done
        rec 100 P $((base + 9000)) | "$HDRPROD" "$BOOTSTRAP" "$T" >&2 ||
                die "$label: hdrprod failed"
        audited "$DB" "$T" 111 || die "$label: serve did not audit phase 3"
        sleep 3 # ticks: the gap's grace has passed in record time
        kill -TERM "$serve"
        wait_pid "$serve" 15
        [ "$WAIT_RC" = 0 ] || die "$label: serve exit status $WAIT_RC"
        out="$(sqlite3 "file:$DB?mode=ro" "SELECT SUM(records), SUM(gap),
                SUM(missing), SUM(duplicate), SUM(out_of_order), SUM(fenced),
                SUM(redelivered), (SELECT COUNT(*) FROM open_gaps),
                (SELECT COUNT(*) FROM pairs) FROM partitions" | tr '|' ' ')"
        RESULT="$out"
        EXPIRED="$(grep -c "idle for longer than the TTL" "$IT_TMP/$label.log")"
        log "$label: $RESULT; expiries logged: $EXPIRED"
}
# audited DB TOPIC N: waits until the ledger counts N records.
audited() {
        local i
        for ((i = 0; i < 300; i++)); do
                [ "$(sqlite3 "file:$1?mode=ro" "SELECT COALESCE(SUM(records), 0)
                        FROM partitions WHERE topic = '$2'" 2>/dev/null)" \
                        -ge "$3" ] 2>/dev/null && return 0
                sleep 0.1
        done
        return 1
}

WANT="111 1 1 0 0 0 1 0 3"
run_case live 0
LIVE="$RESULT"
assert_eq "live: records gap missing dup ooo fenced redelivered open_gaps pairs" "$WANT" "$LIVE"
assert_eq "live: no pair expired" 0 "$EXPIRED"
run_case old $((8 * DAY))
assert_eq "8 days old: the same verdicts as live" "$LIVE" "$RESULT"
assert_eq "8 days old: no pair expired" 0 "$EXPIRED"

finish
