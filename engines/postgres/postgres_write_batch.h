// The writes of one storage transaction, buffered until Commit and then sent as the
// single write_batch statement (postgres_connection.cc): a submit's transaction,
// entries, account updates, key record and outbox events cost one round trip.
//
// A PostgreSQL-only role, hence a file the sqlite/ and mysql/ folders do not have:
// SQLite writes in-process and MySQL row by row inside the transaction; only here do
// the writes travel as arrays in one statement, which takes this much code to build
// and check.
//
//   PostgresWriteBatch batch;
//   batch.AddTransaction(transaction, updated_accounts, locked_versions);
//   batch.AddKeyRecord(record);
//   work.exec_prepared("write_batch", pqxx::prepare::make_dynamic_params(batch.Parameters()));
//
// Internal to engines/postgres. Not thread-safe: owned by one storage transaction.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_WRITE_BATCH_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_WRITE_BATCH_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "idempotency/key.h"
#include "ledger/account.h"
#include "ledger/engine.h"
#include "ledger/transaction.h"

namespace ledger::postgres_internal {

// How many rows each part of the write_batch statement touched (or must touch).
struct WriteBatchCounts {
  int64_t transactions = 0;
  int64_t entries = 0;
  int64_t accounts = 0;
  int64_t keys = 0;
  int64_t events = 0;
  int64_t placeholders = 0;  // row-mode placeholders dropped because no record filled them
  friend bool operator==(const WriteBatchCounts&, const WriteBatchCounts&) = default;
};

class PostgresWriteBatch {
 public:
  // `locked_versions`: each account's version as LockAccounts read it; the update then
  // only applies if the version is unchanged (checked again in the database).
  absl::Status AddTransaction(const Transaction& transaction,
                              const std::vector<Account>& updated_accounts,
                              const std::map<std::string, int64_t>& locked_versions);
  // A second record of the same identity replaces the first.
  void AddKeyRecord(const KeyRecord& record);
  void AddEvent(const OutboxEvent& event);
  // Deletes this transaction's own 'pending' placeholder of `identity` at commit.
  void DropPlaceholder(const KeyIdentity& identity);

  bool empty() const;
  // The 32 parameters of write_batch, in statement order, as array literals.
  std::vector<std::string> Parameters() const;
  WriteBatchCounts Expected() const;
  // Compares what the statement reports with Expected(): a key that did not land means
  // a concurrent transaction recorded it (RetryableError: the retry replays it).
  absl::Status CheckApplied(const WriteBatchCounts& applied) const;
  void Clear();

 private:
  using IdentityKey = std::tuple<std::string, std::string, std::string>;
  struct AccountUpdate {
    Amount balance = 0;
    int64_t version = 0;
    std::optional<int64_t> locked_version;
  };

  std::vector<std::string> TransactionParameters() const;
  std::vector<std::string> EntryParameters() const;
  std::vector<std::string> AccountParameters() const;
  std::vector<std::string> KeyParameters() const;
  std::vector<std::string> EventParameters() const;
  std::vector<std::string> PlaceholderParameters() const;

  std::vector<Transaction> transactions_;
  std::map<std::string, AccountUpdate> accounts_;
  std::map<IdentityKey, KeyRecord> keys_;
  std::vector<OutboxEvent> events_;
  std::set<IdentityKey> placeholders_;
};

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_WRITE_BATCH_H_
