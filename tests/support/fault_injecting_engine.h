// An Engine wrapper that injects faults and pauses at the points of the submit
// pipeline, for tests of error paths and races (LevelDB's ErrorEnv, for a ledger).
//
//   auto faulty = std::make_shared<FaultInjectingEngine>(std::move(engine));
//   faulty->FailAt(FaultPoint::kAfterWrite, absl::UnavailableError("connection lost"));
//   faulty->SetHook(FaultPoint::kAfterClaim, [&] { claimed.CountDown(); release.Wait(); });
//
// Faults make the StorageTransaction call at that point return the error (the pipeline
// then rolls back), except kCommitReplyLost, which commits for real and then reports
// InDoubtError, as a connection lost while the COMMIT reply was on its way would.
// Thread-safe.
#ifndef LEDGER_TESTS_SUPPORT_FAULT_INJECTING_ENGINE_H_
#define LEDGER_TESTS_SUPPORT_FAULT_INJECTING_ENGINE_H_

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ledger/engine.h"
#include "tests/support/forwarding_engine.h"

namespace ledger::testing {

enum class FaultPoint {
  kBegin,             // Engine::Begin
  kClaim,             // StorageTransaction::ClaimKey (before it runs)
  kAfterClaim,        // right after ClaimKey returned (hooks only: the key is held)
  kLockAccounts,      // before LockAccounts
  kWrite,             // before WriteTransaction: "before post"
  kAfterWrite,        // before RecordKey: "after post", entries written, key not recorded
  kCommit,            // before COMMIT: fails, rolled back, nothing written
  kCommitReplyLost,   // COMMIT succeeds, then InDoubtError is returned
};

class FaultInjectingEngine final : public ForwardingEngine {
 public:
  explicit FaultInjectingEngine(std::shared_ptr<Engine> inner);

  // The next `times` transactions reaching `point` fail there with `error`.
  void FailAt(FaultPoint point, absl::Status error, int times = 1);
  // Runs `hook` on the submitting thread each time a transaction reaches `point`
  // (before any fault there). Replaces an earlier hook at that point.
  void SetHook(FaultPoint point, std::function<void()> hook);
  void Clear();
  // The claim wait (BeginOptions::wait) of every transaction begun so far, in order.
  std::vector<absl::Duration> claim_waits();

  // Called by the wrapped transactions.
  absl::Status Reach(FaultPoint point);

  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin(const BeginOptions& options) override;

 private:
  struct Fault {
    absl::Status error;
    int remaining = 0;
  };
  absl::Mutex mutex_;
  std::map<FaultPoint, Fault> faults_ ABSL_GUARDED_BY(mutex_);
  std::map<FaultPoint, std::function<void()>> hooks_ ABSL_GUARDED_BY(mutex_);
  std::vector<absl::Duration> claim_waits_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_SUPPORT_FAULT_INJECTING_ENGINE_H_
