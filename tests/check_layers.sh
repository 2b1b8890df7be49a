#!/usr/bin/env bash
# Fails when an #include points up a layer (docs/INTERNALS.md "Layers"):
#
#   base  <-  dedup  <-  auditor  <-  http  <-  cmd
#   base  <-  dedup  <-  producer <-  cmd
#
# A folder may include its own headers and those of the layers below it,
# never one above or beside it.  dedup/ is the pure engine: it includes
# nothing of the project but itself and base/'s pure helpers, and no system
# header that does I/O, reads a clock or talks to SQLite or Kafka.
set -euo pipefail
cd "$(dirname "$0")/.."

# folder -> the project folders its files may include
declare -A allowed=(
        [base]="base"
        [dedup]="dedup base"
        [auditor]="base dedup auditor"
        [http]="base dedup auditor http"
        [producer]="base dedup producer"
        [cmd]="base dedup auditor http producer cmd"
)
impure='stdio|time|sys/time|unistd|fcntl|pthread|sqlite3|librdkafka/rdkafka|microhttpd|jansson|sys/mman'

bad=0
for layer in "${!allowed[@]}"; do
        while IFS= read -r hit; do
                [ -n "$hit" ] || continue
                file=${hit%%:*}
                inc=$(printf '%s\n' "$hit" | sed -E 's/.*#include[[:space:]]+"([^"]+)".*/\1/')
                # resolve the include against the including file's folder
                target=$(realpath -m --relative-to=. "$(dirname "$file")/$inc")
                top=${target%%/*}
                [ "$target" = "$top" ] && top=$layer # a file at the top level
                ok=0
                for a in ${allowed[$layer]}; do
                        [ "$top" = "$a" ] && ok=1
                done
                if [ "$ok" = 0 ]; then
                        echo "layering: $hit (the $layer layer may include only: ${allowed[$layer]})"
                        bad=1
                fi
        done < <(git ls-files -- "$layer/*.c" "$layer/*.h" | xargs -r grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' || true)
done

# The pure set: dedup/'s files and the base/ modules they use (header and
# .c), which may include nothing of the project but their own header.
pure=$(git ls-files -- 'dedup/*.c' 'dedup/*.h')
for m in $(git ls-files -- 'dedup/*.c' 'dedup/*.h' | xargs -r sed -nE \
        's@^[[:space:]]*#[[:space:]]*include[[:space:]]+"\.\./base/([^"]+)\.h".*@\1@p' |
        sort -u); do
        pure="$pure $(git ls-files -- "base/$m.h" "base/$m.c")"
        if hits=$(git ls-files -- "base/$m.h" "base/$m.c" |
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
echo "check_layers: every #include points down a layer"
