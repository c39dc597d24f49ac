#include "idempotency/stores.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace ledger {

// The names are the values of the work_claims.state column in every engine's schema.
std::string_view WorkStateName(WorkState state) {
  switch (state) {
    case WorkState::kPending: return "pending";
    case WorkState::kCompleted: return "completed";
    case WorkState::kAbandoned: return "abandoned";
  }
  return "unknown";
}

absl::StatusOr<WorkState> ParseWorkState(std::string_view name) {
  for (WorkState state : {WorkState::kPending, WorkState::kCompleted, WorkState::kAbandoned}) {
    if (WorkStateName(state) == name) return state;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown work state '", std::string(name), "'"));
}

}  // namespace ledger
