// Dry runs over HTTP (`?dry_run=true` on POST /v1/operations and /v1/operations/batch),
// over a real socket, per engine: 200 with the would-be outcome, never 201, and nothing
// written or remembered under the key, so a later real request with it runs for real.
#include <string>
#include <vector>

#include "tests/server/server_fixture.h"

namespace ledger::testing {
namespace {

constexpr char kDryRunPath[] = "/v1/operations?dry_run=true";
constexpr char kDryRunBatchPath[] = "/v1/operations/batch?dry_run=true";

httplib::Headers KeyHeader(const std::string& key) {
  return {{"Idempotency-Key", "\"" + key + "\""}};
}

nlohmann::json Transfer(const std::string& from, const std::string& to, int64_t amount) {
  return {{"kind", "transfer"}, {"asset", "USD"}, {"from", from}, {"to", to},
          {"amount", std::to_string(amount)}};
}

// The body of a 200 dry-run answer (null, with a test failure, otherwise).
nlohmann::json DryRunBody(const httplib::Result& result) {
  if (!result) {
    ADD_FAILURE() << "no response: " << httplib::to_string(result.error());
    return nullptr;
  }
  EXPECT_EQ(result->status, 200) << result->body;
  EXPECT_EQ(result->get_header_value("Content-Type"), "application/json");
  EXPECT_FALSE(result->has_header("Location")) << result->body;
  EXPECT_FALSE(result->has_header("Idempotent-Replayed")) << result->body;
  nlohmann::json body = BodyJson(result);
  EXPECT_EQ(body["dry_run"], true) << result->body;
  return body;
}

TEST_P(ServerTest, DryRunAnswersTheWouldBeOutcomeAndWritesNothing) {
  StartServer();
  OpenAccounts();
  ASSERT_EQ(Submit(Name("fund"), TopUp(Name("alice"), 100))->status, 201);
  const int64_t events_before = LastEventSequence();
  const std::string key = Name("pay");
  const nlohmann::json pay = Transfer(Name("alice"), Name("issuance"), 30);

  nlohmann::json would = DryRunBody(Post(kDryRunPath, pay.dump(), KeyHeader(key)));
  ASSERT_EQ(would["outcome"], "committed") << would;
  const nlohmann::json& entries = would["transaction"]["entries"];
  ASSERT_EQ(entries.size(), 2u) << would;
  for (const nlohmann::json& entry : entries) {
    if (entry["account"] == Name("alice")) {
      EXPECT_EQ(entry["balance_after"], "70") << would;
    }
  }
  // Nothing stayed: balance, events, the would-be transaction.
  EXPECT_EQ(Balance(Name("alice")), "100");
  EXPECT_EQ(LastEventSequence(), events_before);
  const std::string would_be_id = would["transaction"]["id"].get<std::string>();
  EXPECT_EQ(Get("/v1/transactions/" + would_be_id)->status, 404);

  // The same key for real runs for real: 201, not a replay of the dry run.
  httplib::Result real = Submit(key, pay);
  ASSERT_EQ(real->status, 201) << real->body;
  EXPECT_FALSE(real->has_header("Idempotent-Replayed"));
  EXPECT_EQ(Balance(Name("alice")), "70");
  const int64_t events_after_real = LastEventSequence();

  // Now the key is committed: a dry run reports the recorded transaction, or a conflict.
  nlohmann::json duplicate = DryRunBody(Post(kDryRunPath, pay.dump(), KeyHeader(key)));
  EXPECT_EQ(duplicate["outcome"], "duplicate") << duplicate;
  EXPECT_EQ(duplicate["transaction"], BodyJson(real)) << duplicate;
  nlohmann::json other = Transfer(Name("alice"), Name("issuance"), 31);
  nlohmann::json conflict = DryRunBody(Post(kDryRunPath, other.dump(), KeyHeader(key)));
  EXPECT_EQ(conflict["outcome"], "conflict") << conflict;

  // A rejection names the reason a real submit gets (402 insufficient_funds).
  nlohmann::json too_much = Transfer(Name("alice"), Name("issuance"), 1000);
  nlohmann::json rejected = DryRunBody(Post(kDryRunPath, too_much.dump(), KeyHeader(Name("over"))));
  EXPECT_EQ(rejected["outcome"], "rejected") << rejected;
  EXPECT_EQ(rejected["reason"], "insufficient_funds") << rejected;
  EXPECT_EQ(LastEventSequence(), events_after_real);
  EXPECT_TRUE(IsProblem(Submit(Name("over"), too_much), 402, "insufficient_funds"));

  // What decides nothing answers as a submit would; a bad flag is a bad request.
  EXPECT_TRUE(IsProblem(Post(kDryRunPath, pay.dump()), 400, "idempotency_key_invalid"));
  EXPECT_TRUE(IsProblem(Post("/v1/operations?dry_run=yes", pay.dump(), KeyHeader(Name("flag"))),
                        400, "invalid_request"));
  EXPECT_EQ(Balance(Name("alice")), "70");
}

TEST_P(ServerTest, BatchDryRunDecidesEachItemInOrderAndWritesNothing) {
  StartServer();
  OpenAccounts();
  const int64_t events_before = LastEventSequence();
  nlohmann::json batch = {
      {"items",
       {{{"idempotency_key", Name("b-fund")}, {"operation", TopUp(Name("alice"), 50)}},
        // Sees the item before it, as the real batch would.
        {{"idempotency_key", Name("b-pay")},
         {"operation", Transfer(Name("alice"), Name("issuance"), 50)}},
        {{"idempotency_key", Name("b-over")},
         {"operation", Transfer(Name("alice"), Name("issuance"), 1)}}}}};

  httplib::Result dry = Post(kDryRunBatchPath, batch.dump());
  nlohmann::json body = DryRunBody(dry);
  ASSERT_TRUE(body.contains("results")) << dry->body;
  const nlohmann::json& results = body["results"];
  ASSERT_EQ(results.size(), 3u) << dry->body;
  for (const nlohmann::json& result : results) {
    EXPECT_EQ(result["status"], 200) << result;
    EXPECT_EQ(result["body"]["dry_run"], true) << result;
    EXPECT_FALSE(result["headers"].contains("Location")) << result;
  }
  EXPECT_EQ(results[0]["body"]["outcome"], "committed");
  EXPECT_EQ(results[1]["body"]["outcome"], "committed");
  EXPECT_EQ(results[2]["body"]["outcome"], "rejected");
  EXPECT_EQ(results[2]["body"]["reason"], "insufficient_funds");
  EXPECT_EQ(Balance(Name("alice")), "0");
  EXPECT_EQ(LastEventSequence(), events_before);

  // For real: the same decisions, none of them a replay.
  httplib::Result real = Post("/v1/operations/batch", batch.dump());
  ASSERT_TRUE(real) << httplib::to_string(real.error());
  ASSERT_EQ(real->status, 200) << real->body;
  nlohmann::json real_results = BodyJson(real)["results"];
  ASSERT_EQ(real_results.size(), 3u) << real->body;
  EXPECT_EQ(real_results[0]["status"], 201);
  EXPECT_EQ(real_results[0]["replayed"], false);
  EXPECT_EQ(real_results[1]["status"], 201);
  EXPECT_EQ(real_results[2]["status"], 402);
  EXPECT_EQ(Balance(Name("alice")), "0");
  EXPECT_GT(LastEventSequence(), events_before);
}

}  // namespace
}  // namespace ledger::testing
