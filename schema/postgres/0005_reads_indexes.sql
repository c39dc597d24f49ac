-- Reads answered by an index (issues 27 and 31): the balance as of an instant, and the
-- transaction listing by time, kind, account and metadata member, each a range scan that
-- stops after a page however long the history. Same tables, columns and triggers as
-- schema/sqlite/0004_reads_indexes.sql, which explains them.
--
-- Applies to a database that already holds data: existing entries get their running
-- maximum computed once (a window over each account's versions), existing transactions'
-- metadata members are copied into transaction_metadata. Triggers keep both for every
-- later write, so the submit path's statements are unchanged. A PL/pgSQL body keeps its
-- inner statements off line ends (the runner splits at ';' line ends).

ALTER TABLE entries ADD COLUMN created_at_running_max BIGINT;

UPDATE entries SET created_at_running_max = ordered.running_max
FROM (SELECT account_id, account_version,
             max(created_at) OVER (PARTITION BY account_id ORDER BY account_version)
               AS running_max
      FROM entries) AS ordered
WHERE entries.account_id = ordered.account_id
  AND entries.account_version = ordered.account_version;

-- A BEFORE trigger completes every new entry from its account's latest earlier version
-- (one backward step of the primary key; within one statement the rows inserted before
-- it are visible, and a batch's entries share one created_at), so the column is never NULL.
CREATE FUNCTION ledger_entries_running_max() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.created_at_running_max := GREATEST(NEW.created_at,
    (SELECT previous.created_at_running_max FROM entries AS previous
     WHERE previous.account_id = NEW.account_id AND previous.account_version < NEW.account_version
     ORDER BY previous.account_version DESC LIMIT 1)); RETURN NEW; END $$;

CREATE TRIGGER entries_keep_running_max BEFORE INSERT ON entries
  FOR EACH ROW EXECUTE PROCEDURE ledger_entries_running_max();

ALTER TABLE entries ALTER COLUMN created_at_running_max SET NOT NULL;

CREATE INDEX entries_by_account_as_of ON entries (account_id, created_at_running_max, account_version);

CREATE INDEX transactions_by_time ON transactions (created_at, id);
CREATE INDEX transactions_by_kind_time ON transactions (kind, created_at, id);
CREATE INDEX entries_by_account_transaction ON entries (account_id, created_at, transaction_id);
-- It serves every read entries_by_account_time served (the velocity window's debits:
-- account_id, created_at >= since), so that one goes: a submit writes no more entry
-- indexes than before for the listing.
DROP INDEX entries_by_account_time;

CREATE TABLE transaction_metadata (
  member_name    TEXT COLLATE "C" NOT NULL,
  member_value   TEXT COLLATE "C" NOT NULL,
  created_at     BIGINT NOT NULL,
  transaction_id TEXT COLLATE "C" NOT NULL REFERENCES transactions (id),
  PRIMARY KEY (member_name, member_value, created_at, transaction_id)
);

-- jsonb rejects \u0000 and text cannot hold it: metadata naming it indexes nothing.
CREATE FUNCTION ledger_transaction_metadata_members(metadata TEXT)
  RETURNS TABLE (member_name TEXT, member_value TEXT) LANGUAGE sql IMMUTABLE AS $$
  SELECT member.key, member.value #>> '{}'
  FROM jsonb_each(CASE WHEN strpos($1, '\u0000') = 0 THEN $1::jsonb ELSE '{}'::jsonb END) AS member
  WHERE jsonb_typeof(member.value) = 'string' AND octet_length(member.key) <= 128
    AND octet_length(member.value #>> '{}') <= 512
$$;

INSERT INTO transaction_metadata (member_name, member_value, created_at, transaction_id)
SELECT member.member_name, member.member_value, t.created_at, t.id
FROM transactions AS t, ledger_transaction_metadata_members(t.metadata) AS member
ON CONFLICT DO NOTHING;

CREATE FUNCTION ledger_transactions_index_metadata() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO transaction_metadata (member_name, member_value, created_at, transaction_id)
  SELECT member.member_name, member.member_value, NEW.created_at, NEW.id
  FROM ledger_transaction_metadata_members(NEW.metadata) AS member
  ON CONFLICT DO NOTHING; RETURN NULL; END $$;

CREATE TRIGGER transactions_index_metadata AFTER INSERT ON transactions
  FOR EACH ROW EXECUTE PROCEDURE ledger_transactions_index_metadata();
