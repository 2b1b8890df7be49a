#!/usr/bin/env bash
# Real retry duplicates through the Java interceptor, as t_60 does for
# librdkafka.  Kafka's kafka-producer-perf-test, with the interceptor and
# request.timeout.ms=1000, writes unkeyed records over 4 partitions; the
# broker JVM is frozen (SIGSTOP) for 4 s while requests are in flight.
# The client times them out, reconnects and sends the same batches again;
# the frozen broker still has the first copies in its socket buffers and
# appends them when it wakes up (SIGCONT):
#  - enable.idempotence=false: records in the log twice with the same
#    stamps (the interceptor stamped each once, before the partitioner):
#    real duplicates of one topic-scoped stream;
#  - enable.idempotence=true: the broker drops the retries: none.
# The counts come from the oracle that reads the stamps (scope_oracle.py
# over kcat -J); a run without a single duplicate in the non-idempotent
# case fails: it proved nothing.
# it-timeout: 300
source "$(dirname "$0")/lib.sh"
source "$IT_DIR/interceptor_lib.sh"

N=20000 RATE=1000 P=4 # 20 s of producing (a loaded machine counts late); the broker freezes for 4 s
broker_freezable

for idem in false true; do
        log "== enable.idempotence=$idem"
        T="$(name "idem-$idem")"
        create_topic "$T" "$P"
        bg_start PERF perf_test "$T" "$N" "$RATE" enable.idempotence="$idem" \
                acks=all request.timeout.ms=1000 delivery.timeout.ms=120000 \
                reconnect.backoff.max.ms=200 >"$IT_TMP/perf-$idem.log"
        # Freeze once the JVM is writing (it takes seconds to start).
        wait_records "$T" 1000 perf-test
        kill -STOP "$BPID"
        log "broker frozen after $COUNT+ records"
        sleep 4
        kill -CONT "$BPID"
        log "broker running again"
        wait_pid "$PERF" 180
        [ "$WAIT_RC" != 124 ] || die "perf-test still running after 180 s"
        assert_eq "perf-test exit status" 0 "$WAIT_RC"
        log "perf-test: $(grep 'records sent' "$IT_TMP/perf-$idem.log" | tail -n 1)"
        assert_true "perf-test sent $N records" \
                grep -q "^$N records sent" "$IT_TMP/perf-$idem.log"
        # The freeze fell while it was writing: some record waited it out.
        max="$(sed -n "s/^$N records sent.* \([0-9]*\)\.[0-9]* ms max latency.*/\1/p" \
                "$IT_TMP/perf-$idem.log")"
        assert_true "a record waited out the freeze (max latency ${max:-?} ms)" \
                test "${max:-0}" -ge 3000

        scope_oracle "$T"
        assert_oracle other 0
        assert_oracle untracked 0
        assert_oracle streams 1
        assert_oracle partitions "$P"
        assert_oracle distinct "$N"
        assert_oracle missing 0
        assert_oracle fenced 0
        extra="$(kv extra)"
        assert_eq "records = distinct seqs + extra copies" \
                "$((N + extra))" "$(kv records)"
        if [ "$idem" = false ]; then
                assert_true "retries duplicated records ($extra copies)" \
                        test "$extra" -gt 0
        else
                assert_eq "extra copies with idempotence" 0 "$extra"
        fi
        assert_scope_scan "idempotence $idem" "$T"
done

finish
