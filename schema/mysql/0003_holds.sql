-- Holds: two-phase transfers (ledger/hold.h, issue 13). An account's pending debits and
-- credits (what its pending holds reserve out of it and for it), the hold a capture,
-- void or expire transaction settles, and the holds themselves.
--
-- Applies to a database that already holds data: the new account columns start at 0 (no
-- hold exists yet), every existing transaction gets hold_id NULL, the holds table starts
-- empty.
--
-- MySQL commits DDL implicitly, and MySQL 8.0 has no ADD COLUMN IF NOT EXISTS (MariaDB
-- has): each ALTER TABLE is one atomic statement, run only when its first column is not
-- there yet (PREPARE of a text chosen from information_schema), so a run cut short
-- between statements is completed by the next. No comment may share a line with a
-- statement, and no string may end a line with ';' (the runner splits there).

-- Accounts: the pending amounts, never negative (a hold's amount is > 0 and released once).
SET @ledger_ddl = IF(
  EXISTS (SELECT 1 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
          AND TABLE_NAME = 'accounts' AND COLUMN_NAME = 'pending_debits'),
  'DO 0',
  'ALTER TABLE accounts
     ADD COLUMN pending_debits BIGINT NOT NULL DEFAULT 0,
     ADD COLUMN pending_credits BIGINT NOT NULL DEFAULT 0,
     ADD CONSTRAINT accounts_pending_debits_nonnegative CHECK (pending_debits >= 0),
     ADD CONSTRAINT accounts_pending_credits_nonnegative CHECK (pending_credits >= 0)');
PREPARE ledger_ddl FROM @ledger_ddl;
EXECUTE ledger_ddl;
DEALLOCATE PREPARE ledger_ddl;

-- Transactions: the hold a capture, void or expire settles. Unique, like reversal_of: a
-- hold is settled once, and a second settlement's INSERT fails on this key whatever the
-- pipeline checked (docs/engines/errors.md: retryable). Byte-wise like the other ids.
SET @ledger_ddl = IF(
  EXISTS (SELECT 1 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
          AND TABLE_NAME = 'transactions' AND COLUMN_NAME = 'hold_id'),
  'DO 0',
  'ALTER TABLE transactions
     ADD COLUMN hold_id VARBINARY(64) NULL,
     ADD UNIQUE KEY transactions_hold_id (hold_id),
     ADD CONSTRAINT transactions_hold_id_fk FOREIGN KEY (hold_id) REFERENCES transactions (id)');
PREPARE ledger_ddl FROM @ledger_ddl;
EXECUTE ledger_ddl;
DEALLOCATE PREPARE ledger_ddl;

-- One row per hold, keyed by its hold transaction's id and written right after it; the
-- terms never change, only status and settled_by, once, when a capture, void or expire
-- settles it (UPDATE ... WHERE status = 'pending').
--
-- Indexes (no partial indexes in MySQL: status leads where only pending rows matter):
-- - by_from_account, by_to_account: ListHolds of an account, in id order (each also
--   serves its foreign key);
-- - pending_by_expiry: the sweeper's lapsed holds, (expires_at, id) order; NULL expiries
--   sort first and never match expires_at <= now;
-- - pending_by_from_account, pending_by_to_account: the totals (PendingHoldTotals) read
--   from these alone, and reach only the account's pending holds, however many it ever
--   had (an outside-world account is the target of every payout's hold);
-- - by_settled_by: the settled_by foreign key.
CREATE TABLE IF NOT EXISTS holds (
  id           VARBINARY(64) NOT NULL,
  from_account VARBINARY(128) NOT NULL,
  to_account   VARBINARY(128) NOT NULL,
  asset        VARBINARY(16) NOT NULL,
  amount       BIGINT NOT NULL,
  expires_at   BIGINT NULL,
  created_at   BIGINT NOT NULL,
  status       VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  settled_by   VARBINARY(64) NULL,
  PRIMARY KEY (id),
  KEY holds_by_from_account (from_account, id),
  KEY holds_by_to_account (to_account, id),
  KEY holds_pending_by_expiry (status, expires_at, id),
  KEY holds_pending_by_from_account (status, from_account, expires_at, created_at, amount),
  KEY holds_pending_by_to_account (status, to_account, expires_at, amount),
  KEY holds_by_settled_by (settled_by),
  CONSTRAINT holds_transaction_fk FOREIGN KEY (id) REFERENCES transactions (id),
  CONSTRAINT holds_from_account_fk FOREIGN KEY (from_account) REFERENCES accounts (id),
  CONSTRAINT holds_to_account_fk FOREIGN KEY (to_account) REFERENCES accounts (id),
  CONSTRAINT holds_settled_by_fk FOREIGN KEY (settled_by) REFERENCES transactions (id),
  CONSTRAINT holds_amount_positive CHECK (amount > 0),
  CONSTRAINT holds_status_known CHECK (status IN ('pending', 'captured', 'voided', 'expired')),
  CONSTRAINT holds_settled_once CHECK ((status = 'pending') = (settled_by IS NULL))
) ENGINE = InnoDB DEFAULT CHARACTER SET = utf8mb4 COLLATE = utf8mb4_bin;
