-- 0002_msgids.sql - message ids across producer sessions (the id windows).
--
-- A record's id is eos.msgid, or what --dedup-key picked (a header, the key,
-- a hash of key and value); the ledger keeps its 128-bit hash (two signed
-- 64-bit halves, h1 = low, h2 = high), never the id itself, except as the
-- evidence of a redelivered anomaly.

-- Counters: records whose id was seen before (redelivered), and records
-- whose id was checked at all.
ALTER TABLE partitions ADD COLUMN redelivered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE partitions ADD COLUMN ids INTEGER NOT NULL DEFAULT 0;

-- Evidence of a redelivered anomaly: the first copies are offsets
-- first_offset..first_offset_hi of first_partition (same topic); msgid is the
-- first record's id (at most 255 bytes of it), msgid_len its whole length.
ALTER TABLE anomalies ADD COLUMN first_partition INTEGER;
ALTER TABLE anomalies ADD COLUMN first_offset_hi INTEGER;
ALTER TABLE anomalies ADD COLUMN msgid BLOB;
ALTER TABLE anomalies ADD COLUMN msgid_len INTEGER;

-- One generation of a topic's id window: ids first seen between first_ms
-- and last_ms.  gen is unique in the ledger and increases; a window drops
-- its generations whole, oldest first.  dedup_key names the identity the
-- ids were made from ('msgid', 'header:NAME', 'key', 'value-hash'): ids made
-- another way mean nothing, so a change drops them.
CREATE TABLE msgid_gens (
        gen             INTEGER PRIMARY KEY CHECK (gen > 0),
        topic           TEXT    NOT NULL,
        dedup_key       TEXT    NOT NULL,
        first_ms        INTEGER NOT NULL,
        last_ms         INTEGER NOT NULL,
        ids             INTEGER NOT NULL
) STRICT;

CREATE INDEX msgid_gens_topic ON msgid_gens (topic, gen);

-- The ids of each generation and where each was first seen.  Written with
-- the batch that saw them; looked up only when a generation's in-memory
-- filter says "maybe".
CREATE TABLE msgids (
        gen             INTEGER NOT NULL,
        h1              INTEGER NOT NULL,
        h2              INTEGER NOT NULL,
        partition       INTEGER NOT NULL,
        offset          INTEGER NOT NULL,
        PRIMARY KEY (gen, h1, h2)
) STRICT, WITHOUT ROWID;
