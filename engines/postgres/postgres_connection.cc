// The claim mode and the engine's waits ride in the connection URI ("?claim=row",
// "&read_timeout=5s") so a database URL alone configures the engine (ledger migrate
// --db ..., OpenEngine(url)); libpq must never see them, as it rejects unknown ones.
#include "engines/postgres/postgres_connection.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status.h"
#include "engines/common/database_url.h"
#include "engines/common/waits.h"
#include "engines/postgres/postgres_rows.h"
#include "libpq-fe.h"
#include "pqxx/nontransaction"

namespace ledger::postgres_internal {
namespace {

constexpr int kServerVersionMin = 110000;  // hashtextextended() arrived in PostgreSQL 11

constexpr char kClaimParameter[] = "claim";

bool IsUri(const std::string& connection) {
  return absl::StartsWith(connection, "postgres://") ||
         absl::StartsWith(connection, "postgresql://");
}

absl::StatusOr<PostgresClaimMode> ParseClaimMode(absl::string_view value) {
  if (value == "advisory") return PostgresClaimMode::kAdvisoryLock;
  if (value == "row") return PostgresClaimMode::kRow;
  return absl::InvalidArgumentError(absl::StrCat("postgres: unknown claim mode \"", value,
                                                 "\" in the connection URI; use claim=advisory "
                                                 "or claim=row"));
}

// Applies one of the engine's own URI parameters to `options`; false for a libpq one.
absl::StatusOr<bool> ApplyEngineParameter(const std::string& name, const std::string& value,
                                          PostgresOptions& options) {
  if (name == kClaimParameter) {
    LEDGER_ASSIGN_OR_RETURN(options.claim_mode, ParseClaimMode(value));
    return true;
  }
  if (name == kSchemaParameter) {
    LEDGER_RETURN_IF_ERROR(ValidateSchemaName("postgres", value));  // "schema=" too
    options.schema = value;
    return true;
  }
  const std::pair<std::string_view, absl::Duration*> waits[] = {
      {"account_lock_wait", &options.account_lock_wait},
      {"statement_timeout", &options.statement_timeout},
      {"read_timeout", &options.read_timeout},
      {"pool_acquire_wait", &options.pool_acquire_wait},
      {"migration_lock_wait", &options.migration_lock_wait}};
  for (const auto& [wait_name, field] : waits) {
    if (name != wait_name) continue;
    LEDGER_ASSIGN_OR_RETURN(*field, engine_common::ParseWaitParameter("postgres", name, value));
    return true;
  }
  return false;
}

absl::Status CheckWaits(const PostgresOptions& options) {
  using engine_common::CheckWait;
  LEDGER_RETURN_IF_ERROR(CheckWait("postgres", "connect_timeout", options.connect_timeout));
  LEDGER_RETURN_IF_ERROR(CheckWait("postgres", "account_lock_wait", options.account_lock_wait));
  LEDGER_RETURN_IF_ERROR(CheckWait("postgres", "statement_timeout", options.statement_timeout));
  LEDGER_RETURN_IF_ERROR(CheckWait("postgres", "read_timeout", options.read_timeout));
  LEDGER_RETURN_IF_ERROR(
      CheckWait("postgres", "migration_lock_wait", options.migration_lock_wait));
  LEDGER_RETURN_IF_ERROR(CheckWait("postgres", "keepalives_idle", options.keepalives_idle));
  LEDGER_RETURN_IF_ERROR(CheckWait("postgres", "keepalives_interval", options.keepalives_interval));
  LEDGER_RETURN_IF_ERROR(CheckWait("postgres", "tcp_user_timeout", options.tcp_user_timeout));
  if (options.keepalives_count < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "postgres: keepalives_count must be at least 1, not ", options.keepalives_count));
  }
  // A lock wait runs inside a statement, and a statement inside the client's wait: each
  // bound must be shorter than the one around it, or it never gets to answer.
  LEDGER_RETURN_IF_ERROR(engine_common::CheckWaitExceeds(
      "postgres", "statement_timeout", options.statement_timeout, "account_lock_wait",
      options.account_lock_wait));
  return engine_common::CheckWaitExceeds("postgres", "read_timeout", options.read_timeout,
                                         "statement_timeout", options.statement_timeout);
}

// libpq's waits in libpq's units: seconds, tcp_user_timeout in milliseconds.
std::vector<std::pair<std::string, std::string>> LibpqWaits(const PostgresOptions& options) {
  using engine_common::WholeMillisecondsRoundedUp;
  using engine_common::WholeSecondsRoundedUp;
  constexpr int64_t kLibpqConnectTimeoutMin = 2;  // libpq reads 1 as 2
  return {
      {"connect_timeout",
       absl::StrCat(WholeSecondsRoundedUp(options.connect_timeout, kLibpqConnectTimeoutMin))},
      {"keepalives", "1"},
      {"keepalives_idle", absl::StrCat(WholeSecondsRoundedUp(options.keepalives_idle, 1))},
      {"keepalives_interval", absl::StrCat(WholeSecondsRoundedUp(options.keepalives_interval, 1))},
      {"keepalives_count", absl::StrCat(options.keepalives_count)},
      {"tcp_user_timeout", absl::StrCat(WholeMillisecondsRoundedUp(options.tcp_user_timeout))}};
}

// The connect_timeout libpq gets from the final connection string (the engine's, or the
// caller's, which wins): the whole attempt's bound (BoundedConnection). libpq reads 0 or
// less as "no bound" and 1 as 2 s; the engine refuses the former and counts the latter
// as libpq does.
absl::StatusOr<absl::Duration> EffectiveConnectTimeout(const std::string& connection) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(connection.c_str(), &error);
  if (options == nullptr) {
    std::string message = error != nullptr ? error : "out of memory";
    PQfreemem(error);
    return absl::InvalidArgumentError(
        absl::StrCat("postgres: cannot read the connection string: ", message));
  }
  std::string value;
  for (PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (std::string_view(option->keyword) == "connect_timeout" && option->val != nullptr) {
      value = option->val;
    }
  }
  PQconninfoFree(options);
  int seconds = 0;
  if (!absl::SimpleAtoi(value, &seconds) || seconds <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "postgres: connect_timeout=", value,
        " is not a whole number of seconds above 0 (libpq waits forever on 0)"));
  }
  return absl::Seconds(std::max(seconds, 2));
}

std::string Sql(std::initializer_list<absl::string_view> parts) { return absl::StrJoin(parts, ""); }

// One statement writes everything a submit posts: the transaction, its entries, the
// accounts' new balances and versions, the key record and the outbox events, each
// batch of rows carried as arrays. It is sent once, at Commit, so a submit costs the
// same round trips whatever the number of entries. The SELECT returns the row count of
// each part so the caller checks that every row landed.
//
// A key whose claim found no row is recorded by a plain INSERT (new_keys); only a key
// whose row the claim saw (a row-mode placeholder, an expired record) takes the upsert
// (replaced_keys). ON CONFLICT costs every row a second index probe and a confirm
// record in the WAL; should a row have appeared since the claim after all, the plain
// INSERT fails on the primary key and the batch is retried.
//
// The placeholders no record filled (row mode only) are deleted only when there are
// some: `cardinality($31) > 0` is a one-time filter, checked before the key table is
// touched. The statement's generic plan is made once a session has run it a few times
// and kept until the tables' statistics change; made while idempotency_keys was small,
// it joined the empty array with a scan of the whole key table, on every commit and
// growing with every key recorded, until an autoanalyze replaced the plan: 0.7 ms of a
// write_batch's 0.9 ms at 32 clients (docs/benchmarks.md).
//
// Two shapes of it (PostgresWriteBatch::Statement picks one): write_batch for batches
// that place or settle no hold, which writes exactly what a submit wrote before holds,
// and write_batch_with_holds, which also stores each transaction's hold_id and each
// account's pending amounts, inserts the holds placed and settles those captured,
// voided or expired (only while still pending: the caller compares the count). Its
// extra parameters follow the first 33, so both share the parts below.
std::string WriteBatchSql(bool with_holds) {
  // The key records' rows ($19 to $26): new_keys inserts those whose claim found no row,
  // replaced_keys upserts the rest.
  constexpr absl::string_view kKeyColumnList = R"sql(
    (namespace, scope, key, fingerprint, state, transaction_id, created_at, expires_at))sql";
  constexpr absl::string_view kKeyRecordRows = R"sql(
  SELECT record.namespace, record.scope, record.key, record.fingerprint, 'committed',
         record.transaction_id, record.created_at, record.expires_at
  FROM unnest($19::text[], $20::text[], $21::text[], $22::text[], $23::text[], $24::bigint[],
              $25::bigint[], $26::boolean[])
       AS record (namespace, scope, key, fingerprint, transaction_id, created_at, expires_at,
                  claimed_without_row))sql";
  const absl::string_view hold_id_column = with_holds ? ", hold_id" : "";
  const absl::string_view hold_id_array = with_holds ? ", $34::text[]" : "";
  const absl::string_view pending_columns =
      with_holds ? ", pending_debits = changed.pending_debits, "
                   "pending_credits = changed.pending_credits"
                 : "";
  const absl::string_view pending_arrays = with_holds ? ", $35::bigint[], $36::bigint[]" : "";
  const absl::string_view pending_names = with_holds ? ", pending_debits, pending_credits" : "";
  std::string sql = Sql({R"sql(
WITH new_transactions AS (
  INSERT INTO transactions (id, kind, created_at, metadata, reversal_of, fingerprint)sql",
                         hold_id_column, R"sql()
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[])sql",
                         hold_id_array, R"sql()
  RETURNING 1),
new_entries AS (
  INSERT INTO entries (account_id, account_version, transaction_id, entry_index, asset, amount,
                       balance_after, created_at)
  SELECT * FROM unnest($7::text[], $8::bigint[], $9::text[], $10::integer[], $11::text[],
                       $12::bigint[], $13::bigint[], $14::bigint[])
  RETURNING 1),
updated_accounts AS (
  UPDATE accounts SET balance = changed.balance, version = changed.version)sql",
                         pending_columns, R"sql(
  FROM unnest($15::text[], $16::bigint[], $17::bigint[], $18::bigint[])sql", pending_arrays,
                         R"sql()
       AS changed (id, balance, version, locked_version)sql", pending_names, R"sql()
  WHERE accounts.id = changed.id
    AND (changed.locked_version IS NULL OR accounts.version = changed.locked_version)
  RETURNING 1),
new_keys AS (
  INSERT INTO idempotency_keys)sql", kKeyColumnList, kKeyRecordRows, R"sql(
  WHERE record.claimed_without_row
  RETURNING 1),
replaced_keys AS (
  INSERT INTO idempotency_keys AS existing)sql", kKeyColumnList, kKeyRecordRows, R"sql(
  WHERE NOT record.claimed_without_row
  ON CONFLICT (namespace, scope, key) DO UPDATE
    SET fingerprint = EXCLUDED.fingerprint, state = 'committed',
        transaction_id = EXCLUDED.transaction_id, created_at = EXCLUDED.created_at,
        expires_at = EXCLUDED.expires_at
    WHERE existing.state = 'pending' OR existing.expires_at <= EXCLUDED.created_at
  RETURNING 1),
new_events AS (
  INSERT INTO outbox_events (transaction_id, type, payload, created_at)
  SELECT event.transaction_id, event.type, event.payload, event.created_at
  FROM unnest($27::text[], $28::text[], $29::text[], $30::bigint[]) WITH ORDINALITY
       AS event (transaction_id, type, payload, created_at, position)
  ORDER BY event.position
  RETURNING 1),
dropped_placeholders AS (
  DELETE FROM idempotency_keys AS placeholder
  USING unnest($31::text[], $32::text[], $33::text[]) AS unused (namespace, scope, key)
  WHERE cardinality($31::text[]) > 0
    AND placeholder.namespace = unused.namespace AND placeholder.scope = unused.scope
    AND placeholder.key = unused.key AND placeholder.state = 'pending'
  RETURNING 1))sql"});
  if (with_holds) {
    // A settlement's UPDATE cannot see a hold inserted by this same statement; the
    // pipeline never settles a hold placed in the same batch (it is not found yet). It
    // runs only when there are settlements, for the reason dropped_placeholders does.
    sql += R"sql(,
new_holds AS (
  INSERT INTO holds (id, from_account, to_account, asset, amount, expires_at, created_at, status)
  SELECT hold.*, 'pending'
  FROM unnest($37::text[], $38::text[], $39::text[], $40::text[], $41::bigint[], $42::bigint[],
              $43::bigint[])
       AS hold (id, from_account, to_account, asset, amount, expires_at, created_at)
  RETURNING 1),
settled_holds AS (
  UPDATE holds SET status = settled.status, settled_by = settled.settled_by
  FROM unnest($44::text[], $45::text[], $46::text[]) AS settled (id, status, settled_by)
  WHERE cardinality($44::text[]) > 0 AND holds.id = settled.id AND holds.status = 'pending'
  RETURNING 1))sql";
  }
  sql += R"sql(
SELECT (SELECT count(*) FROM new_transactions), (SELECT count(*) FROM new_entries),
       (SELECT count(*) FROM updated_accounts),
       (SELECT count(*) FROM new_keys) + (SELECT count(*) FROM replaced_keys),
       (SELECT count(*) FROM new_events), (SELECT count(*) FROM dropped_placeholders))sql";
  if (with_holds) {
    sql += ",\n       (SELECT count(*) FROM new_holds), (SELECT count(*) FROM settled_holds)";
  }
  return sql + "\n";
}

// An account's pending holds at $2 (PendingHoldTotals): out of it, the lapsed amounts
// and the still-reserving holds placed since $3, in one pass over its pending holds
// (holds_pending_by_from_account); into it, the lapsed amounts
// (holds_pending_by_to_account). numeric sums cannot overflow; each saturates at the
// bigint maximum.
constexpr char kHoldTotalsSql[] =
    "SELECT d.lapsed, c.lapsed, d.reserving_count, d.reserving_amount FROM "
    "(SELECT LEAST(COALESCE(sum(amount::numeric) FILTER (WHERE expires_at <= $2), 0), "
    "9223372036854775807)::bigint AS lapsed, "
    "count(*) FILTER (WHERE (expires_at IS NULL OR expires_at > $2) AND created_at >= $3) "
    "AS reserving_count, "
    "LEAST(COALESCE(sum(amount::numeric) FILTER (WHERE (expires_at IS NULL OR expires_at > $2) "
    "AND created_at >= $3), 0), 9223372036854775807)::bigint AS reserving_amount "
    "FROM holds WHERE status = 'pending' AND from_account = $1) d, "
    "(SELECT LEAST(COALESCE(sum(amount::numeric), 0), 9223372036854775807)::bigint AS lapsed "
    "FROM holds WHERE status = 'pending' AND to_account = $1 AND expires_at <= $2) c";

std::vector<std::pair<const char*, std::string>> Statements() {
  return {
      {statement::kPutAsset,
       "WITH inserted AS (INSERT INTO assets (code, scale) VALUES ($1, $2) "
       "ON CONFLICT (code) DO NOTHING RETURNING scale) "
       "SELECT scale FROM inserted UNION ALL "
       "SELECT scale FROM assets WHERE code = $1 AND NOT EXISTS (SELECT 1 FROM inserted)"},
      {statement::kSelectAsset, Sql({"SELECT ", kAssetColumns, " FROM assets WHERE code = $1"})},
      {statement::kListAssets, Sql({"SELECT ", kAssetColumns, " FROM assets ORDER BY code"})},
      {statement::kInsertAccount,
       Sql({"INSERT INTO accounts (", kAccountColumns,
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"})},
      {statement::kSelectAccount,
       Sql({"SELECT ", kAccountColumns, " FROM accounts WHERE id = $1"})},
      {statement::kListAccounts,
       Sql({"SELECT ", kAccountColumns, " FROM accounts WHERE id > $1 ORDER BY id LIMIT $2"})},
      {statement::kCloseAccountIfZeroBalance,
       "UPDATE accounts SET closed = TRUE WHERE id = $1 AND balance = 0 "
       "AND pending_debits = 0 AND pending_credits = 0"},
      {statement::kSelectTransaction,
       Sql({"SELECT ", kTransactionWithEntryColumns, " FROM transactions t", kTransactionJoins,
            " WHERE t.id = $1 ORDER BY e.entry_index"})},
      // Each id by the indexes: LATERAL subqueries behind OFFSET 0 are not flattened into
      // joins, which the planner answers with scans of the tables (they grow with history).
      {statement::kSelectTransactions,
       Sql({"SELECT ", kTransactionWithEntryColumns,
            " FROM unnest($1::text[]) AS wanted (id)"
            " CROSS JOIN LATERAL (SELECT * FROM transactions WHERE id = wanted.id OFFSET 0) t"
            " LEFT JOIN LATERAL (SELECT * FROM holds WHERE id = t.id OFFSET 0) h ON true"
            " LEFT JOIN LATERAL (SELECT * FROM entries WHERE transaction_id = t.id OFFSET 0) e"
            " ON true ORDER BY t.id, e.entry_index"})},
      {statement::kListTransactions,
       Sql({"SELECT ", kTransactionWithEntryColumns,
            " FROM (SELECT * FROM transactions WHERE id > $1 ORDER BY id LIMIT $2) t",
            kTransactionJoins, " ORDER BY t.id, e.entry_index"})},
      {statement::kListEntries,
       "SELECT account_id, asset, amount, balance_after, account_version, transaction_id, "
       "created_at FROM entries "
       "WHERE account_id = $1 AND account_version > $2 ORDER BY account_version LIMIT $3"},
      {statement::kListKeyRecordsFirst, Sql({"SELECT ", kKeyColumns,
                                             " FROM idempotency_keys WHERE state = 'committed' "
                                             "ORDER BY namespace, scope, key LIMIT $1"})},
      {statement::kListKeyRecordsAfter,
       Sql({"SELECT ", kKeyColumns,
            " FROM idempotency_keys WHERE state = 'committed' "
            "AND (namespace, scope, key) > ($1, $2, $3) ORDER BY namespace, scope, key LIMIT $4"})},
      // SKIP LOCKED: a row a claimer holds (row mode) is being replaced; leave it to it.
      {statement::kPruneExpiredKeys,
       "DELETE FROM idempotency_keys AS k USING (SELECT namespace, scope, key "
       "FROM idempotency_keys WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 "
       "FOR UPDATE SKIP LOCKED) AS expired WHERE k.namespace = expired.namespace "
       "AND k.scope = expired.scope AND k.key = expired.key"},
      {statement::kListEvents,
       Sql({"SELECT ", kEventColumns,
            " FROM outbox_events WHERE sequence > $1 ORDER BY sequence LIMIT $2"})},
      {statement::kIsReversed, "SELECT EXISTS (SELECT 1 FROM transactions WHERE reversal_of = $1)"},
      // Rows are locked in the order LockRows receives them: the caller's order.
      {statement::kLockAccounts,
       Sql({"SELECT ", kAccountColumnsOfA,
            " FROM unnest($1::text[]) WITH ORDINALITY AS wanted (id, position) "
            "JOIN accounts a ON a.id = wanted.id ORDER BY wanted.position FOR UPDATE OF a"})},
      // numeric sums cannot overflow; the total saturates at the bigint maximum.
      {statement::kDebitUsage,
       "SELECT count(*), LEAST(COALESCE(sum(-(amount::numeric)), 0), 9223372036854775807)::bigint "
       "FROM entries WHERE account_id = $1 AND created_at >= $2 AND amount < 0"},
      {statement::kWriteBatch, WriteBatchSql(/*with_holds=*/false)},
      {statement::kWriteBatchWithHolds, WriteBatchSql(/*with_holds=*/true)},
      {statement::kSelectHold, Sql({"SELECT ", kHoldColumns, " FROM holds WHERE id = $1"})},
      {statement::kSelectHolds,
       Sql({"SELECT ", kHoldColumns, " FROM holds WHERE id = ANY ($1::text[])"})},
      {statement::kListHolds,
       Sql({"SELECT ", kHoldColumns, " FROM holds WHERE id > $1 ORDER BY id LIMIT $2"})},
      // One branch per side, each an ordered range of its (account, id) index; UNION
      // drops the second copy of a hold from an account to itself.
      {statement::kListAccountHolds,
       Sql({"(SELECT ", kHoldColumns,
            " FROM holds WHERE from_account = $1 AND id > $2 ORDER BY id LIMIT $3) UNION "
            "(SELECT ", kHoldColumns,
            " FROM holds WHERE to_account = $1 AND id > $2 ORDER BY id LIMIT $3) "
            "ORDER BY id LIMIT $3"})},
      // A range of holds_pending_by_expiry, in its order.
      {statement::kListLapsedHolds,
       Sql({"SELECT ", kHoldColumns,
            " FROM holds WHERE status = 'pending' AND expires_at IS NOT NULL "
            "AND expires_at <= $1 ORDER BY expires_at, id LIMIT $2"})},
      {statement::kHoldTotals, kHoldTotalsSql},
      {statement::kInsertWorkClaim,
       Sql({"WITH inserted AS (INSERT INTO work_claims (", kWorkClaimColumns,
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) "
            "ON CONFLICT (namespace, scope, key) DO NOTHING RETURNING ",
            kWorkClaimColumns, ") SELECT ", kWorkClaimColumns, " FROM inserted UNION ALL SELECT ",
            kWorkClaimColumns,
            " FROM work_claims WHERE namespace = $1 AND scope = $2 AND key = $3 "
            "AND NOT EXISTS (SELECT 1 FROM inserted)"})},
      {statement::kReplaceWorkClaim,
       "UPDATE work_claims SET fingerprint = $6, state = $7, owner = $8, attempt = $9, "
       "lease_expires_at = $10, result = $11, created_at = $12, updated_at = $13, "
       "expires_at = $14 WHERE namespace = $1 AND scope = $2 AND key = $3 AND owner = $4 "
       "AND attempt = $5"},
      {statement::kDeleteWorkClaim,
       "DELETE FROM work_claims WHERE namespace = $1 AND scope = $2 AND key = $3 "
       "AND owner = $4 AND state = 'pending'"},
      {statement::kMarkAbandonedWorkClaims,
       "UPDATE work_claims SET state = 'abandoned', updated_at = $1 "
       "WHERE state = 'pending' AND lease_expires_at <= $1"},
      {statement::kPruneWorkClaims, "DELETE FROM work_claims WHERE expires_at <= $1"},
      {statement::kInsertWebhookEvent,
       "INSERT INTO webhook_events (provider, event_id, received_at) VALUES ($1, $2, $3) "
       "ON CONFLICT (provider, event_id) DO NOTHING"},
      {statement::kDeleteWebhookEvent,
       "DELETE FROM webhook_events WHERE provider = $1 AND event_id = $2"},
      {statement::kPruneWebhookEvents, "DELETE FROM webhook_events WHERE received_at < $1"},
  };
}

}  // namespace


const std::vector<std::string_view>& PostgresUrlParameters() {
  static const std::vector<std::string_view> parameters = {
      kClaimParameter, kSchemaParameter, "account_lock_wait", "statement_timeout", "read_timeout",
      "pool_acquire_wait", "migration_lock_wait", "application_name", "connect_timeout", "keepalives",
      "keepalives_count", "keepalives_idle", "keepalives_interval", "options", "password",
      "sslcert", "sslcrl", "sslkey", "sslmode", "sslrootcert", "target_session_attrs",
      "tcp_user_timeout", "user"};
  return parameters;
}

absl::StatusOr<ParsedPostgresConnection> ParsePostgresConnection(const PostgresOptions& options) {
  ParsedPostgresConnection parsed{options.connection, options};
  std::vector<std::string> kept;  // the URI's libpq parameters, as written
  std::set<std::string, std::less<>> given;
  if (IsUri(options.connection)) {
    // The shared parser: the query starts after the credentials, as everywhere else.
    LEDGER_ASSIGN_OR_RETURN(DatabaseUrl url, ParseDatabaseUrl(options.connection));
    LEDGER_RETURN_IF_ERROR(CheckParameters(url, "postgres", PostgresUrlParameters()));
    for (const auto& [name, value] : url.parameters) {
      LEDGER_ASSIGN_OR_RETURN(bool engines_own, ApplyEngineParameter(name, value, parsed.options));
      if (engines_own) continue;
      kept.push_back(absl::StrCat(name, "=", value));
      given.insert(name);
    }
    parsed.connection = url.base;
  }
  LEDGER_RETURN_IF_ERROR(CheckWaits(parsed.options));
  if (!parsed.options.schema.empty()) {
    LEDGER_RETURN_IF_ERROR(ValidateSchemaName("postgres", parsed.options.schema));
  }
  std::vector<std::string> added;
  for (const auto& [name, value] : LibpqWaits(parsed.options)) {
    if (!given.contains(name)) added.push_back(absl::StrCat(name, "=", value));
  }
  if (!IsUri(options.connection)) {
    // key=value: the later of two equal keywords wins, so the caller's own go last.
    parsed.connection = absl::StrCat(absl::StrJoin(added, " "), " ", options.connection);
  } else {
    kept.insert(kept.end(), added.begin(), added.end());
    if (!kept.empty()) absl::StrAppend(&parsed.connection, "?", absl::StrJoin(kept, "&"));
  }
  LEDGER_ASSIGN_OR_RETURN(parsed.options.connect_timeout,
                          EffectiveConnectTimeout(parsed.connection));
  return parsed;
}

std::string AdvisoryLockSeed(std::string_view schema) {
  if (schema.empty()) return "0";
  return absl::StrCat("hashtextextended('", View(schema), "', 0)");
}

absl::Status SetUpSession(PostgresSession& session, std::string_view schema) {
  if (session.connection().server_version() < kServerVersionMin) {
    return absl::FailedPreconditionError(
        absl::StrCat("postgres: server version ", session.connection().server_version(),
                     " is too old; the ledger needs PostgreSQL 11 or newer"));
  }
  session.schema = std::string(schema);
  if (!session.schema.empty()) {
    // Before any statement is prepared: names resolve in the schema alone (pg_catalog is
    // searched first whatever search_path says). The schema may not exist yet: SET
    // accepts that, and the first migration creates it.
    LEDGER_RETURN_IF_ERROR(
        GuardRoundTrip(session, {.operation = "set the session's schema"}, [&]() -> absl::Status {
          pqxx::nontransaction work(session.connection());
          work.exec(absl::StrCat("SET search_path TO ", session.schema));
          return absl::OkStatus();
        }));
  }
  DeclareStatements(session.connection());
  return absl::OkStatus();
}

void DeclareStatements(pqxx::connection_base& connection) {
  for (const auto& [name, sql] : Statements()) connection.prepare(name, sql);
}

}  // namespace ledger::postgres_internal
