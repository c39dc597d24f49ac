// Hooks for tests and benchmarks that production code must not reach by accident.
// This header is not installed with ledger::core, and scripts/check-layering.sh fails
// when anything outside ledger/, tests/ and bench/ includes a file from ledger/internal/.
//
//   absl::StatusOr<ledger::Ledger> raw =
//       ledger::internal::LedgerTestingHooks::OpenWithoutIdempotency(engine);
//
// Thread-safe as the Ledger it returns.
#ifndef LEDGER_LEDGER_INTERNAL_TESTING_HOOKS_H_
#define LEDGER_LEDGER_INTERNAL_TESTING_HOOKS_H_

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

#include "ledger/engine.h"
#include "ledger/ledger.h"

namespace ledger::internal {

class LedgerTestingHooks {
 public:
  // The ledger's engine, for a benchmark's or a test's own reads (programs use Ledger's
  // reads; the library hands its engine to nobody else).
  static Engine& EngineOf(Ledger& ledger) { return *ledger.engine_; }

  // UNSAFE: a ledger whose submits neither claim nor record their key, so a retry posts
  // again. Benchmarks use it as the "raw" floor that prices exactly-once; the property
  // suite's self-test uses it to prove the suite catches a broken ledger.
  // Options are checked as by Ledger::Open.
  static absl::StatusOr<Ledger> OpenWithoutIdempotency(std::shared_ptr<Engine> engine,
                                                       LedgerOptions options = {}) {
    absl::StatusOr<Ledger> ledger = Ledger::Open(std::move(engine), std::move(options));
    if (ledger.ok()) ledger->skip_idempotency_ = true;
    return ledger;
  }

  // A ledger that hands each submit's posting plan (the transaction with its entries,
  // and the accounts as they are about to be written) to `tamper` just before the
  // invariant checks of ledger/invariants.h, so tests can feed the real pipeline a
  // broken plan and see it stopped with nothing written.
  using PlanTamperer = std::function<void(Transaction&, std::vector<Account>&)>;
  static absl::StatusOr<Ledger> OpenTamperingWithPlans(std::shared_ptr<Engine> engine,
                                                       PlanTamperer tamper,
                                                       LedgerOptions options = {}) {
    absl::StatusOr<Ledger> ledger = Ledger::Open(std::move(engine), std::move(options));
    if (ledger.ok()) ledger->tamper_plan_ = std::move(tamper);
    return ledger;
  }
};

}  // namespace ledger::internal

#endif  // LEDGER_LEDGER_INTERNAL_TESTING_HOOKS_H_
