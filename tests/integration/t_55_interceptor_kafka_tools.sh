#!/usr/bin/env bash
# The Java interceptor (build/eosaudit-interceptor.jar) in Kafka's own
# producers, configured by their command lines only: kafka-producer-perf-
# test (ProducerPerformance, unkeyed records) and kafka-console-producer
# (keyed records), both with the client's default partitioner over 4
# partitions.  Each topic is read back by an oracle that counts the stamps
# itself (scope_oracle.py over kcat -J):
#  1. clean runs: every record stamped, one dense stream per run (seqs
#     0..n-1 over all partitions), keys as eos.msgid; a second console run
#     is a new, larger epoch, and its 3 keys sent again are 3 redelivered
#     messages;
#  2. eos.test.skip.every=100: exactly the seqs 99, 199, ... are missing;
#  3. perf-test killed (SIGKILL) and restarted: a new, larger epoch, seqs
#     from 0 again;
#  4. a zombie: a console producer writing on after a newer one with its
#     name started: exactly its late records are fenced.
# it-timeout: 600
source "$(dirname "$0")/lib.sh"
source "$IT_DIR/interceptor_lib.sh"

P=4

# --- 1. clean runs ------------------------------------------------------------
T="$(name clean-perf)"
create_topic "$T" "$P"
out="$(perf_test "$T" 5000 -1 acks=all)" || die "perf-test failed: $out"
log "perf-test: $(tail -n 1 <<<"$out")"
assert_true "perf-test sent 5000 records" grep -q '^5000 records sent' <<<"$out"
scope_oracle "$T"
assert_stamps "perf-test, clean" 5000 1
assert_oracle partitions "$P"
assert_oracle dense 1
assert_oracle extra 0
assert_oracle missing 0
assert_eq "perf-test's producer name is its client.id" \
        perf-producer-client "${EPOCHS%%:*}"
assert_scope_scan "perf-test, clean" "$T"

T="$(name clean-console)"
create_topic "$T" "$P"
seq 0 299 | sed 's/.*/k&:value &/' >"$IT_TMP/keyed.txt"
console_producer "$T" eos.msgid=key <"$IT_TMP/keyed.txt" >"$IT_TMP/console1.log" 2>&1 ||
        die "console producer failed: $(cat "$IT_TMP/console1.log")"
scope_oracle "$T"
assert_stamps "console producer, keyed, clean" 300 1
assert_oracle partitions "$P"
assert_oracle dense 1
assert_oracle msgids 300
assert_oracle redelivered 0
first="$EPOCHS"
assert_eq "console producer's name is its client.id" console-producer "${first%%:*}"
assert_scope_scan "console producer, keyed, clean" "$T"
# The restart: the same name, a new epoch; k5, k6, k7 sent once more.
printf 'k5:again\nk6:again\nk7:again\n' |
        console_producer "$T" eos.msgid=key >"$IT_TMP/console2.log" 2>&1 ||
        die "console producer failed: $(cat "$IT_TMP/console2.log")"
scope_oracle "$T"
assert_stamps "console producer restarted" 303 2
assert_oracle dense 1
assert_oracle redelivered 3
assert_epoch_grew "console producer restarted" "$first" "$EPOCHS"
assert_scope_scan "console producer restarted, 3 keys again" "$T"

# --- 2. the test switch -------------------------------------------------------
T="$(name skip)"
create_topic "$T" "$P"
out="$(perf_test "$T" 3000 -1 eos.test.skip.every=100)" || die "perf-test failed: $out"
scope_oracle "$T" --skip-every 100
assert_stamps "perf-test, every 100th seq skipped" 3000 1
# 3000 seqs used out of 0..3029: 99, 199, ..., 2999 left out.
assert_oracle seqmax 3029
assert_oracle missing 30
assert_oracle skipped 30
assert_oracle extra 0
assert_scope_scan "every 100th seq skipped" "$T"

# --- 3. killed and restarted --------------------------------------------------
T="$(name restart)"
create_topic "$T" "$P"
bg_start PERF perf_test "$T" 1000000 1000 eos.producer="$(name perf)" \
        >"$IT_TMP/perf-killed.log"
wait_records "$T" 2000 perf-test
# kafka.sh runs java as its child: kill the JVM itself, by its pid.
jpid="$(jvm_of "$PERF")" || die "no JVM under perf-test's pid $PERF"
kill -KILL "$jpid"
wait_pid "$PERF" 30
log "perf-test killed after $COUNT+ records"
scope_oracle "$T"
first="$EPOCHS"
assert_scope_scan "perf-test killed" "$T"
out="$(perf_test "$T" 1000 -1 eos.producer="$(name perf)")" || die "perf-test failed: $out"
scope_oracle "$T"
assert_oracle streams 2
assert_oracle extra 0
assert_oracle fenced 0
assert_epoch_grew "perf-test killed and restarted" "$first" "$EPOCHS"
# The new epoch's stream is whole: seqs 0..999, once each.
newest="${EPOCHS##*/}"
got="$(kcat -C -b "$BOOTSTRAP" -t "$T" -o beginning -e -q -f '%h\n' |
        grep -c "eos.epoch=$newest,")"
assert_eq "records of the new epoch" 1000 "$got"
assert_scope_scan "perf-test killed and restarted" "$T"

# --- 4. a zombie --------------------------------------------------------------
T="$(name zombie)"
create_topic "$T" "$P"
# The zombie's input: 50 records, then 20 more once $IT_TMP/go exists.
zombie_input() {
        local i
        seq 0 49 | sed 's/.*/a&:old session &/'
        for ((i = 0; i < 1200; i++)); do
                [ -e "$IT_TMP/go" ] && break
                sleep 0.1
        done
        seq 50 69 | sed 's/.*/a&:zombie &/'
}
zombie_run() { zombie_input | console_producer "$T" eos.producer="$(name z)"; }
bg_start ZOMBIE zombie_run >"$IT_TMP/zombie.log" 2>&1
wait_records "$T" 50 "the first console producer"
seq 0 49 | sed 's/.*/b&:new session &/' |
        console_producer "$T" eos.producer="$(name z)" >"$IT_TMP/new.log" 2>&1 ||
        die "the second console producer failed: $(cat "$IT_TMP/new.log")"
sleep 1
touch "$IT_TMP/go"
wait_pid "$ZOMBIE" 60
assert_eq "the zombie console producer's exit status" 0 "$WAIT_RC"
scope_oracle "$T"
assert_stamps "a zombie writing after the new session began" 120 2
assert_oracle fenced 20
assert_oracle extra 0
assert_oracle missing 0
assert_scope_scan "a zombie" "$T"

finish
