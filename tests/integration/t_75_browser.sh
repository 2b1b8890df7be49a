#!/usr/bin/env bash
# The dashboard in a real browser.  `eosaudit demo --listen` (librdkafka's
# mock cluster: no broker needed) produces records with injected faults
# while Debian's headless chromium, driven by playwright-core
# (tests/browser/dashboard.test.js), has the page open; once the demo has
# compared what it injected with what it found, the page's numbers must
# equal /api/v1/summary, the anomalies table must show the newest anomalies
# with their evidence, the lag table one row per partition, the chart must
# draw the ledger's history (and again after a reload), and the layout must
# hold at 1400x1000 and at 420x900.  The demo's second act (a pipeline,
# the flow audit) must report the duplicates of the processor's crash
# with their evidence, equal to the demo's own count of the extra sink
# copies.  The screenshots are kept in
# $BUILD/test-output/browser/dashboard-1400.png and dashboard-420.png (the
# ones in docs/ are copies).  Then SIGINT ends the demo, whose exit status
# is that of its comparison.
source "$(dirname "$0")/lib.sh"

BROWSER_DIR="$ROOT/tests/browser"
OUT="$BUILD/test-output/browser"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"

command -v node >/dev/null 2>&1 || die "node not found (deploy/install-deps.sh installs nodejs)"
[ -x "$CHROMIUM" ] || die "$CHROMIUM not found (deploy/install-deps.sh installs chromium)"
if [ ! -d "$BROWSER_DIR/node_modules/playwright-core" ]; then
        log "npm ci in tests/browser"
        (cd "$BROWSER_DIR" && npm ci --silent --no-audit --no-fund) ||
                die "npm ci failed in $BROWSER_DIR"
fi
rm -f "$OUT/dashboard-1400.png" "$OUT/dashboard-420.png"

# ~8 s of records at 1000/s, so that the page (its polls every 250 ms
# here, see dashboard.test.js) sees them come in.
bg_start DEMO "$EOSAUDIT" demo -n 8000 --rate 1000 --listen 127.0.0.1:0 \
        -q >"$IT_TMP/demo.out" 2>"$IT_TMP/demo.err"
URL=
for ((i = 0; i < 300; i++)); do
        URL="$(sed -n 's|^demo: dashboard at \(http://[^ ]*\)$|\1|p' "$IT_TMP/demo.out")"
        [ -n "$URL" ] && break
        kill -0 "$DEMO" 2>/dev/null || break
        sleep 0.1
done
[ -n "$URL" ] || { cat "$IT_TMP/demo.out" "$IT_TMP/demo.err"; die "the demo printed no dashboard URL"; }
log "dashboard at $URL"

DONE="$IT_TMP/demo.done"
bg_start NODE env DONE_FILE="$DONE" CHROMIUM="$CHROMIUM" \
        node "$BROWSER_DIR/dashboard.test.js" "$URL" "$OUT" >"$IT_TMP/browser.out" 2>&1

# The demo says so once its comparison is printed; it then lingers.
for ((i = 0; i < 1800; i++)); do
        grep -q '^demo: still serving the dashboard' "$IT_TMP/demo.out" && break
        kill -0 "$DEMO" 2>/dev/null || break
        sleep 0.1
done
sed -n '/^what the producer injected/,$p' "$IT_TMP/demo.out"
grep -q '^demo: still serving the dashboard' "$IT_TMP/demo.out" ||
        { cat "$IT_TMP/demo.err"; die "the demo did not finish"; }
touch "$DONE"

# Act 2, the pipeline: the processor, at-least-once, crashes after 1100
# records, its last batch written and its offsets not committed; the
# restart writes that batch again.  The demo counts the extra sink copies
# from the topics' watermarks, apart from the audit: the flow audit's
# duplicated records must be that count, one partial batch (batches of 200
# records: 1..200; 100 when every batch was full).
sed -n '/^demo: act 2/,/^  duplicated records/p' "$IT_TMP/demo.out"
assert_true "the demo says the mock cluster does not enforce transactions" \
        grep -q "mock cluster does not enforce transactions" "$IT_TMP/demo.out"
extra="$(sed -n 's/^  extra sink copies *counted \([0-9]*\) .*/\1/p' "$IT_TMP/demo.out")"
dup="$(sed -n 's/^  duplicated records *counted [0-9]* *flow audit \([0-9]*\) .*/\1/p' "$IT_TMP/demo.out")"
assert_eq "flow audit: duplicated = the extra sink copies counted from the watermarks" \
        "${extra:-none}" "${dup:-no flow line}"
assert_true "flow audit: duplicated in 1..200 (one partial batch), got '${dup}'" \
        test "${dup:-0}" -ge 1 -a "${dup:-0}" -le 200
assert_true "flow audit: evidence of a duplicated record (source and sink offsets)" \
        grep -qE "^    duplicated id '[^']+'  source demo-orders \[[0-9]+\] @[0-9]+  sink demo-orders-enriched \[[0-9]+\] @[0-9]+ \.\. demo-orders-enriched \[[0-9]+\] @[0-9]+ \(2 copies\)$" \
        "$IT_TMP/demo.out"

wait_pid "$NODE" 180
sed 's/^/  /' "$IT_TMP/browser.out"
assert_eq "browser test exit status" 0 "$WAIT_RC"
assert_true "browser checks passed" grep -q '^[0-9]* passed, 0 failed$' "$IT_TMP/browser.out"
assert_true "screenshot at $OUT/dashboard-1400.png" test -s "$OUT/dashboard-1400.png"
assert_true "screenshot at $OUT/dashboard-420.png" test -s "$OUT/dashboard-420.png"

kill -INT "$DEMO"
wait_pid "$DEMO" 20
assert_eq "demo exit status after SIGINT (injected = found, flow = counted)" 0 "$WAIT_RC"

finish
