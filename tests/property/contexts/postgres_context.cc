// The property suite on PostgreSQL, in both claim modes. The database is this process's
// private one (tests/engines/postgres/postgres_test_database.h: reset before every run),
// so parallel test processes never share advisory locks or rows. Kills go through
// pg_terminate_backend from a separate session, restricted to this database's client
// backends; restarts through scripts/test-servers.sh.
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "engines/postgres/postgres_engine.h"
#include "base/status.h"
#include "tests/engines/postgres/postgres_test_database.h"
#include "tests/property/property_suite.h"

namespace ledger::property {
namespace {

// Enough connections for the concurrent clients and the reads between phases.
constexpr int kPoolSize = 8;
// pg_terminate_backend waits this long for the victim to be gone, so a killed session
// is dead before the paused submit goes on.
constexpr int kTerminateWaitMs = 5000;

// Terminates the client backends of this database that match `condition` (other than
// the killing session and other killers) and returns how many. One kill at a time:
// concurrent clients each ask for one, and a killer must not pick another killer.
absl::StatusOr<int> TerminateWhere(const std::string& condition, const std::string& limit = "") {
  static absl::Mutex* const kill_mutex = new absl::Mutex();
  absl::MutexLock lock(kill_mutex);
  LEDGER_ASSIGN_OR_RETURN(
      std::string killed,
      testing::QueryPostgresValue(
          absl::StrCat("SELECT count(*) FROM (SELECT pg_terminate_backend(pid, ", kTerminateWaitMs,
                       ") AS gone FROM pg_stat_activity WHERE datname = current_database()"
                       " AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
                       " AND query NOT LIKE '%pg_terminate_backend%' AND ",
                       condition, " ", limit, ") AS victims WHERE gone")));
  int count = 0;
  if (!absl::SimpleAtoi(killed, &count))
    return absl::InternalError(absl::StrCat("kill count ", killed));
  return count;
}

PropertyContext PostgresContext(PostgresClaimMode claim_mode, const char* name, int seeds,
                                const std::string& dsn_suffix = "") {
  PropertyContext context;
  context.engine_name = name;
  context.unavailable_reason = testing::PostgresUnavailableReason();
  context.checkpoint_every = 25;  // a full comparison costs a query per account
  context.default_seed_count = seeds;
  context.open_fresh = [claim_mode, dsn_suffix]() {
    return testing::OpenFreshPostgresEngine(claim_mode, kPoolSize, dsn_suffix);
  };
  // The application's schema beside the ledger's (public, reset before every run).
  context.orders_table = "property_shop.orders";
  context.orders_table_setup = {"CREATE SCHEMA IF NOT EXISTS property_shop"};
  context.kill_sessions_in_transaction = [] { return TerminateWhere("xact_start IS NOT NULL"); };
  context.kill_one_busy_session = [] {
    return TerminateWhere("(state = 'active' OR xact_start IS NOT NULL)",
                          "ORDER BY random() LIMIT 1");
  };
  context.kill_all_sessions = [] { return TerminateWhere("TRUE"); };
  context.restart_server = [] { return RestartTestServer("postgres"); };
  context.restart_unavailable_reason = RestartUnavailableReason();
  return context;
}

PropertyContext PostgresAdvisoryContext() {
  return PostgresContext(PostgresClaimMode::kAdvisoryLock, "postgres_advisory", 3);
}
PropertyContext PostgresRowContext() {
  return PostgresContext(PostgresClaimMode::kRow, "postgres_row", 2);
}
// Advisory mode with submits and batches on remembered accounts in one round trip.
PropertyContext PostgresOneTripContext() {
  PropertyContext context = PostgresContext(PostgresClaimMode::kAdvisoryLock,
                                            "postgres_one_trip", 2, "?one_round_trip=on");
  context.guesses_on_remembered_rows = true;
  return context;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(postgres, PropertyTest,
                         ::testing::Values(&PostgresAdvisoryContext, &PostgresRowContext,
                                           &PostgresOneTripContext),
                         PropertyContextName);
INSTANTIATE_TEST_SUITE_P(postgres, ServerFaultTest,
                         ::testing::Values(&PostgresAdvisoryContext, &PostgresRowContext,
                                           &PostgresOneTripContext),
                         PropertyContextName);

}  // namespace ledger::property
