#!/usr/bin/env bash
# check_format.sh [--fix]: the C sources (.c, .h) that clang-format, with
# the tree's .clang-format, would change; exits 1 when there are any.
# With --fix, rewrites them instead (`make format`).  Not part of `make
# test`: the style was tuned with Debian 12's clang-format 14, and
# another version may wrap a few lines otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/lsf.sh
command -v clang-format >/dev/null || {
        echo "check_format: clang-format is not installed (apt-get install clang-format)" >&2
        exit 2
}
mapfile -t files < <(lsf '*.c' '*.h')
if [ "${1-}" = --fix ]; then
        clang-format -i -- "${files[@]}"
        echo "check_format: formatted ${#files[@]} files"
        exit 0
fi
bad=()
for f in "${files[@]}"; do
        clang-format -- "$f" | cmp -s - "$f" || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
        echo "check_format: ${#bad[@]} of ${#files[@]} files are not formatted (make format):"
        printf '  %s\n' "${bad[@]}"
        exit 1
fi
echo "check_format: ${#files[@]} files formatted"
