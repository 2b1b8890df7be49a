-- 0006_flow.sql - the flow audit (dedup/flow.h): lineage of a processor's
-- records from its source topics to its sink topics, by message id.
--
-- One row per entry of the flow engine, keyed by its arrival seq (unique in
-- the ledger).  live = 1: an entry the engine holds and restores after a
-- restart.  live = 0: an entry it retired (memory bound) whose outcome was
-- lost, duplicated or unexpected, kept as evidence; retired entries of any
-- other outcome are deleted (their counts live in flow_state).
-- id_lo, id_hi: the 128-bit hash of the id (as signed 64-bit integers);
-- id: at most 32 bytes of the id itself, id_len its whole length.
-- Topics are stored by name: a later run maps them back to its partitions.
CREATE TABLE flow_entries (
        seq             INTEGER PRIMARY KEY,
        id_lo           INTEGER NOT NULL,
        id_hi           INTEGER NOT NULL,
        outcome         TEXT    NOT NULL,
        live            INTEGER NOT NULL,
        src_topic       TEXT,
        src_partition   INTEGER,
        src_offset      INTEGER,
        src_ts          INTEGER,
        copies          INTEGER NOT NULL,
        sink_topic      TEXT,
        sink_partition  INTEGER,
        sink_offset     INTEGER,
        sink_topic_last TEXT,
        sink_partition_last INTEGER,
        sink_offset_last INTEGER,
        sink_ts         INTEGER,
        born            INTEGER NOT NULL,
        due             INTEGER NOT NULL,
        latency_done    INTEGER NOT NULL,
        id              BLOB,
        id_len          INTEGER NOT NULL
);
CREATE INDEX flow_entries_outcome ON flow_entries (outcome, seq);

-- The engine's state besides its entries (struct dedup_flow_state, as
-- decimal numbers separated by spaces, in the order flow.c writes them),
-- and the figures of the last commit for reports: counts by outcome and
-- end-to-end latency.  One row.
CREATE TABLE flow_state (
        one             INTEGER PRIMARY KEY CHECK (one = 1),
        state           TEXT    NOT NULL,
        expect          TEXT    NOT NULL,
        source_records  INTEGER NOT NULL,
        delivered       INTEGER NOT NULL,
        lost            INTEGER NOT NULL,
        duplicated      INTEGER NOT NULL,
        duplicate_copies INTEGER NOT NULL,
        pending         INTEGER NOT NULL,
        awaiting        INTEGER NOT NULL,
        unexpected      INTEGER NOT NULL,
        source_repeats  INTEGER NOT NULL,
        source_no_id    INTEGER NOT NULL,
        sink_no_id      INTEGER NOT NULL,
        sink_records    INTEGER NOT NULL,
        live            INTEGER NOT NULL,
        lat_count       INTEGER NOT NULL,
        lat_p50_ms      INTEGER NOT NULL,
        lat_p99_ms      INTEGER NOT NULL,
        lat_max_ms      INTEGER NOT NULL,
        updated_ms      INTEGER NOT NULL
);
