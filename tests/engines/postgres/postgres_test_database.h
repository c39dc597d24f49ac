// A private PostgreSQL database per test process, on the server named by
// LEDGER_TEST_POSTGRES_DSN (scripts/test-servers.sh writes it).
//
//   absl::StatusOr<std::unique_ptr<Engine>> engine =
//       OpenFreshPostgresEngine(PostgresClaimMode::kRow);
//
// Why a database and not a schema: advisory locks are per database, so tests running
// in parallel processes (ctest -j) never hold each other's key locks, and a fail-fast
// test never sees another process's submit as "in progress". The database is created
// on first use and dropped when the process exits.
//
// Thread-safe.
#ifndef LEDGER_TESTS_ENGINES_POSTGRES_POSTGRES_TEST_DATABASE_H_
#define LEDGER_TESTS_ENGINES_POSTGRES_POSTGRES_TEST_DATABASE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "engines/postgres/postgres_engine.h"
#include "ledger/engine.h"

namespace ledger::testing {

inline constexpr char kPostgresDsnVariable[] = "LEDGER_TEST_POSTGRES_DSN";

// Why the PostgreSQL tests cannot run here, or empty when they can.
std::string PostgresUnavailableReason();

// The connection string of this process's private database (created on first call).
absl::StatusOr<std::string> PostgresTestDsn();

// Empties the private database: DROP SCHEMA public CASCADE; CREATE SCHEMA public.
absl::Status ResetPostgresTestDatabase();

// A clean, migrated database and an engine on it. `dsn_suffix` is appended to the
// URI (e.g. "?claim=row").
absl::StatusOr<std::unique_ptr<Engine>> OpenFreshPostgresEngine(PostgresClaimMode claim_mode,
                                                                int pool_size = 16,
                                                                const std::string& dsn_suffix = "");

// An engine on the private database as it is (no reset), as a second process opens it.
absl::StatusOr<std::unique_ptr<Engine>> OpenPostgresTestEngine(PostgresClaimMode claim_mode,
                                                               int pool_size,
                                                               const std::string& dsn_suffix,
                                                               bool migrate);

// Runs `sql` (one or more statements) on a fresh connection to the private database
// and returns the first column of the first row of the last statement, or "" if none.
absl::StatusOr<std::string> QueryPostgresValue(const std::string& sql);

// Waits, on the server, until `condition_sql` (a boolean SQL expression, evaluated in
// the private database) holds; false if it did not within a minute. Polls what the
// server shows, never a guessed duration.
bool WaitOnPostgresServerUntil(const std::string& condition_sql);

// Terminates the backends of the private database other than the asking one (only
// those in `state`, e.g. "idle in transaction", when it is not empty) and waits until
// they are gone. Returns how many it terminated, as text, or the error's text.
std::string TerminatePostgresBackends(const std::string& state = "");

// The conformance suite's server-side controls (tests/conformance/conformance_context.h):
// end every session, wait for lock waiters, fail COMMITs with a deferred foreign key (on
// the ledger in `schema`, when not empty).
struct ConformanceContext;
void AddPostgresServerControls(ConformanceContext& context, const std::string& schema = "");

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_ENGINES_POSTGRES_POSTGRES_TEST_DATABASE_H_
