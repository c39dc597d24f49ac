// `ledger submit` end to end: each call is a separate process on one SQLite file.
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

class SubmitCliTest : public LedgerCliTest {
 protected:
  void SetUp() override {
    LedgerCliTest::SetUp();
    OpenFundedEconomy();
  }

  // The number of transactions verify counts: what a rejected input must not change.
  int64_t StoredTransactions() {
    CliResult verify = RunLedger({"verify", "--json"});
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
    return verify.Json().value("transactions", int64_t{-1});
  }

  int64_t BalanceOf(const std::string& account) {
    CliResult balance = RunLedger({"balance", account, "--json"});
    EXPECT_EQ(balance.exit_code, 0) << balance.err;
    return std::stoll(balance.Json().value("balance", std::string("-1")));
  }
};

TEST_F(SubmitCliTest, SameJsonTwiceWithSameKeyCommitsThenReplaysTheSameTransaction) {
  CliResult first = RunLedger({"submit", "--key", "order-1", "--json", kTransferJson});
  CliResult second = RunLedger({"submit", "--key", "order-1", "--json", kTransferJson});

  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(first.Json()["outcome"], "committed");
  EXPECT_EQ(second.Json()["outcome"], "duplicate");
  EXPECT_EQ(second.Json()["transaction"], first.Json()["transaction"]);
  EXPECT_EQ(BalanceOf("alice"), 7500);
}

TEST_F(SubmitCliTest, OperationFromStdinFileAndFlagsIsTheSameOperation) {
  std::string file = (folder_ / "transfer.json").string();
  std::ofstream(file) << kTransferJson;

  CliResult from_stdin = RunLedger({"submit", "--key", "order-2"}, std::string(kTransferJson));
  CliResult from_file = RunLedger({"submit", "--key", "order-2", "--file", file});
  CliResult from_flags = RunLedger({"submit", "--key", "order-2", "--kind", "transfer", "--from",
                                    "alice", "--to", "bob", "--asset", "USD", "--amount", "2500"});

  EXPECT_EQ(from_stdin.Json()["outcome"], "committed");
  EXPECT_EQ(from_file.Json()["outcome"], "duplicate");
  EXPECT_EQ(from_flags.Json()["outcome"], "duplicate");
  EXPECT_EQ(from_flags.Json()["transaction"]["id"], from_stdin.Json()["transaction"]["id"]);
}

TEST_F(SubmitCliTest, MalformedJsonIsBadInputAndWritesNothing) {
  int64_t before = StoredTransactions();

  CliResult result = RunLedger({"submit", "--key", "order-3", "--json", R"({"kind":"transfer",)"});

  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("malformed JSON"), std::string::npos) << result.err;
  EXPECT_EQ(result.Json()["kind"], "bad_input");
  EXPECT_EQ(StoredTransactions(), before);
  // The key was never used: the corrected request commits under it.
  EXPECT_EQ(RunLedger({"submit", "--key", "order-3", "--json", kTransferJson}).Json()["outcome"],
            "committed");
}

TEST_F(SubmitCliTest, UnknownFieldIsBadInputAndWritesNothing) {
  int64_t before = StoredTransactions();

  CliResult result = RunLedger(
      {"submit", "--key", "order-4", "--json",
       R"({"kind":"transfer","from":"alice","to":"bob","asset":"USD","amount":"1","memo":"x"})"});

  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("unknown field \"memo\""), std::string::npos) << result.err;
  EXPECT_EQ(StoredTransactions(), before);
  EXPECT_EQ(BalanceOf("alice"), 10000);
}

TEST_F(SubmitCliTest, FlagThatDoesNotBelongToTheKindIsBadInput) {
  CliResult result = RunLedger({"submit", "--key", "order-5", "--kind", "reverse",
                                "--transaction-id", "x", "--amount", "5"});

  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("unknown field \"amount\""), std::string::npos) << result.err;
}

TEST_F(SubmitCliTest, UnknownAccountIsRejectedAndWritesNothing) {
  int64_t before = StoredTransactions();

  CliResult result = RunLedger(
      {"submit", "--key", "order-6", "--json",
       R"({"kind":"transfer","from":"alice","to":"carol","asset":"USD","amount":"100"})"});

  EXPECT_EQ(result.exit_code, 3);
  EXPECT_NE(result.err.find("account carol does not exist"), std::string::npos) << result.err;
  EXPECT_EQ(result.Json()["reason"], "account_not_found");
  EXPECT_EQ(StoredTransactions(), before);
  CliResult history = RunLedger({"history", "alice", "--json"});
  EXPECT_EQ(history.out.find("\"amount\":\"-100\""), std::string::npos) << history.out;
}

TEST_F(SubmitCliTest, SamePayloadRejectedForFundsCommitsUnderTheSameKeyAfterFunding) {
  std::string spend =
      R"({"kind":"transfer","from":"alice","to":"bob","asset":"USD","amount":"50000"})";

  CliResult declined = RunLedger({"submit", "--key", "order-7", "--json", spend});
  ASSERT_EQ(RunLedger({"submit", "--key", "fund-more", "--kind", "top_up", "--from", "issuance",
                       "--to", "alice", "--asset", "USD", "--amount", "40000"})
                .exit_code,
            0);
  CliResult retried = RunLedger({"submit", "--key", "order-7", "--json", spend});

  EXPECT_EQ(declined.exit_code, 3);
  EXPECT_EQ(declined.Json()["reason"], "insufficient_funds");
  EXPECT_EQ(retried.exit_code, 0) << retried.err;
  EXPECT_EQ(retried.Json()["outcome"], "committed");
}

TEST_F(SubmitCliTest, OtherPayloadUnderACommittedKeyIsAConflict) {
  ASSERT_EQ(RunLedger({"submit", "--key", "order-8", "--json", kTransferJson}).exit_code, 0);

  CliResult conflict =
      RunLedger({"submit", "--key", "order-8", "--json",
                 R"({"kind":"transfer","from":"alice","to":"bob","asset":"USD","amount":"2501"})"});

  EXPECT_EQ(conflict.exit_code, 4);
  EXPECT_EQ(conflict.Json()["kind"], "conflict");
  EXPECT_EQ(BalanceOf("alice"), 7500);
}

TEST_F(SubmitCliTest, ReplayErrorPolicyRefusesACommittedKey) {
  ASSERT_EQ(RunLedger({"submit", "--key", "order-9", "--json", kTransferJson}).exit_code, 0);

  CliResult refused =
      RunLedger({"submit", "--key", "order-9", "--replay", "error", "--json", kTransferJson});

  EXPECT_EQ(refused.exit_code, 9);
  EXPECT_EQ(refused.Json()["kind"], "already_exists");
}

TEST_F(SubmitCliTest, SameKeyInAnotherScopeIsAnotherOperation) {
  CliResult acme =
      RunLedger({"submit", "--key", "order-10", "--tenant", "acme", "--json", kTransferJson});
  CliResult globex =
      RunLedger({"submit", "--key", "order-10", "--tenant", "globex", "--json", kTransferJson});

  EXPECT_EQ(acme.Json()["outcome"], "committed");
  EXPECT_EQ(globex.Json()["outcome"], "committed");
  EXPECT_NE(acme.Json()["transaction"]["id"], globex.Json()["transaction"]["id"]);
}

TEST_F(SubmitCliTest, ReversalFromFlagsUndoesTheTransaction) {
  CliResult transfer = RunLedger({"submit", "--key", "order-11", "--json", kTransferJson});
  std::string id = transfer.Json()["transaction"]["id"];

  CliResult reversal =
      RunLedger({"submit", "--key", "refund-11", "--kind", "reverse", "--transaction-id", id});
  CliResult again =
      RunLedger({"submit", "--key", "refund-11b", "--kind", "reverse", "--transaction-id", id});

  EXPECT_EQ(reversal.exit_code, 0) << reversal.err;
  EXPECT_EQ(reversal.Json()["transaction"]["reversal_of"], id);
  EXPECT_EQ(again.exit_code, 3);
  EXPECT_EQ(again.Json()["reason"], "already_reversed");
  EXPECT_EQ(BalanceOf("alice"), 10000);
}

TEST_F(SubmitCliTest, MissingKeyIsAUsageError) {
  CliResult result = RunLedger({"submit", "--json", kTransferJson});

  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("--key"), std::string::npos) << result.err;
  EXPECT_EQ(result.Json()["kind"], "bad_input");
}

// docs/cli.md: a failed submit always prints JSON on stdout, parser errors included.
TEST_F(SubmitCliTest, EveryUsageErrorOfSubmitPrintsJsonOnStdout) {
  const std::vector<std::vector<std::string>> usage_errors = {
      {"submit", "--key", "k", "--kind", "deposit"},
      {"submit", "--key", "k", "--amount", "5"},
      {"submit", "--key", "k", "--kind", "hold", "--from", "alice", "--to", "bob", "--asset",
       "USD", "--amount", "5", "--expires-at", "2030-01-01T00:00:00Z", "--timeout-seconds", "5"},
      {"submit", "--key", "k", "--no-such-flag"},
      {"submit", "--key"},
  };
  for (const std::vector<std::string>& arguments : usage_errors) {
    CliResult result = RunLedger(arguments);

    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_EQ(result.Json()["kind"], "bad_input") << result.out;
    EXPECT_FALSE(result.Json().value("error", "").empty()) << result.out;
  }
  EXPECT_EQ(StoredTransactions(), 1);
}

TEST_F(SubmitCliTest, InsufficientFundsDetailNamesTheAvailableAmountAndItsUnits) {
  CliResult result = RunLedger({"submit", "--key", "big", "--kind", "transfer", "--from", "alice",
                                "--to", "bob", "--asset", "USD", "--amount", "10001"});

  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.Json()["detail"],
            "account alice would have an available balance of -1, below its floor of 0, in minor "
            "units of USD");
}

class SubmitBatchCliTest : public SubmitCliTest {
 protected:
  std::string WriteLines(const std::string& name, const std::vector<std::string>& lines) {
    const std::string path = (folder_ / name).string();
    std::ofstream file(path);
    for (const std::string& line : lines) file << line << "\n";
    return path;
  }

  static std::string Line(const std::string& key, int64_t amount) {
    return R"({"key":")" + key +
           R"(","operation":{"kind":"transfer","from":"alice","to":"bob","asset":"USD","amount":")" +
           std::to_string(amount) + R"("}})";
  }

  static std::vector<nlohmann::json> JsonLines(const std::string& out) {
    std::vector<nlohmann::json> lines;
    for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
      lines.push_back(nlohmann::json::parse(std::string(line)));
    }
    return lines;
  }
};

TEST_F(SubmitBatchCliTest, EachLineCommitsOnceAndAResentFileReplays) {
  const std::string path = WriteLines("import.jsonl", {Line("b-1", 100), "", Line("b-2", 200)});

  CliResult first = RunLedger({"submit", "--batch", path});
  CliResult again = RunLedger({"submit", "--batch", path});

  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(again.exit_code, 0) << again.err;
  std::vector<nlohmann::json> results = JsonLines(first.out);
  std::vector<nlohmann::json> replays = JsonLines(again.out);
  ASSERT_EQ(results.size(), 2u);
  ASSERT_EQ(replays.size(), 2u);
  EXPECT_EQ(results[0]["line"], 1);
  EXPECT_EQ(results[1]["line"], 3);
  EXPECT_EQ(results[1]["key"], "b-2");
  EXPECT_EQ(results[0]["outcome"], "committed");
  EXPECT_EQ(replays[1]["outcome"], "duplicate");
  EXPECT_EQ(replays[1]["transaction"]["id"], results[1]["transaction"]["id"]);
  EXPECT_EQ(BalanceOf("alice"), 10000 - 300);
  // The same key from a single submit is the same operation (one key space).
  EXPECT_EQ(RunLedger({"submit", "--key", "b-1", "--kind", "transfer", "--from", "alice", "--to",
                       "bob", "--asset", "USD", "--amount", "100"})
                .Json()["outcome"],
            "duplicate");
}

TEST_F(SubmitBatchCliTest, ARejectedLineKeepsItsKeyUnusedAndSetsTheExitCode) {
  const std::string path = WriteLines("import.jsonl", {Line("r-1", 100), Line("r-2", 999999)});

  CliResult result = RunLedger({"submit", "--batch", path});

  EXPECT_EQ(result.exit_code, 3) << result.err;
  std::vector<nlohmann::json> results = JsonLines(result.out);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["outcome"], "committed");
  EXPECT_EQ(results[1]["outcome"], "rejected");
  EXPECT_EQ(results[1]["reason"], "insufficient_funds");
  EXPECT_EQ(BalanceOf("alice"), 9900);
}

TEST_F(SubmitBatchCliTest, AtomicFileCommitsNothingWhenOneLineIsRejected) {
  const std::string path = WriteLines("import.jsonl", {Line("a-1", 100), Line("a-2", 999999)});

  CliResult result = RunLedger({"submit", "--batch", path, "--atomic"});

  EXPECT_EQ(result.exit_code, 3) << result.err;
  std::vector<nlohmann::json> results = JsonLines(result.out);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["reason"], "batch_item_failed");
  EXPECT_EQ(BalanceOf("alice"), 10000);
}

TEST_F(SubmitBatchCliTest, ABadLineIsNamedAndNothingIsWritten) {
  const std::string path =
      WriteLines("import.jsonl", {Line("x-1", 100), R"({"key":"x-2","operation":{"kind":"transfer"},"memo":1})"});

  CliResult result = RunLedger({"submit", "--batch", path});

  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.Json()["kind"], "bad_input");
  EXPECT_NE(result.err.find("line 2"), std::string::npos) << result.err;
  EXPECT_EQ(StoredTransactions(), 1);
  EXPECT_EQ(RunLedger({"submit", "--batch", path, "--key", "k"}).exit_code, 2);
}

}  // namespace
}  // namespace ledger::testing
