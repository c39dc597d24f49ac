-- The ledger's data model. Times are integer microseconds since the Unix epoch (UTC);
-- amounts are integers of minor units. schema_migrations is created by the runner.

CREATE TABLE assets (
  code  TEXT PRIMARY KEY,
  scale INTEGER NOT NULL CHECK (scale BETWEEN 0 AND 18)
) WITHOUT ROWID;

CREATE TABLE accounts (
  id              TEXT PRIMARY KEY,
  asset           TEXT NOT NULL REFERENCES assets (code),
  allow_negative  INTEGER NOT NULL CHECK (allow_negative IN (0, 1)),
  overdraft_limit INTEGER NOT NULL CHECK (overdraft_limit >= 0),
  closed          INTEGER NOT NULL DEFAULT 0 CHECK (closed IN (0, 1)),
  balance         INTEGER NOT NULL DEFAULT 0,
  version         INTEGER NOT NULL DEFAULT 0,
  created_at      INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE transactions (
  id          TEXT PRIMARY KEY,
  kind        TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  metadata    TEXT NOT NULL,
  reversal_of TEXT UNIQUE REFERENCES transactions (id),
  fingerprint TEXT NOT NULL
) WITHOUT ROWID;

-- One row per posting. (account_id, account_version) is the key: two writers can never
-- both post version N of an account, and an account's history is a range scan.
CREATE TABLE entries (
  account_id      TEXT NOT NULL REFERENCES accounts (id),
  account_version INTEGER NOT NULL,
  transaction_id  TEXT NOT NULL REFERENCES transactions (id),
  entry_index     INTEGER NOT NULL,
  asset           TEXT NOT NULL,
  amount          INTEGER NOT NULL CHECK (amount <> 0),
  balance_after   INTEGER NOT NULL,
  created_at      INTEGER NOT NULL,
  PRIMARY KEY (account_id, account_version),
  UNIQUE (transaction_id, entry_index)
) WITHOUT ROWID;
CREATE INDEX entries_by_account_time ON entries (account_id, created_at);

-- The idempotency keys of submits. state is 'pending' only inside the transaction that
-- claims the key (placeholder-row engines); a committed row names its transaction.
CREATE TABLE idempotency_keys (
  namespace      TEXT NOT NULL,
  scope          TEXT NOT NULL,
  key            TEXT NOT NULL,
  fingerprint    TEXT NOT NULL,
  state          TEXT NOT NULL CHECK (state IN ('pending', 'committed')),
  transaction_id TEXT,
  created_at     INTEGER NOT NULL,
  expires_at     INTEGER NOT NULL,
  PRIMARY KEY (namespace, scope, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);

CREATE TABLE outbox_events (
  sequence       INTEGER PRIMARY KEY AUTOINCREMENT,
  transaction_id TEXT NOT NULL,
  type           TEXT NOT NULL,
  payload        TEXT NOT NULL,
  created_at     INTEGER NOT NULL
);

-- Inbound webhook dedup, apart from the submit keys so the two layers cannot collide.
CREATE TABLE webhook_events (
  provider    TEXT NOT NULL,
  event_id    TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  PRIMARY KEY (provider, event_id)
) WITHOUT ROWID;
CREATE INDEX webhook_events_by_time ON webhook_events (received_at);

-- Claims of run-idempotently work (calls with outside side effects).
CREATE TABLE work_claims (
  namespace        TEXT NOT NULL,
  scope            TEXT NOT NULL,
  key              TEXT NOT NULL,
  fingerprint      TEXT NOT NULL,
  state            TEXT NOT NULL CHECK (state IN ('pending', 'completed', 'abandoned')),
  owner            TEXT NOT NULL,
  attempt          INTEGER NOT NULL,
  lease_expires_at INTEGER NOT NULL,
  result           TEXT NOT NULL,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  expires_at       INTEGER NOT NULL,
  PRIMARY KEY (namespace, scope, key)
) WITHOUT ROWID;
CREATE INDEX work_claims_by_lease ON work_claims (state, lease_expires_at);
CREATE INDEX work_claims_by_expiry ON work_claims (expires_at);
