// Submits for the frozen-server tests: how long a submit took, and a caller's resends
// of the same key until the answer is definite.
//
//   TimedOutcome first = SubmitTimed(ledger, request);   // faulted, in 2.1 s
//   absl::StatusOr<Outcome> final = ResendUntilDefinite(ledger, request, 5);
//
// Thread-compatible: as thread-safe as the Ledger.
#ifndef LEDGER_TESTS_SUPPORT_TIMED_SUBMIT_H_
#define LEDGER_TESTS_SUPPORT_TIMED_SUBMIT_H_

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status.h"
#include "ledger/ledger.h"

namespace ledger::testing {

struct TimedOutcome {
  absl::StatusOr<Outcome> outcome;
  absl::Duration elapsed;
};

inline TimedOutcome SubmitTimed(Ledger& ledger, const SubmitRequest& request) {
  const absl::Time start = absl::Now();
  absl::StatusOr<Outcome> outcome = ledger.Submit(request);
  return {std::move(outcome), absl::Now() - start};
}

// What a caller does after a fault: resend the same key until the answer is committed
// or duplicate (an attempt still in flight on the server may make the first resends
// fault or find the key in progress). At most `attempts` submits; the last answer.
inline absl::StatusOr<Outcome> ResendUntilDefinite(Ledger& ledger, const SubmitRequest& request,
                                                   int attempts) {
  absl::StatusOr<Outcome> outcome;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    outcome = ledger.Submit(request);
    if (outcome.ok() && outcome->ok()) return outcome;
    if (!outcome.ok() && !IsInProgress(outcome.status())) return outcome;
    absl::SleepFor(absl::Milliseconds(200));
  }
  return outcome;
}

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_SUPPORT_TIMED_SUBMIT_H_
