#include "tests/cli/fresh_database.h"

#include <fstream>
#include <memory>

#include "gtest/gtest.h"
#include "tests/conformance/conformance_context.h"  // RunningInCi
#ifdef LEDGER_FRESH_DATABASE_WITH_MYSQL
#include "tests/engines/mysql/mysql_test_server.h"
#endif
#ifdef LEDGER_FRESH_DATABASE_WITH_POSTGRES
#include "tests/engines/postgres/postgres_test_database.h"
#endif

namespace ledger::testing {
namespace {

#ifdef LEDGER_FRESH_DATABASE_WITH_MYSQL
// The administrative session that recreates the databases: made once, before any
// `ledger` process or fork()ed child runs (they never use it).
absl::StatusOr<MysqlTestServer*> MysqlAdministrativeSession() {
  static absl::StatusOr<std::unique_ptr<MysqlTestServer>> server =
      MysqlTestServer::Connect(MysqlTestDsn());
  if (!server.ok()) return server.status();
  return server->get();
}

std::string MysqlDatabaseName(const MysqlTestServer& server) {
  return ScratchDatabaseName(server.base_database(), "fresh");
}
#endif

// Why `engine` cannot be tested here: {not built, server missing}, "" when it can.
struct Unavailable {
  std::string not_built;
  std::string server_missing;
  const char* dsn_variable = nullptr;  // names the engine's server; null for SQLite
};

Unavailable UnavailableReason(std::string_view engine) {
  if (engine == "sqlite") return {};
  if (engine == "mysql") {
#ifdef LEDGER_FRESH_DATABASE_WITH_MYSQL
    return {"", MysqlUnavailableReason(), "LEDGER_TEST_MYSQL_DSN"};
#else
    return {"this build has no MySQL engine", "", "LEDGER_TEST_MYSQL_DSN"};
#endif
  }
  if (engine == "postgres") {
#ifdef LEDGER_FRESH_DATABASE_WITH_POSTGRES
    return {"", PostgresUnavailableReason(), "LEDGER_TEST_POSTGRES_DSN"};
#else
    return {"this build has no PostgreSQL engine", "", "LEDGER_TEST_POSTGRES_DSN"};
#endif
  }
  return {"", "unknown engine " + std::string(engine)};
}

}  // namespace

void RequireFreshDatabaseEngine(std::string_view engine) {
  Unavailable unavailable = UnavailableReason(engine);
  if (!unavailable.not_built.empty()) {
    // A server named for an engine the build lacks is a build that cannot run what it
    // was asked to (scripts/test.sh requires every engine): a failure, as under CI.
    if (!EnvironmentOrEmpty(unavailable.dsn_variable).empty()) {
      GTEST_FAIL() << unavailable.not_built << ", but " << unavailable.dsn_variable << " is set";
    }
    if (RunningInCi()) GTEST_FAIL() << unavailable.not_built << " (CI=true)";
    GTEST_SKIP() << unavailable.not_built;
  }
  if (unavailable.server_missing.empty()) return;
  if (RunningInCi()) GTEST_FAIL() << unavailable.server_missing;
  GTEST_SKIP() << unavailable.server_missing;
}

absl::StatusOr<std::string> FreshDatabaseUrl(std::string_view engine,
                                             const std::filesystem::path& folder) {
#ifdef LEDGER_FRESH_DATABASE_WITH_MYSQL
  if (engine == "mysql") {
    absl::StatusOr<MysqlTestServer*> server = MysqlAdministrativeSession();
    if (!server.ok()) return server.status();
    return (*server)->RecreateDatabase(MysqlDatabaseName(**server));
  }
#endif
#ifdef LEDGER_FRESH_DATABASE_WITH_POSTGRES
  if (engine == "postgres") {
    absl::StatusOr<std::string> dsn = PostgresTestDsn();  // created on first use
    if (!dsn.ok()) return dsn.status();
    if (absl::Status reset = ResetPostgresTestDatabase(); !reset.ok()) return reset;
    return dsn;
  }
#endif
  if (engine == "sqlite") {
    // An empty file is an empty SQLite database: commands that do not create one open it.
    const std::filesystem::path path = folder / "ledger.db";
    std::ofstream{path, std::ios::trunc};
    return "sqlite:" + path.string();
  }
  return absl::InvalidArgumentError("no fresh database for engine " + std::string(engine));
}

void DropFreshDatabase(std::string_view engine) {
#ifdef LEDGER_FRESH_DATABASE_WITH_MYSQL
  if (engine == "mysql") {
    absl::StatusOr<MysqlTestServer*> server = MysqlAdministrativeSession();
    if (server.ok()) (void)(*server)->DropDatabase(MysqlDatabaseName(**server));
  }
#endif
  // PostgreSQL: the private database is dropped when the test process ends.
  (void)engine;
}

}  // namespace ledger::testing
