-- 0007_verdicts.sql - what the engine needs to keep its verdicts right
-- after a restart (issue 14).

-- The broker's producer id (eos.pid) of the pair's session, -1 unknown: a
-- new producer id at epoch 0 is a new session, not a fenced write, after a
-- restart as before it.  retired_pid0, retired_pid1 are the ids the
-- producer's current one replaced when the pair was written (oldest first,
-- -1 none): a write from one of them stays fenced after a restart.  The
-- producer's are the ones of its pair written last (highest last_ms).
ALTER TABLE pairs ADD COLUMN pid INTEGER NOT NULL DEFAULT -1;
ALTER TABLE pairs ADD COLUMN retired_pid0 INTEGER NOT NULL DEFAULT -1;
ALTER TABLE pairs ADD COLUMN retired_pid1 INTEGER NOT NULL DEFAULT -1;

-- The record time of the first record of the producer's current session
-- when the pair was written (-1 unknown): a write of an older session after
-- it, on any partition, is fenced, after a restart as before it.
ALTER TABLE pairs ADD COLUMN session_ms INTEGER NOT NULL DEFAULT -1;

-- anomalies of kind 'fenced': first_partition and first_offset name the
-- first record of the producer's current session (NULL when it began before
-- the audit restarted), the evidence that the fenced write came after it.

-- A record that comes after its gap was confirmed (the scan ended, the grace
-- passed, the open-gap bound was reached) is out_of_order, not a duplicate,
-- and no longer missing: partitions.missing counts records still missing
-- (it goes down), recovered counts the records that came back late (each
-- also counted in out_of_order).
ALTER TABLE partitions ADD COLUMN recovered INTEGER NOT NULL DEFAULT 0;

-- The confirmed gaps a pair still remembers (the last 8 of its epoch; a new
-- epoch forgets them), what of each is still missing, [lo, hi] of epoch.
-- Rewritten as a whole with the pair, as open_gaps.
CREATE TABLE confirmed_gaps (
        topic           TEXT    NOT NULL,
        partition       INTEGER NOT NULL,
        producer        TEXT    NOT NULL,
        ord             INTEGER NOT NULL,
        epoch           INTEGER NOT NULL,
        lo              INTEGER NOT NULL,
        hi              INTEGER NOT NULL CHECK (hi >= lo),
        opened_offset   INTEGER NOT NULL,
        opened_ms       INTEGER NOT NULL,
        unknown         INTEGER NOT NULL CHECK (unknown IN (0, 1)),
        PRIMARY KEY (topic, partition, producer, ord)
) STRICT, WITHOUT ROWID;

-- Retention deleted records before they were audited (a coverage gap):
-- the gaps open at that moment may lie in the deleted records.  Each is an
-- anomalies row of kind 'gap_unknown' (count: its records) and a confirmed
-- gap with unknown = 1; partitions.unknown counts their records, which are
-- neither missing nor found (a record that fills one lowers it).  Pairs
-- keep their epoch and last seq across the hole: pairs.rebaseline = 1 now
-- means only that the pair's next accepted record may jump ahead.
ALTER TABLE partitions ADD COLUMN unknown INTEGER NOT NULL DEFAULT 0;

-- The partition rows an earlier incarnation retired (0004) keep the same
-- counters as partitions.
ALTER TABLE retired_partitions ADD COLUMN recovered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE retired_partitions ADD COLUMN unknown INTEGER NOT NULL DEFAULT 0;
