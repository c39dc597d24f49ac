// Operations: what a caller asks the ledger to do, before it becomes entries.
//
//   ledger::Operation op = ledger::Operation::Transfer("alice", "bob", "USD", 2500);
//   op.metadata = {{"order", "A-1001"}};
//
// | kind     | fields                                   | entries                           |
// |----------|------------------------------------------|-----------------------------------|
// | top_up   | from (funding, e.g. issuance), to, amount | from -amount, to +amount          |
// | spend    | from (wallet), to (merchant), amount, fee?| from -amount, to +(amount-fee), fee.to +fee |
// | transfer | from, to, amount                          | from -amount, to +amount          |
// | payout   | from (creator), to (payout clearing), amount | from -amount, to +amount       |
// | reverse  | transaction_id                            | every entry of it, negated        |
// | post     | postings[] {account, asset, amount}       | as given; balanced per asset      |
// | hold     | from, to, amount, expires_at? or timeout? | none: reserves amount (hold.h)    |
// | capture  | hold_id, capture_amount? (default: all)   | from -captured, to +captured      |
// | void     | hold_id                                   | none: releases the hold           |
//
// The operation's business payload (OperationPayload) is what the fingerprint covers;
// the idempotency key and request options are not part of it.
#ifndef LEDGER_LEDGER_OPERATION_H_
#define LEDGER_LEDGER_OPERATION_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ledger/amount.h"
#include "ledger/transaction.h"
#include "nlohmann/json.hpp"

namespace ledger {

inline constexpr size_t kPostingsPerTransactionMax = 64;
inline constexpr size_t kMetadataBytesMax = 4096;  // canonical JSON text
inline constexpr size_t kOperationJsonBytesMax = 64 * 1024;
// The longest hold timeout: a reservation is for days, not years.
inline constexpr absl::Duration kHoldTimeoutMax = absl::Hours(24 * 366);

// One signed movement of an asset in or out of an account.
struct Posting {
  std::string account_id;
  std::string asset;
  Amount amount = 0;
  friend bool operator==(const Posting&, const Posting&) = default;
};

struct Fee {
  std::string to;  // the platform account receiving the fee
  Amount amount = 0;
  friend bool operator==(const Fee&, const Fee&) = default;
};

struct Operation {
  OperationKind kind = OperationKind::kPost;
  std::string asset;             // top_up, spend, transfer, payout, hold
  std::string from;              // top_up, spend, transfer, payout, hold
  std::string to;                // top_up, spend, transfer, payout, hold
  Amount amount = 0;             // top_up, spend, transfer, payout, hold
  std::optional<Fee> fee;        // spend only
  std::string transaction_id;    // reverse only
  std::vector<Posting> postings; // post only
  // hold only, at most one of the two: when the reservation lapses. A timeout counts
  // from the commit (whole seconds, 1 .. kHoldTimeoutMax); expires_at must be after it.
  std::optional<absl::Time> expires_at;
  std::optional<absl::Duration> timeout;
  std::string hold_id;           // capture, void: the hold's id (its transaction's id)
  std::optional<Amount> capture_amount;  // capture: > 0, at most the held amount; none: all
  nlohmann::json metadata = nlohmann::json::object();

  static Operation TopUp(std::string from, std::string to, std::string asset, Amount amount);
  static Operation Spend(std::string from, std::string to, std::string asset, Amount amount,
                         std::optional<Fee> fee = std::nullopt);
  static Operation Transfer(std::string from, std::string to, std::string asset, Amount amount);
  static Operation Payout(std::string from, std::string to, std::string asset, Amount amount);
  static Operation Reverse(std::string transaction_id);
  static Operation Post(std::vector<Posting> postings);
  static Operation Hold(std::string from, std::string to, std::string asset, Amount amount,
                        std::optional<absl::Time> expires_at = std::nullopt);
  static Operation Capture(std::string hold_id, std::optional<Amount> amount = std::nullopt);
  static Operation Void(std::string hold_id);
};

// Checks everything that does not need the database: required fields per kind and no
// others, amounts > 0 (post: non-zero), balanced per asset without overflow, valid ids
// and asset codes, distinct accounts, the named limits. InvalidArgument otherwise.
absl::Status ValidateOperation(const Operation& operation);

// The business payload: amounts as decimal strings, metadata included, nothing about
// the request. Stable field names; the fingerprint is taken over its canonical form.
nlohmann::json OperationPayload(const Operation& operation);

// Parses the JSON form (the payload above; amounts as decimal strings or integers).
// Unknown fields, wrong types, duplicate names and malformed JSON are InvalidArgument.
absl::StatusOr<Operation> ParseOperationJson(std::string_view text);
absl::StatusOr<Operation> OperationFromJson(const nlohmann::json& json);

// The postings an operation makes, for every kind but reverse (ReversalPostings) and
// capture (CapturePostings); none for a hold or a void. Requires ValidateOperation to
// have passed.
std::vector<Posting> PostingsOf(const Operation& operation);

// The postings that undo `original`: each entry negated.
std::vector<Posting> ReversalPostings(const Transaction& original);

// The postings of capturing `amount` of a hold: from -amount, to +amount.
std::vector<Posting> CapturePostings(const HoldTerms& terms, Amount amount);

}  // namespace ledger

#endif  // LEDGER_LEDGER_OPERATION_H_
