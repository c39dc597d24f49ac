-- A submit's claim and its accounts' lock as one CALL (issue 29: a single submit in two
-- round trips; the write procedure of 0008 is the other). The engine calls it for the
-- first claim of a transaction when the ledger named the accounts it will lock
-- (StorageTransaction::ExpectAccountLocks; engines/mysql/mysql_engine.cc), with:
--   key_rows      the keys' records, one array per key, in the claim's order:
--                 namespace, scope, key, fingerprint, transaction_id, created_at,
--                 expires_at
--   account_ids   the accounts' ids, sorted (byte order: the primary key's order)
--   account_lock_wait  the session's lock wait outside a claim, in seconds
-- It inserts the keys' records; a key that exists fails the INSERT with 1062 before
-- any account is locked (a replay locks nothing), and the engine then reads the key
-- rows as it does after its own INSERT. Then, with the session's lock wait back at
-- account_lock_wait (the claim ran with the caller's), it locks the accounts in the
-- array's order and returns their rows (the account columns, then
-- entries_running_max). An account lock that runs out of wait is SIGNALled as the
-- engine's own 45003, so the engine tells it from the claim's own (1205: the key is
-- in progress). The arrays are utf8mb4 whatever the database's default character set;
-- a string column is twice as long as its table's, so a value too long fails there
-- (1406). SQL SECURITY INVOKER: the CALL runs with the caller's rights.
--
-- The procedure is replaced as a whole (re-runnable).

DROP PROCEDURE IF EXISTS ledger_claim_lock;

DELIMITER //
CREATE PROCEDURE ledger_claim_lock(IN key_rows LONGTEXT CHARACTER SET utf8mb4,
                                   IN account_ids LONGTEXT CHARACTER SET utf8mb4,
                                   IN account_lock_wait INT)
SQL SECURITY INVOKER
MODIFIES SQL DATA
BEGIN
  INSERT INTO idempotency_keys (namespace, scope, `key`, fingerprint, state, transaction_id,
                                created_at, expires_at)
    SELECT j.namespace, j.scope, j.key_text, j.fingerprint, 'committed', j.transaction_id,
           j.created_at, j.expires_at
    FROM JSON_TABLE(key_rows, '$[*]' COLUMNS (
      position FOR ORDINALITY,
      namespace VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[0]',
      scope VARCHAR(402) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[1]',
      key_text VARCHAR(510) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[2]',
      fingerprint VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[3]',
      transaction_id VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[4]',
      created_at BIGINT PATH '$[5]',
      expires_at BIGINT PATH '$[6]')) AS j
    ORDER BY j.position;
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
             position FOR ORDINALITY,
             wanted_id VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$')) AS j
      STRAIGHT_JOIN accounts AS a FORCE INDEX (PRIMARY) ON a.id = j.wanted_id
      ORDER BY j.position
      FOR UPDATE;
  END;
END//
DELIMITER ;
