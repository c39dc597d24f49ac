-- The balance as of an instant without an index of its own (issue 27: the reads indexes
-- without their cost per submit). Same change as
-- schema/sqlite/0006_as_of_by_binary_search.sql, which explains it: the as-of lookup is a
-- binary search over the primary key (kSelectEntryAsOf in engines/mysql/mysql_statements.h),
-- so entries_by_account_as_of, which every entry paid for, goes. created_at_running_max
-- stays: the search reads it. The primary key (account_id, account_version) still serves
-- the foreign key on account_id.
--
-- MySQL commits DDL implicitly: the statement is re-runnable (the key dropped only when
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
