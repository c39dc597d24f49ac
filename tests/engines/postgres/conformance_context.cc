// The shared conformance suite against PostgreSQL, once per claim mode, and once more
// with the ledger in a schema of its own ("?schema=conformance_books") and a lone
// submit on remembered accounts in one round trip ("one_round_trip=on"), as
// `ledger serve` may run a tenant's ledger. The advisory
// mode is chosen through PostgresOptions, the row mode through the URI's "claim=row",
// so both ways of choosing a mode are exercised.
#include "engines/postgres/postgres_engine.h"
#include "tests/conformance/conformance_fixture.h"
#include "tests/engines/postgres/postgres_test_database.h"

namespace ledger::testing {
namespace {

// `schema`: the ledger lives in that schema (?schema=NAME), dropped before each open.
ConformanceContext PostgresContext(std::string engine_name, PostgresClaimMode claim_mode,
                                   std::string dsn_suffix, std::string schema = "") {
  ConformanceContext context;
  context.engine_name = std::move(engine_name);
  context.unavailable_reason = PostgresUnavailableReason();
  context.open_fresh = [claim_mode, dsn_suffix, schema]() -> absl::StatusOr<std::unique_ptr<Engine>> {
    if (!schema.empty()) {
      absl::StatusOr<std::string> dropped =
          QueryPostgresValue("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
      if (!dropped.ok()) return dropped.status();
    }
    return OpenFreshPostgresEngine(claim_mode, /*pool_size=*/16, dsn_suffix);
  };
  context.open_again = [claim_mode, dsn_suffix]() {
    return OpenPostgresTestEngine(claim_mode, /*pool_size=*/2, dsn_suffix, /*migrate=*/false);
  };
  AddPostgresServerControls(context, schema);
  return context;
}

ConformanceContext PostgresAdvisoryContext() {
  return PostgresContext("postgres_advisory", PostgresClaimMode::kAdvisoryLock, "");
}

ConformanceContext PostgresRowContext() {
  return PostgresContext("postgres_row", PostgresClaimMode::kAdvisoryLock, "?claim=row");
}

// The whole suite against a ledger in a schema of its own (not public), the way
// `ledger serve` keeps each tenant's ledger, deciding submits and batches on the rows
// it wrote last (the contract is the same; only the round trips differ).
ConformanceContext PostgresSchemaContext() {
  return PostgresContext("postgres_schema", PostgresClaimMode::kAdvisoryLock,
                         "?schema=conformance_books&one_round_trip=on", "conformance_books");
}

INSTANTIATE_TEST_SUITE_P(postgres_advisory, ConformanceTest,
                         ::testing::Values(&PostgresAdvisoryContext));
INSTANTIATE_TEST_SUITE_P(postgres_row, ConformanceTest, ::testing::Values(&PostgresRowContext));
INSTANTIATE_TEST_SUITE_P(postgres_schema, ConformanceTest,
                         ::testing::Values(&PostgresSchemaContext));

}  // namespace
}  // namespace ledger::testing
