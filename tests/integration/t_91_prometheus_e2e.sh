#!/usr/bin/env bash
# End to end with a real Prometheus server: it scrapes `eosaudit serve`
# every second and evaluates deploy/prometheus/alerts.yml (a copy whose
# `for:` durations are cut to 1s by the same sed t_90 checks); after the
# reference producer injects duplicates, EosauditDuplicateRecords must be
# "firing" in Prometheus's /api/v1/alerts within a bounded wait, for this
# topic, with the runbook link, while the gap and down alerts stay quiet.
# Then every PromQL query of the Grafana dashboard must run on that
# Prometheus, and the anomaly panel must show the duplicates.
source "$(dirname "$0")/lib.sh"

command -v prometheus >/dev/null 2>&1 || die "prometheus not found (Debian package prometheus)"
command -v curl >/dev/null 2>&1 || die "curl not found"

ALERT_WAIT=40   # seconds from the duplicates' delivery to "firing"

# free_port: a loopback port nobody listens on right now.
free_port() {
        python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

T="$(name main)"
DB="$IT_TMP/ledger.db"
create_topic "$T" 2

# Clean records first, so that Prometheus sees the duplicate counter at 0
# before it rises (increase() needs two samples).
produce -t "$T" --producer "$(name clean)" -n 200 --seed 1
[ "$PROD_RC" = 0 ] || die "produce (clean) failed"
CLEAN="$(json_get delivered "$PROD_JSON")"

bg_start SERVE "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --db "$DB" \
        --commit-interval-ms 200 --listen 127.0.0.1:0 >"$IT_TMP/serve.log" 2>&1
URL=
for ((i = 0; i < 300; i++)); do
        URL="$(sed -n 's|.*http: listening on \(http://[^ ]*\)$|\1|p' "$IT_TMP/serve.log")"
        [ -n "$URL" ] && break
        kill -0 "$SERVE" 2>/dev/null || break
        sleep 0.1
done
[ -n "$URL" ] || { cat "$IT_TMP/serve.log"; die "serve printed no URL"; }
TARGET="${URL#http://}"
TARGET="${TARGET%/}"
log "serve pid $SERVE at $URL"

DUP_SAMPLE="eosaudit_anomalous_records_total{topic=\"$T\",kind=\"duplicate\"}"
for ((i = 0; i < 300; i++)); do
        M="$(curl -sf "${URL}metrics")" || M=
        grep -q "^eosaudit_records_total{topic=\"$T\"} $CLEAN\$" <<<"$M" &&
                grep -q "^$DUP_SAMPLE 0\$" <<<"$M" && break
        sleep 0.1
done
assert_true "serve audited the clean records" \
        grep -q "^eosaudit_records_total{topic=\"$T\"} $CLEAN\$" <<<"$M"

# Prometheus: a 1 s scrape of serve, 1 s rule evaluation, fast rules.
sed -E 's/^([[:space:]]*for:[[:space:]]*).*/\11s/' \
        "$ROOT/deploy/prometheus/alerts.yml" >"$IT_TMP/alerts-fast.yml"
PPORT="$(free_port)"
PROM="http://127.0.0.1:$PPORT"
cat >"$IT_TMP/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $IT_TMP/alerts-fast.yml
scrape_configs:
  - job_name: eosaudit
    static_configs:
      - targets: ["$TARGET"]
YAML
mkdir -p "$IT_TMP/tsdb"
bg_start PROMPID prometheus --config.file="$IT_TMP/prometheus.yml" \
        --storage.tsdb.path="$IT_TMP/tsdb" \
        --web.listen-address="127.0.0.1:$PPORT" \
        --log.level=warn >"$IT_TMP/prometheus.log" 2>&1
for ((i = 0; i < 300; i++)); do
        curl -sf "$PROM/-/ready" >/dev/null 2>&1 && break
        kill -0 "$PROMPID" 2>/dev/null || break
        sleep 0.1
done
curl -sf "$PROM/-/ready" >/dev/null 2>&1 || {
        cat "$IT_TMP/prometheus.log"
        die "prometheus did not become ready"
}
log "prometheus pid $PROMPID at $PROM"

# prom_query EXPR: the JSON of an instant query.
prom_query() {
        curl -sf --get "$PROM/api/v1/query" --data-urlencode "query=$1"
}

# Two samples of the duplicate counter at 0, scraped by Prometheus.
for ((i = 0; i < 200; i++)); do
        Q="$(prom_query "count_over_time(${DUP_SAMPLE%\}},job=\"eosaudit\"}[1m])")" || Q=
        n="$(python3 -c 'import json, sys
r = json.loads(sys.argv[1])["data"]["result"]
print(r[0]["value"][1] if r else 0)' "$Q" 2>/dev/null)" || n=0
        [ "${n:-0}" -ge 2 ] 2>/dev/null && break
        sleep 0.1
done
assert_true "prometheus scraped the counter at 0 twice" test "${n:-0}" -ge 2

# The duplicates.
produce -t "$T" --producer "$(name dup)" -n 300 --inject-duplicates 0.05 --seed 11
[ "$PROD_RC" = 0 ] || die "produce (duplicates) failed"
DUPS="$(json_get duplicates_injected "$PROD_JSON")"
log "duplicates injected: $DUPS"
[ "$DUPS" -gt 0 ] || die "the producer injected no duplicate"
start=$SECONDS

# alert_state NAME: the state of alert NAME for this topic ("firing",
# "pending", or "none"), and its runbook_url on a second line.
alert_state() {
        local a
        a="$(curl -sf "$PROM/api/v1/alerts")" || { echo none; return; }
        python3 -c 'import json, sys
alerts = json.loads(sys.argv[1])["data"]["alerts"]
hit = [a for a in alerts if a["labels"].get("alertname") == sys.argv[2]
       and a["labels"].get("topic", sys.argv[3]) == sys.argv[3]]
states = [a["state"] for a in hit]
print("firing" if "firing" in states else states[0] if states else "none")
print(hit[0]["annotations"].get("runbook_url", "") if hit else "")' "$a" "$1" "$T"
}

state=none
while ((SECONDS - start < ALERT_WAIT)); do
        state="$(alert_state EosauditDuplicateRecords | head -n 1)"
        [ "$state" = firing ] && break
        sleep 0.5
done
log "EosauditDuplicateRecords $state after $((SECONDS - start)) s"
assert_eq "EosauditDuplicateRecords within ${ALERT_WAIT}s" firing "$state"
assert_eq "its runbook_url" \
        "https://github.com/eosaudit/eosaudit/blob/main/docs/RUNBOOK.md#eosauditduplicaterecords" \
        "$(alert_state EosauditDuplicateRecords | sed -n 2p)"
assert_eq "EosauditGapConfirmed (no gap injected)" none \
        "$(alert_state EosauditGapConfirmed | head -n 1)"
assert_eq "EosauditDown" none "$(alert_state EosauditDown | head -n 1)"
assert_eq "EosauditFencedWrites" none "$(alert_state EosauditFencedWrites | head -n 1)"

# What Prometheus stored agrees with the producer.
Q="$(prom_query "$DUP_SAMPLE")" || Q='{}'
assert_eq "duplicates in Prometheus" "$DUPS" "$(python3 -c 'import json, sys
r = json.loads(sys.argv[1])["data"]["result"]
print(r[0]["value"][1] if r else "none")' "$Q" 2>/dev/null)"

# Every query of the dashboard runs here ($job, $instance, $topic and
# $__rate_interval filled in); the anomaly panel shows the duplicates.
dash="$(python3 - "$ROOT/deploy/grafana/eosaudit.json" "$PROM" "$T" <<'PYEOF'
import json, sys, urllib.parse, urllib.request
d = json.load(open(sys.argv[1]))
prom, topic = sys.argv[2], sys.argv[3]
def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))
bad = 0
for p in panels(d["panels"]):
    for t in p.get("targets", []):
        q = (t["expr"].replace("$job", "eosaudit").replace("$instance", ".*")
             .replace("$topic", topic).replace("$__rate_interval", "1m"))
        url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
        try:
            r = json.load(urllib.request.urlopen(url, timeout=10))
        except Exception as e:
            r = {"status": "error", "error": str(e)}
        ok = r.get("status") == "success"
        n = len(r["data"]["result"]) if ok else 0
        print(("ok   " if ok else "FAIL ") + "%s %s: %d series%s" % (
            p["title"], t["refId"], n, "" if ok else " " + r.get("error", "")))
        bad += not ok
        if p["title"] == "New anomalous records by kind":
            got = {s["metric"].get("kind"): float(s["value"][1])
                   for s in r["data"]["result"]}
            ok = got.get("duplicate", 0) > 0
            print(("ok   " if ok else "FAIL ") + "the anomaly panel shows duplicates: %r" % got)
            bad += not ok
sys.exit(1 if bad else 0)
PYEOF
)"
echo "$dash"
IT_CHECKS=$((IT_CHECKS + $(grep -c '^ok ' <<<"$dash") + $(grep -c '^FAIL ' <<<"$dash")))
IT_FAILED=$((IT_FAILED + $(grep -c '^FAIL ' <<<"$dash")))

kill -TERM "$SERVE"
wait_pid "$SERVE" 15
assert_eq "serve exit status" 0 "$WAIT_RC"
kill -TERM "$PROMPID"
wait_pid "$PROMPID" 15
assert_eq "prometheus exit status" 0 "$WAIT_RC"

finish
