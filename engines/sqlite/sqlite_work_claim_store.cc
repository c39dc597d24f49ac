// The SQLite engine's run-idempotently work claims (idempotency/stores.h). Each
// operation is one short BEGIN IMMEDIATE transaction with the default busy timeout
// (SqliteOptions::busy_timeout); the decisions live in run_idempotently.cc.
#include "engines/sqlite/sqlite_work_claim_store.h"

#include "engines/common/insert_or_read.h"
#include "engines/sqlite/sqlite_engine_internal.h"
#include "engines/sqlite/sqlite_rows.h"
#include "base/status.h"
#include "engines/sqlite/sqlite_statements.h"

namespace ledger::sqlite_internal {
namespace {

void BindWorkClaimState(Query& query, const WorkClaim& claim) {
  query.BindText(claim.fingerprint)
      .BindText(WorkStateName(claim.state))
      .BindText(claim.owner)
      .BindInt(claim.attempt)
      .BindTime(claim.lease_expires_at)
      .BindText(claim.result)
      .BindTime(claim.created_at)
      .BindTime(claim.updated_at)
      .BindTime(claim.expires_at);
}

}  // namespace

absl::StatusOr<WorkClaim> SqliteWorkClaimStore::InsertWorkClaimIfAbsent(const WorkClaim& fresh) {
  // Inside one write transaction nothing else can insert or delete the row, so the
  // first round always finds it; the shared loop keeps the engines' answers alike.
  return engine_common::InsertOrRead<WorkClaim>(
      "sqlite", "work claim", [&]() -> absl::StatusOr<std::optional<WorkClaim>> {
        std::optional<WorkClaim> stored;
        LEDGER_RETURN_IF_ERROR(
            engine_.InWriteTransaction([&](Connection& connection) -> absl::Status {
              {
                LEDGER_ASSIGN_OR_RETURN(
                    Query insert,
                    connection.Prepare(statement::kInsertWorkClaim,
                                       "insert work claim"));
                BindIdentity(insert, fresh.identity);
                BindWorkClaimState(insert, fresh);
                LEDGER_RETURN_IF_ERROR(insert.Run());
              }
              LEDGER_ASSIGN_OR_RETURN(
                  Query select,
                  connection.Prepare(statement::kSelectWorkClaim,
                                     "select work claim"));
              BindIdentity(select, fresh.identity);
              LEDGER_ASSIGN_OR_RETURN(bool found, select.Step());
              if (!found) return absl::OkStatus();
              LEDGER_ASSIGN_OR_RETURN(stored, ReadWorkClaim(select));
              return absl::OkStatus();
            }));
        return stored;
      });
}

absl::StatusOr<bool> SqliteWorkClaimStore::ReplaceWorkClaim(const KeyIdentity& identity,
                                                            const std::string& expected_owner,
                                                            int64_t expected_attempt,
                                                            const WorkClaim& replacement) {
  LEDGER_ASSIGN_OR_RETURN(
      int64_t replaced,
      engine_.WriteStatement(
          statement::kReplaceWorkClaim,
          "replace work claim", [&](Query& query) {
            BindWorkClaimState(query, replacement);
            BindIdentity(query, identity);
            query.BindText(expected_owner).BindInt(expected_attempt);
          }));
  return replaced == 1;
}

absl::StatusOr<bool> SqliteWorkClaimStore::DeleteWorkClaim(const KeyIdentity& identity,
                                                           const std::string& owner) {
  LEDGER_ASSIGN_OR_RETURN(
      int64_t deleted,
      engine_.WriteStatement(statement::kDeleteWorkClaim,
                             "delete work claim", [&](Query& query) {
                               BindIdentity(query, identity);
                               query.BindText(owner);
                             }));
  return deleted == 1;
}

absl::StatusOr<int64_t> SqliteWorkClaimStore::MarkAbandonedWorkClaims(absl::Time now) {
  return engine_.WriteStatement(
      statement::kMarkAbandonedWorkClaims,
      "mark abandoned work claims", [&](Query& query) { query.BindTime(now).BindTime(now); });
}

absl::StatusOr<int64_t> SqliteWorkClaimStore::PruneWorkClaims(absl::Time now) {
  return engine_.WriteStatement(statement::kPruneWorkClaims,
                                "prune work claims", [&](Query& query) { query.BindTime(now); });
}

}  // namespace ledger::sqlite_internal
