# lsf.sh - sourced by the tests/check_*.sh scripts.
# shellcheck shell=bash
# lsf PATTERN...: the files git tracks that match (a pathspec, '*' across
# folders too), or, outside a git checkout (a tree copied without .git, as
# t_97's fresh machine has it), every file below that matches, so that the
# checks check the same files either way instead of finding none.
lsf() {
        if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
                git ls-files -- "$@"
        else
                local p
                for p in "$@"; do
                        find . -path "./$p" -type f | sed 's|^\./||'
                done | sort -u
        fi
}
