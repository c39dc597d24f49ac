// Run sizes from the environment: short by default so every engine's run stays within a
// few minutes of CI, long under LEDGER_PROPERTY_SOAK=1, one exact seed under
// LEDGER_PROPERTY_SEED.
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/conformance/conformance_context.h"
#include "tests/property/property_context.h"

namespace ledger::property {
namespace {

constexpr int kSoakSeedCount = 25;
constexpr int kSoakSteps = 2000;
constexpr int kSoakRequestsPerThread = 1000;
constexpr int kSoakPhases = 6;
constexpr double kSoakShrinkSecondsMax = 300;

// A positive integer from the environment, or `fallback` when unset or malformed.
int IntegerOr(const char* name, int fallback) {
  std::string text = testing::EnvironmentOrEmpty(name);
  int value = 0;
  if (text.empty() || !absl::SimpleAtoi(text, &value) || value <= 0) return fallback;
  return value;
}

std::vector<int> KeepSteps() {
  std::vector<int> steps;
  std::string text = testing::EnvironmentOrEmpty("LEDGER_PROPERTY_KEEP_STEPS");
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    int index = 0;
    if (absl::SimpleAtoi(part, &index) && index >= 0) steps.push_back(index);
  }
  return steps;
}

}  // namespace

PropertyBudget BudgetFromEnvironment(uint64_t base_seed, int default_seed_count) {
  PropertyBudget budget;
  budget.soak = testing::EnvironmentOrEmpty("LEDGER_PROPERTY_SOAK") == "1";
  int seed_count = default_seed_count;
  if (budget.soak) {
    // Fresh seeds every soak: coverage grows run after run; each failure prints its seed.
    base_seed = std::random_device()();
    seed_count = kSoakSeedCount;
    budget.steps = kSoakSteps;
    budget.requests_per_thread = kSoakRequestsPerThread;
    budget.phases = kSoakPhases;
    budget.shrink_seconds_max = kSoakShrinkSecondsMax;
  }
  budget.steps = IntegerOr("LEDGER_PROPERTY_STEPS", budget.steps);
  budget.threads = IntegerOr("LEDGER_PROPERTY_THREADS", budget.threads);
  budget.requests_per_thread = IntegerOr("LEDGER_PROPERTY_REQUESTS", budget.requests_per_thread);
  budget.phases = IntegerOr("LEDGER_PROPERTY_PHASES", budget.phases);
  budget.shrink_seconds_max =
      IntegerOr("LEDGER_PROPERTY_SHRINK_SECONDS", static_cast<int>(budget.shrink_seconds_max));
  budget.keep_steps = KeepSteps();

  uint64_t replay_seed = 0;
  std::string seed_text = testing::EnvironmentOrEmpty("LEDGER_PROPERTY_SEED");
  if (!seed_text.empty() && absl::SimpleAtoi(seed_text, &replay_seed)) {
    budget.seeds = {replay_seed};
    return budget;
  }
  for (int i = 0; i < seed_count; ++i) budget.seeds.push_back(base_seed + static_cast<uint64_t>(i));
  return budget;
}

std::string ReplayCommand(const std::string& test_name, uint64_t seed,
                          const std::vector<int>& keep_steps) {
  std::error_code error;
  std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", error);
  std::string command = absl::StrCat("LEDGER_PROPERTY_SEED=", seed);
  if (!keep_steps.empty()) {
    absl::StrAppend(&command, " LEDGER_PROPERTY_KEEP_STEPS=", absl::StrJoin(keep_steps, ","));
  }
  absl::StrAppend(&command, " ", error ? "<property executable>" : executable.string(),
                  " --gtest_filter='*", test_name, "*'");
  return command;
}

}  // namespace ledger::property
