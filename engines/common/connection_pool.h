// The one connection pool of the SQL engines: at most `size` connections open at
// once, opened lazily, lent to one caller at a time and taken back after each use.
//
//   LEDGER_ASSIGN_OR_RETURN(std::shared_ptr<ConnectionPool<MysqlConnection>> pool,
//       ConnectionPool<MysqlConnection>::Create({.engine = "mysql", .size = 16}, hooks));
//   LEDGER_ASSIGN_OR_RETURN(ConnectionPool<MysqlConnection>::Lease lease, pool->Acquire());
//   lease->Execute(...);  // returned to the pool when `lease` goes
//
// One policy for every engine:
// - A caller beyond `size` waits for a connection to come back, bounded: a submit by
//   its own wait bound (PoolAcquireWait), anything else by the engine's
//   pool_acquire_wait option (default kPoolAcquireWaitDefault). When the wait runs out
//   the answer is Unavailable: nothing was sent, the key is unused, a retry is safe.
//   Unavailable rather than DeadlineExceeded because the cause is capacity (every
//   connection busy), the same class as a server that cannot be reached; the submit
//   path already treats Unavailable before COMMIT as "nothing written".
// - A connection found broken (hooks.reusable says no, or the lease was discarded) is
//   closed on return and its slot freed: it is never lent again.
// - An idle connection is checked (hooks.still_alive, optional) before it is lent
//   again; one the server dropped meanwhile is replaced by a new one in its slot.
// A lease keeps the pool alive, so a lease may outlive the engine.
//
// Internal to engines/. Thread-safe; a lease belongs to one thread at a time.
#ifndef LEDGER_ENGINES_COMMON_CONNECTION_POOL_H_
#define LEDGER_ENGINES_COMMON_CONNECTION_POOL_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ledger::engine_common {

// How long a call waits for a pooled connection when every one is on loan and the
// caller brings no wait bound of its own. Equal to the submit's default claim wait
// (idempotency/key.h's kWaitDefault). Each engine's Options repeats it as the default
// of pool_acquire_wait (a static_assert in each engine keeps them equal).
inline constexpr absl::Duration kPoolAcquireWaitDefault = absl::Seconds(10);
inline constexpr int kPoolSizeDefault = 16;
inline constexpr int kPoolSizeMax = 1024;

// The acquire wait of a submit: its claim wait bound. A fail-fast submit (zero) waits
// the engine's default instead: failing fast is about another attempt holding the
// same key, not about the pool's capacity (as account locks, too, are still waited for).
inline absl::Duration PoolAcquireWait(absl::Duration caller_wait_max,
                                      absl::Duration engine_default) {
  return caller_wait_max > absl::ZeroDuration() ? caller_wait_max : engine_default;
}

struct PoolOptions {
  std::string engine;  // prefixes messages: "mysql"
  int size = kPoolSizeDefault;
  absl::Duration acquire_wait = kPoolAcquireWaitDefault;  // Acquire() without a bound
};

template <typename Connection>
struct PoolHooks {
  // Opens a new connection (Unavailable when the server cannot be reached, ...).
  std::function<absl::StatusOr<std::unique_ptr<Connection>>()> open;
  // Before an idle connection is lent again: false means the server dropped it.
  // Optional.
  std::function<bool(Connection&)> still_alive;
  // On return: puts the connection back in a clean state if needed; false means it is
  // broken and must be closed. Optional (then every connection not discarded is kept).
  std::function<bool(Connection&)> reusable;
};

template <typename Connection>
class ConnectionPool : public std::enable_shared_from_this<ConnectionPool<Connection>> {
 public:
  // A connection on loan; returns it to the pool when destroyed. Move-only.
  class Lease {
   public:
    Lease(Lease&& other) noexcept { *this = std::move(other); }
    Lease& operator=(Lease&& other) noexcept {
      if (this != &other) {
        Return();
        pool_ = std::move(other.pool_);
        connection_ = std::move(other.connection_);
        reused_ = other.reused_;
        discarded_ = other.discarded_;
      }
      return *this;
    }
    ~Lease() { Return(); }

    Connection& operator*() const { return *connection_; }
    Connection* operator->() const { return connection_.get(); }
    // Whether the connection served an earlier caller (rather than newly opened): a
    // lost session found on its first use may be a stale one, worth one more try.
    bool reused() const { return reused_; }
    // The connection is lost or its state unknown: close it on return, never reuse it.
    void Discard() { discarded_ = true; }
    bool discarded() const { return discarded_; }

   private:
    friend class ConnectionPool;
    Lease(std::shared_ptr<ConnectionPool> pool, std::unique_ptr<Connection> connection,
          bool reused)
        : pool_(std::move(pool)), connection_(std::move(connection)), reused_(reused) {}
    void Return() {
      if (pool_ == nullptr || connection_ == nullptr) return;  // moved from
      std::shared_ptr<ConnectionPool> pool = std::move(pool_);
      pool->Release(std::move(connection_), discarded_);
    }

    std::shared_ptr<ConnectionPool> pool_;
    std::unique_ptr<Connection> connection_;
    bool reused_ = false;
    bool discarded_ = false;
  };

  // InvalidArgument for a size outside 1..kPoolSizeMax or a negative wait. Opens no
  // connection: engines acquire one right away to prove their settings.
  static absl::StatusOr<std::shared_ptr<ConnectionPool>> Create(PoolOptions options,
                                                                PoolHooks<Connection> hooks) {
    if (options.size < 1 || options.size > kPoolSizeMax) {
      return absl::InvalidArgumentError(absl::StrCat(
          options.engine, ": pool_size must be between 1 and ", kPoolSizeMax));
    }
    if (options.acquire_wait < absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.engine, ": pool_acquire_wait must not be negative"));
    }
    return std::shared_ptr<ConnectionPool>(
        new ConnectionPool(std::move(options), std::move(hooks)));
  }

  // An idle connection, or a new one while fewer than `size` are open; else waits up
  // to `wait` (default: the pool's acquire_wait) for one to come back: Unavailable then.
  absl::StatusOr<Lease> Acquire() { return Acquire(options_.acquire_wait); }
  absl::StatusOr<Lease> Acquire(absl::Duration wait) {
    absl::StatusOr<std::unique_ptr<Connection>> idle = TakeIdleOrSlot(wait, /*want_fresh=*/false);
    if (!idle.ok()) return idle.status();
    if (*idle == nullptr) return OpenInSlot();
    if (hooks_.still_alive && !hooks_.still_alive(**idle)) {
      idle->reset();  // dropped by the server while idle: replace it in its slot
      return OpenInSlot();
    }
    return Lease(this->shared_from_this(), *std::move(idle), /*reused=*/true);
  }

  // Always a newly opened connection, counted against `size` like any other.
  absl::StatusOr<Lease> AcquireFresh() {
    absl::StatusOr<std::unique_ptr<Connection>> evicted =
        TakeIdleOrSlot(options_.acquire_wait, /*want_fresh=*/true);
    if (!evicted.ok()) return evicted.status();
    evicted->reset();  // closed outside the mutex; its slot is reused
    return OpenInSlot();
  }

  int size() const { return options_.size; }
  size_t IdleCountForTesting() ABSL_LOCKS_EXCLUDED(mutex_) {
    absl::MutexLock lock(&mutex_);
    return idle_.size();
  }

 private:
  ConnectionPool(PoolOptions options, PoolHooks<Connection> hooks)
      : options_(std::move(options)), hooks_(std::move(hooks)) {}

  // Waits for an idle connection or a free slot. Returns an idle connection (taken out
  // of the pool, its slot still counted), or null after taking a free slot. A caller
  // that wants a fresh connection while every slot is taken gets an idle one to close.
  absl::StatusOr<std::unique_ptr<Connection>> TakeIdleOrSlot(absl::Duration wait,
                                                             bool want_fresh)
      ABSL_LOCKS_EXCLUDED(mutex_) {
    absl::MutexLock lock(&mutex_);
    auto available = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
      return open_ < options_.size || !idle_.empty();
    };
    if (!mutex_.AwaitWithTimeout(absl::Condition(&available), wait)) {
      return absl::UnavailableError(absl::StrCat(
          options_.engine, ": all ", options_.size, " pooled connections stayed busy for ",
          absl::FormatDuration(wait), "; nothing was sent, try again"));
    }
    if (!idle_.empty() && (!want_fresh || open_ >= options_.size)) {
      std::unique_ptr<Connection> connection = std::move(idle_.back());
      idle_.pop_back();
      return connection;
    }
    open_ += 1;
    return std::unique_ptr<Connection>();  // a slot, no connection yet
  }

  // Opens a connection in a slot already counted in open_; frees the slot on failure.
  absl::StatusOr<Lease> OpenInSlot() ABSL_LOCKS_EXCLUDED(mutex_) {
    absl::StatusOr<std::unique_ptr<Connection>> opened = hooks_.open();
    if (!opened.ok()) {
      FreeSlot();
      return opened.status();
    }
    return Lease(this->shared_from_this(), *std::move(opened), /*reused=*/false);
  }

  // Takes a connection back: pooled if healthy, closed (slot freed) if not. Closing
  // may talk to the server, so it happens outside the mutex.
  void Release(std::unique_ptr<Connection> connection, bool discarded)
      ABSL_LOCKS_EXCLUDED(mutex_) {
    const bool keep = !discarded && (!hooks_.reusable || hooks_.reusable(*connection));
    if (!keep) {
      connection.reset();
      FreeSlot();
      return;
    }
    absl::MutexLock lock(&mutex_);
    idle_.push_back(std::move(connection));
  }

  void FreeSlot() ABSL_LOCKS_EXCLUDED(mutex_) {
    absl::MutexLock lock(&mutex_);
    open_ -= 1;
  }

  const PoolOptions options_;
  const PoolHooks<Connection> hooks_;
  absl::Mutex mutex_;
  std::vector<std::unique_ptr<Connection>> idle_ ABSL_GUARDED_BY(mutex_);
  int open_ ABSL_GUARDED_BY(mutex_) = 0;  // idle + on loan + being opened
};

}  // namespace ledger::engine_common

#endif  // LEDGER_ENGINES_COMMON_CONNECTION_POOL_H_
