// The SQLite engine's run-idempotently work claims (idempotency/stores.h), in the
// work_claims table of the engine's database. Each call is one short write transaction
// through the engine's runner.
//
// Internal to engines/sqlite. Owned by its SqliteEngine, which it must not outlive.
// Thread-safe.
#ifndef LEDGER_ENGINES_SQLITE_SQLITE_WORK_CLAIM_STORE_H_
#define LEDGER_ENGINES_SQLITE_SQLITE_WORK_CLAIM_STORE_H_

#include <cstdint>
#include <string>

#include "idempotency/stores.h"

namespace ledger::sqlite_internal {

class SqliteEngine;

class SqliteWorkClaimStore final : public WorkClaimStore {
 public:
  explicit SqliteWorkClaimStore(SqliteEngine& engine) : engine_(engine) {}

  absl::StatusOr<WorkClaim> InsertWorkClaimIfAbsent(const WorkClaim& fresh) override;
  absl::StatusOr<bool> ReplaceWorkClaim(const KeyIdentity& identity,
                                        const std::string& expected_owner, int64_t expected_attempt,
                                        const WorkClaim& replacement) override;
  absl::StatusOr<bool> DeleteWorkClaim(const KeyIdentity& identity,
                                       const std::string& owner) override;
  absl::StatusOr<int64_t> MarkAbandonedWorkClaims(absl::Time now) override;
  absl::StatusOr<int64_t> PruneWorkClaims(absl::Time now) override;

 private:
  SqliteEngine& engine_;
};

}  // namespace ledger::sqlite_internal

#endif  // LEDGER_ENGINES_SQLITE_SQLITE_WORK_CLAIM_STORE_H_
