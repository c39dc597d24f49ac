// Database URLs: the parameters each engine accepts in its query string, and the one
// redaction used wherever a URL, a DSN or a driver message that echoes one may be shown
// (the CLI, the demo, the load driver, logs, errors).
//
//   ledger::RedactDatabaseUrl("mysql://app:s3cr%40t@db:3306/books")
//       == "mysql://app:***@db:3306/books"
//
// Thread-safe: free functions over values.
#ifndef LEDGER_ENGINES_COMMON_DATABASE_URL_H_
#define LEDGER_ENGINES_COMMON_DATABASE_URL_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ledger {

struct DatabaseUrl {
  std::string scheme;  // what precedes the first ':' ("sqlite", "postgres", ...)
  std::string base;    // the URL without its query string, as written
  // The query's name=value pairs in order, as written (not percent-decoded).
  std::vector<std::pair<std::string, std::string>> parameters;

  // The value of parameter `name`, or `fallback` when the URL does not give it.
  std::string Parameter(std::string_view name, std::string_view fallback) const;
};

// Splits `url` into scheme, base and query parameters. The query starts at the first
// '?' after the credentials, so a password may hold '?' and ':'; an '@' or a '/' in a
// user name or password must be percent-encoded (%40, %2F), as RFC 3986 says: a URL
// with more than one '@' after "scheme://", or a '/' before its '@', is
// InvalidArgument, refused before any driver reads it (a driver would take the rest of
// the password for the host and print it). sqlite: paths are exempt (no authority).
// InvalidArgument for a parameter without a name or given twice. No error shows any
// part of the URL's password.
absl::StatusOr<DatabaseUrl> ParseDatabaseUrl(std::string_view url);

// InvalidArgument naming the first parameter of `url` not in `accepted` (and listing
// those accepted); an engine never ignores a parameter it does not know.
absl::Status CheckParameters(const DatabaseUrl& url, std::string_view engine,
                             const std::vector<std::string_view>& accepted);

// The `schema` URL parameter (PostgreSQL: the schema that holds the ledger's tables):
// InvalidArgument naming `engine` unless `schema` is 1 to kSchemaNameBytesMax characters
// of [a-z0-9_], beginning with [a-z_] and not with "pg_" (PostgreSQL reserves it). So a
// schema name is one unquoted identifier, never folded or quoted, safe in any statement.
inline constexpr char kSchemaParameter[] = "schema";
inline constexpr size_t kSchemaNameBytesMax = 63;  // PostgreSQL's NAMEDATALEN - 1
absl::Status ValidateSchemaName(std::string_view engine, std::string_view schema);

// `url` with its password replaced by "***": the userinfo password of a URL
// (scheme://user:PASSWORD@host/...), a password=... query parameter, and the
// password=... of a libpq key=value string (quoted or not).
std::string RedactDatabaseUrl(std::string_view url);

// `status` with every appearance of `url`'s password in its message (as written in the
// URL and percent-decoded) replaced by "***"; code and payloads are kept. For errors
// whose message comes from a driver that may echo connection details.
absl::Status RedactPasswordInStatus(const absl::Status& status, std::string_view url);

// The process's database URLs whose passwords nothing it reports may show: the CLI and
// `ledger serve` name their --db (and --read-db) here before they open them, and every
// message they print, log or answer goes through WithoutHiddenPassword. Each call adds
// one. Thread-safe (a mutex).
void HidePasswordOf(std::string_view url);
// `status` with every hidden URL's password cut from its message
// (RedactPasswordInStatus); unchanged while no URL is hidden.
absl::Status WithoutHiddenPassword(const absl::Status& status);

}  // namespace ledger

#endif  // LEDGER_ENGINES_COMMON_DATABASE_URL_H_
