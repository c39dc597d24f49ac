#include "engines/postgres/postgres_remembered_rows.h"

namespace ledger::postgres_internal {

std::optional<std::vector<AccountRow>> RememberedRows::Find(
    const std::vector<std::string>& sorted_ids) {
  absl::MutexLock lock(&mutex_);
  if (closed_for_ > 0) {
    --closed_for_;
    return std::nullopt;
  }
  std::vector<AccountRow> found;
  found.reserve(sorted_ids.size());
  for (const std::string& id : sorted_ids) {
    auto row = rows_.find(id);
    if (row == rows_.end()) return std::nullopt;
    found.push_back(row->second);
  }
  return found;
}

void RememberedRows::Remember(const std::vector<AccountRow>& rows) {
  absl::MutexLock lock(&mutex_);
  for (const AccountRow& row : rows) {
    auto [at, inserted] = rows_.insert_or_assign(row.first.id, row);
    if (inserted && rows_.size() > kRememberedRowsMax) {
      rows_.erase(at == rows_.begin() ? std::next(rows_.begin()) : rows_.begin());
    }
  }
}

void RememberedRows::Refused(const std::vector<std::string>& ids) {
  absl::MutexLock lock(&mutex_);
  for (const std::string& id : ids) rows_.erase(id);
  CountGuess(/*refused=*/true);
}

void RememberedRows::Confirmed() {
  absl::MutexLock lock(&mutex_);
  CountGuess(/*refused=*/false);
}

void RememberedRows::CountGuess(bool refused) {
  ++guesses_;
  if (refused) ++refused_;
  if (refused_ > kGateRefusedMax) closed_for_ = kGateClosedFor;
  if (guesses_ >= kGateWindow || closed_for_ > 0) guesses_ = refused_ = 0;
}

}  // namespace ledger::postgres_internal
