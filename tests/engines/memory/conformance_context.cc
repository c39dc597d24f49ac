#include "engines/memory/memory_engine.h"
#include "tests/conformance/conformance_fixture.h"

namespace ledger::testing {
namespace {

ConformanceContext MemoryContext() {
  ConformanceContext context;
  context.engine_name = "memory";
  context.one_open_submit_at_a_time = true;  // a submit holds the state lock until it ends
  context.open_fresh = []() -> absl::StatusOr<std::unique_ptr<Engine>> { return OpenMemoryEngine(); };
  // No server-side controls: nothing to lose in process, one writer at a time, and no
  // constraint to defer, so COMMIT cannot fail.
  return context;
}

INSTANTIATE_TEST_SUITE_P(memory, ConformanceTest, ::testing::Values(&MemoryContext));

}  // namespace
}  // namespace ledger::testing
