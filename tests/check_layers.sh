#!/usr/bin/env bash
# Fails when an #include points up a layer (docs/INTERNALS.md "Layers"),
# or when a folder's file map (the top comment of its internal.h) does not
# name its files:
#
#   base  <-  dedup  <-  auditor  <-  http  <-  cmd
#   base  <-  dedup  <-  producer <-  cmd
#
# and inside auditor/, one folder per module, lowest first:
#
#   ledger  <-  audit  <-  report  <-  group
#
# A folder may include its own headers and those of the layers below it,
# never one above or beside it.  dedup/ is the pure engine: it includes
# nothing of the project but itself and base/'s pure helpers, and no system
# header that does I/O, reads a clock or talks to SQLite or Kafka.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/lsf.sh

# layer -> the layers its files may include
declare -A allowed=(
        [base]="base"
        [dedup]="dedup base"
        [auditor/ledger]="base dedup auditor/ledger"
        [auditor/audit]="base dedup auditor/ledger auditor/audit"
        [auditor/report]="base dedup auditor/ledger auditor/audit auditor/report"
        [auditor/group]="base dedup auditor/ledger auditor/audit auditor/report auditor/group"
        [http]="base dedup auditor/ledger auditor/audit auditor/report auditor/group http"
        [producer]="base dedup producer"
        [cmd]="base dedup auditor/ledger auditor/audit auditor/report auditor/group http producer cmd"
)
impure='stdio|time|sys/time|unistd|fcntl|pthread|sqlite3|librdkafka/rdkafka|microhttpd|jansson|sys/mman'

# The layer of a path: its top folder, or auditor/ and the module's.
layer_of() {
        case $1 in
        auditor/*/*) printf '%s\n' "$1" | cut -d/ -f1-2 ;;
        *) printf '%s\n' "${1%%/*}" ;;
        esac
}

bad=0
# Every file of auditor/ is in a module's folder.
if hits=$(lsf 'auditor/*.c' 'auditor/*.h' | grep -E '^auditor/[^/]+$'); then
        echo "layering: files at the top of auditor/ (each belongs in a module's folder):"
        echo "$hits"
        bad=1
fi
for layer in "${!allowed[@]}"; do
        while IFS= read -r hit; do
                [ -n "$hit" ] || continue
                file=${hit%%:*}
                inc=$(printf '%s\n' "$hit" | sed -E 's/.*#include[[:space:]]+"([^"]+)".*/\1/')
                # resolve the include against the including file's folder
                target=$(realpath -m --relative-to=. "$(dirname "$file")/$inc")
                case $target in
                */*) top=$(layer_of "$target") ;;
                *) top=$layer ;; # a file at the top level
                esac
                ok=0
                for a in ${allowed[$layer]}; do
                        [ "$top" = "$a" ] && ok=1
                done
                if [ "$ok" = 0 ]; then
                        echo "layering: $hit (the $layer layer may include only: ${allowed[$layer]})"
                        bad=1
                fi
        done < <(lsf "$layer/*.c" "$layer/*.h" | xargs -r grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' || true)
done

# File maps: in a folder with an internal.h, the first comments of its
# internal headers (internal.h, *_internal.h) list every .c of the folder,
# one a line (" *   name.c  its job"; "api_*.c" lists those it matches),
# and list no .c the folder does not have.
for map in $(lsf '*/internal.h' | grep -vE '^(tests|bench)/'); do
        dir=$(dirname "$map")
        names=$(for h in $(lsf "$dir/internal.h" "$dir/*_internal.h"); do
                        awk '/\*\//{print; exit} {print}' "$h"
                done | grep -oE '^ \*[[:space:]]+[A-Za-z0-9_*]+\.c\b' |
                awk '{print $2}' | sort -u || true)
        for f in "$dir"/*.c; do # what the Makefile builds, tracked or not
                base=${f##*/}
                found=0
                for n in $names; do
                        # shellcheck disable=SC2053
                        [[ $base == $n ]] && found=1
                done
                if [ "$found" = 0 ]; then
                        echo "file map: $map does not name $base"
                        bad=1
                fi
        done
        for n in $names; do
                if ! compgen -G "$dir/$n" > /dev/null; then
                        echo "file map: $map names $n, which $dir/ does not have"
                        bad=1
                fi
        done
done

# The pure set: dedup/'s files and the base/ modules they use (header and
# .c), which may include nothing of the project but their own header.
pure=$(lsf 'dedup/*.c' 'dedup/*.h')
for m in $(lsf 'dedup/*.c' 'dedup/*.h' | xargs -r sed -nE \
        's@^[[:space:]]*#[[:space:]]*include[[:space:]]+"\.\./base/([^"]+)\.h".*@\1@p' |
        sort -u); do
        pure="$pure $(lsf "base/$m.h" "base/$m.c")"
        if hits=$(lsf "base/$m.h" "base/$m.c" |
                xargs -r grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' |
                grep -vF "\"$m.h\""); then
                echo "layering: base/$m is used by dedup/ and must stay pure:"
                echo "$hits"
                bad=1
        fi
done
if hits=$(printf '%s\n' $pure |
        xargs -r grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]+<($impure)\.h>"); then
        echo "layering: dedup/ is pure (no I/O, clock, SQLite or Kafka):"
        echo "$hits"
        bad=1
fi

[ "$bad" = 0 ] || exit 1
echo "check_layers: every #include points down a layer, every file map is true"
