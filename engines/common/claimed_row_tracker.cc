#include "engines/common/claimed_row_tracker.h"

#include <utility>

#include "base/check.h"

namespace ledger::engine_common {

void ClaimedRowTracker::Claimed(const KeyRecord& record) {
  // The claimed row is found again by its transaction id (rewrite, drop): without one
  // an UPDATE or DELETE would miss it.
  LEDGER_CHECK(!record.transaction_id.empty())
      << "a claimed row without a transaction id: " << record.identity.Encoded();
  std::string encoded = record.identity.Encoded();
  if (auto earlier = unrecorded_.find(encoded); earlier != unrecorded_.end()) {
    LEDGER_CHECK(earlier->second.identity == record.identity)
        << "two identities claimed under one encoded identity: " << encoded;
    LEDGER_CHECK(earlier->second.transaction_id == record.transaction_id)
        << "a second claimed row under key " << encoded << ": transaction "
        << record.transaction_id << " over the unrecorded " << earlier->second.transaction_id;
  }
  unrecorded_.insert_or_assign(std::move(encoded), record);
}

void ClaimedRowTracker::ClaimedWithoutRow(const KeyIdentity& identity) {
  std::string encoded = identity.Encoded();
  LEDGER_CHECK(!unrecorded_.contains(encoded))
      << "key " << encoded << " claimed without a row while this transaction holds its row";
  without_row_.insert(std::move(encoded));
}

bool ClaimedRowTracker::IsClaimedRow(const KeyRecord& row) const {
  auto claimed = unrecorded_.find(row.identity.Encoded());
  if (claimed == unrecorded_.end()) return false;
  LEDGER_CHECK(claimed->second.identity == row.identity)
      << "a row read back under another identity than its claim's: "
      << row.identity.Encoded();
  return claimed->second.transaction_id == row.transaction_id;
}

ClaimedRowTracker::RecordDecision ClaimedRowTracker::Record(const KeyRecord& record) {
  const std::string encoded = record.identity.Encoded();
  auto claimed = unrecorded_.find(encoded);
  if (claimed == unrecorded_.end()) {
    return {.kind = without_row_.contains(encoded) ? RecordKind::kClaimedWithoutRow
                                                   : RecordKind::kNotClaimed};
  }
  // The rewrite finds the row by the record's identity: it must be the claimed one.
  LEDGER_CHECK(claimed->second.identity == record.identity)
      << "a claimed row rewritten under another identity: " << encoded;
  KeyRecord claimed_record = std::move(claimed->second);
  unrecorded_.erase(claimed);
  if (claimed_record == record) return {.kind = RecordKind::kNothingToSend};
  return {.kind = RecordKind::kRewrite, .claimed = std::move(claimed_record)};
}

std::vector<KeyRecord> ClaimedRowTracker::TakeUnrecorded() {
  std::vector<KeyRecord> unrecorded;
  unrecorded.reserve(unrecorded_.size());
  for (auto& [encoded, record] : unrecorded_) unrecorded.push_back(std::move(record));
  unrecorded_.clear();
  return unrecorded;
}

void ClaimedRowTracker::Clear() {
  unrecorded_.clear();
  without_row_.clear();
}

}  // namespace ledger::engine_common
