-- Each account's latest entry running maximum on its row (issue 27: the reads indexes
-- without their cost per submit). Same column as schema/sqlite/0005_running_max_on_accounts.sql,
-- which explains it. MySQL never had the triggers: its write path read each account's
-- latest entry with the lock instead (a subquery per locked account), and an account
-- not locked with one more SELECT before its entries. The lock read now returns the
-- account's entries_running_max and the UPDATE of its balance and version stores it.
--
-- MySQL commits DDL implicitly: each statement is re-runnable (the column added only when
-- missing; the backfill only where it is missing). No comment may share a line with a
-- statement, and no string may end a line with ';'.

SET @ledger_ddl = IF(
  EXISTS (SELECT 1 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
          AND TABLE_NAME = 'accounts' AND COLUMN_NAME = 'entries_running_max'),
  'DO 0',
  'ALTER TABLE accounts ADD COLUMN entries_running_max BIGINT NULL');
PREPARE ledger_ddl FROM @ledger_ddl;
EXECUTE ledger_ddl;
DEALLOCATE PREPARE ledger_ddl;

UPDATE accounts JOIN (
  SELECT account_id, MAX(created_at) AS running_max FROM entries GROUP BY account_id) AS latest
  ON accounts.id = latest.account_id
SET accounts.entries_running_max = latest.running_max
WHERE accounts.entries_running_max IS NULL;
