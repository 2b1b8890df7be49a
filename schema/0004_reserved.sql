-- Placeholder (branch wt-flow15 only): migrations 0003-0005 belong to
-- other branches; this keeps 0006_flow.sql in order until the merge, which
-- drops it.
SELECT 1;
