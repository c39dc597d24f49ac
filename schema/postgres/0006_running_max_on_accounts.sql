-- Each account's latest entry running maximum on its row (issue 27: the reads indexes
-- without their cost per submit). Same column as schema/sqlite/0005_running_max_on_accounts.sql,
-- which explains it: the engine's write statement now carries every entry's
-- created_at_running_max and the transaction_metadata rows (engines/common/
-- entry_running_max.h, engine_common::IndexedMetadataMembers), so the triggers of
-- 0005_reads_indexes.sql and their functions go. PL/pgSQL ran once per entry and once
-- per transaction; the lock read and the UPDATE of the account row that a submit already
-- makes now carry the running maximum.

ALTER TABLE accounts ADD COLUMN entries_running_max BIGINT;

UPDATE accounts SET entries_running_max = latest.running_max
FROM (SELECT account_id, max(created_at) AS running_max FROM entries GROUP BY account_id)
  AS latest
WHERE accounts.id = latest.account_id;

DROP TRIGGER IF EXISTS entries_keep_running_max ON entries;
DROP FUNCTION IF EXISTS ledger_entries_running_max();
DROP TRIGGER IF EXISTS transactions_index_metadata ON transactions;
DROP FUNCTION IF EXISTS ledger_transactions_index_metadata();
DROP FUNCTION IF EXISTS ledger_transaction_metadata_members(TEXT);
