#!/usr/bin/env python3
"""scope_oracle.py - an independent count of a topic's topic-scoped streams.

Reads `kcat -C -J` lines (one record each, with its headers) on stdin and
prints one line of name=value words about the records that carry
eos.producer, eos.epoch, eos.seq and eos.scope=topic, one stream per
(producer, epoch) over all partitions of the topic (schema/HEADERS.md):

  records      such records
  untracked    records with none of eos.producer, eos.epoch, eos.seq
  other        any other record (per-partition stamps, partial stamps)
  streams      distinct (producer, epoch)
  producers    distinct producers
  partitions   partitions holding such records
  distinct     distinct (producer, epoch, seq)
  extra        copies of a (producer, epoch, seq) after its first (offset
               order on each partition; which copy is "first" does not
               change the count)
  missing      seqs below a stream's highest that never came
  fenced       records of an older epoch of a producer whose timestamp is
               later than the first record of a newer epoch of it: written
               by a zombie after the new session began
  redelivered  records whose eos.msgid an earlier record of another
               (producer, epoch, seq) carried (by timestamp, then partition
               and offset); exact copies count as extra, not here
  msgids       records carrying eos.msgid
  epochs       each producer's epochs in increasing order, "p:e1/e2;..."
  dense        1 if every stream's seqs are exactly 0..n-1 with no copy
  seqmax       the highest seq of any stream

It knows nothing of eosaudit's code: it is the oracle the audit is checked
against.  Usage: kcat ... -J | scope_oracle.py [--skip-every N]
With --skip-every N it also prints skipped: the seqs N-1, 2N-1, ... below
each stream's highest (what eos.test.skip.every=N leaves out).
"""
import json
import sys


def main():
    skip_every = 0
    if len(sys.argv) == 3 and sys.argv[1] == "--skip-every":
        skip_every = int(sys.argv[2])
    streams = {}  # (producer, epoch) -> {seq: copies}
    first_ts = {}  # (producer, epoch) -> earliest timestamp
    recs = []  # (ts, partition, offset, producer, epoch, seq, msgid)
    parts = set()
    untracked = other = 0
    for line in sys.stdin:
        m = json.loads(line)
        h = m.get("headers") or []
        d = dict(zip(h[0::2], h[1::2]))
        have = [k in d for k in ("eos.producer", "eos.epoch", "eos.seq")]
        if not any(have):
            untracked += 1
            continue
        if not all(have) or d.get("eos.scope") != "topic":
            other += 1
            continue
        key = (d["eos.producer"], int(d["eos.epoch"]))
        seq = int(d["eos.seq"])
        s = streams.setdefault(key, {})
        s[seq] = s.get(seq, 0) + 1
        ts = m.get("ts", -1)
        if key not in first_ts or ts < first_ts[key]:
            first_ts[key] = ts
        parts.add(m["partition"])
        recs.append((ts, m["partition"], m["offset"], key[0], key[1], seq,
                     d.get("eos.msgid")))

    by_producer = {}
    for (p, e) in streams:
        by_producer.setdefault(p, []).append(e)
    fenced = 0
    for ts, _, _, p, e, _, _ in recs:
        if any(n > e and ts > first_ts[(p, n)] for n in by_producer[p]):
            fenced += 1

    redelivered = msgids = 0
    owner = {}  # msgid -> the (producer, epoch, seq) that carried it first
    for ts, _, _, p, e, seq, mid in sorted(recs):
        if mid is None:
            continue
        msgids += 1
        first = owner.setdefault(mid, (p, e, seq))
        if first != (p, e, seq):
            redelivered += 1

    extra = sum(n - 1 for s in streams.values() for n in s.values())
    missing = sum(max(s) + 1 - len(s) for s in streams.values())
    dense = all(sorted(s) == list(range(len(s))) and
                all(n == 1 for n in s.values()) for s in streams.values())
    out = {
        "records": len(recs),
        "untracked": untracked,
        "other": other,
        "streams": len(streams),
        "producers": len(by_producer),
        "partitions": len(parts),
        "distinct": sum(len(s) for s in streams.values()),
        "extra": extra,
        "missing": missing,
        "fenced": fenced,
        "redelivered": redelivered,
        "msgids": msgids,
        "dense": int(dense),
        "seqmax": max((max(s) for s in streams.values()), default=-1),
    }
    if skip_every:
        out["skipped"] = sum(
            len([q for q in range(skip_every - 1, max(s), skip_every)])
            for s in streams.values())
    words = ["%s=%d" % kv for kv in out.items()]
    words.append("epochs=" + ";".join(
        "%s:%s" % (p, "/".join(str(e) for e in sorted(es)))
        for p, es in sorted(by_producer.items())))
    print(" ".join(words))


if __name__ == "__main__":
    main()
