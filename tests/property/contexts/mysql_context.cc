// The property suite on MySQL / MariaDB. The server comes from LEDGER_TEST_MYSQL_DSN;
// the suite works in a scratch database of this process ("<dsn database>_property_<pid>"),
// created on the first run, emptied before every later one and dropped at the end, through
// the tests' administrative session (tests/engines/mysql/mysql_test_server.h), which
// also finds and KILLs the engine's sessions. Restarts go through scripts/test-servers.sh.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engines/mysql/mysql_engine.h"
#include "base/status.h"
#include "tests/engines/mysql/mysql_test_server.h"
#include "tests/property/property_suite.h"

namespace ledger::property {
namespace {

constexpr int kPoolSize = 8;

testing::MysqlScratchDatabase* const kScratch =
    testing::ScratchDatabaseDroppedAtExit("property", kPoolSize);
testing::MysqlScratchDatabase& Scratch() { return *kScratch; }

PropertyContext MysqlContext() {
  PropertyContext context;
  context.engine_name = "mysql";
  context.unavailable_reason = testing::MysqlUnavailableReason();
  context.checkpoint_every = 25;  // a full comparison costs a query per account
  context.default_seed_count = 3;
  context.open_fresh = [] { return Scratch().OpenFresh(); };
  context.orders_table = "property_orders";  // the database the URL names, as the ledger's
  // See MysqlScratchDatabase::Kill for why "every session" here.
  context.kill_sessions_in_transaction = [] { return Scratch().Kill(false); };
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
