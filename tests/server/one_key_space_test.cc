// Issue 30: one key space for every entry point. The same key and payload through
// `ledger submit` (JSON or flags), POST /v1/operations and POST /v1/operations/batch,
// on one database, commits once; whichever door comes first, every other replays it,
// and another kind under the key is a conflict through each. Real processes over real
// sockets, per engine (the library's doors: tests/conformance/submit_suite.cc).
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/cli/cli_runner.h"
#include "tests/server/server_fixture.h"

namespace ledger::testing {
namespace {

// What a door answered, in one vocabulary: committed, duplicate, conflict, or what
// else it said; the transaction as JSON for the first two.
struct Answer {
  std::string outcome;
  nlohmann::json transaction;
};

class OneKeySpaceTest : public ServerTest {
 protected:
  // `ledger --db <the server's database> ARGUMENTS...` as its own process.
  CliResult RunLedger(std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), {"--db", database_url_});
    return RunLedgerProcess(arguments, folder_);
  }

  Answer FromCli(const CliResult& result) {
    if (result.exit_code == 4) return {"conflict", nullptr};
    if (result.exit_code != 0) return {absl::StrCat("exit ", result.exit_code, ": ", result.err), nullptr};
    nlohmann::json json = result.Json();
    return {json.value("outcome", "no outcome"), json.value("transaction", nlohmann::json())};
  }

  Answer CliJson(const std::string& key, const nlohmann::json& operation) {
    return FromCli(RunLedger({"submit", "--key", key, "--json", operation.dump()}));
  }

  // The same operation built from flags (ledger submit --kind ...): the CLI makes JSON
  // of them and parses it like any other.
  Answer CliFlags(const std::string& key, const nlohmann::json& operation) {
    std::vector<std::string> arguments = {"submit", "--key", key, "--kind", operation["kind"]};
    for (const char* field : {"from", "to", "asset", "amount"}) {
      arguments.insert(arguments.end(), {absl::StrCat("--", field), operation[field]});
    }
    if (operation.contains("metadata")) {
      arguments.insert(arguments.end(), {"--metadata", operation["metadata"].dump()});
    }
    return FromCli(RunLedger(arguments));
  }

  static Answer FromHttp(int status, bool replayed, const nlohmann::json& body) {
    if (status == 201) return {replayed ? "duplicate" : "committed", body};
    if (status == 422 && body.value("reason", "") == "idempotency_key_reused") return {"conflict", nullptr};
    return {absl::StrCat("HTTP ", status, ": ", body.dump()), nullptr};
  }

  Answer HttpSingle(const std::string& key, const nlohmann::json& operation) {
    httplib::Result result = Submit(key, operation);
    if (!result) return {"no response", nullptr};
    return FromHttp(result->status, result->get_header_value("Idempotent-Replayed") == "true",
                    BodyJson(result));
  }

  Answer HttpBatch(const std::string& key, const nlohmann::json& operation) {
    nlohmann::json batch = {{"items", {{{"idempotency_key", key}, {"operation", operation}}}}};
    httplib::Result result = Post("/v1/operations/batch", batch.dump());
    if (!result || result->status != 200) return {"batch not answered", nullptr};
    const nlohmann::json item = BodyJson(result)["results"][0];
    return FromHttp(item["status"], item["replayed"], item["body"]);
  }

  // A top-up with metadata (its canonical form goes into the fingerprint too).
  nlohmann::json Payment(int64_t amount) const {
    nlohmann::json operation = TopUp(Name("alice"), amount);
    operation["metadata"] = {{"order", "A-1"}, {"lines", {1, 2}}, {"note", "caf\u00e9"}};
    return operation;
  }
  nlohmann::json OtherKind(int64_t amount) const {
    return {{"kind", "transfer"}, {"asset", "USD"}, {"from", Name("alice")},
            {"to", Name("issuance")}, {"amount", std::to_string(amount)}};
  }
};

TEST_P(OneKeySpaceTest, TheSameKeyThroughTheCliAndHttpCommitsOnce) {
  StartServer();
  OpenAccounts();
  using Door = std::function<Answer(const std::string&, const nlohmann::json&)>;
  const std::vector<std::pair<std::string, Door>> doors = {
      {"ledger submit --json", [this](auto& k, auto& o) { return CliJson(k, o); }},
      {"ledger submit --kind", [this](auto& k, auto& o) { return CliFlags(k, o); }},
      {"POST /v1/operations", [this](auto& k, auto& o) { return HttpSingle(k, o); }},
      {"POST /v1/operations/batch", [this](auto& k, auto& o) { return HttpBatch(k, o); }}};
  int64_t expected = 0;
  for (size_t first = 0; first < doors.size(); ++first) {
    const std::string key = Name(absl::StrCat("pay-", first));
    const int64_t amount = 500 + static_cast<int64_t>(first);
    const Answer committed = doors[first].second(key, Payment(amount));
    ASSERT_EQ(committed.outcome, "committed") << doors[first].first;
    expected += amount;
    for (const auto& [name, door] : doors) {
      SCOPED_TRACE(absl::StrCat(key, " first through ", doors[first].first, ", then ", name));
      const Answer again = door(key, Payment(amount));
      EXPECT_EQ(again.outcome, "duplicate");
      EXPECT_EQ(again.transaction, committed.transaction);
      EXPECT_EQ(door(key, Payment(amount + 1)).outcome, "conflict");
      EXPECT_EQ(door(key, OtherKind(amount)).outcome, "conflict");
    }
  }
  EXPECT_EQ(Balance(Name("alice")), std::to_string(expected));
}

// A separate space, asked for by name, is apart from the shared one: the same key and
// payload commit once more there, replay there, and HTTP still replays the shared one.
TEST_P(OneKeySpaceTest, TheCliKeyNamespaceFlagNamesASeparateSpace) {
  StartServer();
  OpenAccounts();
  const std::string key = Name("pay");
  const Answer shared = HttpSingle(key, Payment(500));
  ASSERT_EQ(shared.outcome, "committed");
  auto in_own_space = [&](const std::string& key_namespace) {
    return RunLedger({"submit", "--key", key, "--key-namespace", key_namespace, "--json",
                      Payment(500).dump()});
  };
  const Answer own = FromCli(in_own_space("batch-job"));
  ASSERT_EQ(own.outcome, "committed");
  EXPECT_NE(own.transaction["id"], shared.transaction["id"]);
  const Answer own_again = FromCli(in_own_space("batch-job"));
  EXPECT_EQ(own_again.outcome, "duplicate");
  EXPECT_EQ(own_again.transaction, own.transaction);
  // Naming the default space is the default space.
  const Answer named_default = FromCli(in_own_space("operations"));
  EXPECT_EQ(named_default.outcome, "duplicate");
  EXPECT_EQ(named_default.transaction, shared.transaction);
  EXPECT_EQ(HttpSingle(key, Payment(500)).transaction, shared.transaction);
  EXPECT_EQ(CliJson(key, Payment(500)).transaction, shared.transaction);
  // A bad name is bad input: exit 2, named, nothing written.
  for (const std::string& bad : {std::string(""), std::string("a|b"), std::string("a/b"),
                                 std::string(65, 'n'), std::string("tab\there")}) {
    CliResult refused = in_own_space(bad);
    EXPECT_EQ(refused.exit_code, 2) << bad << ": " << refused.out << refused.err;
    EXPECT_NE(refused.err.find("--key-namespace"), std::string::npos) << refused.err;
  }
  EXPECT_EQ(Balance(Name("alice")), "1000");
}

INSTANTIATE_TEST_SUITE_P(Engines, OneKeySpaceTest, ::testing::ValuesIn(ServerEngineFactories()),
                         [](const ::testing::TestParamInfo<ServerEngineFactory>& info) {
                           return info.param().name;
                         });

}  // namespace
}  // namespace ledger::testing
