// The writes of one storage transaction, buffered until Commit and then sent as one
// statement (postgres_statements.h): a submit's transaction, entries, account updates,
// key record and outbox events cost one round trip. The statement holds only the parts
// (WritePart) the batch has rows for: a transfer's has no metadata, hold or
// dropped-claim part; a hold's placement adds new_holds and the pending amounts.
//
// The MySQL engine buffers the same way (engines/mysql/mysql_write_batch.h) but sends
// multi-row statements, one per table; SQLite writes in-process. Only here do the writes
// travel as arrays (or, for a small batch, inline rows: Shape) in one statement, which
// takes this much code to build and check.
//
//   PostgresWriteBatch batch;
//   LEDGER_RETURN_IF_ERROR(batch.AddTransaction(transaction, updated_accounts, locked));
//   batch.AddKeyRecord(record, /*claim_found_row=*/false);
//   const WriteStatement& statement = batch.Statement();  // its shape: batch.Shape()
//   send statement.name (statement.sql on first use) with batch.Parameters(), each
//   array's elements one by one if statement.shape.inline_rows
//
// Internal to engines/postgres. Not thread-safe: owned by one storage transaction.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_WRITE_BATCH_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_WRITE_BATCH_H_

#include <array>
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
#include "base/check.h"
#include "engines/common/entry_running_max.h"
#include "engines/postgres/postgres_binary_arrays.h"
#include "engines/postgres/postgres_statements.h"
#include "idempotency/key.h"
#include "ledger/account.h"
#include "ledger/engine.h"
#include "ledger/hold.h"
#include "ledger/transaction.h"

namespace ledger::postgres_internal {

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
  // The account's entries_running_max after the entries added so far (what the write
  // stores): the row a committed transaction leaves.
  std::optional<absl::Time> LatestRunningMax(std::string_view id) const {
    return running_maxima_.Latest(id);
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
  // The parts the batch has rows for (and kPendingAmounts when an account's pending
  // amounts differ from what LockAccounts read): its statement's shape.
  WriteParts Parts() const;
  // The statement's shape: Parts(), and for a batch whose parts have at most
  // kInlineRowsMax rows each (a single submit, a batch of up to four transfers), its
  // rows inline (WriteShape). Counted per operation (server_per_submit.sh): one
  // transfer -19%, batches of 2, 3 and 4 transfers -7%, -8%, -6%; of 8 (16 rows a
  // part) +8%, as each row's parameters cost more than an array's elements.
  static constexpr int64_t kInlineRowsMax = 8;
  WriteShape Shape() const;
  // The statement of that shape (WriteStatementOf).
  const WriteStatement& Statement() const;
  // Its parameters in statement order, as binary arrays, each filled by its name
  // (WriteParameter; an absent part's must be empty), and last Expected() as one array
  // of the counted parts present. An inline shape takes each array's elements as
  // parameters of their own (postgres_pipeline.h, PipelinedWrite::rows_inline).
  std::vector<BinaryArray> Parameters() const;
  // The rows each part must touch.
  WriteBatchCounts Expected() const;
  // Compares what the statement reports with Expected(): a key that did not land means
  // a concurrent transaction recorded it, a hold that did not settle that it was
  // settled meanwhile (RetryableError both: the retry replays or re-checks).
  absl::Status CheckApplied(const WriteBatchCounts& applied) const;
  // The same from the counts the statement's error reports (its DETAIL, an array
  // literal such as "{1,2,2,1,1}", one count per counted part of Parts()); Internal
  // when that cannot be read.
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

  // A transaction_metadata row (engine_common::IndexedMetadataMembers), found when the
  // transaction is added.
  struct MetadataRow {
    std::string name;
    std::string value;
    int64_t created_at = 0;
    std::string transaction_id;
  };

  bool PendingAmountsChanged() const;
  // Each sets its part's parameters, empty when the part has no rows.
  void SetTransactionParameters(WriteParameters& parameters) const;
  void SetMetadataParameters(WriteParameters& parameters) const;
  void SetEntryParameters(WriteParameters& parameters) const;
  void SetAccountParameters(WriteParameters& parameters) const;
  // `replaced`: the records over an expired one (kReplacedKeys), else kNewKeys'.
  void SetKeyParameters(WriteParameters& parameters, bool replaced) const;
  void SetEventParameters(WriteParameters& parameters) const;
  void SetUnusedClaimParameters(WriteParameters& parameters) const;
  void SetHoldParameters(WriteParameters& parameters) const;
  void SetSettlementParameters(WriteParameters& parameters) const;
  // Only with the parts they add columns to: kTransactionHoldIds (kSettledHolds) and
  // the pending amounts (kPendingAmounts).
  void SetHoldIdParameters(WriteParameters& parameters) const;
  void SetPendingAmountParameters(WriteParameters& parameters) const;

  // Each transaction's entries' created_at_running_max, as transactions_.
  std::vector<std::vector<absl::Time>> entry_running_maxima_;
  std::vector<Transaction> transactions_;
  std::vector<MetadataRow> metadata_rows_;
  std::map<std::string, AccountUpdate> accounts_;
  // A key's record, and whether it replaces the row the claim found (an expired
  // record) or is new (a plain INSERT).
  struct KeyWrite {
    KeyRecord record;
    bool replaced = false;
  };
  std::map<IdentityKey, KeyWrite> keys_;
  std::vector<OutboxEvent> events_;
  std::set<IdentityKey> unused_claims_;
  engine_common::EntryRunningMaxima running_maxima_;  // kept by Clear
};

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_WRITE_BATCH_H_
