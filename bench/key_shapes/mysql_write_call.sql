-- ledger_claim_lock(key, fingerprint, transaction, created_at, expires_at, first, second):
-- the key's record and the two accounts' lock in one CALL, the accounts as its result set.
-- ledger_write_json(doc, do_commit): a transfer's four writes from one JSON document, for
-- mysql_write_call (the "writes as a stored procedure" design, measured before the engine
-- takes it). doc = {"t": [[id, created_at, fingerprint]], "e": [[account, version,
-- transaction, index, amount, balance_after, created_at], ...], "a": [[id, balance,
-- version, old balance, old version, running max], ...], "ev": [[transaction,
-- created_at], ...]}. An account whose row no longer holds what its lock read fails it,
-- as the engine's guarded UPDATE does. Fed to the mariadb client (DELIMITER).
DROP PROCEDURE IF EXISTS ledger_claim_lock;
DROP PROCEDURE IF EXISTS ledger_write_json;
DELIMITER //
CREATE PROCEDURE ledger_claim_lock(IN k VARCHAR(255), IN fingerprint VARCHAR(128),
                                   IN transaction_id VARCHAR(64), IN created_at BIGINT,
                                   IN expires_at BIGINT, IN first VARCHAR(128),
                                   IN second VARCHAR(128))
BEGIN
  INSERT INTO idempotency_keys (namespace, scope, `key`, fingerprint, state, transaction_id,
                                created_at, expires_at)
    VALUES ('operations', 'bench/write_call', k, fingerprint, 'committed', transaction_id,
            created_at, expires_at);
  SELECT id, balance, version FROM accounts FORCE INDEX (PRIMARY) WHERE id IN (first, second)
    ORDER BY id FOR UPDATE;
END//
CREATE PROCEDURE ledger_write_json(IN doc LONGTEXT, IN do_commit TINYINT)
BEGIN
  INSERT INTO transactions (id, kind, created_at, metadata, reversal_of, fingerprint, hold_id)
    SELECT j.id, 'transfer', j.created_at, '{}', NULL, j.fingerprint, NULL
    FROM JSON_TABLE(doc, '$.t[*]' COLUMNS (id VARCHAR(64) PATH '$[0]',
      created_at BIGINT PATH '$[1]', fingerprint VARCHAR(128) PATH '$[2]')) AS j;
  INSERT INTO entries (account_id, account_version, transaction_id, entry_index, asset, amount,
                       balance_after, created_at, created_at_running_max)
    SELECT j.account_id, j.account_version, j.transaction_id, j.entry_index, 'BENCH', j.amount,
           j.balance_after, j.created_at, j.created_at
    FROM JSON_TABLE(doc, '$.e[*]' COLUMNS (account_id VARCHAR(128) PATH '$[0]',
      account_version BIGINT PATH '$[1]', transaction_id VARCHAR(64) PATH '$[2]',
      entry_index INT PATH '$[3]', amount BIGINT PATH '$[4]', balance_after BIGINT PATH '$[5]',
      created_at BIGINT PATH '$[6]')) AS j;
  UPDATE accounts a JOIN JSON_TABLE(doc, '$.a[*]' COLUMNS (id VARCHAR(128) PATH '$[0]',
      balance BIGINT PATH '$[1]', version BIGINT PATH '$[2]', old_balance BIGINT PATH '$[3]',
      old_version BIGINT PATH '$[4]', running_max BIGINT PATH '$[5]')) AS j
    ON a.id = j.id AND a.balance = j.old_balance AND a.version = j.old_version
       AND a.pending_debits = 0 AND a.pending_credits = 0
    SET a.balance = j.balance, a.version = j.version,
        a.entries_running_max = COALESCE(j.running_max, a.entries_running_max);
  IF ROW_COUNT() <> JSON_LENGTH(doc, '$.a') THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'ledger_write_json: an account changed since its lock';
  END IF;
  INSERT INTO outbox_events (transaction_id, type, payload, created_at)
    SELECT j.transaction_id, 'transaction.committed', '', j.created_at
    FROM JSON_TABLE(doc, '$.ev[*]' COLUMNS (position FOR ORDINALITY,
      transaction_id VARCHAR(64) PATH '$[0]', created_at BIGINT PATH '$[1]')) AS j
    ORDER BY j.position;
  IF do_commit THEN
    COMMIT;
  END IF;
END//
DELIMITER ;
