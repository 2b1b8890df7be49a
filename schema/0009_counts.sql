-- 0009_counts.sql - the summary's counts, kept as the ledger changes.
--
-- The summary (/api/v1/summary, /metrics, eosaudit report) needs per topic
-- the number of (partition, producer) pairs, of distinct producers, of open
-- gaps and of coverage gaps.  Counting them on every request took 0.2-0.5 s
-- at a million pairs (COUNT(DISTINCT producer) walks the whole table).  So
-- triggers keep them here, inside the transaction of the commit that
-- changed pairs, open_gaps or coverage_gaps: the counts are exactly as
-- durable as the rows they count (a rolled-back batch leaves no trace, a
-- replayed one counts once), whatever writes the rows, across restarts.
--
-- Rule for writers: rows of pairs are written with plain INSERT or with
-- INSERT ... ON CONFLICT DO UPDATE (an UPSERT fires AFTER INSERT only when
-- it inserts), never with INSERT OR REPLACE: REPLACE deletes the old row
-- without firing DELETE triggers (recursive_triggers is off) and would
-- count the pair twice.  Deletes of any of the counted tables are counted.

-- Per topic.  A row appears with the topic's first pair, gap or coverage
-- gap and stays (with zeros) when they are gone.
CREATE TABLE counts_topic (
        topic            TEXT    NOT NULL PRIMARY KEY,
        pairs            INTEGER NOT NULL DEFAULT 0, -- rows of pairs
        producers        INTEGER NOT NULL DEFAULT 0, -- distinct producers
        open_gaps        INTEGER NOT NULL DEFAULT 0, -- rows of open_gaps
        coverage_gaps    INTEGER NOT NULL DEFAULT 0, -- rows of coverage_gaps
        coverage_records INTEGER NOT NULL DEFAULT 0  -- offsets in them
) STRICT, WITHOUT ROWID;

-- How many partitions of topic each producer has a pair on; a row per
-- (topic, producer) with at least one, so that counts_topic.producers is
-- the number of rows of its topic.
CREATE TABLE counts_topic_producer (
        topic           TEXT    NOT NULL,
        producer        TEXT    NOT NULL,
        pairs           INTEGER NOT NULL CHECK (pairs > 0),
        PRIMARY KEY (topic, producer)
) STRICT, WITHOUT ROWID;

-- On how many topics each producer has pairs (for the all-topics summary:
-- a producer writing to two topics is one producer).
CREATE TABLE counts_producer (
        producer        TEXT    NOT NULL PRIMARY KEY,
        topics          INTEGER NOT NULL CHECK (topics > 0)
) STRICT, WITHOUT ROWID;

-- The ledger as a whole: one row.
CREATE TABLE counts_all (
        one             INTEGER NOT NULL PRIMARY KEY CHECK (one = 1),
        producers       INTEGER NOT NULL -- rows of counts_producer
) STRICT;

-- The counts of a ledger made before this migration.
INSERT INTO counts_topic_producer (topic, producer, pairs)
SELECT topic, producer, COUNT(*) FROM pairs GROUP BY topic, producer;
INSERT INTO counts_producer (producer, topics)
SELECT producer, COUNT(*) FROM counts_topic_producer GROUP BY producer;
INSERT INTO counts_all (one, producers)
SELECT 1, COUNT(*) FROM counts_producer;
INSERT INTO counts_topic (topic)
SELECT topic FROM pairs UNION SELECT topic FROM open_gaps
UNION SELECT topic FROM coverage_gaps;
UPDATE counts_topic SET
        pairs = (SELECT COUNT(*) FROM pairs p WHERE p.topic = counts_topic.topic),
        producers = (SELECT COUNT(*) FROM counts_topic_producer c
                     WHERE c.topic = counts_topic.topic),
        open_gaps = (SELECT COUNT(*) FROM open_gaps g
                     WHERE g.topic = counts_topic.topic),
        coverage_gaps = (SELECT COUNT(*) FROM coverage_gaps g
                         WHERE g.topic = counts_topic.topic),
        coverage_records = (SELECT coalesce(SUM(offset_hi - offset_lo + 1), 0)
                            FROM coverage_gaps g
                            WHERE g.topic = counts_topic.topic);

CREATE TRIGGER counts_pair_insert AFTER INSERT ON pairs
BEGIN
        INSERT INTO counts_topic (topic, pairs) VALUES (NEW.topic, 1)
        ON CONFLICT (topic) DO UPDATE SET pairs = pairs + 1;
        INSERT INTO counts_topic_producer (topic, producer, pairs)
        VALUES (NEW.topic, NEW.producer, 1)
        ON CONFLICT (topic, producer) DO UPDATE SET pairs = pairs + 1;
END;

CREATE TRIGGER counts_pair_delete AFTER DELETE ON pairs
BEGIN
        UPDATE counts_topic SET pairs = pairs - 1 WHERE topic = OLD.topic;
        DELETE FROM counts_topic_producer
        WHERE topic = OLD.topic AND producer = OLD.producer AND pairs = 1;
        UPDATE counts_topic_producer SET pairs = pairs - 1
        WHERE topic = OLD.topic AND producer = OLD.producer;
END;

CREATE TRIGGER counts_topic_producer_insert AFTER INSERT ON
        counts_topic_producer
BEGIN
        UPDATE counts_topic SET producers = producers + 1
        WHERE topic = NEW.topic;
        INSERT INTO counts_producer (producer, topics) VALUES (NEW.producer, 1)
        ON CONFLICT (producer) DO UPDATE SET topics = topics + 1;
END;

CREATE TRIGGER counts_topic_producer_delete AFTER DELETE ON
        counts_topic_producer
BEGIN
        UPDATE counts_topic SET producers = producers - 1
        WHERE topic = OLD.topic;
        DELETE FROM counts_producer
        WHERE producer = OLD.producer AND topics = 1;
        UPDATE counts_producer SET topics = topics - 1
        WHERE producer = OLD.producer;
END;

CREATE TRIGGER counts_producer_insert AFTER INSERT ON counts_producer
BEGIN
        UPDATE counts_all SET producers = producers + 1;
END;

CREATE TRIGGER counts_producer_delete AFTER DELETE ON counts_producer
BEGIN
        UPDATE counts_all SET producers = producers - 1;
END;

CREATE TRIGGER counts_gap_insert AFTER INSERT ON open_gaps
BEGIN
        INSERT INTO counts_topic (topic, open_gaps) VALUES (NEW.topic, 1)
        ON CONFLICT (topic) DO UPDATE SET open_gaps = open_gaps + 1;
END;

CREATE TRIGGER counts_gap_delete AFTER DELETE ON open_gaps
BEGIN
        UPDATE counts_topic SET open_gaps = open_gaps - 1
        WHERE topic = OLD.topic;
END;

-- Offsets may be near 2^63: the sum is clamped like every counter (a gap
-- is never deleted today; if one were after a clamp, the sum would be
-- low, never negative).
CREATE TRIGGER counts_coverage_insert AFTER INSERT ON coverage_gaps
BEGIN
        INSERT INTO counts_topic (topic, coverage_gaps, coverage_records)
        VALUES (NEW.topic, 1, NEW.offset_hi - NEW.offset_lo + 1)
        ON CONFLICT (topic) DO UPDATE SET
                coverage_gaps = coverage_gaps + 1,
                coverage_records = min(coverage_records +
                                       excluded.coverage_records,
                                       9223372036854775807);
END;

CREATE TRIGGER counts_coverage_delete AFTER DELETE ON coverage_gaps
BEGIN
        UPDATE counts_topic SET
                coverage_gaps = coverage_gaps - 1,
                coverage_records = max(coverage_records -
                                       (OLD.offset_hi - OLD.offset_lo + 1), 0)
        WHERE topic = OLD.topic;
END;
