// Runs the built `ledger` binary as a separate process, the way a user or a script
// does, and captures its exit code, stdout and stderr. Each LedgerCliTest gets its own
// temporary folder holding the SQLite database, removed afterwards.
//
// Not thread-safe: one test at a time per fixture.
#ifndef LEDGER_TESTS_CLI_CLI_RUNNER_H_
#define LEDGER_TESTS_CLI_CLI_RUNNER_H_

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ledger::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr

  // stdout parsed as one JSON document; null (with a test failure) if it does not parse.
  nlohmann::json Json() const;
};

// The path of the binary under test, given by CMake as $<TARGET_FILE:ledger>.
std::string LedgerBinary();

// Runs `ledger` with `arguments` (no shell involved in their meaning: each is quoted),
// feeding `stdin_text` when given, with LEDGER_DB unset unless `database_environment`.
CliResult RunLedgerProcess(const std::vector<std::string>& arguments,
                           const std::filesystem::path& work_folder,
                           const std::optional<std::string>& stdin_text = std::nullopt,
                           const std::optional<std::string>& database_environment = std::nullopt);

class LedgerCliTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // `ledger --db sqlite:<folder>/ledger.db ARGUMENTS...`
  CliResult RunLedger(std::vector<std::string> arguments,
                      const std::optional<std::string>& stdin_text = std::nullopt);
  // Asset USD/2, accounts issuance (allow_negative), alice and bob; alice holds 100.00.
  void OpenFundedEconomy();

  std::filesystem::path folder_;
  std::string database_url_;
};

}  // namespace ledger::testing

#endif  // LEDGER_TESTS_CLI_CLI_RUNNER_H_
