#!/usr/bin/env bash
# `make run` and then the whole `make test` inside a fresh, privileged
# Debian 12 (bookworm) container, as a new user on a CI runner that is
# itself a container would run them (issue 32; docs/CONTAINER.md).  Not
# part of `make test` (it runs make test); 40+ minutes.
#
#   tests/container-make-test.sh [COMMIT]     (root; default HEAD)
#
# A clean clone of COMMIT (git clone of this repository, so untracked and
# ignored files stay behind) is copied to /src in a container from the
# debootstrap base image of BASE_SUITE (default bookworm; podman.sh base),
# run with --privileged (the inner Podman of t_95..t_97 needs it) in a
# network namespace of its own (Podman's default network; apt and Maven
# reach out through it): with --network host, another suite on this
# machine took the inner broker's port between its check and its bind
# (ports are picked, not reserved), and the inner t_45/t_46 would meet
# any other suite's cluster on 29400.  There, as root: apt-get install make
# git ca-certificates, `make run`, `make test`.  The container's root is
# an overlay, so its Podman storage is too: podman.sh must choose
# fuse-overlayfs (or vfs) there by itself.
#
# As t_97 does, the downloads are cached in host directories under
# $EOSAUDIT_CACHE (default /var/cache/eosaudit): ctest-apt-archives (the
# container's apt archives), ctest-m2 (~/.m2), ctest-npm (~/.npm), and the
# container's own /var/cache/eosaudit is ctest-cache-SUITE (its librdkafka
# bootstrap, its base tarballs, its t_97's caches).  A first run downloads
# and builds everything; later ones find those, the steps still run.  The
# host's base tarball of the month (debian-trixie-YYYYMM-minbase.tar) is
# copied into the container's cache when it has none: it is what
# debootstrap would download again.
#
# Output: each step's time and exit status on stdout, make test's PASS/FAIL
# lines with their times; logs in $OUT (default
# ${TMPDIR:-/tmp}/container-make-test-RUNID): NAME.log per step and the
# container's build/test-output.  Exit 0 when make run and make test both
# passed.  KEEP=1 leaves the container running for a look.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PODMAN_SH="$ROOT/deploy/docker/podman.sh"
COMMIT="${1:-HEAD}"
SUITE="${BASE_SUITE:-bookworm}"
CACHE="${EOSAUDIT_CACHE:-/var/cache/eosaudit}"
RUN_ID="$(date +%Y%m%d-%H%M%S)-$$"
OUT="${OUT:-${TMPDIR:-/tmp}/container-make-test-$RUN_ID}"
C="eosaudit-ctest-$RUN_ID"

say() { echo "container-make-test: $*"; }
die() { say "error: $*" >&2; exit 2; }

[ "$(id -u)" = 0 ] || die "needs root (Debian's rootful Podman)"
mkdir -p "$OUT" || die "cannot make $OUT"
rev="$(git -C "$ROOT" rev-parse --verify "$COMMIT^{commit}")" || die "no commit $COMMIT"

"$PODMAN_SH" deps >"$OUT/deps.log" 2>&1 || { cat "$OUT/deps.log"; die "cannot install podman"; }
eval "$("$PODMAN_SH" env)"
BASE="$(BASE_SUITE="$SUITE" "$PODMAN_SH" base 2>"$OUT/base.log")" ||
        { cat "$OUT/base.log"; die "no $SUITE base image"; }

INNER="$CACHE/ctest-cache-$SUITE"
mkdir -p "$CACHE/ctest-apt-archives/partial" "$CACHE/ctest-m2" "$CACHE/ctest-npm" "$INNER"
month="$(date +%Y%m)"
for t in "$CACHE"/debian-trixie-"$month"-minbase.tar; do
        [ -s "$t" ] && [ ! -s "$INNER/${t##*/}" ] && cp "$t" "$INNER/"
done
CA_ARGS=()
[ -d /usr/local/share/ca-certificates ] &&
        CA_ARGS=(-v /usr/local/share/ca-certificates:/usr/local/share/ca-certificates:ro)

cleanup() {
        if [ "${KEEP:-0}" = 1 ]; then
                say "container $C kept (podman.sh podman rm -f $C)"
        else
                podman rm -f -t 5 "$C" >/dev/null 2>&1
        fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "$SUITE container $C from $BASE, commit $rev, logs in $OUT"
podman run -d --name "$C" --privileged --no-healthcheck \
        -v "$CACHE/ctest-apt-archives:/var/cache/apt/archives" \
        -v "$CACHE/ctest-m2:/root/.m2" -v "$CACHE/ctest-npm:/root/.npm" \
        -v "$INNER:/var/cache/eosaudit" "${CA_ARGS[@]}" \
        "$BASE" sleep infinity >/dev/null || die "cannot start a container from $BASE"

clone="$(mktemp -d "${TMPDIR:-/tmp}/ctest-clone.XXXXXX")"
git clone -q --no-checkout "$ROOT" "$clone/src" &&
        git -C "$clone/src" checkout -q "$rev" &&
        podman exec "$C" mkdir -p /src &&
        tar -C "$clone/src" -cf - . | podman exec -i "$C" tar -xf - -C /src ||
        die "cannot copy a clone of $rev into the container"
rm -rf "$clone"

# step NAME CMD: CMD in /src, output in $OUT/NAME.log; prints time and status.
step() {
        local what="$1" t0=$SECONDS rc=0
        shift
        podman exec -w /src -e DEBIAN_FRONTEND=noninteractive "$C" \
                nice -n 19 bash -c "$*" >"$OUT/$what.log" 2>&1 </dev/null || rc=$?
        say "$what: exit $rc after $((SECONDS - t0)) s"
        [ "$rc" = 0 ] || tail -n 30 "$OUT/$what.log" | sed 's/^/  /'
        return "$rc"
}

# dpkg without an fsync per file, as in Docker's own Debian images and t_97.
podman exec "$C" sh -c 'echo force-unsafe-io >/etc/dpkg/dpkg.cfg.d/unsafe-io'
podman exec "$C" sh -c '. /etc/os-release; echo "$PRETTY_NAME"; stat -f -c "root file system: %T" /'
rc=0
step apt-min "apt-get update -qq && apt-get install -y -qq --no-install-recommends make git ca-certificates" &&
        step make-run "make run" &&
        step make-test "make test" || rc=1
grep -E '^(PASS|FAIL|slowest|integration tests:|[0-9]+ passed)|unit tests|passed, ' "$OUT/make-test.log" 2>/dev/null |
        sed 's/^/  /'
podman exec "$C" /src/deploy/docker/podman.sh podman info --format "inner podman storage: {{.Store.GraphDriverName}}" 2>/dev/null || true
podman cp "$C:/src/build/test-output" "$OUT/test-output" >/dev/null 2>&1 || true
say "$([ "$rc" = 0 ] && echo PASSED || echo FAILED); logs in $OUT"
exit "$rc"
