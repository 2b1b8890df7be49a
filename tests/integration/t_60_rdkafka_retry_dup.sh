#!/usr/bin/env bash
# Real retry duplicates, not injected ones.  The broker JVM is frozen
# (SIGSTOP) for 3 s while the reference producer (librdkafka) has produce
# requests in flight, with socket.timeout.ms=500: librdkafka times the
# requests out, drops the connection and sends the same batches again on a
# new one.  The frozen broker still has the first copies in its socket
# buffer and appends them when it wakes up (SIGCONT), so
#  - enable.idempotence=false: the records of those batches are in the log
#    twice, with the same eos.* headers: real duplicates;
#  - enable.idempotence=true: the broker recognises the retries by their
#    producer sequence numbers and drops them: no duplicate.
# The producer cannot tell how many copies landed, so the expected counts
# come from an independent reading of the log (log_oracle: kcat -J,
# counted in Python): the audit must match it exactly.  A run without a
# single duplicate in the non-idempotent case fails: it proved nothing.
#
# SIGSTOP rather than tc netem delay on lo: it needs no kernel module, and
# it only touches this broker, not every loopback user of the machine.
source "$(dirname "$0")/lib.sh"

N=3000 RATE=1000 # 3 s of producing; the broker freezes 200 records in, for 3 s
# Never leave the broker frozen, whatever happens below.
broker_freezable

for idem in false true; do
        log "== enable.idempotence=$idem"
        T="$(name "idem-$idem")"
        create_topic "$T" 1
        # Not -q: librdkafka's log shows the request time-outs.
        bg_start PROD "$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --json \
                --producer "$(name p)" -n "$N" --rate "$RATE" \
                -X enable.idempotence="$idem" -X socket.timeout.ms=500 \
                -X reconnect.backoff.max.ms=200 \
                >"$IT_TMP/produce-$idem.json" 2>"$IT_TMP/produce-$idem.err"
        # Freeze once records are landing, not after a fixed second: an
        # idempotent producer first asks for its PID, and a freeze that
        # catches that request times out no ProduceRequest (seen under
        # load: "Timed out InitProducerIdRequest in flight").
        for _ in $(seq 300); do
                end="$(kcat -b "$BOOTSTRAP" -Q -t "$T:0:-1" 2>/dev/null |
                        awk '/offset/ { print $NF }')"
                [ "${end:-0}" -lt 200 ] || break
                sleep 0.1
        done
        [ "${end:-0}" -ge 200 ] || die "the producer wrote ${end:-0} records in 30 s"
        kill -STOP "$BPID"
        log "broker frozen"
        sleep 3
        kill -CONT "$BPID"
        log "broker running again"
        wait_pid "$PROD" 120
        cat "$IT_TMP/produce-$idem.err"
        [ "$WAIT_RC" != 124 ] || die "producer still running after 120 s"
        assert_eq "produce exit status" 0 "$WAIT_RC"
        PROD_JSON="$(cat "$IT_TMP/produce-$idem.json")"
        log "produce: $PROD_JSON"
        assert_prod delivered "$N"
        assert_prod failed 0
        # Without a time-out there is no retry and the run shows nothing.
        assert_true "librdkafka timed out a request in flight" \
                grep -q "Timed out ProduceRequest in flight" \
                "$IT_TMP/produce-$idem.err"

        read -r records distinct extra late missing <<<"$(log_oracle "$T")"
        log "log: $records records, $distinct distinct seqs, $extra extra" \
                "copies, $missing missing, $late late"
        assert_eq "distinct seqs in the log" "$N" "$distinct"
        if [ "$idem" = false ]; then
                assert_true "retries duplicated records ($extra copies)" \
                        test "$extra" -gt 0
        else
                assert_eq "extra copies with idempotence" 0 "$extra"
        fi

        scan_json -t "$T"
        assert_eq "scan exit status" $((extra + late > 0 ? 1 : 0)) "$SCAN_RC"
        assert_scan records_total "$records"
        assert_scan anomalies.duplicate "$extra"
        assert_scan anomalies.out_of_order "$late"
        assert_scan missing_records "$missing"
        assert_scan open_gaps 0
        assert_scan anomalies.fenced 0
        assert_scan anomalies.malformed 0
        assert_scan anomalies_total $((extra + late))
done

finish
