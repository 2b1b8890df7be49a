#!/usr/bin/env bash
# The Java interceptor in a Kafka Connect source connector: Kafka's own
# FileStreamSource in a standalone Connect worker (jars from Maven
# Central, tests/connect/pom.xml), the interceptor set on the connector's
# producer alone through producer.override.interceptor.classes (the
# worker allows it: connector.client.config.override.policy=All).  The
# records are unkeyed and go through the default partitioner over 4
# partitions.  The oracle (scope_oracle.py over kcat -J) checks:
#  - every line the connector read is one stamped record, in one dense
#    stream named after the connector's producer (its client.id);
#  - the worker stopped and started again resumes where it was (Connect's
#    stored offsets) with a new, larger epoch: two dense streams, nothing
#    missing, nothing twice.
# it-timeout: 480
source "$(dirname "$0")/lib.sh"
source "$IT_DIR/interceptor_lib.sh"

P=4
T="$(name src)"
create_topic "$T" "$P"
connect_fetch

IN="$IT_TMP/input.txt"
: >"$IN"
cat >"$IT_TMP/worker.properties" <<PROPS
bootstrap.servers=$BOOTSTRAP
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.storage.file.filename=$IT_TMP/connect.offsets
offset.flush.interval.ms=500
listeners=http://127.0.0.1:0
plugin.discovery=only_scan
connector.client.config.override.policy=All
PROPS
cat >"$IT_TMP/source.properties" <<PROPS
name=$(name file)
connector.class=org.apache.kafka.connect.file.FileStreamSourceConnector
tasks.max=1
file=$IN
topic=$T
producer.override.interceptor.classes=$ICPT_CLASS
PROPS

# lines FROM TO: lines FROM..TO of 200 bytes each (so that the sticky
# partitioner fills batches, and changes partitions, often) appended to IN.
lines() {
        local i pad
        pad="$(printf '%0180d' 0)"
        for ((i = $1; i <= $2; i++)); do printf 'line %08d %s\n' "$i" "$pad"; done >>"$IN"
}

# worker LOG: starts the worker; stop_worker stops it (SIGTERM: Connect
# stops the task and stores its offsets).
worker() {
        bg_start WORKER connect_standalone "$IT_TMP/worker.properties" \
                "$IT_TMP/source.properties" >>"$IT_TMP/$1" 2>&1
}
stop_worker() {
        local jpid
        jpid="$(jvm_of "$WORKER")" || die "no JVM under the worker's pid $WORKER"
        kill -TERM "$jpid"
        wait_pid "$WORKER" 60
        assert_eq "the worker stopped on SIGTERM" 0 "$((WAIT_RC == 124))"
}

lines 0 1999
worker worker1.log
wait_records "$T" 2000 "the connector"
lines 2000 2999
wait_records "$T" 3000 "the connector"
stop_worker
scope_oracle "$T"
assert_stamps "FileStreamSource, first worker" 3000 1
assert_oracle partitions "$P"
assert_oracle dense 1
assert_oracle extra 0
first="$EPOCHS"
assert_true "the stream is named after the connector's producer ($first)" \
        grep -q "^connector-producer-$(name file)-0:" <<<"$first"
assert_true "the interceptor said what it stamps as" \
        grep -q "eosaudit-interceptor: stamping as eos.producer=connector-producer-" \
        "$IT_TMP/worker1.log"
assert_scope_scan "FileStreamSource, first worker" "$T"

lines 3000 3499
worker worker2.log
wait_records "$T" 3500 "the connector"
stop_worker
scope_oracle "$T"
assert_stamps "FileStreamSource, restarted worker" 3500 2
assert_oracle dense 1
assert_oracle extra 0
assert_oracle missing 0
assert_oracle fenced 0
assert_epoch_grew "the worker restarted" "$first" "$EPOCHS"
assert_scope_scan "FileStreamSource, restarted worker" "$T"

finish
