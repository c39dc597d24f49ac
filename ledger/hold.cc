#include "ledger/hold.h"

#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace ledger {

std::string_view HoldStatusName(HoldStatus status) {
  switch (status) {  // no default: -Wswitch reports a status without a name
    case HoldStatus::kPending: return "pending";
    case HoldStatus::kCaptured: return "captured";
    case HoldStatus::kVoided: return "voided";
    case HoldStatus::kExpired: return "expired";
  }
  return "unknown";
}

absl::StatusOr<HoldStatus> ParseHoldStatus(std::string_view name) {
  for (HoldStatus status : {HoldStatus::kPending, HoldStatus::kCaptured, HoldStatus::kVoided,
                            HoldStatus::kExpired}) {
    if (HoldStatusName(status) == name) return status;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown hold status \"", View(name), "\""));
}

}  // namespace ledger
