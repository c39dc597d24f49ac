-- The balance as of an instant without an index of its own (issue 27: the reads indexes
-- without their cost per submit). entries_by_account_as_of (0004_reads_indexes.sql) cost
-- every entry a second B-tree insertion; the same answer, the greatest version whose
-- created_at_running_max is <= T, is now a binary search over the primary key
-- (account_id, account_version): the running maximum never decreases along the versions
-- and the versions run 1..N, so log2(N) + 1 primary-key lookups in one statement
-- (kSelectEntryAsOf in engines/sqlite/sqlite_statements.h). The column stays: the search
-- reads it.
DROP INDEX IF EXISTS entries_by_account_as_of;
