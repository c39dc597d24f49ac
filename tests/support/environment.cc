#include <cstdlib>
#include <string>

#include "tests/conformance/conformance_context.h"

namespace ledger::testing {

std::string EnvironmentOrEmpty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

bool RunningInCi() { return EnvironmentOrEmpty("CI") == "true"; }

}  // namespace ledger::testing
