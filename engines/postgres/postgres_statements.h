// The SQL of the PostgreSQL engine: named prepared statements, declared on every new
// connection (libpqxx registers each with the server on its first use), and the
// multi-statement claim scripts, which carry BEGIN, the lock timeout, the claim and
// the read of the key row in ONE round trip.
//
// Internal to engines/postgres. Thread-safe: constants and pure functions.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_STATEMENTS_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_STATEMENTS_H_

#include <string>

#include "absl/time/time.h"
#include "idempotency/key.h"
#include "pqxx/connection"

namespace ledger::postgres_internal {

// Names of the prepared statements.
namespace statement {
inline constexpr char kPutAsset[] = "put_asset";
inline constexpr char kSelectAsset[] = "select_asset";
inline constexpr char kListAssets[] = "list_assets";
inline constexpr char kInsertAccount[] = "insert_account";
inline constexpr char kSelectAccount[] = "select_account";
inline constexpr char kListAccounts[] = "list_accounts";
inline constexpr char kSetAccountClosed[] = "set_account_closed";
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

// The lock_timeout that bounds a claim's wait: at least 1 ms (0 would mean "wait
// forever" to PostgreSQL), at most the server's maximum.
std::string ClaimLockTimeout(absl::Duration wait_max);

// The parts of a claim script; literals are already quoted for SQL (connection.quote).
struct ClaimScriptParts {
  bool begin = true;                 // the transaction's BEGIN rides along
  std::string claim_lock_timeout;    // quoted, e.g. '250ms'
  std::string default_lock_timeout;  // quoted: the session's own value, restored after
  std::string encoded_identity;      // quoted "namespace|tenant/actor|key"
  std::string key_namespace;         // quoted
  std::string scope;                 // quoted "tenant/actor"
  std::string key;                   // quoted
};

// Advisory mode: takes pg_advisory_xact_lock on the identity's hash, then reads the
// key row in a new statement, whose READ COMMITTED snapshot is taken after the lock
// was granted and so sees whatever the previous holder committed.
std::string AdvisoryClaimScript(const ClaimScriptParts& parts);

// Row mode: inserts a 'pending' placeholder unless the row exists (waiting for a
// concurrent inserter of the same key to finish), locks the row FOR UPDATE (waiting
// for a concurrent replacer), restores the lock timeout, then reads the row.
std::string RowClaimScript(const ClaimScriptParts& parts);

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_STATEMENTS_H_
