// The MySQL engine's connection pool: at most `size` sessions open at once, opened
// lazily, handed out one caller at a time and taken back after each use. A connection
// that reported a lost session (or any error that leaves its state unknown) is closed
// on return and its slot freed, so the next caller gets a new one: a broken connection
// is never reused. An idle connection that sat unused for a while is pinged before it
// is handed out, and replaced if the server dropped it (wait_timeout, a restart).
// A lease (PooledConnection) keeps the pool alive, so a lease may outlive the engine.
//
// Internal to engines/mysql. Thread-safe.
#ifndef LEDGER_ENGINES_MYSQL_MYSQL_CONNECTION_POOL_H_
#define LEDGER_ENGINES_MYSQL_MYSQL_CONNECTION_POOL_H_

#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engines/mysql/mysql_connection.h"

namespace ledger::mysql_internal {

// A connection idle longer than this is pinged before reuse.
inline constexpr absl::Duration kIdleAgeBeforePing = absl::Seconds(30);
// How long Acquire waits for a free slot when all `size` connections are on loan.
inline constexpr absl::Duration kAcquireWaitMax = absl::Seconds(30);

class MysqlConnectionPool;

// A connection on loan; returns it to the pool when destroyed. Move-only.
class PooledConnection {
 public:
  PooledConnection(std::shared_ptr<MysqlConnectionPool> pool,
                   std::unique_ptr<MysqlConnection> connection, bool reused);
  PooledConnection(PooledConnection&&) noexcept = default;
  PooledConnection& operator=(PooledConnection&&) = delete;
  ~PooledConnection();

  MysqlConnection& operator*() const { return *connection_; }
  MysqlConnection* operator->() const { return connection_.get(); }
  // Whether the connection served an earlier caller (as opposed to newly opened): a
  // lost session found on first use may then be a stale one, worth one more try.
  bool reused() const { return reused_; }

 private:
  std::shared_ptr<MysqlConnectionPool> pool_;
  std::unique_ptr<MysqlConnection> connection_;
  bool reused_ = false;
};

class MysqlConnectionPool : public std::enable_shared_from_this<MysqlConnectionPool> {
 public:
  MysqlConnectionPool(MysqlSettings settings, int size);

  // An idle connection, or a newly opened one while fewer than `size` are open; else
  // waits up to kAcquireWaitMax for one to come back (then Unavailable).
  absl::StatusOr<PooledConnection> Acquire() ABSL_LOCKS_EXCLUDED(mutex_);
  // Always a newly opened connection (counted against `size` like any other).
  absl::StatusOr<PooledConnection> AcquireFresh() ABSL_LOCKS_EXCLUDED(mutex_);

  const MysqlSettings& settings() const { return settings_; }

 private:
  friend class PooledConnection;
  // Takes a connection back: pooled if healthy, closed (slot freed) if broken.
  void Release(std::unique_ptr<MysqlConnection> connection) ABSL_LOCKS_EXCLUDED(mutex_);
  // Waits for an idle connection or a free slot. Returns an idle connection (taken out
  // of the pool, its slot still counted), or null after taking a free slot.
  absl::StatusOr<std::unique_ptr<MysqlConnection>> TakeIdleOrSlot(bool want_fresh)
      ABSL_LOCKS_EXCLUDED(mutex_);
  // Opens a connection in a slot already counted in open_; frees the slot on failure.
  absl::StatusOr<PooledConnection> OpenInSlot() ABSL_LOCKS_EXCLUDED(mutex_);
  void FreeSlot() ABSL_LOCKS_EXCLUDED(mutex_);

  const MysqlSettings settings_;
  const int size_;
  absl::Mutex mutex_;
  std::vector<std::unique_ptr<MysqlConnection>> idle_ ABSL_GUARDED_BY(mutex_);
  int open_ ABSL_GUARDED_BY(mutex_) = 0;  // idle + on loan + being opened
};

}  // namespace ledger::mysql_internal

#endif  // LEDGER_ENGINES_MYSQL_MYSQL_CONNECTION_POOL_H_
