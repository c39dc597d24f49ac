#include "engines/mysql/mysql_connection_pool.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace ledger::mysql_internal {

PooledConnection::PooledConnection(std::shared_ptr<MysqlConnectionPool> pool,
                                   std::unique_ptr<MysqlConnection> connection, bool reused)
    : pool_(std::move(pool)), connection_(std::move(connection)), reused_(reused) {}

PooledConnection::~PooledConnection() {
  if (pool_ != nullptr && connection_ != nullptr) pool_->Release(std::move(connection_));
}

MysqlConnectionPool::MysqlConnectionPool(MysqlSettings settings, int size)
    : settings_(std::move(settings)), size_(size > 0 ? size : 1) {}

absl::StatusOr<std::unique_ptr<MysqlConnection>> MysqlConnectionPool::TakeIdleOrSlot(
    bool want_fresh) {
  absl::MutexLock lock(&mutex_);
  auto available = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    return open_ < size_ || !idle_.empty();
  };
  if (!mutex_.AwaitWithTimeout(absl::Condition(&available), kAcquireWaitMax)) {
    return absl::UnavailableError(absl::StrCat("mysql: all ", size_,
                                               " pooled connections stayed busy for ",
                                               absl::FormatDuration(kAcquireWaitMax)));
  }
  // A caller that wants a fresh connection while every slot is taken gets an idle
  // connection to close, and opens its own in that slot.
  if (!idle_.empty() && (!want_fresh || open_ >= size_)) {
    std::unique_ptr<MysqlConnection> connection = std::move(idle_.back());
    idle_.pop_back();
    return connection;
  }
  open_ += 1;
  return std::unique_ptr<MysqlConnection>();  // a slot, no connection yet
}

absl::StatusOr<PooledConnection> MysqlConnectionPool::OpenInSlot() {
  absl::StatusOr<std::unique_ptr<MysqlConnection>> opened = MysqlConnection::Open(settings_);
  if (!opened.ok()) {
    FreeSlot();
    return opened.status();
  }
  return PooledConnection(shared_from_this(), *std::move(opened), /*reused=*/false);
}

absl::StatusOr<PooledConnection> MysqlConnectionPool::Acquire() {
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<MysqlConnection> idle, TakeIdleOrSlot(false));
  if (idle == nullptr) return OpenInSlot();
  if (absl::Now() - idle->last_used() > kIdleAgeBeforePing && !idle->Ping()) {
    // The server dropped it while it sat idle: close it and open another in its slot.
    idle.reset();
    return OpenInSlot();
  }
  return PooledConnection(shared_from_this(), std::move(idle), /*reused=*/true);
}

absl::StatusOr<PooledConnection> MysqlConnectionPool::AcquireFresh() {
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<MysqlConnection> evicted, TakeIdleOrSlot(true));
  evicted.reset();  // closed outside the mutex; its slot is reused
  return OpenInSlot();
}

void MysqlConnectionPool::Release(std::unique_ptr<MysqlConnection> connection) {
  if (connection->broken()) {
    connection.reset();  // closed outside the mutex: it may talk to the server
    FreeSlot();
    return;
  }
  absl::MutexLock lock(&mutex_);
  idle_.push_back(std::move(connection));
}

void MysqlConnectionPool::FreeSlot() {
  absl::MutexLock lock(&mutex_);
  open_ -= 1;
}

}  // namespace ledger::mysql_internal
