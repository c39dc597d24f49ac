// The conformance suite's context for the MySQL engine. The server comes from
// LEDGER_TEST_MYSQL_DSN; the suite runs in a scratch database of this process
// ("<dsn database>_conformance_<pid>", tests/engines/mysql/mysql_test_server.h).
#include <memory>
#include <string>

#include "engines/mysql/mysql_engine.h"
#include "base/status.h"
#include "tests/conformance/conformance_context.h"
#include "tests/conformance/conformance_fixture.h"
#include "tests/engines/mysql/mysql_test_server.h"

namespace ledger::testing {
namespace {

// Enough sessions for the suite's widest race (32 submitters) to run at once.
constexpr int kPoolSize = 40;

MysqlScratchDatabase* const kScratch = ScratchDatabaseDroppedAtExit("conformance", kPoolSize);
MysqlScratchDatabase& Scratch() { return *kScratch; }

ConformanceContext MysqlContext() {
  ConformanceContext context;
  context.engine_name = "mysql";
  context.unavailable_reason = MysqlUnavailableReason();
  context.open_fresh = []() { return Scratch().OpenFresh(); };
  context.open_again = []() { return Scratch().OpenAgain(); };
  context.kill_sessions = []() { return Scratch().Kill(/*one_busy_at_random=*/false).status(); };
  context.await_lock_waiters = [](int count) { return Scratch().AwaitLockWaiters(count); };
  // fail_commits stays empty: InnoDB checks every constraint at the statement, so no
  // COMMIT fails for a constraint.
  return context;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(mysql, ConformanceTest, ::testing::Values(&MysqlContext));

}  // namespace ledger::testing
