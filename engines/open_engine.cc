#include "engines/open_engine.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engines/memory/memory_engine.h"
#include "base/status.h"
#include "engines/common/database_url.h"
#if LEDGER_WITH_SQLITE
#include "engines/sqlite/sqlite_engine.h"
#endif
#if LEDGER_WITH_POSTGRES
#include "engines/postgres/postgres_engine.h"
#endif
#if LEDGER_WITH_MYSQL
#include "engines/mysql/mysql_engine.h"
#endif

namespace ledger {
namespace {

[[maybe_unused]] absl::Status NotBuilt(std::string_view engine) {
  return absl::UnimplementedError(absl::StrCat(
      "this build has no ", View(engine), " engine (install its client library and rebuild)"));
}

absl::StatusOr<std::unique_ptr<Engine>> OpenSqlite([[maybe_unused]] std::string_view url,
                                                   [[maybe_unused]] const OpenEngineOptions& options) {
#if LEDGER_WITH_SQLITE
  LEDGER_ASSIGN_OR_RETURN(SqliteOptions sqlite, SqliteOptionsFromUrl(url));
  sqlite.pool_size = options.pool_size;
  sqlite.migrate = options.migrate;
  sqlite.create_if_missing = options.create_database;
  return OpenSqliteEngine(sqlite);
#else
  return NotBuilt("SQLite");
#endif
}

absl::StatusOr<std::unique_ptr<Engine>> OpenServerEngine(
    [[maybe_unused]] std::string_view url_text, [[maybe_unused]] const DatabaseUrl& url,
    [[maybe_unused]] const OpenEngineOptions& options) {
  if (url.scheme == "postgres" || url.scheme == "postgresql") {
#if LEDGER_WITH_POSTGRES
    // The engine reads and checks the URL's parameters itself (unknown ones refused).
    PostgresOptions postgres;
    postgres.connection = std::string(url_text);
    postgres.pool_size = options.pool_size;
    postgres.migrate = options.migrate;
    return OpenPostgresEngine(postgres);
#else
    return NotBuilt("PostgreSQL");
#endif
  }
#if LEDGER_WITH_MYSQL
  MysqlOptions mysql;
  mysql.connection = std::string(url_text);
  mysql.pool_size = options.pool_size;
  mysql.migrate = options.migrate;
  return OpenMysqlEngine(mysql);
#else
  return NotBuilt("MySQL");
#endif
}

absl::StatusOr<std::unique_ptr<Engine>> OpenParsed(std::string_view url_text,
                                                   const DatabaseUrl& url,
                                                   const OpenEngineOptions& options) {
  if (url_text == "memory:" || url_text == "memory") return OpenMemoryEngine();
  if (url.scheme == "memory") {
    return absl::InvalidArgumentError("memory URL: takes no path and no parameters (memory:)");
  }
  if (url.scheme == "sqlite") return OpenSqlite(url_text, options);
  const bool server = absl::StartsWith(View(url_text), "postgres://") ||
                      absl::StartsWith(View(url_text), "postgresql://") ||
                      absl::StartsWith(View(url_text), "mysql://");
  if (server) return OpenServerEngine(url_text, url, options);
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown database URL \"", RedactDatabaseUrl(url_text),
      "\": use sqlite:PATH, memory:, postgres://... or mysql://..."));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> OpenEngine(std::string_view url,
                                                   const OpenEngineOptions& options) {
  absl::StatusOr<DatabaseUrl> parsed = ParseDatabaseUrl(url);
  if (!parsed.ok()) return RedactPasswordInStatus(parsed.status(), url);
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenParsed(url, *parsed, options);
  // Drivers may echo connection details in their errors: none leaves with a password.
  if (!engine.ok()) return RedactPasswordInStatus(engine.status(), url);
  return engine;
}

absl::StatusOr<std::unique_ptr<Engine>> OpenReadEngine(std::string_view url,
                                                       const OpenEngineOptions& options) {
  OpenEngineOptions reads = options;
  reads.migrate = false;
  reads.create_database = false;
  return OpenEngine(url, reads);
}

}  // namespace ledger
