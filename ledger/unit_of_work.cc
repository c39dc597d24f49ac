#include "ledger/unit_of_work.h"

#include <exception>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status.h"
#include "ledger/unit_of_work_internal.h"

namespace ledger {
namespace internal {
namespace {

// See JoinTransaction.
class JoinedTransaction final : public StorageTransaction {
 public:
  explicit JoinedTransaction(UnitOfWorkState& unit) : unit_(unit) {}

  absl::StatusOr<std::optional<KeyRecord>> ClaimKey(const KeyRecord& intended) override {
    return Noted(target().ClaimKey(intended));
  }
  absl::StatusOr<std::vector<std::optional<KeyRecord>>> ClaimKeys(
      const std::vector<KeyRecord>& intended) override {
    return Noted(target().ClaimKeys(intended));
  }
  absl::StatusOr<std::optional<Transaction>> LoadTransaction(std::string_view id) override {
    return Noted(target().LoadTransaction(id));
  }
  absl::StatusOr<std::vector<Transaction>> LoadTransactions(
      const std::vector<std::string>& ids) override {
    return Noted(target().LoadTransactions(ids));
  }
  absl::StatusOr<bool> IsReversed(std::string_view id) override {
    return Noted(target().IsReversed(id));
  }
  absl::StatusOr<std::vector<Account>> LockAccounts(
      const std::vector<std::string>& sorted_ids) override {
    return Noted(target().LockAccounts(sorted_ids));
  }
  absl::StatusOr<DebitUsage> LoadDebitUsage(std::string_view account_id,
                                            absl::Time since) override {
    return Noted(target().LoadDebitUsage(account_id, since));
  }
  absl::StatusOr<std::vector<Hold>> LoadHolds(const std::vector<std::string>& ids) override {
    return Noted(target().LoadHolds(ids));
  }
  absl::StatusOr<PendingHoldTotals> LoadHoldTotals(std::string_view account_id, absl::Time now,
                                                   absl::Time since) override {
    return Noted(target().LoadHoldTotals(account_id, now, since));
  }
  absl::Status WriteTransaction(const Transaction& transaction,
                                const std::vector<Account>& updated_accounts) override {
    return Noted(target().WriteTransaction(transaction, updated_accounts));
  }
  absl::Status RecordKey(const KeyRecord& record) override {
    return Noted(target().RecordKey(record));
  }
  absl::Status AppendEvent(const OutboxEvent& event) override {
    return Noted(target().AppendEvent(event));
  }
  // Neither hint is taken (ExpectAccountLocks, ExpectNoWrites: the defaults): each lets
  // an engine end the transaction early, and the unit's goes on after the attempt.
  // The attempt's end is not the transaction's: Transact commits or rolls back.
  absl::Status Commit() override { return unit_.failure; }
  void Rollback() override {}
  absl::StatusOr<SqlRows> RunCallerSql(std::string_view sql,
                                       const std::vector<SqlValue>& parameters) override {
    return Noted(target().RunCallerSql(sql, parameters));
  }
  absl::StatusOr<void*> NativeHandle() override { return Noted(target().NativeHandle()); }

 private:
  StorageTransaction& target() { return *unit_.transaction; }
  template <typename Result>
  Result Noted(Result result) {
    if (!result.ok() && unit_.failure.ok()) unit_.failure = StatusOf(result);
    return result;
  }
  static absl::Status StatusOf(const absl::Status& status) { return status; }
  template <typename T>
  static absl::Status StatusOf(const absl::StatusOr<T>& result) { return result.status(); }

  UnitOfWorkState& unit_;
};

}  // namespace

std::unique_ptr<StorageTransaction> JoinTransaction(UnitOfWorkState& unit) {
  LEDGER_CHECK(unit.transaction != nullptr) << "a unit of work without its transaction";
  return std::make_unique<JoinedTransaction>(unit);
}

}  // namespace internal

absl::Status ValidateTransactOptions(const TransactOptions& options) {
  if (options.attempts_max < 0 || options.attempts_max > kAttemptsMaxLimit) {
    return absl::InvalidArgumentError(absl::StrCat("TransactOptions.attempts_max must be 0 to ",
                                                   kAttemptsMaxLimit, ", not ",
                                                   options.attempts_max));
  }
  if (options.claim_wait.wait_max < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("TransactOptions.claim_wait.wait_max must not be negative");
  }
  return absl::OkStatus();
}

absl::Status UnitOfWork::Usable() const {
  if (state_.failure.ok()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("the unit of work failed earlier and can only roll back: ",
                   state_.failure.message()));
}

const absl::Status& UnitOfWork::failure() const { return state_.failure; }

std::string_view UnitOfWork::engine_name() const { return ledger_.engine_name(); }

std::string UnitOfWork::Placeholder(int position) const {
  LEDGER_CHECK(position >= 1) << "placeholders count from 1, not " << position;
  if (engine_name() == "postgres") return absl::StrCat("$", position);
  return "?";
}

absl::StatusOr<Outcome> UnitOfWork::Submit(const SubmitRequest& request) {
  SubmitBatchRequest batch;
  batch.items.push_back(request);
  LEDGER_ASSIGN_OR_RETURN(std::vector<SubmitResult> results, SubmitBatch(batch));
  return std::move(results.front());
}

absl::StatusOr<std::vector<SubmitResult>> UnitOfWork::SubmitBatch(const SubmitBatchRequest& batch) {
  LEDGER_RETURN_IF_ERROR(Usable());
  LEDGER_ASSIGN_OR_RETURN(std::vector<SubmitResult> results,
                          ledger_.RunSubmitBatch(batch, &state_));
  // An engine error decided the items with it and failed the unit: say so once.
  if (!state_.failure.ok()) return state_.failure;
  return results;
}

absl::StatusOr<int64_t> UnitOfWork::Execute(std::string_view sql,
                                            const std::vector<SqlValue>& parameters) {
  LEDGER_ASSIGN_OR_RETURN(SqlRows rows, Query(sql, parameters));
  return rows.changed_rows;
}

absl::StatusOr<SqlRows> UnitOfWork::Query(std::string_view sql,
                                          const std::vector<SqlValue>& parameters) {
  LEDGER_RETURN_IF_ERROR(Usable());
  if (sql.empty()) {
    return absl::InvalidArgumentError("a unit of work's statement is empty");
  }
  if (parameters.size() > kCallerSqlParametersMax) {
    return absl::InvalidArgumentError(absl::StrCat("a statement binds at most ",
                                                   kCallerSqlParametersMax, " parameters, not ",
                                                   parameters.size()));
  }
  // An error fails the unit, Unimplemented (the memory engine) too: a work that ignores
  // it cannot commit half of what it meant to.
  return internal::JoinTransaction(state_)->RunCallerSql(sql, parameters);
}

absl::StatusOr<void*> UnitOfWork::NativeHandle() {
  LEDGER_RETURN_IF_ERROR(Usable());
  state_.native_handle_lent = true;
  return internal::JoinTransaction(state_)->NativeHandle();
}

absl::Status Ledger::Transact(const std::function<absl::Status(UnitOfWork&)>& work) {
  return Transact(work, TransactOptions{});
}

namespace {

// `work(unit)`, a throw turned into Internal.
absl::Status RunWork(const std::function<absl::Status(UnitOfWork&)>& work, UnitOfWork& unit) {
  try {
    return work(unit);
  } catch (const std::exception& thrown) {
    return absl::InternalError(
        absl::StrCat("the unit of work threw, so it rolled back: ", thrown.what()));
  } catch (...) {
    return absl::InternalError("the unit of work threw a non-exception, so it rolled back");
  }
}

}  // namespace

absl::Status Ledger::Transact(const std::function<absl::Status(UnitOfWork&)>& work,
                              const TransactOptions& options) {
  LEDGER_RETURN_IF_ERROR(ValidateTransactOptions(options));
  if (!work) return absl::InvalidArgumentError("Ledger::Transact needs a work function, not empty");
  const int attempts_max = options.attempts_max == 0 ? options_.attempts_max : options.attempts_max;
  for (int attempt = 1;; ++attempt) {
    internal::UnitOfWorkState state;
    LEDGER_ASSIGN_OR_RETURN(state.transaction,
                            engine_->Begin(BeginOptions{.wait = options.claim_wait,
                                                        .use_remembered_rows = false}));
    UnitOfWork unit(*this, state, attempt);
    absl::Status status = RunWork(work, unit);
    // A failed statement fails the unit whatever `work` made of it.
    if (status.ok() && !state.failure.ok()) status = state.failure;
    if (status.ok() && state.native_handle_lent) {
      absl::StatusOr<bool> usable = state.transaction->StillUsable();
      if (!usable.ok()) {
        status = usable.status();
      } else if (!*usable) {
        status = absl::FailedPreconditionError(
            "the unit of work's transaction was aborted through its native handle; rolled back");
      }
    }
    if (status.ok()) status = state.transaction->Commit();
    if (status.ok() || IsInDoubt(status)) return status;
    state.transaction->Rollback();  // a no-op after a failed COMMIT, which rolled back
    // Everything rolled back: a deadlock or serialization failure may run again.
    const bool retryable = IsRetryable(status) || IsRetryable(state.failure);
    if (!retryable || attempt >= attempts_max) return status;
  }
}

}  // namespace ledger
