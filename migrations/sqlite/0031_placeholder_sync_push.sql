-- PLACEHOLDER on branch sync-pull only: step 0031 belongs to sync-push (issue 32);
-- the loader refuses a gap in the numbering, so this stands in for it
-- until that branch's own migration replaces it at the merge. Drop me.
SELECT 1;
