-- 0003_verdicts.sql - what the engine needs to keep its verdicts right
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
