-- 0004_incarnations.sql - a topic deleted and recreated (or a log truncated
-- by an unclean leader election) is told from the log the ledger knows.
--
-- Each partition row keeps a fingerprint of the last record audited there:
-- its offset, its timestamp and a 128-bit hash of its key, value and headers
-- (auditor/fingerprint.h), written in the same transaction as next_offset.
-- When the audit resumes it reads that record again; when it differs or is
-- gone, or the log now ends below it, the topic starts a new incarnation:
-- the ledger's state of the topic (partitions, pairs, open gaps, coverage
-- gaps, id windows) is retired and the new log is audited from its start.
ALTER TABLE partitions ADD COLUMN fp_offset INTEGER NOT NULL DEFAULT -1;
ALTER TABLE partitions ADD COLUMN fp_ts INTEGER NOT NULL DEFAULT -1;
ALTER TABLE partitions ADD COLUMN fp_lo INTEGER NOT NULL DEFAULT 0;
ALTER TABLE partitions ADD COLUMN fp_hi INTEGER NOT NULL DEFAULT 0;

-- The incarnation of its topic an anomaly belongs to (0: the first), and,
-- for a 'coverage' row that opens a new incarnation, why: 'recreated' (the
-- record the audit stopped at is another one, or gone) or 'truncated' (the
-- log now ends at or below it).  NULL for every other row.
ALTER TABLE anomalies ADD COLUMN incarnation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE anomalies ADD COLUMN reason TEXT;

-- Every incarnation after a topic's first (which has no row): when it began
-- and why.  A topic's current incarnation is its highest, or 0.
CREATE TABLE incarnations (
        topic           TEXT    NOT NULL,
        incarnation     INTEGER NOT NULL CHECK (incarnation > 0),
        started_ms      INTEGER NOT NULL,
        reason          TEXT    NOT NULL,
        PRIMARY KEY (topic, incarnation)
) STRICT, WITHOUT ROWID;

-- The partition rows of an earlier incarnation, as they were when it ended
-- (the evidence of what was counted there; its anomalies rows stay where
-- they are, tagged with their incarnation).
CREATE TABLE retired_partitions (
        topic           TEXT    NOT NULL,
        incarnation     INTEGER NOT NULL,
        partition       INTEGER NOT NULL,
        next_offset     INTEGER NOT NULL,
        from_log_start  INTEGER NOT NULL,
        records         INTEGER NOT NULL,
        untracked       INTEGER NOT NULL,
        duplicate       INTEGER NOT NULL,
        gap             INTEGER NOT NULL,
        out_of_order    INTEGER NOT NULL,
        fenced          INTEGER NOT NULL,
        malformed       INTEGER NOT NULL,
        redelivered     INTEGER NOT NULL,
        missing         INTEGER NOT NULL,
        ids             INTEGER NOT NULL,
        fp_offset       INTEGER NOT NULL,
        updated_ms      INTEGER NOT NULL,
        retired_ms      INTEGER NOT NULL,
        PRIMARY KEY (topic, incarnation, partition)
) STRICT, WITHOUT ROWID;
