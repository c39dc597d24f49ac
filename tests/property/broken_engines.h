// Deliberately broken engines, for the self-tests that prove the property suite catches
// a ledger that is not exactly-once. Test-only; never link outside tests/property/.
//
// SplitClaimEngine claims in a SEPARATE short transaction: it reads the key record and
// releases the claim at once, so the submit transaction that posts never holds the key.
// A single client sees nothing wrong; two racing deliveries of one key both find it
// unused and both post (it also drops the engine's refusal to overwrite the first
// racer's live key record). `after_claim` runs after each separate claim (the self-test
// parks both racers there so they interleave deterministically).
//
// Thread-safe as far as the wrapped engine is.
#ifndef LEDGER_TESTS_PROPERTY_BROKEN_ENGINES_H_
#define LEDGER_TESTS_PROPERTY_BROKEN_ENGINES_H_

#include <functional>
#include <memory>

#include "ledger/engine.h"
#include "tests/support/forwarding_engine.h"

namespace ledger::property {

using ::ledger::testing::ForwardingEngine;

class SplitClaimEngine final : public ForwardingEngine {
 public:
  SplitClaimEngine(std::shared_ptr<Engine> inner,
                   std::function<void(const KeyIdentity&)> after_claim)
      : ForwardingEngine(std::move(inner)), after_claim_(std::move(after_claim)) {}

  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin(const BeginOptions& options) override;

 private:
  std::function<void(const KeyIdentity&)> after_claim_;
};

}  // namespace ledger::property

#endif  // LEDGER_TESTS_PROPERTY_BROKEN_ENGINES_H_
