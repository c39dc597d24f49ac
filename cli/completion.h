// `ledger completion bash|zsh`: a shell completion script generated from the command
// tree itself, so it never lists a command or option the program does not have.
//
//   source <(ledger completion bash)      # or put it in ~/.bash_completion.d/
//   source <(ledger completion zsh)       # zsh runs the bash script via bashcompinit
//
// Not thread-safe: used by main's thread.
#ifndef LEDGER_CLI_COMPLETION_H_
#define LEDGER_CLI_COMPLETION_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace CLI {
class App;
}  // namespace CLI

namespace ledger::cli {

// The script for `shell` ("bash" or "zsh"); InvalidArgument for another shell.
absl::StatusOr<std::string> CompletionScript(const CLI::App& app, std::string_view shell);

}  // namespace ledger::cli

#endif  // LEDGER_CLI_COMPLETION_H_
