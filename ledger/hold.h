// Holds (two-phase transfers): a hold reserves an amount from one account for another
// without posting it; a capture posts all or part of it and releases the rest; a void
// releases it; at expires_at the reservation lapses and a capture is no longer possible.
//
// A hold is the transaction of a `hold` operation: its id is the hold's id, and the
// transaction carries the hold's terms. The capture, void or expiry that settles it is a
// transaction naming it in hold_id; a hold is settled at most once (the schema keeps
// hold_id unique, and every settlement locks both of the hold's accounts first).
//
// While pending, the amount counts in the source account's pending debits (so its
// available balance, which every solvency check uses, drops at once) and in the target
// account's pending credits (not spendable). A lapsed hold (expires_at <= now) no longer
// counts anywhere, whether or not the sweeper (Ledger::ExpireHolds) has recorded its
// expiry yet: engines store pending amounts as of the last write, and the ledger
// subtracts the lapsed holds' amounts when it reads or checks an account.
#ifndef LEDGER_LEDGER_HOLD_H_
#define LEDGER_LEDGER_HOLD_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ledger/amount.h"

namespace ledger {

enum class HoldStatus { kPending, kCaptured, kVoided, kExpired };

// "pending", "captured", "voided", "expired".
std::string_view HoldStatusName(HoldStatus status);
absl::StatusOr<HoldStatus> ParseHoldStatus(std::string_view name);

// What a hold reserves. Immutable once the hold is placed.
struct HoldTerms {
  std::string from;  // the account whose available balance the hold reduces
  std::string to;    // the account a capture credits
  std::string asset;
  Amount amount = 0;  // > 0
  std::optional<absl::Time> expires_at;  // none: the hold waits for a capture or a void
  friend bool operator==(const HoldTerms&, const HoldTerms&) = default;
};

struct Hold {
  std::string id;  // the id of the hold's transaction
  HoldTerms terms;
  absl::Time created_at;
  HoldStatus status = HoldStatus::kPending;
  // The capture, void or expire transaction that settled it; none while pending.
  std::optional<std::string> settled_by;

  // Pending and not past its expiry at `now`: still reserving its amount.
  bool ReservesAt(absl::Time now) const {
    return status == HoldStatus::kPending && !LapsedAt(now);
  }
  // Pending, but past its expiry at `now`: released, its expiry not yet recorded.
  bool LapsedAt(absl::Time now) const {
    return status == HoldStatus::kPending && terms.expires_at.has_value() &&
           *terms.expires_at <= now;
  }
  friend bool operator==(const Hold&, const Hold&) = default;
};

}  // namespace ledger

#endif  // LEDGER_LEDGER_HOLD_H_
