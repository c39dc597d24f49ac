// The fixtures of the property suite, parameterized by an engine's PropertyContext
// factory (property_context.h). The tests themselves are in property_suite.cc; each
// engine's executable instantiates them with its context file: PropertyTest on every
// engine, ServerFaultTest on the server engines.
#ifndef LEDGER_TESTS_PROPERTY_PROPERTY_SUITE_H_
#define LEDGER_TESTS_PROPERTY_PROPERTY_SUITE_H_

#include <string>

#include "gtest/gtest.h"
#include "tests/property/concurrent_run.h"
#include "tests/property/property_context.h"
#include "tests/property/sequential_run.h"
#include "tests/property/workload.h"

namespace ledger::property {

class PropertyTest : public ::testing::TestWithParam<PropertyContextFactory> {
 protected:
  void SetUp() override;

  const PropertyContext& context() const { return context_; }
  // Why this engine cannot kill sessions / restart its server here ("" when it can).
  std::string KillsUnavailable() const;
  std::string RestartUnavailable() const;

  // The single-client property over the budget's seeds; the first failing seed is
  // shrunk (unless `shrink` is false) and reported with its replay commands.
  // `seed_count` 0: the context's default.
  void RunSeeds(const std::string& test_name, uint64_t base_seed, WorkloadOptions workload,
                const SequentialOptions& options, bool shrink = true, int seed_count = 0);
  // The concurrent property over the budget's concurrency seeds.
  void RunConcurrentSeeds(const std::string& test_name, uint64_t base_seed,
                          ConcurrentOptions options);

 private:
  PropertyContext context_;
};

// The real-fault campaign (killed sessions, server restarts): instantiated only by the
// engines that have a server (PostgreSQL, MySQL/MariaDB).
class ServerFaultTest : public PropertyTest {};

// Names a parameterized test after its context's engine ("postgres_row", not "1"):
//   INSTANTIATE_TEST_SUITE_P(postgres, PropertyTest, Values(&A, &B), PropertyContextName);
std::string PropertyContextName(const ::testing::TestParamInfo<PropertyContextFactory>& info);

}  // namespace ledger::property

#endif  // LEDGER_TESTS_PROPERTY_PROPERTY_SUITE_H_
