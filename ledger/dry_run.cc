// Ledger::DryRun and Ledger::DryRunBatch: a submit decided in a unit of work that is
// always rolled back. No second pipeline: the unit runs the very RunBatch a submit runs
// (claims, locks, rules, invariant checks, the writes themselves), and the rollback is
// what makes it dry. The decision is taken from inside the unit, before the rollback.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "base/check.h"
#include "base/status.h"
#include "ledger/ledger.h"
#include "ledger/unit_of_work.h"

namespace ledger {
namespace {

// What the dry run's work returns so that Transact rolls back: never retryable, and
// told apart from every other error by its message.
constexpr char kRolledBackOnPurpose[] = "a dry run always rolls back";

absl::Status RollBackOnPurpose() { return absl::CancelledError(kRolledBackOnPurpose); }

bool RolledBackOnPurpose(const absl::Status& status) {
  return absl::IsCancelled(status) && status.message() == kRolledBackOnPurpose;
}

// The unit's claim wait: the least of the items' waits, as a batch claims with (a
// negative wait is an item's own bad input, decided without the database).
TransactOptions DryRunOptions(const SubmitBatchRequest& batch) {
  TransactOptions options;
  bool any = false;
  for (const SubmitRequest& request : batch.items) {
    const absl::Duration wait = request.claim.wait.wait_max;
    if (wait < absl::ZeroDuration()) continue;
    options.claim_wait.wait_max = any ? std::min(options.claim_wait.wait_max, wait) : wait;
    any = true;
  }
  return options;
}

}  // namespace

absl::StatusOr<Outcome> Ledger::DryRun(const SubmitRequest& request) {
  SubmitBatchRequest batch;
  batch.items.push_back(request);
  LEDGER_ASSIGN_OR_RETURN(std::vector<SubmitResult> results, DryRunBatch(batch));
  LEDGER_CHECK(results.size() == 1) << "a dry run of one request gave " << results.size();
  return std::move(results.front());
}

absl::StatusOr<std::vector<SubmitResult>> Ledger::DryRunBatch(const SubmitBatchRequest& batch) {
  // The last run's decisions: a deadlock reruns the work, and only the run that ended
  // with the planned rollback counts.
  std::optional<absl::StatusOr<std::vector<SubmitResult>>> decided;
  absl::Status status = Transact(
      [&](UnitOfWork& unit) -> absl::Status {
        decided = unit.SubmitBatch(batch);
        return RollBackOnPurpose();
      },
      DryRunOptions(batch));
  // Transact never commits a work that returned an error; OK here would mean it did.
  LEDGER_CHECK(!status.ok()) << "a dry run committed";
  if (!RolledBackOnPurpose(status)) return status;  // the unit failed: a claim wait, a fault
  LEDGER_CHECK(decided.has_value()) << "a dry run rolled back before deciding";
  if (decided->ok()) {
    LEDGER_CHECK(decided->value().size() == batch.items.size())
        << "a dry run of " << batch.items.size() << " items gave " << decided->value().size();
  }
  return *std::move(decided);
}

}  // namespace ledger
