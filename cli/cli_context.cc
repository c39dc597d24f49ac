#include "cli/cli_context.h"

#include <cstdlib>
#include <iostream>
#include <utility>

#include "engines/open_engine.h"
#include "base/status.h"

namespace ledger::cli {

std::string ResolveDatabaseUrl(const GlobalOptions& global) {
  if (!global.database_url.empty()) return global.database_url;
  const char* from_environment = std::getenv(kDatabaseEnvironmentVariable);
  if (from_environment != nullptr && from_environment[0] != '\0') return from_environment;
  return kDatabaseUrlDefault;
}

absl::StatusOr<std::unique_ptr<Ledger>> OpenLedgerAt(std::string_view url) {
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenEngine(url);
  if (!engine.ok()) return Annotate(engine.status(), std::string("opening ") + std::string(url));
  return std::make_unique<Ledger>(std::shared_ptr<Engine>(*std::move(engine)));
}

absl::StatusOr<Asset> GetAssetOrNotFound(Engine& engine, std::string_view code) {
  LEDGER_ASSIGN_OR_RETURN(std::optional<Asset> asset, engine.GetAsset(code));
  if (!asset.has_value()) {
    return absl::NotFoundError(std::string("asset ") + std::string(code) + " is not defined");
  }
  return *std::move(asset);
}

ExitCode ReportError(const absl::Status& status) {
  ExitCode code = ExitCodeForStatus(status);
  std::cerr << "ledger: " << ExitCodeName(code) << ": " << status.message() << "\n";
  return code;
}

ExitCode CommandSelection::Run() {
  if (!action_) {
    std::cerr << "ledger: bad_input: no command given; see ledger --help\n";
    return ExitCode::kBadInput;
  }
  return action_();
}

}  // namespace ledger::cli
