// What every engine checks and decides the same way when it writes a transaction
// that places or settles a hold (ledger/hold.h): whether its hold fields fit its kind,
// the status a settlement leaves the hold in, and the error when the hold was no longer
// pending.
//
// Internal to engines/. Thread-safe: pure functions.
#ifndef LEDGER_ENGINES_COMMON_HOLD_WRITES_H_
#define LEDGER_ENGINES_COMMON_HOLD_WRITES_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ledger/hold.h"
#include "ledger/transaction.h"

namespace ledger::engine_common {

// A capture, void or expire: the kinds whose transaction names the hold it settles.
bool SettlesHold(OperationKind kind);

// OK when a hold carries its terms and nothing else does, and a capture, void or expire
// names its hold_id and nothing else does; otherwise InvalidArgument naming `engine`
// and the transaction. Checked before anything is written.
absl::Status CheckHoldFields(std::string_view engine, const Transaction& transaction);

// The status a capture, void or expire leaves its hold in; InvalidArgument for any
// other kind.
absl::StatusOr<HoldStatus> SettledStatus(std::string_view engine, OperationKind kind);

// The settling UPDATE ... WHERE status = 'pending' matched no row: the hold was settled
// (or is missing) after the pipeline read it pending, a lost race like a taken hold_id.
// RetryableError, the error table's unique violation during the write: the rerun
// re-checks the hold and rejects or replays.
absl::Status HoldNotPendingError(std::string_view engine, std::string_view hold_id);

}  // namespace ledger::engine_common

#endif  // LEDGER_ENGINES_COMMON_HOLD_WRITES_H_
