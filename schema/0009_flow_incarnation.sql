-- 0009_flow_incarnation.sql - the flow audit across a topic's incarnations
-- (auditor/ledger/incarnate.c, ledger_flow_incarnate() in flow.c).
--
-- When a sink topic is recreated or truncated, the copies it held are
-- gone with it.  A source record that had reached it keeps its verdict
-- (delivered) but its copies are forgotten: prior = 1 marks it, so that a
-- re-delivery into the new sink is its first copy there, not a duplicate.
ALTER TABLE flow_entries ADD COLUMN prior INTEGER NOT NULL DEFAULT 0;
