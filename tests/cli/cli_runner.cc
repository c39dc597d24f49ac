#include "tests/cli/cli_runner.h"

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ledger::testing {
namespace {

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

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

nlohmann::json CliResult::Json() const {
  nlohmann::json parsed = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(parsed.is_discarded()) << "stdout is not one JSON document:\n" << out;
  return parsed.is_discarded() ? nlohmann::json() : parsed;
}

std::string LedgerBinary() { return LEDGER_CLI_PATH; }

CliResult RunLedgerProcess(const std::vector<std::string>& arguments,
                           const std::filesystem::path& work_folder,
                           const std::optional<std::string>& stdin_text,
                           const std::optional<std::string>& database_environment) {
  std::filesystem::path stdin_path = work_folder / "stdin.txt";
  std::filesystem::path stdout_path = work_folder / "stdout.txt";
  std::filesystem::path stderr_path = work_folder / "stderr.txt";
  std::ofstream(stdin_path, std::ios::binary) << stdin_text.value_or("");
  std::string command = "cd " + ShellQuoted(work_folder.string()) + " && ";
  command += database_environment.has_value()
                 ? "LEDGER_DB=" + ShellQuoted(*database_environment) + " "
                 : std::string("env -u LEDGER_DB ");
  command += ShellQuoted(LedgerBinary());
  for (const std::string& argument : arguments) command += " " + ShellQuoted(argument);
  command += " <" + ShellQuoted(stdin_path.string()) + " >" + ShellQuoted(stdout_path.string()) +
             " 2>" + ShellQuoted(stderr_path.string());
  int status = std::system(command.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = ReadFile(stdout_path);
  result.err = ReadFile(stderr_path);
  return result;
}

void LedgerCliTest::SetUp() {
  std::string folder_template =
      (std::filesystem::temp_directory_path() / "ledger-cli-test-XXXXXX").string();
  ASSERT_NE(mkdtemp(folder_template.data()), nullptr);
  folder_ = folder_template;
  database_url_ = "sqlite:" + (folder_ / "ledger.db").string();
  // Only `migrate` creates an SQLite file; every other command refuses a missing one.
  CliResult migrated = RunLedger({"migrate"});
  ASSERT_EQ(migrated.exit_code, 0) << migrated.err;
}

void LedgerCliTest::TearDown() {
  std::error_code ignored;
  std::filesystem::remove_all(folder_, ignored);
}

CliResult LedgerCliTest::RunLedger(std::vector<std::string> arguments,
                                   const std::optional<std::string>& stdin_text) {
  arguments.insert(arguments.begin(), {"--db", database_url_});
  return RunLedgerProcess(arguments, folder_, stdin_text);
}

void LedgerCliTest::OpenFundedEconomy() {
  ASSERT_EQ(RunLedger({"asset", "define", "USD", "--scale", "2"}).exit_code, 0);
  ASSERT_EQ(
      RunLedger({"account", "open", "issuance", "--asset", "USD", "--allow-negative"}).exit_code,
      0);
  ASSERT_EQ(RunLedger({"account", "open", "alice", "--asset", "USD"}).exit_code, 0);
  ASSERT_EQ(RunLedger({"account", "open", "bob", "--asset", "USD"}).exit_code, 0);
  CliResult funded =
      RunLedger({"submit", "--key", "fund-alice", "--kind", "top_up", "--from", "issuance", "--to",
                 "alice", "--asset", "USD", "--amount", "10000"});
  ASSERT_EQ(funded.exit_code, 0) << funded.err;
}

}  // namespace ledger::testing
