-- Holds (two-phase transfers, ledger/hold.h). Applies to a database that already holds
-- data: existing accounts start with nothing pending, existing transactions settle no
-- hold, and the holds table starts empty. Times are integer microseconds since the Unix
-- epoch (UTC), amounts integers of minor units, like 0001. Ids compare byte-wise: SQLite's
-- default BINARY collation, as for every other id column.

-- What the account's pending holds reserve out of it and for it, as of the last write.
-- ADD COLUMN checks the CHECK against the existing rows, which all take the default 0.
ALTER TABLE accounts ADD COLUMN pending_debits INTEGER NOT NULL DEFAULT 0
  CHECK (pending_debits >= 0);
ALTER TABLE accounts ADD COLUMN pending_credits INTEGER NOT NULL DEFAULT 0
  CHECK (pending_credits >= 0);

-- The hold a capture, void or expire settles. SQLite cannot ADD a UNIQUE column, so a
-- unique index guards it instead: a hold is settled at most once, and a second
-- settlement's INSERT fails like a taken reversal_of (retryable). Partial, so the
-- transactions that settle nothing (every plain transfer) add no index entry.
ALTER TABLE transactions ADD COLUMN hold_id TEXT REFERENCES transactions (id);
CREATE UNIQUE INDEX transactions_by_hold_id ON transactions (hold_id)
  WHERE hold_id IS NOT NULL;

-- One row per hold, keyed by the id of the hold's transaction (inserted right after
-- it). Its terms never change; status leaves 'pending' once, naming the settling
-- transaction, so a row is pending exactly when it has no settled_by.
CREATE TABLE holds (
  id           TEXT PRIMARY KEY REFERENCES transactions (id),
  from_account TEXT NOT NULL REFERENCES accounts (id),
  to_account   TEXT NOT NULL REFERENCES accounts (id),
  asset        TEXT NOT NULL REFERENCES assets (code),
  amount       INTEGER NOT NULL CHECK (amount > 0),
  expires_at   INTEGER,
  created_at   INTEGER NOT NULL,
  status       TEXT NOT NULL
               CHECK (status IN ('pending', 'captured', 'voided', 'expired')),
  settled_by   TEXT REFERENCES transactions (id),
  CHECK ((status = 'pending') = (settled_by IS NULL))
) WITHOUT ROWID;

-- An account's holds, either side, paged by id (ListHolds).
CREATE INDEX holds_by_from_account ON holds (from_account, id);
CREATE INDEX holds_by_to_account ON holds (to_account, id);

-- Only pending holds, so these stay as small as what is still reserved: the sweeper's
-- lapsed holds in (expires_at, id) order (ListLapsedHolds), and an account's pending
-- holds on either side for its totals (HoldTotals, LoadHoldTotals).
CREATE INDEX holds_pending_by_expiry ON holds (expires_at, id)
  WHERE status = 'pending' AND expires_at IS NOT NULL;
CREATE INDEX holds_pending_by_from_account ON holds (from_account, expires_at)
  WHERE status = 'pending';
CREATE INDEX holds_pending_by_to_account ON holds (to_account, expires_at)
  WHERE status = 'pending';
