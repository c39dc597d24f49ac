// The conformance suite's context for the MySQL engine. The server comes from
// LEDGER_TEST_MYSQL_DSN; the suite runs in a scratch database of this process
// ("<dsn database>_conformance_<pid>"), created and migrated on the first open_fresh,
// emptied (DELETE of every ledger table) on each later one, which keeps ~60 tests
// fast, and dropped when the tests end.
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "engines/mysql/mysql_engine.h"
#include "base/status.h"
#include "tests/conformance/conformance_context.h"
#include "tests/conformance/conformance_fixture.h"
#include "tests/engines/mysql/mysql_test_server.h"

namespace ledger::testing {
namespace {

// Enough sessions for the suite's widest race (32 submitters) to run at once.
constexpr int kPoolSize = 40;

class ScratchDatabase {
 public:
  absl::StatusOr<std::unique_ptr<Engine>> OpenFresh() ABSL_LOCKS_EXCLUDED(mutex_) {
    absl::MutexLock lock(&mutex_);
    if (server_ == nullptr) {
      LEDGER_ASSIGN_OR_RETURN(server_, MysqlTestServer::Connect(MysqlTestDsn()));
      name_ = ScratchDatabaseName(server_->base_database(), "conformance");
      LEDGER_ASSIGN_OR_RETURN(dsn_, server_->RecreateDatabase(name_));
    } else {
      LEDGER_RETURN_IF_ERROR(server_->EmptyLedgerTables(name_));
    }
    MysqlOptions options;
    options.connection = dsn_;
    options.pool_size = kPoolSize;
    options.migrate = true;  // the first open creates the schema, later ones find it
    return OpenMysqlEngine(options);
  }

  // Called once all tests ran (a gtest environment's TearDown), not at static
  // destruction, while the driver is still fully alive.
  void Drop() ABSL_LOCKS_EXCLUDED(mutex_) {
    absl::MutexLock lock(&mutex_);
    if (server_ == nullptr) return;
    (void)server_->DropDatabase(name_);
    server_.reset();
  }

 private:
  absl::Mutex mutex_;
  std::unique_ptr<MysqlTestServer> server_ ABSL_GUARDED_BY(mutex_);
  std::string name_ ABSL_GUARDED_BY(mutex_);
  std::string dsn_ ABSL_GUARDED_BY(mutex_);
};

ScratchDatabase& Scratch() {
  static ScratchDatabase scratch;  // empty by static destruction: Drop() ran before
  return scratch;
}

class DropScratchDatabase : public ::testing::Environment {
 public:
  void TearDown() override { Scratch().Drop(); }
};

[[maybe_unused]] ::testing::Environment* const kDropScratch =
    ::testing::AddGlobalTestEnvironment(new DropScratchDatabase());

ConformanceContext MysqlContext() {
  ConformanceContext context;
  context.engine_name = "mysql";
  context.unavailable_reason = MysqlUnavailableReason();
  context.open_fresh = []() { return Scratch().OpenFresh(); };
  return context;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(mysql, ConformanceTest, ::testing::Values(&MysqlContext));

}  // namespace ledger::testing
