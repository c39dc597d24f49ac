#include "tests/support/fault_injecting_engine.h"

#include <utility>

#include "base/status.h"

namespace ledger::testing {
namespace {

class FaultInjectingTransaction final : public ForwardingTransaction {
 public:
  FaultInjectingTransaction(FaultInjectingEngine& engine, std::unique_ptr<StorageTransaction> inner)
      : ForwardingTransaction(std::move(inner)), engine_(engine) {}

  absl::StatusOr<std::optional<KeyRecord>> ClaimKey(const KeyRecord& intended) override {
    LEDGER_RETURN_IF_ERROR(engine_.Reach(FaultPoint::kClaim));
    auto result = inner().ClaimKey(intended);
    if (result.ok()) LEDGER_RETURN_IF_ERROR(engine_.Reach(FaultPoint::kAfterClaim));
    return result;
  }
  // Many keys in one call reach the claim points once, as one claim does.
  absl::StatusOr<std::vector<std::optional<KeyRecord>>> ClaimKeys(
      const std::vector<KeyRecord>& intended) override {
    LEDGER_RETURN_IF_ERROR(engine_.Reach(FaultPoint::kClaim));
    auto result = inner().ClaimKeys(intended);
    if (result.ok()) LEDGER_RETURN_IF_ERROR(engine_.Reach(FaultPoint::kAfterClaim));
    return result;
  }
  absl::StatusOr<std::vector<Account>> LockAccounts(const std::vector<std::string>& ids) override {
    LEDGER_RETURN_IF_ERROR(engine_.Reach(FaultPoint::kLockAccounts));
    return inner().LockAccounts(ids);
  }
  absl::Status WriteTransaction(const Transaction& transaction,
                                const std::vector<Account>& updated_accounts) override {
    LEDGER_RETURN_IF_ERROR(engine_.Reach(FaultPoint::kWrite));
    return inner().WriteTransaction(transaction, updated_accounts);
  }
  absl::Status RecordKey(const KeyRecord& record) override {
    LEDGER_RETURN_IF_ERROR(engine_.Reach(FaultPoint::kAfterWrite));
    return inner().RecordKey(record);
  }
  absl::Status Commit() override {
    LEDGER_RETURN_IF_ERROR(engine_.Reach(FaultPoint::kCommit));
    absl::Status lost = engine_.Reach(FaultPoint::kCommitReplyLost);
    LEDGER_RETURN_IF_ERROR(inner().Commit());
    if (!lost.ok()) return InDoubtError(std::string(lost.message()));
    return absl::OkStatus();
  }

 private:
  FaultInjectingEngine& engine_;
};

}  // namespace

FaultInjectingEngine::FaultInjectingEngine(std::shared_ptr<Engine> inner)
    : ForwardingEngine(std::move(inner)) {}

void FaultInjectingEngine::FailAt(FaultPoint point, absl::Status error, int times) {
  absl::MutexLock lock(&mutex_);
  faults_[point] = Fault{std::move(error), times};
}

void FaultInjectingEngine::SetHook(FaultPoint point, std::function<void()> hook) {
  absl::MutexLock lock(&mutex_);
  hooks_[point] = std::move(hook);
}

void FaultInjectingEngine::Clear() {
  absl::MutexLock lock(&mutex_);
  faults_.clear();
  hooks_.clear();
}

absl::Status FaultInjectingEngine::Reach(FaultPoint point) {
  std::function<void()> hook;
  absl::Status fault;
  {
    absl::MutexLock lock(&mutex_);
    if (auto it = hooks_.find(point); it != hooks_.end()) hook = it->second;
    if (auto it = faults_.find(point); it != faults_.end() && it->second.remaining > 0) {
      it->second.remaining -= 1;
      fault = it->second.error;
    }
  }
  if (hook) hook();  // outside the mutex: hooks block on latches
  return fault;
}

std::vector<absl::Duration> FaultInjectingEngine::claim_waits() {
  absl::MutexLock lock(&mutex_);
  return claim_waits_;
}

absl::StatusOr<std::unique_ptr<StorageTransaction>> FaultInjectingEngine::Begin(
    const BeginOptions& options) {
  {
    absl::MutexLock lock(&mutex_);
    claim_waits_.push_back(options.wait.wait_max);
  }
  LEDGER_RETURN_IF_ERROR(Reach(FaultPoint::kBegin));
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<StorageTransaction> inner, ForwardingEngine::Begin(options));
  return std::make_unique<FaultInjectingTransaction>(*this, std::move(inner));
}

}  // namespace ledger::testing
