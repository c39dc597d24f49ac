-- One key space for every entry point (issue 30; ledger/ledger.h kDefaultKeyNamespace).
-- Before this release the library and `ledger submit` keyed a submit under its kind
-- ('top_up', 'transfer', ...) while `ledger serve` keyed it under 'operations', so one key
-- could post twice through two doors. Every submit now defaults to 'operations'. This
-- copies each committed key of the old per-kind spaces into 'operations', so a resend of
-- an old key through any door replays its transaction instead of posting again.
--
-- Only where ('operations', scope, key) is free: a key already there (sent over HTTP)
-- stays as it is, and a resend of the other kind's payload is then a conflict, never a
-- second posting. When one (scope, key) was used by several kinds, the row that expires
-- last is copied (a live one wins over an expired one); the others conflict. The old rows
-- stay where they are (a caller naming the kind as its key namespace still replays them)
-- and leave with PruneExpiredKeys. DML only: the runner commits it with its row in
-- schema_migrations; running it twice copies nothing more (the anti-join skips taken
-- keys, so no IGNORE hides another error). No comment may share a line with the
-- statement (the runner splits at ';' ending a line). Window functions: MySQL 8.0 and
-- MariaDB 10.2 on.
INSERT INTO idempotency_keys
  (namespace, scope, `key`, fingerprint, state, transaction_id, created_at, expires_at)
SELECT 'operations', per_kind.scope, per_kind.`key`, per_kind.fingerprint, per_kind.state,
       per_kind.transaction_id, per_kind.created_at, per_kind.expires_at
FROM (
  SELECT scope, `key`, fingerprint, state, transaction_id, created_at, expires_at,
         ROW_NUMBER() OVER (PARTITION BY scope, `key`
                            ORDER BY expires_at DESC, namespace) AS pick
  FROM idempotency_keys
  WHERE state = 'committed'
    AND namespace IN ('top_up', 'spend', 'transfer', 'payout', 'reverse', 'post',
                      'hold', 'capture', 'void')
) AS per_kind
LEFT JOIN idempotency_keys AS taken
  ON taken.namespace = 'operations' AND taken.scope = per_kind.scope
     AND taken.`key` = per_kind.`key`
WHERE per_kind.pick = 1 AND taken.`key` IS NULL;
