// The memory engine's work claims (idempotency/stores.h): one map behind a mutex of
// its own, apart from the ledger state, so a run-idempotently call never waits for a
// submit. Nothing survives the process.
//
// Internal to engines/memory. Thread-safe.
#ifndef LEDGER_ENGINES_MEMORY_MEMORY_WORK_CLAIM_STORE_H_
#define LEDGER_ENGINES_MEMORY_MEMORY_WORK_CLAIM_STORE_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "idempotency/stores.h"

namespace ledger::memory_internal {

class MemoryWorkClaimStore final : public WorkClaimStore {
 public:
  absl::StatusOr<WorkClaim> InsertWorkClaimIfAbsent(const WorkClaim& fresh) override;
  absl::StatusOr<bool> ReplaceWorkClaim(const KeyIdentity& identity,
                                        const std::string& expected_owner, int64_t expected_attempt,
                                        const WorkClaim& replacement) override;
  absl::StatusOr<bool> DeleteWorkClaim(const KeyIdentity& identity,
                                       const std::string& owner) override;
  absl::StatusOr<int64_t> MarkAbandonedWorkClaims(absl::Time now) override;
  absl::StatusOr<int64_t> PruneWorkClaims(absl::Time now) override;

 private:
  absl::Mutex mutex_;
  // By KeyIdentity::Encoded(), unambiguous for every valid identity.
  std::map<std::string, WorkClaim> claims_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace ledger::memory_internal

#endif  // LEDGER_ENGINES_MEMORY_MEMORY_WORK_CLAIM_STORE_H_
