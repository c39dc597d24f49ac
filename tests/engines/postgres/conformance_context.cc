// The shared conformance suite against PostgreSQL, once per claim mode. The advisory
// mode is chosen through PostgresOptions, the row mode through the URI's "claim=row",
// so both ways of choosing a mode are exercised.
#include "engines/postgres/postgres_engine.h"
#include "tests/conformance/conformance_fixture.h"
#include "tests/engines/postgres/postgres_test_database.h"

namespace ledger::testing {
namespace {

ConformanceContext PostgresContext(std::string engine_name, PostgresClaimMode claim_mode,
                                   std::string dsn_suffix) {
  ConformanceContext context;
  context.engine_name = std::move(engine_name);
  context.unavailable_reason = PostgresUnavailableReason();
  context.open_fresh = [claim_mode, dsn_suffix]() {
    return OpenFreshPostgresEngine(claim_mode, /*pool_size=*/16, dsn_suffix);
  };
  context.open_again = [claim_mode, dsn_suffix]() {
    return OpenPostgresTestEngine(claim_mode, /*pool_size=*/2, dsn_suffix, /*migrate=*/false);
  };
  AddPostgresServerControls(context);
  return context;
}

ConformanceContext PostgresAdvisoryContext() {
  return PostgresContext("postgres_advisory", PostgresClaimMode::kAdvisoryLock, "");
}

ConformanceContext PostgresRowContext() {
  return PostgresContext("postgres_row", PostgresClaimMode::kAdvisoryLock, "?claim=row");
}

INSTANTIATE_TEST_SUITE_P(postgres_advisory, ConformanceTest,
                         ::testing::Values(&PostgresAdvisoryContext));
INSTANTIATE_TEST_SUITE_P(postgres_row, ConformanceTest, ::testing::Values(&PostgresRowContext));

}  // namespace
}  // namespace ledger::testing
