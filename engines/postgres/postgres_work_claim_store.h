// The PostgreSQL engine's run-idempotently work claims (idempotency/stores.h), in the
// work_claims table of the engine's database. Each call is one autocommit
// statement on a pooled connection (PostgresEngine::WithConnection).
//
// Internal to engines/postgres. Owned by its PostgresEngine, which it must not outlive.
// Thread-safe.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_WORK_CLAIM_STORE_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_WORK_CLAIM_STORE_H_

#include <cstdint>
#include <string>

#include "idempotency/stores.h"

namespace ledger::postgres_internal {

class PostgresEngine;

class PostgresWorkClaimStore final : public WorkClaimStore {
 public:
  explicit PostgresWorkClaimStore(PostgresEngine& engine) : engine_(engine) {}

  absl::StatusOr<WorkClaim> InsertWorkClaimIfAbsent(const WorkClaim& fresh) override;
  absl::StatusOr<bool> ReplaceWorkClaim(const KeyIdentity& identity,
                                        const std::string& expected_owner, int64_t expected_attempt,
                                        const WorkClaim& replacement) override;
  absl::StatusOr<bool> DeleteWorkClaim(const KeyIdentity& identity,
                                       const std::string& owner) override;
  absl::StatusOr<int64_t> MarkAbandonedWorkClaims(absl::Time now) override;
  absl::StatusOr<int64_t> PruneWorkClaims(absl::Time now) override;

 private:
  PostgresEngine& engine_;
};

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_WORK_CLAIM_STORE_H_
