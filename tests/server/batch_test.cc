// POST /v1/operations/batch and group commit, over a real socket, per engine.
#include <sqlite3.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>
#include <vector>

#include "tests/server/server_fixture.h"

namespace ledger::testing {
namespace {

constexpr char kBatchPath[] = "/v1/operations/batch";

nlohmann::json Item(const std::string& key, const nlohmann::json& operation) {
  return {{"idempotency_key", key}, {"operation", operation}};
}

nlohmann::json Batch(const std::vector<nlohmann::json>& items, bool atomic = false) {
  return {{"items", items}, {"atomic", atomic}};
}

// The results of a 200 batch answer (empty, with a test failure, otherwise).
nlohmann::json Results(const httplib::Result& result) {
  if (!result) {
    ADD_FAILURE() << "no response: " << httplib::to_string(result.error());
    return nlohmann::json::array();
  }
  EXPECT_EQ(result->status, 200) << result->body;
  EXPECT_EQ(result->get_header_value("Content-Type"), "application/json");
  nlohmann::json body = BodyJson(result);
  return body.is_object() && body.contains("results") ? body["results"] : nlohmann::json::array();
}

// True when a batch result is the problem the single route would send: status, reason
// and the RFC 9457 members, no replay.
::testing::AssertionResult IsItemProblem(const nlohmann::json& result, int status,
                                         const std::string& reason) {
  const nlohmann::json& body = result["body"];
  for (const char* member : {"type", "title", "status", "detail", "reason"}) {
    if (!body.contains(member)) return ::testing::AssertionFailure() << "no " << member << ": " << result;
  }
  if (result["status"] != status || body["status"] != status || body["reason"] != reason ||
      body["type"] != "urn:ledger:problem:" + reason || result["replayed"] != false) {
    return ::testing::AssertionFailure() << "want " << status << " " << reason << ": " << result;
  }
  return ::testing::AssertionSuccess();
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

nlohmann::json Transfer(const std::string& from, const std::string& to, int64_t amount) {
  return {{"kind", "transfer"}, {"asset", "USD"}, {"from", from}, {"to", to},
          {"amount", std::to_string(amount)}};
}

// One batch holding every per-item outcome: each result is what POST /v1/operations
// would have answered for that item alone, in item order.
TEST_P(ServerTest, BatchAnswersEachItemAsTheSingleRouteWould) {
  StartServer();
  OpenAccounts();
  httplib::Result single = Submit(Name("single"), TopUp(Name("alice"), 5));
  ASSERT_EQ(single->status, 201);
  ASSERT_EQ(Submit(Name("used"), TopUp(Name("alice"), 1))->status, 201);
  nlohmann::json unknown_member = TopUp(Name("alice"), 3);
  unknown_member["surprise"] = 1;
  httplib::Result batch = Post(kBatchPath, Batch({
      Item(Name("new"), TopUp(Name("alice"), 10)),                      // 201
      Item(Name("over"), Transfer(Name("alice"), Name("issuance"), 1000)),  // 402
      Item(Name("used"), TopUp(Name("alice"), 2)),                      // 422: another payload
      Item(Name("bad-operation"), unknown_member),                      // 400
      Item("two words", TopUp(Name("alice"), 4)),                       // 400: not a key
      Item(Name("single"), TopUp(Name("alice"), 5)),                    // 201 replayed
  }).dump());
  nlohmann::json results = Results(batch);
  ASSERT_EQ(results.size(), 6u) << batch->body;

  EXPECT_EQ(results[0]["status"], 201);
  EXPECT_EQ(results[0]["replayed"], false);
  EXPECT_EQ(results[0]["headers"]["Location"], "/v1/transactions/" + results[0]["body"]["id"].get<std::string>());
  EXPECT_FALSE(results[0]["headers"].contains("Idempotent-Replayed"));
  EXPECT_TRUE(IsItemProblem(results[1], 402, "insufficient_funds"));
  EXPECT_TRUE(IsItemProblem(results[2], 422, "idempotency_key_reused"));
  EXPECT_TRUE(IsItemProblem(results[3], 400, "invalid_operation"));
  EXPECT_TRUE(IsItemProblem(results[4], 400, "idempotency_key_invalid"));
  EXPECT_EQ(results[5]["status"], 201);
  EXPECT_EQ(results[5]["replayed"], true);
  EXPECT_EQ(results[5]["headers"]["Idempotent-Replayed"], "true");
  // The replay carries the single POST's first answer byte for byte.
  EXPECT_TRUE(Contains(batch->body, "\"body\":" + single->body)) << batch->body;
  EXPECT_EQ(Balance(Name("alice")), "16");  // 5 + 1 + 10

  // The rejected item's key stays unused: it commits once the money is there.
  httplib::Result again = Post(kBatchPath, Batch({
      Item(Name("fund"), TopUp(Name("alice"), 2000)),
      Item(Name("over"), Transfer(Name("alice"), Name("issuance"), 1000)),
      Item(Name("new"), TopUp(Name("alice"), 10)),
  }).dump());
  nlohmann::json later = Results(again);
  ASSERT_EQ(later.size(), 3u);
  EXPECT_EQ(later[1]["status"], 201);
  EXPECT_EQ(later[1]["replayed"], false);
  EXPECT_EQ(later[2]["replayed"], true);  // a batch item replays a batch item, byte for byte
  EXPECT_EQ(later[2]["body"], results[0]["body"]);
  EXPECT_EQ(Balance(Name("alice")), "1016");
}

// Batch items and single POSTs share one key space per tenant ("operations"), and both
// key forms are one key: each replays the other, byte for byte.
TEST_P(ServerTest, ABatchItemKeyAndASinglePostKeyAreTheSameKey) {
  StartServer();
  OpenAccounts();
  nlohmann::json from_batch = TopUp(Name("alice"), 7);
  httplib::Result batch = Post(kBatchPath, Batch({Item(Name("from-batch"), from_batch)}).dump());
  ASSERT_EQ(Results(batch).size(), 1u);
  httplib::Result replay = Submit(Name("from-batch"), from_batch);  // the quoted form
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->status, 201);
  EXPECT_EQ(replay->get_header_value("Idempotent-Replayed"), "true");
  EXPECT_TRUE(Contains(batch->body, "\"body\":" + replay->body)) << batch->body << "\n" << replay->body;

  nlohmann::json from_single = TopUp(Name("alice"), 8);
  httplib::Result single = Post("/v1/operations", from_single.dump(), {{"Idempotency-Key", Name("from-single")}});
  ASSERT_EQ(single->status, 201);
  httplib::Result replays = Post(kBatchPath, Batch({
      Item("\"" + Name("from-single") + "\"", from_single),
      Item(Name("from-single"), TopUp(Name("alice"), 9)),
      Item(Name("from-single"), Transfer(Name("alice"), Name("issuance"), 8)),  // another kind
  }).dump());
  nlohmann::json results = Results(replays);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0]["status"], 201);
  EXPECT_EQ(results[0]["replayed"], true);
  EXPECT_TRUE(Contains(replays->body, "\"body\":" + single->body)) << replays->body;
  EXPECT_TRUE(IsItemProblem(results[1], 422, "idempotency_key_reused"));
  EXPECT_TRUE(IsItemProblem(results[2], 422, "idempotency_key_reused"));
  EXPECT_EQ(Balance(Name("alice")), "15");
}

// atomic: one item not committed, so none is; every other item says which one failed.
TEST_P(ServerTest, AtomicBatchWithAFailingItemWritesNothing) {
  StartServer();
  OpenAccounts();
  int64_t events_before = LastEventSequence();
  std::vector<nlohmann::json> items = {Item(Name("a"), TopUp(Name("alice"), 10)),
                                       Item(Name("b"), Transfer(Name("alice"), Name("issuance"), 500)),
                                       Item(Name("c"), TopUp(Name("alice"), 20))};
  nlohmann::json declined = Results(Post(kBatchPath, Batch(items, /*atomic=*/true).dump()));
  ASSERT_EQ(declined.size(), 3u);
  EXPECT_TRUE(IsItemProblem(declined[0], 402, "batch_item_failed"));
  EXPECT_TRUE(IsItemProblem(declined[1], 402, "insufficient_funds"));
  EXPECT_TRUE(IsItemProblem(declined[2], 402, "batch_item_failed"));
  EXPECT_TRUE(Contains(declined[0]["body"]["detail"].get<std::string>(), "item 1")) << declined[0];

  // An item the server cannot read fails the atomic batch the same way.
  nlohmann::json bad = TopUp(Name("alice"), 1);
  bad["amount"] = "1.5";
  nlohmann::json unread = Results(Post(kBatchPath, Batch({items[0], Item(Name("d"), bad)}, true).dump()));
  ASSERT_EQ(unread.size(), 2u);
  EXPECT_TRUE(IsItemProblem(unread[0], 402, "batch_item_failed"));
  EXPECT_TRUE(Contains(unread[0]["body"]["detail"].get<std::string>(), "item 1")) << unread[0];
  EXPECT_TRUE(IsItemProblem(unread[1], 400, "invalid_operation"));
  EXPECT_EQ(Balance(Name("alice")), "0");
  EXPECT_EQ(LastEventSequence(), events_before);

  // Nothing was written, so the same keys are first commits when each item stands alone.
  nlohmann::json alone = Results(Post(kBatchPath, Batch(items, false).dump()));
  ASSERT_EQ(alone.size(), 3u);
  EXPECT_EQ(alone[0]["status"], 201);
  EXPECT_EQ(alone[0]["replayed"], false);
  EXPECT_TRUE(IsItemProblem(alone[1], 402, "insufficient_funds"));
  EXPECT_EQ(alone[2]["status"], 201);
  EXPECT_EQ(alone[2]["replayed"], false);
  EXPECT_EQ(Balance(Name("alice")), "30");

  // A replay does not fail an atomic batch, but another item's failure fails it: the
  // replayed item is batch_item_failed too, and its key stays committed.
  nlohmann::json with_replay = Results(Post(kBatchPath, Batch({items[0], items[1]}, true).dump()));
  ASSERT_EQ(with_replay.size(), 2u);
  EXPECT_TRUE(IsItemProblem(with_replay[0], 402, "batch_item_failed"));
  EXPECT_TRUE(IsItemProblem(with_replay[1], 402, "insufficient_funds"));
  httplib::Result replay = Submit(Name("a"), TopUp(Name("alice"), 10));
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->get_header_value("Idempotent-Replayed"), "true");
  EXPECT_EQ(BodyJson(replay), alone[0]["body"]);

  // All good and atomic: all commit.
  nlohmann::json together = Results(Post(kBatchPath, Batch({Item(Name("e"), TopUp(Name("alice"), 1)),
                                                            Item(Name("f"), TopUp(Name("alice"), 2))},
                                                           true).dump()));
  ASSERT_EQ(together.size(), 2u);
  EXPECT_EQ(together[0]["status"], 201);
  EXPECT_EQ(together[1]["status"], 201);
  EXPECT_EQ(Balance(Name("alice")), "33");
}

// SQLite serializes writers: with the write lock held from outside, every item's key is
// busy, so with Prefer: wait=0 each item is 409 + Retry-After, and nothing is written.
TEST_P(ServerTest, BatchItemsWhoseKeysAreBusyAre409) {
  if (!IsSqlite()) GTEST_SKIP() << "holding the claim from outside needs SQLite's writer lock";
  StartServer();
  OpenAccounts();
  std::string batch = Batch({Item(Name("x"), TopUp(Name("alice"), 1)), Item(Name("y"), TopUp(Name("alice"), 2))}).dump();
  sqlite3* database = nullptr;
  ASSERT_EQ(sqlite3_open(database_url_.substr(7).c_str(), &database), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(database, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  httplib::Result busy = Post(kBatchPath, batch, {{"Prefer", "wait=0"}});
  sqlite3_exec(database, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(database);
  nlohmann::json results = Results(busy);
  ASSERT_EQ(results.size(), 2u);
  for (const nlohmann::json& result : results) {
    EXPECT_TRUE(IsItemProblem(result, 409, "idempotency_key_in_progress"));
    EXPECT_EQ(result["headers"]["Retry-After"], "1");
  }
  EXPECT_EQ(Balance(Name("alice")), "0");
  nlohmann::json retried = Results(Post(kBatchPath, batch));
  ASSERT_EQ(retried.size(), 2u);
  EXPECT_EQ(retried[0]["status"], 201);
  EXPECT_EQ(retried[1]["status"], 201);
  EXPECT_EQ(Balance(Name("alice")), "3");
}

// Whole-request errors: problem+json, nothing written.
TEST_P(ServerTest, BadBatchesAre400Or413Or415AndWriteNothing) {
  StartServer();
  OpenAccounts();
  int64_t events_before = LastEventSequence();
  nlohmann::json good = Item(Name("g"), TopUp(Name("alice"), 1));
  EXPECT_TRUE(IsProblem(Post(kBatchPath, "{\"items\":["), 400, "invalid_batch"));
  EXPECT_TRUE(IsProblem(Post(kBatchPath, R"({"items":[]})"), 400, "invalid_batch"));
  nlohmann::json extra = Batch({good});
  extra["note"] = "x";
  EXPECT_TRUE(IsProblem(Post(kBatchPath, extra.dump()), 400, "invalid_batch"));
  nlohmann::json no_key = {{"items", {{{"operation", TopUp(Name("alice"), 1)}}}}};
  EXPECT_TRUE(IsProblem(Post(kBatchPath, no_key.dump()), 400, "invalid_batch"));
  // One bad envelope item fails the batch, good items included.
  nlohmann::json unknown_item_member = Item(Name("h"), TopUp(Name("alice"), 1));
  unknown_item_member["priority"] = 1;
  EXPECT_TRUE(IsProblem(Post(kBatchPath, Batch({good, unknown_item_member}).dump()), 400, "invalid_batch"));
  httplib::Result text = client_->Post(kBatchPath, Batch({good}).dump(), "text/plain");
  EXPECT_TRUE(IsProblem(text, 415, "unsupported_media_type"));
  EXPECT_TRUE(IsProblem(Post(kBatchPath, std::string(1100000, ' ')), 413, "payload_too_large"));

  // Limits: kBatchItemsMax (8190) items, kBatchEntriesMax (65536) entries, a reverse
  // counting 64.
  auto reverses = [this](size_t count) {
    std::vector<nlohmann::json> items;
    for (size_t i = 0; i < count; ++i) {
      items.push_back(Item(Name("r" + std::to_string(i)),
                           {{"kind", "reverse"}, {"transaction_id", "none"}}));
    }
    return Batch(items).dump();
  };
  EXPECT_TRUE(IsProblem(Post(kBatchPath, reverses(8191)), 400, "batch_too_large"));
  EXPECT_TRUE(IsProblem(Post(kBatchPath, reverses(1025)), 400, "batch_too_large"));
  nlohmann::json at_limit = Results(Post(kBatchPath, reverses(1024)));  // 65536 entries: allowed
  ASSERT_EQ(at_limit.size(), 1024u);
  EXPECT_TRUE(IsItemProblem(at_limit[1023], 402, "transaction_not_found"));
  EXPECT_EQ(Balance(Name("alice")), "0");
  EXPECT_EQ(LastEventSequence(), events_before);
}

TEST_P(ServerTest, MetricsCountEachBatchItemAndTheBatchSizes) {
  StartServer();
  OpenAccounts();
  Post(kBatchPath, Batch({Item(Name("m1"), TopUp(Name("alice"), 1)), Item(Name("m2"), TopUp(Name("alice"), 2)),
                          Item(Name("m3"), Transfer(Name("alice"), Name("issuance"), 100))}).dump());
  Post(kBatchPath, Batch({Item(Name("m1"), TopUp(Name("alice"), 1))}).dump());
  Post(kBatchPath, R"({"items":[]})");  // refused: no SubmitBatch call, no item
  std::string metrics = Get("/metrics")->body;
  for (const char* line : {"ledger_submits_total{outcome=\"committed\"} 2",
                           "ledger_submits_total{outcome=\"rejected\"} 1",
                           "ledger_submits_total{outcome=\"duplicate\"} 1",
                           "ledger_batch_items_bucket{le=\"1\"} 1", "ledger_batch_items_bucket{le=\"2\"} 1",
                           "ledger_batch_items_bucket{le=\"4\"} 2", "ledger_batch_items_bucket{le=\"+Inf\"} 2",
                           "ledger_batch_items_sum 4", "ledger_batch_items_count 2",
                           "ledger_http_requests_total{method=\"POST\",route=\"/v1/operations/batch\",status=\"200\"} 2",
                           "ledger_http_requests_total{method=\"POST\",route=\"/v1/operations/batch\",status=\"400\"} 1"}) {
    EXPECT_TRUE(Contains(metrics, std::string(line) + "\n")) << line << "\n" << metrics;
  }
}

// `ledger serve` opens the ledger with group commit unless told not to.
TEST_P(ServerTest, GroupCommitIsOnByDefaultAndCanBeTurnedOff) {
  StartServer();
  EXPECT_TRUE(Contains(server_->Log(), "\"group_commit\":true,\"group_commit_max\":256")) << server_->Log();
  EXPECT_TRUE(Contains(Get("/metrics")->body, "ledger_group_commit_enabled 1\n"));
  for (const std::vector<std::string>& off : {std::vector<std::string>{"--group-commit=false"},
                                              std::vector<std::string>{"--no-group-commit"}}) {
    StartServer(off);
    EXPECT_TRUE(Contains(server_->Log(), "\"group_commit\":false")) << off[0] << server_->Log();
    EXPECT_TRUE(Contains(Get("/metrics")->body, "ledger_group_commit_enabled 0\n")) << off[0];
  }
  StartServer({"--group-commit-max", "8"});
  EXPECT_TRUE(Contains(server_->Log(), "\"group_commit\":true,\"group_commit_max\":8")) << server_->Log();
  EXPECT_TRUE(Contains(Get("/metrics")->body, "ledger_group_commit_batch_items_max 8\n"));
  server_.reset();
  EXPECT_NE(RunLedgerToExit({"serve", "--db", database_url_, "--listen", "127.0.0.1:0", "--group-commit-max", "0"},
                            folder_ / "refused.log"),
            0);
  std::ifstream log(folder_ / "refused.log");
  std::string refused((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(Contains(refused, "--group-commit-max")) << refused;
}

// Group commit on (the default): 32 clients at once, each its own key, all commit, each
// once, and the ledger's audit holds.
TEST_P(ServerTest, ThirtyTwoConcurrentSubmitsWithGroupCommitAllCommit) {
  StartServer();
  OpenAccounts();
  constexpr int kClients = 32;
  std::vector<int> statuses(kClients, 0);
  std::vector<std::string> ids(kClients);
  std::vector<int> replayed(kClients, 1);  // not vector<bool>: threads write it
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      std::unique_ptr<httplib::Client> client = server_->Client();
      ready.fetch_add(1);
      while (ready.load() < kClients) std::this_thread::yield();
      httplib::Result result = client->Post(
          "/v1/operations", {{"Idempotency-Key", Name("c" + std::to_string(i))}},
          TopUp(Name("alice"), i + 1).dump(), "application/json");
      if (!result) return;
      statuses[i] = result->status;
      replayed[i] = result->has_header("Idempotent-Replayed");
      if (result->status == 201) ids[i] = BodyJson(result)["id"];
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kClients; ++i) {
    EXPECT_EQ(statuses[i], 201) << i;
    EXPECT_EQ(replayed[i], 0) << i;
  }
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), static_cast<size_t>(kClients));
  EXPECT_EQ(Balance(Name("alice")), std::to_string(kClients * (kClients + 1) / 2));
  EXPECT_EQ(RunLedgerToExit({"verify", "--db", database_url_}, folder_ / "verify.log"), 0);
}

}  // namespace
}  // namespace ledger::testing
