-- Each account's latest entry running maximum on its row (issue 27: the reads indexes
-- without their cost per submit). An entry's created_at_running_max
-- (0004_reads_indexes.sql) is now computed by the engine's write path
-- (engines/common/entry_running_max.h) from accounts.entries_running_max, which the lock
-- read of the account returns and the UPDATE of its balance and version stores: no
-- trigger writes every entry a second time. The transaction_metadata rows are likewise
-- inserted by the write path (engine_common::IndexedMetadataMembers), not by a trigger.
--
-- The latest entry's running maximum is the greatest created_at of all the account's
-- entries: one step of entries_by_account_transaction per account. NULL for an account
-- without entries. A process of an older release still writing after this migration
-- leaves its entries without a running maximum: stop the older writers first, as for
-- every migration.
ALTER TABLE accounts ADD COLUMN entries_running_max INTEGER;

UPDATE accounts SET entries_running_max =
  (SELECT max(entries.created_at) FROM entries WHERE entries.account_id = accounts.id);

DROP TRIGGER IF EXISTS entries_keep_running_max;
DROP TRIGGER IF EXISTS transactions_index_metadata;
