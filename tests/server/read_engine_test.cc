// `ledger serve --read-db URL` (docs/http.md "Reads off the primary"), end to end on
// SQLite: the read database is a second file holding a different ledger, so each answer
// shows where it was read. GET routes read it; `Consistency: primary` reads --db; writes
// always go to --db; any other Consistency value is 400. The CLI's `--read-db` too.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/cli/cli_runner.h"
#include "tests/server/server_fixture.h"
#include "tests/server/server_process.h"

namespace ledger::testing {
namespace {

class ServerReadEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::temp_directory_path() /
              absl::StrCat("ledger-server-read-engine-", getpid(), "-",
                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
    primary_ = "sqlite:" + (folder_ / "primary.db").string();
    replica_ = "sqlite:" + (folder_ / "replica.db").string();
    // Both ledgers written with the CLI: alice has 100 on the primary, 7 on the replica.
    WriteSmallLedger(primary_, "100");
    WriteSmallLedger(replica_, "7");
  }

  // CREDITS, issuance and alice at `url`, alice topped up by `amount`, with the CLI.
  void WriteSmallLedger(const std::string& url, const std::string& amount) {
    for (const std::vector<std::string>& command : std::vector<std::vector<std::string>>{
             {"migrate"},
             {"asset", "define", "CREDITS", "--scale", "0"},
             {"account", "open", "issuance", "--asset", "CREDITS", "--allow-negative"},
             {"account", "open", "alice", "--asset", "CREDITS"},
             {"submit", "--key", "fund-1", "--json",
              absl::StrCat(R"({"kind":"top_up","asset":"CREDITS","from":"issuance","to":"alice","amount":")",
                           amount, R"("})")}}) {
      std::vector<std::string> arguments = command;
      arguments.insert(arguments.end(), {"--db", url});
      ASSERT_EQ(RunLedgerToExit(arguments, folder_ / "cli.log"), 0) << command[0] << " on " << url;
    }
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  std::filesystem::path folder_;
  std::string primary_;
  std::string replica_;
};

std::string BalanceIn(const httplib::Result& result) {
  if (!result || result->status != 200) return result ? result->body : "no answer";
  return BodyJson(result)["balance"].get<std::string>();
}

TEST_F(ServerReadEngineTest, GetRoutesReadTheReadDatabaseUnlessTheRequestAsksForThePrimary) {
  std::unique_ptr<ServerProcess> server =
      ServerProcess::Start(primary_, folder_ / "serve.log", {"--read-db", replica_});
  ASSERT_NE(server, nullptr);
  EXPECT_NE(server->Log().find("\"read_engine\":true"), std::string::npos) << server->Log();
  std::unique_ptr<httplib::Client> client = server->Client();
  const httplib::Headers kPrimary = {{"Consistency", "primary"}};

  EXPECT_EQ(BalanceIn(client->Get("/v1/accounts/alice/balance")), "7");
  EXPECT_EQ(BalanceIn(client->Get("/v1/accounts/alice/balance", {{"Consistency", "replica"}})), "7");
  EXPECT_EQ(BalanceIn(client->Get("/v1/accounts/alice/balance", kPrimary)), "100");
  EXPECT_EQ(BalanceIn(client->Get("/v1/accounts/alice", {{"consistency", "PRIMARY"}})), "100");

  // A submit goes to the primary, whatever the header says; the replica never sees it.
  httplib::Result submitted = client->Post(
      "/v1/operations", {{"Idempotency-Key", "\"pay-1\""}},
      R"({"kind":"top_up","asset":"CREDITS","from":"issuance","to":"alice","amount":"5"})",
      "application/json");
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 201) << submitted->body;
  const std::string transaction_id = BodyJson(submitted)["id"].get<std::string>();
  EXPECT_EQ(BalanceIn(client->Get("/v1/accounts/alice/balance", kPrimary)), "105");
  EXPECT_EQ(BalanceIn(client->Get("/v1/accounts/alice/balance")), "7");
  EXPECT_EQ(client->Get("/v1/transactions/" + transaction_id)->status, 404);
  EXPECT_EQ(client->Get("/v1/transactions/" + transaction_id, kPrimary)->status, 200);
  EXPECT_EQ(BodyJson(client->Get("/v1/events"))["events"].size(), 1u);
  EXPECT_EQ(BodyJson(client->Get("/v1/events", kPrimary))["events"].size(), 2u);
  EXPECT_EQ(BodyJson(client->Get("/v1/accounts/alice/history"))["entries"].size(), 1u);
  EXPECT_EQ(BodyJson(client->Get("/v1/accounts/alice/history", kPrimary))["entries"].size(), 2u);

  httplib::Result bad = client->Get("/v1/accounts/alice", {{"Consistency", "eventual"}});
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400) << bad->body;
  EXPECT_NE(bad->body.find("Consistency"), std::string::npos) << bad->body;
}

TEST_F(ServerReadEngineTest, WithoutReadDbEveryReadIsThePrimarys) {
  std::unique_ptr<ServerProcess> server = ServerProcess::Start(primary_, folder_ / "serve.log");
  ASSERT_NE(server, nullptr);
  EXPECT_NE(server->Log().find("\"read_engine\":false"), std::string::npos) << server->Log();
  std::unique_ptr<httplib::Client> client = server->Client();
  EXPECT_EQ(BalanceIn(client->Get("/v1/accounts/alice/balance")), "100");
  EXPECT_EQ(BalanceIn(client->Get("/v1/accounts/alice/balance", {{"Consistency", "primary"}})), "100");
}

// A tenant's read database is derived from --read-db as its database is from --db
// (server/tenant_ledgers.h): sqlite:DIR/replica.db gives tenant acme DIR/replica.acme.db.
TEST_F(ServerReadEngineTest, EachTenantReadsItsOwnReadDatabase) {
  WriteSmallLedger("sqlite:" + (folder_ / "primary.acme.db").string(), "100");
  WriteSmallLedger("sqlite:" + (folder_ / "replica.acme.db").string(), "7");
  {
    std::ofstream keys(folder_ / "keys");
    keys << Sha256Hex("acme-secret") << " acme admin\n";
  }
  std::unique_ptr<ServerProcess> server = ServerProcess::Start(
      primary_, folder_ / "serve.log",
      {"--read-db", replica_, "--api-keys-file", (folder_ / "keys").string()});
  ASSERT_NE(server, nullptr);
  std::unique_ptr<httplib::Client> client = server->Client();
  const httplib::Headers acme = {{"Authorization", "Bearer acme-secret"}};
  httplib::Headers acme_primary = acme;
  acme_primary.emplace("Consistency", "primary");
  EXPECT_EQ(BalanceIn(client->Get("/v1/accounts/alice/balance", acme)), "7");
  EXPECT_EQ(BalanceIn(client->Get("/v1/accounts/alice/balance", acme_primary)), "100");
}

TEST_F(ServerReadEngineTest, TheCliReadsTheReadDatabaseAndWritesThePrimary) {
  auto balance = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> arguments = {"account", "show", "alice", "--db", primary_};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    CliResult shown = RunLedgerProcess(arguments, folder_);
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    return shown.exit_code == 0 ? shown.Json()["balance"].get<std::string>() : shown.err;
  };
  EXPECT_EQ(balance({}), "100");
  EXPECT_EQ(balance({"--read-db", replica_}), "7");
  // A submit with --read-db still commits on --db.
  CliResult submitted = RunLedgerProcess(
      {"submit", "--key", "cli-pay-1", "--db", primary_, "--read-db", replica_, "--json",
       R"({"kind":"top_up","asset":"CREDITS","from":"issuance","to":"alice","amount":"1"})"},
      folder_);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  EXPECT_EQ(balance({}), "101");
  EXPECT_EQ(balance({"--read-db", replica_}), "7");
  // A read database that does not exist is refused, never created.
  const std::filesystem::path missing = folder_ / "missing.db";
  CliResult refused = RunLedgerProcess(
      {"account", "show", "alice", "--db", primary_, "--read-db", "sqlite:" + missing.string()}, folder_);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("--read-db"), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(missing));
}

}  // namespace
}  // namespace ledger::testing
