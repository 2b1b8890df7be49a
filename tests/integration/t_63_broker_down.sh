#!/usr/bin/env bash
# The broker down for 30 s under eosaudit serve, with a backlog serve knows
# of but has not audited yet:
#  1. serve audits N0 records and is caught up (lag 0, /readyz 200);
#  2. serve is frozen (SIGSTOP) while a second producer writes B records,
#     thawed until its lag gauge shows them (it has fetched the new high
#     watermarks), frozen again, the broker is stopped
#     (deploy/kafka/kafka.sh down), and serve is thawed: it can read what
#     it had fetched and no more, so its lag stays up through the outage
#     (B is far more than librdkafka prefetches);
#  3. for 30 s, every second: /metrics and /readyz answer within 1 s,
#     /readyz says 503 "not ready: no broker is up", brokers_up is 0, the
#     lag is above 0;
#  4. the broker comes back (kafka.sh up): serve catches up by itself and
#     its ledger holds exactly N0 + B records, no duplicate, no gap, as the
#     producers counted; /readyz is 200 again and the lag 0; a scan of the
#     ledger agrees.
source "$(dirname "$0")/lib.sh"

N0=20000
B="${IT_BROKER_DOWN_RECORDS:-1500000}"
OUTAGE=30
T="$(name main)"
DB="$IT_TMP/ledger.db"
create_topic "$T" 3
# librdkafka backs off reconnecting up to 10 s by default.
FAST=(-X reconnect.backoff.ms=100 -X reconnect.backoff.max.ms=500)

SERVE=
test_cleanup() {
        [ -n "$SERVE" ] && kill -CONT "$SERVE" 2>/dev/null
        broker_up || "$KAFKA_SH" up >/dev/null 2>&1 ||
                echo "ERROR: could not restart the broker"
}

produce -t "$T" --producer "$(name p0)" -n "$N0"
assert_prod delivered "$N0"

bg_start SERVE "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --db "$DB" \
        --listen 127.0.0.1:0 --commit-interval-ms 200 "${FAST[@]}" \
        >"$IT_TMP/serve.log" 2>&1
URL=
for ((i = 0; i < 100; i++)); do
        URL="$(grep -oE 'listening on http://127.0.0.1:[0-9]+/' "$IT_TMP/serve.log" | head -n 1)"
        [ -n "$URL" ] && break
        sleep 0.1
done
URL="${URL#listening on }"
[ -n "$URL" ] || { cat "$IT_TMP/serve.log"; die "serve printed no URL"; }
log "serve at $URL"

# sample: one GET each of /metrics and /readyz.  Sets M_CODE, M_MS, LAG
# (sum over the topic's partitions, -1 if none), UP (brokers_up), R_CODE,
# R_MS, R_ERR (the "error" of /readyz).
sample() {
        local out
        out="$(python3 - "$URL" "$T" <<'EOF'
import json, sys, time, urllib.error, urllib.request
url, topic = sys.argv[1], sys.argv[2]
def get(path):
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(url + path, timeout=5) as r:
            code, body = r.status, r.read()
    except urllib.error.HTTPError as e:
        code, body = e.code, e.read()
    except Exception:
        code, body = 0, b""
    return code, int((time.monotonic() - t0) * 1000), body.decode("utf-8", "replace")
mc, mms, m = get("metrics")
lag, up = -1, -1
for line in m.splitlines():
    if line.startswith("eosaudit_consumer_lag_records{") and ('topic="%s"' % topic) in line:
        lag = max(lag, 0) + int(float(line.rsplit(" ", 1)[1]))
    elif line.startswith("eosaudit_brokers_up "):
        up = int(float(line.split()[1]))
rc, rms, r = get("readyz")
try:
    err = json.loads(r).get("error", "-")
except ValueError:
    err = "?"
print(mc, mms, lag, up, rc, rms, err.replace(" ", "_"))
EOF
)"
        read -r M_CODE M_MS LAG UP R_CODE R_MS R_ERR <<<"$out"
}

# ledger_sum COLUMN: SUM(COLUMN) over the topic's partitions.
ledger_sum() {
        python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=5)
r = db.execute("SELECT COALESCE(SUM(%s), 0) FROM partitions WHERE topic = ?"
               % sys.argv[2], (sys.argv[3],)).fetchone()
print(r[0])' "$DB" "$1" "$T" 2>/dev/null || echo -1
}

# 1. Caught up.
for ((i = 0; i < 300; i++)); do
        [ "$(ledger_sum records)" = "$N0" ] && break
        sleep 0.1
done
assert_eq "before: records in the ledger" "$N0" "$(ledger_sum records)"
for ((i = 0; i < 30; i++)); do
        sample
        # brokers_up comes with librdkafka's statistics, every
        # statistics.interval.ms: a fast catch-up can come before the first.
        [ "$LAG" = 0 ] && [ "$R_CODE" = 200 ] && [ "$UP" = 1 ] && break
        sleep 0.2
done
log "before: metrics $M_CODE, lag $LAG, brokers_up $UP, readyz $R_CODE"
assert_eq "before: lag" 0 "$LAG"
assert_eq "before: /readyz" 200 "$R_CODE"
assert_eq "before: brokers_up (one broker)" 1 "$UP"

# 2. A backlog serve has seen the end of but not read.
kill -STOP "$SERVE"
produce -t "$T" --producer "$(name p1)" -n "$B"
assert_prod delivered "$B"
kill -CONT "$SERVE"
LAG_SEEN=0
for ((i = 0; i < 200; i++)); do
        sample
        [ "$LAG" -gt 0 ] 2>/dev/null && { LAG_SEEN="$LAG"; break; }
        sleep 0.02
done
kill -STOP "$SERVE"
log "serve frozen with a lag of $LAG_SEEN records"
assert_true "serve saw the backlog's high watermarks (lag $LAG_SEEN > 0)" \
        test "$LAG_SEEN" -gt 0
"$KAFKA_SH" down || die "cannot stop the broker"
kill -CONT "$SERVE"
log "broker down, serve running"

# 3. The outage.
M_SLOW=0 R_SLOW=0 M_BAD=0 READY_503=0 NO_BROKER=0 UP0=0 LAG_POS=0 ALIVE=1
LAG_MIN=-1 LAG_MAX=-1
start=$SECONDS
for ((s = 0; s < OUTAGE; s++)); do
        t0=$SECONDS
        sample
        kill -0 "$SERVE" 2>/dev/null || ALIVE=0
        echo "#   t=$((SECONDS - start))s metrics $M_CODE ${M_MS}ms lag $LAG up $UP readyz $R_CODE ${R_MS}ms $R_ERR"
        [ "$M_CODE" = 200 ] || M_BAD=$((M_BAD + 1))
        [ "$M_MS" -lt 1000 ] || M_SLOW=$((M_SLOW + 1))
        [ "$R_MS" -lt 1000 ] || R_SLOW=$((R_SLOW + 1))
        # The first seconds may still show the broker up: librdkafka
        # reports every second, so only s >= 5 count below.
        if [ "$s" -ge 5 ]; then
                [ "$R_CODE" = 503 ] && READY_503=$((READY_503 + 1))
                [ "$R_ERR" = "not_ready:_no_broker_is_up" ] && NO_BROKER=$((NO_BROKER + 1))
                [ "$UP" = 0 ] && UP0=$((UP0 + 1))
                if [ "$LAG" -gt 0 ] 2>/dev/null; then
                        LAG_POS=$((LAG_POS + 1))
                        [ "$LAG_MIN" -lt 0 ] || [ "$LAG" -lt "$LAG_MIN" ] && LAG_MIN="$LAG"
                        [ "$LAG" -gt "$LAG_MAX" ] && LAG_MAX="$LAG"
                fi
        fi
        while [ "$SECONDS" = "$t0" ]; do sleep 0.1; done
done
n=$((OUTAGE - 5))
log "outage: lag $LAG_MIN..$LAG_MAX over the last $n samples"
assert_eq "outage: serve stayed up" 1 "$ALIVE"
assert_eq "outage: /metrics not 200" 0 "$M_BAD"
assert_eq "outage: /metrics slower than 1 s" 0 "$M_SLOW"
assert_eq "outage: /readyz slower than 1 s" 0 "$R_SLOW"
assert_eq "outage: /readyz 503 (of $n)" "$n" "$READY_503"
assert_eq "outage: /readyz 'not ready: no broker is up' (of $n)" "$n" "$NO_BROKER"
assert_eq "outage: brokers_up 0 (of $n)" "$n" "$UP0"
assert_eq "outage: lag above 0 (of $n)" "$n" "$LAG_POS"
# What serve had fetched before the broker went, it audited meanwhile.
assert_true "outage: the lag did not rise past what was produced" \
        test "$LAG_MAX" -le "$B"

# 4. Back up: catch up, exactly.
"$KAFKA_SH" up || die "cannot start the broker again"
log "broker up again after $((SECONDS - start)) s"
TOTAL=$((N0 + B))
t_up=$SECONDS
for ((i = 0; i < 1200; i++)); do
        [ "$(ledger_sum records)" = "$TOTAL" ] && break
        sleep 0.1
done
log "caught up $((SECONDS - t_up)) s after the broker came back"
assert_eq "after: records in the ledger" "$TOTAL" "$(ledger_sum records)"
for col in duplicate gap out_of_order fenced malformed missing untracked; do
        assert_eq "after: $col in the ledger" 0 "$(ledger_sum "$col")"
done
for ((i = 0; i < 50; i++)); do
        sample
        [ "$LAG" = 0 ] && [ "$R_CODE" = 200 ] && break
        sleep 0.2
done
log "after: metrics $M_CODE, lag $LAG, brokers_up $UP, readyz $R_CODE"
assert_eq "after: lag" 0 "$LAG"
assert_eq "after: /readyz" 200 "$R_CODE"
assert_eq "after: brokers_up (one broker)" 1 "$UP"

kill -TERM "$SERVE"
wait_pid "$SERVE" 30
assert_eq "serve exit status after SIGTERM" 0 "$WAIT_RC"
scan_json -t "$T" --db "$DB"
assert_clean_scan "$TOTAL"
assert_scan producers 2
assert_scan pairs 6

finish
