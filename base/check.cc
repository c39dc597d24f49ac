#include "base/check.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ledger::internal {

CheckFailure::CheckFailure(const char* condition, const char* file, int line)
    : condition_(condition), file_(file), line_(line) {}

CheckFailure::~CheckFailure() {
  const std::string message = message_.str();
  std::fprintf(stderr, "ledger: check failed at %s:%d: %s%s%s\n", file_, line_, condition_,
               message.empty() ? "" : ": ", message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace ledger::internal
