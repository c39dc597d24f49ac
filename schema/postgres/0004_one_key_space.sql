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
-- and leave with PruneExpiredKeys. No schema change; the file commits with its row in
-- schema_migrations or not at all, and running it twice copies nothing more.
INSERT INTO idempotency_keys
  (namespace, scope, key, fingerprint, state, transaction_id, created_at, expires_at)
SELECT 'operations', scope, key, fingerprint, state, transaction_id, created_at, expires_at
FROM (
  SELECT scope, key, fingerprint, state, transaction_id, created_at, expires_at,
         row_number() OVER (PARTITION BY scope, key
                            ORDER BY expires_at DESC, namespace) AS pick
  FROM idempotency_keys
  WHERE state = 'committed'
    AND namespace IN ('top_up', 'spend', 'transfer', 'payout', 'reverse', 'post',
                      'hold', 'capture', 'void')
) AS per_kind
WHERE pick = 1
ON CONFLICT (namespace, scope, key) DO NOTHING;
