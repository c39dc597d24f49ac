// The reads of the `ledger` tool (issue 31), end to end, each call a separate process on
// one database: a SQLite file, and a fresh database on the MySQL / MariaDB and PostgreSQL
// test servers when the build has those engines (tests/cli/fresh_database.h).
// `transaction list` with its filters and paging, `key show`, `history` with the story
// of each entry, `balance --as-of`, `holds list --status`.
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/cli/cli_runner.h"
#include "tests/cli/fresh_database.h"

namespace ledger::testing {
namespace {

constexpr int kBadInput = 2;
constexpr int kNotFound = 8;

class ReadsCliTest : public LedgerCliTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    LedgerCliTest::SetUp();
    RequireFreshDatabaseEngine(GetParam());
    if (HasFatalFailure() || IsSkipped()) return;
    absl::StatusOr<std::string> url = FreshDatabaseUrl(GetParam(), folder_);
    ASSERT_TRUE(url.ok()) << url.status();
    database_url_ = *url;
    fresh_database_made_ = true;
    OpenFundedEconomy();  // alice holds 100.00 USD (key fund-alice)
  }

  void TearDown() override {
    if (fresh_database_made_) DropFreshDatabase(GetParam());
    LedgerCliTest::TearDown();
  }

  std::string Commit(const std::string& key, const nlohmann::json& operation,
                     std::vector<std::string> extra = {}) {
    std::vector<std::string> arguments = {"submit", "--key", key, "--json", operation.dump()};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    CliResult submitted = RunLedger(arguments);
    EXPECT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;
    return submitted.Json()["transaction"].value("id", std::string());
  }

  static std::vector<nlohmann::json> JsonLines(const std::string& out) {
    std::vector<nlohmann::json> lines;
    std::istringstream stream(out);
    for (std::string line; std::getline(stream, line);) lines.push_back(nlohmann::json::parse(line));
    return lines;
  }

  // Every page of `transaction list ARGUMENTS`, following `next: --after CURSOR` (stderr).
  std::vector<std::string> ListAll(std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), {"transaction", "list"});
    std::vector<std::string> ids;
    std::string after;
    for (int pages = 0; pages < 100; ++pages) {
      std::vector<std::string> page_arguments = arguments;
      if (!after.empty()) page_arguments.insert(page_arguments.end(), {"--after", after});
      CliResult listed = RunLedger(page_arguments);
      EXPECT_EQ(listed.exit_code, 0) << listed.err;
      for (const nlohmann::json& transaction : JsonLines(listed.out)) ids.push_back(transaction["id"]);
      const size_t next = listed.err.find("next: --after ");
      if (next == std::string::npos) return ids;
      after = listed.err.substr(next + 14);
      after = after.substr(0, after.find('\n'));
    }
    ADD_FAILURE() << "the listing never ended";
    return ids;
  }

  bool fresh_database_made_ = false;
};

nlohmann::json Transfer(const std::string& from, const std::string& to, const std::string& amount) {
  return {{"kind", "transfer"}, {"asset", "USD"}, {"from", from}, {"to", to}, {"amount", amount}};
}

TEST_P(ReadsCliTest, TransactionListFiltersAndPages) {
  CliResult funded = RunLedger({"key", "show", "fund-alice"});
  ASSERT_EQ(funded.exit_code, 0) << funded.err;
  const std::string fund = funded.Json()["transaction"]["id"];
  std::vector<std::string> transfers;
  std::vector<std::string> order_a;
  for (int i = 0; i < 4; ++i) {
    nlohmann::json transfer = Transfer("alice", "bob", "100");
    transfer["metadata"] = {{"order", i % 2 == 0 ? "A" : "B"}};
    transfers.push_back(Commit("transfer-" + std::to_string(i), transfer));
    if (i % 2 == 0) order_a.push_back(transfers.back());
  }
  std::vector<std::string> all = {fund};
  all.insert(all.end(), transfers.begin(), transfers.end());
  EXPECT_EQ(ListAll({"--limit", "2"}), all);
  EXPECT_EQ(ListAll({"--account", "bob", "--limit", "1"}), transfers);
  EXPECT_EQ(ListAll({"--kind", "top_up"}), std::vector<std::string>{fund});
  EXPECT_EQ(ListAll({"--metadata", "order=A", "--limit", "1"}), order_a);
  EXPECT_TRUE(ListAll({"--account", "bob", "--kind", "top_up"}).empty());

  CliResult first = RunLedger({"transaction", "list", "--limit", "1"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::vector<nlohmann::json> lines = JsonLines(first.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["kind"], "top_up");
  const std::string second_time = JsonLines(RunLedger({"transaction", "list"}).out)[1]["created_at"];
  EXPECT_EQ(ListAll({"--from", second_time}),
            std::vector<std::string>(transfers.begin(), transfers.end()));
  EXPECT_EQ(ListAll({"--before", second_time}), std::vector<std::string>{fund});
}

TEST_P(ReadsCliTest, BadTransactionFiltersExitTwoNamingTheFilter) {
  struct Case {
    std::vector<std::string> arguments;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--kind", "deposit"}, "--kind"},
      {{"--from", "yesterday"}, "--from must be an RFC 3339 time"},
      {{"--before", "2026-13-01T00:00:00Z"}, "--before must be an RFC 3339 time"},
      {{"--from", "2026-01-02T00:00:00Z", "--before", "2026-01-01T00:00:00Z"},
       "the time range is empty"},
      {{"--metadata", "order"}, "--metadata must be NAME=VALUE"},
      {{"--metadata", "=A"}, "names a member of 1 to 128 bytes"},
      {{"--after", "nope"}, "is not one a transaction listing gave"},
      {{"--limit", "0"}, "limit must be 1 to 1000"},
      {{"--limit", "1001"}, "limit must be 1 to 1000"},
  };
  for (const Case& bad : cases) {
    std::vector<std::string> arguments = {"transaction", "list"};
    arguments.insert(arguments.end(), bad.arguments.begin(), bad.arguments.end());
    CliResult refused = RunLedger(arguments);
    EXPECT_EQ(refused.exit_code, kBadInput) << bad.says << ": " << refused.err;
    EXPECT_NE(refused.err.find(bad.says), std::string::npos) << refused.err;
    EXPECT_TRUE(refused.out.empty()) << refused.out;
  }
  CliResult unknown = RunLedger({"transaction", "list", "--account", "ghost"});
  EXPECT_EQ(unknown.exit_code, kNotFound) << unknown.err;
}

TEST_P(ReadsCliTest, KeyShowPrintsTheRecordAndTransactionInItsOwnSpaceOnly) {
  const std::string id = Commit("order-7", Transfer("alice", "bob", "5"), {"--tenant", "acme"});
  CliResult shown = RunLedger({"key", "show", "order-7", "--tenant", "acme"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  nlohmann::json json = shown.Json();
  EXPECT_EQ(json["key"]["key"], "order-7");
  EXPECT_EQ(json["key"]["tenant"], "acme");
  EXPECT_EQ(json["key"]["namespace"], "operations");
  EXPECT_EQ(json["key"]["transaction_id"], id);
  EXPECT_EQ(json["transaction"]["id"], id);
  EXPECT_EQ(json["transaction"]["entries"].size(), 2u);
  EXPECT_EQ(RunLedger({"key", "show", "order-7"}).exit_code, kNotFound);  // tenant default
  EXPECT_EQ(RunLedger({"key", "show", "order-7", "--tenant", "acme", "--key-namespace", "transfer"})
                .exit_code,
            kNotFound);
  const std::string other = Commit("order-8", Transfer("alice", "bob", "5"),
                                   {"--key-namespace", "imports"});
  CliResult in_space = RunLedger({"key", "show", "order-8", "--key-namespace", "imports"});
  ASSERT_EQ(in_space.exit_code, 0) << in_space.err;
  EXPECT_EQ(in_space.Json()["transaction"]["id"], other);
  EXPECT_EQ(RunLedger({"key", "show", "order-8"}).exit_code, kNotFound);
  EXPECT_EQ(RunLedger({"key", "show", "order-8", "--key-namespace", "a/b"}).exit_code, kBadInput);
}

TEST_P(ReadsCliTest, HistoryTellsTheStoryAndBalanceAsOfAnswersThePast) {
  nlohmann::json spend = {{"kind", "spend"}, {"asset", "USD"}, {"from", "alice"}, {"to", "bob"},
                          {"amount", "1000"}, {"metadata", {{"order", "A-17"}}}};
  Commit("tip-1", spend);
  CliResult history = RunLedger({"history", "alice", "--json"});
  ASSERT_EQ(history.exit_code, 0) << history.err;
  const std::vector<nlohmann::json> lines = JsonLines(history.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["kind"], "top_up");
  EXPECT_EQ(lines[0]["counterparties"], nlohmann::json::array({"issuance"}));
  EXPECT_EQ(lines[1]["kind"], "spend");
  EXPECT_EQ(lines[1]["counterparties"], nlohmann::json::array({"bob"}));
  EXPECT_EQ(lines[1]["metadata"], nlohmann::json({{"order", "A-17"}}));
  CliResult table = RunLedger({"history", "alice"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("counterparties"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(R"({"order":"A-17"})"), std::string::npos) << table.out;

  const std::string funded_at = lines[0]["created_at"];
  CliResult then = RunLedger({"balance", "alice", "--as-of", funded_at, "--json"});
  ASSERT_EQ(then.exit_code, 0) << then.err;
  EXPECT_EQ(then.Json()["balance"], "10000");
  EXPECT_EQ(then.Json()["balance_major"], "100.00");
  EXPECT_EQ(then.Json()["as_of"], funded_at);
  CliResult before = RunLedger({"balance", "alice", "--as-of", "2000-01-01T00:00:00Z"});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  EXPECT_NE(before.out.find("alice: 0.00 USD (0 minor units) as of 2000-01-01T00:00:00"),
            std::string::npos)
      << before.out;
  CliResult now = RunLedger({"balance", "alice", "--as-of", "2999-01-01T00:00:00Z", "--json"});
  EXPECT_EQ(now.Json()["balance"], "9000");
  CliResult bad = RunLedger({"balance", "alice", "--as-of", "yesterday"});
  EXPECT_EQ(bad.exit_code, kBadInput);
  EXPECT_NE(bad.err.find("--as-of must be an RFC 3339 time"), std::string::npos) << bad.err;
}

TEST_P(ReadsCliTest, HoldsListKeepsOneStatus) {
  CliResult held = RunLedger({"submit", "--key", "h1", "--kind", "hold", "--from", "alice", "--to",
                              "bob", "--asset", "USD", "--amount", "100", "--timeout-seconds", "3600"});
  ASSERT_EQ(held.exit_code, 0) << held.err;
  const std::string pending = held.Json()["transaction"]["id"];
  CliResult second = RunLedger({"submit", "--key", "h2", "--kind", "hold", "--from", "alice", "--to",
                                "bob", "--asset", "USD", "--amount", "100", "--timeout-seconds", "3600"});
  const std::string voided = second.Json()["transaction"]["id"];
  ASSERT_EQ(RunLedger({"submit", "--key", "v2", "--kind", "void", "--hold-id", voided}).exit_code, 0);
  CliResult listed = RunLedger({"holds", "list", "--status", "voided", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const std::vector<nlohmann::json> holds = JsonLines(listed.out);
  ASSERT_EQ(holds.size(), 1u);
  EXPECT_EQ(holds[0]["id"], voided);
  CliResult pending_ones = RunLedger({"holds", "list", "--status", "pending", "--json", "--limit", "1"});
  ASSERT_EQ(JsonLines(pending_ones.out).size(), 1u);
  EXPECT_EQ(JsonLines(pending_ones.out)[0]["id"], pending);
  EXPECT_EQ(RunLedger({"holds", "list", "--status", "lost"}).exit_code, kBadInput);
}

INSTANTIATE_TEST_SUITE_P(Engines, ReadsCliTest, ::testing::Values("sqlite", "mysql", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace ledger::testing
