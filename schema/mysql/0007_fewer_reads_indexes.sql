-- Two reads indexes fewer for every submit to keep (issue 27). Same change as
-- schema/sqlite/0006_fewer_reads_indexes.sql, which explains it: the as-of lookup is a
-- binary search over the primary key (kSelectEntryAsOf in engines/mysql/mysql_statements.h),
-- and a page of the transaction listing without a kind filter merges every kind's range
-- of transactions_by_kind_time (engines/common/transaction_page.cc). created_at_running_max
-- stays: the search reads it. The primary key (account_id, account_version) still serves
-- the foreign key on entries.account_id.
--
-- MySQL commits DDL implicitly: each statement is re-runnable (a key dropped only when
-- present). No comment may share a line with a statement, and no string may end a line
-- with ';'.

SET @ledger_ddl = IF(
  EXISTS (SELECT 1 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()
          AND TABLE_NAME = 'entries' AND INDEX_NAME = 'entries_by_account_as_of'),
  'ALTER TABLE entries DROP KEY entries_by_account_as_of',
  'DO 0');
PREPARE ledger_ddl FROM @ledger_ddl;
EXECUTE ledger_ddl;
DEALLOCATE PREPARE ledger_ddl;

SET @ledger_ddl = IF(
  EXISTS (SELECT 1 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()
          AND TABLE_NAME = 'transactions' AND INDEX_NAME = 'transactions_by_time'),
  'ALTER TABLE transactions DROP KEY transactions_by_time',
  'DO 0');
PREPARE ledger_ddl FROM @ledger_ddl;
EXECUTE ledger_ddl;
DEALLOCATE PREPARE ledger_ddl;
