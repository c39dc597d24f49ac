-- Reads answered by an index (issues 27 and 31): the balance as of an instant, and the
-- transaction listing by time, kind, account and metadata member, each a range scan that
-- stops after a page however long the history. Same tables and columns as
-- schema/sqlite/0004_reads_indexes.sql, which explains them.
--
-- Applies to a database that already holds data: existing entries get their running
-- maximum computed once (a window over each account's versions), existing transactions'
-- metadata members are copied into transaction_metadata. Unlike SQLite and PostgreSQL,
-- no trigger keeps them: the engine's write path (engines/mysql/mysql_write_batch.cc)
-- writes both in the submit's own transaction. A MariaDB Galera node parses a table's
-- trigger bodies each time it opens the table, and under the cluster test's load a node
-- that had rejoined failed that parse ("Trigger ... has an error in its body", error
-- 1064) and then refused every insert into the table while the broken copy stayed in its
-- table cache; a database without triggers has nothing to parse (docs/engines/mysql.md).
-- A process of an older release still writing after this migration leaves its entries
-- and metadata unindexed: stop the older writers first, as for every migration.
--
-- MySQL commits DDL implicitly: each statement is re-runnable (the column added only when
-- missing, IF NOT EXISTS, INSERT IGNORE, the backfill only where it is missing). No comment
-- may share a line with a statement, and no string may end a line with ';'.

SET @ledger_ddl = IF(
  EXISTS (SELECT 1 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
          AND TABLE_NAME = 'entries' AND COLUMN_NAME = 'created_at_running_max'),
  'DO 0',
  'ALTER TABLE entries
     ADD COLUMN created_at_running_max BIGINT NULL,
     ADD KEY entries_by_account_as_of (account_id, created_at_running_max, account_version),
     ADD KEY entries_by_account_transaction (account_id, created_at, transaction_id)');
PREPARE ledger_ddl FROM @ledger_ddl;
EXECUTE ledger_ddl;
DEALLOCATE PREPARE ledger_ddl;

UPDATE entries JOIN (
  SELECT account_id, account_version,
         MAX(created_at) OVER (PARTITION BY account_id ORDER BY account_version) AS running_max
  FROM entries) AS ordered
  ON entries.account_id = ordered.account_id AND entries.account_version = ordered.account_version
SET entries.created_at_running_max = ordered.running_max
WHERE entries.created_at_running_max IS NULL;

SET @ledger_ddl = IF(
  EXISTS (SELECT 1 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()
          AND TABLE_NAME = 'transactions' AND INDEX_NAME = 'transactions_by_time'),
  'DO 0',
  'ALTER TABLE transactions
     ADD KEY transactions_by_time (created_at, id),
     ADD KEY transactions_by_kind_time (kind, created_at, id)');
PREPARE ledger_ddl FROM @ledger_ddl;
EXECUTE ledger_ddl;
DEALLOCATE PREPARE ledger_ddl;

CREATE TABLE IF NOT EXISTS transaction_metadata (
  member_name    VARBINARY(128) NOT NULL,
  member_value   VARBINARY(512) NOT NULL,
  created_at     BIGINT NOT NULL,
  transaction_id VARBINARY(64) NOT NULL,
  PRIMARY KEY (member_name, member_value, created_at, transaction_id),
  KEY transaction_metadata_by_transaction (transaction_id),
  CONSTRAINT transaction_metadata_transaction_fk FOREIGN KEY (transaction_id)
    REFERENCES transactions (id)
) ENGINE = InnoDB;

INSERT IGNORE INTO transaction_metadata (member_name, member_value, created_at, transaction_id)
SELECT JSON_UNQUOTE(names.name), JSON_UNQUOTE(member_values.member), t.created_at, t.id
FROM transactions AS t
JOIN JSON_TABLE(JSON_KEYS(IF(JSON_VALID(t.metadata), t.metadata, '{}')), '$[*]'
       COLUMNS (position FOR ORDINALITY, name JSON PATH '$')) AS names
JOIN JSON_TABLE(JSON_EXTRACT(IF(JSON_VALID(t.metadata), t.metadata, '{}'), '$.*'), '$[*]'
       COLUMNS (position FOR ORDINALITY, member JSON PATH '$')) AS member_values
  ON member_values.position = names.position
WHERE JSON_TYPE(member_values.member) = 'STRING'
  AND LENGTH(JSON_UNQUOTE(names.name)) <= 128
  AND LENGTH(JSON_UNQUOTE(member_values.member)) <= 512;
