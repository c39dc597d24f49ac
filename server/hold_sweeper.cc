#include "server/hold_sweeper.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/check.h"

namespace ledger::server {

HoldSweeper::HoldSweeper(Ledger& ledger, absl::Duration interval, Metrics& metrics, LogEvent log)
    : ledger_(ledger), interval_(interval), metrics_(metrics), log_(std::move(log)) {
  LEDGER_CHECK(interval_ >= absl::ZeroDuration());
  if (interval_ > absl::ZeroDuration()) thread_ = std::thread([this] { Run(); });
}

HoldSweeper::~HoldSweeper() { Stop(); }

void HoldSweeper::Stop() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void HoldSweeper::Run() {
  while (true) {
    {
      absl::MutexLock lock(&mutex_);
      // Wakes at once when Stop sets stopping_: a shutdown never waits out the interval.
      mutex_.AwaitWithTimeout(absl::Condition(&stopping_), interval_);
      if (stopping_) return;
    }
    SweepOnce();
  }
}

int64_t HoldSweeper::SweepOnce() {
  absl::Time started = absl::Now();
  // ExpireHolds returns errors as Status; a throw from below is still not allowed to take
  // the server down with it, so it counts as a failed sweep too.
  absl::StatusOr<int64_t> expired = absl::InternalError("the sweep threw");
  try {
    expired = ledger_.ExpireHolds();
  } catch (...) {
  }
  absl::Duration took = absl::Now() - started;
  if (!expired.ok()) {
    metrics_.RecordHoldSweep(std::nullopt, took);
    log_(absl::StrCat("\"event\":\"hold_sweep_failed\",\"code\":\"",
                      absl::StatusCodeToString(expired.status().code()),
                      "\",\"retry_in_seconds\":", absl::ToInt64Seconds(interval_)));
    return 0;
  }
  LEDGER_CHECK(*expired >= 0);
  metrics_.RecordHoldSweep(*expired, took);
  if (*expired > 0) {
    log_(absl::StrCat("\"event\":\"holds_expired\",\"expired\":", *expired,
                      ",\"duration_ms\":", absl::ToDoubleMilliseconds(took)));
  }
  return *expired;
}

}  // namespace ledger::server
