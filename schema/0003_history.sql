-- 0003_history.sql - what the audit did, minute by minute, for the
-- dashboard's chart (/api/v1/history): records audited and anomalies found
-- per topic and minute, kept for the last 7 days.
--
-- The rows are written by triggers, inside the transaction of the commit
-- that changed the counters, so the history is exactly as durable and as
-- consistent as the counters themselves: a batch that is rolled back (or
-- lost in a crash before COMMIT) leaves no trace here either, and one that
-- is replayed counts once.  ledger_commit() needs no change for it.
--
-- A row holds increments, not totals: what the commits of that minute
-- added to the counters of partitions (and, for unaudited, to
-- coverage_gaps).  A counter that went down (it never does today) adds 0.
-- Sums are clamped at 2^63-1 like every counter.

CREATE TABLE history (
        minute_ms       INTEGER NOT NULL CHECK (minute_ms % 60000 = 0),
        topic           TEXT    NOT NULL,
        records         INTEGER NOT NULL DEFAULT 0, -- records audited
        untracked       INTEGER NOT NULL DEFAULT 0, -- of them without eos.*
        anomalous       INTEGER NOT NULL DEFAULT 0, -- records: duplicate,
                                                    -- out_of_order, fenced,
                                                    -- malformed, redelivered
        gaps            INTEGER NOT NULL DEFAULT 0, -- confirmed gaps (events)
        missing         INTEGER NOT NULL DEFAULT 0, -- records in those gaps
        unaudited       INTEGER NOT NULL DEFAULT 0, -- offsets in coverage gaps
        PRIMARY KEY (minute_ms, topic)
) STRICT, WITHOUT ROWID;

-- Every commit writes a partition's row with INSERT OR REPLACE, which fires
-- INSERT triggers only; BEFORE, the old row is still there to subtract.
CREATE TRIGGER history_partition BEFORE INSERT ON partitions
BEGIN
        INSERT INTO history (minute_ms, topic, records, untracked, anomalous,
                             gaps, missing)
        SELECT NEW.updated_ms - NEW.updated_ms % 60000, NEW.topic,
               max(NEW.records - coalesce(o.records, 0), 0),
               max(NEW.untracked - coalesce(o.untracked, 0), 0),
               max(NEW.duplicate + NEW.out_of_order + NEW.fenced +
                   NEW.malformed + NEW.redelivered -
                   coalesce(o.duplicate + o.out_of_order + o.fenced +
                            o.malformed + o.redelivered, 0), 0),
               max(NEW.gap - coalesce(o.gap, 0), 0),
               max(NEW.missing - coalesce(o.missing, 0), 0)
        FROM (SELECT 1) LEFT JOIN partitions AS o
             ON o.topic = NEW.topic AND o.partition = NEW.partition
        WHERE NEW.updated_ms >= 0
        ON CONFLICT (minute_ms, topic) DO UPDATE SET
                records = min(records + excluded.records,
                              9223372036854775807),
                untracked = min(untracked + excluded.untracked,
                                9223372036854775807),
                anomalous = min(anomalous + excluded.anomalous,
                                9223372036854775807),
                gaps = min(gaps + excluded.gaps, 9223372036854775807),
                missing = min(missing + excluded.missing,
                              9223372036854775807);
        -- The bound: 7 days (10080 minutes, LEDGER_HISTORY_MINUTES), so at
        -- most 10081 rows per topic.  A range on the primary key: cheap.
        DELETE FROM history
        WHERE minute_ms < NEW.updated_ms - NEW.updated_ms % 60000 - 604800000;
END;

-- Offsets retention deleted before the audit; a gap stored again (a
-- replay) is not inserted, so it does not fire this.
CREATE TRIGGER history_coverage AFTER INSERT ON coverage_gaps
BEGIN
        INSERT INTO history (minute_ms, topic, unaudited)
        VALUES (NEW.detected_ms - NEW.detected_ms % 60000, NEW.topic,
                NEW.offset_hi - NEW.offset_lo + 1)
        ON CONFLICT (minute_ms, topic) DO UPDATE SET
                unaudited = min(unaudited + excluded.unaudited,
                                9223372036854775807);
END;
