// The claim mode rides in the connection URI ("?claim=row") so a database URL alone
// configures the engine (ledger migrate --db ..., OpenEngine(url)); libpq must never
// see the parameter, as it rejects unknown ones.
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engines/postgres/postgres_engine_internal.h"

namespace ledger::postgres_internal {
namespace {

constexpr char kClaimParameter[] = "claim";

bool IsUri(const std::string& connection) {
  return absl::StartsWith(connection, "postgres://") ||
         absl::StartsWith(connection, "postgresql://");
}

absl::StatusOr<PostgresClaimMode> ParseClaimMode(absl::string_view value) {
  if (value == "advisory") return PostgresClaimMode::kAdvisoryLock;
  if (value == "row") return PostgresClaimMode::kRow;
  return absl::InvalidArgumentError(absl::StrCat("postgres: unknown claim mode \"", value,
                                                 "\" in the connection URI; use claim=advisory "
                                                 "or claim=row"));
}

}  // namespace

absl::StatusOr<ParsedPostgresConnection> ParsePostgresConnection(const std::string& connection,
                                                                 PostgresClaimMode default_mode) {
  ParsedPostgresConnection parsed{connection, default_mode};
  const size_t question = connection.find('?');
  if (!IsUri(connection) || question == std::string::npos) return parsed;

  std::vector<std::string> kept;
  for (absl::string_view parameter :
       absl::StrSplit(absl::string_view(connection).substr(question + 1), '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> name_value =
        absl::StrSplit(parameter, absl::MaxSplits('=', 1));
    if (name_value.first != kClaimParameter) {
      kept.emplace_back(parameter);
      continue;
    }
    absl::StatusOr<PostgresClaimMode> mode = ParseClaimMode(name_value.second);
    if (!mode.ok()) return mode.status();
    parsed.claim_mode = *mode;
  }
  parsed.connection = connection.substr(0, question);
  if (!kept.empty()) absl::StrAppend(&parsed.connection, "?", absl::StrJoin(kept, "&"));
  return parsed;
}

}  // namespace ledger::postgres_internal
