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

#include <memory>
#include <utility>

#include "absl/status/statusor.h"

#include "ledger/engine.h"
#include "ledger/ledger.h"

namespace ledger::internal {

class LedgerTestingHooks {
 public:
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
};

}  // namespace ledger::internal

#endif  // LEDGER_LEDGER_INTERNAL_TESTING_HOOKS_H_
