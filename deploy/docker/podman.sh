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
#   podman.sh env             those settings as shell exports, for scripts
#                             that run podman themselves:
#                             eval "$(deploy/docker/podman.sh env)"
#   podman.sh apt-cache ARGS...
#                             apt-cache on the base suite's package index
#                             (what the images' apt-get installs from), in
#                             a private state directory: no engine needed
#   podman.sh compose ARGS... podman-compose on deploy/docker/compose.yaml with
#                             the local images
#
# Podman's settings come from deploy/docker/containers.conf (runc, cgroupfs,
# explicit ulimits) through CONTAINERS_CONF; /etc is not touched.  Where
# Podman's storage would sit on an overlay file system (inside a container:
# CI runners often are one), overlay cannot stack on it ("'overlay' is not
# supported over overlayfs, a mount_program is required"): the storage
# then goes through fuse-overlayfs (storage-fuse-overlayfs.conf; deps
# installs Debian's package) where /dev/fuse exists, else the vfs driver
# (storage-vfs.conf: a full copy per layer), through CONTAINERS_STORAGE_CONF.
#
# The base image: `debootstrap --variant=minbase trixie` (Debian 13) from the mirror
# apt uses on this machine, packed as a tarball in the cache directory
# ($EOSAUDIT_CACHE, default /var/cache/eosaudit as root, else
# ~/.cache/eosaudit), keyed by suite and month, and imported as
# localhost/eosaudit-base:trixie-YYYYMM.  A month later a new one is made.
#
# Environment: BASE_SUITE=trixie  DEBIAN_MIRROR=<apt's>  EOSAUDIT_CACHE
set -euo pipefail

DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$DIR/../.." && pwd)"
export CONTAINERS_CONF="$DIR/containers.conf"
GRAPHROOT=/var/lib/containers/storage
SUITE="${BASE_SUITE:-trixie}"
if [ "$(id -u)" = 0 ]; then
  CACHE="${EOSAUDIT_CACHE:-/var/cache/eosaudit}"
else
  CACHE="${EOSAUDIT_CACHE:-$HOME/.cache/eosaudit}"
fi
KEY="$SUITE-$(date +%Y%m)"
BASE="localhost/eosaudit-base:$KEY"
BUILD_STAGE="localhost/eosaudit-build:$SUITE"

say() { echo "podman.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }

SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo

deps() {
  local pkgs=(podman runc debootstrap podman-compose
              containernetworking-plugins golang-github-containernetworking-plugin-dnsname
              iptables uidmap) missing=() p
  [ "$(storage_fs)" = overlayfs ] && [ -c /dev/fuse ] && pkgs+=(fuse-overlayfs)
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

# The file system type under rootful Podman's storage (its nearest
# directory that exists): "overlayfs" in a container whose root is one.
storage_fs() {
  local d="$GRAPHROOT"
  while [ ! -d "$d" ]; do d="$(dirname "$d")"; done
  stat -f -c %T "$d"
}

# The storage configuration Podman needs here, or nothing for its own
# default (overlay on a plain file system; rootless Podman's own storage).
# The choice sticks: a storage made with vfs stays vfs (Podman refuses a
# driver other than the one its database was made with).
storage_conf() {
  [ "$(id -u)" = 0 ] || return 0
  [ "$(storage_fs)" = overlayfs ] || return 0
  if [ ! -d "$GRAPHROOT/vfs" ] && [ -c /dev/fuse ] && command -v fuse-overlayfs >/dev/null 2>&1; then
    echo "$DIR/storage-fuse-overlayfs.conf"
  else
    echo "$DIR/storage-vfs.conf"
  fi
}
if [ -z "${CONTAINERS_STORAGE_CONF:-}" ] && [ "${1:-}" != deps ]; then
  CONTAINERS_STORAGE_CONF="$(storage_conf)"
  [ -n "$CONTAINERS_STORAGE_CONF" ] && export CONTAINERS_STORAGE_CONF
fi

pm() { podman "$@"; }

# This machine's apt settings on the age of an archive's index
# (Acquire::Check-Valid-Until, Acquire::Check-Date), for the base image: a
# host whose mirror is a snapshot, or whose clock is ahead of it, turns
# them off, and the images' apt-get (and deploy/librdkafka.sh reading sid)
# must then do as the host's does.  Nothing on an ordinary host.
host_apt_checks() {
  apt-config dump | grep -E '^Acquire::Check-(Valid-Until|Date) ' || true
}

# apt-cache on $SUITE's binary index, fetched once a month (as the base
# image is) into the cache with a private sources list and state: the
# machine's own apt configuration is neither read nor written, so a
# Debian 12 host can ask what Debian 13 calls a package.
apt_index() {
  local d="$CACHE/apt-$KEY" a
  a=(-o Dir::Etc::SourceList="$d/sources.list" -o Dir::Etc::SourceParts=/dev/null
     -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
     -o Dir::State="$d/state" -o Dir::State::Lists="$d/state/lists"
     -o Dir::State::status=/dev/null -o Dir::Cache="$d/cache"
     -o APT::Sandbox::User=root -o Debug::NoLocking=1 -o Acquire::Languages=none
     -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
     -o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false)
  if [ ! -f "$d/.complete" ]; then
    mkdir -p "$d/state/lists/partial" "$d/cache/archives/partial"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) $SUITE main" \
      >"$d/sources.list"
    apt-get -q "${a[@]}" update >"$d/update.log" 2>&1 ||
      { tail -n 20 "$d/update.log" >&2; die "apt-get update of $SUITE's index failed"; }
    touch "$d/.complete"
  fi
  apt-cache "${a[@]}" "$@"
}

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
    host_apt_checks | $SUDO tee "$root/etc/apt/apt.conf.d/99eosaudit-host" >/dev/null
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
  local tag="${1:-eosaudit:local}" b a
  b="$(base)"
  # --format docker keeps the HEALTHCHECK (OCI images have none);
  # --network host: the build's apt-get reaches the mirror as the host does.
  a=(--pull=never --network host --format docker
     --build-arg BUILD_IMAGE="$b" --build-arg RUNTIME_IMAGE="$b"
     --ignorefile "$DIR/Dockerfile.dockerignore" -f "$DIR/Dockerfile")
  # The build stage is tagged (BUILD_STAGE) so that its layers, the cached
  # apt-get and librdkafka bootstrap among them, are no dangling images:
  # Podman 4.3's prune below removed them with the untagged build stages
  # of earlier builds (some 650 MB each), its label filter notwithstanding,
  # and every build bootstrapped librdkafka again.  The second build finds
  # the first one's layers in the cache.
  pm build "${a[@]}" --target build -t "$BUILD_STAGE" "$ROOT"
  pm build "${a[@]}" -t "$tag" "$ROOT"
  # A build killed half-way leaves a working container that holds its
  # image: that one stays, and the image just built is still good.
  pm image prune -f --filter label=org.eosaudit.stage=build >/dev/null 2>&1 ||
    say "some untagged build stages are still in use (podman ps --external)"
}

# The compose stack's stand-ins, tagged as compose.yaml's variables expect
# them (docs/OPERATIONS.md's Podman steps export those).
# The Kafka stand-in is tagged with the version of deploy/kafka's jars.
KAFKA_STANDIN="localhost/eosaudit-kafka:$(sed -n 's|.*<kafka.version>\(.*\)</kafka.version>.*|\1|p' \
  "$ROOT/deploy/kafka/pom.xml")"
PROMETHEUS_STANDIN="localhost/eosaudit-prometheus:$SUITE"
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
  env)
    echo "export CONTAINERS_CONF=${CONTAINERS_CONF@Q}"
    [ -z "${CONTAINERS_STORAGE_CONF:-}" ] ||
      echo "export CONTAINERS_STORAGE_CONF=${CONTAINERS_STORAGE_CONF@Q}"
    ;;
  apt-cache) apt_index "$@" ;;
  *) sed -n '2,42p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
