// Assets and accounts.
//
// An asset is a code with a scale (USD/2, CREDITS/0): amounts are integers of minor
// units, the scale is only for display. An account holds one asset. User accounts may
// not go below zero, or below minus their overdraft limit; system accounts (issuance,
// the outside world) carry allow_negative. A closed account takes no new postings.
//
// Holds (ledger/hold.h) reserve money without posting it: an account's pending debits
// are what its pending holds reserve out of it, its pending credits what they reserve
// for it. Its available balance (balance - pending debits) is what every solvency and
// overdraft check uses; pending credits are not spendable.
#ifndef LEDGER_LEDGER_ACCOUNT_H_
#define LEDGER_LEDGER_ACCOUNT_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "ledger/amount.h"

namespace ledger {

inline constexpr size_t kAssetCodeBytesMax = 16;
inline constexpr int kAssetScaleMax = 18;
inline constexpr size_t kAccountIdBytesMax = 128;

struct Asset {
  std::string code;  // [A-Z0-9_], 1..16 bytes
  int scale = 0;     // 0..18 decimal places of the major unit
  friend bool operator==(const Asset&, const Asset&) = default;
};

// What the caller decides when opening an account.
struct AccountSpec {
  std::string id;  // printable ASCII without spaces, 1..128 bytes
  std::string asset;
  bool allow_negative = false;  // system accounts: no lower bound at all
  Amount overdraft_limit = 0;   // >= 0; the balance may go down to -overdraft_limit
};

struct Account {
  std::string id;
  std::string asset;
  bool allow_negative = false;
  Amount overdraft_limit = 0;
  bool closed = false;
  Amount balance = 0;    // posted: the sum of the account's entries
  int64_t version = 0;  // number of entries ever posted to the account
  absl::Time created_at;
  Amount pending_debits = 0;   // >= 0: reserved out of the account by pending holds
  Amount pending_credits = 0;  // >= 0: reserved for the account by pending holds

  // The lowest balance a posting may leave behind.
  Amount BalanceFloor() const {
    return allow_negative ? std::numeric_limits<Amount>::min() : -overdraft_limit;
  }
  // balance - pending_debits, saturating: what may still be spent down to BalanceFloor.
  // Saturates both ways, so even a corrupt negative pending amount read from storage
  // (which verify reports) cannot overflow.
  Amount Available() const {
    Amount available = 0;
    if (__builtin_sub_overflow(balance, pending_debits, &available)) {
      return pending_debits > 0 ? std::numeric_limits<Amount>::min()
                                : std::numeric_limits<Amount>::max();
    }
    return available;
  }
  friend bool operator==(const Account&, const Account&) = default;
};

absl::Status ValidateAsset(const Asset& asset);
absl::Status ValidateAssetCode(std::string_view code);
absl::Status ValidateAccountId(std::string_view id);
absl::Status ValidateAccountSpec(const AccountSpec& spec);

}  // namespace ledger

#endif  // LEDGER_LEDGER_ACCOUNT_H_
