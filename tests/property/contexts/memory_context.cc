// The property suite on the memory engine.
#include "engines/memory/memory_engine.h"
#include "tests/property/property_suite.h"

namespace ledger::property {
namespace {

PropertyContext MemoryContext() {
  PropertyContext context;
  context.engine_name = "memory";
  context.default_seed_count = 8;  // milliseconds per seed: more seeds, more coverage
  context.open_fresh = []() -> absl::StatusOr<std::unique_ptr<Engine>> {
    return OpenMemoryEngine();
  };
  return context;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(memory, PropertyTest, ::testing::Values(&MemoryContext),
                         PropertyContextName);

}  // namespace ledger::property
