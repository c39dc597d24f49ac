// The listings and lookups over HTTP (issue 31), against the real `ledger serve`:
// GET /v1/transactions with every filter and its paging, 400 invalid_filter for a bad
// filter; GET /v1/holds with ?status=; GET /v1/keys/{key} scoped to the caller's tenant;
// history entries with kind, counterparties and metadata. Server databases are shared
// between tests, so every filter names something of this test's own (Name(...)).
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "httplib.h"
#include "tests/server/server_fixture.h"

namespace ledger::testing {
namespace {

class ListingTest : public ServerTest {
 protected:
  nlohmann::json GetJson(const std::string& path, const httplib::Headers& headers = {}) {
    httplib::Result result = Get(path, headers);
    if (!result || result->status != 200) {
      ADD_FAILURE() << path << ": " << (result ? result->body : httplib::to_string(result.error()));
      return nullptr;
    }
    return BodyJson(result);
  }
  // Every page of a transaction listing, following next_after.
  std::vector<std::string> AllTransactionIds(const std::string& query) {
    std::vector<std::string> ids;
    std::string after;
    for (int pages = 0; pages < 100; ++pages) {
      nlohmann::json page = GetJson("/v1/transactions?" + query +
                                    (after.empty() ? "" : "&after=" + after));
      if (page.is_null()) return ids;
      for (const nlohmann::json& transaction : page["transactions"]) {
        ids.push_back(transaction["id"]);
      }
      if (page["next_after"].is_null()) return ids;
      after = page["next_after"];
    }
    ADD_FAILURE() << "the listing never ended";
    return ids;
  }
  std::string Commit(const std::string& key, const nlohmann::json& operation,
                     const httplib::Headers& headers = {}) {
    httplib::Result result = Submit(key, operation, headers);
    if (!result || result->status != 201) {
      ADD_FAILURE() << key << ": " << (result ? result->body : httplib::to_string(result.error()));
      return "";
    }
    return BodyJson(result)["id"];
  }
};

TEST_P(ListingTest, TransactionsListByAccountKindMetadataAndTimeWithPaging) {
  StartServer();
  OpenAccounts();
  ASSERT_EQ(Post("/v1/accounts", nlohmann::json{{"id", Name("bob")}, {"asset", "USD"}}.dump())->status, 201);
  std::vector<std::string> of_alice;
  std::vector<std::string> transfers;
  std::vector<std::string> order_a;
  for (int i = 0; i < 5; ++i) {
    nlohmann::json top_up = TopUp(Name("alice"), 100);
    top_up["metadata"] = {{"order", Name(i % 2 == 0 ? "A" : "B")}};
    std::string id = Commit(Name("top-up-") + std::to_string(i), top_up);
    of_alice.push_back(id);
    if (i % 2 == 0) order_a.push_back(id);
    nlohmann::json transfer = {{"kind", "transfer"}, {"asset", "USD"}, {"from", Name("alice")},
                               {"to", Name("bob")}, {"amount", "1"}};
    id = Commit(Name("transfer-") + std::to_string(i), transfer);
    of_alice.push_back(id);
    transfers.push_back(id);
  }
  // Oldest first, every page full but the last, each transaction once.
  EXPECT_EQ(AllTransactionIds("account=" + Name("alice") + "&limit=3"), of_alice);
  EXPECT_EQ(AllTransactionIds("account=" + Name("bob") + "&kind=transfer&limit=2"), transfers);
  EXPECT_TRUE(AllTransactionIds("account=" + Name("bob") + "&kind=top_up").empty());
  EXPECT_EQ(AllTransactionIds("metadata=order%3D" + Name("A") + "&limit=1"), order_a);
  nlohmann::json first = GetJson("/v1/transactions?account=" + Name("alice") + "&limit=1");
  ASSERT_EQ(first["transactions"].size(), 1u);
  EXPECT_EQ(first["transactions"][0]["kind"], "top_up");
  EXPECT_EQ(first["transactions"][0]["metadata"]["order"], Name("A"));
  ASSERT_TRUE(first["next_after"].is_string());
  // A time range: from the second transaction's instant on, before the last's.
  nlohmann::json all = GetJson("/v1/transactions?account=" + Name("alice") + "&limit=1000");
  ASSERT_EQ(all["transactions"].size(), of_alice.size());
  const std::string from = all["transactions"][1]["created_at"];
  const std::string before = all["transactions"][of_alice.size() - 1]["created_at"];
  std::vector<std::string> in_range =
      AllTransactionIds("account=" + Name("alice") + "&from=" + from + "&before=" + before);
  ASSERT_FALSE(in_range.empty());
  EXPECT_EQ(in_range.front(), of_alice[1]);
  EXPECT_EQ(in_range.back(), of_alice[of_alice.size() - 2]);
}

TEST_P(ListingTest, BadTransactionFiltersAre400InvalidFilterAndAnUnknownAccount404) {
  StartServer();
  OpenAccounts();
  for (const std::string query :
       {"kind=deposit", "from=yesterday", "before=2026-13-01T00:00:00Z",
        "from=2026-01-02T00:00:00Z&before=2026-01-01T00:00:00Z", "metadata=order",
        "metadata=%3DA", "after=not-a-cursor", "account=bad%20id"}) {
    EXPECT_TRUE(IsProblem(Get("/v1/transactions?" + query), 400, "invalid_filter")) << query;
  }
  EXPECT_TRUE(IsProblem(Get("/v1/transactions?limit=1001"), 400, "invalid_request"));
  EXPECT_TRUE(IsProblem(Get("/v1/transactions?account=" + Name("ghost")), 404, "not_found"));
}

TEST_P(ListingTest, HoldsListEveryHoldByStatusAndPages) {
  StartServer();
  OpenAccounts();
  ASSERT_EQ(Post("/v1/accounts", nlohmann::json{{"id", Name("bob")}, {"asset", "USD"}}.dump())->status, 201);
  ASSERT_EQ(Submit(Name("fund"), TopUp(Name("alice"), 500))->status, 201);
  nlohmann::json hold = {{"kind", "hold"}, {"asset", "USD"}, {"from", Name("alice")},
                         {"to", Name("bob")}, {"amount", "10"}};
  const std::string pending = Commit(Name("hold-1"), hold);
  const std::string voided = Commit(Name("hold-2"), hold);
  ASSERT_FALSE(Commit(Name("void-2"), {{"kind", "void"}, {"hold_id", voided}}).empty());
  // Every page of every status, following next_after: ours are there, once each.
  auto ids_with = [&](const std::string& status) {
    std::set<std::string> ids;
    std::string after;
    for (int pages = 0; pages < 1000; ++pages) {
      nlohmann::json page = GetJson("/v1/holds?limit=1" + (status.empty() ? "" : "&status=" + status) +
                                    (after.empty() ? "" : "&after=" + after));
      if (page.is_null()) break;
      for (const nlohmann::json& listed : page["holds"]) {
        if (!status.empty()) {
          EXPECT_EQ(listed["status"], status);
        }
        EXPECT_TRUE(ids.insert(listed["id"]).second) << "listed twice: " << listed["id"];
      }
      if (page["next_after"].is_null()) break;
      after = page["next_after"];
    }
    return ids;
  };
  std::set<std::string> every = ids_with("");
  EXPECT_TRUE(every.contains(pending) && every.contains(voided));
  std::set<std::string> pending_ones = ids_with("pending");
  EXPECT_TRUE(pending_ones.contains(pending));
  EXPECT_FALSE(pending_ones.contains(voided));
  std::set<std::string> voided_ones = ids_with("voided");
  EXPECT_TRUE(voided_ones.contains(voided));
  EXPECT_FALSE(voided_ones.contains(pending));
  // One account's holds take the same filter.
  nlohmann::json of_alice = GetJson("/v1/accounts/" + Name("alice") + "/holds?status=voided");
  ASSERT_EQ(of_alice["holds"].size(), 1u);
  EXPECT_EQ(of_alice["holds"][0]["id"], voided);
  EXPECT_TRUE(IsProblem(Get("/v1/accounts/" + Name("alice") + "/holds?status=lost"), 400,
                        "invalid_filter"));
  EXPECT_TRUE(IsProblem(Get("/v1/holds?status=lost"), 400, "invalid_filter"));
  EXPECT_TRUE(IsProblem(Get("/v1/holds?limit=0"), 400, "invalid_request"));
}

// A key is looked up in the caller's tenant, as POST /v1/operations claimed it: another
// tenant's same key is not found, never shown.
TEST_P(ListingTest, KeyLookupReturnsTheCommittedTransactionInTheCallersTenantOnly) {
  std::ofstream keys(folder_ / "keys");
  keys << Sha256Hex("admin-secret") << " acme admin\n"
       << Sha256Hex("acme-reader") << " acme read\n"
       << Sha256Hex("globex-secret") << " globex submit\n";
  keys.close();
  StartServer({"--api-keys-file", (folder_ / "keys").string()});
  const httplib::Headers admin = {{"Authorization", "Bearer admin-secret"}};
  const httplib::Headers reader = {{"Authorization", "Bearer acme-reader"}};
  const httplib::Headers globex = {{"Authorization", "Bearer globex-secret"}};
  ASSERT_EQ(Post("/v1/assets", R"({"code":"USD","scale":2})", admin)->status / 100, 2);
  for (const char* id : {"issuance", "alice"}) {
    nlohmann::json body = {{"id", Name(id)}, {"asset", "USD"},
                           {"allow_negative", std::string(id) == "issuance"}};
    ASSERT_EQ(Post("/v1/accounts", body.dump(), admin)->status, 201);
  }
  const std::string id = Commit(Name("order-1"), TopUp(Name("alice"), 100), admin);
  nlohmann::json found = GetJson("/v1/keys/" + Name("order-1"), reader);
  ASSERT_FALSE(found.is_null());
  EXPECT_EQ(found["key"]["key"], Name("order-1"));
  EXPECT_EQ(found["key"]["tenant"], "acme");
  EXPECT_EQ(found["key"]["namespace"], "operations");
  EXPECT_EQ(found["key"]["transaction_id"], id);
  EXPECT_EQ(found["transaction"]["id"], id);
  EXPECT_EQ(found["transaction"]["kind"], "top_up");
  EXPECT_TRUE(IsProblem(Get("/v1/keys/" + Name("order-1"), globex), 404, "not_found"));
  EXPECT_TRUE(IsProblem(Get("/v1/keys/" + Name("order-2"), reader), 404, "not_found"));
  EXPECT_TRUE(IsProblem(Get("/v1/keys/" + Name("order-1")), 401, "unauthenticated"));
}

TEST_P(ListingTest, HistoryEntriesCarryKindCounterpartiesAndMetadata) {
  StartServer();
  OpenAccounts();
  nlohmann::json top_up = TopUp(Name("alice"), 100);
  top_up["metadata"] = {{"order", "A-17"}};
  ASSERT_FALSE(Commit(Name("t1"), top_up).empty());
  nlohmann::json page = GetJson("/v1/accounts/" + Name("alice") + "/history");
  ASSERT_EQ(page["entries"].size(), 1u);
  EXPECT_EQ(page["entries"][0]["kind"], "top_up");
  EXPECT_EQ(page["entries"][0]["counterparties"], nlohmann::json::array({Name("issuance")}));
  EXPECT_EQ(page["entries"][0]["metadata"], nlohmann::json({{"order", "A-17"}}));
}

INSTANTIATE_TEST_SUITE_P(Engines, ListingTest, ::testing::ValuesIn(ServerEngineFactories()),
                         [](const ::testing::TestParamInfo<ServerEngineFactory>& info) {
                           return info.param().name;
                         });

}  // namespace
}  // namespace ledger::testing
