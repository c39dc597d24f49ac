// The server's hold sweeper: a thread that calls Ledger::ExpireHolds every interval, so a
// lapsed hold's expiry is recorded (status expired, the stored pending amounts released,
// an expire transaction and its event) even when nobody touches the hold or its accounts.
// Reads never wait for it: the ledger already treats a lapsed hold as released.
//
//   HoldSweeper sweeper(ledger, absl::Seconds(30), metrics, LogEvent);
//   ...                 // sweeps every 30 s while the server runs
//   sweeper.Stop();     // wakes the thread at once; returns once a running sweep ends
//
// Each sweep that expired something logs one structured line (holds_expired, with the
// count and the duration); a failed sweep logs hold_sweep_failed with the status code
// (never its message, which may carry database details) and the next interval retries.
// ExpireHolds is safe against concurrent submits, captures, voids and other sweepers
// (another server on the same database), so nothing here coordinates with them.
//
// Thread-safe: Stop may be called from any thread, more than once; the destructor stops.
// The Ledger and the Metrics must outlive the sweeper.
#ifndef LEDGER_SERVER_HOLD_SWEEPER_H_
#define LEDGER_SERVER_HOLD_SWEEPER_H_

#include <functional>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ledger/ledger.h"
#include "server/metrics.h"

namespace ledger::server {

class HoldSweeper {
 public:
  // Logs one event: the JSON members of a line, without braces ("\"event\":\"...\",...").
  using LogEvent = std::function<void(const std::string& json_members)>;

  // `interval` zero: disabled, no thread. Negative intervals are the caller's bug.
  HoldSweeper(Ledger& ledger, absl::Duration interval, Metrics& metrics, LogEvent log);
  ~HoldSweeper();
  HoldSweeper(const HoldSweeper&) = delete;
  HoldSweeper& operator=(const HoldSweeper&) = delete;

  // Ends the thread: no further sweep starts. Waits only for a sweep already running.
  void Stop();

  // One sweep now, on the caller's thread: expires, records the metrics, logs. Returns
  // how many holds it expired (0 on a failure, which is logged and counted).
  int64_t SweepOnce();

 private:
  void Run();

  Ledger& ledger_;
  const absl::Duration interval_;
  Metrics& metrics_;
  LogEvent log_;
  absl::Mutex mutex_;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace ledger::server

#endif  // LEDGER_SERVER_HOLD_SWEEPER_H_
