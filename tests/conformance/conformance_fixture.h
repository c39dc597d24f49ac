// The fixture of the ONE conformance suite. Each test gets a fresh database from the
// engine's context, wrapped in a FaultInjectingEngine, a ManualClock, a Ledger over
// them, and a small economy: assets USD/2 and CREDITS/0; accounts "issuance" (CREDITS,
// allow_negative), "alice", "bob", "carol" (CREDITS), "platform" (CREDITS),
// "payouts" (CREDITS, allow_negative) and "usd_wallet" (USD).
#ifndef LEDGER_TESTS_CONFORMANCE_CONFORMANCE_FIXTURE_H_
#define LEDGER_TESTS_CONFORMANCE_CONFORMANCE_FIXTURE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "base/clock.h"
#include "ledger/internal/testing_hooks.h"
#include "ledger/ledger.h"
#include "tests/conformance/conformance_context.h"
#include "tests/support/fault_injecting_engine.h"

namespace ledger::testing {

// Everything a submit could have written, to prove that a path wrote nothing.
struct Snapshot {
  std::vector<Account> accounts;
  std::vector<std::string> transaction_ids;
  std::vector<KeyRecord> keys;
  std::vector<OutboxEvent> events;
  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};

class ConformanceTest : public ::testing::TestWithParam<ContextFactory> {
 protected:
  void SetUp() override;
  void TearDown() override;

  Engine& engine() { return *faults_; }
  FaultInjectingEngine& faults() { return *faults_; }
  ManualClock& clock() { return clock_; }
  Ledger& ledger() { return *ledger_; }
  const ConformanceContext& context() const { return context_; }

  // A second Ledger over the same engine and clock, with other options.
  std::unique_ptr<Ledger> LedgerWith(LedgerOptions options);
  // A second Ledger over the same engine and clock that breaks every posting plan with
  // `tamper` just before the invariant checks (ledger/internal/testing_hooks.h).
  std::unique_ptr<Ledger> LedgerTamperingWithPlans(
      internal::LedgerTestingHooks::PlanTamperer tamper);

  // A second Ledger over the same clock and over `wrap` of the same engine (a test
  // wrapper, e.g. one that returns corrupt rows).
  using EngineWrapper = std::function<std::shared_ptr<Engine>(std::shared_ptr<Engine>)>;
  std::unique_ptr<Ledger> LedgerOverWrapped(const EngineWrapper& wrap);

  Snapshot TakeSnapshot();
  Amount BalanceOf(const std::string& account_id);
  // Gives `account_id` credits from issuance (asserts it committed).
  void Fund(const std::string& account_id, Amount amount);
  absl::StatusOr<Outcome> Submit(const std::string& key, const Operation& operation,
                                 ClaimOptions claim = {}, Scope scope = {});

 private:
  ConformanceContext context_;
  ManualClock clock_;
  std::shared_ptr<FaultInjectingEngine> faults_;
  std::unique_ptr<Ledger> ledger_;
  int fund_counter_ = 0;
};

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_CONFORMANCE_CONFORMANCE_FIXTURE_H_
