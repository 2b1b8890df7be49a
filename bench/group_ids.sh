#!/usr/bin/env bash
# bench/group_ids.sh - what the ids topic of serve --group costs
# (docs/GROUP.md, "Redeliveries across members").
#
# usage: bench/group_ids.sh [-n RECORDS] [-p PARTITIONS] [-r REPS]
#   -n RECORDS     records of the topic (2000000), 100 bytes each, written by
#                  eosaudit produce --msgid-from index; then 60 more by a
#                  second producer, copies of ids 0..59 under other keys
#   -p PARTITIONS  its partitions (12)
#   -r REPS        runs of every reader (3), interleaved, the order rotated
#
# Readers: kcat (to the end), one member of a fresh group with its
# defaults but --id-window 1.25 x RECORDS, at least the default 1,000,000
# ("ids": the ids topic, its 12 partitions judged by the same member; the
# copies come RECORDS after their first copies, and a window must reach
# them) and one with --id-window 0 ("noids": no ids topic, no redelivery
# checks).  A member's times, from its start: "audit", the commit that
# brought the last partition to its end (the first state record, read
# read_committed by kcat, whose next_offset is its partition's end);
# "cpu", the member's CPU seconds (user + system) at that point;
# "verdicts" (ids only), the timestamp of the last of the 60 redelivered
# events on the events topic: the judges had then read the ids topic
# past the copies, written last.  Also the ids topic's records, their
# value bytes and, when the broker's data directory is here, the bytes of
# its log segments (record and batch headers, transaction markers), per
# audited record (an ids record can carry many audited records' ids).  Every group's topics are deleted after its run.
# Writes build/bench-results/group_ids.csv and group_ids.md.
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

records=2000000 parts=12 reps=3
while getopts "n:p:r:h" o; do
  case "$o" in
    n) records=$(bench_uint -n "$OPTARG") ;;
    p) parts=$(bench_uint -p "$OPTARG") ;;
    r) reps=$(bench_uint -r "$OPTARG") ;;
    *) sed -n '2,/^# shellcheck/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
  esac
done
bench_build build/eosaudit
bench_broker_up
bench_work
keep=0
topic="group-ids-$(date +%s)"
BENCH_PIDS="member_pid"
bench_topic_create "$topic" "$parts"
"$EOSAUDIT" produce -b "$BROKER" -t "$topic" --producer "b1-$topic" -n "$records" \
  --size 100 --msgid-from index -q >/dev/null 2>&1 || die "produce failed"
"$EOSAUDIT" produce -b "$BROKER" -t "$topic" --producer "b2-$topic" -n 60 \
  --size 100 --msgid-from index -q >/dev/null 2>&1 || die "produce failed"
records=$((records + 60))
# The copies come after every record: the window must reach back to ids
# 0..59 (the default 1,000,000 ids would not, past 1M records).
window=$((records > 1000000 ? records + records / 4 : 1000000))
for ((p = 0; p < parts; p++)); do
  kcat -b "$BROKER" -Q -t "$topic:$p:-1" 2>/dev/null
done | awk '{print $NF}' >"$work/ends"
bench_begin
CSV="$BENCH_RESULTS/$bench_name.csv"
echo "reader,rep,audit_s,verdicts_s,ids_records,ids_value_bytes,ids_disk_bytes,load1,cpu_s" >"$CSV"

now_ms() { date +%s%3N; }

# The timestamp of the commit that brought the last partition to its end.
state_done() {
  { kcat -b "$BROKER" -C -t "eosaudit-$1-state" -e -q -o beginning \
    -X isolation.level=read_committed -f '%T\t%s\n' 2>/dev/null || true; } | python3 -c '
import json, sys
ends = [int(x) for x in open(sys.argv[1]).read().split()]
done = {}
for l in sys.stdin:
    t, v = l.rstrip("\n").split("\t", 1)
    d = json.loads(v)
    if d["next_offset"] >= ends[d["partition"]]:
        done.setdefault(d["partition"], int(t))
print(max(done.values()) if len(done) == len(ends) else "")' "$work/ends"
}

run() { # READER REP
  local reader="$1" rep="$2" g t0 t1 audit="" verdicts="" v n=0 bytes=0 disk="" i t cpu=""
  if [ "$reader" = kcat ]; then
    t0=$(now_ms)
    kcat -b "$BROKER" -C -t "$topic" -e -q -o beginning -f 'x' | wc -c >/dev/null
    t1=$(now_ms)
    echo "kcat,$rep,$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", (b-a)/1000}'),,,,,$(cut -d' ' -f1 /proc/loadavg)," >>"$CSV"
    return
  fi
  g="gi-$(date +%s%N)-$reader-$rep"
  t0=$(now_ms)
  "$EOSAUDIT" serve -b "$BROKER" -t "$topic" --group "$g" --listen off -q \
    --db "$(bench_db_new "$g")" \
    --id-window "$([ "$reader" = noids ] && echo 0 || echo "$window")" \
    >"$work/$g.log" 2>&1 &
  member_pid=$!
  for ((i = 0; i < 480; i++)); do
    sleep 0.25
    audit="$(state_done "$g")"
    if [ -n "$audit" ]; then
      cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$member_pid/stat")
      break
    fi
    kill -0 "$member_pid" 2>/dev/null || break
  done
  if [ -z "$audit" ]; then
    tail -n 5 "$work/$g.log" >&2
    die "$reader: the group did not reach the partitions' ends"
  fi
  if [ "$reader" = ids ]; then
    for ((i = 0; i < 1200; i++)); do
      v="$({ kcat -b "$BROKER" -C -t "eosaudit-$g-events" -e -q -o beginning \
        -X isolation.level=read_committed -f '%T %s\n' 2>/dev/null || true; } |
        awk '/"redelivered"/ { n++; if ($1 + 0 > m) m = $1 + 0 } END { printf "%d %.0f\n", n, m }')"
      [ "${v% *}" = 60 ] && break
      sleep 0.25
    done
    [ "${v% *}" = 60 ] || die "ids: $v redelivered events, not 60"
    verdicts="$(awk -v a="$t0" -v b="${v#* }" 'BEGIN{printf "%.3f", (b-a)/1000}')"
    read -r n bytes < <(kcat -b "$BROKER" -C -t "eosaudit-$g-ids" -e -q -o beginning \
      -f '%S\n' 2>/dev/null | awk '{n++; b += $1} END {print n + 0, b + 0}')
    if compgen -G "$KAFKA_DATA_DIR/log/eosaudit-$g-ids-*" >/dev/null; then
      disk=$(cat "$KAFKA_DATA_DIR"/log/eosaudit-"$g"-ids-*/*.log | wc -c)
    fi
  fi
  kill -TERM "$member_pid"
  wait "$member_pid" || say "warning: member $g exited $?"
  member_pid=""
  echo "$reader,$rep,$(awk -v a="$t0" -v b="$audit" 'BEGIN{printf "%.3f", (b-a)/1000}'),$verdicts,$n,$bytes,$disk,$(cut -d' ' -f1 /proc/loadavg),$cpu" >>"$CSV"
  for t in state events $([ "$reader" = ids ] && echo ids); do
    bench_topic_delete "eosaudit-$g-$t"
  done
}

say "$(bench_fmt "$records") records, $parts partitions, $reps runs each"
bench_rounds "$reps" run kcat ids noids

bench_out "$(bench_fmt "$records") records of 100 bytes, $parts partitions; $reps runs, interleaved; median (min-max) seconds from start"
bench_out ""
bench_out "| reader | audit s | verdicts s | records/s (audit) | audit / kcat time | member CPU s |"
bench_out "| --- | ---: | ---: | ---: | ---: | ---: |"
kmed=$(bench_col "$CSV" 3 1 kcat | bench_stats | cut -d' ' -f1)
for r in kcat ids noids; do
  read -r med lo hi < <(bench_col "$CSV" 3 1 "$r" | bench_stats)
  vs="-"
  [ "$r" = ids ] && vs="$(bench_col "$CSV" 4 1 ids | bench_stats | awk '{printf "%s (%s-%s)", $1, $2, $3}')"
  cpu="-"
  [ "$r" = kcat ] || cpu="$(bench_col "$CSV" 9 1 "$r" | bench_stats | awk '{printf "%s (%s-%s)", $1, $2, $3}')"
  bench_out "| $r | $med ($lo-$hi) | $vs | $(bench_fmt "$(bench_rate "$records" "$med")") | $(awk -v a="$med" -v k="$kmed" 'BEGIN{printf "%.2f", a / k}') | $cpu |"
done
read -r n bytes disk < <(awk -F, '$1 == "ids" { print $5, $6, $7; exit }' "$CSV")
bench_out ""
bench_out "ids topic: $(bench_fmt "$n") records for $(bench_fmt "$records") audited records, $(awk -v b="$bytes" -v n="$records" 'BEGIN{printf "%.1f", b / n}') value bytes per audited record$([ -n "$disk" ] && awk -v b="$disk" -v n="$records" 'BEGIN{printf ", %.1f in its log segments", b / n}'); load average at the end: $(bench_load)"
