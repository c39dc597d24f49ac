// The command groups of the `ledger` tool, one source file each. Every Add* function
// adds its subcommands to `app`; their callbacks select the work (see cli_context.h).
//
//   asset_commands.cc    asset define, asset list
//   account_commands.cc  account open / close / show / list, balance, history
//   submit_command.cc    submit
//   hold_commands.cc     holds list / show / expire
//   query_commands.cc    transaction show / list, events
//   key_commands.cc      key show
//   admin_commands.cc    migrate, prune, verify
//   demo_command.cc      demo (the workload lives in demo.cc)
//   serve_command.cc     serve (the HTTP service lives in server/)
//   completion.cc        completion (bash and zsh scripts from this command tree)
#ifndef LEDGER_CLI_COMMANDS_H_
#define LEDGER_CLI_COMMANDS_H_

#include "cli/cli_context.h"

namespace CLI {
class App;
}  // namespace CLI

namespace ledger::cli {

void AddAssetCommands(CLI::App& app, const GlobalOptions& global, CommandSelection& selection);
void AddAccountCommands(CLI::App& app, const GlobalOptions& global, CommandSelection& selection);
void AddSubmitCommand(CLI::App& app, const GlobalOptions& global, CommandSelection& selection);
void AddHoldCommands(CLI::App& app, const GlobalOptions& global, CommandSelection& selection);
void AddQueryCommands(CLI::App& app, const GlobalOptions& global, CommandSelection& selection);
void AddKeyCommands(CLI::App& app, const GlobalOptions& global, CommandSelection& selection);
void AddAdminCommands(CLI::App& app, const GlobalOptions& global, CommandSelection& selection);
void AddDemoCommand(CLI::App& app, const GlobalOptions& global, CommandSelection& selection);
void AddServeCommand(CLI::App& app, const GlobalOptions& global, CommandSelection& selection);
void AddCompletionCommand(CLI::App& app, const GlobalOptions& global, CommandSelection& selection);

}  // namespace ledger::cli

#endif  // LEDGER_CLI_COMMANDS_H_
