-- 0005_reserved.sql - a placeholder, and nothing else.
--
-- Helpers working in parallel each add a migration with a number they were
-- given; this branch's is 0009_counts.sql, and migrations must be numbered
-- without a hole.  When the branches are merged, the real 0005_*.sql
-- replaces this file.
SELECT 1;
