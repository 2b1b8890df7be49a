#!/usr/bin/env bash
# The deployment files, without a broker, systemd or a Docker engine:
#  - `make install` into a temporary DESTDIR (PREFIX /usr/local and /usr),
#    the installed tree, the documentation with every document of docs/
#    and the links between them resolving, and `make uninstall` (which
#    keeps the admin's eosaudit.conf);
#  - deploy/systemd/eosaudit.service: `systemd-analyze verify` of the
#    installed unit (with man:eosaudit(1) resolved from DESTDIR), the
#    hardening directives, `systemd-analyze security` exposure;
#  - docs/eosaudit.1 renders without warnings and names every command,
#    flag and configuration key;
#  - docs/CONFIG.md, docs/FLAGS.md, deploy/eosaudit.conf.example and the
#    man page's OPTIONS sections are what `eosaudit config-help` generates
#    from the option table (docs/generate.sh --check);
#  - deploy/docker/Dockerfile and compose.yaml, checked by parsers (no
#    engine runs here).
source "$(dirname "$0")/lib.sh"

# Tools come from deploy/install-deps.sh's list; install what is missing.
for tool in systemd-analyze groff man promtool; do
        command -v "$tool" >/dev/null 2>&1 && continue
        log "$tool missing: running deploy/install-deps.sh"
        "$ROOT/deploy/install-deps.sh" || die "install-deps.sh failed"
        break
done
for tool in systemd-analyze groff man promtool make; do
        command -v "$tool" >/dev/null 2>&1 || die "$tool not found after install-deps.sh"
done
PY=python3
"$PY" -c 'import yaml' 2>/dev/null || PY=/usr/bin/python3
"$PY" -c 'import yaml' 2>/dev/null || die "python3 yaml not found (Debian package python3-yaml)"

# --- make install / uninstall ----------------------------------------------

# The binary counts as built: this test builds nothing (make -o).
mk() { make -s -C "$ROOT" BUILD="$BUILD" -o "$BUILD/eosaudit" "$@"; }

D1="$IT_TMP/destdir-local"
mk install DESTDIR="$D1" >"$IT_TMP/install1.log" 2>&1 ||
        { cat "$IT_TMP/install1.log"; die "make install failed"; }
assert_eq "installed tree (PREFIX=/usr/local), besides the documentation" \
"etc/eosaudit/eosaudit.conf.example
usr/local/bin/eosaudit
usr/local/lib/systemd/system/eosaudit.service
usr/local/share/man/man1/eosaudit.1" \
        "$(cd "$D1" && find . -type f | sed 's|^\./||' |
                grep -v '^usr/local/share/doc/' | LC_ALL=C sort)"
# The documentation keeps the repository's layout: the README, every
# document of docs/ as it is, the header contract, the alert rules and the
# dashboard, and every relative link of them resolves there but the one to
# the container's build folder (the image is built from the repository).
DOC="$D1/usr/local/share/doc/eosaudit"
for f in README.md schema/HEADERS.md deploy/prometheus/alerts.yml \
        deploy/grafana/eosaudit.json $(cd "$ROOT" && ls docs/*.md); do
        assert_true "documentation: $f installed as it is" \
                cmp "$ROOT/$f" "$DOC/$f"
done
assert_eq "documentation: links that do not resolve where installed" \
        "docs/OPERATIONS.md -> ../deploy/docker/" \
        "$(python3 - "$DOC" <<'PY'
import glob, os, re, sys
root = sys.argv[1]
for f in sorted(glob.glob(root + "/**/*.md", recursive=True)):
    text = open(f, encoding="utf-8").read()
    for m in re.finditer(r'\]\(([^)#\s]+)[^)]*\)|src="([^"]+)"', text):
        t = m.group(1) or m.group(2)
        if re.match(r"[a-z]+:", t):
            continue
        if not os.path.exists(os.path.join(os.path.dirname(f), t)):
            print("%s -> %s" % (os.path.relpath(f, root), t))
PY
)"
assert_eq "binary mode" 755 "$(stat -c %a "$D1/usr/local/bin/eosaudit")"
assert_eq "unit mode" 644 "$(stat -c %a "$D1/usr/local/lib/systemd/system/eosaudit.service")"
assert_true "installed binary runs" "$D1/usr/local/bin/eosaudit" version
assert_true "installed binary is the built one" cmp "$BUILD/eosaudit" "$D1/usr/local/bin/eosaudit"
assert_true "example configuration installed as is" \
        cmp "$ROOT/deploy/eosaudit.conf.example" "$D1/etc/eosaudit/eosaudit.conf.example"
assert_eq "ExecStart (PREFIX=/usr/local)" \
        "ExecStart=/usr/local/bin/eosaudit serve --config /etc/eosaudit/eosaudit.conf" \
        "$(grep '^ExecStart=' "$D1/usr/local/lib/systemd/system/eosaudit.service")"

D2="$IT_TMP/destdir-usr"
mk install DESTDIR="$D2" PREFIX=/usr SYSCONFDIR=/etc/opt >"$IT_TMP/install2.log" 2>&1 ||
        { cat "$IT_TMP/install2.log"; die "make install PREFIX=/usr failed"; }
assert_true "PREFIX=/usr: binary" test -x "$D2/usr/bin/eosaudit"
assert_true "PREFIX=/usr: man page" test -f "$D2/usr/share/man/man1/eosaudit.1"
assert_true "SYSCONFDIR=/etc/opt: example configuration" \
        test -f "$D2/etc/opt/eosaudit/eosaudit.conf.example"
assert_eq "ExecStart (PREFIX=/usr SYSCONFDIR=/etc/opt)" \
        "ExecStart=/usr/bin/eosaudit serve --config /etc/opt/eosaudit/eosaudit.conf" \
        "$(grep '^ExecStart=' "$D2/usr/lib/systemd/system/eosaudit.service")"
echo "brokers = b:9092" >"$D2/etc/opt/eosaudit/eosaudit.conf"
mk uninstall DESTDIR="$D2" PREFIX=/usr SYSCONFDIR=/etc/opt >"$IT_TMP/uninstall.log" 2>&1 ||
        { cat "$IT_TMP/uninstall.log"; die "make uninstall failed"; }
assert_eq "after uninstall, only the admin's configuration is left" \
        "etc/opt/eosaudit/eosaudit.conf" \
        "$(cd "$D2" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)"
assert_true "uninstall removed the doc directory" test ! -e "$D2/usr/share/doc/eosaudit"

# --- the systemd unit --------------------------------------------------------

UNIT="$D1/usr/local/lib/systemd/system/eosaudit.service"
mkdir -p "$IT_TMP/unit"
# verify checks that ExecStart exists: point it at the DESTDIR binary.
sed "s|/usr/local/bin/eosaudit|$D1/usr/local/bin/eosaudit|" "$UNIT" >"$IT_TMP/unit/eosaudit.service"
out="$(MANPATH="$D1/usr/local/share/man" systemd-analyze verify "$IT_TMP/unit/eosaudit.service" 2>&1)"
rc=$?
echo "$out"
assert_eq "systemd-analyze verify (man page from DESTDIR)" 0 "$rc"
assert_eq "systemd-analyze verify says nothing" "" "$out"
out="$(systemd-analyze verify "$ROOT/deploy/systemd/eosaudit.service" 2>&1)"
log "verify without the binary and man page installed says: $out"
for d in DynamicUser=yes ProtectSystem=strict StateDirectory=eosaudit \
        NoNewPrivileges=yes PrivateTmp=yes ProtectHome=yes \
        'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX' CapabilityBoundingSet= \
        SystemCallFilter=@system-service WorkingDirectory=/var/lib/eosaudit \
        Restart=on-failure KillSignal=SIGTERM; do
        assert_true "unit has $d" grep -qxF "$d" "$UNIT"
done
sec="$(systemd-analyze security --offline=yes "$IT_TMP/unit/eosaudit.service" 2>&1)"
level="$(sed -n 's/.*Overall exposure level for eosaudit.service: \([0-9.]*\).*/\1/p' <<<"$sec")"
log "systemd-analyze security: exposure $level"
assert_true "exposure level $level <= 2.0" \
        awk -v l="${level:-99}" 'BEGIN { exit !(l + 0 <= 2.0) }'

# --- the man page --------------------------------------------------------------

MAN="$ROOT/docs/eosaudit.1"
assert_eq "groff -ww warnings" "" "$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)"
LC_ALL=C.UTF-8 MANWIDTH=200 man --warnings -l "$MAN" >"$IT_TMP/man.txt" 2>"$IT_TMP/man.err"
assert_eq "man -l exit status" 0 "$?"
assert_eq "man -l warnings" "" "$(cat "$IT_TMP/man.err")"
# Rendered text with hyphenation and typographic hyphens undone.
sed -e 's/‐/-/g' -e 's/−/-/g' "$IT_TMP/man.txt" | tr -s ' ' >"$IT_TMP/man-plain.txt"
for s in "NAME" "SYNOPSIS" "DESCRIPTION" "COMMANDS" "EXIT STATUS" "FILES" "EXAMPLES" "CONFIGURATION FILE"; do
        assert_true "man page section $s" grep -q "^$s" "$IT_TMP/man-plain.txt"
done
missing=
for cmd in scan serve produce demo; do
        for f in $("$EOSAUDIT" "$cmd" --help | grep -oE -- '(^|[ ,])--[a-z][a-z-]+' | sed 's/^[ ,]*//' | sort -u); do
                grep -q -- "$f" "$IT_TMP/man-plain.txt" || missing="$missing $cmd:$f"
        done
done
assert_eq "flags of every --help missing from the man page" "" "${missing# }"
missing=
for c in $("$EOSAUDIT" --help | sed -n '/^commands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\).*/\1/p'); do
        grep -q "^ *$c" "$IT_TMP/man-plain.txt" || missing="$missing $c"
done
assert_eq "commands missing from the man page" "" "${missing# }"
missing=
for k in $("$EOSAUDIT" config-help | sed -n 's/^\([a-z][a-zA-Z.-]*\) = .*/\1/p'); do
        k="${k%.PROPERTY}"
        grep -qF "[$k" "$IT_TMP/man-plain.txt" || missing="$missing $k"
done
assert_eq "configuration keys missing from the man page" "" "${missing# }"

# --- generated documentation ----------------------------------------------------

assert_true "docs/CONFIG.md, docs/FLAGS.md, deploy/eosaudit.conf.example and the man page's OPTIONS are what config-help generates" \
        "$ROOT/docs/generate.sh" --check "$EOSAUDIT"
assert_true "deploy/docker/eosaudit.conf is valid" \
        "$EOSAUDIT" config-help --check "$ROOT/deploy/docker/eosaudit.conf"

# --- Dockerfile and compose.yaml ------------------------------------------------

# Runtime libraries: the Debian packages owning what the binary links
# directly, found where the loader finds them (ldd: the rpath first).  The
# one library no package owns must be the librdkafka deploy/librdkafka.sh
# built (when the system's is too old): the image copies it from its build
# stage, so the packages owning what it links are runtime packages too, and
# the -dev packages of those, built from the same sources, build packages.
RDK_PREFIX="$("$ROOT/deploy/librdkafka.sh" prefix)"
owner() { # FILE: the package owning FILE (or its link's target), or nothing
        local p
        p="$(dpkg -S "$(readlink -f "$1")" 2>/dev/null | head -n 1 | cut -d: -f1)"
        [ -n "$p" ] || p="$(dpkg -S "$1" 2>/dev/null | head -n 1 | cut -d: -f1)"
        echo "$p"
}
libs_of() { # ELF: one line per library ELF links directly: PACKAGE FILE
        local so f
        for so in $(objdump -p "$1" | awk '$1 == "NEEDED" { print $2 }'); do
                # A sanitizer build (make test SANITIZE=...) links ASan/UBSan;
                # the image ships the plain build.
                case "$so" in libasan.so*|libubsan.so*|libtsan.so*) continue ;; esac
                f="$(ldd "$1" | awk -v s="$so" '$1 == s && $2 == "=>" { print $3; exit }')"
                [ -n "$f" ] || f="$(ldconfig -p | awk -v s="$so" '$1 == s { print $NF; exit }')"
                if [ -z "$f" ]; then echo "? $so"; continue; fi
                echo "$(owner "$f" | grep . || echo -) $f"
        done
}
needed= rdk_needed= rdk_lib=
while read -r pkg f; do
        [ "$pkg" != "?" ] || die "cannot find $f (linked by $EOSAUDIT)"
        if [ "$pkg" = - ]; then
                [ -n "$RDK_PREFIX" ] && [[ "$(readlink -f "$f")" == "$(readlink -f "$RDK_PREFIX")"/* ]] ||
                        die "no package owns $f"
                rdk_lib="$f"
                continue
        fi
        needed="$needed $pkg"
done <<<"$(libs_of "$EOSAUDIT")"
if [ -n "$rdk_lib" ]; then
        while read -r pkg f; do
                [ "$pkg" != "?" ] || die "cannot find $f (linked by $rdk_lib)"
                [ "$pkg" != - ] || die "no package owns $f (linked by $rdk_lib)"
                rdk_needed="$rdk_needed $pkg"
        done <<<"$(libs_of "$rdk_lib")"
        log "librdkafka from deploy/librdkafka.sh ($rdk_lib) links:$rdk_needed"
fi
needed="$(echo $needed $rdk_needed | tr ' ' '\n' | sort -u | tr '\n' ' ')"
# Build packages: owners of the pkg-config files the Makefile asks for,
# and of the allocator's link library.
devpkgs=
for pc in libmicrohttpd sqlite3 jansson; do
        f="$(pkg-config --variable=pcfiledir "$pc")/$pc.pc"
        devpkgs="$devpkgs $(dpkg -S "$f" | head -n 1 | cut -d: -f1)"
done
f="$(realpath -s "$(gcc -print-file-name=libtcmalloc_minimal.so)")"
devpkgs="$devpkgs $(dpkg -S "$f" 2>/dev/null | head -n 1 | cut -d: -f1)"
if [ -n "$rdk_lib" ]; then
        # The bootstrap: each installed -dev package built from the source
        # of a package the library needs, and what librdkafka.sh fetches
        # Debian's source package with.
        for pkg in $rdk_needed; do
                [ "$pkg" = libc6 ] && continue
                src="$(dpkg-query -W -f '${source:Package}' "$pkg")"
                devpkgs="$devpkgs $(dpkg-query -W -f '${Package} ${source:Package} ${db:Status-Abbrev}\n' |
                        awk -v s="$src" '$2 == s && $1 ~ /-dev$/ && $3 == "ii" { print $1 }' | tr '\n' ' ')"
        done
        devpkgs="$devpkgs dpkg-dev debian-archive-keyring ca-certificates"
else
        f="$(pkg-config --variable=pcfiledir rdkafka)/rdkafka.pc"
        devpkgs="$devpkgs $(dpkg -S "$f" | head -n 1 | cut -d: -f1)"
fi
log "runtime packages (this host's names):$needed"
log "build packages (this host's names):$devpkgs"

# The image's Debian (podman.sh's base suite, the Dockerfile's default
# images) may name them otherwise: its name for each is the package built
# from the same source and named alike, or with Debian 13's t64 suffix
# (the 64-bit time_t transition: libssl3 -> libssl3t64), looked up in that
# suite's own index (podman.sh apt-cache: a private apt state).
SUITE="$(sed -n 's/^SUITE="${BASE_SUITE:-\([a-z]*\)}"$/\1/p' "$ROOT/deploy/docker/podman.sh")"
[ -n "$SUITE" ] || die "no default suite in deploy/docker/podman.sh"
export BASE_SUITE="$SUITE"
"$ROOT/deploy/docker/podman.sh" apt-cache policy >/dev/null || die "no package index of $SUITE"
to_suite() { # VAR PKG...: VAR = the PKGs' names in $SUITE (one apt-cache)
        local var="$1" p c src known out=
        shift
        # "PACKAGE SOURCE" of each candidate the suite has.
        known="$(for p in "$@"; do echo "$p ${p}t64"; done | tr ' ' '\n' | sort -u |
                xargs "$ROOT/deploy/docker/podman.sh" apt-cache show --no-all-versions 2>/dev/null |
                awk '/^Package:/ { p = $2; s = $2 } /^Source:/ { s = $2 }
                     /^$/ { if (p != "") print p, s; p = "" } END { if (p != "") print p, s }')"
        for p in "$@"; do
                src="$(dpkg-query -W -f '${source:Package}' "$p")"
                c="$(awk -v a="$p" -v b="${p}t64" -v s="$src" \
                        '($1 == a || $1 == b) && $2 == s { print $1; exit }' <<<"$known")"
                [ -n "$c" ] || die "$SUITE has no package for this host's $p (source $src)"
                out="$out $c"
        done
        printf -v "$var" '%s' "$(tr ' ' '\n' <<<"$out" | grep . | sort -u | tr '\n' ' ')"
}
to_suite needed $needed
to_suite devpkgs $devpkgs
log "runtime packages ($SUITE):$needed"
log "build packages ($SUITE):$devpkgs"

lint="$("$PY" - "$ROOT" "$needed" "$devpkgs" "$rdk_lib" "$SUITE" <<'PYEOF'
import glob, os, re, shlex, subprocess, sys, yaml
root, needed, devpkgs = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
rdk_lib, suite = sys.argv[4], sys.argv[5]
bad = 0
def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    bad += not ok

# ---- Dockerfile: instructions, continuation lines joined, comments dropped.
ddir = os.path.join(root, "deploy/docker")
text = open(os.path.join(ddir, "Dockerfile")).read()
instrs, cur = [], ""
for line in text.splitlines():
    s = line.strip()
    if s.startswith("#") or (not s and not cur):
        continue
    if s.endswith("\\"):
        cur += s[:-1] + " "
        continue
    cur += s
    kw, _, rest = cur.strip().partition(" ")
    instrs.append((kw.upper(), rest.strip()))
    cur = ""
check(cur == "", "Dockerfile: no dangling continuation")
known = {"FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY",
         "ENTRYPOINT", "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD",
         "STOPSIGNAL", "HEALTHCHECK", "SHELL"}
for kw, _ in instrs:
    check(kw in known, "Dockerfile: known instruction %s" % kw)
stages = []
# ARGs before the first FROM name the base images (BUILD_IMAGE=...): a FROM
# of ${NAME} is checked with NAME's default, the image Docker pulls.
preargs = {}
for kw, rest in instrs:
    if kw == "ARG" and not stages:
        k, _, v = rest.partition("=")
        check(bool(v), "Dockerfile: ARG %s before FROM has a default" % k)
        preargs[k] = v
    elif kw == "FROM":
        m = re.match(r"^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$", rest, re.I)
        check(m is not None, "Dockerfile: FROM %s parses" % rest)
        img = re.sub(r"^\$\{(\w+)\}$", lambda a: preargs.get(a.group(1), a.group(0)),
                     m.group(1))
        stages.append({"image": img, "name": m.group(2), "ins": []})
    else:
        check(bool(stages), "Dockerfile: %s after a FROM" % kw)
        stages[-1]["ins"].append((kw, rest))
check(len(stages) >= 2, "Dockerfile: multi-stage (%d stages)" % len(stages))
names = [s["name"] for s in stages if s["name"]]
check(len(names) == len(set(names)), "Dockerfile: stage names unique")
for s in stages:
    check(re.match(r"^debian:%s(-slim)?(@sha256:[0-9a-f]{64})?$" % suite, s["image"]) is not None,
          "Dockerfile: stage %s from debian:%s, podman.sh's base suite (%s)" % (s["name"], suite, s["image"]))
build, final = stages[0], stages[-1]

def runs(stage):
    return " ".join(r for k, r in stage["ins"] if k == "RUN")
def apt_pkgs(stage):
    pkgs = set()
    for k, r in stage["ins"]:
        if k != "RUN":
            continue
        for cmd in re.split(r"&&|;", r):
            w = shlex.split(cmd)
            if "apt-get" in w and "install" in w:
                pkgs |= {x for x in w[w.index("install") + 1:] if not x.startswith("-")}
    return pkgs

bpk, fpk = apt_pkgs(build), apt_pkgs(final)
for p in devpkgs:
    check(p in bpk, "Dockerfile: build stage installs %s" % p)
check(re.search(r"\bmake\b", runs(build)) is not None, "Dockerfile: build stage runs make")
for p in needed:
    check(p == "libc6" or p in fpk, "Dockerfile: runtime stage installs %s" % p)
check(not any(p.endswith("-dev") or p == "build-essential" for p in fpk),
      "Dockerfile: no -dev package in the runtime stage")
# librdkafka from deploy/librdkafka.sh (the system's is too old): the build
# stage runs it alone before the sources come (a layer every commit
# reuses), takes build/deps.mk from it after, and stages the library it
# built for the runtime stage (t_95 runs ldd in the image).
if rdk_lib:
    bi = build["ins"]
    def at(pred):
        return next((i for i, (k, r) in enumerate(bi) if pred(k, r)), -1)
    i_sh = at(lambda k, r: k == "COPY" and shlex.split(r)[:1] == ["deploy/librdkafka.sh"])
    i_boot = at(lambda k, r: k == "RUN" and re.search(r"^deploy/librdkafka\.sh(\s|$)", r))
    i_all = at(lambda k, r: k == "COPY" and shlex.split(r)[:1] == ["."])
    i_vars = at(lambda k, r: k == "RUN" and re.search(r"librdkafka\.sh make-vars\s*>\s*build/deps\.mk", r))
    check(0 <= i_sh < i_boot, "Dockerfile: the build stage copies deploy/librdkafka.sh alone and runs it")
    check(0 <= i_boot < i_all, "Dockerfile: the librdkafka bootstrap comes before COPY . .")
    check(i_all < i_vars, "Dockerfile: build/deps.mk from librdkafka.sh make-vars, after COPY . .")
    check("librdkafka.so.1" in runs(build), "Dockerfile: the build stage stages librdkafka.so.1")
    check(any("--from=build" in r and "eosaudit" not in r for k, r in final["ins"] if k == "COPY"),
          "Dockerfile: the runtime stage copies the library from the build stage")
# Every package a Dockerfile installs is one of the suite's (its index,
# through podman.sh apt-cache): a name from another release fails here.
stand_ins = []
for n in ("Dockerfile.kafka", "Dockerfile.prometheus"):
    t = open(os.path.join(ddir, n)).read()
    stand_ins.append(re.sub(r"\\\n", " ", t))
allp = set(bpk) | set(fpk)
for t in stand_ins:
    for line in t.splitlines():
        for cmd in re.split(r"&&|;", line):
            w = shlex.split(cmd, comments=True)
            if "apt-get" in w and "install" in w:
                allp |= {x for x in w[w.index("install") + 1:] if not x.startswith("-")}
pol = subprocess.run([os.path.join(ddir, "podman.sh"), "apt-cache", "policy"] + sorted(allp),
                     env=dict(os.environ, BASE_SUITE=suite), capture_output=True, text=True).stdout
cand = dict(re.findall(r"^(\S+):\n\s+Installed: .*\n\s+Candidate: (.*)$", pol, re.M))
for p in sorted(allp):
    check(cand.get(p, "(none)") != "(none)", "Dockerfile*: %s is a package of %s" % (p, suite))
users = [r for k, r in final["ins"] if k == "USER"]
check(bool(users), "Dockerfile: USER in the final stage")
if users:
    u = users[-1].split(":")[0]
    check(u not in ("root", "0"), "Dockerfile: final USER %s is not root" % users[-1])
hc = [r for k, r in final["ins"] if k == "HEALTHCHECK"]
check(bool(hc) and "/healthz" in hc[-1], "Dockerfile: HEALTHCHECK on /healthz")
if hc and "curl" in hc[-1]:
    check("curl" in fpk, "Dockerfile: the runtime stage has curl for the HEALTHCHECK")
vols = " ".join(r for k, r in final["ins"] if k == "VOLUME")
check("/var/lib/eosaudit" in vols, "Dockerfile: VOLUME /var/lib/eosaudit (the ledger)")
wd = [r for k, r in final["ins"] if k == "WORKDIR"]
check(bool(wd) and wd[-1] == "/var/lib/eosaudit", "Dockerfile: works in the ledger's volume")
expose = [r for k, r in final["ins"] if k == "EXPOSE"]
check(expose == ["8080"], "Dockerfile: EXPOSE 8080")
ep = " ".join(r for k, r in final["ins"] if k in ("ENTRYPOINT", "CMD"))
check("eosaudit" in ep and "serve" in ep and "/etc/eosaudit/eosaudit.conf" in ep,
      "Dockerfile: runs eosaudit serve --config /etc/eosaudit/eosaudit.conf")
for s in stages:
    for k, r in s["ins"]:
        if k == "ADD":
            check(not re.search(r"\b(https?|ftp)://", r), "Dockerfile: no ADD from a URL (%s)" % r)
        if k == "COPY":
            w = shlex.split(r)
            frm = [x.split("=", 1)[1] for x in w if x.startswith("--from=")]
            srcs = [x for x in w if not x.startswith("--")][:-1]
            if frm:
                check(frm[0] in names[:names.index(s["name"])] if s["name"] in names else frm[0] in names,
                      "Dockerfile: COPY --from=%s names an earlier stage" % frm[0])
            else:
                for src in srcs:
                    check(bool(glob.glob(os.path.join(root, src))),
                          "Dockerfile: COPY source %s exists" % src)
ign = open(os.path.join(ddir, "Dockerfile.dockerignore")).read().split()
for p in (".git", "build", "build-san", "deploy/kafka/lib"):
    check(p in ign, "Dockerfile.dockerignore excludes %s" % p)

# ---- compose.yaml
# ${VAR:-default} as compose substitutes it with VAR unset.
ctext = open(os.path.join(ddir, "compose.yaml")).read()
c = yaml.safe_load(re.sub(r"\$\{(\w+):-([^}]*)\}", r"\2", ctext))
check(not re.search(r"\$\{\w+\}", ctext), "compose: every variable has a default")
check(set(c) <= {"name", "services", "volumes", "networks", "configs", "secrets"},
      "compose: top-level keys %s" % sorted(c))
svc = c.get("services", {})
for s in ("kafka", "eosaudit", "prometheus", "grafana"):
    check(s in svc, "compose: service %s" % s)
svc_keys = {"image", "build", "environment", "healthcheck", "restart", "depends_on",
            "entrypoint", "command", "volumes", "ports", "profiles",
            "stop_grace_period", "user", "networks"}
for n, s in svc.items():
    check(set(s) <= svc_keys, "compose: %s uses known keys (%s)" % (n, sorted(set(s) - svc_keys)))
    check("image" in s or "build" in s, "compose: %s has an image or a build" % n)
    img = s.get("image", "")
    if "build" not in s:
        check(re.match(r"^[\w./-]+:[\w.-]+$", img) is not None and not img.endswith(":latest"),
              "compose: %s pins its image (%s)" % (n, img))
    for d, cond in (s.get("depends_on") or {}).items() if isinstance(s.get("depends_on"), dict) else \
            ((d, {}) for d in s.get("depends_on", [])):
        check(d in svc, "compose: %s depends on an existing service %s" % (n, d))
        check(cond.get("condition", "service_started") in
              ("service_started", "service_healthy", "service_completed_successfully"),
              "compose: %s -> %s condition" % (n, d))
    for v in s.get("volumes", []):
        src = v.split(":")[0]
        if src.startswith("."):
            check(os.path.exists(os.path.join(ddir, src)), "compose: %s mounts an existing %s" % (n, src))
        else:
            check(src in (c.get("volumes") or {}), "compose: %s's volume %s is declared" % (n, src))
    for p in s.get("ports", []):
        check(str(p).startswith("127.0.0.1:"), "compose: %s publishes %s on loopback only" % (n, p))
k = svc.get("kafka", {})
env = k.get("environment", {})
check(k.get("image", "").startswith("apache/kafka:"), "compose: kafka is apache/kafka")
check(set(str(env.get("KAFKA_PROCESS_ROLES", "")).split(",")) == {"broker", "controller"},
      "compose: kafka runs KRaft (broker,controller)")
check(bool(env.get("KAFKA_CONTROLLER_QUORUM_VOTERS")), "compose: KRaft quorum voters")
check("zookeeper" not in open(os.path.join(ddir, "compose.yaml")).read().lower(),
      "compose: no ZooKeeper")
e = svc.get("eosaudit", {})
b = e.get("build", {})
ctx = os.path.normpath(os.path.join(ddir, b.get("context", ".")))
check(os.path.exists(os.path.join(ctx, "Makefile")), "compose: eosaudit builds from the repository root")
check(os.path.normpath(os.path.join(ctx, b.get("dockerfile", ""))) == os.path.join(ddir, "Dockerfile"),
      "compose: eosaudit builds deploy/docker/Dockerfile")
check(any(v.split(":")[1] == "/etc/eosaudit/eosaudit.conf" for v in e.get("volumes", [])),
      "compose: eosaudit gets /etc/eosaudit/eosaudit.conf")
check(any(v.split(":")[1] == "/var/lib/eosaudit" for v in e.get("volumes", [])),
      "compose: the ledger is in a named volume")
conf = dict(l.split("=", 1) for l in
            (x.strip() for x in open(os.path.join(ddir, "eosaudit.conf"))) if l and not l.startswith("#"))
conf = {a.strip(): b.strip() for a, b in conf.items()}
port = conf.get("listen", "").rsplit(":", 1)[-1]
check(conf.get("listen", "").startswith("0.0.0.0:"), "compose: eosaudit listens on every interface")
check(conf.get("brokers") == "kafka:9092", "compose: eosaudit reads the kafka service")
# Prometheus: the rules are mounted where prometheus.yml reads them, and
# the job scrapes eosaudit's port.
pr = svc.get("prometheus", {})
pm = {v.split(":")[1]: v.split(":")[0] for v in pr.get("volumes", [])}
pcfg = yaml.safe_load(open(os.path.join(ddir, "prometheus.yml")))
for rf in pcfg.get("rule_files", []):
    check(rf in pm and os.path.normpath(os.path.join(ddir, pm[rf])) ==
          os.path.join(root, "deploy/prometheus/alerts.yml"),
          "compose: prometheus reads deploy/prometheus/alerts.yml at %s" % rf)
check(pcfg.get("rule_files"), "prometheus.yml has rule_files")
jobs = {j["job_name"]: j for j in pcfg.get("scrape_configs", [])}
check("eosaudit" in jobs, "prometheus.yml: job eosaudit (EosauditDown needs the name)")
tg = [t for sc in jobs.get("eosaudit", {}).get("static_configs", []) for t in sc.get("targets", [])]
check(tg == ["eosaudit:%s" % port], "prometheus.yml: scrapes eosaudit:%s (%s)" % (port, tg))
# Grafana: provisioned datasource and dashboard.
g = svc.get("grafana", {})
gm = {v.split(":")[1]: v.split(":")[0] for v in g.get("volumes", [])}
prov = gm.get("/etc/grafana/provisioning")
check(prov is not None, "compose: grafana gets the provisioning directory")
ds = yaml.safe_load(open(os.path.join(ddir, prov, "datasources/prometheus.yaml")))
check(any(d.get("type") == "prometheus" and d.get("url") == "http://prometheus:9090"
          for d in ds.get("datasources", [])), "grafana: Prometheus datasource")
db = yaml.safe_load(open(os.path.join(ddir, prov, "dashboards/eosaudit.yaml")))
paths = [p["options"]["path"] for p in db.get("providers", [])]
dash = [t for t, s in gm.items() if s.endswith("grafana/eosaudit.json")]
check(bool(dash) and os.path.dirname(dash[0]) in paths,
      "grafana: the dashboard is mounted where the provider reads (%s, %s)" % (dash, paths))
sys.exit(1 if bad else 0)
PYEOF
)"
echo "$lint"
IT_CHECKS=$((IT_CHECKS + $(grep -c '^ok ' <<<"$lint") + $(grep -c '^FAIL ' <<<"$lint")))
IT_FAILED=$((IT_FAILED + $(grep -c '^FAIL ' <<<"$lint")))
grep -q '^ok   grafana: the dashboard' <<<"$lint" || grep -q '^FAIL grafana: the dashboard' <<<"$lint" ||
        die "the Dockerfile/compose check did not run to its end"

# prometheus.yml of the stack, with the rules at their repository path.
sed "s|/etc/prometheus/eosaudit-alerts.yml|$ROOT/deploy/prometheus/alerts.yml|" \
        "$ROOT/deploy/docker/prometheus.yml" >"$IT_TMP/prometheus.yml"
assert_true "promtool check config (deploy/docker/prometheus.yml)" \
        promtool check config "$IT_TMP/prometheus.yml"
# t_95..t_97 build and run them with Podman; docs/OPERATIONS.md says how,
# for both.
assert_true "docs/OPERATIONS.md: how to build with Docker" \
        grep -qF 'docker build -f deploy/docker/Dockerfile' "$ROOT/docs/OPERATIONS.md"
assert_true "docs/OPERATIONS.md: how to build with Podman" \
        grep -qF 'deploy/docker/podman.sh build' "$ROOT/docs/OPERATIONS.md"
assert_true "docs/OPERATIONS.md: the compose stack with Podman" \
        grep -qF 'deploy/docker/podman.sh compose up' "$ROOT/docs/OPERATIONS.md"

finish
