// An injectable clock: TTLs, leases and velocity windows read time only through it, so
// tests move time forward instead of sleeping.
//
// Thread-safe: SystemClock is stateless; ManualClock guards its time with a mutex.
#ifndef LEDGER_BASE_CLOCK_H_
#define LEDGER_BASE_CLOCK_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ledger {

class Clock {
 public:
  virtual ~Clock() = default;
  // Truncated to whole microseconds: the precision every engine stores, so a value
  // read back equals the value written.
  virtual absl::Time Now() = 0;
};

class SystemClock final : public Clock {
 public:
  absl::Time Now() override;
  static Clock* Default();  // a process-wide instance, never destroyed
};

class ManualClock final : public Clock {
 public:
  explicit ManualClock(absl::Time start = absl::FromUnixSeconds(1'767'225'600));  // 2026-01-01
  absl::Time Now() override;
  void Advance(absl::Duration by);
  void Set(absl::Time to);

 private:
  absl::Mutex mutex_;
  absl::Time now_ ABSL_GUARDED_BY(mutex_);
};

absl::Time TruncateToMicros(absl::Time t);

}  // namespace ledger

#endif  // LEDGER_BASE_CLOCK_H_
