#!/usr/bin/env bash
# it-timeout: 1800
# it-background: yes (a container of its own: run.sh runs it beside the others)
# (The first run downloads every package and builds librdkafka; later runs
# find both in /var/cache/eosaudit.)
# A fresh machine, as a new user meets it: a Debian 13 (trixie) container
# from the debootstrap base image (deploy/docker/podman.sh base) with only
# make, git and ca-certificates installed, and this working tree (its
# tracked and unignored files, no build output, no node_modules, no Kafka
# jars) in /src.  There, as root:
#   make run                  installs everything (deploy/install-deps.sh,
#                             which builds librdkafka >= 2.10 since Debian
#                             13's is 2.8.0), builds and passes the demo;
#   make unit-test            the unit tests, while the next step runs;
#   tests/integration/run.sh t_75 t_86
#                             the two tests a fresh machine used to fail:
#                             the dashboard in chromium with Debian's
#                             Node.js 18, and the disk filling up without
#                             mount privileges; the suite starts its own
#                             broker (Kafka's jars fetched by Maven), on the
#                             host network beside this suite's broker, so it
#                             must pick other ports.
# A missing install step fails here.  The container shares the host's
# network; Debian's, Maven's and npm's downloads are cached in
# /var/cache/eosaudit (apt archives, ~/.m2, ~/.npm) between runs, the
# steps still run.  So is the container's librdkafka build (its
# /var/cache/eosaudit, one host directory per suite): the first run builds
# it, later ones find it, as a machine's second checkout would.  The
# host's local trust anchors (/usr/local/share/ca-certificates, e.g. an
# egress proxy's CA) are mounted where the container's ca-certificates
# finds them: the container trusts what the host trusts.
# Each step's time is logged.
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || die "needs root (Debian's rootful Podman)"
PODMAN_SH="$ROOT/deploy/docker/podman.sh"
CACHE="${EOSAUDIT_CACHE:-/var/cache/eosaudit}"
C="eosaudit-fresh-$(echo "$IT_RUN_ID" | tr -cd '0-9-')"

"$PODMAN_SH" deps >"$IT_TMP/deps.log" 2>&1 ||
        { cat "$IT_TMP/deps.log"; die "cannot install podman"; }
# podman.sh's settings (containers.conf; the storage's, inside a container)
# for the podman commands below.
eval "$("$PODMAN_SH" env)"
BASE="$("$PODMAN_SH" base 2>"$IT_TMP/base.log")" ||
        { cat "$IT_TMP/base.log"; die "no base image"; }
log "base image $BASE"

test_cleanup() { podman rm -f -t 5 "$C" >/dev/null 2>&1; return 0; }

SUITE="${BASE#*eosaudit-base:}"
SUITE="${SUITE%-*}"
RDK_CACHE="$CACHE/fresh-eosaudit-$SUITE"
mkdir -p "$CACHE/fresh-apt-archives/partial" "$CACHE/fresh-m2" "$CACHE/fresh-npm" "$RDK_CACHE"
cached="$(ls -d "$RDK_CACHE"/librdkafka-*/ 2>/dev/null | tr '\n' ' ')"
log "librdkafka builds cached for $SUITE: ${cached:-none (this run builds it)}"
CA_ARGS=()
[ -d /usr/local/share/ca-certificates ] &&
        CA_ARGS=(-v /usr/local/share/ca-certificates:/usr/local/share/ca-certificates:ro)
podman run -d --name "$C" --network host --no-healthcheck \
        -v "$CACHE/fresh-apt-archives:/var/cache/apt/archives" \
        -v "$CACHE/fresh-m2:/root/.m2" -v "$CACHE/fresh-npm:/root/.npm" \
        -v "$RDK_CACHE:/var/cache/eosaudit" "${CA_ARGS[@]}" \
        "$BASE" sleep infinity >/dev/null || die "cannot start a container from $BASE"

# step NAME CMD...: runs CMD in the container's /src, its output in
# $IT_TMP/NAME.log (the tail on failure), and asserts exit status 0.
# step_start NAME CMD... starts it in the background, step_end NAME waits
# for it, logs and asserts the same.
declare -A STEP_PID STEP_T0
step_start() {
        local what="$1"
        shift
        STEP_T0[$what]=$SECONDS
        # Its own end time: step_end may come later.
        { podman exec -w /src -e DEBIAN_FRONTEND=noninteractive "$C" \
                bash -c "$*" >"$IT_TMP/$what.log" 2>&1
          rc=$?
          echo "$SECONDS" >"$IT_TMP/$what.end"
          exit "$rc"; } &
        STEP_PID[$what]=$!
}
step_end() {
        local what="$1" rc=0 end
        wait "${STEP_PID[$what]}" || rc=$?
        end="$(cat "$IT_TMP/$what.end" 2>/dev/null)" || end=$SECONDS
        log "$what: exit $rc after $((end - STEP_T0[$what])) s"
        [ "$rc" = 0 ] || tail -n 40 "$IT_TMP/$what.log" | sed 's/^/  /'
        assert_eq "$what: exit status" 0 "$rc"
        return "$rc"
}
step() {
        step_start "$@"
        step_end "$1"
}

podman exec "$C" mkdir -p /src
git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
        tar -C "$ROOT" --null -T - -cf - 2>/dev/null |
        podman exec -i "$C" tar -xf - -C /src || die "cannot copy the sources"

# dpkg without an fsync per file, as in Docker's own Debian images
# (docker-apt-speedup): the same packages, installed in less time.
podman exec "$C" sh -c 'echo force-unsafe-io >/etc/dpkg/dpkg.cfg.d/unsafe-io' ||
        die "cannot configure dpkg in the container"
step apt-min "apt-get update -qq && apt-get install -y -qq --no-install-recommends make git ca-certificates" ||
        finish
assert_true "no compiler in the fresh container yet" \
        podman exec "$C" sh -c '! command -v cc && ! command -v node && ! command -v java'
assert_eq "the fresh container is Debian 13" 13 \
        "$(podman exec "$C" sh -c '. /etc/os-release && echo "$VERSION_ID"')"
step make-run "make run" || finish
grep '^librdkafka.sh:' "$IT_TMP/make-run.log" | sed 's/^/  /'
# The library the build uses: Debian 13's is too old, so the bootstrap's,
# found through the rpath without any environment.
podman exec -w /src "$C" sh -c 'build/eosaudit version; ldd build/eosaudit | grep librdkafka' \
        >"$IT_TMP/rdkafka.txt" 2>&1
sed 's/^/  /' "$IT_TMP/rdkafka.txt"
rdv="$(sed -n 's/.*(librdkafka \(.*\))$/\1/p' "$IT_TMP/rdkafka.txt")"
assert_true "build/eosaudit runs on librdkafka >= 2.10 (${rdv:-none})" \
        dpkg --compare-versions "${rdv:-0}" ge 2.10.0
assert_true "... the one deploy/librdkafka.sh built in /var/cache/eosaudit" \
        grep -qE 'librdkafka\.so\.1 => /var/cache/eosaudit/librdkafka-[0-9.]+/lib/' "$IT_TMP/rdkafka.txt"
grep -E '^(what the producer|demo:)' "$IT_TMP/make-run.log" | head -n 5 | sed 's/^/  /'
# The unit tests beside the integration step: they mostly wait on
# time-outs, and neither step writes what the other reads (make run built
# the binary and the library both use).
step_start unit-test "make unit-test"
step node-version "node --version && dpkg-query -W nodejs npm chromium"
sed 's/^/  /' "$IT_TMP/node-version.log"
step integration "BUILD=build tests/integration/run.sh t_75 t_86"
step_end unit-test
grep -E '^(PASS|FAIL|starting)' "$IT_TMP/integration.log" | sed 's/^/  /'
inner="$(sed -n 's/^starting the test broker on 127.0.0.1:\([0-9]*\) .*/\1/p' "$IT_TMP/integration.log")"
log "this suite's broker: $KAFKA_PORT; the fresh suite's: ${inner:-none}"
if broker_up; then
        assert_true "the fresh suite's broker kept off this suite's port $KAFKA_PORT (${inner:-none})" \
                test -n "$inner" -a "$inner" != "$KAFKA_PORT"
fi
assert_true "t_86 filled the container's /dev/shm (no mount privilege)" podman exec "$C" \
        grep -q "the disk is this container's /dev/shm" /src/build/test-output/integration/86_disk_full.log
finish
