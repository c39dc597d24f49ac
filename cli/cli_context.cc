#include "cli/cli_context.h"

#include <cstdlib>
#include <iostream>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "engines/common/database_url.h"
#include "engines/open_engine.h"
#include "base/status.h"
#include "cli/output.h"

namespace ledger::cli {

std::string ResolveDatabaseUrl(const GlobalOptions& global) {
  if (!global.database_url.empty()) return global.database_url;
  const char* from_environment = std::getenv(kDatabaseEnvironmentVariable);
  if (from_environment != nullptr && from_environment[0] != '\0') return from_environment;
  return kDatabaseUrlDefault;
}

absl::StatusOr<std::unique_ptr<Engine>> OpenEngineAt(std::string_view url, OpenChoices choices) {
  HidePasswordOf(url);  // cut from every error this process reports
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      OpenEngine(url, {.migrate = choices.migrate, .create_database = choices.create});
  if (engine.ok()) return engine;
  absl::Status status = Annotate(engine.status(), "opening " + RedactDatabaseUrl(url));
  if (!choices.create && absl::StrContains(status.message(), "does not exist")) {
    status = WithHint(status, "`ledger migrate --db URL` creates a new database");
  }
  return status;
}

absl::StatusOr<std::unique_ptr<Ledger>> OpenLedgerAt(std::string_view url, std::string_view read_url) {
  LEDGER_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, OpenEngineAt(url));
  LedgerOptions options;
  if (!read_url.empty()) {
    HidePasswordOf(read_url);
    absl::StatusOr<std::unique_ptr<Engine>> reads = OpenReadEngine(read_url);
    if (!reads.ok()) {
      return Annotate(reads.status(), "opening --read-db " + RedactDatabaseUrl(read_url));
    }
    options.read_engine = *std::move(reads);
  }
  LEDGER_ASSIGN_OR_RETURN(Ledger ledger,
                          Ledger::Open(std::shared_ptr<Engine>(std::move(engine)), std::move(options)));
  return std::make_unique<Ledger>(std::move(ledger));
}

absl::StatusOr<std::map<std::string, int>> ScalesByAsset(Ledger& ledger) {
  LEDGER_ASSIGN_OR_RETURN(std::vector<Asset> assets, ledger.ListAssets());
  std::map<std::string, int> scales;
  for (const Asset& asset : assets) scales[asset.code] = asset.scale;
  return scales;
}

int ScaleOf(const std::map<std::string, int>& scales, const std::string& asset) {
  auto scale = scales.find(asset);
  return scale == scales.end() ? 0 : scale->second;
}

ExitCode ReportError(const absl::Status& status) {
  ExitCode code = ExitCodeForStatus(status);
  const absl::Status shown = WithoutHiddenPassword(status);
  std::cerr << "ledger: " << ExitCodeName(code) << ": " << shown.message() << "\n";
  return code;
}

ExitCode ReportSubmitError(const absl::Status& status, bool dry_run) {
  nlohmann::json json = ErrorToJson(WithoutHiddenPassword(status));
  if (dry_run) json["dry_run"] = true;
  PrintJson(json);
  return ReportError(status);
}

ExitCode CommandSelection::Run() {
  if (!action_) {
    std::cerr << "ledger: bad_input: no command given; see ledger --help\n";
    return ExitCode::kBadInput;
  }
  return action_();
}

}  // namespace ledger::cli
