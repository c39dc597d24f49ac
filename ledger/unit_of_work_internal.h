// What a unit of work (ledger/unit_of_work.h) shares with the submit pipeline: its one
// storage transaction and the first error any statement in it returned. Internal to
// ledger/. Not thread-safe: a unit of work belongs to the thread running Transact.
#ifndef LEDGER_LEDGER_UNIT_OF_WORK_INTERNAL_H_
#define LEDGER_LEDGER_UNIT_OF_WORK_INTERNAL_H_

#include <memory>

#include "absl/status/status.h"
#include "ledger/engine.h"

namespace ledger::internal {

struct UnitOfWorkState {
  // The engine's transaction, begun by Transact, committed or rolled back only by it.
  std::unique_ptr<StorageTransaction> transaction;
  // The first error of a statement in the transaction (the ledger's or the caller's):
  // from then on the transaction can only roll back, and every later call refuses.
  absl::Status failure;
  // Set once the caller took the native handle: its statements bypass `failure`, so
  // Transact asks the engine whether the transaction is still usable before COMMIT.
  bool native_handle_lent = false;
};

// The unit of work's transaction as one batch attempt sees it: every call goes to
// `unit.transaction` and its first error is kept in `unit.failure`; Commit and Rollback
// do nothing (the work goes on after the submit; Transact ends the transaction).
std::unique_ptr<StorageTransaction> JoinTransaction(UnitOfWorkState& unit);

}  // namespace ledger::internal

#endif  // LEDGER_LEDGER_UNIT_OF_WORK_INTERNAL_H_
