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
          {"submit", "--key", "pay-1", "--json",
           R"({"kind": "top_up", "from": "issuance", "to": "alice", "asset": "USD", "amount": "500"})"},
          {"demo", "--operations", "10"}};
}

// The commands above and `serve`, for URLs that cannot open: the server's start-up
// error is printed as the tool's (a URL that opens would serve until stopped).
std::vector<std::vector<std::string>> FailingCommands() {
  std::vector<std::vector<std::string>> commands = EverydayCommands();
  commands.push_back({"serve", "--listen", "127.0.0.1:0"});
  return commands;
}

// Passwords holding a raw '@' or '/' with the mark on both sides of it: a driver that
// took the part after the '@' for the host would print a marked fragment.
std::vector<std::string> RawAtUrls(const std::string& host_port, const std::string& database) {
  return {absl::StrCat("postgres://u:Zq7pa@Zq7S3cretPW@", host_port, "/", database),
          absl::StrCat("postgresql://u:Zq7pa/Zq7ss@", host_port, "/", database),
          absl::StrCat("postgres://u:Zq7p@Zq7s/Zq7w@", host_port, "/", database),
          absl::StrCat("postgres://u:Zq7p@Zq7s?Zq7w@", host_port, "/", database),
          absl::StrCat("mysql://u:Zq7pa@Zq7S3cretPW@", host_port, "/", database),
          absl::StrCat("mysql://u:Zq7p@Zq7s?x=Zq7w@", host_port, "/", database)};
}

// Each is refused as malformed (exit 2) before any driver sees it, saying what to encode.
void ExpectRawAtUrlsRefused(const std::vector<std::string>& urls,
                            const std::filesystem::path& folder) {
  for (const std::string& url : urls) {
    for (const std::vector<std::string>& command : FailingCommands()) {
      CliResult result = RunHidingSecret(url, command, folder);
      EXPECT_EQ(result.exit_code, 2) << url << " " << command[0] << ": " << result.err;
      EXPECT_TRUE(result.err.find("%40") != std::string::npos ||
                  result.err.find("%2F") != std::string::npos)
          << result.err;
    }
  }
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
      // libpq key=value strings and a password parameter after other parameters.
      "host=127.0.0.1 port=1 user=app password=Zq7kv dbname=ledger",
      "host=127.0.0.1 port=1 password='Zq7 quoted' dbname=ledger",
      "postgres://app@127.0.0.1:1/ledger?sslmode=disable&password=Zq7late",
      "mysql://app@127.0.0.1:1/ledger?password=Zq7param",
  };
  for (const std::string& url : urls) {
    for (const std::vector<std::string>& command : FailingCommands()) {
      CliResult result = RunHidingSecret(url, command, folder_);
      EXPECT_NE(result.exit_code, 0) << url;
    }
  }
}

TEST_F(SecretsCliTest, RawAtOrSlashInThePasswordIsRefusedWithoutShowingIt) {
  ExpectRawAtUrlsRefused(RawAtUrls("127.0.0.1:1", "ledger"), folder_);
}

// The issue's probe: a raw '@' in the password of a URL naming a live server. libpq
// read the rest as the host and printed 'could not translate host name "S3cretPW@..."'.
TEST_F(SecretsCliTest, RawAtInThePasswordOfALiveServerIsRefusedWithoutShowingIt) {
  for (const char* variable : {"LEDGER_TEST_POSTGRES_DSN", "LEDGER_TEST_MYSQL_DSN"}) {
    const std::string dsn = EnvironmentOrEmpty(variable);
    if (dsn.empty()) {
      if (RunningInCi()) ADD_FAILURE() << variable << " is required under CI=true";
      continue;
    }
    const size_t host_begin = dsn.find('@') + 1;
    const size_t path = dsn.find('/', host_begin);
    ASSERT_NE(path, std::string::npos) << "unexpected DSN shape: " << dsn;
    ExpectRawAtUrlsRefused(
        RawAtUrls(dsn.substr(host_begin, path - host_begin), dsn.substr(path + 1)), folder_);
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
  // A user whose password holds '@', ':', '/' and '%' (written %40, %2F and %25 in the
  // URL: a raw '@' or '/' is refused).
  const std::string sql = absl::StrCat(
      "CREATE USER IF NOT EXISTS 'ledger_secret'@'127.0.0.1' IDENTIFIED BY 'Zq7p@ss:w/rd%x'; ",
      "GRANT ALL ON ", database, ".* TO 'ledger_secret'@'127.0.0.1';");
  const std::string create = absl::StrCat("mariadb --protocol=tcp -h ", host, " -P ", port,
                                          " -u root -e \"", sql, "\"");
  ASSERT_EQ(std::system(create.c_str()), 0) << create;
  const std::string url =
      absl::StrCat("mysql://ledger_secret:Zq7p%40ss:w%2Frd%25x@", host, ":", port, "/", database);
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
