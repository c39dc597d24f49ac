-- The ledger's data model on MySQL 8.0 and MariaDB 10.11: the same tables and columns
-- as schema/sqlite/0001_initial.sql. Times are BIGINT microseconds since the Unix epoch
-- (UTC); amounts are BIGINT minor units. schema_migrations is created by the runner.
--
-- Every table is InnoDB (row locks, transactions) with utf8mb4 text.
--
-- Identity columns (ids, codes, namespace, scope, key, provider, event id, owner) are
-- VARBINARY: they compare and sort byte-wise, so 'ABC' <> 'abc', 'a' <> 'a ' (binary
-- strings are not space-padded, unlike the PAD SPACE ascii_bin collation), and ORDER BY
-- matches std::string order. The key table's primary key is 64 + 201 + 255 = 520 bytes,
-- well under InnoDB's 3072-byte index limit.
--
-- MySQL commits DDL implicitly: each statement is written to be re-runnable (IF NOT
-- EXISTS, indexes inside CREATE TABLE), so a run cut short is completed by the next.
-- No comment may share a line with a statement (the runner splits at ';' line ends).

CREATE TABLE IF NOT EXISTS assets (
  code  VARBINARY(16) NOT NULL,
  scale INT NOT NULL,
  PRIMARY KEY (code),
  CHECK (scale BETWEEN 0 AND 18)
) ENGINE = InnoDB DEFAULT CHARACTER SET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS accounts (
  id              VARBINARY(128) NOT NULL,
  asset           VARBINARY(16) NOT NULL,
  allow_negative  TINYINT NOT NULL,
  overdraft_limit BIGINT NOT NULL,
  closed          TINYINT NOT NULL DEFAULT 0,
  balance         BIGINT NOT NULL DEFAULT 0,
  version         BIGINT NOT NULL DEFAULT 0,
  created_at      BIGINT NOT NULL,
  PRIMARY KEY (id),
  CONSTRAINT accounts_asset_fk FOREIGN KEY (asset) REFERENCES assets (code),
  CHECK (allow_negative IN (0, 1)),
  CHECK (overdraft_limit >= 0),
  CHECK (closed IN (0, 1))
) ENGINE = InnoDB DEFAULT CHARACTER SET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS transactions (
  id          VARBINARY(64) NOT NULL,
  kind        VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at  BIGINT NOT NULL,
  metadata    MEDIUMTEXT NOT NULL,
  reversal_of VARBINARY(64) NULL,
  fingerprint VARBINARY(128) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY transactions_reversal_of (reversal_of),
  CONSTRAINT transactions_reversal_of_fk FOREIGN KEY (reversal_of) REFERENCES transactions (id)
) ENGINE = InnoDB DEFAULT CHARACTER SET = utf8mb4 COLLATE = utf8mb4_bin;

-- One row per posting. (account_id, account_version) is the key: two writers can never
-- both post version N of an account, and an account's history is a range scan. The
-- time index carries the amount so velocity checks read the index alone.
CREATE TABLE IF NOT EXISTS entries (
  account_id      VARBINARY(128) NOT NULL,
  account_version BIGINT NOT NULL,
  transaction_id  VARBINARY(64) NOT NULL,
  entry_index     INT NOT NULL,
  asset           VARBINARY(16) NOT NULL,
  amount          BIGINT NOT NULL,
  balance_after   BIGINT NOT NULL,
  created_at      BIGINT NOT NULL,
  PRIMARY KEY (account_id, account_version),
  UNIQUE KEY entries_by_transaction (transaction_id, entry_index),
  KEY entries_by_account_time (account_id, created_at, amount),
  CONSTRAINT entries_account_fk FOREIGN KEY (account_id) REFERENCES accounts (id),
  CONSTRAINT entries_transaction_fk FOREIGN KEY (transaction_id) REFERENCES transactions (id),
  CHECK (amount <> 0)
) ENGINE = InnoDB DEFAULT CHARACTER SET = utf8mb4 COLLATE = utf8mb4_bin;

-- The idempotency keys of submits. A 'pending' row is the placeholder that claims a
-- key: it exists only inside the claiming transaction (never committed), with the
-- largest expires_at so expiry scans never reach it. A committed row names its
-- transaction. The primary key, not any lock, is what makes a second commit impossible.
CREATE TABLE IF NOT EXISTS idempotency_keys (
  namespace      VARBINARY(64) NOT NULL,
  scope          VARBINARY(201) NOT NULL,
  `key`          VARBINARY(255) NOT NULL,
  fingerprint    VARBINARY(128) NOT NULL,
  state          VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  transaction_id VARBINARY(64) NULL,
  created_at     BIGINT NOT NULL,
  expires_at     BIGINT NOT NULL,
  PRIMARY KEY (namespace, scope, `key`),
  KEY idempotency_keys_by_expiry (expires_at),
  CHECK (state IN ('pending', 'committed'))
) ENGINE = InnoDB DEFAULT CHARACTER SET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS outbox_events (
  `sequence`     BIGINT NOT NULL AUTO_INCREMENT,
  transaction_id VARBINARY(64) NOT NULL,
  type           VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  payload        MEDIUMTEXT NOT NULL,
  created_at     BIGINT NOT NULL,
  PRIMARY KEY (`sequence`)
) ENGINE = InnoDB DEFAULT CHARACTER SET = utf8mb4 COLLATE = utf8mb4_bin;

-- Inbound webhook dedup, apart from the submit keys so the two layers cannot collide.
CREATE TABLE IF NOT EXISTS webhook_events (
  provider    VARBINARY(64) NOT NULL,
  event_id    VARBINARY(255) NOT NULL,
  received_at BIGINT NOT NULL,
  PRIMARY KEY (provider, event_id),
  KEY webhook_events_by_time (received_at)
) ENGINE = InnoDB DEFAULT CHARACTER SET = utf8mb4 COLLATE = utf8mb4_bin;

-- Claims of run-idempotently work (calls with outside side effects).
CREATE TABLE IF NOT EXISTS work_claims (
  namespace        VARBINARY(64) NOT NULL,
  scope            VARBINARY(201) NOT NULL,
  `key`            VARBINARY(255) NOT NULL,
  fingerprint      VARBINARY(128) NOT NULL,
  state            VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  owner            VARBINARY(128) NOT NULL,
  attempt          BIGINT NOT NULL,
  lease_expires_at BIGINT NOT NULL,
  result           MEDIUMTEXT NOT NULL,
  created_at       BIGINT NOT NULL,
  updated_at       BIGINT NOT NULL,
  expires_at       BIGINT NOT NULL,
  PRIMARY KEY (namespace, scope, `key`),
  KEY work_claims_by_lease (state, lease_expires_at),
  KEY work_claims_by_expiry (expires_at),
  CHECK (state IN ('pending', 'completed', 'abandoned'))
) ENGINE = InnoDB DEFAULT CHARACTER SET = utf8mb4 COLLATE = utf8mb4_bin;
