-- The write's row-count check as a schema function (issue 29), which the checked write
-- statements call (write_batch_checked, write_batch_with_holds_checked in
-- engines/postgres/postgres_statements.cc): every session has it, so a submit's write
-- and its COMMIT always travel in one round trip (engines/postgres/postgres_pipeline.h).
-- Until now each session created it as a temporary function when it opened, and a
-- session that could not (a standby, a role without TEMP) committed in two round trips.
-- Created where the other objects are: the session's schema (PostgresOptions::schema,
-- each tenant's own) or public. Raises SQLSTATE LW001 when the counts differ, with the
-- counts written as its DETAIL (PostgresWriteBatch::CheckAppliedText), which aborts the
-- pipeline before its COMMIT: a short write is never committed.
-- (The migration runner splits statements at lines ending in a semicolon: the body's
-- statements share lines that do not.)
CREATE OR REPLACE FUNCTION ledger_check_write_counts(applied bigint[], expected bigint[])
RETURNS bigint[] LANGUAGE plpgsql AS $$
BEGIN
  IF applied IS DISTINCT FROM expected THEN
    RAISE EXCEPTION 'write batch applied % rows where % were expected', applied, expected
      USING ERRCODE = 'LW001', DETAIL = applied::text; END IF; RETURN applied; END
$$;
