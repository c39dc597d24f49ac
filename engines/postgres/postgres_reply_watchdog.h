// The client-side bound on a PostgreSQL round trip (PostgresOptions::read_timeout):
// libpq waits for a reply forever, and neither TCP keepalives nor tcp_user_timeout help
// when the server's kernel still answers for it (a frozen or stalled server process: its
// kernel acknowledges every byte and every probe). The watchdog shuts the session's
// socket down when a round trip outlives its deadline; libpq then sees the connection
// end, and the call fails as a lost connection (Unavailable, or in doubt during COMMIT).
//
//   ReplyWatchdog::Armed armed = watchdog->Arm(socket, absl::Seconds(40));
//   ... one blocking libpq call ...
//   bool cut_off = armed.Disarm();  // true: the deadline closed the connection
//
// One thread per watchdog (per engine), asleep until the earliest deadline (when idle,
// for the shortest timeout it has seen, so arming needs no wake-up call). The socket
// given to Arm must stay open until Disarm returns: sessions arm a duplicate of libpq's
// socket that they own, so a socket libpq closes meanwhile can never be reused under
// the watchdog.
//
// Internal to engines/postgres. Thread-safe; an Armed belongs to the thread that armed it.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_REPLY_WATCHDOG_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_REPLY_WATCHDOG_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ledger::postgres_internal {

class ReplyWatchdog {
 public:
  // A deadline in force until Disarm (or destruction). Move-only.
  class Armed {
   public:
    Armed() = default;  // inert: nothing to disarm
    Armed(Armed&& other) noexcept { *this = std::move(other); }
    Armed& operator=(Armed&& other) noexcept;
    ~Armed() { Disarm(); }

    // Ends the deadline; true when it had already run out and closed the socket. After
    // it returns the watchdog no longer touches the socket.
    bool Disarm();

   private:
    friend class ReplyWatchdog;
    Armed(ReplyWatchdog* watchdog, uint64_t id) : watchdog_(watchdog), id_(id) {}
    ReplyWatchdog* watchdog_ = nullptr;
    uint64_t id_ = 0;
  };

  ReplyWatchdog();  // starts the thread
  ~ReplyWatchdog();  // stops it; no Armed may outlive the watchdog
  ReplyWatchdog(const ReplyWatchdog&) = delete;
  ReplyWatchdog& operator=(const ReplyWatchdog&) = delete;

  // Shuts `socket` down (both directions) if the returned Armed is still armed after
  // `timeout`.
  Armed Arm(int socket, absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mutex_);

 private:
  using Clock = std::chrono::steady_clock;  // deadlines must not move with the wall clock
  struct Deadline {
    int socket = -1;
    Clock::time_point at;
    bool expired = false;
  };

  bool Disarm(uint64_t id) ABSL_LOCKS_EXCLUDED(mutex_);
  void Run() ABSL_LOCKS_EXCLUDED(mutex_);

  absl::Mutex mutex_;
  absl::CondVar changed_;
  std::map<uint64_t, Deadline> armed_ ABSL_GUARDED_BY(mutex_);
  std::set<std::pair<Clock::time_point, uint64_t>> pending_ ABSL_GUARDED_BY(mutex_);  // not expired
  uint64_t next_id_ ABSL_GUARDED_BY(mutex_) = 1;
  absl::Duration shortest_timeout_ ABSL_GUARDED_BY(mutex_) = absl::InfiniteDuration();
  Clock::time_point wake_at_ ABSL_GUARDED_BY(mutex_) = Clock::time_point::max();  // the thread's
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;  // last: starts once every member above exists
};

}  // namespace ledger::postgres_internal

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_REPLY_WATCHDOG_H_
