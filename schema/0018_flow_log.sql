-- 0018_flow_log.sql - the flow store's batches in a file of their own.
--
-- Every commit of a flow audit appended the views it changed as a blob to
-- flow_batches (0016_flow_store.sql): SQLite wrote each view twice (its WAL,
-- then the checkpoint into the database), and the blob's pages went through
-- its B-tree, for views that were read again only after a restart.  They
-- now go to an append-only file beside the ledger,
-- "<ledger>-ids/<log>.flowlog", in the same 128-byte format: each commit
-- writes its views at the end of the file and makes them durable, then its
-- transaction records the file's new length here.  What lies past that
-- length (a commit that did not complete) is not read, and is overwritten by
-- the next one.  When the views are closed into a "<gen>.flow" file, the
-- same transaction starts the next log; the old one is unlinked once it has
-- committed.  A log no row names is removed at the next load.
--
-- flow_batches stays for a ledger written before this version: its blobs
-- are read at load, before the log's views, and deleted with the next close.
CREATE TABLE flow_log (
        one     INTEGER PRIMARY KEY CHECK (one = 1),
        log     INTEGER NOT NULL CHECK (log > 0),
        bytes   INTEGER NOT NULL CHECK (bytes >= 0)
);
