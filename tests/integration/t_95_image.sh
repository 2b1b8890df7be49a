#!/usr/bin/env bash
# it-timeout: 1200
# (The first build bootstraps librdkafka in the image's build stage: some
# 8 minutes on a busy 2-core machine; later builds reuse that layer.)
# The container image, built and run for real: Debian's rootful Podman
# builds deploy/docker/Dockerfile on the base image deploy/docker/podman.sh
# makes with debootstrap (cached in /var/cache/eosaudit), then
#  - the image keeps its HEALTHCHECK (--format docker) and runs as 10001;
#  - `eosaudit serve` runs in a container (host network: the test broker
#    advertises 127.0.0.1) with the configuration mounted and the ledger
#    in a named volume, and logs the address it is bound to;
#  - from inside the container: /healthz answers 200, `podman healthcheck
#    run` says healthy, /metrics counts the records and the duplicates the
#    reference producer injected, /api/v1/summary agrees;
#  - `eosaudit scan` in a second container gives the verdict: exit 1, the
#    manifest's records and duplicates;
#  - `podman stop` (SIGTERM) ends serve with status 0.
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || die "needs root (Debian's rootful Podman)"
PODMAN_SH="$ROOT/deploy/docker/podman.sh"
IMG="localhost/eosaudit:it"
CNAME="eosaudit-it-$IT_RUN_ID"
VOL="eosaudit-it-ledger-$IT_RUN_ID"
T="$(name main)"

"$PODMAN_SH" deps >"$IT_TMP/deps.log" 2>&1 ||
        { cat "$IT_TMP/deps.log"; die "cannot install podman"; }
# podman.sh's settings (containers.conf; the storage's, inside a container)
# for the podman commands below.
eval "$("$PODMAN_SH" env)"
start=$SECONDS
"$PODMAN_SH" build "$IMG" >"$IT_TMP/build.log" 2>&1 ||
        { tail -n 40 "$IT_TMP/build.log"; die "the image does not build"; }
image_built "$IMG"
log "image built in $((SECONDS - start)) s (base $("$PODMAN_SH" base 2>/dev/null))"

test_cleanup() {
        podman rm -f -t 5 "$CNAME" >/dev/null 2>&1
        podman volume rm -f "$VOL" >/dev/null 2>&1
        return 0
}

# --- the image ----------------------------------------------------------------
hc="$(podman image inspect --format '{{json .HealthCheck}}' "$IMG" 2>/dev/null)"
log "image health check: $hc"
assert_true "the image keeps its HEALTHCHECK on /healthz" grep -q '/healthz' <<<"$hc"
assert_eq "the image runs as" 10001:10001 \
        "$(podman image inspect --format '{{.User}}' "$IMG")"
assert_true "eosaudit version runs in the image" \
        podman run --rm --no-healthcheck --network none "$IMG" version
# The image's librdkafka is the one its build stage bootstrapped (at the
# path of the binary's rpath), the version the tree builds against here,
# and every library the binary and it link resolves in the runtime stage.
ver="$(podman run --rm --no-healthcheck --network none "$IMG" version)"
log "in the image: $ver"
assert_eq "the image's librdkafka version is the build's here" \
        "$("$EOSAUDIT" version | sed -n 's/.*(librdkafka \(.*\))$/\1/p')" \
        "$(sed -n 's/.*(librdkafka \(.*\))$/\1/p' <<<"$ver")"
LDD="$(podman run --rm --no-healthcheck --network none --entrypoint /bin/sh "$IMG" -c \
        'ldd /usr/local/bin/eosaudit; for f in $(ldd /usr/local/bin/eosaudit |
                awk "/librdkafka/ { print \$3 }"); do ldd "$f"; done' 2>&1)"
sed 's/^/  ldd: /' <<<"$LDD"
assert_true "ldd in the image: librdkafka.so.1 from the rpath (/opt/eosaudit)" \
        grep -qE 'librdkafka\.so\.1 => /opt/eosaudit/librdkafka-[0-9.]+/lib/librdkafka\.so\.1' <<<"$LDD"
assert_eq "ldd in the image: libraries not found" "" "$(grep 'not found' <<<"$LDD")"

# --- serve in a container -----------------------------------------------------
create_topic "$T" 3
produce -t "$T" --producer "$(name p)" -n 3000 --inject-duplicates 0.01 --seed 9501
[ "$PROD_RC" = 0 ] || die "produce failed"
manifest_add "$PROD_JSON"
[ "$M_DUPS" -gt 0 ] || die "the producer injected no duplicate"

# 8080 is what the image's HEALTHCHECK asks; on the host network it may be
# taken, and then the check is given the port serve got.
PORT=8080
HC_ARGS=()
if ! it_port_free 8080; then
        PORT="$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
        HC_ARGS=(--health-cmd "curl -fsS -o /dev/null http://127.0.0.1:$PORT/healthz || exit 1")
        log "8080 is taken on this host: serve listens on $PORT"
fi
cat >"$IT_TMP/eosaudit.conf" <<CONF
brokers = $BOOTSTRAP
topics = $T
db = /var/lib/eosaudit/eosaudit.db
listen = 0.0.0.0:$PORT
commit-interval-ms = 200
CONF
chmod 0644 "$IT_TMP/eosaudit.conf"
podman volume create "$VOL" >/dev/null || die "cannot create volume $VOL"
# Without systemd Podman cannot schedule the health check (it says so on
# stderr); `podman healthcheck run` below runs it.
podman run -d --name "$CNAME" --network host "${HC_ARGS[@]}" \
        -v "$IT_TMP/eosaudit.conf:/etc/eosaudit/eosaudit.conf:ro,Z" \
        -v "$VOL:/var/lib/eosaudit" "$IMG" >"$IT_TMP/run.out" 2>"$IT_TMP/run.err" ||
        { cat "$IT_TMP/run.err"; die "podman run failed"; }

in_c() { podman exec "$CNAME" "$@"; }
for ((i = 0; i < 150; i++)); do
        in_c curl -fsS -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null && break
        [ "$(podman inspect --format '{{.State.Running}}' "$CNAME")" = true ] || break
        sleep 0.2
done
podman logs "$CNAME" >"$IT_TMP/serve.log" 2>&1
sed 's/^/  serve: /' "$IT_TMP/serve.log" | head -n 20
assert_true "serve logs the wildcard it is bound to" \
        grep -q "http: listening on 0.0.0.0:$PORT, every interface" "$IT_TMP/serve.log"
assert_eq "/healthz from inside the container" 200 \
        "$(in_c curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/healthz")"
assert_eq "serve runs as uid" 10001 "$(in_c id -u)"
hrc=0
podman healthcheck run "$CNAME" >"$IT_TMP/hc.out" 2>&1 || hrc=$?
assert_eq "podman healthcheck run (exit status; $(tr '\n' ' ' <"$IT_TMP/hc.out"))" 0 "$hrc"

# Wait until serve has audited every record, then read its numbers.
metric() { # NAME: the sum of NAME{...topic="$T"...} over /metrics
        in_c curl -fsS "http://127.0.0.1:$PORT/metrics" | awk -v n="$1" -v t="topic=\"$T\"" '
                index($1, n "{") == 1 && index($1, t) { s += $2 } END { printf "%d\n", s }'
}
for ((i = 0; i < 150; i++)); do
        [ "$(metric eosaudit_records_total)" = "$M_DELIVERED" ] && break
        sleep 0.2
done
assert_eq "/metrics: eosaudit_records_total" "$M_DELIVERED" "$(metric eosaudit_records_total)"
dups="$(in_c curl -fsS "http://127.0.0.1:$PORT/metrics" |
        awk -v t="topic=\"$T\"" 'index($1, "eosaudit_anomalous_records_total{") == 1 &&
                index($1, "kind=\"duplicate\"") && index($1, t) { s += $2 } END { printf "%d\n", s }')"
assert_eq "/metrics: duplicates" "$M_DUPS" "$dups"
SUM="$(in_c curl -fsS "http://127.0.0.1:$PORT/api/v1/summary")"
got="$(json_get anomalies.duplicate "$SUM" 2>/dev/null)" || got="<no anomalies.duplicate>"
assert_eq "/api/v1/summary: duplicates" "$M_DUPS" "$got"

# --- a scan's verdict, in a container of its own ----------------------------
SCAN_RC=0
SCAN_JSON="$(podman run --rm --no-healthcheck --network host "$IMG" scan -b "$BOOTSTRAP" -t "$T" \
        --json --no-progress -q 2>"$IT_TMP/scan.err")" || SCAN_RC=$?
cat "$IT_TMP/scan.err"
assert_eq "scan in a container: exit status (anomalies)" 1 "$SCAN_RC"
assert_scan records_total "$M_DELIVERED"
assert_scan anomalies.duplicate "$M_DUPS"
assert_scan missing_records 0

# --- SIGTERM ------------------------------------------------------------------
podman stop -t 30 "$CNAME" >/dev/null 2>&1
assert_eq "serve's exit status after podman stop" 0 \
        "$(podman inspect --format '{{.State.ExitCode}}' "$CNAME")"
podman logs "$CNAME" 2>&1 | tail -n 3 | sed 's/^/  serve: /'

finish
