-- 0016_flow_store.sql - the flow engine's entries packed, not one row each.
--
-- Every commit of a flow audit appends the entries it changed (dirty and
-- retired, dedup/flow.h "Persistence") as one blob to flow_batches: 128
-- bytes per entry, little-endian, in the format auditor/ledger/flow_store.c
-- describes (the id's hash first, then its seq, its fields, its outcome and
-- whether it is live, and up to 32 bytes of the id).  The latest view of an
-- id is the one that counts: a later batch's over an earlier one's, a
-- batch's over a file's, a newer file's over an older one's.
-- When the batches hold enough entries their latest views are written,
-- sorted by id, to a file of their own beside the ledger
-- ("<ledger>-ids/<gen>.flow", as the id windows' closed generations:
-- 0013_msgid_files.sql), made durable before the transaction that names it
-- in flow_gens and deletes the batches commits; unlinked only after the one
-- that deletes its row has.  A file no row names is removed at the next load.
--
-- Partitions are stored as a key: flow_topics' tid << 20 | partition.
--
-- flow_entries (0006_flow.sql) keeps from now on only the evidence: one row
-- per entry whose latest view is lost, duplicated or unexpected (live = 1:
-- held by the engine, 0: retired past --flow-max-ids, 2: judged in a topic's
-- old incarnation).  A ledger written before this version is converted when
-- a flow audit first loads it: its rows become one batch, and those that are
-- not evidence are deleted.
--
-- Why: one row per id, rewritten at every change into a table with two
-- indexes, was what the flow audit cost (BENCHMARKS.md, "The flow audit at
-- 5M records": the kernel's page-cache writes and SQLite's B-trees, 78 % of
-- a scan's samples).
CREATE TABLE flow_topics (
        tid     INTEGER PRIMARY KEY,
        topic   TEXT    NOT NULL UNIQUE
);
CREATE TABLE flow_batches (
        seq     INTEGER PRIMARY KEY,
        views   BLOB    NOT NULL
);
CREATE TABLE flow_gens (
        gen        INTEGER PRIMARY KEY,
        views      INTEGER NOT NULL,
        file_bytes INTEGER NOT NULL CHECK (file_bytes >= 0)
);

-- The evidence rows are read in seq order (their primary key) and are few;
-- a retired entry is found in the packed views, not by its row.  Both
-- indexes only cost writes now: every transiently bad entry (a sink
-- record aged unexpected before its source was read, say) paid two
-- random-key index updates for its evidence row, and another two when
-- the row was taken back.
DROP INDEX flow_entries_id;
DROP INDEX flow_entries_outcome;
