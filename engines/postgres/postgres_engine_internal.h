// Internals of the PostgreSQL engine shared by its sources and its tests: the embedded
// migrations and the connection-string handling. Not installed.
#ifndef LEDGER_ENGINES_POSTGRES_POSTGRES_ENGINE_INTERNAL_H_
#define LEDGER_ENGINES_POSTGRES_POSTGRES_ENGINE_INTERNAL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engines/postgres/postgres_engine.h"
#include "engines/common/migration.h"

namespace ledger {

// schema/postgres/*.sql, embedded at build time (cmake/EmbedMigrations.cmake).
std::vector<Migration> PostgresMigrations();

namespace postgres_internal {

struct ParsedPostgresConnection {
  std::string connection;  // what libpq gets: the claim parameter removed
  PostgresClaimMode claim_mode = PostgresClaimMode::kAdvisoryLock;
};

// Reads and removes a "claim=row|advisory" query parameter of a postgres:// or
// postgresql:// URI; it overrides `default_mode`. Other strings pass through unchanged.
// InvalidArgument for an unknown claim mode.
absl::StatusOr<ParsedPostgresConnection> ParsePostgresConnection(const std::string& connection,
                                                                 PostgresClaimMode default_mode);

}  // namespace postgres_internal
}  // namespace ledger

#endif  // LEDGER_ENGINES_POSTGRES_POSTGRES_ENGINE_INTERNAL_H_
