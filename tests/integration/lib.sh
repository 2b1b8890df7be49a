# lib.sh - helpers for the real-broker integration tests, sourced by every
# tests/integration/t_*.sh.  A test runs on its own too:
#   BUILD=build tests/integration/t_10_java_idempotent.sh
# (the suite's broker must be up: run.sh starts it, see broker.sh).
#
# Conventions
#  - Setup failures (a topic that cannot be created, a producer that does
#    not run) end the test at once with die.  Checks use assert_*: they log
#    "ok" or "FAIL" and the test goes on, so one run shows every mismatch;
#    finish exits 1 if any check failed.
#  - Everything a test creates is named after the test and the run id, so
#    runs never share a topic or a transactional.id with an earlier run of
#    the same broker.
#  - Background processes are started with bg_start and stopped by pid at
#    exit; nothing is killed by name.  A test may define test_cleanup (it
#    runs first at exit, e.g. to restart a broker it stopped).
# shellcheck shell=bash

set -uo pipefail

IT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$IT_DIR/../.." && pwd)"
BUILD="${BUILD:-build}"
[[ "$BUILD" == /* ]] || BUILD="$ROOT/$BUILD"
EOSAUDIT="$BUILD/eosaudit"
source "$IT_DIR/python.sh"
KAFKA_SH="$ROOT/deploy/kafka/kafka.sh"
source "$IT_DIR/broker.sh"
JAVA_RUN="$ROOT/tests/java/run.sh"
BOOTSTRAP="$("$KAFKA_SH" bootstrap)"

TEST_NAME="$(basename "$0" .sh)"
TEST_NAME="${TEST_NAME#t_}"
# run.sh exports one id for the whole suite; a test run alone makes its own.
IT_RUN_ID="${IT_RUN_ID:-$(date +%s)-$$}"
IT_TMP="$BUILD/test-output/integration/$TEST_NAME.tmp"
rm -rf "$IT_TMP"
mkdir -p "$IT_TMP"

IT_CHECKS=0
IT_FAILED=0
IT_BG_PIDS=()

[ -x "$EOSAUDIT" ] || { echo "$EOSAUDIT not built (run make)" >&2; exit 1; }

log() { echo "# $*"; }

die() {
        echo "ERROR: $*"
        exit 1
}

# --- names -----------------------------------------------------------------

# name SUFFIX: a topic (or transactional.id, producer) name unique to this
# test and run, e.g. it-10_java_idempotent-main-1764557000-1234.
name() { echo "it-$TEST_NAME-$1-$IT_RUN_ID"; }

# --- broker ----------------------------------------------------------------

# create_topic NAME PARTS [key=value ...]: as `kafka.sh topic` (RF 1, no
# error if it exists), through mktopic.c, librdkafka's CreateTopics, which
# takes some 50 ms where TopicCommand's JVM takes 2.5 s; compiled into
# $BUILD/it-mktopic on first use.
MKTOPIC="$BUILD/it-mktopic"

# rdkafka_flags: the compiler and linker flags of the librdkafka the build
# uses (make wrote them to $BUILD/deps.mk), for the tests' C helpers.
rdkafka_flags() {
        sed -n -e 's/^RDKAFKA_CFLAGS := //p' -e 's/^RDKAFKA_LIBS := //p' \
                "$BUILD/deps.mk" | tr '\n' ' '
}

create_topic() {
        local out
        if [ ! -x "$MKTOPIC" ] || [ "$IT_DIR/mktopic.c" -nt "$MKTOPIC" ]; then
                cc -std=c11 -O1 -o "$MKTOPIC.$$" "$IT_DIR/mktopic.c" \
                        $(rdkafka_flags) &&
                        mv -f "$MKTOPIC.$$" "$MKTOPIC" ||
                        die "cannot compile $IT_DIR/mktopic.c"
        fi
        out="$("$MKTOPIC" "$BOOTSTRAP" "$@" 2>&1)" ||
                die "cannot create topic $1: $out"
        log "topic $1 ($2 partitions)"
}

broker_up() { "$KAFKA_SH" status >/dev/null 2>&1; }

# --- container images --------------------------------------------------------

# t_95 builds the eosaudit image from this tree, t_96 runs the same image
# in the compose stack: built once per run.  image_built IMG notes that
# IMG was just built; image_built_here IMG succeeds when it was, in this
# run (run.sh's IT_RUN_ID; a test run alone has its own), and is still
# the same image.
IT_IMAGE_NOTE="$BUILD/test-output/integration/.image-built"
image_built() {
        echo "$IT_RUN_ID $1 $(podman image inspect --format '{{.Id}}' "$1" 2>/dev/null)" \
                >"$IT_IMAGE_NOTE"
}
image_built_here() {
        local run img id
        { read -r run img id <"$IT_IMAGE_NOTE"; } 2>/dev/null || return 1
        [ "$run" = "$IT_RUN_ID" ] && [ "$img" = "$1" ] && [ -n "$id" ] &&
                [ "$(podman image inspect --format '{{.Id}}' "$1" 2>/dev/null)" = "$id" ]
}

# --- background processes -------------------------------------------------

# bg_start VAR CMD...: runs CMD in the background and stores its pid in VAR.
# Whatever is still running at exit is sent SIGTERM, then SIGKILL.
bg_start() {
        local var="$1"
        shift
        "$@" &
        printf -v "$var" '%s' "$!"
        IT_BG_PIDS+=("$!")
}

# wait_pid PID SECONDS: waits for PID to exit; sets WAIT_RC to its status,
# or to 124 if it still runs after SECONDS (it is left running).
# read_topic TOPIC FORMAT: every committed record of TOPIC from its
# beginning, with kcat's -f FORMAT (read_committed; not through eosaudit).
read_topic() {
        kcat -b "$BOOTSTRAP" -C -t "$1" -e -q -o beginning \
                -X isolation.level=read_committed -f "$2" 2>/dev/null
}

# group_refused WHAT GROUP PATTERN: serve --group GROUP on $T must stop at
# its start with exit status 2 and a line matching PATTERN (grep).
group_refused() {
        local out rc
        out="$(timeout 30 "$EOSAUDIT" serve -b "$BOOTSTRAP" -t "$T" \
                --group "$2" --db "$IT_TMP/$2.db" --listen off 2>&1)"
        rc=$?
        assert_eq "serve with $1: exit status" 2 "$rc"
        assert_true "serve with $1: the line says why" \
                grep -q "$3" <<<"$out"
}

# topic_cmd ARGS...: Kafka's TopicCommand on the test broker (--delete
# --topic T, ...), its output on stdout.
topic_cmd() {
        "$KAFKA_SH" tool -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
                org.apache.kafka.tools.TopicCommand \
                --bootstrap-server "$BOOTSTRAP" "$@" 2>&1
}

# deleted_under_member WHO TOPIC PID LOG SECS PATTERN PRODUCE_ARGS...:
# deletes a group topic under the running member PID (logging to LOG),
# produces (so that the member has something to commit), and checks that
# the member stops within SECS with exit status 2 and says PATTERN.
deleted_under_member() {
        local who="$1" topic="$2" pid="$3" logf="$4" secs="$5" pat="$6" out
        shift 6
        out="$(topic_cmd --delete --topic "$topic")" ||
                die "cannot delete $topic: $out"
        log "$topic deleted under $who"
        produce "$@"
        [ "$PROD_RC" = 0 ] || die "producer failed (exit $PROD_RC)"
        wait_pid "$pid" "$secs"
        assert_eq "$who, $topic deleted: exit status" 2 "$WAIT_RC"
        assert_true "$who says $topic was deleted (one line)" \
                grep -q "$pat" "$logf"
}

wait_pid() {
        local pid="$1" limit="$2" i
        for ((i = 0; i < limit * 10; i++)); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
                WAIT_RC=124
                return 0
        fi
        WAIT_RC=0
        wait "$pid" || WAIT_RC=$?
}

it_cleanup() {
        local pid
        # A test's own step first (thaw or restart the broker), so that
        # the processes below can flush and exit.
        if declare -F test_cleanup >/dev/null; then test_cleanup; fi
        for pid in "${IT_BG_PIDS[@]}"; do
                kill -TERM "$pid" 2>/dev/null || continue
                wait_pid "$pid" 10
                [ "$WAIT_RC" = 124 ] && kill -KILL "$pid" 2>/dev/null
        done
}
trap it_cleanup EXIT

# --- eosaudit ---------------------------------------------------------------

# scan_json ARGS...: eosaudit scan --json of the broker with ARGS (at least
# -t TOPIC).  Sets SCAN_JSON (stdout) and SCAN_RC (0 clean, 1 anomalies,
# 2 error); stderr goes to the test log.  Exit status 2 or output that is
# not JSON ends the test.
scan_json() {
        SCAN_RC=0
        SCAN_JSON="$("$EOSAUDIT" scan -b "$BOOTSTRAP" --json --no-progress \
                -q "$@")" || SCAN_RC=$?
        log "scan $* -> exit $SCAN_RC"
        echo "$SCAN_JSON" | python3 -c 'import json, sys
d = json.load(sys.stdin)
d.pop("topics", None)
print("#  ", json.dumps(d, sort_keys=True))' 2>/dev/null ||
                die "scan $* printed no JSON object (exit $SCAN_RC)"
        [ "$SCAN_RC" != 2 ] || die "scan $* failed (exit 2)"
}

# produce ARGS...: eosaudit produce --json with ARGS (-t, --producer, ...).
# Sets PROD_JSON (the summary object) and PROD_RC; its stderr goes to the
# test log.
produce() {
        PROD_RC=0
        PROD_JSON="$("$EOSAUDIT" produce -b "$BOOTSTRAP" --json -q "$@")" ||
                PROD_RC=$?
        log "produce $* -> exit $PROD_RC"
        log "  $PROD_JSON"
        json_get delivered "$PROD_JSON" >/dev/null 2>&1 ||
                die "produce $* printed no summary (exit $PROD_RC)"
}

# json_get PATH [JSON]: the value at PATH (dot-separated keys and list
# indexes, e.g. anomalies.duplicate or topics.0.untracked) of JSON
# (default: $SCAN_JSON).  Prints "null" for JSON null, "true"/"false" for
# booleans; fails if PATH does not exist.
json_get() {
        local path="$1" json="${2-${SCAN_JSON-}}"
        python3 -c 'import json, sys
v = json.loads(sys.argv[2])
for k in sys.argv[1].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(json.dumps(v) if isinstance(v, (bool, type(None), dict, list)) else v)' \
                "$path" "$json"
}

# anomaly_kinds [JSON]: the kinds in topics[0].latest_anomalies, sorted and
# counted ("2 duplicate,1 gap").
anomaly_kinds() {
        local json="${1-${SCAN_JSON-}}"
        python3 -c 'import collections, json, sys
d = json.loads(sys.argv[1])
c = collections.Counter(a["kind"] for t in d["topics"] for a in t["latest_anomalies"])
print(",".join("%d %s" % (n, k) for k, n in sorted(c.items())))' "$json"
}

# kv_get KEY TEXT: the value of KEY=VALUE among TEXT's blank-separated words
# (the Java clients' result lines).
kv_get() {
        local key="$1" text="$2" w
        for w in $text; do
                if [[ "$w" == "$key="* ]]; then
                        echo "${w#*=}"
                        return 0
                fi
        done
        return 1
}

# log_oracle TOPIC [KCAT_ARGS...]: an independent count of what is in the
# log, read with kcat -J (librdkafka's default isolation is read_committed;
# pass -X isolation.level=read_uncommitted for the rest).  Prints
#   records distinct extra late missing
# over the records carrying eos.producer, eos.epoch and eos.seq, per stream
# (producer, epoch, partition): extra = copies of a seq after its first,
# late = first copies that come after a higher seq of their stream,
# missing = seqs below a stream's highest that never came.  It knows
# nothing of fencing or baselines: use it where neither applies.
log_oracle() {
        local topic="$1"
        shift
        kcat -C -b "$BOOTSTRAP" -t "$topic" -o beginning -e -J -q "$@" |
                python3 -c 'import json, sys
streams = {}  # (producer, epoch, partition) -> [seqs seen, highest seq]
records = extra = late = 0
for line in sys.stdin:
    m = json.loads(line)
    h = m.get("headers") or []
    d = dict(zip(h[0::2], h[1::2]))
    if not all(k in d for k in ("eos.producer", "eos.epoch", "eos.seq")):
        continue
    records += 1
    s = streams.setdefault((d["eos.producer"], int(d["eos.epoch"]),
                            m["partition"]), [set(), -1])
    seq = int(d["eos.seq"])
    if seq in s[0]:
        extra += 1
        continue
    s[0].add(seq)
    if seq < s[1]:
        late += 1
    s[1] = max(s[1], seq)
distinct = sum(len(s[0]) for s in streams.values())
missing = sum(s[1] + 1 - len(s[0]) for s in streams.values())
print(records, distinct, extra, late, missing)'
}

# --- checks ----------------------------------------------------------------

# assert_eq WHAT WANT GOT
assert_eq() {
        IT_CHECKS=$((IT_CHECKS + 1))
        if [ "$2" == "$3" ]; then
                echo "ok   $1 = $3"
        else
                echo "FAIL $1: want $2, got $3"
                IT_FAILED=$((IT_FAILED + 1))
        fi
}

# assert_scan FIELD WANT: assert_eq on json_get FIELD of $SCAN_JSON.
assert_scan() {
        local got
        got="$(json_get "$1" 2>/dev/null)" || got="<no $1>"
        assert_eq "scan.$1" "$2" "$got"
}

# assert_prod FIELD WANT: the same on the producer's summary.
assert_prod() {
        local got
        got="$(json_get "$1" "$PROD_JSON" 2>/dev/null)" || got="<no $1>"
        assert_eq "produce.$1" "$2" "$got"
}

# assert_true WHAT CMD...: CMD must succeed.
assert_true() {
        local what="$1"
        shift
        IT_CHECKS=$((IT_CHECKS + 1))
        if "$@"; then
                echo "ok   $what"
        else
                echo "FAIL $what"
                IT_FAILED=$((IT_FAILED + 1))
        fi
}

# assert_clean_scan RECORDS: the counts every clean audit must show.
assert_clean_scan() {
        assert_eq "scan exit status" 0 "$SCAN_RC"
        assert_scan records_total "$1"
        assert_scan anomalies_total 0
        assert_scan missing_records 0
        assert_scan open_gaps 0
        assert_scan coverage_gaps 0
        assert_scan untracked 0
}

# The manifest: what the reference producers said they wrote, summed over
# manifest_add calls; assert_manifest_scan WHAT checks a scan against it.
M_DELIVERED=0 M_DUPS=0 M_GAPS=0 M_ZOMBIE=0 M_FAILED=0
manifest_add() { # JSON: one `produce --json` summary
        M_DELIVERED=$((M_DELIVERED + $(json_get delivered "$1")))
        M_DUPS=$((M_DUPS + $(json_get duplicates_injected "$1")))
        M_GAPS=$((M_GAPS + $(json_get gaps_injected "$1")))
        M_ZOMBIE=$((M_ZOMBIE + $(json_get zombie_records "$1")))
        M_FAILED=$((M_FAILED + $(json_get failed "$1")))
}

# assert_manifest_scan WHAT: $SCAN_JSON shows exactly the manifest: its
# records, duplicates, missing records and fenced (zombie) records, and
# nothing else (the producers write distinct message ids, so no
# redelivered record either).
assert_manifest_scan() {
        log "-- $1: manifest delivered $M_DELIVERED, duplicates $M_DUPS," \
                "missing $M_GAPS, fenced $M_ZOMBIE"
        assert_eq "$1: scan exit status" 1 "$SCAN_RC"
        assert_scan records_total "$M_DELIVERED"
        assert_scan anomalies.duplicate "$M_DUPS"
        assert_scan missing_records "$M_GAPS"
        assert_scan anomalies.fenced "$M_ZOMBIE"
        assert_scan anomalies.out_of_order 0
        assert_scan anomalies.malformed 0
        assert_scan anomalies.redelivered 0
        assert_scan untracked 0
        assert_scan open_gaps 0
        assert_scan coverage_gaps 0
}

# --- serve --group: the group's result, read by the test itself ------------
# group_ends TOPIC NPARTS FILE: each partition's end offset, one a line.
group_ends() {
        local p
        for ((p = 0; p < $2; p++)); do
                kcat -b "$BOOTSTRAP" -Q -t "$1:$p:-1" 2>/dev/null
        done | awk '{print $NF}' >"$3"
}

# group_state_sum STATE ENDS [OLD_PARTS]: the last committed state record
# of each key of a group's state topic (kcat, read_committed; not through
# eosaudit), summed: keys, records, missing, dup, gap, fenced, other
# (every other anomaly and counter), at_end (next offset = the
# partition's end in ENDS), exact (records = next offset: these
# producers leave no offset holes, so a record audited twice or skipped
# shows there), new_from_first (partitions >= OLD_PARTS audited from
# their first offset to their end); "name=N ..." sorted, for kv.
group_state_sum() {
        read_topic "$1" '%k\t%s\n' |
                python3 -c '
import json, sys
last = {}
for line in sys.stdin:
    k, _, v = line.rstrip("\n").partition("\t")
    last[k] = json.loads(v) if v else None
ends = [int(x) for x in open(sys.argv[1]).read().split()]
old = int(sys.argv[2])
s = {"keys": 0, "records": 0, "missing": 0, "at_end": 0, "exact": 0,
     "other": 0, "dup": 0, "gap": 0, "fenced": 0, "new_from_first": 0}
for k, v in last.items():
    if v is None:
        continue
    s["keys"] += 1
    c = v["counts"]
    s["records"] += c["records"]
    s["missing"] += c["missing"]
    s["dup"] += c["anomalies"]["duplicate"]
    s["gap"] += c["anomalies"]["gap"]
    s["fenced"] += c["anomalies"]["fenced"]
    s["other"] += sum(n for kind, n in c["anomalies"].items()
                      if kind not in ("duplicate", "gap", "fenced"))
    s["other"] += c["untracked"] + c["unknown"] + c["recovered"]
    s["at_end"] += v["next_offset"] == ends[v["partition"]]
    s["exact"] += c["records"] == v["next_offset"]
    s["new_from_first"] += (v["partition"] >= old and c["records"] > 0 and
                            c["records"] == v["next_offset"] ==
                            ends[v["partition"]])
print(" ".join("%s=%d" % kv for kv in sorted(s.items())))' "$2" "${3:-1000000}"
}

# group_events_sum EVENTS: the records of a group's events topic
# (read_committed) by kind, their counts summed: "dup= gap= fenced= other=".
group_events_sum() {
        read_topic "$1" '%s\n' |
                python3 -c '
import json, sys
n = {}
for line in sys.stdin:
    e = json.loads(line)
    n[e["kind"]] = n.get(e["kind"], 0) + e["count"]
dup, gap = n.pop("duplicate", 0), n.pop("gap", 0)
fenced = n.pop("fenced", 0)
print("dup=%d gap=%d fenced=%d other=%d" % (dup, gap, fenced,
                                           sum(n.values())))'
}

# kv NAME: NAME's number in $S ("name=N ...").
kv() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$S"; }

# finish: the last line of every test.
finish() {
        echo "# $IT_CHECKS checks, $IT_FAILED failed"
        [ "$IT_FAILED" -eq 0 ] || exit 1
        [ "$IT_CHECKS" -gt 0 ] || die "no checks ran"
        rm -rf "$IT_TMP"
        exit 0
}
