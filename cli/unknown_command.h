// Turns a mistyped command into an answer that says so: `ledger accounts list` or
// `ledger account lst` get "unknown command" with the nearest real names, where CLI11
// alone would say "A subcommand is required".
//
// Not thread-safe: used by main's thread after a failed parse.
#ifndef LEDGER_CLI_UNKNOWN_COMMAND_H_
#define LEDGER_CLI_UNKNOWN_COMMAND_H_

#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace ledger::cli {

// Walks `arguments` (argv without the program name) down `app`'s command tree. When a
// word stands where a command of the current level is expected and names none, returns
// the message "unknown command \"WORD\"" with "did you mean ...?" for the closest
// names (edit distance at most 2, or a shared prefix), and where to look. nullopt when
// every command word names a command (the parse failed for another reason).
std::optional<std::string> UnknownCommandMessage(const CLI::App& app,
                                                 const std::vector<std::string>& arguments);

// The first command word of `arguments` that names a top-level command ("submit",
// "account", ...), "" when there is none.
std::string CommandWordOf(const CLI::App& app, const std::vector<std::string>& arguments);

}  // namespace ledger::cli

#endif  // LEDGER_CLI_UNKNOWN_COMMAND_H_
