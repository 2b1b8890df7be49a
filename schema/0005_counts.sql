-- 0005_counts.sql - the summary's counts, kept as the ledger changes.
--
-- The summary (/api/v1/summary, /metrics, eosaudit report) needs per topic
-- the number of (partition, producer) pairs, of distinct producers, of open
-- gaps and of coverage gaps.  Counting them on every request took 0.2-0.5 s
-- at a million pairs (COUNT(DISTINCT producer) walks the whole table).  So
-- ledger_commit() (auditor/ledger/counts.c) keeps them here, in the
-- transaction of the batch that changed pairs, open_gaps or coverage_gaps:
-- the counts are exactly as durable as the rows they count (a rolled-back
-- batch leaves no trace, a replayed one counts once), across restarts.
-- Any other writer of those tables must keep them too.
--
-- Not triggers: a statement that fires one may change several rows, and
-- SQLite runs such a statement, when it may also ABORT half-way (any NOT
-- NULL column), in a statement journal that copies every page it touches
-- that the transaction had already changed - 4 KiB per pair write, which
-- made a scan of a million new pairs 2.4 times slower.  The commit path
-- knows what it inserted and deleted (sqlite3_changes()) for free.

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
