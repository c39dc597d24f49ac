-- A resent key costs one round trip, the claim's CALL (issue 29, after migration 0010).
-- The claim procedure as 0010 made it, plus one step at the end of its duplicate
-- handler: when the key's row holds a live committed record (state 'committed',
-- expires_at after the intended record's created_at, the time the ledger judges expiry
-- by), the ledger will replay it or refuse the request and write nothing, so the
-- procedure ends the transaction itself: it returns a third result set of one column
-- (claim_ended), then rolls back, releasing the key row's lock. The engine then has the
-- record and its transaction, and sends no ROLLBACK of its own.
--
-- Called only for the ledger's own transaction (the engine takes this path only when
-- the ledger named the accounts, a hint it never gives in a unit of work, whose
-- transaction goes on: ledger/engine.h, ExpectAccountLocks). An expired record keeps
-- the transaction open: the ledger replaces it under the lock.
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
  DECLARE EXIT HANDLER FOR 1062
  BEGIN
    ROLLBACK;
    SELECT k.namespace, k.scope, k.`key`, k.fingerprint, k.state, k.transaction_id,
           k.created_at, k.expires_at
      FROM (SELECT 1 AS one) AS taken
      LEFT JOIN idempotency_keys AS k
        ON k.namespace = key_namespace AND k.scope = key_scope AND k.`key` = key_text
      FOR UPDATE;
    SELECT t.id, t.kind, t.created_at, t.metadata, t.reversal_of, t.fingerprint, t.hold_id,
           h.from_account, h.to_account, h.asset, h.amount, h.expires_at, e.account_id,
           e.asset, e.amount, e.balance_after, e.account_version
      FROM idempotency_keys AS k
      JOIN transactions AS t ON t.id = k.transaction_id
      LEFT JOIN holds AS h ON h.id = t.id
      LEFT JOIN entries AS e ON e.transaction_id = t.id
      WHERE k.namespace = key_namespace AND k.scope = key_scope AND k.`key` = key_text
        AND k.state = 'committed'
      ORDER BY e.entry_index;
    -- A live committed record: the ledger replays it or refuses the request, and writes
    -- nothing (the key row is locked, so this read sees the row returned above). The
    -- transaction ends here, and says so with a one-column result set.
    IF EXISTS (SELECT 1 FROM idempotency_keys AS k
                WHERE k.namespace = key_namespace AND k.scope = key_scope
                  AND k.`key` = key_text AND k.state = 'committed'
                  AND k.expires_at > key_created_at) THEN
      SELECT 1 AS claim_ended;
      ROLLBACK;
    END IF;
  END;
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
