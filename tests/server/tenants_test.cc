// Tenants over HTTP (issue 28, point 6), per engine, against the real `ledger serve`
// process: each tenant of the API keys file has a ledger of its own (its SQLite file,
// PostgreSQL schema or MySQL database, server/tenant_ledgers.h), so one tenant's key
// neither sees nor moves another tenant's money; a tenant's ledger is created and
// migrated on its first request; bad tenant names keep the server from starting.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "tests/server/server_fixture.h"

namespace ledger::testing {
namespace {

class TenantsTest : public ServerTest {
 protected:
  // Two tenants with random names (server databases are shared between runs, so each
  // test's tenants are new there: their schema or database does not exist yet), each
  // with an admin key.
  void StartWithTwoTenants() {
    const std::string stem = prefix_.substr(0, prefix_.size() - 1);  // "t" + 10 of [a-z0-9]
    tenant_a_ = stem + "_a";
    tenant_b_ = stem + "_b";
    std::ofstream keys(folder_ / "keys");
    keys << Sha256Hex("a-secret") << " " << tenant_a_ << " admin\n"
         << Sha256Hex("b-secret") << " " << tenant_b_ << " admin\n";
    keys.close();
    StartServer({"--api-keys-file", (folder_ / "keys").string(), "--hold-sweep-interval", "1"});
  }

  // Defines USD and opens Name(tenant + "-issuance") and Name(tenant + "-alice") / "-bob"
  // in `tenant`'s ledger, and tops alice up by 100.
  void OpenTenantAccounts(const std::string& tenant, const httplib::Headers& auth) {
    ASSERT_EQ(Post("/v1/assets", R"({"code":"USD","scale":2})", auth)->status, 201) << tenant;
    for (const char* id : {"issuance", "alice", "bob"}) {
      nlohmann::json body = {{"id", Name(tenant + "-" + id)}, {"asset", "USD"},
                             {"allow_negative", std::string(id) == "issuance"}};
      httplib::Result opened = Post("/v1/accounts", body.dump(), auth);
      ASSERT_EQ(opened->status, 201) << opened->body;
    }
    ASSERT_EQ(Submit(Name(tenant + "-fund"), Transfer(tenant, "issuance", "alice", 100), auth)->status, 201);
  }

  nlohmann::json Transfer(const std::string& tenant, const std::string& from, const std::string& to,
                          int64_t amount) const {
    return {{"kind", "transfer"}, {"asset", "USD"}, {"from", Name(tenant + "-" + from)},
            {"to", Name(tenant + "-" + to)}, {"amount", std::to_string(amount)}};
  }

  // Every event of the tenant the key belongs to.
  std::vector<nlohmann::json> Events(const httplib::Headers& auth) {
    httplib::Result page = Get("/v1/events?limit=1000", auth);
    if (!page || page->status != 200) {
      ADD_FAILURE() << "events: " << (page ? page->body : httplib::to_string(page.error()));
      return {};
    }
    return BodyJson(page)["events"].get<std::vector<nlohmann::json>>();
  }

  // The database URL the documented rule (docs/http.md "Tenants") gives `tenant`.
  std::string TenantUrl(const std::string& tenant) const {
    if (IsSqlite()) {
      return "sqlite:" + (folder_ / ("ledger." + tenant + ".db")).string();
    }
    const size_t query = database_url_.find('?', database_url_.rfind('@') + 1);
    std::string base = database_url_.substr(0, query);
    std::string parameters = query == std::string::npos ? "" : database_url_.substr(query + 1);
    auto with = [&](const std::string& parameter) {
      return base + "?" + (parameters.empty() ? parameter : parameters + "&" + parameter);
    };
    if (engine_.name == "postgres") {
      EXPECT_EQ(parameters.find("schema="), std::string::npos) << "the test DSN names no schema";
      return with("schema=public_" + tenant);
    }
    return with("create_database=true").replace(base.size(), 0, "_" + tenant);
  }

  std::string tenant_a_;
  std::string tenant_b_;
};

TEST_P(TenantsTest, ATenantGets404ForEveryIdOfAnotherTenant) {
  StartWithTwoTenants();
  const httplib::Headers a = {{"Authorization", "Bearer a-secret"}};
  const httplib::Headers b = {{"Authorization", "Bearer b-secret"}};
  OpenTenantAccounts(tenant_a_, a);
  OpenTenantAccounts(tenant_b_, b);
  httplib::Result b_transfer = Submit(Name("b-pay"), Transfer(tenant_b_, "alice", "bob", 30), b);
  ASSERT_EQ(b_transfer->status, 201) << b_transfer->body;
  const std::string b_transaction = BodyJson(b_transfer)["id"];
  nlohmann::json b_hold_operation = Transfer(tenant_b_, "alice", "bob", 20);
  b_hold_operation["kind"] = "hold";
  httplib::Result b_hold = Submit(Name("b-hold"), b_hold_operation, b);
  ASSERT_EQ(b_hold->status, 201) << b_hold->body;
  const std::string b_hold_id = BodyJson(b_hold)["id"];
  const std::string b_alice = Name(tenant_b_ + "-alice");

  // Each of B's ids, through each route that takes one: 404 for A, 200 for B.
  for (const std::string& path :
       {"/v1/transactions/" + b_transaction, "/v1/accounts/" + b_alice,
        "/v1/accounts/" + b_alice + "/balance", "/v1/accounts/" + b_alice + "/history",
        "/v1/accounts/" + b_alice + "/holds", "/v1/holds/" + b_hold_id}) {
    EXPECT_TRUE(IsProblem(Get(path, a), 404, "not_found")) << path;
    EXPECT_EQ(Get(path, b)->status, 200) << path;
  }
  EXPECT_TRUE(IsProblem(Post("/v1/accounts/" + b_alice + "/close", "", a), 404, "not_found"));
  // Lists show A's own only.
  for (const nlohmann::json& account : BodyJson(Get("/v1/accounts?limit=1000", a))["accounts"]) {
    EXPECT_EQ(account["id"].get<std::string>().find(tenant_b_), std::string::npos) << account;
  }
  // None of B's events in A's stream (and A's own are there).
  ASSERT_FALSE(Events(b).empty());
  const std::vector<nlohmann::json> a_events = Events(a);
  EXPECT_FALSE(a_events.empty());
  for (const nlohmann::json& event : a_events) {
    EXPECT_EQ(event.dump().find(tenant_b_), std::string::npos) << event;
    EXPECT_EQ(event.dump().find(b_transaction), std::string::npos) << event;
  }
}

TEST_P(TenantsTest, ATenantCannotPostAgainstAnotherTenantsAccounts) {
  StartWithTwoTenants();
  const httplib::Headers a = {{"Authorization", "Bearer a-secret"}};
  const httplib::Headers b = {{"Authorization", "Bearer b-secret"}};
  OpenTenantAccounts(tenant_a_, a);
  OpenTenantAccounts(tenant_b_, b);
  const std::string b_history_path = "/v1/accounts/" + Name(tenant_b_ + "-alice") + "/history";
  const std::string b_history = Get(b_history_path, b)->body;
  const size_t b_event_count = Events(b).size();

  // A's key moving B's money: the accounts do not exist in A's ledger.
  httplib::Result stolen = Submit(Name("steal"), Transfer(tenant_b_, "alice", "bob", 50), a);
  EXPECT_TRUE(IsProblem(stolen, 402, "account_not_found"));
  nlohmann::json batch = {{"items", {{{"idempotency_key", Name("steal-2")},
                                      {"operation", Transfer(tenant_b_, "alice", "bob", 50)}}}}};
  nlohmann::json item = BodyJson(Post("/v1/operations/batch", batch.dump(), a))["results"][0];
  EXPECT_EQ(item["status"], 402) << item;
  EXPECT_EQ(item["body"]["reason"], "account_not_found") << item;

  // Nothing was written in B.
  EXPECT_EQ(Get(b_history_path, b)->body, b_history);
  EXPECT_EQ(BodyJson(Get("/v1/accounts/" + Name(tenant_b_ + "-alice") + "/balance", b))["balance"], "100");
  EXPECT_EQ(BodyJson(Get("/v1/accounts/" + Name(tenant_b_ + "-bob") + "/balance", b))["balance"], "0");
  EXPECT_EQ(Events(b).size(), b_event_count);
}

TEST_P(TenantsTest, TheSameIdempotencyKeyCommitsOnceInEachTenant) {
  StartWithTwoTenants();
  const httplib::Headers a = {{"Authorization", "Bearer a-secret"}};
  const httplib::Headers b = {{"Authorization", "Bearer b-secret"}};
  OpenTenantAccounts(tenant_a_, a);
  OpenTenantAccounts(tenant_b_, b);
  httplib::Result a_first = Submit(Name("same"), Transfer(tenant_a_, "alice", "bob", 10), a);
  httplib::Result b_first = Submit(Name("same"), Transfer(tenant_b_, "alice", "bob", 10), b);
  ASSERT_EQ(a_first->status, 201) << a_first->body;
  ASSERT_EQ(b_first->status, 201) << b_first->body;
  EXPECT_FALSE(b_first->has_header("Idempotent-Replayed"));
  httplib::Result a_again = Submit(Name("same"), Transfer(tenant_a_, "alice", "bob", 10), a);
  httplib::Result b_again = Submit(Name("same"), Transfer(tenant_b_, "alice", "bob", 10), b);
  EXPECT_EQ(a_again->get_header_value("Idempotent-Replayed"), "true");
  EXPECT_EQ(b_again->get_header_value("Idempotent-Replayed"), "true");
  EXPECT_EQ(a_again->body, a_first->body);
  EXPECT_EQ(b_again->body, b_first->body);
  EXPECT_EQ(BodyJson(Get("/v1/accounts/" + Name(tenant_a_ + "-bob") + "/balance", a))["balance"], "10");
  EXPECT_EQ(BodyJson(Get("/v1/accounts/" + Name(tenant_b_ + "-bob") + "/balance", b))["balance"], "10");
}

// Nothing of a tenant's ledger exists until its first request; then it is created and
// migrated where docs/http.md says, and the `ledger` tool reads it there.
TEST_P(TenantsTest, ATenantsLedgerIsCreatedAndMigratedOnFirstUse) {
  StartWithTwoTenants();
  const httplib::Headers b = {{"Authorization", "Bearer b-secret"}};
  EXPECT_EQ(server_->Log().find("tenant_opened"), std::string::npos) << server_->Log();
  if (IsSqlite()) {
    EXPECT_FALSE(std::filesystem::exists(folder_ / ("ledger." + tenant_b_ + ".db")));
  }
  OpenTenantAccounts(tenant_b_, b);
  EXPECT_NE(server_->Log().find("\"event\":\"tenant_opened\",\"tenant\":\"" + tenant_b_ + "\""),
            std::string::npos) << server_->Log();
  EXPECT_EQ(server_->Log().find("\"tenant\":\"" + tenant_a_ + "\""), std::string::npos);
  if (IsSqlite()) {
    EXPECT_TRUE(std::filesystem::exists(folder_ / ("ledger." + tenant_b_ + ".db")));
  }
  // The tenant's ledger is where the rule puts it, and the --db ledger does not have it.
  const std::string account = Name(tenant_b_ + "-alice");
  EXPECT_EQ(RunLedgerToExit({"balance", account, "--db", TenantUrl(tenant_b_)}, folder_ / "tenant.log"), 0)
      << TenantUrl(tenant_b_);
  EXPECT_NE(RunLedgerToExit({"balance", account, "--db", database_url_}, folder_ / "default.log"), 0);
}

TEST_P(TenantsTest, BadTenantNamesKeepTheServerFromStarting) {
  for (const std::string& tenant : {std::string("Acme"), std::string("acme-corp"), std::string("1acme"),
                                    std::string("_acme"), std::string("acme.db"), std::string("../x"),
                                    std::string(33, 'a')}) {
    std::ofstream keys(folder_ / "bad-keys");
    keys << Sha256Hex("k") << " " << tenant << " read\n";
    keys.close();
    const std::filesystem::path log_path = folder_ / "bad-tenant.log";
    EXPECT_EQ(RunLedgerToExit({"serve", "--db", database_url_, "--listen", "127.0.0.1:0",
                               "--api-keys-file", (folder_ / "bad-keys").string()},
                              log_path),
              2) << tenant;
    std::ifstream log(log_path);
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("API keys line 1: a tenant name is 1 to 32 characters: lower-case letters, "
                        "digits and '_', beginning with a letter"),
              std::string::npos) << tenant << ": " << text;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, TenantsTest, ::testing::ValuesIn(ServerEngineFactories()),
                         [](const ::testing::TestParamInfo<ServerEngineFactory>& info) {
                           return info.param().name;
                         });

}  // namespace
}  // namespace ledger::testing
