#include "ledger/invariants.h"

#include <map>
#include <string>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status.h"

namespace ledger {
namespace {

using AccountsById = std::map<std::string, const Account*, std::less<>>;

absl::Status Violation(std::string_view invariant, std::string_view detail) {
  return InvariantViolationError(absl::StrCat("invariant ", View(invariant),
                                              " violated, nothing written: ", View(detail)));
}

absl::Status CheckZeroSumPerAsset(const std::vector<Entry>& entries) {
  std::map<std::string, absl::int128> sums;  // 128 bits: no partial sum can overflow
  for (const Entry& entry : entries) sums[entry.asset] += entry.amount;
  for (const auto& [asset, sum] : sums) {
    if (sum != 0) {
      return Violation("zero_sum", absl::StrCat("the entries in ", asset, " sum to ",
                                                static_cast<int64_t>(sum), ", not 0"));
    }
  }
  return absl::OkStatus();
}

// Replays the entries over the locked accounts: each must continue its account's
// version and balance, and the written account must be where the last entry left it.
absl::Status CheckAccountsContinue(const AccountsById& locked, const std::vector<Entry>& entries,
                                   const std::vector<Account>& updated) {
  std::map<std::string, Account, std::less<>> running;
  for (const auto& [id, account] : locked) running.emplace(id, *account);
  for (const Entry& entry : entries) {
    auto found = running.find(entry.account_id);
    if (found == running.end()) {
      return Violation("versions_contiguous",
                       absl::StrCat("an entry posts to ", entry.account_id, ", not locked"));
    }
    Account& account = found->second;
    if (entry.asset != account.asset) {
      return Violation("versions_contiguous", absl::StrCat("an entry in ", entry.asset,
                                                           " posts to account ", account.id,
                                                           " of ", account.asset));
    }
    if (entry.account_version != account.version + 1) {
      return Violation("versions_contiguous",
                       absl::StrCat("account ", account.id, " entry has version ",
                                    entry.account_version, " after version ", account.version));
    }
    absl::int128 expected = absl::int128(account.balance) + entry.amount;
    if (absl::int128(entry.balance_after) != expected) {
      return Violation("versions_contiguous",
                       absl::StrCat("account ", account.id, " entry version ",
                                    entry.account_version, " has balance_after ",
                                    entry.balance_after, ", not ", account.balance, " + ",
                                    entry.amount));
    }
    account.version = entry.account_version;
    account.balance = entry.balance_after;
  }
  for (const Account& written : updated) {
    if (written.pending_debits < 0 || written.pending_credits < 0) {
      return Violation("pending_non_negative",
                       absl::StrCat("account ", written.id, " would be written with pending debits ",
                                    written.pending_debits, " and credits ",
                                    written.pending_credits));
    }
    auto found = running.find(written.id);
    if (found == running.end() || found->second.version != written.version ||
        found->second.balance != written.balance) {
      return Violation("versions_contiguous",
                       absl::StrCat("account ", written.id, " would be written at version ",
                                    written.version, " with balance ", written.balance,
                                    ", not where its entries leave it"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckFloors(const AccountsById& locked, const std::vector<Entry>& entries) {
  for (const Entry& entry : entries) {
    auto found = locked.find(entry.account_id);
    LEDGER_CHECK(found != locked.end())
        << "floor of an entry to " << entry.account_id << ", not locked: CheckAccountsContinue runs first";
    const Account& account = *found->second;
    if (entry.balance_after < account.BalanceFloor()) {
      return Violation("balance_floor",
                       absl::StrCat("account ", account.id, " would go to ", entry.balance_after,
                                    " at version ", entry.account_version, ", below its floor of ",
                                    account.BalanceFloor()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckPostingInvariants(const std::vector<Account>& locked,
                                    const std::vector<Entry>& entries,
                                    const std::vector<Account>& updated) {
  AccountsById locked_by_id;
  for (const Account& account : locked) locked_by_id.emplace(account.id, &account);
  LEDGER_RETURN_IF_ERROR(CheckZeroSumPerAsset(entries));
  LEDGER_RETURN_IF_ERROR(CheckAccountsContinue(locked_by_id, entries, updated));
  return CheckFloors(locked_by_id, entries);
}

}  // namespace ledger
