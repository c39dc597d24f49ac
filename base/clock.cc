#include "base/clock.h"

namespace ledger {

absl::Time TruncateToMicros(absl::Time t) { return absl::FromUnixMicros(absl::ToUnixMicros(t)); }

absl::Time SystemClock::Now() { return TruncateToMicros(absl::Now()); }

Clock* SystemClock::Default() {
  static SystemClock* clock = new SystemClock();
  return clock;
}

ManualClock::ManualClock(absl::Time start) : now_(TruncateToMicros(start)) {}

absl::Time ManualClock::Now() {
  absl::MutexLock lock(&mutex_);
  return now_;
}

void ManualClock::Advance(absl::Duration by) {
  absl::MutexLock lock(&mutex_);
  now_ = TruncateToMicros(now_ + by);
}

void ManualClock::Set(absl::Time to) {
  absl::MutexLock lock(&mutex_);
  now_ = TruncateToMicros(to);
}

}  // namespace ledger
