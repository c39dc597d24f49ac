// The Idempotency-Key contract of POST /v1/operations, over a real socket, per engine.
#include <sqlite3.h>

#include <atomic>
#include <cstdlib>
#include <set>
#include <thread>
#include <vector>

#include "tests/server/server_fixture.h"

namespace ledger::testing {
namespace {

TEST_P(ServerTest, FirstCommitIs201AndReplayIsByteIdenticalWithIdempotentReplayed) {
  StartServer();
  OpenAccounts();
  httplib::Result first = Submit(Name("pay-1"), TopUp(Name("alice"), 500));
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 201) << first->body;
  EXPECT_FALSE(first->has_header("Idempotent-Replayed"));
  httplib::Result replay = Submit(Name("pay-1"), TopUp(Name("alice"), 500));
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->status, 201);
  EXPECT_EQ(replay->body, first->body);
  EXPECT_EQ(replay->get_header_value("Idempotent-Replayed"), "true");
  EXPECT_EQ(Balance(Name("alice")), "500");
  std::string id = BodyJson(first)["id"];
  EXPECT_EQ(first->get_header_value("Location"), "/v1/transactions/" + id);
  httplib::Result stored = Get("/v1/transactions/" + id);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->status, 200);
  EXPECT_EQ(stored->body, first->body);
}

TEST_P(ServerTest, StructuredStringAndBareTokenAreTheSameKey) {
  StartServer();
  OpenAccounts();
  httplib::Result quoted = Submit(Name("same"), TopUp(Name("alice"), 7));
  ASSERT_TRUE(quoted);
  ASSERT_EQ(quoted->status, 201);
  httplib::Result bare = Post("/v1/operations", TopUp(Name("alice"), 7).dump(),
                              {{"Idempotency-Key", Name("same")}});
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->status, 201);
  EXPECT_EQ(bare->get_header_value("Idempotent-Replayed"), "true");
  EXPECT_EQ(bare->body, quoted->body);
  EXPECT_EQ(Balance(Name("alice")), "7");
}

TEST_P(ServerTest, MissingInvalidOrRepeatedKeyIs400AndWritesNothing) {
  StartServer();
  OpenAccounts();
  std::string body = TopUp(Name("alice"), 10).dump();
  EXPECT_TRUE(IsProblem(Post("/v1/operations", body), 400, "idempotency_key_invalid"));
  for (const std::string& bad : {std::string("\"unterminated"), std::string("two words"),
                                 std::string("\"k\";p=1"), std::string("\"\""),
                                 std::string("\"bad\\escape\""), std::string(300, 'k'),
                                 std::string("12345"), std::string("-7"), std::string("3.14"),
                                 std::string(":aGk:"), std::string("k,l"), std::string("caf\xc3\xa9")}) {
    EXPECT_TRUE(IsProblem(Post("/v1/operations", body, {{"Idempotency-Key", bad}}), 400,
                          "idempotency_key_invalid")) << bad;
  }
  httplib::Headers twice = {{"Idempotency-Key", Name("a")}, {"Idempotency-Key", Name("a")}};
  EXPECT_TRUE(IsProblem(Post("/v1/operations", body, twice), 400, "idempotency_key_invalid"));
  EXPECT_EQ(Balance(Name("alice")), "0");
}

TEST_P(ServerTest, SameKeyWithAnotherPayloadIs422) {
  StartServer();
  OpenAccounts();
  ASSERT_EQ(Submit(Name("k"), TopUp(Name("alice"), 100))->status, 201);
  EXPECT_TRUE(IsProblem(Submit(Name("k"), TopUp(Name("alice"), 101)), 422, "idempotency_key_reused"));
  // Another kind under the same key is another payload too, not a second operation.
  nlohmann::json transfer = {{"kind", "transfer"}, {"asset", "USD"}, {"from", Name("alice")},
                             {"to", Name("issuance")}, {"amount", "100"}};
  EXPECT_TRUE(IsProblem(Submit(Name("k"), transfer), 422, "idempotency_key_reused"));
  EXPECT_EQ(Balance(Name("alice")), "100");
}

TEST_P(ServerTest, RejectionIs402WithReasonAndTheKeyStaysUnused) {
  StartServer();
  OpenAccounts();
  nlohmann::json spend = {{"kind", "transfer"}, {"asset", "USD"}, {"from", Name("alice")},
                          {"to", Name("issuance")}, {"amount", "300"}};
  EXPECT_TRUE(IsProblem(Submit(Name("spend"), spend), 402, "insufficient_funds"));
  ASSERT_EQ(Submit(Name("fund"), TopUp(Name("alice"), 500))->status, 201);
  httplib::Result later = Submit(Name("spend"), spend);
  ASSERT_TRUE(later);
  EXPECT_EQ(later->status, 201) << later->body;
  EXPECT_FALSE(later->has_header("Idempotent-Replayed"));  // a first commit, not a replay
  EXPECT_EQ(Balance(Name("alice")), "200");
}

TEST_P(ServerTest, ClosedAccountIs402AccountClosed) {
  StartServer();
  OpenAccounts();
  httplib::Result closed = Post("/v1/accounts/" + Name("alice") + "/close", "");
  ASSERT_TRUE(closed);
  ASSERT_EQ(closed->status, 200) << closed->body;
  EXPECT_EQ(BodyJson(closed)["closed"], true);
  EXPECT_TRUE(IsProblem(Submit(Name("k"), TopUp(Name("alice"), 1)), 402, "account_closed"));
}

// 64 clients, one key, one payload, all at once: one commit, 63 byte-identical replays.
TEST_P(ServerTest, SixtyFourConcurrentRequestsWithOneKeyCommitOnce) {
  StartServer({"--threads", "64"});
  OpenAccounts();
  constexpr int kClients = 64;
  struct Answer {
    bool received = false;
    int status = 0;
    bool replayed = false;
    std::string body;
  };
  std::vector<Answer> answers(kClients);
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  std::string body = TopUp(Name("alice"), 42).dump();
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      std::unique_ptr<httplib::Client> client = server_->Client();
      ready.fetch_add(1);
      while (ready.load() < kClients) std::this_thread::yield();
      httplib::Result result = client->Post(
          "/v1/operations", {{"Idempotency-Key", "\"" + Name("hot") + "\""}, {"Prefer", "wait=30"}},
          body, "application/json");
      if (result) {
        answers[i] = {true, result->status, result->has_header("Idempotent-Replayed"), result->body};
      } else {
        answers[i].body = httplib::to_string(result.error());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  int first_commits = 0;
  std::set<std::string> bodies;
  for (const Answer& answer : answers) {
    ASSERT_TRUE(answer.received) << answer.body;
    ASSERT_EQ(answer.status, 201) << answer.body;
    if (!answer.replayed) ++first_commits;
    bodies.insert(answer.body);
  }
  EXPECT_EQ(first_commits, 1);
  EXPECT_EQ(bodies.size(), 1u);
  EXPECT_EQ(Balance(Name("alice")), "42");
}

// SQLite serializes writers, so a write transaction held open by the test makes the
// claim busy: with Prefer: wait=0 the server must answer 409 + Retry-After at once.
TEST_P(ServerTest, SameKeyStillRunningIs409WithRetryAfter) {
  if (!IsSqlite()) GTEST_SKIP() << "holding the claim from outside needs SQLite's writer lock";
  StartServer();
  OpenAccounts();
  sqlite3* database = nullptr;
  ASSERT_EQ(sqlite3_open(database_url_.substr(7).c_str(), &database), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(database, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  httplib::Result busy = Submit(Name("k"), TopUp(Name("alice"), 5), {{"Prefer", "wait=0"}});
  sqlite3_exec(database, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(database);
  EXPECT_TRUE(IsProblem(busy, 409, "idempotency_key_in_progress"));
  EXPECT_EQ(busy->get_header_value("Retry-After"), "1");
  httplib::Result retried = Submit(Name("k"), TopUp(Name("alice"), 5));
  ASSERT_TRUE(retried);
  EXPECT_EQ(retried->status, 201);
  EXPECT_EQ(Balance(Name("alice")), "5");
}

TEST_P(ServerTest, BadOperationBodiesAre400And415AndWriteNothing) {
  StartServer();
  OpenAccounts();
  int64_t events_before = LastEventSequence();
  EXPECT_TRUE(IsProblem(Post("/v1/operations", "{not json", {{"Idempotency-Key", Name("a")}}), 400,
                        "invalid_operation"));
  nlohmann::json unknown = TopUp(Name("alice"), 5);
  unknown["surprise"] = 1;
  EXPECT_TRUE(IsProblem(Submit(Name("b"), unknown), 400, "invalid_operation"));
  nlohmann::json duplicate_member_text = TopUp(Name("alice"), 5);
  std::string duplicated = duplicate_member_text.dump();
  duplicated.insert(1, "\"amount\":\"9\",");
  EXPECT_TRUE(IsProblem(Post("/v1/operations", duplicated, {{"Idempotency-Key", Name("c")}}), 400,
                        "invalid_operation"));
  httplib::Result form = client_->Post("/v1/operations", {{"Idempotency-Key", Name("d")}},
                                       TopUp(Name("alice"), 5).dump(), "text/plain");
  EXPECT_TRUE(IsProblem(form, 415, "unsupported_media_type"));
  EXPECT_EQ(Balance(Name("alice")), "0");
  EXPECT_EQ(LastEventSequence(), events_before);
}

TEST_P(ServerTest, HugeBodyIs413AndHugeHeadersAre431) {
  StartServer({"--body-max", "4096", "--header-max", "2048"});
  OpenAccounts();
  nlohmann::json big = TopUp(Name("alice"), 5);
  big["metadata"] = {{"note", std::string(8000, 'x')}};
  EXPECT_TRUE(IsProblem(Submit(Name("big"), big), 413, "payload_too_large"));
  EXPECT_TRUE(IsProblem(Submit(Name("hdr"), TopUp(Name("alice"), 5), {{"X-Padding", std::string(3000, 'p')}}),
                        431, "request_header_fields_too_large"));
  EXPECT_EQ(Balance(Name("alice")), "0");
}


// Every operation kind the library has goes through POST /v1/operations.
TEST_P(ServerTest, EveryOperationKindCommitsOverHttp) {
  StartServer();
  OpenAccounts();
  for (const char* id : {"creator", "platform", "payouts"}) {
    ASSERT_EQ(Post("/v1/accounts", nlohmann::json{{"id", Name(id)}, {"asset", "USD"}}.dump())->status, 201);
  }
  ASSERT_EQ(Submit(Name("top"), TopUp(Name("alice"), 1000))->status, 201);
  nlohmann::json spend = {{"kind", "spend"}, {"asset", "USD"}, {"from", Name("alice")}, {"to", Name("creator")},
                          {"amount", "300"}, {"fee", {{"to", Name("platform")}, {"amount", "30"}}},
                          {"metadata", {{"order", "A-1"}}}};
  httplib::Result spent = Submit(Name("spend"), spend);
  ASSERT_EQ(spent->status, 201) << spent->body;
  EXPECT_EQ(BodyJson(spent)["metadata"]["order"], "A-1");
  nlohmann::json payout = {{"kind", "payout"}, {"asset", "USD"}, {"from", Name("creator")},
                           {"to", Name("payouts")}, {"amount", "100"}};
  ASSERT_EQ(Submit(Name("payout"), payout)->status, 201);
  nlohmann::json transfer = {{"kind", "transfer"}, {"asset", "USD"}, {"from", Name("alice")},
                             {"to", Name("creator")}, {"amount", "50"}};
  httplib::Result transferred = Submit(Name("transfer"), transfer);
  ASSERT_EQ(transferred->status, 201);
  nlohmann::json reverse = {{"kind", "reverse"}, {"transaction_id", BodyJson(transferred)["id"]}};
  ASSERT_EQ(Submit(Name("reverse"), reverse)->status, 201);
  EXPECT_TRUE(IsProblem(Submit(Name("reverse-again"), reverse), 402, "already_reversed"));
  nlohmann::json post = {{"kind", "post"},
                         {"postings", {{{"account", Name("alice")}, {"asset", "USD"}, {"amount", "-10"}},
                                       {{"account", Name("platform")}, {"asset", "USD"}, {"amount", "10"}}}}};
  ASSERT_EQ(Submit(Name("post"), post)->status, 201);
  EXPECT_EQ(Balance(Name("alice")), "690");     // 1000 - 300 - 50 + 50 - 10
  EXPECT_EQ(Balance(Name("creator")), "170");   // 270 - 100 + 50 - 50
  EXPECT_EQ(Balance(Name("platform")), "40");
  EXPECT_EQ(Balance(Name("payouts")), "100");
}

// A fault is 503 + Retry-After with in_doubt in the body, and the same key is the safe
// resend. PostgreSQL only: the test kills the server's database sessions with
// pg_terminate_backend after closing the database to new sessions (so the pool cannot
// quietly replace them), in a database of its own so no other test is touched.
TEST_P(ServerTest, FaultIs503WithRetryAfterAndTheSameKeySucceedsLater) {
  if (engine_.name != "postgres") GTEST_SKIP() << "kills PostgreSQL backends";
  std::string admin_url = engine_.database_url;
  std::string database = "ledger_http_fault_" + prefix_.substr(1, 10);
  std::string base = admin_url.substr(0, admin_url.rfind('/') + 1);
  auto psql = [](const std::string& url, const std::string& sql) {
    return std::system(("psql -q -v ON_ERROR_STOP=1 '" + url + "' -c \"" + sql + "\" >/dev/null").c_str());
  };
  ASSERT_EQ(psql(admin_url, "CREATE DATABASE " + database), 0);
  database_url_ = base + database;
  StartServer({"--threads", "2"});
  OpenAccounts();
  ASSERT_EQ(Submit(Name("warm"), TopUp(Name("alice"), 1))->status, 201);
  // No new session may open either, so the pool cannot replace the killed ones: the
  // next submit meets the fault whichever connection it takes.
  ASSERT_EQ(psql(admin_url, "ALTER DATABASE " + database + " ALLOW_CONNECTIONS false"), 0);
  ASSERT_EQ(psql(admin_url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" +
                                database + "'"),
            0);
  httplib::Result faulted = Submit(Name("after-kill"), TopUp(Name("alice"), 5));
  ASSERT_EQ(psql(admin_url, "ALTER DATABASE " + database + " ALLOW_CONNECTIONS true"), 0);
  EXPECT_TRUE(IsProblem(faulted, 503, "faulted"));
  EXPECT_EQ(faulted->get_header_value("Retry-After"), "1");
  EXPECT_EQ(BodyJson(faulted)["in_doubt"], false);
  int status = 0;
  std::string body;
  bool replayed = true;
  for (int attempt = 0; attempt < 10 && status != 201; ++attempt) {  // until the pool reconnects
    httplib::Result resent = Submit(Name("after-kill"), TopUp(Name("alice"), 5));
    if (!resent) continue;
    status = resent->status;
    body = resent->body;
    replayed = resent->has_header("Idempotent-Replayed");
  }
  EXPECT_EQ(status, 201) << body;
  EXPECT_FALSE(replayed);  // the fault wrote nothing: this is the first commit
  EXPECT_EQ(Balance(Name("alice")), "6");
  client_.reset();
  server_.reset();
  EXPECT_EQ(psql(admin_url, "DROP DATABASE " + database + " WITH (FORCE)"), 0);
}

}  // namespace
}  // namespace ledger::testing
