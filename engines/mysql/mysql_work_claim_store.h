// The MySQL engine's run-idempotently work claims (idempotency/stores.h), in the
// work_claims table of the engine's database. Each call is one statement in a
// short transaction of its own (MysqlEngine::RunStandalone).
//
// Internal to engines/mysql. Owned by its MysqlEngine, which it must not outlive.
// Thread-safe.
#ifndef LEDGER_ENGINES_MYSQL_MYSQL_WORK_CLAIM_STORE_H_
#define LEDGER_ENGINES_MYSQL_MYSQL_WORK_CLAIM_STORE_H_

#include <cstdint>
#include <string>

#include "idempotency/stores.h"

namespace ledger::mysql_internal {

class MysqlEngine;

class MysqlWorkClaimStore final : public WorkClaimStore {
 public:
  explicit MysqlWorkClaimStore(MysqlEngine& engine) : engine_(engine) {}

  absl::StatusOr<WorkClaim> InsertWorkClaimIfAbsent(const WorkClaim& fresh) override;
  absl::StatusOr<bool> ReplaceWorkClaim(const KeyIdentity& identity,
                                        const std::string& expected_owner, int64_t expected_attempt,
                                        const WorkClaim& replacement) override;
  absl::StatusOr<bool> DeleteWorkClaim(const KeyIdentity& identity,
                                       const std::string& owner) override;
  absl::StatusOr<int64_t> MarkAbandonedWorkClaims(absl::Time now) override;
  absl::StatusOr<int64_t> PruneWorkClaims(absl::Time now) override;

 private:
  MysqlEngine& engine_;
};

}  // namespace ledger::mysql_internal

#endif  // LEDGER_ENGINES_MYSQL_MYSQL_WORK_CLAIM_STORE_H_
