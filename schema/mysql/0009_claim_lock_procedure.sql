-- A submit's claim and its accounts' lock as one CALL (issue 29: a single submit in two
-- round trips; the write procedure of 0008 is the other). The engine calls it for a
-- transaction's first claim when it claims one key and the ledger named the accounts
-- it will lock (StorageTransaction::ExpectAccountLocks; engines/mysql/mysql_engine.cc),
-- with the key's record (namespace, scope, key, fingerprint, transaction id, created_at,
-- expires_at, as the claim's own INSERT takes them), the accounts' ids as a JSON array
-- (sorted: byte order, the primary key's order) and the session's lock wait outside a
-- claim, in seconds.
--
-- It inserts the key's record; a key that exists fails the INSERT with 1062 before any
-- account is locked (a replay locks nothing), and the engine then reads the key row as
-- it does after its own INSERT. Then, with the session's lock wait back at
-- account_lock_wait (the INSERT ran with the claim's), it locks the accounts in the
-- array's order and returns their rows (the account columns, then entries_running_max).
-- An account lock that runs out of wait is SIGNALled as the engine's own 45003, so the
-- engine tells it from the claim's own 1205 (the key is in progress).
--
-- The key's values are parameters, not a JSON array as the write procedure's rows are:
-- measured on the server, reading one key from JSON_TABLE cost about 25 us a CALL, as
-- much as the round trip saves (docs/benchmarks.md, "MariaDB: the claim and the lock as
-- one CALL"). The ids are utf8mb4 whatever the database's default character set. SQL
-- SECURITY INVOKER: the CALL runs with the caller's rights.
--
-- The procedure is replaced as a whole (re-runnable).

DROP PROCEDURE IF EXISTS ledger_claim_lock;

DELIMITER //
CREATE PROCEDURE ledger_claim_lock(IN key_namespace VARBINARY(64), IN key_scope VARBINARY(201),
                                   IN key_text VARBINARY(255), IN key_fingerprint VARBINARY(128),
                                   IN key_transaction_id VARBINARY(64), IN key_created_at BIGINT,
                                   IN key_expires_at BIGINT,
                                   IN account_ids LONGTEXT CHARACTER SET utf8mb4,
                                   IN account_lock_wait INT)
SQL SECURITY INVOKER
MODIFIES SQL DATA
BEGIN
  INSERT INTO idempotency_keys (namespace, scope, `key`, fingerprint, state, transaction_id,
                                created_at, expires_at)
    VALUES (key_namespace, key_scope, key_text, key_fingerprint, 'committed',
            key_transaction_id, key_created_at, key_expires_at);
  IF @@SESSION.innodb_lock_wait_timeout <> account_lock_wait THEN
    SET SESSION innodb_lock_wait_timeout = account_lock_wait;
  END IF;
  BEGIN
    DECLARE EXIT HANDLER FOR 1205
      SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 45003,
        MESSAGE_TEXT = 'ledger_claim_lock: an account''s lock wait ran out';
    SELECT a.id, a.asset, a.allow_negative, a.overdraft_limit, a.closed, a.balance, a.version,
           a.created_at, a.pending_debits, a.pending_credits, a.entries_running_max
      FROM JSON_TABLE(account_ids, '$[*]' COLUMNS (
             wanted_id VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$')) AS j
      STRAIGHT_JOIN accounts AS a FORCE INDEX (PRIMARY) ON a.id = j.wanted_id
      FOR UPDATE;
  END;
END//
DELIMITER ;
