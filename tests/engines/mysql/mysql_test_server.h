// The MySQL / MariaDB server the tests run against, named by LEDGER_TEST_MYSQL_DSN
// (scripts/test-servers.sh writes it), and an administrative session of the test's
// own on it, like a DBA's console: it makes per-process scratch databases, empties
// them between tests, and finds and KILLs the engine's sessions.
//
//   std::string dsn = ledger::testing::MysqlTestDsn();  // "" when unset
//   auto server = ledger::testing::MysqlTestServer::Connect(dsn);
//   auto scratch_dsn = (*server)->RecreateDatabase("ledger_test_engine_123");
//
// MysqlTestServer is not thread-safe: one thread uses it at a time.
#ifndef LEDGER_TESTS_ENGINES_MYSQL_MYSQL_TEST_SERVER_H_
#define LEDGER_TESTS_ENGINES_MYSQL_MYSQL_TEST_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "engines/mysql/mysql_connection.h"
#include "ledger/engine.h"

namespace ledger::testing {

inline constexpr char kMysqlDsnVariable[] = "LEDGER_TEST_MYSQL_DSN";

// The DSN from the environment, or "" when it is unset.
std::string MysqlTestDsn();
// Why the MySQL tests cannot run here ("" when they can): the skip reason.
std::string MysqlUnavailableReason();
// A database name unique to this process: "<base>_<purpose>_<pid>".
std::string ScratchDatabaseName(std::string_view base, std::string_view purpose);

class MysqlTestServer {
 public:
  static absl::StatusOr<std::unique_ptr<MysqlTestServer>> Connect(std::string_view dsn);

  // The server's DSN with another database.
  std::string DsnFor(std::string_view database) const;
  const std::string& base_database() const { return settings_.database; }

  // DROP DATABASE IF EXISTS + CREATE DATABASE; returns its DSN.
  absl::StatusOr<std::string> RecreateDatabase(std::string_view database);
  absl::Status DropDatabase(std::string_view database);
  // Deletes every row of the ledger's tables (keeps the schema and schema_migrations).
  absl::Status EmptyLedgerTables(std::string_view database);

  // Sessions other than this one that are connected to `database` and are inside a
  // transaction: listed in information_schema.INNODB_TRX, or running a statement (the
  // engine's sessions run with autocommit off; MariaDB's INNODB_TRX may leave out a
  // transaction that waits for a lock).
  absl::StatusOr<std::vector<int64_t>> SessionsInTransaction(std::string_view database);
  // Every session other than this one connected to `database`.
  absl::StatusOr<std::vector<int64_t>> Sessions(std::string_view database);
  absl::Status Kill(int64_t session_id);

  // The first column of the first row of `sql` as text ("" without rows; NULL as "NULL").
  absl::StatusOr<std::string> QueryText(const std::string& sql);
  absl::Status Execute(const std::string& sql);

 private:
  MysqlTestServer(mysql_internal::MysqlSettings settings,
                  std::unique_ptr<mysql_internal::MysqlConnection> connection)
      : settings_(std::move(settings)), connection_(std::move(connection)) {}
  absl::StatusOr<std::vector<int64_t>> SessionIds(const std::string& sql);

  mysql_internal::MysqlSettings settings_;
  std::unique_ptr<mysql_internal::MysqlConnection> connection_;
};

// A scratch database of this process ("<dsn database>_<purpose>_<pid>") for a test
// suite: created and migrated on the first OpenFresh, emptied on each later one (DELETE
// of every ledger table, which keeps many short tests fast), dropped by Drop. Its
// administrative session reconnects once if a server restart killed it. The conformance
// suite and the property suite both use it.
//
// Thread-safe.
class MysqlScratchDatabase {
 public:
  MysqlScratchDatabase(std::string purpose, int pool_size)
      : purpose_(std::move(purpose)), pool_size_(pool_size) {}

  absl::StatusOr<std::unique_ptr<Engine>> OpenFresh() ABSL_LOCKS_EXCLUDED(mutex_);
  // Another engine on the database as OpenFresh left it, as a second process opens it.
  absl::StatusOr<std::unique_ptr<Engine>> OpenAgain() ABSL_LOCKS_EXCLUDED(mutex_);
  // Kills every session of the scratch database (idle pooled ones too), or one at
  // random among those inside a transaction; returns how many. "Every" stands in for
  // "those in a transaction" when one client pauses mid-transaction, because
  // information_schema.INNODB_TRX is a cache InnoDB refreshes at most every 100 ms: a
  // kill soon after the previous one would miss the paused session.
  absl::StatusOr<int> Kill(bool one_busy_at_random) ABSL_LOCKS_EXCLUDED(mutex_);
  // Waits until at least `count` transactions of the scratch database wait for a lock
  // (INNODB_TRX's LOCK WAIT, polled slower than InnoDB's 100 ms cache refresh);
  // DeadlineExceeded after a minute.
  absl::Status AwaitLockWaiters(int count) ABSL_LOCKS_EXCLUDED(mutex_);
  // Call once all tests ran (a gtest environment's TearDown), while the driver lives.
  void Drop() ABSL_LOCKS_EXCLUDED(mutex_);

 private:
  absl::Status ConnectLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // The administrative session dies with a server restart: reconnect once and retry.
  absl::Status WithReconnect(const std::function<absl::Status()>& action)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const std::string purpose_;
  const int pool_size_;
  absl::Mutex mutex_;
  std::unique_ptr<MysqlTestServer> server_ ABSL_GUARDED_BY(mutex_);
  std::string name_ ABSL_GUARDED_BY(mutex_);
  std::string dsn_ ABSL_GUARDED_BY(mutex_);
  std::mt19937_64 random_ ABSL_GUARDED_BY(mutex_){std::random_device()()};
};

// The process's scratch database for `purpose`, with a gtest environment that drops it
// when the tests end. Call it at namespace scope, so the drop is registered before the
// tests run:
//   MysqlScratchDatabase* const kScratch = ScratchDatabaseDroppedAtExit("property", 8);
MysqlScratchDatabase* ScratchDatabaseDroppedAtExit(std::string purpose, int pool_size);

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_ENGINES_MYSQL_MYSQL_TEST_SERVER_H_
