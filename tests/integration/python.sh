# python.sh - sourced by run.sh and lib.sh: python3 resolved once.  The
# tests call python3 a thousand times or so (json_get, assert_scan, the
# oracles); when python3 on PATH is a version manager's shim (pyenv's is
# a bash script) each call costs some 0.2 s more than the interpreter.
# Puts first on PATH $BUILD/test-output/integration/.python, whose python3
# execs the interpreter the shim chose (sys.executable), for the tests and
# what they start: the same interpreter, found once.  Needs BUILD.
# shellcheck shell=bash

if [ -z "${IT_PY_DIR:-}" ]; then
        it_py="$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)"
        if [ -x "$it_py" ] && [ "$(command -v python3)" != "$it_py" ]; then
                IT_PY_DIR="$BUILD/test-output/integration/.python"
                mkdir -p "$IT_PY_DIR"
                printf '#!/bin/sh\nexec "%s" "$@"\n' "$it_py" >"$IT_PY_DIR/python3.$$"
                chmod 755 "$IT_PY_DIR/python3.$$"
                mv -f "$IT_PY_DIR/python3.$$" "$IT_PY_DIR/python3"
                PATH="$IT_PY_DIR:$PATH"
                export PATH
        else
                IT_PY_DIR=none
        fi
        export IT_PY_DIR
        unset it_py
fi
