-- Reads answered by an index (issues 27 and 31): the balance as of an instant, and the
-- transaction listing by time, kind, account and metadata member, each a range scan that
-- stops after a page however long the history.
--
-- Applies to a database that already holds data: existing entries get their running
-- maximum computed once (a window over each account's versions), existing transactions'
-- metadata members are copied into transaction_metadata. Triggers keep both for every
-- later write, so the submit path's statements are unchanged.

-- An entry's created_at_running_max is the latest created_at among it and every earlier
-- entry of its account (by account_version, the account's commit order). It never
-- decreases along the versions even when created_at does (a clock stepped back, two
-- hosts' clocks), so "the balance as of T" (the history up to the first entry created
-- after T) is the entry with the greatest version whose running maximum is <= T: one
-- lookup in entries_by_account_as_of.
ALTER TABLE entries ADD COLUMN created_at_running_max INTEGER;

UPDATE entries SET created_at_running_max = ordered.running_max
FROM (SELECT account_id, account_version,
             MAX(created_at) OVER (PARTITION BY account_id ORDER BY account_version)
               AS running_max
      FROM entries) AS ordered
WHERE entries.account_id = ordered.account_id
  AND entries.account_version = ordered.account_version;

CREATE INDEX entries_by_account_as_of ON entries (account_id, created_at_running_max, account_version);

-- SQLite cannot set NEW in a BEFORE trigger: the new row is completed right after it is
-- inserted, from its account's latest earlier version (one backward step of the primary
-- key; a batch's entries share one created_at, so the order they are inserted in does not
-- change the result). The inner
-- statement shares its line with END (the migration runner splits at ';' line ends).
CREATE TRIGGER entries_keep_running_max AFTER INSERT ON entries
BEGIN
  UPDATE entries SET created_at_running_max = max(NEW.created_at, coalesce(
      (SELECT previous.created_at_running_max FROM entries AS previous
       WHERE previous.account_id = NEW.account_id
         AND previous.account_version < NEW.account_version
       ORDER BY previous.account_version DESC LIMIT 1), NEW.created_at))
  WHERE account_id = NEW.account_id AND account_version = NEW.account_version; END;

-- The transaction listing, in (created_at, id) order: every transaction; by kind; by
-- account (through its entries: DISTINCT per transaction, in the index's order).
CREATE INDEX transactions_by_time ON transactions (created_at, id);
CREATE INDEX transactions_by_kind_time ON transactions (kind, created_at, id);
CREATE INDEX entries_by_account_transaction ON entries (account_id, created_at, transaction_id);
-- It serves every read entries_by_account_time served (the velocity window's debits:
-- account_id, created_at >= since), so that one goes: a submit writes no more entry
-- indexes than before for the listing.
DROP INDEX entries_by_account_time;

-- By metadata member: one row per top-level member of a transaction's metadata whose value
-- is a JSON string (names up to 128 bytes, values up to 512: what a filter may name).
CREATE TABLE transaction_metadata (
  member_name    TEXT NOT NULL,
  member_value   TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  transaction_id TEXT NOT NULL REFERENCES transactions (id),
  PRIMARY KEY (member_name, member_value, created_at, transaction_id)
) WITHOUT ROWID;

INSERT OR IGNORE INTO transaction_metadata (member_name, member_value, created_at, transaction_id)
SELECT member.key, member.value, t.created_at, t.id
FROM transactions AS t, json_each(CASE WHEN json_valid(t.metadata) THEN t.metadata ELSE '{}' END) AS member
WHERE member.type = 'text' AND length(CAST(member.key AS BLOB)) <= 128
  AND length(CAST(member.value AS BLOB)) <= 512;

CREATE TRIGGER transactions_index_metadata AFTER INSERT ON transactions
BEGIN
  INSERT OR IGNORE INTO transaction_metadata (member_name, member_value, created_at, transaction_id)
  SELECT member.key, member.value, NEW.created_at, NEW.id
  FROM json_each(CASE WHEN json_valid(NEW.metadata) THEN NEW.metadata ELSE '{}' END) AS member
  WHERE member.type = 'text' AND length(CAST(member.key AS BLOB)) <= 128
    AND length(CAST(member.value AS BLOB)) <= 512; END;
