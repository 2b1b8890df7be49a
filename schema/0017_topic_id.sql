-- 0017_topic_id.sql - a topic deleted and created again under the same
-- name is told by its topic id, not only by the fingerprint of the last
-- audited record (0004_incarnations.sql).
--
-- Kafka gives every topic an id (a UUID) when it is created; a topic
-- created again under the same name gets another.  The audit reads it
-- with the admin client's DescribeTopics (one Metadata request, which
-- the Describe permission on the topic the audit already needs allows)
-- and keeps it here, one row per incarnation of the topic: written when
-- an audit starts or resumes (an incarnation's first sight of the topic),
-- compared there and whenever the audit reads the topic's metadata again.
-- A different id is a recreated topic; the fingerprint stays for what the
-- id cannot see (a log truncated by an unclean leader election keeps its
-- topic id), and decides alone where no id can be had: a broker that
-- answers without one (before Kafka 2.8), no answer in time, or a ledger
-- written before this version (its first start records the id).
--
-- topic_id is the UUID as Kafka's own tools print it (kafka-topics
-- --describe: 22 characters of URL-safe base64, no padding).
CREATE TABLE topic_ids (
        topic           TEXT    NOT NULL,
        incarnation     INTEGER NOT NULL CHECK (incarnation >= 0),
        topic_id        TEXT    NOT NULL,
        seen_ms         INTEGER NOT NULL, -- when this incarnation first
                                          -- saw it
        PRIMARY KEY (topic, incarnation)
) STRICT, WITHOUT ROWID;
