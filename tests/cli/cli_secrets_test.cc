// No output of the `ledger` tool shows a database password: not on success, not in an
// error, not when the driver's own message echoes connection details. The server cases
// run against the throwaway PostgreSQL and MariaDB when their DSNs are set (required
// under CI=true).
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_runner.h"
#include "tests/conformance/conformance_context.h"

namespace ledger::testing {
namespace {

// Every password below starts with this, so finding it anywhere means a leak.
constexpr char kSecretMark[] = "Zq7";

using SecretsCliTest = LedgerCliTest;

// Runs `ledger --db URL ARGUMENTS...` and fails the test if the secret shows.
CliResult RunHidingSecret(const std::string& url, std::vector<std::string> arguments,
                          const std::filesystem::path& folder) {
  arguments.insert(arguments.begin(), {"--db", url});
  CliResult result = RunLedgerProcess(arguments, folder);
  const std::string shown = result.out + result.err;
  EXPECT_EQ(shown.find(kSecretMark), std::string::npos)
      << "ledger " << absl::StrJoin(arguments, " ") << " printed the password:\n" << shown;
  return result;
}

// The commands a user runs first, on success and failure paths alike.
std::vector<std::vector<std::string>> EverydayCommands() {
  return {{"migrate"},
          {"account", "list"},
          {"asset", "list"},
          {"account", "show", "no-such-account"},
          {"balance", "no-such-account"},
          {"events", "--limit", "1"},
          {"verify"},
          {"demo", "--operations", "10"}};
}

TEST_F(SecretsCliTest, UnreachableServersAndBadUrlsNeverShowThePassword) {
  const std::vector<std::string> urls = {
      // '@', ':', '/', '%' and '?' inside passwords, escaped and raw.
      "mysql://app:Zq7p@ss:w/rd%3F@127.0.0.1:1/ledger",
      "mysql://app:Zq7p@ss?x@127.0.0.1:1/ledger",
      "postgresql://app:Zq7p%40ss%2Fw@127.0.0.1:1/ledger",
      "postgres://app@127.0.0.1:1/ledger?password=Zq7secret",
      "postgres://app:Zq7secret@127.0.0.1:1/ledger?no_such_parameter=1",
      "postgres://app:Zq7p%zzbad@127.0.0.1:1/ledger",
      "mysql://app:Zq7secret@127.0.0.1:1/ledger?ssl=1",
      "ftp://app:Zq7secret@127.0.0.1/ledger",
  };
  for (const std::string& url : urls) {
    for (const std::vector<std::string>& command : EverydayCommands()) {
      CliResult result = RunHidingSecret(url, command, folder_);
      EXPECT_NE(result.exit_code, 0) << url;
    }
  }
}

TEST_F(SecretsCliTest, PostgresSuccessNeverShowsThePassword) {
  std::string dsn = EnvironmentOrEmpty("LEDGER_TEST_POSTGRES_DSN");
  if (dsn.empty()) {
    if (RunningInCi()) GTEST_FAIL() << "LEDGER_TEST_POSTGRES_DSN is required under CI=true";
    GTEST_SKIP() << "LEDGER_TEST_POSTGRES_DSN is not set";
  }
  // The throwaway server trusts loopback, so any password is accepted: the URL carries
  // one the way a production URL does.
  const std::string with_password =
      absl::StrReplaceAll(dsn, {{"postgresql://postgres@", "postgresql://postgres:Zq7p%40ss:w@"}});
  ASSERT_NE(with_password, dsn) << "unexpected DSN shape: " << dsn;
  EXPECT_EQ(RunHidingSecret(with_password, {"migrate"}, folder_).exit_code, 0);
  EXPECT_EQ(RunHidingSecret(with_password, {"account", "list"}, folder_).exit_code, 0);
  for (const std::vector<std::string>& command : EverydayCommands()) {
    RunHidingSecret(with_password, command, folder_);
  }
}

// mysql://root@127.0.0.1:PORT/DB -> {host, port, database}
std::vector<std::string> MysqlParts(const std::string& dsn) {
  absl::string_view rest = dsn;
  if (!absl::ConsumePrefix(&rest, "mysql://root@")) return {};
  std::vector<std::string> parts = absl::StrSplit(rest, absl::ByAnyChar(":/"));
  return parts.size() == 3 ? parts : std::vector<std::string>{};
}

TEST_F(SecretsCliTest, MysqlSuccessNeverShowsThePassword) {
  std::string dsn = EnvironmentOrEmpty("LEDGER_TEST_MYSQL_DSN");
  if (dsn.empty()) {
    if (RunningInCi()) GTEST_FAIL() << "LEDGER_TEST_MYSQL_DSN is required under CI=true";
    GTEST_SKIP() << "LEDGER_TEST_MYSQL_DSN is not set";
  }
  const std::vector<std::string> parts = MysqlParts(dsn);
  ASSERT_EQ(parts.size(), 3u) << "unexpected DSN shape: " << dsn;
  const std::string& host = parts[0];
  const std::string& port = parts[1];
  const std::string& database = parts[2];
  // A user whose password holds '@', ':', '/' and '%' (written %25 in the URL).
  const std::string sql = absl::StrCat(
      "CREATE USER IF NOT EXISTS 'ledger_secret'@'127.0.0.1' IDENTIFIED BY 'Zq7p@ss:w/rd%x'; ",
      "GRANT ALL ON ", database, ".* TO 'ledger_secret'@'127.0.0.1';");
  const std::string create = absl::StrCat("mariadb --protocol=tcp -h ", host, " -P ", port,
                                          " -u root -e \"", sql, "\"");
  ASSERT_EQ(std::system(create.c_str()), 0) << create;
  const std::string url =
      absl::StrCat("mysql://ledger_secret:Zq7p@ss:w/rd%25x@", host, ":", port, "/", database);
  EXPECT_EQ(RunHidingSecret(url, {"migrate"}, folder_).exit_code, 0);
  EXPECT_EQ(RunHidingSecret(url, {"account", "list"}, folder_).exit_code, 0);
  for (const std::vector<std::string>& command : EverydayCommands()) {
    RunHidingSecret(url, command, folder_);
  }
  const std::string wrong = absl::StrReplaceAll(url, {{"rd%25x", "rd%25y"}});
  EXPECT_NE(RunHidingSecret(wrong, {"account", "list"}, folder_).exit_code, 0);
}

}  // namespace
}  // namespace ledger::testing
