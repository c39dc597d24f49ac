// The SQLite engine's connections and its in-process writer queue.
//
// ConnectionPool: the shared pool (engines/common/connection_pool.h) with SQLite's
// hooks: a connection returned mid-transaction is rolled back and its busy timeout
// restored; one that reported a fatal code (I/O error, corruption, misuse) or that
// cannot be rolled back to a clean state is closed instead of pooled.
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

#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engines/common/connection_pool.h"
#include "engines/sqlite/sqlite_connection.h"

namespace ledger::sqlite_internal {


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

using ConnectionPool = engine_common::ConnectionPool<Connection>;
using PooledConnection = ConnectionPool::Lease;

// InvalidArgument for a bad size or wait. Opens no connection yet.
absl::StatusOr<std::shared_ptr<ConnectionPool>> CreateSqliteConnectionPool(
    ConnectionSettings settings, int size, absl::Duration acquire_wait);

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
