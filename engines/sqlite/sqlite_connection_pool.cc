#include "engines/sqlite/sqlite_connection_pool.h"

#include <utility>

#include "base/check.h"
#include "base/status.h"
#include "engines/sqlite/sqlite_statements.h"

namespace ledger::sqlite_internal {

// ---- ConnectionPool ----

namespace {

// Takes back a connection: rolls back a transaction left open (an error path must not
// hand its open transaction, and the writer lock with it, to the next borrower) and
// restores the default busy timeout. False when it must be closed instead.
bool ResetForReuse(Connection& connection) {
  if (!connection.broken() && connection.InTransaction()) {
    if (!connection.Execute(statement::kRollback, "roll back on release",
                            ErrorContext::kStandalone).ok() ||
        connection.InTransaction()) {
      connection.MarkBroken();
    }
  }
  if (connection.broken()) return false;
  connection.RestoreDefaultBusyTimeout();
  return true;
}

}  // namespace

absl::StatusOr<std::shared_ptr<ConnectionPool>> CreateSqliteConnectionPool(
    ConnectionSettings settings, int size, absl::Duration acquire_wait) {
  engine_common::PoolHooks<Connection> hooks;
  // Opening touches the file and may wait for its lock: the pool opens outside its mutex.
  hooks.open = [settings = std::move(settings)] { return Connection::Open(settings); };
  hooks.reusable = ResetForReuse;
  return ConnectionPool::Create({.engine = "sqlite", .size = size, .acquire_wait = acquire_wait},
                                std::move(hooks));
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
  // Still the holder here: the connection is ours to clean up. A transaction left open
  // by an error path must not hand SQLite's writer lock to whoever writes next.
  if (connection_ != nullptr && !ResetForReuse(*connection_)) connection_.reset();
  absl::MutexLock lock(&mutex_);
  LEDGER_CHECK(held_) << "sqlite: leaving the writer queue without holding it";
  held_ = false;
}

absl::StatusOr<Connection*> WriterQueue::WriterConnection() {
  if (connection_ == nullptr) {
    LEDGER_ASSIGN_OR_RETURN(connection_, Connection::Open(settings_));
    checkpointer_.Attach(*connection_);
    ++opened_count_;
  }
  LEDGER_CHECK(!connection_->broken());  // Leave closes a broken one
  return connection_.get();
}

// ---- WriterTurn ----

WriterTurn& WriterTurn::operator=(WriterTurn&& other) noexcept {
  if (this != &other) {
    Release();
    queue_ = std::exchange(other.queue_, nullptr);
  }
  return *this;
}

Connection& WriterTurn::connection() const {
  LEDGER_CHECK(queue_ != nullptr && queue_->connection_ != nullptr)
      << "sqlite: the writer's connection outside a turn";
  return *queue_->connection_;
}

void WriterTurn::Release() {
  if (queue_ != nullptr) std::exchange(queue_, nullptr)->Leave();
}

}  // namespace ledger::sqlite_internal
