-- The ledger's data model on PostgreSQL: the same tables and columns as
-- schema/sqlite/0001_initial.sql. Times are BIGINT microseconds since the Unix epoch
-- (UTC); amounts are BIGINT minor units. schema_migrations is created by the runner.
--
-- Identity columns (ids, codes, namespace, scope, key, provider, event id) use
-- COLLATE "C": they compare and sort byte-wise, so "ABC" <> "abc" and an ORDER BY
-- matches std::string order whatever the database's default collation is.

CREATE TABLE assets (
  code  TEXT COLLATE "C" PRIMARY KEY,
  scale INTEGER NOT NULL CHECK (scale BETWEEN 0 AND 18)
);

CREATE TABLE accounts (
  id              TEXT COLLATE "C" PRIMARY KEY,
  asset           TEXT COLLATE "C" NOT NULL REFERENCES assets (code),
  allow_negative  BOOLEAN NOT NULL,
  overdraft_limit BIGINT NOT NULL CHECK (overdraft_limit >= 0),
  closed          BOOLEAN NOT NULL DEFAULT FALSE,
  balance         BIGINT NOT NULL DEFAULT 0,
  version         BIGINT NOT NULL DEFAULT 0,
  created_at      BIGINT NOT NULL
);

CREATE TABLE transactions (
  id          TEXT COLLATE "C" PRIMARY KEY,
  kind        TEXT NOT NULL,
  created_at  BIGINT NOT NULL,
  metadata    TEXT NOT NULL,
  reversal_of TEXT COLLATE "C" UNIQUE REFERENCES transactions (id),
  fingerprint TEXT NOT NULL
);

-- One row per posting. (account_id, account_version) is the key: two writers can never
-- both post version N of an account, and an account's history is a range scan.
CREATE TABLE entries (
  account_id      TEXT COLLATE "C" NOT NULL REFERENCES accounts (id),
  account_version BIGINT NOT NULL,
  transaction_id  TEXT COLLATE "C" NOT NULL REFERENCES transactions (id),
  entry_index     INTEGER NOT NULL,
  asset           TEXT COLLATE "C" NOT NULL,
  amount          BIGINT NOT NULL CHECK (amount <> 0),
  balance_after   BIGINT NOT NULL,
  created_at      BIGINT NOT NULL,
  PRIMARY KEY (account_id, account_version),
  UNIQUE (transaction_id, entry_index)
);
CREATE INDEX entries_by_account_time ON entries (account_id, created_at);

-- The idempotency keys of submits. state is 'pending' only inside the transaction that
-- claims the key in the row claim mode (a placeholder); a committed row names its
-- transaction. The primary key, not any lock, is what makes a second commit impossible.
CREATE TABLE idempotency_keys (
  namespace      TEXT COLLATE "C" NOT NULL,
  scope          TEXT COLLATE "C" NOT NULL,
  key            TEXT COLLATE "C" NOT NULL,
  fingerprint    TEXT NOT NULL,
  state          TEXT NOT NULL CHECK (state IN ('pending', 'committed')),
  transaction_id TEXT COLLATE "C",
  created_at     BIGINT NOT NULL,
  expires_at     BIGINT NOT NULL,
  PRIMARY KEY (namespace, scope, key)
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);

CREATE TABLE outbox_events (
  sequence       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  transaction_id TEXT COLLATE "C" NOT NULL,
  type           TEXT NOT NULL,
  payload        TEXT NOT NULL,
  created_at     BIGINT NOT NULL
);

-- Inbound webhook dedup, apart from the submit keys so the two layers cannot collide.
CREATE TABLE webhook_events (
  provider    TEXT COLLATE "C" NOT NULL,
  event_id    TEXT COLLATE "C" NOT NULL,
  received_at BIGINT NOT NULL,
  PRIMARY KEY (provider, event_id)
);
CREATE INDEX webhook_events_by_time ON webhook_events (received_at);

-- Claims of run-idempotently work (calls with outside side effects).
CREATE TABLE work_claims (
  namespace        TEXT COLLATE "C" NOT NULL,
  scope            TEXT COLLATE "C" NOT NULL,
  key              TEXT COLLATE "C" NOT NULL,
  fingerprint      TEXT NOT NULL,
  state            TEXT NOT NULL CHECK (state IN ('pending', 'completed', 'abandoned')),
  owner            TEXT NOT NULL,
  attempt          BIGINT NOT NULL,
  lease_expires_at BIGINT NOT NULL,
  result           TEXT NOT NULL,
  created_at       BIGINT NOT NULL,
  updated_at       BIGINT NOT NULL,
  expires_at       BIGINT NOT NULL,
  PRIMARY KEY (namespace, scope, key)
);
CREATE INDEX work_claims_by_lease ON work_claims (state, lease_expires_at);
CREATE INDEX work_claims_by_expiry ON work_claims (expires_at);
