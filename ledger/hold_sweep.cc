// Ledger::ExpireHolds: records the expiry of lapsed holds. Until it runs, a lapsed hold
// already reserves nothing (the ledger subtracts it when it reads or checks an account);
// the sweep makes the stored pending amounts and the hold's status say so, and gives
// consumers an expire transaction and its event.
//
// An expiry is an item of the one write pipeline (ledger/batch_attempt.h), without a key:
// a page of lapsed holds is a batch of expire items run by RunBatch, with its retries,
// its lock order, the settlement plan's rules (ledger/item_plans.h) and the invariant
// checks (ledger/invariants.h) of every submit.
#include <vector>

#include "base/check.h"
#include "base/status.h"
#include "ledger/batch_attempt.h"
#include "ledger/ledger.h"

namespace ledger {
namespace {

// Holds per sweep transaction: bounds one transaction's locks and writes.
constexpr int64_t kExpireHoldsPageMax = 100;

}  // namespace

absl::StatusOr<int64_t> Ledger::ExpireHolds() {
  int64_t total = 0;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(std::vector<Hold> lapsed,
                            engine_->ListLapsedHolds(clock_->Now(), kExpireHoldsPageMax));
    if (lapsed.empty()) return total;
    LEDGER_ASSIGN_OR_RETURN(int64_t expired, ExpireHoldPage(lapsed));
    total += expired;
    if (static_cast<int64_t>(lapsed.size()) < kExpireHoldsPageMax) return total;
  }
}

absl::StatusOr<int64_t> Ledger::ExpireHoldPage(const std::vector<Hold>& holds) {
  LEDGER_CHECK(static_cast<int64_t>(holds.size()) <= kExpireHoldsPageMax)
      << "a page of " << holds.size() << " holds";
  std::vector<SubmitRequest> requests(holds.size());
  std::vector<internal::BatchItem> items(holds.size());
  std::vector<internal::BatchItem*> pointers;
  for (size_t i = 0; i < holds.size(); ++i) {
    requests[i].operation.kind = OperationKind::kExpire;
    requests[i].operation.hold_id = holds[i].id;
    items[i].index = i;
    items[i].request = &requests[i];
    items[i].has_key = false;
    pointers.push_back(&items[i]);
  }
  RunBatch(pointers, /*atomic=*/false);  // each expiry alone: one hold settled elsewhere
                                          // leaves the others to expire
  int64_t expired = 0;
  absl::Status first_error;
  for (const internal::BatchItem& item : items) {
    LEDGER_CHECK(item.result.has_value()) << "RunBatch left expiry " << item.index << " open";
    const SubmitResult& result = *item.result;
    if (!result.ok()) {
      // Not past its expiry at the attempt's time (a clock set back): left for a later
      // sweep. Anything else (an invariant violation) stops the sweep.
      if (!absl::IsFailedPrecondition(result.status()) && first_error.ok()) {
        first_error = result.status();
      }
    } else if (result->kind == OutcomeKind::kCommitted) {
      ++expired;
    } else if (result->kind == OutcomeKind::kFaulted && first_error.ok()) {
      first_error = result->fault;  // the attempts ran out, or the COMMIT is in doubt
    }
    // Rejected: captured, voided or expired since it was listed.
  }
  if (!first_error.ok()) return first_error;
  return expired;
}

}  // namespace ledger
