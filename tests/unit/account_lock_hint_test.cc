// The account-lock hint (StorageTransaction::ExpectAccountLocks) is worked out only for
// an engine that takes it (TakesAccountLockHint): PostgreSQL locks the accounts in the
// claim's round trip; the others would pay a pass over the batch's plans for nothing.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engines/memory/memory_engine.h"
#include "gtest/gtest.h"
#include "ledger/ledger.h"
#include "tests/support/forwarding_engine.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {
namespace {

struct HintLog {
  bool takes_hint = false;
  std::vector<std::vector<std::string>> hints;  // one per ExpectAccountLocks call
};

class HintRecordingTransaction final : public ForwardingTransaction {
 public:
  HintRecordingTransaction(std::unique_ptr<StorageTransaction> inner, HintLog& log)
      : ForwardingTransaction(std::move(inner)), log_(log) {}
  void ExpectAccountLocks(const std::vector<std::string>& sorted_ids) override {
    log_.hints.push_back(sorted_ids);
    ForwardingTransaction::ExpectAccountLocks(sorted_ids);
  }
  bool TakesAccountLockHint() const override { return log_.takes_hint; }

 private:
  HintLog& log_;
};

class HintRecordingEngine final : public ForwardingEngine {
 public:
  using ForwardingEngine::ForwardingEngine;
  absl::StatusOr<std::unique_ptr<StorageTransaction>> Begin(const BeginOptions& options) override {
    absl::StatusOr<std::unique_ptr<StorageTransaction>> inner = ForwardingEngine::Begin(options);
    if (!inner.ok()) return inner;
    return std::make_unique<HintRecordingTransaction>(*std::move(inner), log);
  }
  HintLog log;
};

// Two transfers, each committed; returns the hints the engine was given.
std::vector<std::vector<std::string>> HintsOfTwoTransfers(bool takes_hint) {
  auto engine = std::make_shared<HintRecordingEngine>(OpenMemoryEngine());
  engine->log.takes_hint = takes_hint;
  Ledger ledger = OpenTestLedger(engine);
  EXPECT_TRUE(ledger.DefineAsset({"CREDITS", 0}).ok());
  EXPECT_TRUE(ledger.OpenAccount({.id = "issuance", .asset = "CREDITS", .allow_negative = true}).ok());
  EXPECT_TRUE(ledger.OpenAccount({.id = "bob", .asset = "CREDITS"}).ok());
  EXPECT_TRUE(ledger.OpenAccount({.id = "alice", .asset = "CREDITS"}).ok());
  for (const auto& [key, operation] :
       {std::pair{"t-1", Operation::TopUp("issuance", "alice", "CREDITS", 10)},
        std::pair{"t-2", Operation::Transfer("alice", "bob", "CREDITS", 4)}}) {
    absl::StatusOr<Outcome> outcome = ledger.Submit(SubmitRequest{.key = key, .operation = operation});
    EXPECT_TRUE(outcome.ok() && outcome->kind == OutcomeKind::kCommitted) << outcome.status();
  }
  return engine->log.hints;
}

TEST(AccountLockHint, AnEngineThatTakesItGetsEachSubmitsAccountsSorted) {
  const std::vector<std::vector<std::string>> expected = {{"alice", "issuance"}, {"alice", "bob"}};
  EXPECT_EQ(HintsOfTwoTransfers(/*takes_hint=*/true), expected);
}

TEST(AccountLockHint, AnEngineThatDoesNotTakeItIsNotGivenIt) {
  EXPECT_TRUE(HintsOfTwoTransfers(/*takes_hint=*/false).empty());
}

}  // namespace
}  // namespace ledger::testing
