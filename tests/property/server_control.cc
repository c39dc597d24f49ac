// Restarts of the throwaway servers, through the same script that started them.
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/conformance/conformance_context.h"
#include "tests/property/property_context.h"

namespace ledger::property {
namespace {

constexpr char kServersDirVariable[] = "LEDGER_TEST_SERVERS_DIR";

// Single quotes for the shell; the script itself only accepts plain path characters.
std::string ShellQuoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace

std::string RestartUnavailableReason() {
  if (!testing::EnvironmentOrEmpty(kServersDirVariable).empty()) return "";
  return absl::StrCat(kServersDirVariable, " is not set (scripts/test-servers.sh start DIR writes",
                      " it to DIR/env): the server restart part of the fault campaign is skipped");
}

absl::Status RestartTestServer(const std::string& server) {
  std::string directory = testing::EnvironmentOrEmpty(kServersDirVariable);
  if (directory.empty()) return absl::FailedPreconditionError(RestartUnavailableReason());
  std::string command =
      absl::StrCat("bash ", ShellQuoted(LEDGER_PROPERTY_SOURCE_DIR "/scripts/test-servers.sh"),
                   " restart-", server, " ", ShellQuoted(directory), " >&2");
  int status = std::system(command.c_str());
  if (status != 0) {
    return absl::UnavailableError(absl::StrCat("`", command, "` failed with status ", status));
  }
  return absl::OkStatus();
}

}  // namespace ledger::property
