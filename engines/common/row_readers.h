// Rows -> structs, once for every SQL engine. Each engine selects the same columns in
// the same order (its *_rows.h lists them) and adapts its driver's row to the small
// interface below; these readers then decide what a row means, so a corrupt row gets
// the same answer on every engine: DataLoss naming the engine and the table.
//
//   struct SqliteColumns {            // what a reader needs of a row
//     std::string_view engine() const;                  // "sqlite", for messages
//     std::string Text(int column) const;
//     std::optional<std::string> OptionalText(int column) const;  // NULL: nullopt
//     int64_t Int(int column) const;
//     bool Bool(int column) const;
//     absl::Time Time(int column) const;                // integer microseconds
//     // Only for the hold readers: a nullable time (NULL: nullopt).
//     std::optional<absl::Time> OptionalTime(int column) const;
//   };
//   Account account = engine_common::ReadAccount(SqliteColumns{query});
//
// Internal to engines/. Thread-safe: pure functions of the row.
#ifndef LEDGER_ENGINES_COMMON_ROW_READERS_H_
#define LEDGER_ENGINES_COMMON_ROW_READERS_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "idempotency/key.h"
#include "idempotency/stores.h"
#include "ledger/account.h"
#include "ledger/engine.h"
#include "ledger/hold.h"
#include "ledger/operation.h"
#include "ledger/transaction.h"

namespace ledger::engine_common {

// The key table's row states: a placeholder lives only inside the transaction that
// claims the key; a committed row names its transaction.
inline constexpr char kKeyStatePending[] = "pending";
inline constexpr char kKeyStateCommitted[] = "committed";

// DataLoss: "<engine>: unreadable <table> row: <cause>".
absl::Status CorruptRow(std::string_view engine, std::string_view table,
                        const absl::Status& cause);

// "tenant/actor" (Scope::Encoded) back to a Scope; neither part may contain '/'
// (ValidateScope), so the first '/' splits them. DataLoss without one.
absl::StatusOr<Scope> DecodeScope(std::string_view encoded);

// id, asset, allow_negative, overdraft_limit, closed, balance, version, created_at,
// pending_debits, pending_credits
template <typename Row>
Account ReadAccount(const Row& row) {
  Account account;
  account.id = row.Text(0);
  account.asset = row.Text(1);
  account.allow_negative = row.Bool(2);
  account.overdraft_limit = row.Int(3);
  account.closed = row.Bool(4);
  account.balance = row.Int(5);
  account.version = row.Int(6);
  account.created_at = row.Time(7);
  account.pending_debits = row.Int(8);
  account.pending_credits = row.Int(9);
  return account;
}

// From `first`: account_id, asset, amount, balance_after, account_version
template <typename Row>
Entry ReadEntry(const Row& row, int first = 0) {
  Entry entry;
  entry.account_id = row.Text(first);
  entry.asset = row.Text(first + 1);
  entry.amount = row.Int(first + 2);
  entry.balance_after = row.Int(first + 3);
  entry.account_version = row.Int(first + 4);
  return entry;
}

// id, kind, created_at, metadata, reversal_of, fingerprint (the entries live apart)
template <typename Row>
absl::StatusOr<Transaction> ReadTransactionHeader(const Row& row) {
  Transaction transaction;
  transaction.id = row.Text(0);
  absl::StatusOr<OperationKind> kind = ParseOperationKind(row.Text(1));
  if (!kind.ok()) return CorruptRow(row.engine(), "transactions", kind.status());
  transaction.kind = *kind;
  transaction.created_at = row.Time(2);
  transaction.metadata = row.Text(3);
  transaction.reversal_of = row.OptionalText(4);
  transaction.fingerprint = row.Text(5);
  return transaction;
}

// From `first`: from_account, to_account, asset, amount, expires_at (NULL: none)
template <typename Row>
HoldTerms ReadHoldTerms(const Row& row, int first) {
  HoldTerms terms;
  terms.from = row.Text(first);
  terms.to = row.Text(first + 1);
  terms.asset = row.Text(first + 2);
  terms.amount = row.Int(first + 3);
  terms.expires_at = row.OptionalTime(first + 4);
  return terms;
}

// ReadTransactionHeader's six columns, then hold_id and the hold's from_account,
// to_account, asset, amount, expires_at (a LEFT JOIN of the holds row with the
// transaction's id: NULL unless it is a hold). DataLoss when a hold comes without its
// holds row or a capture, void or expire without its hold_id.
template <typename Row>
absl::StatusOr<Transaction> ReadTransactionHeaderWithHold(const Row& row) {
  absl::StatusOr<Transaction> transaction = ReadTransactionHeader(row);
  if (!transaction.ok()) return transaction;
  transaction->hold_id = row.OptionalText(6);
  if (row.OptionalText(7).has_value()) transaction->hold = ReadHoldTerms(row, 7);
  const OperationKind kind = transaction->kind;
  if (kind == OperationKind::kHold && !transaction->hold.has_value()) {
    return CorruptRow(row.engine(), "transactions",
                      absl::InternalError("a hold without its holds row"));
  }
  const bool settles = kind == OperationKind::kCapture || kind == OperationKind::kVoid ||
                       kind == OperationKind::kExpire;
  if (settles != transaction->hold_id.has_value()) {
    return CorruptRow(row.engine(), "transactions",
                      absl::InternalError(settles ? "a settlement without its hold_id"
                                                  : "a hold_id on a transaction that settles none"));
  }
  return transaction;
}

// One row of a transaction joined with its hold and its entries (one row per entry: the
// header's columns as ReadTransactionHeaderWithHold reads them, the entry's from
// `first_entry`, NULL for a transaction without entries), added to `transactions`, the
// rows in transaction order: a new transaction when the id changes, then its entry.
// The error of a header that cannot be read.
template <typename Row>
absl::Status AddTransactionRow(const Row& row, int first_entry,
                               std::vector<Transaction>& transactions) {
  if (transactions.empty() || transactions.back().id != row.Text(0)) {
    absl::StatusOr<Transaction> header = ReadTransactionHeaderWithHold(row);
    if (!header.ok()) return header.status();
    transactions.push_back(*std::move(header));
  }
  if (!row.IsNull(first_entry)) transactions.back().entries.push_back(ReadEntry(row, first_entry));
  return absl::OkStatus();
}

// id, from_account, to_account, asset, amount, expires_at, created_at, status, settled_by
template <typename Row>
absl::StatusOr<Hold> ReadHold(const Row& row) {
  absl::StatusOr<HoldStatus> status = ParseHoldStatus(row.Text(7));
  if (!status.ok()) return CorruptRow(row.engine(), "holds", status.status());
  Hold hold;
  hold.id = row.Text(0);
  hold.terms = ReadHoldTerms(row, 1);
  hold.created_at = row.Time(6);
  hold.status = *status;
  hold.settled_by = row.OptionalText(8);
  return hold;
}

// From `first`: namespace, scope, key
template <typename Row>
absl::StatusOr<KeyIdentity> ReadIdentity(const Row& row, std::string_view table, int first = 0) {
  absl::StatusOr<Scope> scope = DecodeScope(row.Text(first + 1));
  if (!scope.ok()) return CorruptRow(row.engine(), table, scope.status());
  return KeyIdentity{
      .key_namespace = row.Text(first), .scope = *std::move(scope), .key = row.Text(first + 2)};
}

// namespace, scope, key, fingerprint, state, transaction_id, created_at, expires_at:
// the committed record, or nullopt for a placeholder.
template <typename Row>
absl::StatusOr<std::optional<KeyRecord>> ReadKeyRow(const Row& row) {
  const std::string state = row.Text(4);
  if (state == kKeyStatePending) return std::nullopt;
  if (state != kKeyStateCommitted) {
    return CorruptRow(row.engine(), "idempotency_keys",
                      absl::InternalError("unknown state " + state));
  }
  std::optional<std::string> transaction_id = row.OptionalText(5);
  if (!transaction_id.has_value()) {
    return CorruptRow(row.engine(), "idempotency_keys",
                      absl::InternalError("committed without a transaction"));
  }
  absl::StatusOr<KeyIdentity> identity = ReadIdentity(row, "idempotency_keys");
  if (!identity.ok()) return identity.status();
  return KeyRecord{.identity = *std::move(identity),
                   .fingerprint = row.Text(3),
                   .transaction_id = *std::move(transaction_id),
                   .created_at = row.Time(6),
                   .expires_at = row.Time(7)};
}

// namespace, scope, key, fingerprint, state, owner, attempt, lease_expires_at, result,
// created_at, updated_at, expires_at
template <typename Row>
absl::StatusOr<WorkClaim> ReadWorkClaim(const Row& row) {
  absl::StatusOr<KeyIdentity> identity = ReadIdentity(row, "work_claims");
  if (!identity.ok()) return identity.status();
  absl::StatusOr<WorkState> state = ParseWorkState(row.Text(4));
  if (!state.ok()) return CorruptRow(row.engine(), "work_claims", state.status());
  WorkClaim claim;
  claim.identity = *std::move(identity);
  claim.fingerprint = row.Text(3);
  claim.state = *state;
  claim.owner = row.Text(5);
  claim.attempt = row.Int(6);
  claim.lease_expires_at = row.Time(7);
  claim.result = row.Text(8);
  claim.created_at = row.Time(9);
  claim.updated_at = row.Time(10);
  claim.expires_at = row.Time(11);
  return claim;
}

// sequence, transaction_id, type, payload, created_at
template <typename Row>
OutboxEvent ReadOutboxEvent(const Row& row) {
  OutboxEvent event;
  event.sequence = row.Int(0);
  event.transaction_id = row.Text(1);
  event.type = row.Text(2);
  event.payload = row.Text(3);
  event.created_at = row.Time(4);
  return event;
}

}  // namespace ledger::engine_common

#endif  // LEDGER_ENGINES_COMMON_ROW_READERS_H_
