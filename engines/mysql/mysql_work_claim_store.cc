// The MySQL engine's run-idempotently work claims (idempotency/stores.h). Each
// operation is one statement in its own transaction (MysqlEngine::RunStandalone); the
// decisions live in run_idempotently.cc.
#include "engines/mysql/mysql_work_claim_store.h"

#include <utility>

#include "engines/common/insert_or_read.h"
#include "engines/mysql/mysql_engine_internal.h"
#include "engines/mysql/mysql_rows.h"
#include "engines/mysql/mysql_statements.h"
#include "base/status.h"

namespace ledger::mysql_internal {

absl::StatusOr<WorkClaim> MysqlWorkClaimStore::InsertWorkClaimIfAbsent(const WorkClaim& fresh) {
  // Each round is a transaction of its own: the read must see what committed since.
  return engine_common::InsertOrRead<WorkClaim>(
      "mysql", "work claim", [&]() -> absl::StatusOr<std::optional<WorkClaim>> {
        std::optional<WorkClaim> stored;
        LEDGER_RETURN_IF_ERROR(engine_.RunStandalone(
            MysqlEngine::Access::kWrite, [&](MysqlConnection& connection) -> absl::Status {
              stored.reset();
              absl::Status inserted =
                  connection
                      .Execute(statement::kInsertWorkClaim,
                               WorkClaimParams(fresh), "insert the work claim",
                               ErrorContext::kStandalone)
                      .status();
              if (inserted.ok()) {
                stored = fresh;
                return absl::OkStatus();
              }
              if (!absl::IsAlreadyExists(inserted)) return inserted;
              // Present: the INSERT waited for its writer, so a plain read (READ
              // COMMITTED) sees the committed row.
              absl::Status unreadable;
              LEDGER_RETURN_IF_ERROR(connection.Query(
                  statement::kSelectWorkClaim,
                  IdentityParams(fresh.identity),
                  [&](const SqlRow& row) {
                    absl::StatusOr<WorkClaim> claim = ReadWorkClaim(row);
                    if (claim.ok()) {
                      stored = *std::move(claim);
                    } else {
                      unreadable = claim.status();
                    }
                  },
                  "read the work claim", ErrorContext::kStandalone));
              return unreadable;
            }));
        return stored;  // empty: deleted between the insert and the read
      });
}

absl::StatusOr<bool> MysqlWorkClaimStore::ReplaceWorkClaim(const KeyIdentity& identity,
                                                           const std::string& expected_owner,
                                                           int64_t expected_attempt,
                                                           const WorkClaim& replacement) {
  // Every column but the identity, then the identity and the expected owner and attempt:
  // a compare-and-set in one statement.
  SqlParams params = WorkClaimParams(replacement);
  params.erase(params.begin(), params.begin() + 3);
  SqlParams where = IdentityParams(identity);
  params.insert(params.end(), where.begin(), where.end());
  params.insert(params.end(), {expected_owner, expected_attempt});
  LEDGER_ASSIGN_OR_RETURN(
      int64_t matched,
      engine_.ExecuteStandalone(
          statement::kReplaceWorkClaim,
          params, "replace the work claim"));
  return matched > 0;
}

absl::StatusOr<bool> MysqlWorkClaimStore::DeleteWorkClaim(const KeyIdentity& identity,
                                                          const std::string& owner) {
  SqlParams params = IdentityParams(identity);
  params.push_back(owner);
  LEDGER_ASSIGN_OR_RETURN(
      int64_t deleted,
      engine_.ExecuteStandalone(statement::kDeleteWorkClaim,
                                params, "delete the work claim"));
  return deleted > 0;
}

absl::StatusOr<int64_t> MysqlWorkClaimStore::MarkAbandonedWorkClaims(absl::Time now) {
  return engine_.ExecuteStandalone(
      statement::kMarkAbandonedWorkClaims,
      {ToMicros(now), ToMicros(now)}, "mark abandoned work claims");
}

absl::StatusOr<int64_t> MysqlWorkClaimStore::PruneWorkClaims(absl::Time now) {
  return engine_.ExecuteStandalone(statement::kPruneWorkClaims,
                                   {ToMicros(now)}, "prune work claims");
}

}  // namespace ledger::mysql_internal
