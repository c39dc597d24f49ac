-- Two reads indexes fewer for every submit to keep (issue 27: the reads indexes without
-- their cost per submit); every read they served stays, each bounded by the length of a
-- page, not of the history.
--
-- entries_by_account_as_of (0004_reads_indexes.sql) cost every entry a second B-tree
-- insertion. The same answer, the greatest version whose created_at_running_max is <= T,
-- is a binary search over the primary key (account_id, account_version): the running
-- maximum never decreases along the versions and the versions run 1..N, so log2(N) + 1
-- primary-key lookups in one statement (kSelectEntryAsOf in
-- engines/sqlite/sqlite_statements.h). The column stays: the search reads it.
--
-- transactions_by_time (created_at, id) cost every transaction one more insertion beside
-- transactions_by_kind_time (kind, created_at, id). A page of the listing without a kind
-- filter is now the merge of every kind's range of the latter, each cut at the page's
-- limit (engines/common/transaction_page.cc): at most kinds x limit index entries read.
DROP INDEX IF EXISTS entries_by_account_as_of;
DROP INDEX IF EXISTS transactions_by_time;
