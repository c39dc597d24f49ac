-- A resent key costs the claim's CALL and the ROLLBACK, not five round trips (issue 29,
-- after migration 0009). The claim procedure as 0009 made it, plus a handler for the
-- INSERT's duplicate (1062): the key is taken. Before, the CALL failed there and the
-- engine sent ROLLBACK, a locking read of the key row, and later the read of the
-- transaction it names, each a round trip. Now the handler does the same inside the
-- CALL: it rolls back (the failed duplicate check left a shared lock on the row; two
-- resends upgrading theirs would deadlock, and the engine calls this only as the
-- transaction's first claim, so nothing else is lost), takes the row with a locking
-- read under the claim's lock wait (a locking read returns the latest committed version)
-- and returns two result sets:
--   1. the key row (LEDGER_MYSQL_KEY_RECORD_COLUMNS): exactly one row, all NULL when the
--      row went between the INSERT and the read (pruned as expired: the engine then
--      claims afresh, as after its own INSERT);
--   2. the transaction the row names, joined with its hold and entries
--      (LEDGER_MYSQL_TRANSACTION_WITH_ENTRY_COLUMNS), by a consistent read: the row is
--      locked, so the record it reads is the one returned above.
-- The engine tells the result sets apart by their column counts (8, 17; the accounts'
-- rows of a new key have 11) and answers the ledger's read of the replayed transaction
-- from the second. Nothing else changes: a new key inserts, sets the accounts' lock wait
-- and locks them as in 0009.
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
