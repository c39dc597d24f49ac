// The `ledger` tool's other commands, each call a separate process.
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_runner.h"

namespace ledger::testing {
namespace {

using CommandsCliTest = LedgerCliTest;

TEST_F(CommandsCliTest, StatePersistsInTheSqliteFileAcrossInvocations) {
  OpenFundedEconomy();

  CliResult show = RunLedger({"account", "show", "alice"});
  CliResult balance = RunLedger({"balance", "alice"});
  CliResult list = RunLedger({"account", "list", "--json"});

  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(show.Json()["balance"], "10000");
  EXPECT_EQ(show.Json()["version"], 1);
  EXPECT_NE(balance.out.find("100.00 USD"), std::string::npos) << balance.out;
  EXPECT_NE(list.out.find("\"id\":\"bob\""), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("\"id\":\"issuance\""), std::string::npos) << list.out;
}

TEST_F(CommandsCliTest, DatabaseComesFromTheEnvironmentWithoutDb) {
  std::string url = database_url_;
  ASSERT_EQ(
      RunLedgerProcess({"asset", "define", "CREDITS", "--scale", "0"}, folder_, std::nullopt, url)
          .exit_code,
      0);

  CliResult assets = RunLedger({"asset", "list"});

  EXPECT_NE(assets.out.find("CREDITS"), std::string::npos) << assets.out;
}

TEST_F(CommandsCliTest, DefaultDatabaseIsLedgerDbInTheWorkingFolder) {
  const std::filesystem::path working = folder_ / "working";
  std::filesystem::create_directory(working);
  CliResult migrated = RunLedgerProcess({"migrate"}, working);
  CliResult defined = RunLedgerProcess({"asset", "define", "USD", "--scale", "2"}, working);

  EXPECT_EQ(migrated.exit_code, 0) << migrated.err;
  EXPECT_EQ(defined.exit_code, 0) << defined.err;
  EXPECT_TRUE(std::filesystem::exists(working / "ledger.db"));
}

TEST_F(CommandsCliTest, BadInputBeforeOpeningCreatesNoDatabaseFile) {
  const std::string other = "sqlite:" + (folder_ / "other.db").string();
  CliResult result = RunLedgerProcess({"--db", other, "migrate", "--bogus"}, folder_);

  EXPECT_EQ(result.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(folder_ / "other.db"));
}

// A mistyped --db (or the wrong working folder) must not become a new, empty ledger
// that answers "account alice does not exist": only `migrate` and `demo` create one.
TEST_F(CommandsCliTest, OnlyMigrateCreatesAnSqliteDatabase) {
  const std::filesystem::path typo = folder_ / "typo.db";
  const std::string url = "sqlite:" + typo.string();
  for (const std::vector<std::string>& command :
       std::vector<std::vector<std::string>>{{"balance", "alice"},
                                             {"account", "list"},
                                             {"asset", "define", "USD", "--scale", "2"},
                                             {"submit", "--key", "k", "--kind", "top_up", "--from",
                                              "issuance", "--to", "alice", "--asset", "USD",
                                              "--amount", "1"},
                                             {"verify"},
                                             {"prune"}}) {
    std::vector<std::string> arguments = {"--db", url};
    arguments.insert(arguments.end(), command.begin(), command.end());
    CliResult result = RunLedgerProcess(arguments, folder_);

    EXPECT_EQ(result.exit_code, 10) << absl::StrJoin(arguments, " ") << "\n" << result.err;
    EXPECT_NE(result.err.find("does not exist"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("ledger migrate"), std::string::npos) << result.err;
    EXPECT_FALSE(std::filesystem::exists(typo)) << absl::StrJoin(arguments, " ");
  }

  CliResult migrated = RunLedgerProcess({"--db", url, "migrate"}, folder_);
  CliResult listed = RunLedgerProcess({"--db", url, "account", "list"}, folder_);
  EXPECT_EQ(migrated.exit_code, 0) << migrated.err;
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
}

TEST_F(CommandsCliTest, HistoryPagesByAccountVersionWithACursor) {
  OpenFundedEconomy();
  for (const char* key : {"t1", "t2", "t3"}) {
    ASSERT_EQ(RunLedger({"submit", "--key", key, "--kind", "transfer", "--from", "alice", "--to",
                         "bob", "--asset", "USD", "--amount", "100"})
                  .exit_code,
              0);
  }

  CliResult first_page = RunLedger({"history", "alice", "--limit", "2"});
  CliResult second_page = RunLedger({"history", "alice", "--limit", "2", "--after", "2", "--json"});

  EXPECT_NE(first_page.out.find("next: --after 2"), std::string::npos) << first_page.out;
  EXPECT_NE(second_page.out.find("\"account_version\":3"), std::string::npos) << second_page.out;
  EXPECT_NE(second_page.out.find("\"account_version\":4"), std::string::npos) << second_page.out;
  EXPECT_EQ(second_page.out.find("\"account_version\":2"), std::string::npos) << second_page.out;
}

TEST_F(CommandsCliTest, TransactionShowPrintsWhatSubmitCommitted) {
  OpenFundedEconomy();
  CliResult submitted = RunLedger({"submit", "--key", "t", "--kind", "transfer", "--from", "alice",
                                   "--to", "bob", "--asset", "USD", "--amount", "100"});
  std::string id = submitted.Json()["transaction"]["id"];

  CliResult shown = RunLedger({"transaction", "show", id});

  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.Json(), submitted.Json()["transaction"]);
}

TEST_F(CommandsCliTest, EventsListOneOutboxEventPerCommit) {
  OpenFundedEconomy();

  CliResult events = RunLedger({"events"});

  EXPECT_EQ(events.exit_code, 0) << events.err;
  EXPECT_NE(events.out.find("\"type\":\"transaction.committed\""), std::string::npos) << events.out;
  EXPECT_NE(events.out.find("\"sequence\":1"), std::string::npos) << events.out;
}

TEST_F(CommandsCliTest, EventsFollowPrintsEventsAsTheyCommitInOrder) {
  OpenFundedEconomy();  // event 1: the funding top-up
  const std::filesystem::path follower_folder = folder_ / "follower";
  std::filesystem::create_directories(follower_folder);
  CliResult followed;
  // Started before the transfers commit, it waits for them and exits after the second.
  std::thread follower([&] {
    followed = RunLedgerProcess({"--db", database_url_, "events", "--follow", "--after", "1",
                                 "--count", "2", "--poll-ms", "20"},
                                follower_folder);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let it start polling
  for (const char* key : {"follow-1", "follow-2"}) {
    CliResult submitted = RunLedger({"submit", "--key", key, "--kind", "transfer", "--from",
                                     "alice", "--to", "bob", "--asset", "USD", "--amount", "1"});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  }
  follower.join();

  EXPECT_EQ(followed.exit_code, 0) << followed.err;
  std::vector<std::string> lines = absl::StrSplit(followed.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << followed.out;
  EXPECT_NE(lines[0].find("\"sequence\":2"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("\"sequence\":3"), std::string::npos) << lines[1];
}

TEST_F(CommandsCliTest, UnknownAccountOrTransactionExitsWithNotFound) {
  OpenFundedEconomy();

  CliResult account = RunLedger({"account", "show", "carol"});
  CliResult transaction = RunLedger({"transaction", "show", "no-such-id"});
  CliResult history = RunLedger({"history", "carol"});

  EXPECT_EQ(account.exit_code, 8);
  EXPECT_NE(account.err.find("account carol does not exist"), std::string::npos) << account.err;
  EXPECT_EQ(transaction.exit_code, 8);
  EXPECT_EQ(history.exit_code, 8);
}

TEST_F(CommandsCliTest, OpeningAnExistingAccountExitsWithAlreadyExists) {
  OpenFundedEconomy();

  CliResult again = RunLedger({"account", "open", "alice", "--asset", "USD"});

  EXPECT_EQ(again.exit_code, 9);
  EXPECT_NE(again.err.find("account alice already exists"), std::string::npos) << again.err;
}

TEST_F(CommandsCliTest, AccountWithBalanceCannotBeClosedButAnEmptyOneCan) {
  OpenFundedEconomy();

  EXPECT_EQ(RunLedger({"account", "close", "alice"}).exit_code, 2);
  CliResult closed = RunLedger({"account", "close", "bob"});
  EXPECT_EQ(closed.exit_code, 0) << closed.err;
  EXPECT_EQ(closed.Json()["closed"], true);
}

TEST_F(CommandsCliTest, PruneReportsHowManyKeysExpired) {
  OpenFundedEconomy();
  ASSERT_EQ(RunLedger({"submit", "--key", "short", "--ttl", "1us", "--kind", "transfer", "--from",
                       "alice", "--to", "bob", "--asset", "USD", "--amount", "1"})
                .exit_code,
            0);

  CliResult pruned = RunLedger({"prune"});

  EXPECT_EQ(pruned.exit_code, 0) << pruned.err;
  EXPECT_EQ(pruned.Json()["pruned_keys"], 1);
}

TEST_F(CommandsCliTest, VerifyPassesOnAHealthyDatabase) {
  OpenFundedEconomy();

  CliResult verify = RunLedger({"verify"});

  EXPECT_EQ(verify.exit_code, 0) << verify.out;
  EXPECT_NE(verify.out.find("verify: OK"), std::string::npos) << verify.out;
}

TEST_F(CommandsCliTest, VerifyFindsABalanceThatDisagreesWithItsEntries) {
  OpenFundedEconomy();
  sqlite3* database = nullptr;
  ASSERT_EQ(sqlite3_open((folder_ / "ledger.db").string().c_str(), &database), SQLITE_OK);
  int updated =
      sqlite3_exec(database, "UPDATE accounts SET balance = balance + 1 WHERE id = 'alice'",
                   nullptr, nullptr, nullptr);
  sqlite3_close(database);
  ASSERT_EQ(updated, SQLITE_OK);

  CliResult verify = RunLedger({"verify"});
  CliResult verify_json = RunLedger({"verify", "--json"});

  EXPECT_EQ(verify.exit_code, 7);
  EXPECT_NE(verify.out.find("verify: FAILED"), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("account alice"), std::string::npos) << verify.out;
  EXPECT_EQ(verify_json.Json()["ok"], false);
}

TEST_F(CommandsCliTest, MigrateIsIdempotent) {
  EXPECT_EQ(RunLedger({"migrate"}).exit_code, 0);
  CliResult again = RunLedger({"migrate"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("up to date"), std::string::npos) << again.out;
}

TEST_F(CommandsCliTest, UnknownDatabaseSchemeIsBadInput) {
  CliResult result = RunLedgerProcess({"--db", "oracle://x", "account", "list"}, folder_);

  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("unknown database URL"), std::string::npos) << result.err;
}

TEST_F(CommandsCliTest, UnopenableDatabaseIsRefused) {
  CliResult result =
      RunLedgerProcess({"--db", "sqlite:/no/such/folder/ledger.db", "account", "list"}, folder_);

  EXPECT_EQ(result.exit_code, 10);  // database_refused (cli_exit_codes_test.cc)
  EXPECT_FALSE(result.err.empty());
}

TEST_F(CommandsCliTest, VersionPrintsTheVersion) {
  CliResult version = RunLedgerProcess({"--version"}, folder_);

  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.out.rfind("ledger ", 0), 0u) << version.out;
}

TEST_F(CommandsCliTest, AMistypedCommandIsNamedWithTheNearestCommands) {
  CliResult plural = RunLedgerProcess({"accounts", "list"}, folder_);
  CliResult typo = RunLedgerProcess({"--db", database_url_, "account", "lst"}, folder_);
  CliResult nothing_close = RunLedgerProcess({"frobnicate"}, folder_);

  EXPECT_EQ(plural.exit_code, 2);
  EXPECT_NE(plural.err.find(R"(unknown command "accounts")"), std::string::npos) << plural.err;
  EXPECT_NE(plural.err.find(R"(did you mean "account")"), std::string::npos) << plural.err;
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find(R"(unknown command "lst" for `ledger account`)"), std::string::npos)
      << typo.err;
  EXPECT_NE(typo.err.find(R"("list")"), std::string::npos) << typo.err;
  EXPECT_EQ(nothing_close.exit_code, 2);
  EXPECT_NE(nothing_close.err.find(R"(unknown command "frobnicate")"), std::string::npos);
  EXPECT_EQ(nothing_close.err.find("did you mean"), std::string::npos) << nothing_close.err;
}

// Completes `words` (the last one partial) with the script `ledger completion bash`
// printed, in a real bash; returns COMPREPLY, space-separated.
std::string CompleteInBash(const std::filesystem::path& script, const std::string& words) {
  const std::string command = "bash -c 'source \"$0\"; COMP_WORDS=(" + words +
                              "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _ledger; "
                              "echo \"${COMPREPLY[*]}\"' " + script.string();
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  char buffer[4096];
  while (size_t read = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, read);
  pclose(pipe);
  return output;
}

TEST_F(CommandsCliTest, BashCompletionFollowsTheCommandTree) {
  CliResult bash = RunLedgerProcess({"completion", "bash"}, folder_);
  ASSERT_EQ(bash.exit_code, 0) << bash.err;
  const std::filesystem::path script = folder_ / "ledger.bash";
  std::ofstream(script) << bash.out;

  EXPECT_EQ(CompleteInBash(script, "ledger acc"), "account\n");
  EXPECT_EQ(CompleteInBash(script, "ledger account l"), "list\n");
  EXPECT_EQ(CompleteInBash(script, "ledger --db memory: submit --ke"), "--key --key-namespace\n");
  EXPECT_EQ(CompleteInBash(script, "ledger submit --batch"), "--batch\n");

  CliResult zsh = RunLedgerProcess({"completion", "zsh"}, folder_);
  EXPECT_EQ(zsh.exit_code, 0);
  EXPECT_NE(zsh.out.find("bashcompinit"), std::string::npos);
  EXPECT_EQ(RunLedgerProcess({"completion", "fish"}, folder_).exit_code, 2);
}

TEST_F(CommandsCliTest, HelpWorksForEveryCommand) {
  const std::vector<std::vector<std::string>> commands = {{},
                                                          {"asset"},
                                                          {"asset", "define"},
                                                          {"asset", "list"},
                                                          {"account"},
                                                          {"account", "open"},
                                                          {"account", "close"},
                                                          {"account", "show"},
                                                          {"account", "list"},
                                                          {"balance"},
                                                          {"history"},
                                                          {"submit"},
                                                          {"transaction"},
                                                          {"transaction", "show"},
                                                          {"events"},
                                                          {"migrate"},
                                                          {"prune"},
                                                          {"verify"},
                                                          {"demo"}};
  const std::filesystem::path empty_folder = folder_ / "help";
  std::filesystem::create_directory(empty_folder);
  for (std::vector<std::string> command : commands) {
    command.push_back("--help");
    CliResult help = RunLedgerProcess(command, empty_folder);
    std::string name = command.size() > 1 ? command[command.size() - 2] : "ledger";
    EXPECT_EQ(help.exit_code, 0) << name;
    EXPECT_NE(help.out.find("Usage: ledger"), std::string::npos) << name << ":\n" << help.out;
  }
  EXPECT_FALSE(std::filesystem::exists(empty_folder / "ledger.db"))
      << "--help must not open the database";
}

TEST_F(CommandsCliTest, UsageErrorsExitWithBadInput) {
  EXPECT_EQ(RunLedgerProcess({}, folder_).exit_code, 2);
  EXPECT_EQ(RunLedgerProcess({"account"}, folder_).exit_code, 2);
  EXPECT_EQ(RunLedgerProcess({"account", "open"}, folder_).exit_code, 2);
  EXPECT_EQ(RunLedgerProcess({"history", "alice", "--limit", "0"}, folder_).exit_code, 2);
  EXPECT_EQ(
      RunLedgerProcess({"submit", "--key", "k", "--json", "{}", "--file", "f"}, folder_).exit_code,
      2);
}

}  // namespace
}  // namespace ledger::testing
