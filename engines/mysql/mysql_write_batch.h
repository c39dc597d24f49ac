// The writes of one MySQL storage transaction, buffered from WriteTransaction,
// RecordKey and AppendEvent and sent before the transaction's next statement (a read or
// COMMIT), however many items the batch has: the key rows first, as at most four
// multi-row statements (an INSERT ... ON DUPLICATE KEY UPDATE of the key records over
// the expired records the claims locked, rewrites, one DELETE of the claimed rows no
// item committed, lone records), then everything else as one CALL of the write
// procedure (schema/mysql/0008_write_procedure.sql): the transactions, their metadata
// members (transaction_metadata), the holds placed and settled, the entries (each with
// its created_at_running_max, engines/common/entry_running_max.h), the accounts (each at
// its final values, entries_running_max too, where the row still holds what its lock
// read: the lock guard) and the events (in order), from one JSON array per table. Sent with
// End::kCommit, that CALL commits at its end: a single submit's writes and COMMIT are
// one round trip. The arrays are split at about kStatementBytesMax bytes in all (under
// the server's max_allowed_packet) into CALLs of which only the last commits; the key
// rows' statements at kRowsPerStatementMax rows and as many bytes.
//
//   MysqlWriteBatch batch;
//   LEDGER_RETURN_IF_ERROR(batch.AddTransaction(transaction, updated_accounts));
//   batch.ReplaceKeyRow(record);           // the expired record the claim locked
//   batch.AddEvent(event);
//   LEDGER_RETURN_IF_ERROR(batch.Send(connection, MysqlWriteBatch::End::kCommit));
//
// Errors keep the write phase (ErrorContext::kWrite; the committing CALL's
// kWriteAndCommit: in doubt unless a statement's own check failed it) whenever they
// are sent: a unique violation is retryable, a hold no longer pending is
// HoldNotPendingError.
//
// Internal to engines/mysql. Not thread-safe: owned by one storage transaction.
#ifndef LEDGER_ENGINES_MYSQL_MYSQL_WRITE_BATCH_H_
#define LEDGER_ENGINES_MYSQL_MYSQL_WRITE_BATCH_H_

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engines/common/entry_running_max.h"
#include "engines/mysql/mysql_connection.h"
#include "idempotency/key.h"
#include "ledger/account.h"
#include "ledger/engine.h"
#include "ledger/transaction.h"

namespace ledger::mysql_internal {

// Rows one multi-row statement carries at most: 500 entries are 4,000 parameters, far
// under the prepared protocol's 65,535.
inline constexpr size_t kRowsPerStatementMax = 500;
// Parameter bytes after which a statement takes no further row (a row is never split):
// a quarter of MariaDB's smallest default max_allowed_packet (16 MiB), so metadata-heavy
// rows stay well under it.
inline constexpr size_t kStatementBytesMax = 4 << 20;
// The write procedure's row arrays (schema/mysql/0008_write_procedure.sql): transactions,
// metadata members, holds placed, holds settled, entries, accounts, events.
inline constexpr size_t kWriteTables = 7;

// [begin, end) runs of rows, in order, each at most kRowsPerStatementMax rows and (but
// for a single row) kStatementBytesMax bytes. `row_bytes`: each row's parameter size.
struct RowRange {
  size_t begin = 0;
  size_t end = 0;
};
std::vector<RowRange> SplitIntoStatements(const std::vector<size_t>& row_bytes);

// A hold's row as read after the write procedure refused a settlement (45002).
struct HoldRowState {
  std::string status;      // "pending", "captured", ...
  std::string settled_by;  // the settling transaction's id; empty while NULL
};
// The hold whose settlement failed, of `settlements` (hold id, settling transaction id,
// in the batch's order): the first whose row is gone or was settled by another
// transaction. A hold still pending is skipped: its settlement was in a CALL not sent
// yet (a batch split by size). When none is found, the first settlement's.
std::string_view UnsettledHoldOf(
    const std::vector<std::pair<std::string, std::string>>& settlements,
    const std::map<std::string, HoldRowState, std::less<>>& rows);

class MysqlWriteBatch {
 public:
  // InvalidArgument, nothing buffered, for hold fields that do not fit the kind, a
  // settlement of an unknown kind, or an account listed twice; Internal for an entry or
  // an updated account not noted (NoteLocked).
  absl::Status AddTransaction(const Transaction& transaction,
                              const std::vector<Account>& updated_accounts);
  // A record whose row this transaction holds: the expired record its claim locked (or a
  // placeholder of an earlier release). The row is replaced; a row gone or still live
  // fails the batch.
  void ReplaceKeyRow(const KeyRecord& record);
  // A record other than the one this transaction's claim inserted (`claimed`): a later
  // item of the same key in the batch, or a later submit of a unit of work, commits it.
  // The claimed row is updated, alone (rare).
  void RewriteClaimedKeyRow(const KeyRecord& claimed, const KeyRecord& record);
  // A record with no row of this transaction's (the claim was bypassed): sent alone as
  // before, UPDATE of a placeholder or an expired record, else INSERT, so a live
  // committed record is never overwritten (the INSERT fails as a unique violation).
  void WriteKeyRow(const KeyRecord& record);
  // The record this transaction's claim inserted that no item committed: deleted, so the
  // key stays unused.
  void DropClaimedKeyRow(const KeyRecord& claimed);
  void AddEvent(const OutboxEvent& event);
  // The account as LockAccounts read it, and its entries_running_max (nullopt: no entry
  // yet): each entry added continues it (engines/common/entry_running_max.h), and the
  // account's UPDATE requires the row to hold these values still (the lock guard, at
  // WriteCallArrays). Kept when a Send empties the batch, at the values it wrote: the
  // account stays locked until the transaction ends.
  void NoteLocked(const Account& account, std::optional<absl::Time> running_max);
  // The accounts `transaction` writes (its entries' and `updated_accounts`) not noted,
  // sorted and distinct: to lock before adding it.
  std::vector<std::string> Unnoted(const Transaction& transaction,
                                   const std::vector<Account>& updated_accounts) const;

  bool empty() const;
  // What Send leaves the transaction: open, or committed by its last statement (a
  // COMMIT alone when nothing is buffered).
  enum class End { kOpen, kCommit };
  // Sends every buffered write, then empties the batch. On failure the batch is kept
  // (a rerun on a fresh connection sends it again) and the transaction must roll back.
  absl::Status Send(MysqlConnection& connection, End end = End::kOpen);

 private:
  struct AccountValues {
    Amount balance = 0;
    int64_t version = 0;
    Amount pending_debits = 0;
    Amount pending_credits = 0;
    std::optional<absl::Time> entries_running_max;  // nullopt: the row keeps its own
  };
  // What the lock guard compares: every column the account's UPDATE overwrites with an
  // absolute value (entries_running_max follows the entries, guarded by their key).
  struct LockedValues {
    Amount balance = 0;
    int64_t version = 0;
    Amount pending_debits = 0;
    Amount pending_credits = 0;
  };
  struct Settlement {
    std::string hold_id;
    std::string status;
    std::string transaction_id;
  };

  // The write procedure's arrays of everything buffered but the key rows, a set per
  // CALL (an empty string: no rows, NULL).
  std::vector<std::array<std::string, kWriteTables>> WriteCallArrays() const;
  // The hold of `settlements` that this batch did not settle (the procedure's count of
  // them fell short): UnsettledHoldOf their rows.
  absl::Status FindUnsettledHold(MysqlConnection& connection,
                                 const std::vector<Settlement>& settlements) const;
  absl::Status SendKeyRows(MysqlConnection& connection) const;
  absl::Status SendReplacedKeyRows(MysqlConnection& connection) const;
  absl::Status SendRewrittenKeyRows(MysqlConnection& connection) const;
  absl::Status SendDroppedKeyRows(MysqlConnection& connection) const;
  absl::Status SendLoneKeyRow(MysqlConnection& connection, const KeyRecord& record) const;

  std::vector<Transaction> transactions_;
  // Each transaction's entries' created_at_running_max, as transactions_.
  std::vector<std::vector<absl::Time>> entry_running_maxima_;
  std::vector<Settlement> settlements_;
  std::map<std::string, AccountValues> accounts_;  // the final values, by id
  std::vector<KeyRecord> replaced_keys_;
  std::vector<KeyRecord> lone_keys_;
  std::vector<std::pair<KeyRecord, KeyRecord>> rewritten_keys_;  // claimed, then committed
  std::vector<KeyRecord> dropped_keys_;                           // as claimed
  std::vector<OutboxEvent> events_;
  // Both kept when a Send empties the batch.
  engine_common::EntryRunningMaxima running_maxima_;
  std::map<std::string, LockedValues, std::less<>> locked_;  // by id, as the row holds them
};

}  // namespace ledger::mysql_internal

#endif  // LEDGER_ENGINES_MYSQL_MYSQL_WRITE_BATCH_H_
