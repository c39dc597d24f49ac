// migrate, prune, verify: operating the database rather than the ledger's contents.
#include <iostream>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "engines/common/database_url.h"
#include "base/status.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "ledger/verify.h"

namespace ledger::cli {
namespace {

struct VerifyArguments {
  bool json = false;
};

ExitCode RunMigrate(const GlobalOptions& global) {
  std::string url = ResolveDatabaseUrl(global);
  // Opened without migrating so the migration is this command's own visible step.
  absl::StatusOr<std::unique_ptr<Engine>> engine = OpenEngineAt(url, {.migrate = false, .create = true});
  if (!engine.ok()) return ReportError(engine.status());
  if (absl::Status migrated = (*engine)->Migrate(); !migrated.ok()) {
    return ReportError(Annotate(migrated, "migrating " + RedactDatabaseUrl(url)));
  }
  std::cout << "migrate: " << RedactDatabaseUrl(url) << " (" << (*engine)->name()
            << ") is up to date\n";
  return ExitCode::kOk;
}

ExitCode RunPrune(const GlobalOptions& global) {
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  absl::StatusOr<int64_t> pruned = (*ledger)->PruneExpiredKeys();
  if (!pruned.ok()) return ReportError(pruned.status());
  PrintJson({{"pruned_keys", *pruned}});
  return ExitCode::kOk;
}

ExitCode RunVerify(const GlobalOptions& global, const VerifyArguments& arguments) {
  absl::StatusOr<std::unique_ptr<Ledger>> ledger = OpenLedger(global);
  if (!ledger.ok()) return ReportError(ledger.status());
  absl::StatusOr<VerifyReport> report = (*ledger)->Verify();
  if (!report.ok()) return ReportError(Annotate(report.status(), "verify could not run"));
  if (arguments.json) {
    PrintJson(report->ToJson());
  } else {
    std::cout << report->ToText();
  }
  return report->ok() ? ExitCode::kOk : ExitCode::kVerifyFailed;
}

}  // namespace

void AddAdminCommands(CLI::App& app, const GlobalOptions& global, CommandSelection& selection) {
  CLI::App* migrate = app.add_subcommand(
      "migrate", "Apply the schema migrations not applied yet (every command also does this)");
  migrate->callback(
      [&global, &selection] { selection.Select([&global] { return RunMigrate(global); }); });

  CLI::App* prune = app.add_subcommand(
      "prune", "Delete expired idempotency keys (their transactions stay forever)");
  prune->callback(
      [&global, &selection] { selection.Select([&global] { return RunPrune(global); }); });

  auto verify_arguments = std::make_shared<VerifyArguments>();
  CLI::App* verify = app.add_subcommand(
      "verify",
      "Audit the whole database: transactions balance per asset, balances equal their\n"
      "entries, no account below its floor, every key points at its transaction.\n"
      "Exit 7 on any violation.");
  verify->add_flag("--json", verify_arguments->json, "Print the report as JSON");
  verify->callback([&global, &selection, verify_arguments] {
    selection.Select([&global, verify_arguments] { return RunVerify(global, *verify_arguments); });
  });
}

}  // namespace ledger::cli
