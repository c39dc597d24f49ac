// The `ledger` command-line tool. Commands live in one file per group (commands.h);
// exit codes are documented in exit_codes.h and docs/cli.md.
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/output.h"
#include "cli/unknown_command.h"

namespace {

using ledger::cli::ExitCode;

// CLI11 reports usage errors (and --help, --version) by throwing; this is the one place
// they are caught. Help and version exit 0; every usage error is bad input. A mistyped
// command says which word and the nearest real names; a failed `submit` also prints its
// JSON error on stdout (docs/cli.md: a program reading a submit's stdout always gets JSON).
int ExitForParseError(CLI::App& app, const std::vector<std::string>& arguments,
                      const CLI::ParseError& error) {
  const bool usage_error = error.get_exit_code() != static_cast<int>(CLI::ExitCodes::Success);
  if (usage_error) {
    if (std::optional<std::string> unknown = ledger::cli::UnknownCommandMessage(app, arguments)) {
      std::cerr << "ledger: bad_input: " << *unknown << "\n";
      return ToProcessExitCode(ExitCode::kBadInput);
    }
    if (ledger::cli::CommandWordOf(app, arguments) == "submit") {
      ledger::cli::PrintJson(ledger::cli::ErrorToJson(absl::InvalidArgumentError(error.what())));
    }
  }
  int cli11_code = app.exit(error);
  return cli11_code == 0 ? 0 : ToProcessExitCode(ExitCode::kBadInput);
}

void AddGlobalOptions(CLI::App& app, ledger::cli::GlobalOptions& global) {
  app.add_option("--db", global.database_url,
                 "Database URL: sqlite:PATH (default sqlite:ledger.db), memory:, "
                 "postgres://..., mysql://...; default from $LEDGER_DB");
  app.add_option("--read-db", global.read_database_url,
                 "Reads off the primary: balances, accounts, history, holds, transactions and "
                 "events from this URL (a PostgreSQL standby, another Galera node); writes, and "
                 "a read right after a write, stay on --db (docs/scaling.md)");
  // Subcommands accept the global options too: `ledger account list --db memory:`.
  app.fallthrough();
  app.require_subcommand(1);
  app.set_version_flag("--version", "ledger " LEDGER_VERSION);
  app.footer(
      "Exit codes: 0 ok, 1 error, 2 bad input, 3 rejected, 4 conflict, 5 in progress,\n"
      "6 faulted, 7 verify failed, 8 not found, 9 already exists.\n"
      "Run `ledger COMMAND --help` for a command's options; docs/cli.md has the reference.");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ledger: a double-entry ledger whose submits happen exactly once", "ledger"};
  ledger::cli::GlobalOptions global;
  ledger::cli::CommandSelection selection;
  AddGlobalOptions(app, global);
  ledger::cli::AddAssetCommands(app, global, selection);
  ledger::cli::AddAccountCommands(app, global, selection);
  ledger::cli::AddSubmitCommand(app, global, selection);
  ledger::cli::AddHoldCommands(app, global, selection);
  ledger::cli::AddQueryCommands(app, global, selection);
  ledger::cli::AddKeyCommands(app, global, selection);
  ledger::cli::AddAdminCommands(app, global, selection);
  ledger::cli::AddDemoCommand(app, global, selection);
  ledger::cli::AddServeCommand(app, global, selection);
  ledger::cli::AddCompletionCommand(app, global, selection);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return ExitForParseError(app, std::vector<std::string>(argv + 1, argv + argc), error);
  }
  try {
    return ToProcessExitCode(selection.Run());
  } catch (const std::exception& error) {
    // The library returns Status; this only catches a bug (e.g. std::bad_alloc), and
    // still promises a documented exit code.
    std::cerr << "ledger: error: unexpected exception: " << error.what() << "\n";
    return ToProcessExitCode(ExitCode::kError);
  }
}
