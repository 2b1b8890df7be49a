-- 0008_txn.sql - transactions' atomicity (--txn-manifests, dedup/txn.h).
--
-- A transactional producer stamps eos.txn on its records and writes one
-- manifest per committed transaction (schema/HEADERS.md, "Transactions").
-- The audit keeps each transaction pending until every record its manifest
-- lists is visible; what is pending survives a restart here, written in the
-- same transaction as the offsets that got it there.

-- Counters: one per (transaction, partition) found short (torn), and
-- records of aborted transactions that were visible (aborted_read).
ALTER TABLE partitions ADD COLUMN torn INTEGER NOT NULL DEFAULT 0;
ALTER TABLE partitions ADD COLUMN aborted_read INTEGER NOT NULL DEFAULT 0;

-- A pending transaction of (producer, epoch, txn), or a tombstone of an
-- aborted one (state 2) kept for the grace.  state: 0 records seen, no
-- manifest yet; 1 manifest seen (at manifest_topic [manifest_partition]
-- manifest_offset); 2 aborted.  opened_ms is on the records' clock.
-- parts holds one line per partition of the transaction, rewritten whole
-- with it (one row per transaction keeps the write path to one statement):
--   "TOPIC PARTITION EXPECTED SEEN OFFSET_LO OFFSET_HI\n"
-- EXPECTED is what the manifest lists (0 without one), SEEN the records
-- seen at offsets OFFSET_LO..OFFSET_HI (-1 none); Kafka topic names hold
-- no blank.
CREATE TABLE txn_pending (
        producer            TEXT    NOT NULL,
        epoch               INTEGER NOT NULL,
        txn                 INTEGER NOT NULL,
        state               INTEGER NOT NULL CHECK (state IN (0, 1, 2)),
        manifest_topic      TEXT,
        manifest_partition  INTEGER,
        manifest_offset     INTEGER,
        opened_ms           INTEGER NOT NULL,
        parts               TEXT    NOT NULL,
        PRIMARY KEY (producer, epoch, txn)
) STRICT, WITHOUT ROWID;

-- The partition rows an earlier incarnation retired (0004) keep the same
-- counters as partitions.
ALTER TABLE retired_partitions ADD COLUMN torn INTEGER NOT NULL DEFAULT 0;
ALTER TABLE retired_partitions ADD COLUMN aborted_read INTEGER NOT NULL DEFAULT 0;
