// The MySQL engine's connection pool: the shared pool (engines/common/connection_pool.h)
// with MySQL's hooks. A connection that reported a lost session (or any error that
// leaves its state unknown) is broken() and closed on return; an idle connection that
// sat unused for a while is pinged before it is lent again, and replaced if the server
// dropped it (wait_timeout, a restart).
//
// Internal to engines/mysql. Thread-safe.
#ifndef LEDGER_ENGINES_MYSQL_MYSQL_CONNECTION_POOL_H_
#define LEDGER_ENGINES_MYSQL_MYSQL_CONNECTION_POOL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engines/common/connection_pool.h"
#include "engines/mysql/mysql_connection.h"

namespace ledger::mysql_internal {

// A connection idle longer than this is pinged before reuse.
inline constexpr absl::Duration kIdleAgeBeforePing = absl::Seconds(30);

using MysqlConnectionPool = engine_common::ConnectionPool<MysqlConnection>;
using PooledConnection = MysqlConnectionPool::Lease;

// InvalidArgument for a bad size or wait; opens no connection yet.
absl::StatusOr<std::shared_ptr<MysqlConnectionPool>> CreateMysqlConnectionPool(
    MysqlSettings settings, int size, absl::Duration acquire_wait);

}  // namespace ledger::mysql_internal

#endif  // LEDGER_ENGINES_MYSQL_MYSQL_CONNECTION_POOL_H_
