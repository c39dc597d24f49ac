// The `ledger` tool's other commands, each call a separate process.
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

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
  CliResult defined = RunLedgerProcess({"asset", "define", "USD", "--scale", "2"}, folder_);

  EXPECT_EQ(defined.exit_code, 0) << defined.err;
  EXPECT_TRUE(std::filesystem::exists(folder_ / "ledger.db"));
}

TEST_F(CommandsCliTest, BadInputBeforeOpeningCreatesNoDatabaseFile) {
  CliResult result = RunLedger({"submit", "--key", "k", "--json", "{not json"});

  EXPECT_EQ(result.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(folder_ / "ledger.db"));
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
  for (std::vector<std::string> command : commands) {
    command.push_back("--help");
    CliResult help = RunLedgerProcess(command, folder_);
    std::string name = command.size() > 1 ? command[command.size() - 2] : "ledger";
    EXPECT_EQ(help.exit_code, 0) << name;
    EXPECT_NE(help.out.find("Usage: ledger"), std::string::npos) << name << ":\n" << help.out;
  }
  EXPECT_FALSE(std::filesystem::exists(folder_ / "ledger.db"))
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
