// One PostgreSQL session's setup: the connection string (its "claim=" parameter is the
// engine's, never libpq's), the server version check, and the named prepared statements
// declared on every new connection (libpqxx registers each with the server on its
// first use). The session itself is a pqxx::connection held by the pool
// (postgres_connection_pool.h): libpqxx already is the connection wrapper that
// sqlite_connection.h and mysql_connection.h write by hand.
//
// Internal to engines/postgres. Thread-safe: constants and pure functions; SetUpSession
// touches only the session it is given.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_CONNECTION_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_CONNECTION_H_

#include <string>

#include "absl/status/statusor.h"
#include "engines/postgres/postgres_connection_pool.h"
#include "engines/postgres/postgres_engine.h"
#include "pqxx/connection"

namespace ledger::postgres_internal {

struct ParsedPostgresConnection {
  std::string connection;  // what libpq gets: the claim parameter removed
  PostgresClaimMode claim_mode = PostgresClaimMode::kAdvisoryLock;
};

// Reads and removes a "claim=row|advisory" query parameter of a postgres:// or
// postgresql:// URI; it overrides `default_mode`. Other strings pass through unchanged.
// InvalidArgument for an unknown claim mode.
absl::StatusOr<ParsedPostgresConnection> ParsePostgresConnection(const std::string& connection,
                                                                 PostgresClaimMode default_mode);

// Run once on every new session: FailedPrecondition for a server older than
// PostgreSQL 11, then declares the prepared statements.
absl::Status SetUpSession(PostgresSession& session);

// Names of the prepared statements.
namespace statement {
inline constexpr char kPutAsset[] = "put_asset";
inline constexpr char kSelectAsset[] = "select_asset";
inline constexpr char kListAssets[] = "list_assets";
inline constexpr char kInsertAccount[] = "insert_account";
inline constexpr char kSelectAccount[] = "select_account";
inline constexpr char kListAccounts[] = "list_accounts";
inline constexpr char kCloseAccountIfZeroBalance[] = "close_account_if_zero_balance";
inline constexpr char kSelectTransaction[] = "select_transaction";
inline constexpr char kListTransactions[] = "list_transactions";
inline constexpr char kListEntries[] = "list_entries";
inline constexpr char kListKeyRecordsFirst[] = "list_key_records_first";
inline constexpr char kListKeyRecordsAfter[] = "list_key_records_after";
inline constexpr char kPruneExpiredKeys[] = "prune_expired_keys";
inline constexpr char kListEvents[] = "list_events";
inline constexpr char kIsReversed[] = "is_reversed";
inline constexpr char kLockAccounts[] = "lock_accounts";
inline constexpr char kDebitUsage[] = "debit_usage";
inline constexpr char kWriteBatch[] = "write_batch";
inline constexpr char kInsertWorkClaim[] = "insert_work_claim";
inline constexpr char kReplaceWorkClaim[] = "replace_work_claim";
inline constexpr char kDeleteWorkClaim[] = "delete_work_claim";
inline constexpr char kMarkAbandonedWorkClaims[] = "mark_abandoned_work_claims";
inline constexpr char kPruneWorkClaims[] = "prune_work_claims";
inline constexpr char kInsertWebhookEvent[] = "insert_webhook_event";
inline constexpr char kDeleteWebhookEvent[] = "delete_webhook_event";
inline constexpr char kPruneWebhookEvents[] = "prune_webhook_events";
}  // namespace statement

// Declares every statement above on `connection` (no round trip: libpqxx prepares
// lazily, so a connection opened before the migrations ran is still fine).
void DeclareStatements(pqxx::connection& connection);

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_CONNECTION_H_
