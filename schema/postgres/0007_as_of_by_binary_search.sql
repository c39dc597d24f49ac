-- The balance as of an instant without an index of its own (issue 27: the reads indexes
-- without their cost per submit). Same change as
-- schema/sqlite/0006_as_of_by_binary_search.sql, which explains it: the as-of lookup is a
-- binary search over entries_pkey (kSelectEntryAsOf in
-- engines/postgres/postgres_statements.cc), so entries_by_account_as_of, which every entry
-- paid for, goes. created_at_running_max stays: the search reads it.
DROP INDEX IF EXISTS entries_by_account_as_of;
