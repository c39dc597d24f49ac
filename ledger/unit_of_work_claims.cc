// Run-idempotently inside a unit of work (UnitOfWork::RunIdempotently): the work claims
// of idempotency/stores.h, read and written with the unit's own statements, so the claim,
// the work's writes and its stored result commit together, and a unit that rolls back
// (or a process killed before COMMIT) leaves no claim at all. The decisions stay
// IdempotentRunner's (idempotency/run_idempotently.h); this is only its store.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "idempotency/run_idempotently.h"
#include "ledger/unit_of_work.h"
#include "ledger/unit_of_work_internal.h"

namespace ledger {
namespace {

// The columns after the identity, in the order they are bound and read.
constexpr char kStateColumns[] =
    "fingerprint, state, owner, attempt, lease_expires_at, result, created_at, updated_at, "
    "expires_at";

// A WorkClaimStore whose single-row operations run in the unit's transaction. A
// claim row another transaction is writing makes these statements wait for it (the
// unique key, then the row lock), like a submit's key claim.
class UnitOfWorkClaimStore final : public WorkClaimStore {
 public:
  explicit UnitOfWorkClaimStore(UnitOfWork& unit)
      : unit_(unit),
        mysql_(unit.engine_name() == "mysql"),
        // `key` is a reserved word on MySQL only.
        key_column_(mysql_ ? "`key`" : "key") {}

  absl::StatusOr<WorkClaim> InsertWorkClaimIfAbsent(const WorkClaim& fresh) override {
    std::vector<SqlValue> values = IdentityValues(fresh.identity);
    AppendState(fresh, values);
    std::string placeholders;
    for (size_t i = 1; i <= values.size(); ++i) {
      absl::StrAppend(&placeholders, i == 1 ? "" : ", ", unit_.Placeholder(static_cast<int>(i)));
    }
    // MySQL: the no-op update takes the existing row's exclusive lock at once (INSERT
    // IGNORE would take a shared one, and two waiters upgrading would deadlock).
    const std::string conflict =
        mysql_ ? " ON DUPLICATE KEY UPDATE attempt = attempt"
               : absl::StrCat(" ON CONFLICT (namespace, scope, ", key_column_, ") DO NOTHING");
    LEDGER_RETURN_IF_ERROR(unit_
                               .Execute(absl::StrCat("INSERT INTO work_claims (namespace, scope, ",
                                                     key_column_, ", ", kStateColumns,
                                                     ") VALUES (", placeholders, ")", conflict),
                                        values)
                               .status());
    // SQLite holds the one writer lock already; the others lock the row they read.
    LEDGER_ASSIGN_OR_RETURN(
        SqlRows rows,
        unit_.Query(absl::StrCat("SELECT ", kStateColumns, " FROM work_claims WHERE ",
                                 IdentityMatches(1), unit_.engine_name() == "sqlite" ? "" : " FOR UPDATE"),
                    IdentityValues(fresh.identity)));
    if (rows.rows.size() != 1) {
      return absl::InternalError(absl::StrCat("work claim ", fresh.identity.Encoded(),
                                              " is missing right after its insert"));
    }
    return ClaimFrom(fresh.identity, rows.rows.front());
  }

  absl::StatusOr<bool> ReplaceWorkClaim(const KeyIdentity& identity,
                                        const std::string& expected_owner,
                                        int64_t expected_attempt,
                                        const WorkClaim& replacement) override {
    std::vector<SqlValue> values;
    AppendState(replacement, values);
    std::string assignments;
    const std::vector<std::string> names = {"fingerprint", "state", "owner", "attempt",
                                            "lease_expires_at", "result", "created_at",
                                            "updated_at", "expires_at"};
    for (size_t i = 0; i < names.size(); ++i) {
      absl::StrAppend(&assignments, i == 0 ? "" : ", ", names[i], " = ",
                      unit_.Placeholder(static_cast<int>(i + 1)));
    }
    const int next = static_cast<int>(values.size()) + 1;
    for (SqlValue& value : IdentityValues(identity)) values.push_back(std::move(value));
    values.emplace_back(expected_owner);
    values.emplace_back(expected_attempt);
    LEDGER_ASSIGN_OR_RETURN(
        int64_t changed,
        unit_.Execute(absl::StrCat("UPDATE work_claims SET ", assignments, " WHERE ",
                                   IdentityMatches(next), " AND owner = ", unit_.Placeholder(next + 3),
                                   " AND attempt = ", unit_.Placeholder(next + 4)),
                      values));
    return changed == 1;
  }

  absl::StatusOr<bool> DeleteWorkClaim(const KeyIdentity& identity,
                                       const std::string& owner) override {
    std::vector<SqlValue> values = IdentityValues(identity);
    values.emplace_back(owner);
    LEDGER_ASSIGN_OR_RETURN(
        int64_t deleted,
        unit_.Execute(absl::StrCat("DELETE FROM work_claims WHERE ", IdentityMatches(1),
                                   " AND state = 'pending' AND owner = ", unit_.Placeholder(4)),
                      values));
    return deleted == 1;
  }

  // Maintenance stays on the engine's own store (Engine::work_claims()).
  absl::StatusOr<int64_t> MarkAbandonedWorkClaims(absl::Time) override {
    return absl::UnimplementedError("sweep work claims with the engine's store, not in a unit of work");
  }
  absl::StatusOr<int64_t> PruneWorkClaims(absl::Time) override {
    return absl::UnimplementedError("prune work claims with the engine's store, not in a unit of work");
  }

 private:
  static std::vector<SqlValue> IdentityValues(const KeyIdentity& identity) {
    return {identity.key_namespace, identity.scope.Encoded(), identity.key};
  }
  static void AppendState(const WorkClaim& claim, std::vector<SqlValue>& values) {
    values.emplace_back(claim.fingerprint);
    values.emplace_back(std::string(WorkStateName(claim.state)));
    values.emplace_back(claim.owner);
    values.emplace_back(claim.attempt);
    values.emplace_back(absl::ToUnixMicros(claim.lease_expires_at));
    values.emplace_back(claim.result);
    values.emplace_back(absl::ToUnixMicros(claim.created_at));
    values.emplace_back(absl::ToUnixMicros(claim.updated_at));
    values.emplace_back(absl::ToUnixMicros(claim.expires_at));
  }
  // "namespace = $first AND scope = $first+1 AND key = $first+2".
  std::string IdentityMatches(int first) const {
    return absl::StrCat("namespace = ", unit_.Placeholder(first), " AND scope = ",
                        unit_.Placeholder(first + 1), " AND ", key_column_, " = ",
                        unit_.Placeholder(first + 2));
  }
  static absl::StatusOr<WorkClaim> ClaimFrom(const KeyIdentity& identity,
                                             const std::vector<std::optional<std::string>>& row) {
    if (row.size() != 9) return absl::InternalError("a work claim row has 9 columns");
    for (const std::optional<std::string>& column : row) {
      if (!column.has_value()) return absl::InternalError("a work claim column is NULL");
    }
    int64_t numbers[5];
    const int columns[5] = {3, 4, 6, 7, 8};
    for (int i = 0; i < 5; ++i) {
      if (!absl::SimpleAtoi(*row[columns[i]], &numbers[i])) {
        return absl::InternalError(absl::StrCat("work claim column ", columns[i],
                                                " is not an integer: ", *row[columns[i]]));
      }
    }
    WorkClaim claim;
    claim.identity = identity;
    claim.fingerprint = *row[0];
    LEDGER_ASSIGN_OR_RETURN(claim.state, ParseWorkState(*row[1]));
    claim.owner = *row[2];
    claim.attempt = numbers[0];
    claim.lease_expires_at = absl::FromUnixMicros(numbers[1]);
    claim.result = *row[5];
    claim.created_at = absl::FromUnixMicros(numbers[2]);
    claim.updated_at = absl::FromUnixMicros(numbers[3]);
    claim.expires_at = absl::FromUnixMicros(numbers[4]);
    return claim;
  }

  UnitOfWork& unit_;
  const bool mysql_;
  const std::string key_column_;
};

}  // namespace

absl::StatusOr<std::string> UnitOfWork::RunIdempotently(
    const KeyIdentity& identity, const nlohmann::json& payload, const WorkOptions& options,
    const std::function<absl::StatusOr<std::string>()>& work) {
  LEDGER_RETURN_IF_ERROR(Usable());
  UnitOfWorkClaimStore store(*this);
  IdempotentRunner runner(store, ledger_.clock());
  absl::StatusOr<std::string> result = runner.Run(identity, payload, options, work);
  // A statement that failed in there failed the unit: say that, not a later refusal.
  if (!state_.failure.ok()) return state_.failure;
  return result;
}

}  // namespace ledger
