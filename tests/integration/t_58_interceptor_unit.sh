#!/usr/bin/env bash
# The Java interceptor by itself, with no broker: InterceptorCheck.java
# (run from source by java, against build/eosaudit-interceptor.jar and the
# broker's kafka-clients) drives its public API as a producer does and
# prints one "what, want, got" line per check:
#  - 8 threads sending to 2 topics at once: every seq of each topic handed
#    out once, 0..n-1;
#  - the caller's record untouched, old eos.* headers replaced, others kept;
#  - eos.msgid from String, byte[] and Long keys, none from null, empty or
#    other keys, sha256 past 255 bytes, from a header;
#  - never a failed send: before configure, or a record that throws, goes
#    through unstamped, and uses no seq;
#  - eos.test.skip.every=10 leaves out exactly the seqs 9, 19, ...;
#  - the settings configure() refuses (no name, client.id producer-N, bad
#    numbers, both epoch settings, an unusable epoch file);
#  - epochs: the epoch file counts 0, 1, 2; start-time epochs grow within
#    one second too; {host} in the name.
# Kafka's lib comes from deploy/kafka (kafka.sh fetch); the broker is not
# used.
source "$(dirname "$0")/lib.sh"
source "$IT_DIR/interceptor_lib.sh"

"$KAFKA_SH" fetch || die "cannot fetch the Kafka jars"
out="$(java -Xmx256m -XX:TieredStopAtLevel=1 \
        -cp "$ICPT_JAR:$ROOT/deploy/kafka/lib/*" \
        -Dlog4j2.configurationFile="$ROOT/deploy/kafka/log4j2-tools.properties" \
        "$IT_DIR/InterceptorCheck.java" "$IT_TMP" 2>"$IT_TMP/check.err")" ||
        die "InterceptorCheck failed: $(tail -n 30 "$IT_TMP/check.err")"
n=0
while IFS=$'\t' read -r what want got; do
        assert_eq "$what" "$want" "$got"
        n=$((n + 1))
done <<<"$out"
assert_true "InterceptorCheck ran its 43 checks ($n)" test "$n" -eq 43
assert_true "a failed stamp is logged, not thrown" \
        grep -q "sent unstamped (1 so far)" "$IT_TMP/check.err"
assert_true "a transactional producer gets a warning" \
        grep -q "transactional.id=tx-1 is set" "$IT_TMP/check.err"

finish
