# flow_lib.sh - helpers of the flow audit's integration tests (t_71,
# t_72), sourced after lib.sh: scan_flow, fget, assert_f, evidence_count.

# scan_flow ARGS...: eosaudit scan --json with ARGS into $IT_TMP/scan.json
# (its evidence lists every bad record: too long for an argument), stderr
# into $IT_TMP/scan.err.  Sets SCAN_RC; exit status 2 ends the test.
scan_flow() {
        SCAN_RC=0
        "$EOSAUDIT" scan -b "$BOOTSTRAP" --json --no-progress "$@" \
                >"$IT_TMP/scan.json" 2>"$IT_TMP/scan.err" || SCAN_RC=$?
        log "scan $* -> exit $SCAN_RC"
        sed 's/^/#   stderr: /' "$IT_TMP/scan.err"
        python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
f = d.get("flow", {})
f.pop("evidence", None)
print("#   flow:", json.dumps(f, sort_keys=True))' "$IT_TMP/scan.json" ||
                die "scan $* printed no JSON object (exit $SCAN_RC)"
        [ "$SCAN_RC" != 2 ] || die "scan $* failed (exit 2)"
}

# fget PATH: the value at PATH of the last scan_flow's JSON.
fget() {
        python3 -c 'import json, sys
v = json.load(open(sys.argv[2]))
for k in sys.argv[1].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(json.dumps(v) if isinstance(v, (bool, type(None), dict, list)) else v)' \
                "$1" "$IT_TMP/scan.json"
}

# assert_f PATH WANT
assert_f() {
        local got
        got="$(fget "$1" 2>/dev/null)" || got="<no $1>"
        assert_eq "scan.$1" "$2" "$got"
}

# evidence_count PYEXPR: evidence items x for which PYEXPR holds.
evidence_count() {
        python3 -c 'import json, sys
e = json.load(open(sys.argv[2]))["flow"]["evidence"]
print(sum(1 for x in e if eval(sys.argv[1])))' "$1" "$IT_TMP/scan.json"
}
