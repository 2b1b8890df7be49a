-- 0002_msgids.sql - message ids across producer sessions (the id windows).
--
-- A record's id is eos.msgid, or what --dedup-key picked (a header, the key,
-- a hash of key and value); the ledger keeps its 128-bit hash, never the id
-- itself, except as the evidence of a redelivered anomaly.

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
-- another way mean nothing, so a change drops them.  Only a topic's newest
-- generation can be open (closed = 0).
CREATE TABLE msgid_gens (
        gen             INTEGER PRIMARY KEY CHECK (gen > 0),
        topic           TEXT    NOT NULL,
        dedup_key       TEXT    NOT NULL,
        first_ms        INTEGER NOT NULL,
        last_ms         INTEGER NOT NULL,
        ids             INTEGER NOT NULL,
        closed          INTEGER NOT NULL CHECK (closed IN (0, 1))
) STRICT;

CREATE INDEX msgid_gens_topic ON msgid_gens (topic, gen);

-- (0012_msgid_entries.sql adds a narrow format of 22 bytes per id.)
-- Ids are stored packed, 32 bytes each, little-endian: the hash's low half
-- (8), high half (8), partition (4), zero (4), offset of the first copy (8).
-- Writes only append: an open generation's ids arrive batch by batch, in
-- the batch's transaction; when the generation closes, they are written
-- again sorted, in chunks, and the batches deleted.  (Random inserts into
-- an index of ids cost SQLite about 3 us per id, the whole audit's budget.)

-- The ids of an open generation, one row per committed batch, as they came.
CREATE TABLE msgid_batches (
        gen             INTEGER NOT NULL,
        seq             INTEGER NOT NULL,
        entries         BLOB    NOT NULL,
        PRIMARY KEY (gen, seq)
) STRICT, WITHOUT ROWID;

-- The ids of a closed generation, sorted by (low half, high half) as
-- unsigned numbers, up to 120 per chunk (3840 bytes: a rowid table keeps
-- that in its 4096-byte page, where an index would spill it to overflow
-- pages, each one more read per lookup); h1, h2 are the chunk's first id
-- with the sign bit flipped, so that SQLite's signed order is that order.
-- A lookup reads the last chunk whose first id is not above the one sought.
CREATE TABLE msgid_chunks (
        gen             INTEGER NOT NULL,
        h1              INTEGER NOT NULL,
        h2              INTEGER NOT NULL,
        entries         BLOB    NOT NULL
) STRICT;

CREATE UNIQUE INDEX msgid_chunks_key ON msgid_chunks (gen, h1, h2);
