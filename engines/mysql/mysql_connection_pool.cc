#include "engines/mysql/mysql_connection_pool.h"

#include <utility>

namespace ledger::mysql_internal {

absl::StatusOr<std::shared_ptr<MysqlConnectionPool>> CreateMysqlConnectionPool(
    MysqlSettings settings, int size, absl::Duration acquire_wait) {
  engine_common::PoolHooks<MysqlConnection> hooks;
  hooks.open = [settings = std::move(settings)] { return MysqlConnection::Open(settings); };
  hooks.still_alive = [](MysqlConnection& connection) {
    return absl::Now() - connection.last_used() <= kIdleAgeBeforePing || connection.Ping();
  };
  hooks.reusable = [](MysqlConnection& connection) { return !connection.broken(); };
  return MysqlConnectionPool::Create(
      {.engine = "mysql", .size = size, .acquire_wait = acquire_wait}, std::move(hooks));
}

}  // namespace ledger::mysql_internal
