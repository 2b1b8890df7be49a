-- 0003_placeholder.sql - holds number 3 for another branch's migration so
-- that this branch builds (schema/embed.sh wants contiguous numbers).  It
-- changes nothing.  At merge: drop this file when the real 0003 lands.
SELECT 1;
