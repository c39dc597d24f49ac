// The writes of one storage transaction, buffered until Commit and then sent as one
// statement (postgres_statements.h): a submit's transaction, entries, account updates,
// key record and outbox events cost one round trip. A batch that places or settles a
// hold, or changes an account's pending amounts, goes as write_batch_with_holds, which
// also writes the holds rows, the hold_ids and the pending amounts; every other batch
// as write_batch, which writes no more than before holds existed.
//
// The MySQL engine buffers the same way (engines/mysql/mysql_write_batch.h) but sends
// multi-row statements, one per table; SQLite writes in-process. Only here do the writes
// travel as arrays in one statement, which takes this much code to build and check.
//
//   PostgresWriteBatch batch;
//   LEDGER_RETURN_IF_ERROR(batch.AddTransaction(transaction, updated_accounts, locked));
//   batch.AddKeyRecord(record, /*claim_found_row=*/false);
//   work.exec_prepared(batch.Statement(), pqxx::prepare::make_dynamic_params(batch.Parameters()));
//
// Internal to engines/postgres. Not thread-safe: owned by one storage transaction.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_WRITE_BATCH_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_WRITE_BATCH_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "engines/common/entry_running_max.h"
#include "engines/postgres/postgres_statements.h"
#include "idempotency/key.h"
#include "ledger/account.h"
#include "ledger/engine.h"
#include "ledger/hold.h"
#include "ledger/transaction.h"

namespace ledger::postgres_internal {

// How many rows each part of the write_batch statement touched (or must touch).
struct WriteBatchCounts {
  int64_t transactions = 0;
  int64_t entries = 0;
  int64_t accounts = 0;
  int64_t keys = 0;
  int64_t events = 0;
  int64_t unused_claims = 0;  // row-mode claimed rows dropped because no item committed them
  int64_t holds = 0;         // holds placed (write_batch_with_holds only)
  int64_t settled_holds = 0; // holds that left 'pending' (write_batch_with_holds only)
  friend bool operator==(const WriteBatchCounts&, const WriteBatchCounts&) = default;
};

// An account as LockAccounts read it under its row lock.
struct LockedAccount {
  int64_t version = 0;
  Amount pending_debits = 0;
  Amount pending_credits = 0;
};

class PostgresWriteBatch {
 public:
  // The account's entries_running_max as LockAccounts read it (nullopt: no entry yet):
  // each entry added continues it (engines/common/entry_running_max.h). Kept by Clear: a
  // unit of work's later batches continue it too.
  void NoteLocked(const std::string& account_id, std::optional<absl::Time> running_max) {
    running_maxima_.NoteLocked(account_id, running_max);
  }
  // The accounts of `transaction`'s entries not noted, sorted: to lock before adding it.
  std::vector<std::string> Unnoted(const Transaction& transaction) const {
    return running_maxima_.Unnoted(transaction);
  }
  // `locked`: each account as LockAccounts read it; the update then only applies if
  // the version is unchanged (checked again in the database). InvalidArgument, nothing
  // added, for an account updated twice or hold fields that do not fit the kind;
  // Internal for an entry of an account not noted (NoteLocked).
  absl::Status AddTransaction(const Transaction& transaction,
                              const std::vector<Account>& updated_accounts,
                              const std::map<std::string, LockedAccount>& locked);
  // A second record of the same identity replaces the first. `claim_found_row`: whether
  // this transaction's claim saw a row under the identity (an expired record); a key
  // without one is written by a plain INSERT.
  void AddKeyRecord(const KeyRecord& record, bool claim_found_row);
  void AddEvent(const OutboxEvent& event);
  // Deletes the row this transaction's claim inserted under `identity` (row mode) at
  // commit: no item committed it, so the key stays unused.
  void DropUnusedClaim(const KeyIdentity& identity);

  bool empty() const;
  // Whether the batch needs write_batch_with_holds: a hold placed or settled, or an
  // account whose pending amounts differ from what LockAccounts read.
  bool WritesHolds() const;
  // The prepared statement to send: statement::kWriteBatch or kWriteBatchWithHolds.
  const char* Statement() const;
  // Its parameters in statement order, as array literals, each filled by its name
  // (WriteParameter): the 39 of write_batch, or the 52 of write_batch_with_holds.
  std::vector<std::string> Parameters() const;
  // The statement checked by the server (kCheckedWriteBatch or kCheckedWriteBatchWithHolds),
  // its SQL, and its parameters: Parameters() and then Expected() as one array.
  const char* CheckedStatement() const;
  const std::string& CheckedStatementSql() const;
  std::vector<std::string> CheckedParameters() const;
  WriteBatchCounts Expected() const;
  // Compares what the statement reports with Expected(): a key that did not land means
  // a concurrent transaction recorded it, a hold that did not settle that it was
  // settled meanwhile (RetryableError both: the retry replays or re-checks).
  absl::Status CheckApplied(const WriteBatchCounts& applied) const;
  // The same from the counts the checked statement's error reports (its DETAIL, an
  // array literal such as "{1,2,2,0,1,0}"); Internal when that cannot be read.
  absl::Status CheckAppliedText(std::string_view applied) const;
  void Clear();

 private:
  using IdentityKey = std::tuple<std::string, std::string, std::string>;
  struct AccountUpdate {
    Amount balance = 0;
    int64_t version = 0;
    Amount pending_debits = 0;
    Amount pending_credits = 0;
    std::optional<LockedAccount> locked;
    std::optional<absl::Time> entries_running_max;  // nullopt: the row keeps its own
    // Not as locked (or not locked by this transaction): only the holds statement
    // stores pending amounts.
    bool PendingChanged() const {
      return !locked.has_value() || pending_debits != locked->pending_debits ||
             pending_credits != locked->pending_credits;
    }
  };

  void SetTransactionParameters(WriteParameters& parameters) const;
  // The transactions' rows of transaction_metadata (IndexedMetadataMembers).
  void SetMetadataParameters(WriteParameters& parameters) const;
  void SetEntryParameters(WriteParameters& parameters) const;
  void SetAccountParameters(WriteParameters& parameters) const;
  void SetKeyParameters(WriteParameters& parameters) const;
  void SetEventParameters(WriteParameters& parameters) const;
  void SetUnusedClaimParameters(WriteParameters& parameters) const;
  // write_batch_with_holds only: kTransactionHoldIds to kSettledHoldSettledBy.
  void SetHoldParameters(WriteParameters& parameters) const;

  // Each transaction's entries' created_at_running_max, as transactions_.
  std::vector<std::vector<absl::Time>> entry_running_maxima_;
  std::vector<Transaction> transactions_;
  bool places_or_settles_holds_ = false;
  std::map<std::string, AccountUpdate> accounts_;
  std::map<IdentityKey, KeyRecord> keys_;
  std::set<IdentityKey> keys_claimed_without_row_;
  std::vector<OutboxEvent> events_;
  std::set<IdentityKey> unused_claims_;
  engine_common::EntryRunningMaxima running_maxima_;  // kept by Clear
};

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_WRITE_BATCH_H_
