// `ledger submit --dry-run` and `ledger submit --batch FILE --dry-run` end to end: the
// JSON a submit would print with "dry_run": true and the exit code it would have, and
// nothing written (the key included), each call a separate process on one SQLite file.
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_runner.h"

namespace ledger::testing {
namespace {

constexpr char kTransferJson[] =
    R"({"kind":"transfer","from":"alice","to":"bob","asset":"USD","amount":"2500"})";

class DryRunCliTest : public LedgerCliTest {
 protected:
  void SetUp() override {
    LedgerCliTest::SetUp();
    OpenFundedEconomy();  // alice: 10000
  }

  // What verify counts (transactions, entries, key records, holds, balance totals): a
  // dry run must not change any of it.
  nlohmann::json Counts() {
    CliResult verify = RunLedger({"verify", "--json"});
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
    return verify.Json();
  }

  std::string EventsText() { return RunLedger({"events"}).out; }

  int64_t BalanceOf(const std::string& account) {
    CliResult balance = RunLedger({"balance", account, "--json"});
    EXPECT_EQ(balance.exit_code, 0) << balance.err;
    return std::stoll(balance.Json().value("balance", std::string("-1")));
  }
};

TEST_F(DryRunCliTest, DryRunPrintsTheWouldBeOutcomeAndTheKeyStaysUnused) {
  const nlohmann::json counts = Counts();
  const std::string events = EventsText();

  CliResult dry = RunLedger({"submit", "--key", "order-1", "--json", kTransferJson, "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  nlohmann::json would = dry.Json();
  EXPECT_EQ(would["dry_run"], true) << dry.out;
  EXPECT_EQ(would["outcome"], "committed") << dry.out;
  bool saw_alice = false;
  for (const nlohmann::json& entry : would["transaction"]["entries"]) {
    if (entry["account"] != "alice") continue;
    saw_alice = true;
    EXPECT_EQ(entry["balance_after"], "7500") << dry.out;
  }
  EXPECT_TRUE(saw_alice) << dry.out;
  EXPECT_EQ(Counts(), counts);
  EXPECT_EQ(EventsText(), events);
  EXPECT_EQ(BalanceOf("alice"), 10000);

  // The real submit with the same key commits; a dry run of it then reports the replay.
  CliResult real = RunLedger({"submit", "--key", "order-1", "--json", kTransferJson});
  ASSERT_EQ(real.exit_code, 0) << real.err;
  EXPECT_EQ(real.Json()["outcome"], "committed");
  EXPECT_FALSE(real.Json().contains("dry_run"));
  CliResult duplicate =
      RunLedger({"submit", "--key", "order-1", "--json", kTransferJson, "--dry-run"});
  EXPECT_EQ(duplicate.exit_code, 0) << duplicate.err;
  EXPECT_EQ(duplicate.Json()["outcome"], "duplicate");
  EXPECT_EQ(duplicate.Json()["transaction"], real.Json()["transaction"]);
  EXPECT_EQ(BalanceOf("alice"), 7500);
}

TEST_F(DryRunCliTest, DryRunExitsAsTheSubmitWould) {
  ASSERT_EQ(RunLedger({"submit", "--key", "order-2", "--json", kTransferJson}).exit_code, 0);
  const nlohmann::json counts = Counts();

  CliResult rejected = RunLedger({"submit", "--key", "order-3", "--kind", "transfer", "--from",
                                  "bob", "--to", "alice", "--asset", "USD", "--amount", "999999",
                                  "--dry-run"});
  EXPECT_EQ(rejected.exit_code, 3) << rejected.out << rejected.err;
  EXPECT_EQ(rejected.Json()["outcome"], "rejected");
  EXPECT_EQ(rejected.Json()["reason"], "insufficient_funds");
  EXPECT_EQ(rejected.Json()["dry_run"], true);
  EXPECT_NE(rejected.err.find("dry run: would be rejected"), std::string::npos) << rejected.err;

  CliResult conflict = RunLedger({"submit", "--key", "order-2", "--kind", "transfer", "--from",
                                  "alice", "--to", "bob", "--asset", "USD", "--amount", "1",
                                  "--dry-run"});
  EXPECT_EQ(conflict.exit_code, 4) << conflict.out << conflict.err;
  EXPECT_EQ(conflict.Json()["outcome"], "conflict");
  EXPECT_EQ(conflict.Json()["dry_run"], true);

  CliResult no_key = RunLedger({"submit", "--json", kTransferJson, "--dry-run"});
  EXPECT_EQ(no_key.exit_code, 2) << no_key.out << no_key.err;
  EXPECT_EQ(no_key.Json()["kind"], "bad_input");
  EXPECT_EQ(no_key.Json()["dry_run"], true);
  EXPECT_EQ(Counts(), counts);
}

TEST_F(DryRunCliTest, BatchDryRunSeesEarlierLinesAndWritesNothing) {
  const std::string file = (folder_ / "batch.jsonl").string();
  std::ofstream(file)
      << R"({"key": "b-1", "operation": {"kind": "transfer", "from": "alice", "to": "bob", "asset": "USD", "amount": "10000"}})"
      << "\n"
      << R"({"key": "b-2", "operation": {"kind": "transfer", "from": "bob", "to": "alice", "asset": "USD", "amount": "10000"}})"
      << "\n"
      << R"({"key": "b-3", "operation": {"kind": "transfer", "from": "bob", "to": "alice", "asset": "USD", "amount": "1"}})"
      << "\n";
  const nlohmann::json counts = Counts();

  CliResult dry = RunLedger({"submit", "--batch", file, "--dry-run"});
  EXPECT_EQ(dry.exit_code, 3) << dry.out << dry.err;  // the first line that would not commit
  std::vector<std::string> lines = absl::StrSplit(dry.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << dry.out;
  std::vector<nlohmann::json> results;
  for (const std::string& line : lines) results.push_back(nlohmann::json::parse(line));
  EXPECT_EQ(results[0]["outcome"], "committed");
  EXPECT_EQ(results[1]["outcome"], "committed");  // bob has b-1's 10000 by then
  EXPECT_EQ(results[2]["outcome"], "rejected");
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i]["dry_run"], true) << lines[i];
    EXPECT_EQ(results[i]["line"], i + 1) << lines[i];
  }
  EXPECT_NE(dry.err.find("dry run"), std::string::npos) << dry.err;
  EXPECT_EQ(Counts(), counts);
  EXPECT_EQ(BalanceOf("bob"), 0);

  // For real, the same file decides the same, none of it a replay.
  CliResult real = RunLedger({"submit", "--batch", file});
  EXPECT_EQ(real.exit_code, 3) << real.out << real.err;
  std::vector<std::string> real_lines = absl::StrSplit(real.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(real_lines.size(), 3u) << real.out;
  EXPECT_EQ(nlohmann::json::parse(real_lines[0])["outcome"], "committed");
  EXPECT_EQ(nlohmann::json::parse(real_lines[1])["outcome"], "committed");
}

}  // namespace
}  // namespace ledger::testing
