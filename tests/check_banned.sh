#!/usr/bin/env bash
# Fails when a banned C call appears in the project's sources (curl-style
# list: unbounded or locale/thread-unsafe calls).
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/lsf.sh
banned='sprintf|vsprintf|strcpy|strcat|strncpy|atoi|atol|atoll|atof|strtok|strtok_r|sscanf|gets'
hits=$(lsf '*.c' '*.h' | xargs grep -nE "(^|[^_[:alnum:]])($banned)[[:space:]]*\(" || true)
if [ -n "$hits" ]; then
        echo "banned calls (use snprintf, strtoll/strtoull with an end pointer, memcpy with sizes):"
        echo "$hits"
        exit 1
fi
echo "check_banned: no banned calls"
