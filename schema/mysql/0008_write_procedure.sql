-- A submit's writes as one CALL (issue 29: a single submit in fewer round trips). The
-- write batch (engines/mysql/mysql_write_batch.cc) sends its buffered rows as one JSON
-- array per table, each a parameter (so each JSON_TABLE parses its own rows only), of
-- rows that are arrays of values by position:
--   transaction_rows  id, kind, created_at, metadata, reversal_of, fingerprint, hold_id
--   metadata_rows     transaction_metadata: member_name, member_value, created_at,
--                     transaction_id
--   hold_rows         holds placed: id, from_account, to_account, asset, amount,
--                     expires_at, created_at
--   settlement_rows   holds settled: hold id, status, settled_by
--   entry_rows        account_id, account_version, transaction_id, entry_index, asset,
--                     amount, balance_after, created_at, created_at_running_max
--   account_rows      id, balance, version, pending_debits, pending_credits,
--                     entries_running_max, then the four values its lock read (the
--                     lock guard)
--   event_rows        outbox events, in order: transaction_id, type, payload, created_at
-- and, with do_commit, commits at its end. A NULL array has no rows: its statement is
-- skipped. Rows too large for one packet are split by the batch into CALLs, the arrays
-- in this order, of which only the last commits.
--
-- Counts the statements cannot see are checked here and SIGNALled with the engine's
-- own error numbers (engines/mysql/mysql_errors.cc): 45001, an account no longer holds
-- what its lock read (retryable); 45002, a hold settled is no longer pending (the batch
-- then names it). The arrays and their strings are utf8mb4 whatever the database's
-- default character set. A string column is twice as long as its table's (or LONGTEXT):
-- a value too long for the table fails there (1406) as it did as a bound parameter,
-- even when JSON_TABLE cut it to its own length first. SQL SECURITY INVOKER: the CALL
-- runs with the caller's rights on the tables.
--
-- The procedure is replaced as a whole (re-runnable). The statements are split at the
-- DELIMITER line's terminator (engines/common/migration.h).

DROP PROCEDURE IF EXISTS ledger_write;

DELIMITER //
CREATE PROCEDURE ledger_write(IN transaction_rows LONGTEXT CHARACTER SET utf8mb4,
                              IN metadata_rows LONGTEXT CHARACTER SET utf8mb4,
                              IN hold_rows LONGTEXT CHARACTER SET utf8mb4,
                              IN settlement_rows LONGTEXT CHARACTER SET utf8mb4,
                              IN entry_rows LONGTEXT CHARACTER SET utf8mb4,
                              IN account_rows LONGTEXT CHARACTER SET utf8mb4,
                              IN event_rows LONGTEXT CHARACTER SET utf8mb4,
                              IN do_commit TINYINT)
SQL SECURITY INVOKER
MODIFIES SQL DATA
BEGIN
  IF transaction_rows IS NOT NULL THEN
    INSERT INTO transactions (id, kind, created_at, metadata, reversal_of, fingerprint, hold_id)
      SELECT j.id, j.kind, j.created_at, j.metadata, j.reversal_of, j.fingerprint, j.hold_id
      FROM JSON_TABLE(transaction_rows, '$[*]' COLUMNS (
        id VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[0]',
        kind VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[1]',
        created_at BIGINT PATH '$[2]',
        metadata LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[3]',
        reversal_of VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[4]',
        fingerprint VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[5]',
        hold_id VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[6]')) AS j;
  END IF;
  IF metadata_rows IS NOT NULL THEN
    INSERT INTO transaction_metadata (member_name, member_value, created_at, transaction_id)
      SELECT j.member_name, j.member_value, j.created_at, j.transaction_id
      FROM JSON_TABLE(metadata_rows, '$[*]' COLUMNS (
        member_name VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[0]',
        member_value VARCHAR(1024) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[1]',
        created_at BIGINT PATH '$[2]',
        transaction_id VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[3]')) AS j;
  END IF;
  IF hold_rows IS NOT NULL THEN
    INSERT INTO holds (id, from_account, to_account, asset, amount, expires_at, created_at,
                       status)
      SELECT j.id, j.from_account, j.to_account, j.asset, j.amount, j.expires_at,
             j.created_at, 'pending'
      FROM JSON_TABLE(hold_rows, '$[*]' COLUMNS (
        id VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[0]',
        from_account VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[1]',
        to_account VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[2]',
        asset VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[3]',
        amount BIGINT PATH '$[4]',
        expires_at BIGINT PATH '$[5]',
        created_at BIGINT PATH '$[6]')) AS j;
  END IF;
  IF settlement_rows IS NOT NULL THEN
    UPDATE holds JOIN JSON_TABLE(settlement_rows, '$[*]' COLUMNS (
        hold_id VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[0]',
        status VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[1]',
        settled_by VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[2]')) AS j
      ON holds.id = j.hold_id AND holds.status = 'pending'
      SET holds.status = j.status, holds.settled_by = j.settled_by;
    IF ROW_COUNT() <> JSON_LENGTH(settlement_rows) THEN
      SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 45002,
        MESSAGE_TEXT = 'ledger_write: a hold settled is no longer pending';
    END IF;
  END IF;
  IF entry_rows IS NOT NULL THEN
    INSERT INTO entries (account_id, account_version, transaction_id, entry_index, asset,
                         amount, balance_after, created_at, created_at_running_max)
      SELECT j.account_id, j.account_version, j.transaction_id, j.entry_index, j.asset,
             j.amount, j.balance_after, j.created_at, j.running_max
      FROM JSON_TABLE(entry_rows, '$[*]' COLUMNS (
        account_id VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[0]',
        account_version BIGINT PATH '$[1]',
        transaction_id VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[2]',
        entry_index BIGINT PATH '$[3]',
        asset VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[4]',
        amount BIGINT PATH '$[5]',
        balance_after BIGINT PATH '$[6]',
        created_at BIGINT PATH '$[7]',
        running_max BIGINT PATH '$[8]')) AS j;
  END IF;
  IF account_rows IS NOT NULL THEN
    UPDATE accounts JOIN JSON_TABLE(account_rows, '$[*]' COLUMNS (
        id VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[0]',
        balance BIGINT PATH '$[1]',
        version BIGINT PATH '$[2]',
        pending_debits BIGINT PATH '$[3]',
        pending_credits BIGINT PATH '$[4]',
        running_max BIGINT PATH '$[5]',
        old_balance BIGINT PATH '$[6]',
        old_version BIGINT PATH '$[7]',
        old_pending_debits BIGINT PATH '$[8]',
        old_pending_credits BIGINT PATH '$[9]')) AS j
      ON accounts.id = j.id AND accounts.balance = j.old_balance
         AND accounts.version = j.old_version
         AND accounts.pending_debits = j.old_pending_debits
         AND accounts.pending_credits = j.old_pending_credits
      SET accounts.balance = j.balance, accounts.version = j.version,
          accounts.pending_debits = j.pending_debits,
          accounts.pending_credits = j.pending_credits,
          accounts.entries_running_max = COALESCE(j.running_max, accounts.entries_running_max);
    IF ROW_COUNT() <> JSON_LENGTH(account_rows) THEN
      SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 45001,
        MESSAGE_TEXT = 'ledger_write: an account changed after its lock read it';
    END IF;
  END IF;
  IF event_rows IS NOT NULL THEN
    INSERT INTO outbox_events (transaction_id, type, payload, created_at)
      SELECT j.transaction_id, j.type, j.payload, j.created_at
      FROM JSON_TABLE(event_rows, '$[*]' COLUMNS (
        position FOR ORDINALITY,
        transaction_id VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[0]',
        type VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[1]',
        payload LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$[2]',
        created_at BIGINT PATH '$[3]')) AS j
      ORDER BY j.position;
  END IF;
  IF do_commit THEN
    COMMIT;
  END IF;
END//
DELIMITER ;
