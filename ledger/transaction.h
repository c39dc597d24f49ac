// Transactions and their entries: the append-only record of every committed
// operation. An entry moves one amount of one asset in or out of one account and
// carries the account's balance and version right after it, so history and as-of
// queries need no recomputation. Per transaction and asset, entries sum to zero.
#ifndef LEDGER_LEDGER_TRANSACTION_H_
#define LEDGER_LEDGER_TRANSACTION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ledger/amount.h"
#include "ledger/hold.h"

namespace ledger {

// The kind of an operation, and of the transaction it commits. kExpire is the one kind no
// caller submits: the ledger writes it when it records a lapsed hold's expiry.
enum class OperationKind {
  kTopUp, kSpend, kTransfer, kPayout, kReverse, kPost, kHold, kCapture, kVoid, kExpire
};

// "top_up", "spend", "transfer", "payout", "reverse", "post", "hold", "capture", "void",
// "expire": the operation's name in JSON and the idempotency namespace of its keys.
std::string_view OperationKindName(OperationKind kind);
absl::StatusOr<OperationKind> ParseOperationKind(std::string_view name);

struct Entry {
  std::string account_id;
  std::string asset;
  Amount amount = 0;  // < 0 leaves the account (debit), > 0 enters it (credit)
  Amount balance_after = 0;
  int64_t account_version = 0;  // the account's version after this entry; 1 for its first
  friend bool operator==(const Entry&, const Entry&) = default;
};

struct Transaction {
  std::string id;  // time-ordered UUIDv7 text, unique forever
  OperationKind kind = OperationKind::kPost;
  absl::Time created_at;
  std::string metadata = "{}";  // canonical JSON object from the operation
  std::optional<std::string> reversal_of;
  std::string fingerprint;  // of the operation that produced it; "" for an expire
  std::vector<Entry> entries;  // none for a hold, a void or an expire
  // A hold's terms, as placed (expires_at resolved from a timeout). Only on a hold.
  std::optional<HoldTerms> hold;
  // The hold a capture, void or expire settles. Unique: a hold is settled once.
  std::optional<std::string> hold_id;
  friend bool operator==(const Transaction&, const Transaction&) = default;
};

// RFC 3339 in UTC with microseconds: "2026-01-01T00:00:00.000000Z".
std::string FormatTimestamp(absl::Time t);

// A new time-ordered transaction id (UUIDv7: 48-bit milliseconds, 74 random bits).
std::string NewTransactionId(absl::Time now);

}  // namespace ledger

#endif  // LEDGER_LEDGER_TRANSACTION_H_
