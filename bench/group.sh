#!/usr/bin/env bash
# bench/group.sh - serve --group (docs/GROUP.md) on the
# real path: throughput of one and of two members, the state topic's bytes,
# the restore of many pairs and the pause of a rebalance.
#
# usage: bench/group.sh [-n RECORDS] [-p PARTITIONS] [-r REPS] [-K PRODUCERS]
#                       [-P PAIR_PARTITIONS] [-R RATE] [-s STEPS] [-t TOPIC] [-k]
#   -n RECORDS     records of the throughput topic (2000000), 100 bytes each,
#                  written by eosaudit produce
#   -p PARTITIONS  its partitions (12)
#   -r REPS        runs of every reader (2), interleaved, the order rotated
#   -K PRODUCERS   producers per partition of the pairs topic (4000)
#   -P PAIR_PARTITIONS  its partitions (25): PRODUCERS x PAIR_PARTITIONS pairs
#   -R RATE        records/s of the live producer of the handoff step (5000)
#   -s STEPS       which steps, comma-separated (tput,pairs,handoff)
#   -t TOPIC       the throughput step reads this existing topic
#   -k             keep the topics (deleted at the end otherwise)
#
# The steps:
#   tput     kcat, eosaudit scan, 1 member and 2 members of a fresh group read
#            the same topic to its end.  A member's time: from its start to
#            the commit that brought the last partition to its end, i.e. the
#            timestamp of the first state record (read read_committed from
#            eosaudit-GROUP-state by kcat) whose next_offset is the end of
#            its partition, the latest over the partitions.  Exact up to
#            the commit interval (1000 ms, the default); the members run
#            with their defaults otherwise.
#   pairs    gen_pairs writes PRODUCERS x PAIR_PARTITIONS pairs (2 records
#            each); one member audits them; the state topic's bytes (keys
#            + values, and its log segments on disk) per transaction
#            (= control markers = end offset - records, one partition) and
#            per state record.  Then a new member of the group restores
#            them all: from its start to its log line "assigned ... (N
#            ms)" (N = state read + import), and to its first commit past
#            the old ends (1,000 records are produced before it starts).
#   handoff  one member audits a live producer (RATE records/s, ~40 s);
#            after 12 s a second one joins.  From the state records'
#            timestamps: the longest gap between two commits of one
#            partition before the join (the commit interval) and after it
#            (the handoff pause), and the joiner's "assigned" line.
# Writes build/bench-results/group.csv (every run), group.md (the report).
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

records=2000000 parts=12 reps=2 producers=4000 pparts=25 rate=5000
steps="tput,pairs,handoff" topic="" keep=0
while getopts "n:p:r:K:P:R:s:t:kh" o; do
  case "$o" in
    n) records=$(bench_uint -n "$OPTARG") ;;
    p) parts=$(bench_uint -p "$OPTARG") ;;
    r) reps=$(bench_uint -r "$OPTARG") ;;
    K) producers=$(bench_uint -K "$OPTARG") ;;
    P) pparts=$(bench_uint -P "$OPTARG") ;;
    R) rate=$(bench_uint -R "$OPTARG") ;;
    s) steps="$OPTARG" ;;
    t) topic="$OPTARG"; keep=1 ;;
    k) keep=1 ;;
    *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
step() { [[ ",$steps," == *",$1,"* ]]; }

command -v kcat >/dev/null || die "kcat is not installed"
command -v python3 >/dev/null || die "python3 is not installed"
bench_build build/eosaudit build/bench/gen_pairs
bench_broker_up

# Members run in the background; bench_cleanup kills what is left.
m1="" m2="" m1_log="" m2_log="" live="" ptopic="" htopic=""
BENCH_PIDS="m1 m2 live"
bench_work
extra_topics=()
trap 'bench_cleanup; if [ "$keep" -eq 0 ]; then for x in "${extra_topics[@]}"; do bench_topic_delete "$x"; done; fi' EXIT

csv="$BENCH_RESULTS/group.csv"
bench_begin
echo "step,rep,what,value,unit" >"$csv"
row() { echo "$1,$2,$3,$4,$5" >>"$csv"; }

# ends TOPIC: the partitions' end offsets, one per line, in partition order.
ends() {
  local t="$1" n p
  n=$(kcat -b "$BROKER" -L -t "$t" | grep -c '^ *partition ')
  for ((p = 0; p < n; p++)); do
    kcat -b "$BROKER" -Q -t "$t:$p:-1" | awk '{ print $NF }'
  done
}

# state_scan GROUP ENDSFILE: reads the state topic read_committed; prints
# "at_end latest_ms keys records bytes last_bytes" where latest_ms is, over the
# partitions, the latest timestamp of the first state record at the end,
# and last_bytes the size of the last record of every partition, summed.
state_scan() {
  { kcat -b "$BROKER" -C -e -q -o beginning -X isolation.level=read_committed \
      -t "eosaudit-$1-state" -f '%T\t%K\t%S\t%s\n' 2>/dev/null || true; } | python3 -c '
import json, sys
ends = [int(x) for x in open(sys.argv[1]).read().split()]
first = {}; n = 0; b = 0; last = {}
for line in sys.stdin:
    ts, kl, vl, v = line.rstrip("\n").split("\t", 3)
    size = max(int(kl), 0) + max(int(vl), 0)
    n += 1; b += size
    if not v:
        continue
    s = json.loads(v)
    p = s["partition"]
    last[p] = size
    if s["next_offset"] >= ends[p] and p not in first:
        first[p] = int(ts)
print(len(first), max(first.values()) if first else 0, len(ends), n, b,
      sum(last.values()))' "$2"
}

# member VAR GROUP NAME LOG [OPTION...]: starts serve --group.
member() {
  local var="$1" g="$2" nm="$3" log="$4" t="$5"
  shift 5
  "$EOSAUDIT" serve -b "$BROKER" -t "$t" --group "$g" --group-member "$nm" \
    --db "$(bench_db_new "$g-$nm")" --listen off "$@" >"$log" 2>&1 &
  printf -v "$var" '%s' "$!"
  printf -v "${var}_log" '%s' "$log"
}

stop_members() {
  local v
  for v in m1 m2; do
    if [ -n "${!v}" ]; then
      kill -TERM "${!v}" 2>/dev/null || true
      wait "${!v}" 2>/dev/null || true
      printf -v "$v" '%s' ""
    fi
  done
}

# wait_end GROUP ENDSFILE TIMEOUT_S: until every partition's state is at
# its end; prints the state_scan line.
wait_end() {
  local i s
  for ((i = 0; i < $3 * 2; i++)); do
    s="$(state_scan "$1" "$2")"
    read -r a _ k _ _ <<<"$s"
    if [ "$a" = "$k" ]; then echo "$s"; return 0; fi
    for v in m1 m2; do
      if [ -n "${!v}" ] && ! kill -0 "${!v}" 2>/dev/null; then
        lv="${v}_log"
        cp "${!lv}" "$BENCH_RESULTS/group-failed-member.log"
        tail -n 3 "${!lv}" >&2
        die "member $v exited (its log: $BENCH_RESULTS/group-failed-member.log)"
      fi
    done
    sleep 0.5
  done
  die "group $1 did not reach the end in $3 s ($s)"
}

# ms of an ISO log stamp 2026-12-02T04:14:08.123Z
log_ms() { date -u -d "$(sed 's/\.\([0-9]*\)Z$/.\1/' <<<"$1")" +%s%3N; }

# state_txns GROUP: transactions that wrote the state topic (its one
# partition's end offset less its records, read_uncommitted: each
# transaction leaves one control marker).
state_txns() {
  local end n
  end=$(kcat -b "$BROKER" -Q -t "eosaudit-$1-state:0:-1" | awk '{ print $NF }')
  n=$(kcat -b "$BROKER" -C -e -q -o beginning -t "eosaudit-$1-state" -f 'x' | wc -c)
  echo $((end - n))
}
state_disk() { du -cb "$KAFKA_DATA_DIR"/log/"eosaudit-$1-state-0"/*.log | tail -n 1 | cut -f1; }

# ----------------------------------------------------------------------
if step tput; then
  bench_topic_prepare bench-group "$parts" "$records"
  ends "$topic" >"$work/ends"
  run_one() {
    local tool="$1" rep="$2" t0 t1 secs out db g s a latest txns bytes n i
    t0=$(bench_now)
    case "$tool" in
      kcat)
        kcat -b "$BROKER" -C -e -q -o beginning -X isolation.level=read_committed \
          -t "$topic" >/dev/null || die "kcat failed"
        t1=$(bench_now) ;;
      scan)
        db="$(bench_db_new "scan-$rep")"
        out="$("$EOSAUDIT" scan -b "$BROKER" -t "$topic" --db "$db" --json -q \
                 --no-progress)" || die "eosaudit scan failed or found anomalies"
        t1=$(bench_now)
        [ "$(bench_json_int "$out" records_total)" = "$records" ] || die "scan read less"
        bench_db_rm "$db" ;;
      g1 | g2)
        g="bench-$$-$tool-$rep"
        member m1 "$g" a "$work/$g-a.log" "$topic"
        # b starts with a: two members that create the group's topics at
        # once both go on (one is told "already exists" and waits for the
        # topic to be readable); a b started once a is busy waits seconds
        # for the rebalance (the handoff below).
        [ "$tool" = g2 ] && member m2 "$g" b "$work/$g-b.log" "$topic"
        s="$(wait_end "$g" "$work/ends" 600)"
        read -r a latest _ n bytes _ <<<"$s"
        t1=$((latest * 1000000))
        stop_members
        # The same from the last member's first non-empty assignment: the
        # rate without the group join (the broker's
        # group.initial.rebalance.delay.ms, 3 s by default, is in the above).
        a=0
        for l in "$work/$g"-*.log; do
          x="$(grep -m1 "assigned [1-9][0-9]* partition" "$l")" || continue # audited nothing
          x=$(log_ms "${x%% *}")
          [ "$x" -gt "$a" ] && a=$x
        done
        row tput "$rep" "${tool}_from_assign" "$(bench_rate "$records" "$(awk -v a="$a" -v b="$latest" 'BEGIN { printf "%.3f", (b - a) / 1000 }')")" records_per_s
        row tput "$rep" "${tool}_join" "$(awk -v a="$a" -v t="$t0" 'BEGIN { printf "%.3f", (a - t / 1e6) / 1000 }')" s
        txns=$(state_txns "$g")
        row tput "$rep" "${tool}_state_records" "$n" records
        row tput "$rep" "${tool}_state_txns" "$txns" txns
        row tput "$rep" "${tool}_state_bytes" "$bytes" bytes
        extra_topics+=("eosaudit-$g-state" "eosaudit-$g-events" "eosaudit-$g-ids") ;;
    esac
    secs=$(bench_secs "$t0" "$t1")
    row tput "$rep" "$tool" "$(bench_rate "$records" "$secs")" records_per_s
    say "rep $rep: $tool $secs s"
  }
  bench_rounds "$reps" run_one kcat scan g1 g2
  declare -A med
  bench_out "### throughput: topic $topic, $(bench_fmt "$records") records of 100 bytes, $parts partitions, $reps runs each (interleaved)"
  bench_out ""
  bench_out "| reader | records/s (median) | min | max | / kcat |"
  bench_out "| --- | ---: | ---: | ---: | ---: |"
  read -r med[kcat] _ _ < <(awk -F, '$3 == "kcat" { print $4 }' "$csv" | bench_stats)
  for t in kcat scan g1 g2 g1_from_assign g2_from_assign; do
    read -r m lo hi < <(awk -F, -v t="$t" '$1 == "tput" && $3 == t { print $4 }' "$csv" | bench_stats)
    med[$t]=$m
    bench_out "| $t | $(bench_fmt "$m") | $(bench_fmt "$lo") | $(bench_fmt "$hi") | $(awk -v a="$m" -v b="${med[kcat]}" 'BEGIN { printf "%.2f", a / b }') |"
  done
  read -r j1 _ _ < <(awk -F, '$3 == "g1_join" { print $4 }' "$csv" | bench_stats)
  read -r j2 _ _ < <(awk -F, '$3 == "g2_join" { print $4 }' "$csv" | bench_stats)
  bench_out ""
  bench_out "g1, g2: 1 and 2 members of a fresh group, from their start to the commit that brought the last partition to its end (state topic timestamps); *_from_assign: from the (last) member's first assignment, without the join ($j1 s and $j2 s, median)"
  for t in g1 g2; do
    read -r b _ _ < <(awk -F, -v t="${t}_state_bytes" '$3 == t { print $4 }' "$csv" | bench_stats)
    read -r x _ _ < <(awk -F, -v t="${t}_state_txns" '$3 == t { print $4 }' "$csv" | bench_stats)
    read -r r _ _ < <(awk -F, -v t="${t}_state_records" '$3 == t { print $4 }' "$csv" | bench_stats)
    bench_out ""
    bench_out "$t state topic (median): $(bench_fmt "$r") records in $(bench_fmt "$x") transactions, $(bench_fmt "$b") bytes of keys+values: $(awk -v b="$b" -v x="$x" 'BEGIN { printf "%.0f", b / x }') bytes per transaction, $(awk -v b="$b" -v r="$r" 'BEGIN { printf "%.0f", b / r }') per state record"
  done
  bench_out ""
fi

# ----------------------------------------------------------------------
if step pairs; then
  ptopic="bench-group-pairs-$(date +%s)"
  extra_topics+=("$ptopic")
  bench_topic_create "$ptopic" "$pparts"
  say "gen_pairs: $pparts partitions x $producers producers x 2 records"
  "$BENCH_ROOT/build/bench/gen_pairs" -b "$BROKER" -t "$ptopic" -p "$pparts" \
    -k "$producers" -c 2 -q --json >/dev/null || die "gen_pairs failed"
  ends "$ptopic" >"$work/pends"
  g="bench-$$-pairs"
  extra_topics+=("eosaudit-$g-state" "eosaudit-$g-events" "eosaudit-$g-ids")
  t0=$(bench_now)
  member m1 "$g" a "$work/pairs-a.log" "$ptopic"
  s="$(wait_end "$g" "$work/pends" 900)"
  read -r _ latest _ n bytes lastb <<<"$s"
  secs=$(bench_secs "$t0" $((latest * 1000000)))
  stop_members
  txns=$(state_txns "$g")
  disk=$(state_disk "$g")
  npairs=$((pparts * producers))
  row pairs 1 audit_seconds "$secs" s
  row pairs 1 state_records "$n" records
  row pairs 1 state_txns "$txns" txns
  row pairs 1 state_bytes "$bytes" bytes
  row pairs 1 state_disk_bytes "$disk" bytes
  bench_out "### state topic with $(bench_fmt "$npairs") pairs ($pparts partitions x $(bench_fmt "$producers") producers, 2 records each; one member, audited in $secs s)"
  bench_out ""
  bench_out "$(bench_fmt "$n") state records in $(bench_fmt "$txns") transactions; keys+values $(bench_fmt "$bytes") bytes ($(bench_fmt "$disk") in its log segments): $(bench_fmt "$(awk -v b="$bytes" -v x="$txns" 'BEGIN { printf "%.0f", b / x }')") bytes per transaction, $(bench_fmt "$(awk -v b="$bytes" -v r="$n" 'BEGIN { printf "%.0f", b / r }')") per state record, the last record of every partition $(bench_fmt "$lastb") bytes in all: $(awk -v b="$lastb" -v k="$npairs" 'BEGIN { printf "%.1f", b / k }') bytes per pair"

  # Restore: 1,000 records more (after the old ends), then a new member.
  "$EOSAUDIT" produce -b "$BROKER" -t "$ptopic" --producer "bench-more-$$" -n 1000 \
    --size 100 -q >/dev/null 2>&1 || die "eosaudit produce failed"
  ends "$ptopic" >"$work/pends2"
  t0=$(bench_now)
  member m2 "$g" b "$work/pairs-b.log" "$ptopic" --commit-interval-ms 100
  s="$(wait_end "$g" "$work/pends2" 300)"
  read -r _ latest _ _ _ <<<"$s"
  stop_members
  line="$(grep -m1 'assigned [1-9][0-9]* partition' "$work/pairs-b.log")" || die "no assignment line"
  amsg=$(sed -n 's/.*(\([0-9]*\) ms).*/\1/p' <<<"$line")
  at=$(log_ms "${line%% *}")
  to_assign=$(awk -v a="$at" -v t="$t0" 'BEGIN { printf "%.3f", (a - t / 1e6) / 1000 }')
  to_end=$(bench_secs "$t0" $((latest * 1000000)))
  row pairs 1 restore_in_assign_ms "$amsg" ms
  row pairs 1 start_to_assigned_s "$to_assign" s
  row pairs 1 start_to_first_commit_past_end_s "$to_end" s
  bench_out ""
  bench_out "restore of $(bench_fmt "$npairs") pairs by a new member: its start to the end of the assignment $to_assign s, of which state read + import $amsg ms (\"$(sed 's/^[^ ]* [^ ]* //' <<<"$line")\"); start to the commit of the 1,000 records after the old ends (commit interval 100 ms): $to_end s"
  bench_out ""
fi

# ----------------------------------------------------------------------
if step handoff; then
  htopic="bench-group-live-$(date +%s)"
  extra_topics+=("$htopic")
  bench_topic_create "$htopic" "$parts"
  g="bench-$$-handoff"
  extra_topics+=("eosaudit-$g-state" "eosaudit-$g-events" "eosaudit-$g-ids")
  "$EOSAUDIT" produce -b "$BROKER" -t "$htopic" --producer "bench-live-$$" \
    -n $((rate * 40)) --rate "$rate" --size 100 -q >/dev/null 2>&1 &
  live=$!
  member m1 "$g" a "$work/live-a.log" "$htopic"
  sleep 12
  join_ms=$(($(bench_now) / 1000000))
  member m2 "$g" b "$work/live-b.log" "$htopic"
  wait "$live" || die "the live producer failed"
  live=""
  ends "$htopic" >"$work/hends"
  wait_end "$g" "$work/hends" 120 >/dev/null
  stop_members
  read -r before after worst < <(kcat -b "$BROKER" -C -e -q -o beginning \
    -X isolation.level=read_committed -t "eosaudit-$g-state" -f '%T\t%s\n' 2>/dev/null |
    python3 -c '
import json, sys
join = int(sys.argv[1]); ends = [int(x) for x in open(sys.argv[2]).read().split()]
ts = {}
for line in sys.stdin:
    t, v = line.rstrip("\n").split("\t", 1)
    if not v: continue
    s = json.loads(v); p = s["partition"]
    if s["next_offset"] > ends[p]: continue
    ts.setdefault(p, []).append((int(t), s["next_offset"]))
before = after = 0; worst = -1
for p, l in ts.items():
    l.sort()
    done = next((t for t, o in l if o >= ends[p]), l[-1][0])
    for (a, _), (b, _) in zip(l, l[1:]):
        if b > done: break
        g = b - a
        if b <= join: before = max(before, g)
        elif a >= join - 2000:
            if g > after: after, worst = g, p
print(before, after, worst)' "$join_ms" "$work/hends")
  line="$(grep -m1 'assigned [1-9][0-9]* partition' "$work/live-b.log")" || line="(none)"
  row handoff 1 max_gap_before_join_ms "$before" ms
  row handoff 1 max_gap_after_join_ms "$after" ms
  bench_out "### handoff: a live producer at $(bench_fmt "$rate") records/s into $parts partitions; a second member joins after 12 s"
  bench_out ""
  bench_out "longest time between two commits of one partition: $before ms before the join, $after ms around and after it (partition $worst); joiner: \"$(sed 's/^[^ ]* [^ ]* //' <<<"$line")\""
  bench_out ""
fi
bench_out "load average at end: $(bench_load)"
say "results: $csv, $BENCH_MD"
