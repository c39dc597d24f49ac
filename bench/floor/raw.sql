-- bench/floor/postgres_floor.sh (docs/benchmarks.md, "The ledger against its own floor"):
-- a uniform transfer's rows as the engine writes them, without the
-- exactly-once parts: BEGIN and the accounts' lock in one pipeline, then one
-- data-modifying statement (the accounts, the transaction, its two entries, the outbox
-- event) and COMMIT in the other.
-- pgbench -M prepared -f raw.sql on a database ledger_load populated (BENCH accounts
-- bench-user-000000 to bench-user-009999).
\set x random(0, 9999)
\set d random(1, 9999)
\set y (:x + :d) % 10000
\set t random(1, 9000000000000000000)
\set lo least(:x, :y)
\set hi greatest(:x, :y)
\startpipeline
BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT id, balance, version FROM accounts WHERE id IN ('bench-user-' || lpad(:lo::text, 6, '0'), 'bench-user-' || lpad(:hi::text, 6, '0')) ORDER BY id FOR UPDATE;
\endpipeline
\startpipeline
WITH a AS (UPDATE accounts SET balance = balance + CASE WHEN id = 'bench-user-' || lpad(:x::text, 6, '0') THEN -1 ELSE 1 END, version = version + 1 WHERE id IN ('bench-user-' || lpad(:lo::text, 6, '0'), 'bench-user-' || lpad(:hi::text, 6, '0')) RETURNING id, balance, version), t AS (INSERT INTO transactions (id, kind, created_at, metadata, fingerprint) VALUES ('f' || :t, 'post', 1795822048166641, '{}', 'e46a0ad63bfd5823e7b9e6929e6560b00663cdf9e819e324ad35cded1c968125') RETURNING 1), e AS (INSERT INTO entries (account_id, account_version, transaction_id, entry_index, asset, amount, balance_after, created_at, created_at_running_max) SELECT id, version, 'f' || :t, CASE WHEN id = 'bench-user-' || lpad(:x::text, 6, '0') THEN 0 ELSE 1 END, 'BENCH', CASE WHEN id = 'bench-user-' || lpad(:x::text, 6, '0') THEN -1 ELSE 1 END, balance, 1795822048166641, 1795822048166641 FROM a RETURNING 1),
ev AS (INSERT INTO outbox_events (transaction_id, type, payload, created_at) VALUES ('f' || :t, 'transaction.committed', '', 1795822048166641) RETURNING 1) SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM e), (SELECT count(*) FROM ev);
COMMIT;
\endpipeline
