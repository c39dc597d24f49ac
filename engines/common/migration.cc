#include "engines/common/migration.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/strings/str_split.h"
#include "base/status.h"

namespace ledger {

absl::Status ApplyPendingMigrations(const std::vector<Migration>& migrations,
                                    const std::set<int>& applied,
                                    const std::function<absl::Status(const Migration&)>& apply) {
  std::vector<const Migration*> ordered;
  for (const Migration& migration : migrations) ordered.push_back(&migration);
  std::sort(ordered.begin(), ordered.end(),
            [](const Migration* a, const Migration* b) { return a->version < b->version; });
  for (const Migration* migration : ordered) {
    if (applied.count(migration->version) > 0) continue;
    LEDGER_RETURN_IF_ERROR(Annotate(apply(*migration), migration->name));
  }
  return absl::OkStatus();
}

absl::Status TakeMigrationLock(std::string_view engine, absl::Duration wait,
                               const std::function<absl::StatusOr<bool>()>& try_lock) {
  constexpr absl::Duration kPauseFirst = absl::Milliseconds(50);
  constexpr absl::Duration kPauseMax = absl::Seconds(1);
  const absl::Time deadline = absl::Now() + wait;
  absl::Duration pause = kPauseFirst;
  while (true) {
    LEDGER_ASSIGN_OR_RETURN(bool granted, try_lock());
    if (granted) return absl::OkStatus();
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) break;
    absl::SleepFor(std::min(pause, left));
    pause = std::min(pause * 2, kPauseMax);
  }
  return absl::UnavailableError(absl::StrCat(
      View(engine), ": another process has held the migration lock for longer than "
      "migration_lock_wait (", absl::FormatDuration(wait),
      "); it is still migrating this database: retry once it has finished"));
}

std::vector<std::string> SplitSqlStatements(std::string_view sql) {
  constexpr absl::string_view kDelimiterCommand = "DELIMITER ";
  std::vector<std::string> statements;
  std::string current;
  std::string terminator = ";";
  for (absl::string_view line : absl::StrSplit(View(sql), '\n')) {
    absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (trimmed.empty() || absl::StartsWith(trimmed, "--")) continue;
    if (absl::StartsWithIgnoreCase(trimmed, kDelimiterCommand)) {
      terminator = std::string(absl::StripAsciiWhitespace(trimmed.substr(kDelimiterCommand.size())));
      continue;
    }
    current.append(line.data(), line.size());
    current.push_back('\n');
    if (absl::EndsWith(trimmed, terminator)) {
      current.erase(current.rfind(terminator));
      if (!absl::StripAsciiWhitespace(current).empty()) statements.push_back(current);
      current.clear();
    }
  }
  if (!absl::StripAsciiWhitespace(current).empty()) statements.push_back(current);
  return statements;
}

}  // namespace ledger
