#!/usr/bin/env bash
# librdkafka for eosaudit: the system's when it is recent enough, else one
# built once from Debian's source package into a cache outside the tree.
#
#   librdkafka.sh              make sure a librdkafka >= FLOOR is there
#                              (builds it the first time: a minute or two)
#   librdkafka.sh prefix       print the prefix of the cached build, or
#                              nothing when the system's librdkafka is used
#   librdkafka.sh make-vars    print the Makefile's RDKAFKA_CFLAGS and
#                              RDKAFKA_LIBS (build/deps.mk)
#
# Why: eosaudit's verdicts are only as good as the consumer under them.
# librdkafka before 2.10 has bugs that an auditor cannot live with (a
# duplicate emitted during offset validation, offsets skipped by batch
# consume around pause/resume, no KIP-320 log-truncation detection, SCRAM
# failing against Kafka 4, a one-second stall after a leader change);
# Debian 12 ships 2.0.2 and Debian 13 2.8.0.  As kcat's bootstrap.sh does
# for its users, we build the library ourselves when the system's is too
# old, from Debian's own source package: the newest one at or above the
# floor that Debian serves (sid, forky, trixie-backports, trixie), fetched
# with apt's ordinary client under a private sources list and state
# directory, so the machine's own apt configuration is never touched.
# The tarball is checked by apt against the archive's signed index.
#
# The build goes to $EOSAUDIT_CACHE/librdkafka-VERSION (EOSAUDIT_CACHE:
# /var/cache/eosaudit for root, ~/.cache/eosaudit otherwise) and is reused
# by every checkout on the machine; it is built again only for another
# version (LIBRDKAFKA_REFRESH=1 looks for a newer one).  The Makefile links
# it with an rpath, so build/eosaudit runs without LD_LIBRARY_PATH.
#
# Environment: LIBRDKAFKA_FLOOR (2.10.0), EOSAUDIT_CACHE, LIBRDKAFKA_REFRESH,
# LIBRDKAFKA_MIRROR (default: the machine's Debian mirror, else
# http://deb.debian.org/debian), LIBRDKAFKA_SYSTEM=1 (use the system's
# whatever its version: for experiments only).
set -euo pipefail

FLOOR="${LIBRDKAFKA_FLOOR:-2.10.0}"
if [ -n "${EOSAUDIT_CACHE:-}" ]; then
        CACHE="$EOSAUDIT_CACHE"
elif [ "$(id -u)" -eq 0 ]; then
        CACHE=/var/cache/eosaudit
else
        CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/eosaudit"
fi
SUITES="sid forky trixie-backports trixie"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

say() { echo "librdkafka.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }

# ver_ge A B: upstream version A >= B (dpkg's ordering).
ver_ge() { dpkg --compare-versions "$1" ge "$2"; }

system_ok() {
        [ "${LIBRDKAFKA_SYSTEM:-}" = 1 ] && return 0
        local v
        v="$(pkg-config --modversion rdkafka 2>/dev/null)" || return 1
        ver_ge "$v" "$FLOOR"
}

# The newest cached build at or above the floor: its prefix, or nothing.
cached_prefix() {
        local d v best= bestv=
        for d in "$CACHE"/librdkafka-*/; do
                [ -f "$d/.complete" ] || continue
                v="$(cat "$d/.complete")"
                ver_ge "$v" "$FLOOR" || continue
                if [ -z "$best" ] || ver_ge "$v" "$bestv"; then
                        best="${d%/}"
                        bestv="$v"
                fi
        done
        echo "$best"
}

# The machine's Debian mirror (its first non-security deb URI), so that a
# machine behind a local mirror uses it; else Debian's own.
mirror() {
        if [ -n "${LIBRDKAFKA_MIRROR:-}" ]; then
                echo "$LIBRDKAFKA_MIRROR"
                return
        fi
        local u
        u="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
                awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' |
                grep -v -- '-security' | grep -E '/debian/?$' | head -n 1)" || u=
        if [ -z "$u" ]; then
                u="$(grep -hE '^deb ' /etc/apt/sources.list \
                        /etc/apt/sources.list.d/*.list 2>/dev/null |
                        sed -E 's/\[[^]]*\]//' | awk '{ print $2 }' |
                        grep -v -- '-security' | grep -E '/debian/?$' |
                        head -n 1)" || u=
        fi
        echo "${u:-http://deb.debian.org/debian}"
}

# apt-get/apt-cache with a private sources list, state and cache: nothing
# of the machine's apt configuration is read or written but the keyring.
APT_DIR="$CACHE/apt"
apt_private() {
        local tool="$1"
        shift
        "$tool" -q \
                -o Dir::Etc::SourceList="$APT_DIR/sources.list" \
                -o Dir::Etc::SourceParts=/dev/null \
                -o Dir::Etc::Preferences=/dev/null \
                -o Dir::Etc::PreferencesParts=/dev/null \
                -o Dir::State="$APT_DIR/state" \
                -o Dir::State::Lists="$APT_DIR/state/lists" \
                -o Dir::State::status=/dev/null \
                -o Dir::Cache="$APT_DIR/cache" \
                -o APT::Sandbox::User=root \
                -o Debug::NoLocking=1 "$@"
}

build() {
        local m s ver up src prefix log
        [ -r "$KEYRING" ] || die "$KEYRING missing (Debian's package debian-archive-keyring)"
        command -v apt-get >/dev/null || die "apt-get not found: build librdkafka >= $FLOOR yourself and set PKG_CONFIG_PATH"
        mkdir -p "$APT_DIR/state/lists/partial" "$APT_DIR/cache/archives/partial"
        m="$(mirror)"
        : >"$APT_DIR/sources.list"
        for s in $SUITES; do
                echo "deb-src [signed-by=$KEYRING] $m $s main" >>"$APT_DIR/sources.list"
        done
        say "looking for Debian's newest librdkafka source >= $FLOOR ($m: $SUITES)"
        apt_private apt-get update >"$APT_DIR/update.log" 2>&1 ||
                { tail -n 20 "$APT_DIR/update.log" >&2; die "apt-get update failed (log: $APT_DIR/update.log)"; }
        # The newest version any of the suites has, in dpkg's order.
        ver=
        for v in $(apt_private apt-cache showsrc librdkafka 2>/dev/null |
                awk '/^Version:/ { print $2 }'); do
                if [ -z "$ver" ] || dpkg --compare-versions "$v" gt "$ver"; then
                        ver="$v"
                fi
        done
        [ -n "$ver" ] || die "no librdkafka source package found at $m"
        up="${ver#*:}"
        up="${up%-*}"
        ver_ge "$up" "$FLOOR" || die "Debian's newest librdkafka is $ver, below $FLOOR"
        prefix="$CACHE/librdkafka-$up"
        if [ -f "$prefix/.complete" ]; then
                echo "$prefix"
                return
        fi
        src="$CACHE/src/librdkafka-$ver"
        rm -rf "$src" "$prefix"
        mkdir -p "$src"
        say "fetching librdkafka $ver (source package) ..."
        (cd "$src" && apt_private apt-get source --download-only "librdkafka=$ver") \
                >"$src.fetch.log" 2>&1 ||
                { tail -n 20 "$src.fetch.log" >&2; die "apt-get source failed (log: $src.fetch.log)"; }
        # The upstream tarball alone: Debian's patches only swap bundled
        # cJSON and nanopb for the distribution's.
        tar -xf "$src"/librdkafka_"$up".orig.tar.* -C "$src" ||
                die "cannot unpack $src/librdkafka_$up.orig.tar.*"
        local tree
        tree="$(find "$src" -mindepth 1 -maxdepth 1 -type d | head -n 1)"
        [ -x "$tree/configure" ] || die "no configure script in $tree"
        log="$src.build.log"
        say "building librdkafka $up into $prefix (once; log: $log) ..."
        (
                cd "$tree"
                ./configure --prefix="$prefix" --enable-ssl --enable-gssapi \
                        --enable-zstd --enable-lz4-ext --enable-zlib --enable-curl
                make -C src -j"$(nproc)"
                make -C src install
        ) >"$log" 2>&1 || { tail -n 30 "$log" >&2; die "librdkafka $up did not build (log: $log)"; }
        [ -f "$prefix/lib/pkgconfig/rdkafka.pc" ] || die "no rdkafka.pc under $prefix"
        echo "$up" >"$prefix/.complete"
        rm -rf "$src"
        say "librdkafka $up ready in $prefix"
        echo "$prefix"
}

ensure() {
        system_ok && return 0
        local p
        p="$(cached_prefix)"
        if [ -n "$p" ] && [ "${LIBRDKAFKA_REFRESH:-}" != 1 ]; then
                return 0
        fi
        mkdir -p "$CACHE"
        # One build at a time per cache (two checkouts may start together).
        exec 9>"$CACHE/.librdkafka.lock"
        flock 9
        p="$(cached_prefix)"
        if [ -n "$p" ] && [ "${LIBRDKAFKA_REFRESH:-}" != 1 ]; then
                return 0
        fi
        build >/dev/null
}

case "${1:-ensure}" in
ensure)
        ensure
        ;;
prefix)
        system_ok || cached_prefix
        ;;
make-vars)
        # For the Makefile: the headers as system headers (librdkafka's
        # trip -Wignored-qualifiers under -Werror), the library with an
        # rpath to the cache.
        if system_ok; then
                echo "RDKAFKA_CFLAGS := $(pkg-config --cflags rdkafka | sed 's/-I/-isystem /g')"
                echo "RDKAFKA_LIBS := $(pkg-config --libs rdkafka)"
        else
                p="$(cached_prefix)"
                [ -n "$p" ] || die "no librdkafka >= $FLOOR: run $0 first"
                echo "RDKAFKA_PREFIX := $p"
                echo "RDKAFKA_CFLAGS := -isystem $p/include"
                echo "RDKAFKA_LIBS := -L$p/lib -Wl,-rpath,$p/lib -lrdkafka"
        fi
        ;;
*)
        die "unknown command '$1' (ensure, prefix, make-vars)"
        ;;
esac
