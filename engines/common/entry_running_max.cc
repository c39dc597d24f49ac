#include "engines/common/entry_running_max.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ledger::engine_common {

void EntryRunningMaxima::NoteLocked(const std::string& account_id,
                                    std::optional<absl::Time> running_max) {
  accounts_[account_id] = running_max;
}

std::vector<std::string> EntryRunningMaxima::Unnoted(const Transaction& transaction) const {
  std::set<std::string> unnoted;
  for (const Entry& entry : transaction.entries) {
    if (!accounts_.contains(entry.account_id)) unnoted.insert(entry.account_id);
  }
  return std::vector<std::string>(unnoted.begin(), unnoted.end());
}

absl::StatusOr<std::vector<absl::Time>> EntryRunningMaxima::Continue(
    const Transaction& transaction) {
  // Checked before anything moves: a failure leaves every account as it was. A
  // transaction's entries share its created_at, so the order of an account's entries
  // within it does not change their maxima; the transactions come in commit order (the
  // storage contract), which is each account's version order.
  for (const Entry& entry : transaction.entries) {
    if (!accounts_.contains(entry.account_id)) {
      return absl::InternalError(absl::StrCat("the running maximum of account ",
                                              entry.account_id, " was not read before its entry"));
    }
  }
  std::vector<absl::Time> maxima;
  maxima.reserve(transaction.entries.size());
  for (const Entry& entry : transaction.entries) {
    std::optional<absl::Time>& latest = accounts_.find(entry.account_id)->second;
    latest = latest.has_value() ? std::max(*latest, transaction.created_at)
                                : transaction.created_at;
    maxima.push_back(*latest);
  }
  return maxima;
}

std::optional<absl::Time> EntryRunningMaxima::Latest(std::string_view account_id) const {
  auto found = accounts_.find(account_id);
  if (found == accounts_.end()) return std::nullopt;
  return found->second;
}

absl::Status AsOfSearchStoppedShort(std::string_view account_id) {
  return absl::DataLossError(absl::StrCat(
      "account ", std::string(account_id),
      ": the as-of search found a version missing between 1 and its latest (run `ledger verify`)"));
}

}  // namespace ledger::engine_common
