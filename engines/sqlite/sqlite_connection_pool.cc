#include "engines/sqlite/sqlite_connection_pool.h"

#include <utility>

#include "base/status.h"

namespace ledger::sqlite_internal {

// ---- PooledConnection ----

PooledConnection::PooledConnection(std::shared_ptr<ConnectionPool> pool,
                                   std::unique_ptr<Connection> connection)
    : pool_(std::move(pool)), connection_(std::move(connection)) {}

PooledConnection::~PooledConnection() {
  if (connection_ != nullptr) pool_->Release(std::move(connection_));
}

// ---- ConnectionPool ----

absl::StatusOr<PooledConnection> ConnectionPool::Acquire() {
  {
    absl::MutexLock lock(&mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<Connection> connection = std::move(idle_.back());
      idle_.pop_back();
      return PooledConnection(shared_from_this(), std::move(connection));
    }
  }
  // Opened outside the mutex: opening touches the file and may wait for its lock.
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<Connection> connection, Connection::Open(settings_));
  return PooledConnection(shared_from_this(), std::move(connection));
}

void ConnectionPool::Release(std::unique_ptr<Connection> connection) {
  if (!connection->broken() && connection->InTransaction()) {
    // A caller that returned mid-transaction (an error path) must not hand its open
    // transaction, and the writer lock with it, to the next borrower.
    if (!connection->Execute("ROLLBACK", "roll back on release", ErrorContext::kStandalone).ok() ||
        connection->InTransaction()) {
      connection->MarkBroken();
    }
  }
  if (connection->broken()) return;  // closed here, by the unique_ptr
  connection->RestoreDefaultBusyTimeout();
  std::unique_ptr<Connection> surplus;
  {
    absl::MutexLock lock(&mutex_);
    if (idle_.size() < kIdleConnectionsMax) {
      idle_.push_back(std::move(connection));
    } else {
      surplus = std::move(connection);
    }
  }
  // `surplus` closes after the mutex is released: closing the last connection of a WAL
  // database checkpoints, which is file I/O.
}

size_t ConnectionPool::IdleCountForTesting() {
  absl::MutexLock lock(&mutex_);
  return idle_.size();
}

// ---- WriterQueue ----

bool WriterQueue::Enter(absl::Time deadline) {
  auto is_free = [](bool* held) { return !*held; };
  const bool entered = mutex_.LockWhenWithDeadline(absl::Condition(+is_free, &held_), deadline);
  if (entered) held_ = true;
  mutex_.Unlock();
  return entered;
}

void WriterQueue::Leave() {
  absl::MutexLock lock(&mutex_);
  held_ = false;
}

// ---- WriterTurn ----

WriterTurn& WriterTurn::operator=(WriterTurn&& other) noexcept {
  if (this != &other) {
    Release();
    queue_ = std::exchange(other.queue_, nullptr);
  }
  return *this;
}

void WriterTurn::Release() {
  if (queue_ != nullptr) std::exchange(queue_, nullptr)->Leave();
}

}  // namespace ledger::sqlite_internal
