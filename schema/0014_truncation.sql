-- 0014_truncation.sql - a partition's log truncated under the audit (an
-- unclean leader election) is un-audited past the point where it diverged,
-- not taken for a new topic.
--
-- To find that point and what to take back, the ledger keeps, for the last
-- LEDGER_TRUNC_KEEP offsets of each partition (auditor/ledger/truncate.c):
--  - audited_batches: the fingerprint (auditor/fingerprint.h) of the last
--    record of every committed batch, one row per partition and commit
--    (40 bytes of payload); read back newest first until one still matches
--    the log, the log is known to be the same up to that record;
--  - audited_runs: the records the engine accepted, as runs of one
--    producer's stream whose offsets and seqs both step by one (the seq of
--    the record at offset o of a run is seq_lo + o - offset_lo): about 40
--    bytes plus the producer's name per run, one run per Kafka batch where
--    producers interleave, one per commit where one producer writes.
-- Both are written in the transaction of the batch they describe.
CREATE TABLE audited_batches (
        topic           TEXT    NOT NULL,
        partition       INTEGER NOT NULL,
        offset          INTEGER NOT NULL, -- the batch's last record
        fp_ts           INTEGER NOT NULL,
        fp_lo           INTEGER NOT NULL,
        fp_hi           INTEGER NOT NULL,
        PRIMARY KEY (topic, partition, offset)
) STRICT, WITHOUT ROWID;

CREATE TABLE audited_runs (
        topic           TEXT    NOT NULL,
        partition       INTEGER NOT NULL,
        offset_lo       INTEGER NOT NULL,
        offset_hi       INTEGER NOT NULL CHECK (offset_hi >= offset_lo),
        producer        TEXT    NOT NULL,
        epoch           INTEGER NOT NULL,
        seq_lo          INTEGER NOT NULL,
        PRIMARY KEY (topic, partition, offset_lo)
) STRICT, WITHOUT ROWID;

-- One row per truncation found: offsets offset_lo..offset_hi (from the
-- divergence point to the ledger's next offset then) were un-audited;
-- records: the accepted records among them that the audit took back.
-- Each is also an anomalies row of kind 'truncated'.
CREATE TABLE truncations (
        topic           TEXT    NOT NULL,
        partition       INTEGER NOT NULL,
        offset_lo       INTEGER NOT NULL,
        offset_hi       INTEGER NOT NULL,
        log_end         INTEGER NOT NULL, -- the high watermark seen then
        records         INTEGER NOT NULL,
        leader_epoch    INTEGER,          -- NULL: unknown
        how             TEXT    NOT NULL, -- what showed it
        detected_ms     INTEGER NOT NULL,
        PRIMARY KEY (topic, partition, detected_ms, offset_lo)
) STRICT, WITHOUT ROWID;

-- What a 'truncated' anomaly row says beyond its columns, a JSON object:
-- {"how", "log_end", "leader_epoch" (null: unknown), "streams": [{"producer",
-- "epoch", "seq_lo", "epoch_hi", "seq_hi", "records"}, ...]}, the seqs each
-- producer stream had accepted there; NULL for every other row.
ALTER TABLE anomalies ADD COLUMN detail TEXT;
