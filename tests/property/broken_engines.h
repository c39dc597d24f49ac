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
// UncountedHoldsEngine does not count pending holds inside a submit: its LoadHoldTotals
// reports the pending holds of a locked account as lapsed (all but those the submit
// settles), as a mistaken expiry comparison would. The ledger then takes the whole
// balance as available and lets a debit spend what a hold reserved (overspend).
//
// CapturableAfterExpiryEngine loses a hold's expires_at when a submit loads it
// (LoadHolds), as a column left out of the submit path's query would (the sweep's reads
// stay right): a capture or void after the expiry but before a sweep records it goes
// through instead of being refused hold_expired.
//
// Thread-safe as far as the wrapped engine is.
#ifndef LEDGER_TESTS_PROPERTY_BROKEN_ENGINES_H_
#define LEDGER_TESTS_PROPERTY_BROKEN_ENGINES_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

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

class UncountedHoldsEngine final : public ForwardingEngine {
 public:
  explicit UncountedHoldsEngine(std::shared_ptr<Engine> inner)
      : ForwardingEngine(std::move(inner)) {}
  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin(const BeginOptions& options) override;
};

class CapturableAfterExpiryEngine final : public ForwardingEngine {
 public:
  explicit CapturableAfterExpiryEngine(std::shared_ptr<Engine> inner)
      : ForwardingEngine(std::move(inner)) {}
  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin(const BeginOptions& options) override;
};

}  // namespace ledger::property

#endif  // LEDGER_TESTS_PROPERTY_BROKEN_ENGINES_H_
