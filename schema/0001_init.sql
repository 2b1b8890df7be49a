-- 0001_init.sql - the first ledger schema.
--
-- Migrations are append-only: never edit a released file, add NNNN_*.sql.
-- Each one runs in its own transaction that also sets PRAGMA user_version.
--
-- Conventions
--  - (topic, partition) names a Kafka partition; producer is the eos.producer
--    header as bytes (TEXT bound with an explicit length: it need not be valid
--    UTF-8 but never holds NUL), compared with BINARY collation.
--  - Counters are non-negative 64-bit integers, clamped at 2^63-1.
--  - Times are wall-clock milliseconds since the epoch (*_ms).
--  - In anomalies, NULL means unknown (no producer, no epoch, ...).
--
-- Everything one audit batch changes is written in one transaction together
-- with the partitions' next_offset, so the ledger is always a consistent
-- "audited up to here" snapshot.

-- One row per audited partition: where to resume and what was counted.
CREATE TABLE partitions (
        topic           TEXT    NOT NULL,
        partition       INTEGER NOT NULL CHECK (partition >= 0),
        next_offset     INTEGER NOT NULL, -- next offset to audit, -1 = none
        from_log_start  INTEGER NOT NULL CHECK (from_log_start IN (0, 1)),
        records         INTEGER NOT NULL DEFAULT 0, -- every record observed
        untracked       INTEGER NOT NULL DEFAULT 0, -- no eos.* header
        duplicate       INTEGER NOT NULL DEFAULT 0, -- records
        gap             INTEGER NOT NULL DEFAULT 0, -- confirmed gaps
        out_of_order    INTEGER NOT NULL DEFAULT 0, -- records
        fenced          INTEGER NOT NULL DEFAULT 0, -- records
        malformed       INTEGER NOT NULL DEFAULT 0, -- records
        missing         INTEGER NOT NULL DEFAULT 0, -- records in confirmed gaps
        updated_ms      INTEGER NOT NULL,
        PRIMARY KEY (topic, partition)
) STRICT, WITHOUT ROWID;

-- Sequence state of one producer on one partition (the engine's "pair",
-- struct dedup_pair_view).  The next expected seq is last_seq + 1.
-- run0/run1 are the DEDUP_HISTORY_RUNS most recent (seq, offset) runs, used
-- to name the first copy of a duplicate; len 0 = empty slot.
CREATE TABLE pairs (
        topic           TEXT    NOT NULL,
        partition       INTEGER NOT NULL,
        producer        TEXT    NOT NULL,
        epoch           INTEGER NOT NULL,
        last_seq        INTEGER NOT NULL, -- last seq accepted in epoch, -1 = none
        last_offset     INTEGER NOT NULL,
        last_ms         INTEGER NOT NULL,
        records         INTEGER NOT NULL,
        rebaseline      INTEGER NOT NULL CHECK (rebaseline IN (0, 1)),
        run0_seq        INTEGER NOT NULL,
        run0_offset     INTEGER NOT NULL,
        run0_len        INTEGER NOT NULL,
        run1_seq        INTEGER NOT NULL,
        run1_offset     INTEGER NOT NULL,
        run1_len        INTEGER NOT NULL,
        PRIMARY KEY (topic, partition, producer)
) STRICT, WITHOUT ROWID;

-- Reports by producer across partitions ("where does p1 write?").
CREATE INDEX pairs_producer ON pairs (producer);

-- Open (not yet confirmed) gaps of a pair, [lo, hi] of epoch.  Rewritten as
-- a whole (delete, then insert) whenever the pair is written; ord keeps the
-- engine's order, oldest first.
CREATE TABLE open_gaps (
        topic           TEXT    NOT NULL,
        partition       INTEGER NOT NULL,
        producer        TEXT    NOT NULL,
        ord             INTEGER NOT NULL,
        epoch           INTEGER NOT NULL,
        lo              INTEGER NOT NULL,
        hi              INTEGER NOT NULL CHECK (hi >= lo),
        opened_offset   INTEGER NOT NULL,
        opened_ms       INTEGER NOT NULL,
        opened_rec      INTEGER NOT NULL,
        PRIMARY KEY (topic, partition, producer, ord)
) STRICT, WITHOUT ROWID;

-- The evidence: one row per (coalesced) anomaly, append-only.  kind is
-- dedup_kind_name() ('duplicate', 'gap', ...) or 'coverage' for offsets
-- deleted by retention before they were audited.  count is records, or
-- missing records for a gap, or offsets for coverage.  offset_lo..offset_hi
-- are the records that showed it (for a gap: the record that opened it);
-- first_offset is where the first copy of a duplicate was seen.
CREATE TABLE anomalies (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
        topic           TEXT    NOT NULL,
        partition       INTEGER NOT NULL,
        kind            TEXT    NOT NULL,
        producer        TEXT,
        epoch           INTEGER,
        seq_lo          INTEGER,
        seq_hi          INTEGER,
        offset_lo       INTEGER NOT NULL,
        offset_hi       INTEGER NOT NULL,
        first_offset    INTEGER,
        count           INTEGER NOT NULL,
        detected_ms     INTEGER NOT NULL,
        malformed_bits  INTEGER NOT NULL DEFAULT 0 -- DEDUP_HDR_* missing/bad
) STRICT;

-- Newest first (ORDER BY id DESC) per topic, per topic and kind, per kind,
-- per producer; "since" filters go through detected_ms.
CREATE INDEX anomalies_topic_kind ON anomalies (topic, kind, id);
CREATE INDEX anomalies_topic ON anomalies (topic, id);
CREATE INDEX anomalies_kind ON anomalies (kind, id);
CREATE INDEX anomalies_producer ON anomalies (producer, id)
        WHERE producer IS NOT NULL;
CREATE INDEX anomalies_detected ON anomalies (detected_ms);

-- Offsets [offset_lo, offset_hi] that retention deleted before they were
-- audited.  Each is also an anomalies row of kind 'coverage'.
CREATE TABLE coverage_gaps (
        topic           TEXT    NOT NULL,
        partition       INTEGER NOT NULL,
        offset_lo       INTEGER NOT NULL,
        offset_hi       INTEGER NOT NULL CHECK (offset_hi >= offset_lo),
        detected_ms     INTEGER NOT NULL,
        PRIMARY KEY (topic, partition, offset_lo)
) STRICT, WITHOUT ROWID;
