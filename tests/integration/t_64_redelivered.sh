#!/usr/bin/env bash
# Duplicates across producer sessions, on the real broker: a producer that
# restarts (new PID, new epoch, seqs from 0) and resends its last records
# writes copies that sequence checking cannot see; the id window must find
# exactly those, with the first copies as evidence, while in-session
# duplicates stay duplicates.  Then topics whose producers stamp nothing,
# audited by --dedup-key header:NAME, key and value-hash, and ids that
# survive a restart of the auditor in its ledger.
source "$(dirname "$0")/lib.sh"

# oracle TOPIC HEADER: an independent count over the log (kcat -J) of the
# records whose HEADER value appeared earlier in the topic in another
# (eos.producer, eos.epoch) session, or with no session at all.  Prints
# "checked repeats".
oracle() {
        kcat -C -b "$BOOTSTRAP" -t "$1" -o beginning -e -J -q |
                python3 -c 'import json, sys
hdr = sys.argv[1]
seen = {}
checked = repeats = 0
# kcat gives each partition in offset order; the order across partitions
# does not change the count (a repeat is any copy after the first).
for line in sys.stdin:
    m = json.loads(line)
    h = m.get("headers") or []
    d = dict(zip(h[0::2], h[1::2]))
    if hdr not in d or not d[hdr]:
        continue
    checked += 1
    sess = (d.get("eos.producer"), d.get("eos.epoch"))
    if d[hdr] in seen:
        first, first_sess = seen[d[hdr]]
        if first_sess != sess or first_sess[0] is None:
            repeats += 1
    else:
        seen[d[hdr]] = ((m["partition"], m["offset"]), sess)
print(checked, repeats)' "$2"
}

# --- idempotent producer, restarting ---------------------------------------
# 4000 records, a restart after every 1000 with the last 25 written again;
# 1% in-session duplicates on top (caught by seq, not by id).
log "== idempotent --restart-every 1000 --restart-replay 25"
N=4000
T="$(name idem)"
create_topic "$T" 3
produce -t "$T" --producer "$(name p-idem)" -n "$N" \
        --restart-every 1000 --restart-replay 25 --inject-duplicates 0.01
assert_eq "produce exit status" 0 "$PROD_RC"
assert_prod failed 0
assert_prod restarts 3
assert_prod redelivered_injected 75
DUPS="$(json_get duplicates_injected "$PROD_JSON")"
assert_true "some in-session duplicates injected ($DUPS)" test "$DUPS" -gt 0
read -r checked repeats < <(oracle "$T" eos.msgid)
assert_eq "oracle: repeats across sessions" 75 "$repeats"
scan_json -t "$T"
assert_eq "scan exit status" 1 "$SCAN_RC"
assert_scan records_total $((N + 75 + DUPS))
assert_scan anomalies.redelivered 75
assert_scan anomalies.duplicate "$DUPS"
assert_scan anomalies.fenced 0
assert_scan anomalies.gap 0
assert_scan missing_records 0
# Every checked id but the in-session duplicates' (reported as such).
assert_scan ids_checked $((checked - DUPS))
# A scan's temporary ledger goes whole at exit, the files of the id
# generations it closed too (a window of 64 ids closes one every 4).
SCAN_TMP="$IT_TMP/scan-tmpdir"
mkdir -p "$SCAN_TMP"
SAVED_JSON="$SCAN_JSON"
TMPDIR="$SCAN_TMP" scan_json -t "$T" --id-window 64
assert_eq "left in TMPDIR by a scan with closed id generations" "" \
        "$(ls -A "$SCAN_TMP")"
SCAN_JSON="$SAVED_JSON"
# The evidence: each redelivered event names its first copies, on the same
# partition (same key), at lower offsets, and an id of this producer.
python3 - "$SCAN_JSON" "$(name p-idem)" <<'EOF' || die "bad redelivered evidence"
import json, sys
d = json.loads(sys.argv[1])
evs = [a for t in d["topics"] for a in t["latest_anomalies"] if a["kind"] == "redelivered"]
assert evs, "no redelivered anomaly listed"
for a in evs:
    assert a["first_partition"] == a["partition"], a
    assert a["first_offset"] is not None and a["first_offset_hi"] >= a["first_offset"], a
    assert a["first_offset_hi"] < a["offset_lo"], a
    assert a["msgid"].startswith(sys.argv[2] + "-"), a
    assert a["msgid_len"] == len(a["msgid"]), a
print("# evidence ok on", len(evs), "events")
EOF

# --- transactional producer, restarting ------------------------------------
log "== transactional --restart-every 500 --restart-replay 10"
N=1500
T="$(name txn)"
create_topic "$T" 3
produce -t "$T" --producer "$(name p-txn)" -n "$N" \
        --transactional-id "$(name txn)" --txn-size 50 \
        --restart-every 500 --restart-replay 10
assert_eq "produce exit status" 0 "$PROD_RC"
assert_prod failed 0
assert_prod restarts 2
assert_prod redelivered_injected 20
read -r checked repeats < <(oracle "$T" eos.msgid)
assert_eq "oracle: repeats across sessions" 20 "$repeats"
scan_json -t "$T"
assert_scan records_total $((N + 20))
assert_scan anomalies.redelivered 20
assert_scan anomalies_total 20
assert_scan ids_checked "$checked"
# The same topic with the window off: sequence checks alone see nothing.
scan_json -t "$T" --id-window 0
assert_clean_scan $((N + 20))
assert_scan ids_checked 0

# --- another header: --msgid-header ce_id, --dedup-key header:ce_id --------
log "== --dedup-key header:ce_id"
N=600
T="$(name ce)"
create_topic "$T" 2
produce -t "$T" --producer "$(name p-ce)" -n "$N" --msgid-header ce_id \
        --restart-every 200 --restart-replay 7
assert_prod redelivered_injected 14
scan_json -t "$T"
assert_scan anomalies.redelivered 0   # eos.msgid is not there
assert_scan ids_checked 0
scan_json -t "$T" --dedup-key header:ce_id
assert_scan anomalies.redelivered 14
assert_scan ids_checked $((N + 14))

# --- producers that stamp nothing: kcat, keys and ce_id headers -------------
# 12 records on one partition, no eos.* header: keys k0..k5 and k0, k1
# again; values repeat for the same key except where noted.
log "== unstamped records: header, key, value-hash"
T="$(name bare)"
create_topic "$T" 1
bare() { # KEY VALUE CE_ID
        echo "$1:$2" | kcat -P -b "$BOOTSTRAP" -t "$T" -p 0 -K: -H "ce_id=$3" ||
                die "kcat failed"
}
bare k0 v0 c0
bare k1 v1 c1
bare k2 v2 c2
bare k3 v3 c3
bare k0 v0 c0     # repeat by all three identities
bare k1 v1-new c1 # same key and id, another value
bare k4 v4 c9     # new key, an id not seen yet
bare k2 v2 c2x    # same key and value, another id
bare k5 v5 c5
scan_json -t "$T" --dedup-key header:ce_id
assert_scan untracked 9
assert_scan ids_checked 9
assert_scan anomalies.redelivered 2
scan_json -t "$T" --dedup-key key
assert_scan anomalies.redelivered 3
scan_json -t "$T" --dedup-key value-hash
assert_scan anomalies.redelivered 2
scan_json -t "$T" --dedup-key header:nope
assert_scan ids_checked 0
assert_scan anomalies_total 0
SCAN_RC=0
"$EOSAUDIT" scan -b "$BOOTSTRAP" -t "$T" --dedup-key header: >/dev/null 2>&1 || SCAN_RC=$?
assert_eq "--dedup-key header: (no name) is a usage error" 2 "$SCAN_RC"
SCAN_RC=0
"$EOSAUDIT" scan -b "$BOOTSTRAP" -t "$T" --dedup-key uuid >/dev/null 2>&1 || SCAN_RC=$?
assert_eq "--dedup-key uuid is a usage error" 2 "$SCAN_RC"

# --- ids survive a restart of the auditor (the ledger) ----------------------
# Run 1 audits 300 records and stops; then another producer (kcat, no
# session headers) resends three of their ids; run 2, a new process on the
# same ledger, reads only the new records and must still know the ids.
log "== ids kept in the ledger across auditor runs"
T="$(name keep)"
create_topic "$T" 1
DB="$IT_TMP/keep.db"
produce -t "$T" --producer "$(name p-keep)" -n 300 --msgid-from index
scan_json -t "$T" --db "$DB"
assert_clean_scan 300
for id in 5 77 299; do
        echo "again $id" | kcat -P -b "$BOOTSTRAP" -t "$T" -p 0 -H "eos.msgid=$id" ||
                die "kcat failed"
done
scan_json -t "$T" --db "$DB"
assert_scan records_total 303
assert_scan anomalies.redelivered 3
assert_scan untracked 3
python3 - "$SCAN_JSON" <<'EOF' || die "bad evidence after restart"
import json, sys
d = json.loads(sys.argv[1])
evs = sorted((a for t in d["topics"] for a in t["latest_anomalies"]
              if a["kind"] == "redelivered"), key=lambda a: a["offset_lo"])
assert [a["msgid"] for a in evs] == ["5", "77", "299"], evs
assert [a["first_offset"] for a in evs] == [5, 77, 299], evs
assert [a["offset_lo"] for a in evs] == [300, 301, 302], evs
assert all(a["producer"] is None for a in evs), evs
print("# evidence ok after restart")
EOF

# --- /api/v1/ids/{id}: where an id was seen ---------------------------------
# serve on the same ledger (nothing left to audit) answers where id 77 was
# seen: its first copy and the copy kcat wrote, at the offsets kcat reports.
log "== /api/v1/ids/77 against kcat"
bg_start SERVE "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" --db "$DB" \
        --listen 127.0.0.1:0 >"$IT_TMP/serve-ids.log" 2>&1
URL=
for ((i = 0; i < 300; i++)); do
        URL="$(sed -n 's|.*http: listening on \(http://[^ ]*\)$|\1|p' "$IT_TMP/serve-ids.log")"
        [ -n "$URL" ] && break
        kill -0 "$SERVE" 2>/dev/null || break
        sleep 0.1
done
[ -n "$URL" ] || { cat "$IT_TMP/serve-ids.log"; die "serve printed no URL"; }
GRP="$(curl -s -w '\n%{http_code}' "${URL}api/v1/group")"
assert_eq "/api/v1/group without --group: status" 404 "${GRP##*$'\n'}"
assert_true "/api/v1/group without --group: a JSON error saying so" \
        python3 -c 'import json, sys
assert "group mode is off" in json.loads(sys.argv[1])["error"]' "${GRP%$'\n'*}"
IDS="$(curl -s -w '\n%{http_code}' "${URL}api/v1/ids/77?topic=$T")"
assert_eq "/api/v1/ids/77 status" 200 "${IDS##*$'\n'}"
# Where kcat sees eos.msgid=77: "partition offset" per copy, in log order.
WANT="$(kcat -C -b "$BOOTSTRAP" -t "$T" -o beginning -e -J -q |
        python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    h = m.get("headers") or []
    if dict(zip(h[0::2], h[1::2])).get("eos.msgid") == "77":
        print(m["partition"], m["offset"])')"
GOT="$(python3 -c 'import json, sys
d = json.loads(sys.argv[1])
assert d["in_window"] and d["dedup_key"] == "msgid", d
print(d["first"]["partition"], d["first"]["offset"])
for c in d["copies"]:
    assert (c["first_partition"], c["first_offset"]) == \
        (d["first"]["partition"], d["first"]["offset"]), c
    print(c["partition"], c["offset"])' "${IDS%$'\n'*}")" || die "bad /api/v1/ids answer: $IDS"
assert_eq "copies of id 77 (partition offset)" "$WANT" "$GOT"
assert_eq "copies of id 77 found by kcat" 2 "$(wc -l <<<"$WANT")"
assert_eq "an unknown id" 404 \
        "$(curl -s -o /dev/null -w '%{http_code}' "${URL}api/v1/ids/no-such-id?topic=$T")"
kill -TERM "$SERVE"
wait_pid "$SERVE" 20
assert_eq "serve exit status" 0 "$WAIT_RC"

finish
