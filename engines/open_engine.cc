#include "engines/open_engine.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engines/memory/memory_engine.h"
#include "base/status.h"
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

bool HasScheme(std::string_view url, std::string_view scheme) {
  return absl::StartsWith(View(url), View(scheme));
}

[[maybe_unused]] absl::Status NotBuilt(std::string_view engine) {
  return absl::UnimplementedError(absl::StrCat(
      "this build has no ", View(engine), " engine (install its client library and rebuild)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> OpenEngine(std::string_view url,
                                                   const OpenEngineOptions& options) {
  if (url == "memory:" || url == "memory") return OpenMemoryEngine();
  if (HasScheme(url, "sqlite:")) {
#if LEDGER_WITH_SQLITE
    std::string_view path = url.substr(HasScheme(url, "sqlite://") ? 9 : 7);
    if (path.empty()) return absl::InvalidArgumentError("sqlite: needs a path, e.g. sqlite:ledger.db");
    SqliteOptions sqlite;
    sqlite.path = std::string(path);
    sqlite.migrate = options.migrate;
    return OpenSqliteEngine(sqlite);
#else
    return NotBuilt("SQLite");
#endif
  }
  if (HasScheme(url, "postgres://") || HasScheme(url, "postgresql://")) {
#if LEDGER_WITH_POSTGRES
    PostgresOptions postgres;
    postgres.connection = std::string(url);
    postgres.pool_size = options.pool_size;
    postgres.migrate = options.migrate;
    return OpenPostgresEngine(postgres);
#else
    return NotBuilt("PostgreSQL");
#endif
  }
  if (HasScheme(url, "mysql://")) {
#if LEDGER_WITH_MYSQL
    MysqlOptions mysql;
    mysql.connection = std::string(url);
    mysql.pool_size = options.pool_size;
    mysql.migrate = options.migrate;
    return OpenMysqlEngine(mysql);
#else
    return NotBuilt("MySQL");
#endif
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown database URL \"", View(url),
      "\": use sqlite:PATH, memory:, postgres://... or mysql://..."));
}

}  // namespace ledger
