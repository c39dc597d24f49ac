// The property suite must catch a broken ledger. These tests break it on purpose (on the
// memory engine) and assert that the checks report a violation, that the report shrinks
// to a few steps that still fail, and that the seed replays the failure exactly; and
// that engines broken in their holds (pending holds not counted, expired holds
// settleable) are caught too.
#include <cctype>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/barrier.h"
#include "absl/time/time.h"
#include "engines/memory/memory_engine.h"
#include "gtest/gtest.h"
#include "tests/support/open_ledger.h"
#include "tests/property/broken_engines.h"
#include "tests/property/concurrent_run.h"
#include "tests/property/database_reads.h"
#include "tests/property/sequential_run.h"
#include "tests/property/workload.h"

namespace ledger::property {
namespace {

constexpr uint64_t kSeed = 1000;  // the default seed of the single-client property test
constexpr int kSteps = 300;
// The broken hold engines: how many of the default seeds' full runs may be needed to hit
// the bug (each seed's 400 steps hold a few dozen holds), and the shrink budget.
constexpr uint64_t kBrokenEngineSeeds = 8;
constexpr int kBrokenEngineSteps = 400;
constexpr absl::Duration kBrokenEngineShrinkTime = absl::Seconds(10);

PropertyContext MemoryContext() {
  PropertyContext context;
  context.engine_name = "memory";
  context.open_fresh = []() -> absl::StatusOr<std::unique_ptr<Engine>> {
    return OpenMemoryEngine();
  };
  return context;
}

SequentialOptions SkippingTheClaim() {
  SequentialOptions options;
  options.skip_idempotency = true;
  return options;
}

// Everything of a violation but the random transaction ids it quotes: "time-ordered
// UUIDv7 text", 36 characters of hex digits and dashes, becomes <id>.
std::string Essence(const Violation& violation) {
  std::string text = absl::StrCat(violation.step_index, ": ", violation.message);
  auto is_id_char = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) || c == '-'; };
  std::string out;
  for (size_t i = 0; i < text.size();) {
    size_t end = i;
    while (end < text.size() && is_id_char(text[end])) ++end;
    if (end - i == 36) {
      out += "<id>";
      i = end;
    } else {
      out += text[i++];
    }
  }
  return out;
}

TEST(PropertySelfTest, SkippingTheClaimMakesTheSingleClientPropertyFail) {
  PropertyContext context = MemoryContext();
  Universe universe = MakeUniverse(kSeed);
  std::vector<Step> steps = GenerateWorkload(kSeed, universe, {.steps = kSteps});

  RunResult honest = RunSequential(context, universe, steps, {}, SequentialOptions{});
  ASSERT_FALSE(honest.violation.has_value()) << honest.violation->message;

  RunResult broken = RunSequential(context, universe, steps, {}, SkippingTheClaim());
  ASSERT_TRUE(broken.violation.has_value()) << "the property run missed a ledger without claims";
  std::cout << FailureReport("memory (skip_idempotency)", "SelfTest", kSeed, steps,
                             *broken.violation, std::nullopt);
}

TEST(PropertySelfTest, AFailureShrinksToFewStepsThatStillFailAndItsSeedReplaysIt) {
  PropertyContext context = MemoryContext();
  Universe universe = MakeUniverse(kSeed);
  std::vector<Step> steps = GenerateWorkload(kSeed, universe, {.steps = kSteps});
  RunResult broken = RunSequential(context, universe, steps, {}, SkippingTheClaim());
  ASSERT_TRUE(broken.violation.has_value());

  // The seed alone replays it: same workload, same failing step, same complaint.
  std::vector<Step> again = GenerateWorkload(kSeed, MakeUniverse(kSeed), {.steps = kSteps});
  ASSERT_EQ(again.size(), steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    int index = static_cast<int>(i);
    ASSERT_EQ(DescribeStep(index, again[i]), DescribeStep(index, steps[i]));
  }
  RunResult replayed = RunSequential(context, MakeUniverse(kSeed), again, {}, SkippingTheClaim());
  ASSERT_TRUE(replayed.violation.has_value());
  EXPECT_EQ(Essence(*replayed.violation), Essence(*broken.violation));

  ShrinkResult shrunk = Shrink(context, universe, steps, {}, *broken.violation, SkippingTheClaim(),
                               absl::Seconds(60));
  std::cout << FailureReport("memory (skip_idempotency)", "SelfTest", kSeed, steps,
                             *broken.violation, shrunk);
  EXPECT_LE(shrunk.indexes.size(), 5u) << "a retry committing twice needs two submits";
  RunResult kept = RunSequential(context, universe, steps, shrunk.indexes, SkippingTheClaim());
  ASSERT_TRUE(kept.violation.has_value()) << "the shrunk steps no longer fail";
  EXPECT_EQ(Essence(*kept.violation), Essence(shrunk.violation));
}

// Runs the single-client property over the default seeds with the engine wrapped by
// `wrap` until one fails; returns that seed's report (shrunk briefly), or "" if none failed.
std::string FirstFailureWith(
    const std::string& name,
    const std::function<std::shared_ptr<Engine>(std::shared_ptr<Engine>)>& wrap) {
  PropertyContext context = MemoryContext();
  SequentialOptions options;
  options.wrap_engine = wrap;
  for (uint64_t seed = kSeed; seed < kSeed + kBrokenEngineSeeds; ++seed) {
    Universe universe = MakeUniverse(seed);
    std::vector<Step> steps = GenerateWorkload(seed, universe, {.steps = kBrokenEngineSteps});
    RunResult broken = RunSequential(context, universe, steps, {}, options);
    if (!broken.violation.has_value()) continue;
    ShrinkResult shrunk = Shrink(context, universe, steps, {}, *broken.violation, options,
                                 kBrokenEngineShrinkTime);
    std::string report = FailureReport(name, "SelfTest", seed, steps, *broken.violation, shrunk);
    std::cout << report;
    return report;
  }
  return "";
}

// An engine that counts every pending hold as lapsed inside a submit lets a debit spend
// what a hold reserved: the model expected insufficient funds.
TEST(PropertySelfTest, AnEngineThatDoesNotCountPendingHoldsLetsAccountsOverspendAndIsCaught) {
  std::string report = FirstFailureWith("memory (pending holds not counted)",
                                        [](std::shared_ptr<Engine> engine) {
                                          return std::make_shared<UncountedHoldsEngine>(engine);
                                        });
  ASSERT_FALSE(report.empty()) << "the property run missed an overspending engine";
  EXPECT_TRUE(absl::StrContains(report, "insufficient_funds")) << report;
}

// An engine that loses expires_at when a submit loads a hold lets a capture or void go
// through after the expiry, before a sweep: the model expected hold_expired.
TEST(PropertySelfTest, AnEngineThatLetsAnExpiredHoldBeSettledIsCaught) {
  std::string report =
      FirstFailureWith("memory (expired holds settleable)", [](std::shared_ptr<Engine> engine) {
        return std::make_shared<CapturableAfterExpiryEngine>(engine);
      });
  ASSERT_FALSE(report.empty()) << "the property run missed a capture after expires_at";
  EXPECT_TRUE(absl::StrContains(report, "hold_expired")) << report;
}

// Two deliveries of one request race; the broken engine claims in a separate
// transaction, so both find the key unused (they meet at a barrier right after the
// claim) and both post. The concurrency checker must see it, from the answers and from
// the database.
TEST(PropertySelfTest, ClaimingInASeparateTransactionLetsRacingDeliveriesPostTwiceAndIsCaught) {
  Universe universe = MakeUniverse(kSeed);
  absl::Barrier both_claimed(2);
  auto engine = std::make_shared<SplitClaimEngine>(std::shared_ptr<Engine>(OpenMemoryEngine()),
                                                   [&](const KeyIdentity& identity) {
                                                     if (identity.key == "race")
                                                       both_claimed.Block();
                                                   });
  Ledger ledger = ledger::testing::OpenTestLedger(engine);
  ASSERT_TRUE(OpenUniverse(ledger, universe).ok());
  Request request{"race", Scope{"acme", "api"},
                  Operation::TopUp(universe.issuance, universe.credit_wallets[0], kCredits, 500)};

  std::vector<Attempt> attempts = {MakeAttempt(request), MakeAttempt(request)};
  std::vector<std::thread> clients;
  for (Attempt& attempt : attempts) {
    clients.emplace_back([&ledger, &attempt] { attempt.result = ledger.Submit(attempt.request); });
  }
  for (std::thread& client : clients) client.join();

  ConcurrencyChecker answers;
  std::string from_answers = answers.TakeAnswers(attempts, /*faults_allowed=*/false);
  EXPECT_TRUE(absl::StrContains(from_answers, "posted twice") ||
              absl::StrContains(from_answers, "acknowledged as committed 2 times"))
      << from_answers;
  std::string from_database = answers.CheckDatabase(*engine, 1, ClockStart());
  EXPECT_FALSE(from_database.empty()) << "the database check missed a key posted twice";
  std::cout << "caught from the answers: " << from_answers
            << "\ncaught from the database: " << from_database << std::endl;
}

}  // namespace
}  // namespace ledger::property
