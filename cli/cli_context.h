// What every command of the `ledger` tool shares: the global options, the one command
// chosen on the command line, and opening the database.
//
// CLI11 callbacks only *select* the command (CommandSelection::Select); it runs after
// parsing succeeded, so no command work happens inside CLI11 and a usage error can
// never leave a half-done command behind.
//
// Not thread-safe: used by main's thread only.
#ifndef LEDGER_CLI_CLI_CONTEXT_H_
#define LEDGER_CLI_CLI_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/exit_codes.h"
#include "ledger/ledger.h"

namespace ledger::cli {

inline constexpr char kDatabaseUrlDefault[] = "sqlite:ledger.db";
inline constexpr char kDatabaseEnvironmentVariable[] = "LEDGER_DB";
inline constexpr int64_t kPageLimitMax = 1000;  // rows per page of list, history, events

struct GlobalOptions {
  std::string database_url;  // --db; empty: $LEDGER_DB, then kDatabaseUrlDefault
  // --read-db: reads off the primary (LedgerOptions::read_engine); empty: every read from
  // --db. A command that reads what it just wrote reads the primary either way.
  std::string read_database_url;
};

// --db if given, else $LEDGER_DB if set and non-empty, else sqlite:ledger.db.
std::string ResolveDatabaseUrl(const GlobalOptions& global);

// How a command opens its database. Only `migrate` and `demo` create an SQLite file
// (and `serve`, which opens its own): every other command refuses a missing file, so a
// mistyped --db never becomes a new empty ledger that answers "no such account".
struct OpenChoices {
  bool migrate = true;   // apply pending migrations on open
  bool create = false;   // SQLite: create the file when it does not exist
};

// Opens the engine at `url`. Remembers `url` so that no error this process reports
// shows its password.
absl::StatusOr<std::unique_ptr<Engine>> OpenEngineAt(std::string_view url,
                                                     OpenChoices choices = {});
// OpenEngineAt(url) wrapped in a Ledger, with a read engine at `read_url` unless it is
// empty (OpenReadEngine: never migrated or created).
absl::StatusOr<std::unique_ptr<Ledger>> OpenLedgerAt(std::string_view url,
                                                     std::string_view read_url = "");
inline absl::StatusOr<std::unique_ptr<Ledger>> OpenLedger(const GlobalOptions& global) {
  return OpenLedgerAt(ResolveDatabaseUrl(global), global.read_database_url);
}

// The scale of every defined asset, by code, for printing major units.
absl::StatusOr<std::map<std::string, int>> ScalesByAsset(Ledger& ledger);
// The asset's scale in `scales`, 0 if it is missing (printed as minor units).
int ScaleOf(const std::map<std::string, int>& scales, const std::string& asset);

// Prints "ledger: <kind>: <message>" on stderr, the opened URL's password hidden, and
// returns the status's exit code.
ExitCode ReportError(const absl::Status& status);
// ReportError for a submit: also prints {"error", "kind"} on stdout, so a program reading
// a submit's stdout always gets JSON (docs/cli.md); with "dry_run": true for --dry-run.
ExitCode ReportSubmitError(const absl::Status& status, bool dry_run = false);

using CommandAction = std::function<ExitCode()>;

class CommandSelection {
 public:
  void Select(CommandAction action) { action_ = std::move(action); }
  // Runs the selected command; kBadInput if none was selected.
  ExitCode Run();

 private:
  CommandAction action_;
};

}  // namespace ledger::cli

#endif  // LEDGER_CLI_CLI_CONTEXT_H_
