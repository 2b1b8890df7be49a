-- 0015_topic_streams.sql - topic-scoped streams (eos.scope: topic,
-- dedup/topic.h, schema/HEADERS.md "Topic-scoped streams").
--
-- One row per stream (topic, producer, epoch), rewritten whole in the same
-- transaction as the offsets that got it there, like a pair.  floor, base
-- and next: seqs below floor are not tracked, [base, next) are not settled
-- yet.  state is a little-endian blob:
--   u8 version (1); u32 nwords, nlocs, ndone;
--   nwords x (u64 bits, i64 ms): the words of 64 seqs from base / 64 on,
--       bit seq % 64 set when seq was seen, ms the latest record time that
--       showed a seq of the word;
--   nlocs x (i64 seq, i32 partition, i64 offset): where the last seqs were
--       seen (the evidence of a duplicate's first copy);
--   ndone x (i64 lo, i64 hi, i32 partition, i64 offset, u8 unknown): the
--       confirmed gaps still remembered, the partition they are counted on.
-- Partitions, never the tracker's part indexes (which may change between
-- runs); those no longer audited are dropped on load.
CREATE TABLE topic_streams (
        topic    TEXT    NOT NULL,
        producer TEXT    NOT NULL,
        epoch    INTEGER NOT NULL,
        floor    INTEGER NOT NULL,
        base     INTEGER NOT NULL,
        next     INTEGER NOT NULL,
        last_ms  INTEGER NOT NULL,
        records  INTEGER NOT NULL,
        state    BLOB    NOT NULL,
        PRIMARY KEY (topic, producer, epoch)
) STRICT, WITHOUT ROWID;
