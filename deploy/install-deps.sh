#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build and test eosaudit.
# Does nothing (and needs no network) when everything is already there.
set -euo pipefail

pkgs=(
  build-essential pkg-config
  librdkafka-dev libmicrohttpd-dev libsqlite3-dev sqlite3 libcmocka-dev libjansson-dev
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

[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
