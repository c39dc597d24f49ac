#include "engines/memory/memory_work_claim_store.h"

namespace ledger::memory_internal {

absl::StatusOr<WorkClaim> MemoryWorkClaimStore::InsertWorkClaimIfAbsent(const WorkClaim& fresh) {
  absl::MutexLock lock(&mutex_);
  return claims_.emplace(fresh.identity.Encoded(), fresh).first->second;
}

absl::StatusOr<bool> MemoryWorkClaimStore::ReplaceWorkClaim(const KeyIdentity& identity,
                                                            const std::string& expected_owner,
                                                            int64_t expected_attempt,
                                                            const WorkClaim& replacement) {
  absl::MutexLock lock(&mutex_);
  auto it = claims_.find(identity.Encoded());
  if (it == claims_.end() || it->second.owner != expected_owner ||
      it->second.attempt != expected_attempt) {
    return false;
  }
  it->second = replacement;
  return true;
}

absl::StatusOr<bool> MemoryWorkClaimStore::DeleteWorkClaim(const KeyIdentity& identity,
                                                           const std::string& owner) {
  absl::MutexLock lock(&mutex_);
  auto it = claims_.find(identity.Encoded());
  if (it == claims_.end() || it->second.owner != owner || it->second.state != WorkState::kPending) {
    return false;
  }
  claims_.erase(it);
  return true;
}

absl::StatusOr<int64_t> MemoryWorkClaimStore::MarkAbandonedWorkClaims(absl::Time now) {
  absl::MutexLock lock(&mutex_);
  int64_t marked = 0;
  for (auto& [key, claim] : claims_) {
    if (claim.state == WorkState::kPending && claim.lease_expires_at <= now) {
      claim.state = WorkState::kAbandoned;
      claim.updated_at = now;
      ++marked;
    }
  }
  return marked;
}

absl::StatusOr<int64_t> MemoryWorkClaimStore::PruneWorkClaims(absl::Time now) {
  absl::MutexLock lock(&mutex_);
  return static_cast<int64_t>(
      std::erase_if(claims_, [now](const auto& item) { return item.second.expires_at <= now; }));
}

}  // namespace ledger::memory_internal
