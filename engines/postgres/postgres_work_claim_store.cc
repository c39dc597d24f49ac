// The PostgreSQL engine's run-idempotently work claims (idempotency/stores.h). Each
// operation is one autocommit statement on a pooled connection; the decisions live in
// run_idempotently.cc.
#include "engines/postgres/postgres_work_claim_store.h"

#include "engines/common/insert_or_read.h"
#include "engines/postgres/postgres_statements.h"
#include "engines/postgres/postgres_engine_internal.h"
#include "engines/postgres/postgres_rows.h"
#include "base/status.h"
#include "pqxx/nontransaction"
#include "pqxx/prepared_statement"

namespace ledger::postgres_internal {

absl::StatusOr<WorkClaim> PostgresWorkClaimStore::InsertWorkClaimIfAbsent(const WorkClaim& fresh) {
  return engine_.WithConnection(
      {.operation = "insert work claim"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<WorkClaim> {
        return engine_common::InsertOrRead<WorkClaim>(
            "postgres", "work claim", [&]() -> absl::StatusOr<std::optional<WorkClaim>> {
              const pqxx::result rows = work.exec_prepared(
                  statement::kInsertWorkClaim, fresh.identity.key_namespace,
                  fresh.identity.scope.Encoded(), fresh.identity.key, fresh.fingerprint,
                  std::string(WorkStateName(fresh.state)), fresh.owner, fresh.attempt,
                  Micros(fresh.lease_expires_at), fresh.result, Micros(fresh.created_at),
                  Micros(fresh.updated_at), Micros(fresh.expires_at));
              // Empty: a concurrent insert committed after this statement's snapshot.
              if (rows.empty()) return std::nullopt;
              LEDGER_ASSIGN_OR_RETURN(WorkClaim stored, WorkClaimFromRow(rows[0]));
              return stored;
            });
      });
}

absl::StatusOr<bool> PostgresWorkClaimStore::ReplaceWorkClaim(const KeyIdentity& identity,
                                                              const std::string& expected_owner,
                                                              int64_t expected_attempt,
                                                              const WorkClaim& replacement) {
  if (!(replacement.identity == identity)) {
    return absl::InvalidArgumentError("postgres: a work claim replacement must keep its identity");
  }
  LEDGER_ASSIGN_OR_RETURN(
      int64_t replaced,
      engine_.ExecuteStandalone(
          "replace work claim", statement::kReplaceWorkClaim, identity.key_namespace,
          identity.scope.Encoded(), identity.key, expected_owner, expected_attempt,
          replacement.fingerprint, std::string(WorkStateName(replacement.state)),
          replacement.owner, replacement.attempt, Micros(replacement.lease_expires_at),
          replacement.result, Micros(replacement.created_at), Micros(replacement.updated_at),
          Micros(replacement.expires_at)));
  return replaced > 0;
}

absl::StatusOr<bool> PostgresWorkClaimStore::DeleteWorkClaim(const KeyIdentity& identity,
                                                             const std::string& owner) {
  LEDGER_ASSIGN_OR_RETURN(
      int64_t deleted,
      engine_.ExecuteStandalone("delete work claim", statement::kDeleteWorkClaim,
                                identity.key_namespace, identity.scope.Encoded(), identity.key,
                                owner));
  return deleted > 0;
}

absl::StatusOr<int64_t> PostgresWorkClaimStore::MarkAbandonedWorkClaims(absl::Time now) {
  return engine_.ExecuteStandalone("mark abandoned work claims",
                                   statement::kMarkAbandonedWorkClaims, Micros(now));
}

absl::StatusOr<int64_t> PostgresWorkClaimStore::PruneWorkClaims(absl::Time now) {
  return engine_.ExecuteStandalone("prune work claims", statement::kPruneWorkClaims,
                                   Micros(now));
}

}  // namespace ledger::postgres_internal
