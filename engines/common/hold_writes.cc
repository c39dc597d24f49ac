#include "engines/common/hold_writes.h"

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "engines/common/error_table.h"

namespace ledger::engine_common {

bool SettlesHold(OperationKind kind) {
  return kind == OperationKind::kCapture || kind == OperationKind::kVoid ||
         kind == OperationKind::kExpire;
}

absl::Status CheckHoldFields(std::string_view engine, const Transaction& transaction) {
  const bool is_hold = transaction.kind == OperationKind::kHold;
  const bool settles = SettlesHold(transaction.kind);
  if (transaction.hold.has_value() == is_hold && transaction.hold_id.has_value() == settles) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      View(engine), ": transaction ", transaction.id, " of kind ",
      View(OperationKindName(transaction.kind)),
      transaction.hold.has_value() != is_hold
          ? (is_hold ? " has no hold terms" : " carries hold terms")
          : (settles ? " names no hold" : " names a hold it cannot settle")));
}

absl::StatusOr<HoldStatus> SettledStatus(std::string_view engine, OperationKind kind) {
  switch (kind) {
    case OperationKind::kCapture:
      return HoldStatus::kCaptured;
    case OperationKind::kVoid:
      return HoldStatus::kVoided;
    case OperationKind::kExpire:
      return HoldStatus::kExpired;
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      View(engine), ": a ", View(OperationKindName(kind)), " transaction cannot settle a hold"));
}

absl::Status HoldNotPendingError(std::string_view engine, std::string_view hold_id) {
  return StatusForError(ErrorClass::kUniqueViolation, ErrorPhase::kWrite,
                        absl::StrCat(View(engine), ": hold ", View(hold_id), " is not pending"));
}

}  // namespace ledger::engine_common
