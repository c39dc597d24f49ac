// Ledger::Open for tests whose options are fixed in the test itself: a rejection is a
// bug in the test, so it aborts with the reason instead of failing every expectation
// after it. Tests of the validation itself call Ledger::Open and look at the status.
#ifndef LEDGER_TESTS_SUPPORT_OPEN_LEDGER_H_
#define LEDGER_TESTS_SUPPORT_OPEN_LEDGER_H_

#include <cstdlib>
#include <iostream>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "ledger/engine.h"
#include "ledger/ledger.h"

namespace ledger::testing {

inline Ledger OpenTestLedger(std::shared_ptr<Engine> engine, LedgerOptions options = {}) {
  absl::StatusOr<Ledger> ledger = Ledger::Open(std::move(engine), std::move(options));
  if (!ledger.ok()) {
    std::cerr << "the test's own ledger options were rejected: " << ledger.status() << "\n";
    std::abort();
  }
  return *std::move(ledger);
}

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_SUPPORT_OPEN_LEDGER_H_
