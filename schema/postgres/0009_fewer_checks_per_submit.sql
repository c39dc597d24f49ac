-- Less work per submit that protects nothing the write does not already guarantee
-- (issue 29; measured in docs/benchmarks.md, "Fewer checks per submit").
--
-- 1. Foreign keys of the rows the checked write inserts go: entries -> accounts,
--    entries -> transactions, transaction_metadata -> transactions. Each was an AFTER
--    trigger per inserted row running a query that key-share-locks the parent (four per
--    transfer, 6% of the server's CPU at 8 clients). The write inserts an entry only for
--    an account it has locked in the same transaction and in the same statement as its
--    transaction, and ledger_check_write_counts refuses a write whose row counts differ.
--    What the keys also did, refuse removing a referenced parent, the guard below does
--    for every parent row at no cost per submit: accounts and transactions are never
--    deleted, truncated or renumbered (the ledger closes accounts and reverses
--    transactions instead).
-- 2. The unique constraints on the nullable transactions.reversal_of and
--    outbox_events.sequence become partial unique indexes over their non-NULL values: a
--    B-tree indexes NULL too, so every transaction and every event wrote an entry that
--    no lookup reads. Each lookup (reversal_of = $1, sequence > $1, max(sequence)) implies
--    NOT NULL and keeps using an index.
--
-- A PL/pgSQL body keeps its inner statements off line ends (the runner splits at ';'
-- line ends).

ALTER TABLE entries DROP CONSTRAINT IF EXISTS entries_account_id_fkey;
ALTER TABLE entries DROP CONSTRAINT IF EXISTS entries_transaction_id_fkey;
ALTER TABLE transaction_metadata DROP CONSTRAINT IF EXISTS transaction_metadata_transaction_id_fkey;

CREATE FUNCTION ledger_refuse_removal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the ledger''s % rows are never removed or renumbered', TG_TABLE_NAME
    USING ERRCODE = 'foreign_key_violation', HINT = 'close an account or reverse a transaction instead'; END
$$;

CREATE TRIGGER accounts_are_never_removed BEFORE DELETE OR UPDATE OF id ON accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_removal();
CREATE TRIGGER accounts_are_never_truncated BEFORE TRUNCATE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_removal();
CREATE TRIGGER transactions_are_never_removed BEFORE DELETE OR UPDATE OF id ON transactions
  FOR EACH ROW EXECUTE FUNCTION ledger_refuse_removal();
CREATE TRIGGER transactions_are_never_truncated BEFORE TRUNCATE ON transactions
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_removal();

ALTER TABLE transactions DROP CONSTRAINT IF EXISTS transactions_reversal_of_key;
CREATE UNIQUE INDEX transactions_by_reversal_of ON transactions (reversal_of)
  WHERE reversal_of IS NOT NULL;
ALTER TABLE outbox_events DROP CONSTRAINT IF EXISTS outbox_events_sequence_key;
CREATE UNIQUE INDEX outbox_events_by_sequence ON outbox_events (sequence)
  WHERE sequence IS NOT NULL;
