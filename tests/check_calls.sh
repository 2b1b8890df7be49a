#!/usr/bin/env bash
# Fails when two files under auditor/ or dedup/ call each other (directly:
# each uses a symbol the other defines), from the objects of a build:
#
#   tests/check_calls.sh [BUILD]        (default build)
#
# A module's files form a stack, each calling only those below it (the
# order its internal.h's map lists them in); a pair that calls both ways
# is one job in two files, or a helper in the wrong one.
set -euo pipefail

# Pairs allowed to call each other, each "a.c b.c" (a before b) on a line
# of its own: none.  Listing one is for a move in several steps; a listed
# pair that no longer calls fails (take it off).
known=""
cd "$(dirname "$0")/.."
source tests/lsf.sh
build=${1:-build}

objs=$(lsf 'auditor/*.c' 'dedup/*.c' | sed "s@^@$build/@; s@\.c\$@.o@")
for o in $objs; do
        [ -f "$o" ] || { echo "check_calls: $o is not built"; exit 1; }
done

# "D file symbol" and "U file symbol" lines, then the pairs that use each
# other's symbols, both ways.
for o in $objs; do
        f=${o#"$build"/}
        f=${f%.o}.c
        nm -g "$o" | awk -v f="$f" '$1 == "U" {print "U", f, $2; next}
                $2 ~ /^[TDBRC]$/ {print "D", f, $3}'
done | awk -v known="$known" '
        BEGIN {
                n = split(known, kl, "\n")
                for (i = 1; i <= n; i++)
                        if (split(kl[i], ab, " ") == 2)
                                listed[ab[1], ab[2]] = 1
        }
        $1 == "D" { def[$3] = $2; next }
        { use[n] = $2; sym[n++] = $3 }
        END {
                for (i = 0; i < n; i++) {
                        d = def[sym[i]]
                        if (d != "" && d != use[i] && !((use[i], d) in calls))
                                calls[use[i], d] = sym[i]
                }
                bad = 0
                for (k in calls) {
                        split(k, ab, SUBSEP)
                        if (ab[1] < ab[2] && ((ab[2], ab[1]) in calls)) {
                                if ((ab[1], ab[2]) in listed) {
                                        seen[ab[1], ab[2]] = 1
                                        continue
                                }
                                printf "calls: %s and %s call each other " \
                                       "(%s -> %s, %s -> %s)\n", ab[1], ab[2],
                                       ab[1], calls[k], ab[2],
                                       calls[ab[2], ab[1]]
                                bad = 1
                        }
                }
                for (k in listed)
                        if (!(k in seen)) {
                                split(k, ab, SUBSEP)
                                printf "calls: %s and %s no longer call " \
                                       "each other: take them off the " \
                                       "known list\n", ab[1], ab[2]
                                bad = 1
                        }
                exit bad
        }' || exit 1
echo "check_calls: no two files of auditor/ or dedup/ call each other"
