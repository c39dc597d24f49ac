-- Two reads indexes fewer for every submit to keep (issue 27). Same change as
-- schema/sqlite/0006_fewer_reads_indexes.sql, which explains it: the as-of lookup is a
-- binary search over entries_pkey (kSelectEntryAsOf in
-- engines/postgres/postgres_statements.cc), and a page of the transaction listing without
-- a kind filter merges every kind's range of transactions_by_kind_time
-- (engines/common/transaction_page.cc). created_at_running_max stays: the search reads it.
DROP INDEX IF EXISTS entries_by_account_as_of;
DROP INDEX IF EXISTS transactions_by_time;
