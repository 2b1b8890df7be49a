#!/usr/bin/env bash
# Crash safety of serve's ledger: records flow into a 6-partition topic
# (one backlog run written before the audit starts, two more runs and an
# idempotent --zombie run written while it runs, all but the zombie with
# injected duplicates and gaps), and `serve --db` is killed with SIGKILL
# at random moments, 24 times, restarted after each kill.  Every third
# round dies instead inside a ledger commit, after the batch's writes and
# before COMMIT (EOSAUDIT_FAILPOINT_COMMIT=N, random N).  Commits are
# frequent (--commit-records 2000, --commit-interval-ms 100), so most kills
# land between, and some inside, the commits of a busy audit.  Odd rounds
# run --threads 2 (helpers parse and free while the consumer's thread
# judges and commits), even rounds --threads 1, failpoint rounds too
# (rounds 3, 9, ... with 2 threads, 6, 12, ... with 1): a ledger written
# by one must be taken up exactly by the other; the final scan runs with 2.
#
# Ground truth is what the producers report (delivered, duplicates_injected,
# gaps_injected, zombie_records).  Checked:
#  - after every kill: the ledger reads, never goes backwards, and each
#    partition's counted records equal its stored next offset (these
#    non-transactional producers leave no offset holes, so any record
#    counted twice or skipped across a crash shows up right there);
#  - at the end (a scan --db of the same ledger audits the rest and
#    confirms the open gaps): the totals equal the producers' counts
#    exactly; every offset of every partition is counted once; PRAGMA
#    integrity_check says ok; no anomaly row is stored twice; the anomaly
#    rows add up to the counters.
#
# IT_SEED=N replays a run's kill schedule (printed at the start).
source "$(dirname "$0")/lib.sh"

SEED="${IT_SEED:-$(( $(date +%s) % 32768 ))}"
RANDOM="$SEED"
log "seed $SEED (IT_SEED=$SEED replays the kill schedule)"

PARTS=6
KILLS=24       # rounds, each ending in a SIGKILL or a failpoint death
N_BACKLOG=20000 # before serve starts, at full speed
# The live producers write for ~22 s, about as long as the kill loop runs.
N_LIVE=15000 RATE_LIVE=700 # x2, while serve is killed and restarted
N_ZOMBIE=4000 RATE_ZOMBIE=190 # + N_ZOMBIE/10 stale-session writes
T="$(name main)"
DB="$IT_TMP/ledger.db"
# A window of 16,000 ids (generations of 1,000): about 50 generations
# close into files of their own and most are dropped again while the kills
# go on, so the files' order (durable before the commit that names them,
# unlinked after the one that deletes them) is killed at too.
SERVE_ARGS=(-b "$BOOTSTRAP" -t "$T" --db "$DB" --commit-records 2000
        --commit-interval-ms 100 --id-window 16000)
create_topic "$T" "$PARTS"

# The manifest (lib.sh): sums of what the producers reported.

# ledger_q SQL: the rows of SQL on the ledger, read-only ("|" between
# columns), or "ERR ..." if it cannot be read.
ledger_q() {
        python3 - "$DB" "$1" <<'EOF' 2>&1
import sqlite3, sys
try:
    db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=10)
    for r in db.execute(sys.argv[2]):
        print("|".join("" if v is None else str(v) for v in r))
except Exception as e:
    print("ERR", e)
EOF
}

# --- the backlog, then the producers that run during the kills ------------
produce -t "$T" --producer "$(name p1)" -n "$N_BACKLOG" \
        --inject-duplicates 0.01 --inject-gaps 0.005 --seed 801
[ "$PROD_RC" = 0 ] || die "backlog producer failed (exit $PROD_RC)"
manifest_add "$PROD_JSON"

bg_start PROD2 "$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --json -q \
        --producer "$(name p2)" -n "$N_LIVE" --rate "$RATE_LIVE" \
        --inject-duplicates 0.02 --inject-gaps 0.01 --seed 802 \
        >"$IT_TMP/p2.json" 2>"$IT_TMP/p2.err"
bg_start PROD3 "$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --json -q \
        --producer "$(name p3)" -n "$N_LIVE" --rate "$RATE_LIVE" \
        --inject-duplicates 0.005 --inject-gaps 0.02 --seed 803 \
        >"$IT_TMP/p3.json" 2>"$IT_TMP/p3.err"
bg_start PRODZ "$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --json -q \
        --producer "$(name pz)" -n "$N_ZOMBIE" --rate "$RATE_ZOMBIE" --zombie \
        >"$IT_TMP/pz.json" 2>"$IT_TMP/pz.err"

# --- kill, restart, kill ... ------------------------------------------------
fp_rounds=0 fp_deaths=0 sigkills=0 progressed=0
prev_records=0
loop_start=$SECONDS
for ((k = 1; k <= KILLS; k++)); do
        rlog="$IT_TMP/serve-$k.log"
        threads=$((k % 2 ? 2 : 1))
        if ((k % 3 == 0)); then
                fp=$((RANDOM % 8 + 1))
                fp_rounds=$((fp_rounds + 1))
                bg_start SERVE env EOSAUDIT_FAILPOINT_COMMIT="$fp" \
                        "$EOSAUDIT" serve "${SERVE_ARGS[@]}" \
                        --threads "$threads" >"$rlog" 2>&1
                wait_pid "$SERVE" 4
                if [ "$WAIT_RC" = 124 ]; then
                        kill -KILL "$SERVE"
                        wait_pid "$SERVE" 10
                        how="failpoint $fp did not fire in 4 s: SIGKILL"
                        sigkills=$((sigkills + 1))
                elif grep -q "failpoint: dying inside a ledger commit" "$rlog"; then
                        how="died in commit $fp (exit $WAIT_RC)"
                        fp_deaths=$((fp_deaths + 1))
                else
                        cat "$rlog"
                        die "round $k: serve exited $WAIT_RC without the failpoint"
                fi
        else
                ms=$((200 + RANDOM % 1301))
                bg_start SERVE "$EOSAUDIT" serve "${SERVE_ARGS[@]}" \
                        --threads "$threads" >"$rlog" 2>&1
                sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
                kill -0 "$SERVE" 2>/dev/null || {
                        cat "$rlog"
                        die "round $k: serve exited by itself before the kill"
                }
                kill -KILL "$SERVE"
                wait_pid "$SERVE" 10
                how="SIGKILL after $ms ms"
                sigkills=$((sigkills + 1))
        fi
        [ "$WAIT_RC" = 137 ] || die "round $k: serve exit status $WAIT_RC, not 137"

        # The ledger as the next serve will find it.
        rows="$(ledger_q "SELECT partition, records, next_offset FROM partitions
                WHERE topic = '$T' ORDER BY partition")"
        [[ "$rows" != ERR* ]] || die "round $k: ledger unreadable: $rows"
        records=0 bad=""
        while IFS='|' read -r p rec next; do
                [ -n "$p" ] || continue
                records=$((records + rec))
                [ "$rec" = "$next" ] || bad="$bad [$p] records $rec next_offset $next;"
        done <<<"$rows"
        log "round $k (+$((SECONDS - loop_start)) s, --threads $threads): $how; ledger: $records records"
        [ -z "$bad" ] || assert_eq "round $k: records == next_offset per partition" "" "$bad"
        [ "$records" -ge "$prev_records" ] ||
                assert_eq "round $k: ledger records not below the last round's" \
                        ">= $prev_records" "$records"
        [ "$records" -gt "$prev_records" ] && progressed=$((progressed + 1))
        prev_records=$records
done
log "kill loop: $((SECONDS - loop_start)) s, $sigkills SIGKILLs, $fp_deaths of" \
        "$fp_rounds failpoint rounds died inside a commit, $progressed rounds" \
        "moved the ledger"
# Not vacuous: the kills hit a working audit, and some hit a commit.
assert_true "at least $KILLS kills ($((sigkills + fp_deaths)))" \
        test $((sigkills + fp_deaths)) -ge "$KILLS"
assert_true "failpoint deaths inside a commit ($fp_deaths) >= 4" \
        test "$fp_deaths" -ge 4
assert_true "rounds that moved the ledger ($progressed) >= 8" \
        test "$progressed" -ge 8

for f in p2 p3 pz; do
        case "$f" in p2) pid="$PROD2" ;; p3) pid="$PROD3" ;; *) pid="$PRODZ" ;; esac
        wait_pid "$pid" 60
        cat "$IT_TMP/$f.err"
        [ "$WAIT_RC" = 0 ] || die "producer $f: exit status $WAIT_RC"
        j="$(cat "$IT_TMP/$f.json")"
        log "producer $f: $j"
        manifest_add "$j"
done
assert_eq "records the producers failed to deliver" 0 "$M_FAILED"
assert_eq "zombie records (N/10)" $((N_ZOMBIE / 10)) "$M_ZOMBIE"
log "manifest: delivered $M_DELIVERED, duplicates $M_DUPS, missing $M_GAPS," \
        "fenced $M_ZOMBIE"

# --- the rest of the audit, and the verdict --------------------------------
scan_json -t "$T" --db "$DB" --threads 2
assert_manifest_scan "after the kills"
assert_scan producers 4
ngap="$(json_get anomalies.gap)"
assert_true "gap events ($ngap) in 1..$M_GAPS" \
        test "$ngap" -ge 1 -a "$ngap" -le "$M_GAPS"
assert_scan anomalies_total $((M_DUPS + ngap + M_ZOMBIE))

# Every partition audited to its end, with no offset counted twice.
assert_eq "partitions whose records != next_offset" "" \
        "$(ledger_q "SELECT partition FROM partitions WHERE topic = '$T'
                AND records != next_offset")"
assert_eq "sum of next_offset (every offset once)" "$M_DELIVERED" \
        "$(ledger_q "SELECT SUM(next_offset) FROM partitions WHERE topic = '$T'")"

assert_eq "PRAGMA integrity_check" ok "$(sqlite3 "$DB" 'PRAGMA integrity_check')"
# Closed generations' files: one per row that names one, as long as it
# says, and no other.
nfiles="$(ledger_q "SELECT COUNT(*) FROM msgid_gens WHERE file_bytes IS NOT NULL")"
assert_true "closed id generations in files ($nfiles) >= 1" test "$nfiles" -ge 1
assert_eq "files in $DB-ids" "$nfiles" "$(find "$DB-ids" -name '*.ids' | wc -l)"
while IFS='|' read -r gen bytes; do
        assert_eq "size of $gen.ids" "$bytes" "$(stat -c %s "$DB-ids/$gen.ids" 2>&1)"
done < <(ledger_q "SELECT gen, file_bytes FROM msgid_gens WHERE file_bytes IS NOT NULL")
assert_eq "anomaly rows stored twice" 0 \
        "$(ledger_q "SELECT COUNT(*) - (SELECT COUNT(*) FROM (SELECT DISTINCT
                topic, partition, kind, producer, epoch, seq_lo, offset_lo
                FROM anomalies)) FROM anomalies")"
# The evidence adds up to the counters.
assert_eq "duplicate rows: sum(count)" "$M_DUPS" \
        "$(ledger_q "SELECT COALESCE(SUM(count), 0) FROM anomalies
                WHERE topic = '$T' AND kind = 'duplicate'")"
assert_eq "fenced rows: sum(count)" "$M_ZOMBIE" \
        "$(ledger_q "SELECT COALESCE(SUM(count), 0) FROM anomalies
                WHERE topic = '$T' AND kind = 'fenced'")"
assert_eq "gap rows: count, sum(count)" "$ngap|$M_GAPS" \
        "$(ledger_q "SELECT COUNT(*), COALESCE(SUM(count), 0) FROM anomalies
                WHERE topic = '$T' AND kind = 'gap'")"
assert_eq "rows of other kinds" "" \
        "$(ledger_q "SELECT kind, COUNT(*) FROM anomalies WHERE topic = '$T'
                AND kind NOT IN ('duplicate', 'fenced', 'gap') GROUP BY kind")"

finish
