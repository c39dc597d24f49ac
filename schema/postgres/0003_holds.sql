-- Holds: two-phase transfers (ledger/hold.h, issue 13). An account's pending debits and
-- credits (what its pending holds reserve out of it and for it), the hold a capture,
-- void or expire transaction settles, and the holds themselves.
--
-- Applies to a database that already holds data: the new account columns start at 0 (no
-- hold exists yet), every existing transaction gets hold_id NULL, the holds table starts
-- empty. PostgreSQL DDL is transactional: the whole file commits with its row in
-- schema_migrations or not at all; IF NOT EXISTS only spares a hand-applied copy.

-- Accounts: the pending amounts, never negative (a hold's amount is > 0 and released
-- once). A constant default adds the columns without rewriting the table (PostgreSQL 11+).
ALTER TABLE accounts
  ADD COLUMN IF NOT EXISTS pending_debits BIGINT NOT NULL DEFAULT 0
    CONSTRAINT accounts_pending_debits_nonnegative CHECK (pending_debits >= 0),
  ADD COLUMN IF NOT EXISTS pending_credits BIGINT NOT NULL DEFAULT 0
    CONSTRAINT accounts_pending_credits_nonnegative CHECK (pending_credits >= 0);

-- Transactions: the hold a capture, void or expire settles. Unique, like reversal_of: a
-- hold is settled once, and a second settlement's INSERT fails on this key whatever the
-- pipeline checked (docs/engines/errors.md: retryable). A partial unique index rather
-- than a UNIQUE constraint: the transactions that settle nothing (every plain transfer)
-- add no index entry, so a plain submit writes what it wrote before holds.
ALTER TABLE transactions
  ADD COLUMN IF NOT EXISTS hold_id TEXT COLLATE "C"
    CONSTRAINT transactions_hold_id_fk REFERENCES transactions (id);
CREATE UNIQUE INDEX IF NOT EXISTS transactions_by_hold_id ON transactions (hold_id)
  WHERE hold_id IS NOT NULL;

-- One row per hold, keyed by its hold transaction's id and written with it; the terms
-- never change, only status and settled_by, once, when a capture, void or expire
-- settles it (UPDATE ... WHERE status = 'pending'), so a row is pending exactly when it
-- has no settled_by.
CREATE TABLE IF NOT EXISTS holds (
  id           TEXT COLLATE "C" NOT NULL,
  from_account TEXT COLLATE "C" NOT NULL,
  to_account   TEXT COLLATE "C" NOT NULL,
  asset        TEXT COLLATE "C" NOT NULL,
  amount       BIGINT NOT NULL,
  expires_at   BIGINT,
  created_at   BIGINT NOT NULL,
  status       TEXT NOT NULL,
  settled_by   TEXT COLLATE "C",
  CONSTRAINT holds_pkey PRIMARY KEY (id),
  CONSTRAINT holds_transaction_fk FOREIGN KEY (id) REFERENCES transactions (id),
  CONSTRAINT holds_from_account_fk FOREIGN KEY (from_account) REFERENCES accounts (id),
  CONSTRAINT holds_to_account_fk FOREIGN KEY (to_account) REFERENCES accounts (id),
  CONSTRAINT holds_settled_by_fk FOREIGN KEY (settled_by) REFERENCES transactions (id),
  CONSTRAINT holds_amount_positive CHECK (amount > 0),
  CONSTRAINT holds_status_known CHECK (status IN ('pending', 'captured', 'voided', 'expired')),
  CONSTRAINT holds_settled_once CHECK ((status = 'pending') = (settled_by IS NULL))
);

-- An account's holds, either side, paged by id (ListHolds).
CREATE INDEX IF NOT EXISTS holds_by_from_account ON holds (from_account, id);
CREATE INDEX IF NOT EXISTS holds_by_to_account ON holds (to_account, id);

-- Only pending holds, so these stay as small as what is still reserved, however many
-- holds an account ever had (an outside-world account is the target of every payout's
-- hold): the sweeper's lapsed holds in (expires_at, id) order (ListLapsedHolds), and an
-- account's pending holds on either side for its totals (HoldTotals, LoadHoldTotals),
-- read from the index alone (amount INCLUDEd).
CREATE INDEX IF NOT EXISTS holds_pending_by_expiry ON holds (expires_at, id)
  WHERE status = 'pending' AND expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS holds_pending_by_from_account
  ON holds (from_account, expires_at, created_at) INCLUDE (amount) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS holds_pending_by_to_account
  ON holds (to_account, expires_at) INCLUDE (amount) WHERE status = 'pending';

-- No index on settled_by: unlike InnoDB, PostgreSQL needs none for the foreign key, and
-- transactions are never deleted or re-keyed, the only case where one would be used.
