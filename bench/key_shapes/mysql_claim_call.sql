-- Server-side loops for bench/key_shapes/mysql_claim_call.sh: N claims of a fresh key
-- with the lock of two accounts ('a', 'c'), each rolled back, run inside the server so
-- the readings are the statements' own CPU, without the protocol. Three shapes:
--   claim_loop_statements  the claim's INSERT and the accounts' SELECT ... FOR UPDATE
--                          as two statements (the engine before migration 0009)
--   claim_loop_call        CALL ledger_claim_lock (migration 0009: the key's values
--                          bound, the ids as a JSON array)
--   claim_loop_json_key    the same CALL with the key as a JSON row read by JSON_TABLE
--                          (claim_lock_json_key below: the first shape, held back)
-- Fed to the mariadb client (DELIMITER) after the engine's migrations.
DROP PROCEDURE IF EXISTS claim_lock_json_key;
DROP PROCEDURE IF EXISTS claim_loop_statements;
DROP PROCEDURE IF EXISTS claim_loop_call;
DROP PROCEDURE IF EXISTS claim_loop_json_key;
DELIMITER //
CREATE PROCEDURE claim_lock_json_key(IN key_rows LONGTEXT CHARACTER SET utf8mb4,
                                     IN account_ids LONGTEXT CHARACTER SET utf8mb4,
                                     IN account_lock_wait INT)
BEGIN
  INSERT INTO idempotency_keys (namespace, scope, `key`, fingerprint, state, transaction_id,
                                created_at, expires_at)
    SELECT j.namespace, j.scope, j.key_text, j.fingerprint, 'committed', j.transaction_id,
           j.created_at, j.expires_at
    FROM JSON_TABLE(key_rows, '$[*]' COLUMNS (
      namespace VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[0]',
      scope VARCHAR(402) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[1]',
      key_text VARCHAR(510) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[2]',
      fingerprint VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[3]',
      transaction_id VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[4]',
      created_at BIGINT PATH '$[5]',
      expires_at BIGINT PATH '$[6]')) AS j;
  IF @@SESSION.innodb_lock_wait_timeout <> account_lock_wait THEN
    SET SESSION innodb_lock_wait_timeout = account_lock_wait;
  END IF;
  SELECT a.id, a.asset, a.allow_negative, a.overdraft_limit, a.closed, a.balance, a.version,
         a.created_at, a.pending_debits, a.pending_credits, a.entries_running_max
    FROM JSON_TABLE(account_ids, '$[*]' COLUMNS (
           wanted_id VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$')) AS j
    STRAIGHT_JOIN accounts AS a FORCE INDEX (PRIMARY) ON a.id = j.wanted_id
    FOR UPDATE;
END//
CREATE PROCEDURE claim_loop_statements(IN n INT)
BEGIN
  DECLARE i INT DEFAULT 0;
  WHILE i < n DO
    INSERT INTO idempotency_keys (namespace, scope, `key`, fingerprint, state, transaction_id,
                                  created_at, expires_at)
      VALUES ('operations', 'default', CONCAT('k', i), 'fp0123456789abcdef0123456789abcdef',
              'committed', CONCAT('t', i), 1, 2);
    SELECT id, asset, allow_negative, overdraft_limit, closed, balance, version, created_at,
           pending_debits, pending_credits, entries_running_max
      FROM accounts FORCE INDEX (PRIMARY) WHERE id IN ('a', 'c') ORDER BY id FOR UPDATE;
    ROLLBACK;
    SET i = i + 1;
  END WHILE;
END//
CREATE PROCEDURE claim_loop_call(IN n INT)
BEGIN
  DECLARE i INT DEFAULT 0;
  WHILE i < n DO
    CALL ledger_claim_lock('operations', 'default', CONCAT('k', i),
                           'fp0123456789abcdef0123456789abcdef', CONCAT('t', i), 1, 2,
                           '["a","c"]', 10);
    ROLLBACK;
    SET i = i + 1;
  END WHILE;
END//
CREATE PROCEDURE claim_loop_json_key(IN n INT)
BEGIN
  DECLARE i INT DEFAULT 0;
  WHILE i < n DO
    CALL claim_lock_json_key(CONCAT('[["operations","default","k', i,
                                    '","fp0123456789abcdef0123456789abcdef","t', i, '",1,2]]'),
                             '["a","c"]', 10);
    ROLLBACK;
    SET i = i + 1;
  END WHILE;
END//
DELIMITER ;
