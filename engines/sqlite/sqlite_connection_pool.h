// The SQLite engine's connections and its in-process writer queue.
//
// ConnectionPool: one connection per concurrent caller, opened lazily, returned after
// each use and reused; a connection that reported a fatal code (I/O error, corruption,
// misuse) or that cannot be rolled back to a clean state is closed instead of pooled.
// A lease (PooledConnection) keeps the pool alive, so a lease may outlive the engine.
//
// WriterQueue: SQLite lets one writer at a time hold a database. Without help, threads
// of one process waiting for that lock poll it from SQLite's busy handler, sleeping up
// to 100 ms between tries, which is slow and unfair under many threads. The engine's
// writers first queue on this mutex (blocking, woken on release), and only then take
// SQLite's lock, whose busy timeout is left for writers in other processes.
//
// Internal to engines/sqlite. Thread-safe.
#ifndef LEDGER_ENGINES_SQLITE_SQLITE_CONNECTION_POOL_H_
#define LEDGER_ENGINES_SQLITE_SQLITE_CONNECTION_POOL_H_

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engines/sqlite/sqlite_connection.h"

namespace ledger::sqlite_internal {

// Idle connections kept beyond this are closed on return: a burst of callers should
// not pin file descriptors and page caches forever.
inline constexpr size_t kIdleConnectionsMax = 32;

class ConnectionPool;

class WriterQueue {
 public:
  // Waits until no other writer of this engine holds the queue, or until `deadline`
  // (a past deadline: one try). True when the caller now holds it.
  bool Enter(absl::Time deadline) ABSL_LOCKS_EXCLUDED(mutex_);
  void Leave() ABSL_LOCKS_EXCLUDED(mutex_);

 private:
  absl::Mutex mutex_;
  bool held_ ABSL_GUARDED_BY(mutex_) = false;
};

// A connection on loan; returns it to the pool when destroyed. Move-only.
class PooledConnection {
 public:
  PooledConnection(std::shared_ptr<ConnectionPool> pool, std::unique_ptr<Connection> connection);
  PooledConnection(PooledConnection&&) noexcept = default;
  PooledConnection& operator=(PooledConnection&&) = delete;
  ~PooledConnection();

  Connection& operator*() const { return *connection_; }
  Connection* operator->() const { return connection_.get(); }

 private:
  std::shared_ptr<ConnectionPool> pool_;
  std::unique_ptr<Connection> connection_;
};

class ConnectionPool : public std::enable_shared_from_this<ConnectionPool> {
 public:
  explicit ConnectionPool(ConnectionSettings settings) : settings_(std::move(settings)) {}

  // An idle connection, or a newly opened one when none is idle.
  absl::StatusOr<PooledConnection> Acquire();

  const ConnectionSettings& settings() const { return settings_; }
  // Lives here, beside the connections, so that a transaction's lease keeps it alive.
  WriterQueue& writer_queue() { return writer_queue_; }
  size_t IdleCountForTesting() ABSL_LOCKS_EXCLUDED(mutex_);

 private:
  friend class PooledConnection;
  // Takes back a connection: rolls back a transaction left open, restores the default
  // busy timeout, and pools it unless it is broken or the pool is full.
  void Release(std::unique_ptr<Connection> connection) ABSL_LOCKS_EXCLUDED(mutex_);

  const ConnectionSettings settings_;
  WriterQueue writer_queue_;
  absl::Mutex mutex_;
  std::vector<std::unique_ptr<Connection>> idle_ ABSL_GUARDED_BY(mutex_);
};

// A held turn in the writer queue; leaves it when destroyed. Move-only. Unlike a
// mutex lock it may be released on another thread than the one that took it.
class WriterTurn {
 public:
  WriterTurn() = default;
  explicit WriterTurn(WriterQueue* queue) : queue_(queue) {}
  WriterTurn(WriterTurn&& other) noexcept : queue_(std::exchange(other.queue_, nullptr)) {}
  WriterTurn& operator=(WriterTurn&& other) noexcept;
  ~WriterTurn() { Release(); }

  void Release();
  bool held() const { return queue_ != nullptr; }

 private:
  WriterQueue* queue_ = nullptr;
};

}  // namespace ledger::sqlite_internal

#endif  // LEDGER_ENGINES_SQLITE_SQLITE_CONNECTION_POOL_H_
