// The MySQL engine's run-idempotently work claims (idempotency/stores.h). Each
// operation is one statement in its own transaction (MysqlEngine::RunStandalone); the
// decisions live in run_idempotently.cc.
#include "engines/mysql/mysql_work_claim_store.h"

#include <utility>

#include "engines/common/insert_or_read.h"
#include "engines/mysql/mysql_engine_internal.h"
#include "engines/mysql/mysql_rows.h"
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
                      .Execute("INSERT INTO work_claims (" LEDGER_MYSQL_WORK_CLAIM_COLUMNS
                               ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                  "SELECT " LEDGER_MYSQL_WORK_CLAIM_COLUMNS
                  " FROM work_claims WHERE " LEDGER_MYSQL_IDENTITY_MATCHES,
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
          "UPDATE work_claims SET fingerprint = ?, state = ?, owner = ?, attempt = ?,"
          " lease_expires_at = ?, result = ?, created_at = ?, updated_at = ?,"
          " expires_at = ? WHERE " LEDGER_MYSQL_IDENTITY_MATCHES " AND owner = ? AND attempt = ?",
          params, "replace the work claim"));
  return matched > 0;
}

absl::StatusOr<bool> MysqlWorkClaimStore::DeleteWorkClaim(const KeyIdentity& identity,
                                                          const std::string& owner) {
  SqlParams params = IdentityParams(identity);
  params.push_back(owner);
  LEDGER_ASSIGN_OR_RETURN(
      int64_t deleted,
      engine_.ExecuteStandalone("DELETE FROM work_claims WHERE " LEDGER_MYSQL_IDENTITY_MATCHES
                                " AND owner = ? AND state = 'pending'",
                                params, "delete the work claim"));
  return deleted > 0;
}

absl::StatusOr<int64_t> MysqlWorkClaimStore::MarkAbandonedWorkClaims(absl::Time now) {
  return engine_.ExecuteStandalone(
      "UPDATE work_claims SET state = 'abandoned', updated_at = ?"
      " WHERE state = 'pending' AND lease_expires_at <= ?",
      {ToMicros(now), ToMicros(now)}, "mark abandoned work claims");
}

absl::StatusOr<int64_t> MysqlWorkClaimStore::PruneWorkClaims(absl::Time now) {
  return engine_.ExecuteStandalone("DELETE FROM work_claims WHERE expires_at <= ?",
                                   {ToMicros(now)}, "prune work claims");
}

}  // namespace ledger::mysql_internal
