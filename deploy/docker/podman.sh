#!/usr/bin/env bash
# Builds and runs eosaudit's container image with Debian's rootful Podman
# on a machine that reaches no image registry: the base image is made
# from Debian's own packages (debootstrap) and imported.
#
#   podman.sh deps            install podman, runc, debootstrap, podman-compose
#                             (apt; nothing when they are there)
#   podman.sh base            make (or reuse) the base image; prints its name
#   podman.sh build [TAG]     base, then build deploy/docker/Dockerfile as TAG
#                             (default eosaudit:local)
#   podman.sh stand-ins       base, then build the compose stack's local Kafka
#                             and Prometheus images (Dockerfile.kafka,
#                             Dockerfile.prometheus)
#   podman.sh podman ARGS...  podman with this project's settings
#   podman.sh compose ARGS... podman-compose on deploy/docker/compose.yaml with
#                             the local images
#
# Podman's settings come from deploy/docker/containers.conf (runc, cgroupfs,
# explicit ulimits) through CONTAINERS_CONF; /etc is not touched.
#
# The base image: `debootstrap --variant=minbase bookworm` from the mirror
# apt uses on this machine, packed as a tarball in the cache directory
# ($EOSAUDIT_CACHE, default /var/cache/eosaudit as root, else
# ~/.cache/eosaudit), keyed by suite and month, and imported as
# localhost/eosaudit-base:bookworm-YYYYMM.  A month later a new one is made.
#
# Environment: BASE_SUITE=bookworm  DEBIAN_MIRROR=<apt's>  EOSAUDIT_CACHE
set -euo pipefail

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$DIR/../.." && pwd)"
export CONTAINERS_CONF="$DIR/containers.conf"
SUITE="${BASE_SUITE:-bookworm}"
if [ "$(id -u)" = 0 ]; then
  CACHE="${EOSAUDIT_CACHE:-/var/cache/eosaudit}"
else
  CACHE="${EOSAUDIT_CACHE:-$HOME/.cache/eosaudit}"
fi
KEY="$SUITE-$(date +%Y%m)"
BASE="localhost/eosaudit-base:$KEY"

say() { echo "podman.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }

SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo

deps() {
  local pkgs=(podman runc debootstrap podman-compose
              containernetworking-plugins golang-github-containernetworking-plugin-dnsname
              iptables uidmap) missing=() p
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The mirror apt uses (deb822 URIs: or a one-line deb entry) for Debian
# itself, so that debootstrap reaches what apt reaches.
mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; return; fi
  local m
  m="$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
       awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }
            /^deb / { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; break } }' |
       grep -E '/debian/?$' | head -n 1)"
  echo "${m:-http://deb.debian.org/debian}"
}

pm() { podman "$@"; }

base() {
  if pm image exists "$BASE"; then echo "$BASE"; return 0; fi
  local tar="$CACHE/debian-$KEY-minbase.tar"
  if [ ! -s "$tar" ]; then
    command -v debootstrap >/dev/null 2>&1 || die "debootstrap not found (podman.sh deps)"
    local m root
    m="$(mirror)"
    root="$(mktemp -d "${TMPDIR:-/tmp}/eosaudit-rootfs.XXXXXX")"
    say "debootstrap --variant=minbase $SUITE from $m (a few minutes) ..."
    if ! $SUDO debootstrap --variant=minbase "$SUITE" "$root" "$m" >"$root.log" 2>&1; then
      tail -n 20 "$root.log" >&2
      $SUDO rm -rf "$root"
      die "debootstrap failed (log: $root.log)"
    fi
    # A fresh apt index is the image's first step anyway; keep it small.
    $SUDO rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
    mkdir -p "$CACHE"
    $SUDO tar -C "$root" --numeric-owner -cf "$tar.tmp" .
    mv "$tar.tmp" "$tar"
    $SUDO rm -rf "$root" "$root.log"
  fi
  say "importing $tar as $BASE"
  pm import -q --change 'CMD ["/bin/bash"]' "$tar" "$BASE" >/dev/null
  echo "$BASE"
}

build() {
  local tag="${1:-eosaudit:local}" b
  b="$(base)"
  # --format docker keeps the HEALTHCHECK (OCI images have none);
  # --network host: the build's apt-get reaches the mirror as the host does.
  pm build --pull=never --network host --format docker \
    --build-arg BUILD_IMAGE="$b" --build-arg RUNTIME_IMAGE="$b" \
    --ignorefile "$DIR/Dockerfile.dockerignore" \
    -f "$DIR/Dockerfile" -t "$tag" "$ROOT"
  # The build stage of every earlier build stays behind untagged (some
  # 650 MB each); its cached layers (apt-get) are kept.
  pm image prune -f --filter label=org.eosaudit.stage=build >/dev/null
}

# The compose stack's stand-ins, tagged as compose.yaml's variables expect
# them (docs/OPERATIONS.md's Podman steps export those).
KAFKA_STANDIN=localhost/eosaudit-kafka:4.1.0
PROMETHEUS_STANDIN=localhost/eosaudit-prometheus:bookworm
stand_ins() {
  local b
  b="$(base)"
  "$ROOT/deploy/kafka/kafka.sh" fetch
  pm build --pull=never --network host --format docker --build-arg BASE_IMAGE="$b" \
    --ignorefile "$DIR/Dockerfile.kafka.dockerignore" \
    -f "$DIR/Dockerfile.kafka" -t "$KAFKA_STANDIN" "$ROOT/deploy/kafka"
  pm build --pull=never --network host --format docker --build-arg BASE_IMAGE="$b" \
    --ignorefile "$DIR/Dockerfile.kafka.dockerignore" \
    -f "$DIR/Dockerfile.prometheus" -t "$PROMETHEUS_STANDIN" "$DIR"
}

# podman-compose with the local images (a variable set by the caller wins).
compose() {
  export EOSAUDIT_IMAGE="${EOSAUDIT_IMAGE:-localhost/eosaudit:local}"
  export KAFKA_IMAGE="${KAFKA_IMAGE:-$KAFKA_STANDIN}"
  export PROMETHEUS_IMAGE="${PROMETHEUS_IMAGE:-$PROMETHEUS_STANDIN}"
  command -v podman-compose >/dev/null 2>&1 || die "podman-compose not found (podman.sh deps)"
  podman-compose -f "$DIR/compose.yaml" "$@"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  deps) deps ;;
  base) base ;;
  build) build "$@" ;;
  stand-ins) stand_ins ;;
  compose) compose "$@" ;;
  podman) pm "$@" ;;
  *) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
