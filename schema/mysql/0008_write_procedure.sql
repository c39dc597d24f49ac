-- A submit's writes as one CALL (issue 29: a single submit in fewer round trips). The
-- write batch (engines/mysql/mysql_write_batch.cc) sends its buffered rows as one JSON
-- document per CALL, its sections arrays of rows (arrays of values, by position):
--   "t"  transactions: id, kind, created_at, metadata, reversal_of, fingerprint, hold_id
--   "m"  transaction_metadata: member_name, member_value, created_at, transaction_id
--   "h"  holds placed: id, from_account, to_account, asset, amount, expires_at, created_at
--   "s"  holds settled: hold id, status, settled_by
--   "e"  entries: account_id, account_version, transaction_id, entry_index, asset, amount,
--        balance_after, created_at, created_at_running_max
--   "a"  accounts: id, balance, version, pending_debits, pending_credits,
--        entries_running_max, then the four values its lock read (the lock guard)
--   "ev" events, in order: transaction_id, type, payload, created_at
-- and, with do_commit, commits at its end. Every section may be missing or empty. A
-- document too large for one packet is split by the batch, sections in this order, and
-- only its last CALL commits.
--
-- Counts the statements cannot see are checked here and SIGNALled with the engine's
-- own error numbers (engines/mysql/mysql_errors.cc): 45001, an account no longer holds
-- what its lock read (retryable); 45002, a hold settled is no longer pending (the batch
-- then names it). Strings go through LONGTEXT columns, so a value too long for its
-- table column fails there (1406) as it did as a bound parameter, never truncated.
-- SQL SECURITY INVOKER: the CALL runs with the caller's rights on the tables.
--
-- The procedure is replaced as a whole (re-runnable). The statements are split at the
-- DELIMITER line's terminator (engines/common/migration.h).

DROP PROCEDURE IF EXISTS ledger_write;

DELIMITER //
CREATE PROCEDURE ledger_write(IN doc LONGTEXT, IN do_commit TINYINT)
SQL SECURITY INVOKER
MODIFIES SQL DATA
BEGIN
  INSERT INTO transactions (id, kind, created_at, metadata, reversal_of, fingerprint, hold_id)
    SELECT j.id, j.kind, j.created_at, j.metadata, j.reversal_of, j.fingerprint, j.hold_id
    FROM JSON_TABLE(doc, '$.t[*]' COLUMNS (
      id LONGTEXT PATH '$[0]', kind LONGTEXT PATH '$[1]', created_at BIGINT PATH '$[2]',
      metadata LONGTEXT PATH '$[3]', reversal_of LONGTEXT PATH '$[4]',
      fingerprint LONGTEXT PATH '$[5]', hold_id LONGTEXT PATH '$[6]')) AS j;
  INSERT INTO transaction_metadata (member_name, member_value, created_at, transaction_id)
    SELECT j.member_name, j.member_value, j.created_at, j.transaction_id
    FROM JSON_TABLE(doc, '$.m[*]' COLUMNS (
      member_name LONGTEXT PATH '$[0]', member_value LONGTEXT PATH '$[1]',
      created_at BIGINT PATH '$[2]', transaction_id LONGTEXT PATH '$[3]')) AS j;
  INSERT INTO holds (id, from_account, to_account, asset, amount, expires_at, created_at, status)
    SELECT j.id, j.from_account, j.to_account, j.asset, j.amount, j.expires_at, j.created_at,
           'pending'
    FROM JSON_TABLE(doc, '$.h[*]' COLUMNS (
      id LONGTEXT PATH '$[0]', from_account LONGTEXT PATH '$[1]',
      to_account LONGTEXT PATH '$[2]', asset LONGTEXT PATH '$[3]', amount BIGINT PATH '$[4]',
      expires_at BIGINT PATH '$[5]', created_at BIGINT PATH '$[6]')) AS j;
  IF JSON_LENGTH(doc, '$.s') > 0 THEN
    UPDATE holds h JOIN JSON_TABLE(doc, '$.s[*]' COLUMNS (
        hold_id LONGTEXT PATH '$[0]', status LONGTEXT PATH '$[1]',
        settled_by LONGTEXT PATH '$[2]')) AS j
      ON h.id = j.hold_id AND h.status = 'pending'
      SET h.status = j.status, h.settled_by = j.settled_by;
    IF ROW_COUNT() <> JSON_LENGTH(doc, '$.s') THEN
      SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 45002,
        MESSAGE_TEXT = 'ledger_write: a hold settled is no longer pending';
    END IF;
  END IF;
  INSERT INTO entries (account_id, account_version, transaction_id, entry_index, asset, amount,
                       balance_after, created_at, created_at_running_max)
    SELECT j.account_id, j.account_version, j.transaction_id, j.entry_index, j.asset, j.amount,
           j.balance_after, j.created_at, j.running_max
    FROM JSON_TABLE(doc, '$.e[*]' COLUMNS (
      account_id LONGTEXT PATH '$[0]', account_version BIGINT PATH '$[1]',
      transaction_id LONGTEXT PATH '$[2]', entry_index BIGINT PATH '$[3]',
      asset LONGTEXT PATH '$[4]', amount BIGINT PATH '$[5]', balance_after BIGINT PATH '$[6]',
      created_at BIGINT PATH '$[7]', running_max BIGINT PATH '$[8]')) AS j;
  IF JSON_LENGTH(doc, '$.a') > 0 THEN
    UPDATE accounts a JOIN JSON_TABLE(doc, '$.a[*]' COLUMNS (
        id LONGTEXT PATH '$[0]', balance BIGINT PATH '$[1]', version BIGINT PATH '$[2]',
        pending_debits BIGINT PATH '$[3]', pending_credits BIGINT PATH '$[4]',
        running_max BIGINT PATH '$[5]', old_balance BIGINT PATH '$[6]',
        old_version BIGINT PATH '$[7]', old_pending_debits BIGINT PATH '$[8]',
        old_pending_credits BIGINT PATH '$[9]')) AS j
      ON a.id = j.id AND a.balance = j.old_balance AND a.version = j.old_version
         AND a.pending_debits = j.old_pending_debits
         AND a.pending_credits = j.old_pending_credits
      SET a.balance = j.balance, a.version = j.version, a.pending_debits = j.pending_debits,
          a.pending_credits = j.pending_credits,
          a.entries_running_max = COALESCE(j.running_max, a.entries_running_max);
    IF ROW_COUNT() <> JSON_LENGTH(doc, '$.a') THEN
      SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 45001,
        MESSAGE_TEXT = 'ledger_write: an account changed after its lock read it';
    END IF;
  END IF;
  INSERT INTO outbox_events (transaction_id, type, payload, created_at)
    SELECT j.transaction_id, j.type, j.payload, j.created_at
    FROM JSON_TABLE(doc, '$.ev[*]' COLUMNS (
      position FOR ORDINALITY, transaction_id LONGTEXT PATH '$[0]',
      type LONGTEXT PATH '$[1]', payload LONGTEXT PATH '$[2]',
      created_at BIGINT PATH '$[3]')) AS j
    ORDER BY j.position;
  IF do_commit THEN
    COMMIT;
  END IF;
END//
DELIMITER ;
