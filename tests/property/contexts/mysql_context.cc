// The property suite on MySQL / MariaDB. The server comes from LEDGER_TEST_MYSQL_DSN;
// the suite works in a scratch database of this process ("<dsn database>_property_<pid>"),
// created on the first run, emptied before every later one and dropped at the end, through
// the tests' administrative session (tests/engines/mysql/mysql_test_server.h), which
// also finds and KILLs the engine's sessions. Restarts go through scripts/test-servers.sh.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "engines/mysql/mysql_engine.h"
#include "base/status.h"
#include "tests/engines/mysql/mysql_test_server.h"
#include "tests/property/property_suite.h"

namespace ledger::property {
namespace {

constexpr int kPoolSize = 8;

class ScratchDatabase {
 public:
  absl::StatusOr<std::unique_ptr<Engine>> OpenFresh() ABSL_LOCKS_EXCLUDED(mutex_) {
    absl::MutexLock lock(&mutex_);
    LEDGER_RETURN_IF_ERROR(ConnectLocked());
    if (dsn_.empty()) {
      name_ = testing::ScratchDatabaseName(server_->base_database(), "property");
      LEDGER_ASSIGN_OR_RETURN(dsn_, server_->RecreateDatabase(name_));
    } else {
      LEDGER_RETURN_IF_ERROR(WithReconnect([&] { return server_->EmptyLedgerTables(name_); }));
    }
    MysqlOptions options;
    options.connection = dsn_;
    options.pool_size = kPoolSize;
    options.migrate = true;
    return OpenMysqlEngine(options);
  }

  // Kills every session of the scratch database (idle pooled ones too), or one at
  // random among those with an open InnoDB transaction; returns how many.
  //
  // Why "every" stands in for "those in a transaction" when a single client pauses
  // mid-transaction: information_schema.INNODB_TRX is a cache InnoDB refreshes at most
  // every 100 ms, so a kill soon after the previous one would miss the paused session.
  absl::StatusOr<int> Kill(bool one_busy_at_random) ABSL_LOCKS_EXCLUDED(mutex_) {
    absl::MutexLock lock(&mutex_);
    LEDGER_RETURN_IF_ERROR(ConnectLocked());
    std::vector<int64_t> sessions;
    LEDGER_RETURN_IF_ERROR(WithReconnect([&]() -> absl::Status {
      absl::StatusOr<std::vector<int64_t>> listed =
          one_busy_at_random ? server_->SessionsInTransaction(name_) : server_->Sessions(name_);
      if (listed.ok() && listed->empty() && one_busy_at_random) listed = server_->Sessions(name_);
      if (!listed.ok()) return listed.status();
      sessions = *std::move(listed);
      return absl::OkStatus();
    }));
    if (one_busy_at_random && sessions.size() > 1) {
      sessions = {sessions[random_() % sessions.size()]};
    }
    int killed = 0;
    for (int64_t session : sessions) {
      // A session that ended meanwhile is not an error: it is gone either way.
      if (server_->Kill(session).ok()) ++killed;
    }
    return killed;
  }

  void Drop() ABSL_LOCKS_EXCLUDED(mutex_) {
    absl::MutexLock lock(&mutex_);
    if (server_ == nullptr || name_.empty()) return;
    (void)WithReconnect([&] { return server_->DropDatabase(name_); });
    server_.reset();
  }

 private:
  absl::Status ConnectLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    if (server_ != nullptr) return absl::OkStatus();
    LEDGER_ASSIGN_OR_RETURN(server_, testing::MysqlTestServer::Connect(testing::MysqlTestDsn()));
    return absl::OkStatus();
  }

  // The administrative session dies with a server restart: reconnect once and retry.
  template <typename Action>
  absl::Status WithReconnect(Action action) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    absl::Status status = action();
    if (status.ok()) return status;
    server_.reset();
    LEDGER_RETURN_IF_ERROR(ConnectLocked());
    return action();
  }

  absl::Mutex mutex_;
  std::unique_ptr<testing::MysqlTestServer> server_ ABSL_GUARDED_BY(mutex_);
  std::string name_ ABSL_GUARDED_BY(mutex_);
  std::string dsn_ ABSL_GUARDED_BY(mutex_);
  std::mt19937_64 random_ ABSL_GUARDED_BY(mutex_){std::random_device()()};
};

ScratchDatabase& Scratch() {
  static ScratchDatabase* scratch = new ScratchDatabase();  // lives for the process
  return *scratch;
}

class DropScratchDatabase : public ::testing::Environment {
 public:
  void TearDown() override { Scratch().Drop(); }
};

[[maybe_unused]] ::testing::Environment* const kDropScratch =
    ::testing::AddGlobalTestEnvironment(new DropScratchDatabase());

PropertyContext MysqlContext() {
  PropertyContext context;
  context.engine_name = "mysql";
  context.unavailable_reason = testing::MysqlUnavailableReason();
  context.checkpoint_every = 25;  // a full comparison costs a query per account
  context.default_seed_count = 3;
  context.open_fresh = [] { return Scratch().OpenFresh(); };
  context.kill_sessions_in_transaction = [] { return Scratch().Kill(false); };  // see Kill
  context.kill_one_busy_session = [] { return Scratch().Kill(true); };
  context.kill_all_sessions = [] { return Scratch().Kill(false); };
  context.restart_server = [] { return RestartTestServer("mysql"); };
  context.restart_unavailable_reason = RestartUnavailableReason();
  return context;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(mysql, PropertyTest, ::testing::Values(&MysqlContext),
                         PropertyContextName);
INSTANTIATE_TEST_SUITE_P(mysql, ServerFaultTest, ::testing::Values(&MysqlContext),
                         PropertyContextName);

}  // namespace ledger::property
