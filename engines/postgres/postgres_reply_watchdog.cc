#include "base/check.h"
#include "engines/postgres/postgres_reply_watchdog.h"

#include <sys/socket.h>

#include <algorithm>

namespace ledger::postgres_internal {

ReplyWatchdog::Armed& ReplyWatchdog::Armed::operator=(Armed&& other) noexcept {
  if (this != &other) {
    Disarm();
    watchdog_ = std::exchange(other.watchdog_, nullptr);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

bool ReplyWatchdog::Armed::Disarm() {
  if (watchdog_ == nullptr) return false;
  ReplyWatchdog* watchdog = std::exchange(watchdog_, nullptr);
  return watchdog->Disarm(id_);
}

ReplyWatchdog::ReplyWatchdog() : thread_([this] { Run(); }) {}

ReplyWatchdog::~ReplyWatchdog() {
  {
    absl::MutexLock lock(&mutex_);
    LEDGER_CHECK(armed_.empty()) << "a round trip outlived its engine's watchdog";
    stopping_ = true;
    changed_.Signal();
  }
  thread_.join();
}

ReplyWatchdog::Armed ReplyWatchdog::Arm(int socket, absl::Duration timeout) {
  const Clock::time_point at = Clock::now() + absl::ToChronoNanoseconds(timeout);
  absl::MutexLock lock(&mutex_);
  const uint64_t id = next_id_++;
  armed_.emplace(id, Deadline{socket, at, false});
  pending_.emplace(at, id);
  shortest_timeout_ = std::min(shortest_timeout_, timeout);
  // Wake the thread only if it would sleep past this deadline: with one timeout per
  // engine it never does, so a round trip costs no context switch.
  if (at < wake_at_) changed_.Signal();
  return Armed(this, id);
}

bool ReplyWatchdog::Disarm(uint64_t id) {
  absl::MutexLock lock(&mutex_);
  auto it = armed_.find(id);
  LEDGER_CHECK(it != armed_.end()) << "disarming a deadline that is not armed";
  const bool expired = it->second.expired;
  if (!expired) pending_.erase({it->second.at, id});
  armed_.erase(it);
  return expired;
}

void ReplyWatchdog::Run() {
  absl::MutexLock lock(&mutex_);
  while (!stopping_) {
    const Clock::time_point now = Clock::now();
    if (pending_.empty()) {
      // Idle: nap for the shortest timeout ever armed. A deadline armed meanwhile is at
      // least that far away, so it needs no wake-up call.
      if (shortest_timeout_ == absl::InfiniteDuration()) {
        wake_at_ = Clock::time_point::max();
        changed_.Wait(&mutex_);
      } else {
        wake_at_ = now + absl::ToChronoNanoseconds(shortest_timeout_);
        changed_.WaitWithTimeout(&mutex_, shortest_timeout_);
      }
      continue;
    }
    const auto [at, id] = *pending_.begin();
    if (now < at) {
      wake_at_ = at;
      changed_.WaitWithTimeout(&mutex_, absl::FromChrono(at - now));
      continue;
    }
    pending_.erase(pending_.begin());
    Deadline& deadline = armed_.at(id);
    deadline.expired = true;
    // Under the mutex: Disarm cannot return, and the socket cannot be closed, meanwhile.
    ::shutdown(deadline.socket, SHUT_RDWR);
  }
}

}  // namespace ledger::postgres_internal
