// The property suite: exactly-once, conservation and solvency under retries, duplicate
// deliveries, conflicts, rejections retried later, reversals, faults at the engine
// boundary, killed sessions, server restarts and concurrent clients. Every engine runs
// it unchanged (docs/testing.md says what each test proves and how to replay a seed).
#include "tests/property/property_suite.h"

#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/conformance/conformance_context.h"

namespace ledger::property {
namespace {

constexpr size_t kSoakConcurrentSeedsMax = 5;

void Log(const PropertyContext& context, const std::string& test_name, uint64_t seed,
         const std::string& what, absl::Duration took, const RunStats& stats) {
  std::cout << "[ property ] " << context.engine_name << " " << test_name << " seed " << seed
            << ": " << what << " in "
            << absl::FormatDuration(absl::Trunc(took, absl::Milliseconds(1))) << "\n             "
            << stats.ToText() << std::endl;
}

}  // namespace

std::string PropertyContextName(const ::testing::TestParamInfo<PropertyContextFactory>& info) {
  return info.param().engine_name;
}

void PropertyTest::SetUp() {
  context_ = GetParam()();
  if (context_.unavailable_reason.empty()) return;
  if (testing::RunningInCi()) {
    FAIL() << context_.engine_name << " is required under CI=true: " << context_.unavailable_reason;
  }
  GTEST_SKIP() << context_.engine_name << " skipped: " << context_.unavailable_reason;
}

std::string PropertyTest::KillsUnavailable() const {
  if (context_.kill_sessions_in_transaction && context_.kill_one_busy_session &&
      context_.kill_all_sessions) {
    return "";
  }
  return "no server sessions to kill on this engine (real kills are for PostgreSQL and MariaDB)";
}

std::string PropertyTest::RestartUnavailable() const {
  if (!context_.restart_server) return "no server to restart on this engine";
  return context_.restart_unavailable_reason;
}

void PropertyTest::RunSeeds(const std::string& test_name, uint64_t base_seed,
                            WorkloadOptions workload, const SequentialOptions& options, bool shrink,
                            int seed_count) {
  PropertyBudget budget =
      BudgetFromEnvironment(base_seed, seed_count > 0 ? seed_count : context_.default_seed_count);
  workload.steps = budget.steps;
  for (uint64_t seed : budget.seeds) {
    Universe universe = MakeUniverse(seed);
    std::vector<Step> steps = GenerateWorkload(seed, universe, workload);
    absl::Time start = absl::Now();
    SequentialOptions run_options = options;
    run_options.checkpoint_every = context_.checkpoint_every;
    RunResult result = RunSequential(context_, universe, steps, budget.keep_steps, run_options);
    size_t ran = budget.keep_steps.empty() ? steps.size() : budget.keep_steps.size();
    Log(context_, test_name, seed, absl::StrCat(ran, " steps"), absl::Now() - start, result.stats);
    if (!result.violation.has_value()) continue;
    std::optional<ShrinkResult> shrunk;
    if (shrink) {
      shrunk = Shrink(context_, universe, steps, budget.keep_steps, *result.violation, run_options,
                      absl::Seconds(budget.shrink_seconds_max));
    }
    ADD_FAILURE() << FailureReport(context_.engine_name, test_name, seed, steps, *result.violation,
                                   shrunk);
    return;
  }
}

void PropertyTest::RunConcurrentSeeds(const std::string& test_name, uint64_t base_seed,
                                      ConcurrentOptions options) {
  PropertyBudget budget = BudgetFromEnvironment(base_seed, 1);
  options.threads = budget.threads;
  options.requests_per_thread = budget.requests_per_thread;
  options.phases = budget.phases;
  size_t seeds =
      budget.soak ? std::min(budget.seeds.size(), kSoakConcurrentSeedsMax) : budget.seeds.size();
  for (size_t i = 0; i < seeds; ++i) {
    uint64_t seed = budget.seeds[i];
    absl::Time start = absl::Now();
    RunResult result = RunConcurrent(context_, MakeUniverse(seed), seed, options);
    Log(context_, test_name, seed,
        absl::StrCat(options.phases, " phases of ", options.threads, " clients x ",
                     options.requests_per_thread, " requests"),
        absl::Now() - start, result.stats);
    if (result.violation.has_value()) {
      ADD_FAILURE() << "PROPERTY VIOLATED on " << context_.engine_name << ", seed " << seed
                    << ":\n  " << result.violation->message
                    << "\nthe workload replays with (the interleaving is up to the scheduler):\n  "
                    << ReplayCommand(test_name, seed);
      return;
    }
  }
}

// Memory and SQLite have no server to break: they do not instantiate ServerFaultTest.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ServerFaultTest);

// ---- single client: the exact model ---------------------------------------------------

// Random operations over a few hundred accounts with hot spots; client retries with the
// same key, duplicate deliveries, conflicting payloads, rejections retried later,
// reversals (of reversals, twice, of nothing), velocity limits, key expiry, and faults
// at every point of the pipeline (before the claim, after posting, during COMMIT with
// the reply lost; retryable ones the ledger absorbs). Every answer equals the model's.
TEST_P(PropertyTest, SingleClientAnswersMatchTheModelUnderRetriesAndBoundaryFaults) {
  RunSeeds("SingleClientAnswersMatchTheModelUnderRetriesAndBoundaryFaults", 1000,
           WorkloadOptions{.boundary_faults = true}, SequentialOptions{});
}

// The same with the client's own backend session killed mid-transaction (after the
// claim, before the lock, before/after posting, right before COMMIT) and every
// session killed between submits: a killed attempt wrote nothing, the pool reconnects,
// and the resend commits exactly once.
TEST_P(ServerFaultTest, SingleClientMatchesTheModelWhenSessionsAreKilledMidTransaction) {
  if (std::string reason = KillsUnavailable(); !reason.empty()) FAIL() << reason;
  RunSeeds("SingleClientMatchesTheModelWhenSessionsAreKilledMidTransaction", 4000,
           WorkloadOptions{.boundary_faults = true, .kill_sessions = true}, SequentialOptions{});
}

// ---- concurrent clients: checked at quiescent points ------------------------------------

TEST_P(PropertyTest, ConcurrentClientsCommitEachKeyOnceAtEveryQuiescentPoint) {
  RunConcurrentSeeds("ConcurrentClientsCommitEachKeyOnceAtEveryQuiescentPoint", 2000,
                     ConcurrentOptions{});
}

TEST_P(PropertyTest, ConcurrentClientsUnderBoundaryFaultsLoseNoCommitAndPostNothingTwice) {
  RunConcurrentSeeds("ConcurrentClientsUnderBoundaryFaultsLoseNoCommitAndPostNothingTwice", 3000,
                     ConcurrentOptions{.boundary_faults = true});
}

// Random victims: whatever session is running a statement or holds a transaction,
// possibly in the middle of its COMMIT (a real in-doubt commit).
TEST_P(ServerFaultTest, ConcurrentClientsWithKilledSessionsLoseNoCommitAndPostNothingTwice) {
  if (std::string reason = KillsUnavailable(); !reason.empty()) FAIL() << reason;
  RunConcurrentSeeds("ConcurrentClientsWithKilledSessionsLoseNoCommitAndPostNothingTwice", 5000,
                     ConcurrentOptions{.kill_sessions = true});
}

// ---- batches and group commit: the same checks --------------------------------------------

// Clients send batches of up to 8 (the workload's duplicate deliveries, conflicting
// payloads and racing reversals often land in one batch) under boundary faults that
// fail whole batches mid-way.
TEST_P(PropertyTest, BatchedClientsUnderBoundaryFaultsLoseNoCommitAndPostNothingTwice) {
  RunConcurrentSeeds("BatchedClientsUnderBoundaryFaultsLoseNoCommitAndPostNothingTwice", 7000,
                     ConcurrentOptions{.boundary_faults = true, .batch_size = 8});
}

TEST_P(PropertyTest, GroupCommittedClientsUnderBoundaryFaultsLoseNoCommitAndPostNothingTwice) {
  RunConcurrentSeeds("GroupCommittedClientsUnderBoundaryFaultsLoseNoCommitAndPostNothingTwice",
                     8000, ConcurrentOptions{.boundary_faults = true, .group_commit = true});
}

// Sessions killed mid-batch, possibly during its COMMIT.
TEST_P(ServerFaultTest, BatchedClientsWithKilledSessionsLoseNoCommitAndPostNothingTwice) {
  if (std::string reason = KillsUnavailable(); !reason.empty()) FAIL() << reason;
  RunConcurrentSeeds("BatchedClientsWithKilledSessionsLoseNoCommitAndPostNothingTwice", 9000,
                     ConcurrentOptions{.kill_sessions = true, .batch_size = 8});
}

// A killed session fails a shared transaction: every caller whose submit rode on it is
// faulted (in doubt if the kill hit its COMMIT), none of the others.
TEST_P(ServerFaultTest, GroupCommittedClientsWithKilledSessionsLoseNoCommitAndPostNothingTwice) {
  if (std::string reason = KillsUnavailable(); !reason.empty()) FAIL() << reason;
  RunConcurrentSeeds("GroupCommittedClientsWithKilledSessionsLoseNoCommitAndPostNothingTwice",
                     9100, ConcurrentOptions{.kill_sessions = true, .group_commit = true});
}

// ---- server restarts (ctest runs these alone: they stop the shared server) --------------

// One restart while a submit holds an open transaction, one between submits; then a
// concurrent phase during which a client restarts the server under the others, once
// with single submits, once with batches, once with group commit.
TEST_P(ServerFaultTest, ServerRestartMidRunReconnectsAndLosesNothing) {
  if (std::string reason = KillsUnavailable(); !reason.empty()) FAIL() << reason;
  if (std::string reason = RestartUnavailable(); !reason.empty()) {
    if (context().restart_server && testing::RunningInCi())
      FAIL() << "required under CI=true: " << reason;
    GTEST_SKIP() << reason;
  }
  RunSeeds("ServerRestartMidRunReconnectsAndLosesNothing", 6000,
           WorkloadOptions{.boundary_faults = false, .server_restarts = 2}, SequentialOptions{},
           /*shrink=*/false, /*seed_count=*/1);
  if (HasFailure()) return;
  RunConcurrentSeeds("ServerRestartMidRunReconnectsAndLosesNothing", 6000,
                     ConcurrentOptions{.restart_mid_phase = true});
  if (HasFailure()) return;
  RunConcurrentSeeds("ServerRestartMidRunReconnectsAndLosesNothing", 6100,
                     ConcurrentOptions{.restart_mid_phase = true, .batch_size = 8});
  if (HasFailure()) return;
  RunConcurrentSeeds("ServerRestartMidRunReconnectsAndLosesNothing", 6200,
                     ConcurrentOptions{.restart_mid_phase = true, .group_commit = true});
}

}  // namespace ledger::property
