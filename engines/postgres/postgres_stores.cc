// The PostgreSQL engine's storage for idempotency outside the ledger (idempotency/stores.h):
// run-idempotently work claims and inbound webhook events. Each operation is one
// autocommit statement; the decisions live in run_idempotently.cc and webhook_guard.cc.
#include <utility>

#include "absl/strings/str_cat.h"
#include "engines/common/insert_or_read.h"
#include "engines/postgres/postgres_connection.h"
#include "engines/postgres/postgres_engine_internal.h"
#include "engines/postgres/postgres_rows.h"
#include "base/status.h"
#include "pqxx/nontransaction"
#include "pqxx/prepared_statement"

namespace ledger::postgres_internal {

absl::StatusOr<WorkClaim> PostgresEngine::InsertWorkClaimIfAbsent(const WorkClaim& fresh) {
  return WithConnection(
      {.operation = "insert work claim"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<WorkClaim> {
        return engine_common::InsertOrRead<WorkClaim>(
            "postgres", "work claim", [&]() -> absl::StatusOr<std::optional<WorkClaim>> {
              const pqxx::result rows = work.exec_prepared(
                  statement::kInsertWorkClaim, fresh.identity.key_namespace,
                  fresh.identity.scope.Encoded(), fresh.identity.key, fresh.fingerprint,
                  std::string(WorkStateName(fresh.state)), fresh.owner, fresh.attempt,
                  postgres_internal::Micros(fresh.lease_expires_at), fresh.result,
                  postgres_internal::Micros(fresh.created_at),
                  postgres_internal::Micros(fresh.updated_at),
                  postgres_internal::Micros(fresh.expires_at));
              // Empty: a concurrent insert committed after this statement's snapshot.
              if (rows.empty()) return std::nullopt;
              LEDGER_ASSIGN_OR_RETURN(WorkClaim stored, postgres_internal::WorkClaimFromRow(rows[0]));
              return stored;
            });
      });
}

absl::StatusOr<bool> PostgresEngine::ReplaceWorkClaim(const KeyIdentity& identity,
                                                      const std::string& expected_owner,
                                                      int64_t expected_attempt,
                                                      const WorkClaim& replacement) {
  if (!(replacement.identity == identity)) {
    return absl::InvalidArgumentError("postgres: a work claim replacement must keep its identity");
  }
  return WithConnection(
      {.operation = "replace work claim"}, [&](pqxx::nontransaction& work) -> absl::StatusOr<bool> {
        const pqxx::result result = work.exec_prepared(
            statement::kReplaceWorkClaim, identity.key_namespace, identity.scope.Encoded(),
            identity.key, expected_owner, expected_attempt, replacement.fingerprint,
            std::string(WorkStateName(replacement.state)), replacement.owner, replacement.attempt,
            postgres_internal::Micros(replacement.lease_expires_at), replacement.result,
            postgres_internal::Micros(replacement.created_at),
            postgres_internal::Micros(replacement.updated_at),
            postgres_internal::Micros(replacement.expires_at));
        return result.affected_rows() > 0;
      });
}

absl::StatusOr<bool> PostgresEngine::DeleteWorkClaim(const KeyIdentity& identity,
                                                     const std::string& owner) {
  return WithConnection(
      {.operation = "delete work claim"}, [&](pqxx::nontransaction& work) -> absl::StatusOr<bool> {
        return work.exec_prepared(statement::kDeleteWorkClaim, identity.key_namespace,
                                  identity.scope.Encoded(), identity.key, owner)
                   .affected_rows() > 0;
      });
}

absl::StatusOr<int64_t> PostgresEngine::MarkAbandonedWorkClaims(absl::Time now) {
  return WithConnection(
      {.operation = "mark abandoned work claims"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<int64_t> {
        return static_cast<int64_t>(
            work.exec_prepared(statement::kMarkAbandonedWorkClaims, postgres_internal::Micros(now))
                .affected_rows());
      });
}

absl::StatusOr<int64_t> PostgresEngine::PruneWorkClaims(absl::Time now) {
  return WithConnection(
      {.operation = "prune work claims"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<int64_t> {
        return static_cast<int64_t>(
            work.exec_prepared(statement::kPruneWorkClaims, postgres_internal::Micros(now))
                .affected_rows());
      });
}

absl::StatusOr<bool> PostgresEngine::InsertWebhookEventIfAbsent(const std::string& provider,
                                                                const std::string& event_id,
                                                                absl::Time received_at) {
  return WithConnection({.operation = "insert webhook event"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<bool> {
                          return work.exec_prepared(statement::kInsertWebhookEvent, provider,
                                                    event_id,
                                                    postgres_internal::Micros(received_at))
                                     .affected_rows() > 0;
                        });
}

absl::StatusOr<bool> PostgresEngine::DeleteWebhookEvent(const std::string& provider,
                                                        const std::string& event_id) {
  return WithConnection({.operation = "delete webhook event"},
                        [&](pqxx::nontransaction& work) -> absl::StatusOr<bool> {
                          return work.exec_prepared(statement::kDeleteWebhookEvent, provider,
                                                    event_id)
                                     .affected_rows() > 0;
                        });
}

absl::StatusOr<int64_t> PostgresEngine::PruneWebhookEvents(absl::Time before) {
  return WithConnection(
      {.operation = "prune webhook events"},
      [&](pqxx::nontransaction& work) -> absl::StatusOr<int64_t> {
        return static_cast<int64_t>(
            work.exec_prepared(statement::kPruneWebhookEvents, postgres_internal::Micros(before))
                .affected_rows());
      });
}

}  // namespace ledger::postgres_internal
