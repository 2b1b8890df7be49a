#!/usr/bin/env bash
# it-timeout: 1200
# it-background: yes (a compose stack of its own: run.sh runs it beside the others)
# (In the background lane it comes before t_95 and builds the image
# itself; the first build bootstraps librdkafka in the image's build
# stage, some 8 minutes on a busy 2-core machine, as in t_95.)
# deploy/docker/compose.yaml, up for real: podman-compose (Debian's 1.0.3,
# which ignores depends_on conditions and profiles, hence the services
# named on the command line) runs the stack with the local stand-ins of
# deploy/docker/podman.sh (Kafka from deploy/kafka's jars, Prometheus from
# Debian's package) and the eosaudit image, as its own compose project
# with free host ports.  Then:
#  - eosaudit answers /healthz on its published port once kafka-init has
#    created the topic (it is restarted until then);
#  - Prometheus scrapes it (target eosaudit:8080 up) and sees the
#    duplicate counter at 0;
#  - a producer inside the eosaudit container injects duplicates, and
#    EosauditDuplicateRecords fires in the stack's Prometheus (scrape and
#    evaluation every 15 s, as shipped) within ALERT_WAIT seconds.
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || die "needs root (Debian's rootful Podman)"
PODMAN_SH="$ROOT/deploy/docker/podman.sh"
PROJECT="eosaudit-it-$(echo "$IT_RUN_ID" | tr -cd '0-9-')"
ALERT_WAIT=90
SERVICES=(kafka kafka-init eosaudit prometheus)

free_port() {
        python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
export EOSAUDIT_PORT PROMETHEUS_PORT
EOSAUDIT_PORT="$(free_port)"
PROMETHEUS_PORT="$(free_port)"
export EOSAUDIT_IMAGE=localhost/eosaudit:it

"$PODMAN_SH" deps >"$IT_TMP/deps.log" 2>&1 ||
        { cat "$IT_TMP/deps.log"; die "cannot install podman"; }
# podman.sh's settings (containers.conf; the storage's, inside a container)
# for the podman commands below.
eval "$("$PODMAN_SH" env)"
start=$SECONDS
# The image t_95 built from this tree in this run, else built here (as a
# rule: this test runs in run.sh's background lane, before t_95 comes up
# in the sequence; t_95's build then finds every layer in the cache).
if image_built_here "$EOSAUDIT_IMAGE"; then
        log "the eosaudit image as t_95 built it in this run"
else
        "$PODMAN_SH" build "$EOSAUDIT_IMAGE" >"$IT_TMP/build.log" 2>&1 ||
                { tail -n 40 "$IT_TMP/build.log"; die "the eosaudit image does not build"; }
fi
"$PODMAN_SH" stand-ins >"$IT_TMP/stand-ins.log" 2>&1 ||
        { tail -n 40 "$IT_TMP/stand-ins.log"; die "the stand-in images do not build"; }
log "images built in $((SECONDS - start)) s"

compose() { "$PODMAN_SH" compose -p "$PROJECT" "$@"; }
test_cleanup() {
        compose down -v >/dev/null 2>&1
        podman network rm -f "${PROJECT}_default" >/dev/null 2>&1
        return 0
}
cname() { echo "${PROJECT}_$1_1"; }

start=$SECONDS
compose up -d "${SERVICES[@]}" >"$IT_TMP/compose.log" 2>&1 ||
        { tail -n 40 "$IT_TMP/compose.log"; die "podman-compose up failed"; }
for s in "${SERVICES[@]}"; do
        assert_true "compose started $s" podman container exists "$(cname "$s")"
done

E="http://127.0.0.1:$EOSAUDIT_PORT"
P="http://127.0.0.1:$PROMETHEUS_PORT"
# /readyz, not /healthz: until kafka-init has made the topic, eosaudit
# answers /healthz and then exits to be restarted, so a 200 from /healthz
# alone can come from an instance about to go.
for ((i = 0; i < 600; i++)); do
        [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$E/readyz")" = 200 ] &&
                curl -s -m 2 "$E/metrics" | grep -q '^eosaudit_anomalous_records_total{topic="orders",kind="duplicate"} 0$' &&
                break
        sleep 0.2
done
log "eosaudit up after $((SECONDS - start)) s"
podman logs "$(cname kafka-init)" 2>&1 | grep -v WARN | tail -n 3 | sed 's/^/  kafka-init: /'
podman logs "$(cname eosaudit)" 2>&1 | tail -n 4 | sed 's/^/  eosaudit: /'
assert_eq "eosaudit /healthz on its published port" 200 \
        "$(curl -s -o /dev/null -m 5 -w '%{http_code}' "$E/healthz")"
assert_true "eosaudit audits topic orders (duplicates at 0)" \
        grep -q '^eosaudit_anomalous_records_total{topic="orders",kind="duplicate"} 0$' \
        <<<"$(curl -s -m 5 "$E/metrics")"

# Prometheus must have scraped the 0 before the duplicates come
# (increase() needs two samples).
q() { curl -s -m 5 --data-urlencode "query=$1" "$P/api/v1/query" |
        python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "none")' 2>/dev/null; }
for ((i = 0; i < 60; i++)); do
        [ "$(q 'eosaudit_anomalous_records_total{job="eosaudit",kind="duplicate",topic="orders"}')" = 0 ] && break
        sleep 1
done
assert_eq "Prometheus: up{job=\"eosaudit\"}" 1 "$(q 'up{job="eosaudit"}')"
assert_eq "Prometheus scraped the duplicate counter at" 0 \
        "$(q 'eosaudit_anomalous_records_total{job="eosaudit",kind="duplicate",topic="orders"}')"

PROD_JSON="$(podman exec "$(cname eosaudit)" eosaudit produce -b kafka:9092 -t orders \
        --producer "$PROJECT" -n 2000 --inject-duplicates 0.01 --seed 9601 --json -q)" ||
        die "produce in the eosaudit container failed"
log "producer: $PROD_JSON"
DUPS="$(json_get duplicates_injected "$PROD_JSON")"
[ "$DUPS" -gt 0 ] || die "the producer injected no duplicate"

alerts() { curl -s -m 5 "$P/api/v1/alerts" | python3 -c 'import json, sys
for a in json.load(sys.stdin)["data"]["alerts"]:
    print(a["labels"]["alertname"], a["labels"].get("topic", "-"), a["state"])'; }
start=$SECONDS
while ((SECONDS - start < ALERT_WAIT)); do
        alerts | grep -q '^EosauditDuplicateRecords orders firing$' && break
        sleep 2
done
log "alerts after $((SECONDS - start)) s:"
alerts | sed 's/^/  /'
assert_true "EosauditDuplicateRecords fires for orders within ${ALERT_WAIT}s" \
        grep -q '^EosauditDuplicateRecords orders firing$' <<<"$(alerts)"
assert_eq "eosaudit counted the injected duplicates" "$DUPS" \
        "$(curl -s -m 5 "$E/metrics" | sed -n 's/^eosaudit_anomalous_records_total{topic="orders",kind="duplicate"} //p')"

compose down -v >>"$IT_TMP/compose.log" 2>&1
assert_true "compose down removed the stack" \
        test -z "$(podman ps -a -q --filter "label=com.docker.compose.project=$PROJECT")"
finish
