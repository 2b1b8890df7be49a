#!/usr/bin/env bash
# The ledger's disk fills up under a running serve (a 3 MB tmpfs, filled
# with a filler file while records flow).  serve must
#  - log one clear error ("ledger commit failed, pausing the audit until it
#    succeeds: ... database or disk is full") and stay alive;
#  - not move the ledger's offsets past verdicts it could not record: the
#    stored offsets stop while Kafka's keep growing, and every stored
#    offset still matches the records counted up to it;
#  - resume by itself once space is back ("ledger commit succeeded again").
# Then the disk is filled again and serve gets SIGTERM while it cannot
# commit: it must exit promptly with status 2, saying the last batch will
# be audited again, and leave a consistent ledger.  A new serve after the
# filler is gone catches up, and the final scan --db reports exactly what
# the producer delivered.
#
# Why this is deterministic with SQLite's WAL: a commit only writes to the
# WAL file, and a WAL that was checkpointed and restarted is rewritten from
# its start, so a commit can succeed on a full disk as long as it fits in
# the WAL's existing size.  The WAL is checkpointed (by default) only at
# 1000 pages, 4 MB, which never fits on this 3 MB disk, so here the WAL
# only grows and the first commit after the disk is full fails.  (On a
# bigger disk, a full disk may take up to a WAL's worth of commits to show.)
# Each commit adds some 50-80 KB of WAL here (the records' message ids
# included), so commits are kept to one a second: the WAL peaks at about
# 1.6 MB, next to a 0.4 MB database.
#
# Where no tmpfs can be mounted (no root, or a container without mount
# privileges) the disk is the container's own /dev/shm: a private tmpfs of
# Podman's and Docker's default 64 MB, filled to its last byte the same
# way (the WAL argument above holds for any size: the WAL stays below its
# 4 MB checkpoint here).  A /dev/shm bigger than 256 MB is the host's,
# shared with everything else, and is not filled: the test fails instead.
source "$(dirname "$0")/lib.sh"

DISK="$IT_TMP/disk"
DB="$DISK/ledger.db"
T="$(name main)"
N=12000 RATE=600 # 20 s of producing
FAIL_MSG="ledger commit failed, pausing the audit until it succeeds"
OK_MSG="ledger commit succeeded again; the audit resumes"

# A run killed with SIGKILL may have left its tmpfs behind.
mountpoint -q "$DISK" 2>/dev/null && umount -l "$DISK"
mkdir -p "$DISK"
DISK_SHM=
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=3m tmpfs "$DISK" 2>"$IT_TMP/mount.err"; then
        DISK_MOUNTED=1
else
        why="$(cat "$IT_TMP/mount.err" 2>/dev/null)"
        shm_kb="$(df -k --output=size /dev/shm 2>/dev/null | tail -n 1 | tr -d ' ')"
        [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ -w /dev/shm ] &&
                [[ "$shm_kb" =~ ^[0-9]+$ ]] && [ "$shm_kb" -le 262144 ] ||
                die "cannot mount a tmpfs (${why:-not root}) and /dev/shm is no small private tmpfs (${shm_kb:-?} KB)"
        DISK_SHM="$(mktemp -d /dev/shm/eosaudit-t86.XXXXXX)" || die "cannot write to /dev/shm"
        DISK="$DISK_SHM"
        DB="$DISK/ledger.db"
        log "cannot mount a tmpfs (${why:-not root}): the disk is this container's /dev/shm ($shm_kb KB)"
fi
disk_umount() {
        if [ -n "$DISK_SHM" ]; then
                rm -rf "$DISK_SHM"
                DISK_SHM=
        fi
        [ "${DISK_MOUNTED:-0}" = 1 ] || return 0
        umount "$DISK" 2>/dev/null || umount -l "$DISK" ||
                echo "ERROR: cannot unmount $DISK"
        DISK_MOUNTED=0
}
# Runs at exit after lib.sh has stopped the background processes.
test_cleanup() { disk_umount; }

create_topic "$T" 3
SERVE_ARGS=(-b "$BOOTSTRAP" -t "$T" --db "$DB" --commit-interval-ms 1000)

# ledger_state: "records next_offsets..." of the topic, or "ERR ...".
ledger_state() {
        python3 - "$DB" "$T" <<'EOF' 2>&1
import sqlite3, sys
try:
    db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=10)
    rows = db.execute("SELECT records, next_offset FROM partitions "
                      "WHERE topic = ? ORDER BY partition", (sys.argv[2],)).fetchall()
    print(sum(r[0] for r in rows), " ".join(str(r[1]) for r in rows))
except Exception as e:
    print("ERR", e)
EOF
}
# ledger_consistent: every partition's records == next_offset.
ledger_consistent() {
        local s
        s="$(sqlite3 "file:$DB?mode=ro" "SELECT COUNT(*) FROM partitions
                WHERE topic = '$T' AND records != next_offset" 2>&1)"
        [ "$s" = 0 ]
}
# end_offsets: Kafka's high watermarks, as ledger_state lists offsets.
end_offsets() {
        local p
        for p in 0 1 2; do
                kcat -b "$BOOTSTRAP" -Q -t "$T:$p:-1" 2>/dev/null |
                        awk '/offset/ { print $NF }'
        done | paste -sd' '
}
# wait_log FILE TEXT SECONDS: waits for TEXT to appear in FILE.
wait_log() {
        local i
        for ((i = 0; i < $3 * 10; i++)); do
                grep -qF "$2" "$1" && return 0
                sleep 0.1
        done
        return 1
}
# fill: fills the disk with a filler file, to the last byte.
fill() {
        dd if=/dev/zero of="$DISK/filler" bs=4k 2>/dev/null
        dd if=/dev/zero of="$DISK/filler" bs=1 oflag=append conv=notrunc \
                2>/dev/null
        log "disk filled: $(df -k --output=avail "$DISK" | tail -1) KB free"
}

bg_start PROD "$EOSAUDIT" produce -b "$BOOTSTRAP" -t "$T" --json -q \
        --producer "$(name p)" -n "$N" --rate "$RATE" \
        --inject-duplicates 0.01 --inject-gaps 0.01 --seed 8601 \
        >"$IT_TMP/p.json" 2>"$IT_TMP/p.err"
bg_start SERVE "$EOSAUDIT" serve "${SERVE_ARGS[@]}" >"$IT_TMP/serve1.log" 2>&1
for ((i = 0; i < 100; i++)); do
        st="$(ledger_state)"
        [[ "$st" =~ ^[1-9] ]] && break
        sleep 0.1
done
log "serve running: ledger $st"
[[ "$st" =~ ^[1-9] ]] || die "serve did not commit anything: $st"

# --- the disk fills up ------------------------------------------------------
fill
wait_log "$IT_TMP/serve1.log" "$FAIL_MSG" 15
assert_true "serve logs: $FAIL_MSG" grep -qF "$FAIL_MSG" "$IT_TMP/serve1.log"
grep -F "$FAIL_MSG" "$IT_TMP/serve1.log"
assert_true "... and why: database or disk is full" \
        grep -q "$FAIL_MSG: .*database or disk is full" "$IT_TMP/serve1.log"
held="$(ledger_state)"
kafka1="$(end_offsets)"
sleep 3
kafka2="$(end_offsets)"
log "ledger (records offsets): $held; Kafka's ends: $kafka1 -> $kafka2"
assert_true "records still flow into Kafka ($kafka1 -> $kafka2)" \
        test "$kafka1" != "$kafka2"
assert_eq "the ledger's records and offsets do not move" "$held" \
        "$(ledger_state)"
assert_true "the stored offsets match the records counted" ledger_consistent
assert_true "serve is still running" kill -0 "$SERVE"
assert_eq "the error is logged once, not per retry" 1 \
        "$(grep -cF "$FAIL_MSG" "$IT_TMP/serve1.log")"

# --- space is back --------------------------------------------------------------
rm -f "$DISK/filler"
wait_log "$IT_TMP/serve1.log" "$OK_MSG" 10
assert_true "serve logs: $OK_MSG" grep -qF "$OK_MSG" "$IT_TMP/serve1.log"
for ((i = 0; i < 50; i++)); do
        [ "$(ledger_state)" != "$held" ] && break
        sleep 0.1
done
resumed="$(ledger_state)"
log "ledger after the resume: $resumed"
assert_true "the ledger moves again ($held -> $resumed)" \
        test "$resumed" != "$held"
assert_true "the stored offsets match the records counted" ledger_consistent

# --- full again, and SIGTERM while serve cannot commit ---------------------
sleep 1
fill
for ((i = 0; i < 150; i++)); do
        [ "$(grep -cF "$FAIL_MSG" "$IT_TMP/serve1.log")" -ge 2 ] && break
        sleep 0.1
done
assert_eq "serve logs the second failure" 2 \
        "$(grep -cF "$FAIL_MSG" "$IT_TMP/serve1.log")"
held="$(ledger_state)"
start=$SECONDS
kill -TERM "$SERVE"
wait_pid "$SERVE" 15
log "serve exit status $WAIT_RC after $((SECONDS - start)) s"
tail -n 3 "$IT_TMP/serve1.log"
assert_eq "SIGTERM while the ledger is full: exit status (within 15 s)" 2 \
        "$WAIT_RC"
assert_true "serve says the last batch will be audited again" \
        grep -q "the last batch could not be written to the ledger; it will be audited again on the next run" \
        "$IT_TMP/serve1.log"
assert_eq "the ledger kept its last committed state" "$held" "$(ledger_state)"
assert_true "the stored offsets match the records counted" ledger_consistent

# --- space back, a new serve catches up -------------------------------------
rm -f "$DISK/filler"
bg_start SERVE "$EOSAUDIT" serve "${SERVE_ARGS[@]}" >"$IT_TMP/serve2.log" 2>&1
wait_pid "$PROD" 60
cat "$IT_TMP/p.err"
[ "$WAIT_RC" = 0 ] || die "producer: exit status $WAIT_RC"
PROD_JSON="$(cat "$IT_TMP/p.json")"
log "producer: $PROD_JSON"
assert_prod failed 0
DELIVERED="$(json_get delivered "$PROD_JSON")"
for ((i = 0; i < 150; i++)); do
        [ "$(ledger_state | cut -d' ' -f1)" = "$DELIVERED" ] && break
        sleep 0.1
done
assert_eq "records in the new serve's ledger" "$DELIVERED" \
        "$(ledger_state | cut -d' ' -f1)"
kill -TERM "$SERVE"
wait_pid "$SERVE" 15
assert_eq "new serve: exit status after SIGTERM" 0 "$WAIT_RC"
log "disk: $(df -k --output=used "$DISK" | tail -1) KB used: $(ls -s "$DISK" | paste -sd' ')"
assert_eq "new serve: no commit failure" 0 \
        "$(grep -cF "$FAIL_MSG" "$IT_TMP/serve2.log")"

scan_json -t "$T" --db "$DB"
manifest_add "$PROD_JSON"
assert_manifest_scan "final scan"
assert_eq "PRAGMA integrity_check" ok "$(sqlite3 "$DB" 'PRAGMA integrity_check')"

# --- a serve started on a full disk fails at once, with one clear line ------
fill
start=$SECONDS
timeout 20 "$EOSAUDIT" serve "${SERVE_ARGS[@]}" --listen 127.0.0.1:0 \
        >"$IT_TMP/serve3.log" 2>&1
rc=$?
cat "$IT_TMP/serve3.log"
assert_eq "serve on a full disk: exit status" 2 "$rc"
assert_true "... within 3 s ($((SECONDS - start)) s)" \
        test $((SECONDS - start)) -le 3
assert_true "... saying the ledger's filesystem is full" \
        grep -q "^eosaudit: ledger $DB: its filesystem is full" \
        "$IT_TMP/serve3.log"
assert_eq "... and nothing about a commit" 0 \
        "$(grep -cF "$FAIL_MSG" "$IT_TMP/serve3.log")"
rm -f "$DISK/filler"

disk_umount
finish
