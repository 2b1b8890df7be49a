#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build and test eosaudit.
# Does nothing (and needs no network) when everything is already there;
# the first run on Debian 12 or 13 also builds librdkafka (librdkafka.sh).
set -euo pipefail

pkgs=(
  build-essential pkg-config
  libmicrohttpd-dev libsqlite3-dev sqlite3 libcmocka-dev libjansson-dev
  # librdkafka: the system's when it is >= 2.10, else deploy/librdkafka.sh
  # (below) builds Debian's newest source package once, with these.
  librdkafka-dev dpkg-dev debian-archive-keyring
  libssl-dev libsasl2-dev libzstd-dev liblz4-dev libcurl4-openssl-dev zlib1g-dev
  libgoogle-perftools-dev
  kcat
  # HTTP tests: promtool checks /metrics (t_70, with curl and openssl for
  # HTTPS), headless chromium drives the dashboard (t_75).
  prometheus curl openssl chromium
  # Benchmarks (bench/): the chart, HTTP load, reading a frozen scan's
  # counter, max RSS.
  gnuplot-nox wrk gdb time
  # Operations (t_90..t_94): the prometheus server and promtool above,
  # systemd-analyze for the unit, groff and man for the man page, PyYAML for
  # the alert rules and the compose file.
  systemd groff-base man-db python3-yaml
)
# Tests against the real broker need Java and Maven; they are on the
# machine image, but install them if a machine lacks them.
command -v java >/dev/null 2>&1 || pkgs+=(default-jdk-headless)
command -v mvn  >/dev/null 2>&1 || pkgs+=(maven)
# The dashboard test (t_75) runs playwright-core (tests/browser, pinned to a
# version that supports Debian 12's Node.js 18) over the chromium above.
# A machine with another Node.js (NodeSource's, which brings its own npm)
# keeps it.
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
command -v npm  >/dev/null 2>&1 || pkgs+=(npm)

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  SUDO=
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# librdkafka >= 2.10 (nothing to do when the system's or a cached build is).
"$(dirname "$0")/librdkafka.sh"
