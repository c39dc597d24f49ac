// Whole-database reads through the Engine interface (paged), for comparing a database
// with the model, and the invariant checks both runners share.
//
// Thread-safe as far as the engine is: the functions keep no state.
#ifndef LEDGER_TESTS_PROPERTY_DATABASE_READS_H_
#define LEDGER_TESTS_PROPERTY_DATABASE_READS_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ledger/engine.h"
#include "ledger/ledger.h"
#include "tests/property/workload.h"

namespace ledger::property {

absl::StatusOr<std::vector<Account>> ReadAllAccounts(Engine& engine);
absl::StatusOr<std::vector<Transaction>> ReadAllTransactions(Engine& engine);
absl::StatusOr<std::vector<KeyRecord>> ReadAllKeyRecords(Engine& engine);
absl::StatusOr<std::vector<OutboxEvent>> ReadAllEvents(Engine& engine);
// Every hold as stored (Engine::ListHolds over every account), by id.
absl::StatusOr<std::vector<Hold>> ReadAllHolds(Engine& engine);
// Every account as the ledger shows it now (Ledger::ListAccounts: lapsed holds released).
absl::StatusOr<std::vector<Account>> ReadAllAccountsNow(Ledger& ledger);

// The committed key record under (namespace, scope, key), if any.
absl::StatusOr<std::optional<KeyRecord>> FindKeyRecord(Engine& engine, const KeyIdentity& identity);

// Defines the universe's assets, opens its accounts and closes those closed at setup;
// returns the accounts as opened (before the closes).
absl::StatusOr<std::vector<Account>> OpenUniverse(Ledger& ledger, const Universe& universe);

// Per asset the balances sum to zero and no account is below its floor. Empty when
// they hold, else what broke.
std::string CheckConservationAndSolvency(const std::vector<Account>& accounts);

// Every transaction is named by exactly one key record and every key record names an
// existing transaction, except expire transactions (the ledger's own, written without a
// key); one outbox event per transaction. Empty when they hold.
std::string CheckOneTransactionPerKey(const std::vector<Transaction>& transactions,
                                      const std::vector<KeyRecord>& keys,
                                      const std::vector<OutboxEvent>& events);

// VerifyLedger; its violations as text (empty when clean).
std::string RunVerify(Engine& engine);

// Calls `read` up to `attempts` times until it succeeds: after a killed session or a
// server restart a pool may hand out a dead connection first.
template <typename T>
absl::StatusOr<T> Retrying(int attempts, const std::function<absl::StatusOr<T>()>& read) {
  absl::StatusOr<T> result = read();
  for (int attempt = 1; attempt < attempts && !result.ok(); ++attempt) result = read();
  return result;
}

}  // namespace ledger::property

#endif  // LEDGER_TESTS_PROPERTY_DATABASE_READS_H_
