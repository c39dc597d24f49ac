// The `ledger` tool's exit code says what happened to the database, not where the
// command was when it happened (docs/cli.md, "Exit codes"): a database that cannot be
// reached or does not answer in time is 6 (faulted: run it again) on every engine and
// every command, opening included; a database that refuses the session (it does not
// exist, a wrong user or password, a file that cannot be opened) is 10
// (database_refused) on every engine. The server cases run against the throwaway
// PostgreSQL and MariaDB (required under CI=true).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_runner.h"
#include "tests/cli/fresh_database.h"
#include "tests/conformance/conformance_context.h"

namespace ledger::testing {
namespace {

constexpr int kFaulted = 6;
constexpr int kDatabaseRefused = 10;

constexpr char kTopUpJson[] =
    R"({"kind": "top_up", "from": "issuance", "to": "alice", "asset": "USD", "amount": "500"})";

// What a retrying script runs: opening only, reads, and a submit.
std::vector<std::vector<std::string>> CommandsOfAScript() {
  return {{"migrate"},
          {"account", "list"},
          {"balance", "alice"},
          {"submit", "--key", "pay-1", "--json", kTopUpJson},
          {"verify"}};
}

// A TCP port that accepts connections (the kernel completes them into the backlog) and
// never answers: a server frozen before its greeting. Closed with the object.
class SilentListener {
 public:
  SilentListener() {
    socket_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t size = sizeof(address);
    if (socket_ < 0 || ::bind(socket_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        ::listen(socket_, 64) != 0 ||
        ::getsockname(socket_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      return;
    }
    port_ = ntohs(address.sin_port);
  }
  ~SilentListener() {
    if (socket_ >= 0) ::close(socket_);
  }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;

  int port() const { return port_; }  // 0: no listener could be made

 private:
  int socket_ = -1;
  int port_ = 0;
};

class ExitCodesCliTest : public LedgerCliTest,
                         public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    LedgerCliTest::SetUp();
    RequireFreshDatabaseEngine(GetParam());
  }

  // The engine's URL for `user` at 127.0.0.1:`port`, database `database`.
  std::string UrlAt(const std::string& user, int port, const std::string& database,
                    const std::string& query = "") const {
    const std::string scheme = GetParam() == "postgres" ? "postgresql" : "mysql";
    return absl::StrCat(scheme, "://", user, "@127.0.0.1:", port, "/", database, query);
  }

  // Runs each command at `url` and expects `exit_code` from every one of them.
  void ExpectEveryCommandExits(const std::string& url, int exit_code) {
    for (const std::vector<std::string>& command : CommandsOfAScript()) {
      std::vector<std::string> arguments = {"--db", url};
      arguments.insert(arguments.end(), command.begin(), command.end());
      CliResult result = RunLedgerProcess(arguments, folder_);
      EXPECT_EQ(result.exit_code, exit_code)
          << "ledger " << absl::StrJoin(arguments, " ") << "\n" << result.err << result.out;
    }
  }
};

TEST_P(ExitCodesCliTest, RefusedConnectionIsFaultedOnEveryCommand) {
  if (IsSkipped() || HasFatalFailure()) return;
  ExpectEveryCommandExits(UrlAt("ledger", 1, "ledger"), kFaulted);
}

TEST_P(ExitCodesCliTest, ServerThatNeverAnswersIsFaultedOnEveryCommand) {
  if (IsSkipped() || HasFatalFailure()) return;
  SilentListener silent;
  ASSERT_NE(silent.port(), 0) << "cannot listen on 127.0.0.1";
  // libpq reads a connect_timeout under 2 s as 2 s.
  const std::string bound =
      GetParam() == "postgres" ? "?connect_timeout=2" : "?connect_timeout=1s";
  ExpectEveryCommandExits(UrlAt("ledger", silent.port(), "ledger", bound), kFaulted);
}

TEST_P(ExitCodesCliTest, MissingDatabaseIsRefusedOnEveryCommand) {
  if (IsSkipped() || HasFatalFailure()) return;
  absl::StatusOr<std::string> url = FreshDatabaseUrl(GetParam(), folder_);
  ASSERT_TRUE(url.ok()) << url.status();
  const std::string database = url->substr(url->rfind('/') + 1);
  ExpectEveryCommandExits(
      absl::StrReplaceAll(*url, {{"/" + database, "/ledger_no_such_database"}}),
      kDatabaseRefused);
}

TEST_P(ExitCodesCliTest, BadCredentialsAreRefusedOnEveryCommand) {
  if (IsSkipped() || HasFatalFailure()) return;
  absl::StatusOr<std::string> url = FreshDatabaseUrl(GetParam(), folder_);
  ASSERT_TRUE(url.ok()) << url.status();
  std::string refused;
  if (GetParam() == "postgres") {
    // The throwaway server trusts loopback for every role that exists: a role it does
    // not know is its bad credential (28000, as a wrong password is 28P01).
    refused = absl::StrReplaceAll(*url, {{"://postgres@", "://ledger_no_such_role@"}});
  } else {
    // root has no password on the throwaway server: any password is a wrong one (1045).
    refused = absl::StrReplaceAll(*url, {{"://root@", "://root:wrong-password@"}});
  }
  ASSERT_NE(refused, *url) << "unexpected URL shape: " << *url;
  ExpectEveryCommandExits(refused, kDatabaseRefused);
}

// A PostgreSQL ?schema= that is not one plain identifier is bad input (2), refused
// before anything connects (the port refuses; the answer is not 6).
TEST_P(ExitCodesCliTest, BadPostgresSchemaNameIsBadInputOnEveryCommand) {
  if (IsSkipped() || HasFatalFailure()) return;
  if (GetParam() != "postgres") GTEST_SKIP() << "schema= is a PostgreSQL parameter";
  for (const char* schema : {"Books", "1books", "pg_books", "books-a", ""}) {
    ExpectEveryCommandExits(UrlAt("ledger", 1, "ledger", absl::StrCat("?schema=", schema)), 2);
  }
}

INSTANTIATE_TEST_SUITE_P(ServerEngines, ExitCodesCliTest,
                         ::testing::Values(std::string("postgres"), std::string("mysql")),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

using SqliteExitCodesCliTest = LedgerCliTest;

// SQLite's "database that does not exist": a file in a folder that does not exist.
TEST_F(SqliteExitCodesCliTest, UnopenableSqliteFileIsRefusedOnEveryCommand) {
  for (const std::vector<std::string>& command : CommandsOfAScript()) {
    std::vector<std::string> arguments = {"--db", "sqlite:/no/such/folder/ledger.db"};
    arguments.insert(arguments.end(), command.begin(), command.end());
    CliResult result = RunLedgerProcess(arguments, folder_);
    EXPECT_EQ(result.exit_code, kDatabaseRefused) << absl::StrJoin(arguments, " ") << result.err;
    EXPECT_NE(result.err.find("ledger: database_refused: "), std::string::npos) << result.err;
  }
}

}  // namespace
}  // namespace ledger::testing
