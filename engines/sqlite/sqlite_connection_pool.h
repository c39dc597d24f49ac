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
// The writer's connection: every write transaction of the engine (a submit, a
// standalone write, a migration) runs on the one connection the queue keeps for the
// holder of its turn, not on a pooled one. In WAL mode a connection drops its whole
// page cache when another connection has committed since its last transaction, so
// writes alternating between pooled connections (the group committer's two shared
// transactions in flight) re-read every page they touch; one writer connection keeps
// its cache warm from one turn to the next (docs/benchmarks.md, "One writer
// connection"). Readers keep the pool, and never invalidate the writer's cache: only
// another connection's commit does (another process writing the file, say). The
// connection is opened on the first turn that needs it; one found broken, or left in a
// transaction that cannot be rolled back, is closed when the turn ends, and the next
// turn opens a new one. Its WAL checkpoints run mostly on a background thread
// (sqlite_checkpointer.h).
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
#include "engines/sqlite/sqlite_checkpointer.h"
#include "engines/sqlite/sqlite_connection.h"

namespace ledger::sqlite_internal {


class WriterTurn;

class WriterQueue {
 public:
  // Opens nothing yet: the writer's connection is opened by the first turn using it.
  explicit WriterQueue(ConnectionSettings settings)
      : settings_(std::move(settings)), checkpointer_(settings_) {}

  // Waits until no other writer of this engine holds the queue, or until `deadline`
  // (a past deadline: one try). True when the caller now holds it.
  bool Enter(absl::Time deadline) ABSL_LOCKS_EXCLUDED(mutex_);
  // Ends the turn: the writer's connection is rolled back to a clean state (or closed
  // when it is broken) before the next writer may enter.
  void Leave() ABSL_LOCKS_EXCLUDED(mutex_);

  // The writer's connection, opened now if there is none (then the open's error, e.g.
  // Unavailable). Only the holder of the turn may call this, and use the connection
  // until it leaves: the turn, not the mutex, guards it.
  absl::StatusOr<Connection*> WriterConnection();

  // How many times the writer's connection was opened (tests: a broken one is replaced).
  int OpenedCountForTesting() const { return opened_count_; }
  Checkpointer& checkpointer() { return checkpointer_; }

 private:
  friend class WriterTurn;

  const ConnectionSettings settings_;
  // The WAL checkpoints of the writer's connection. Declared before it: it must outlive
  // the connection, whose commits call it.
  Checkpointer checkpointer_;
  absl::Mutex mutex_;
  bool held_ ABSL_GUARDED_BY(mutex_) = false;
  // Guarded by the turn (held_): used only between Enter and Leave by the holder, and
  // the mutex taken by both orders one holder's use before the next one's.
  std::unique_ptr<Connection> connection_;
  int opened_count_ = 0;
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
  // The writer's connection of the held turn (WriterQueue::WriterConnection opened it
  // before the turn was handed out: BeginImmediate).
  Connection& connection() const;

 private:
  WriterQueue* queue_ = nullptr;
};

}  // namespace ledger::sqlite_internal

#endif  // LEDGER_ENGINES_SQLITE_SQLITE_CONNECTION_POOL_H_
