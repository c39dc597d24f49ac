// Holds over HTTP (issue 13 on the wire of issue 14), per engine, against the real
// `ledger serve` process: hold, capture and void through POST /v1/operations with their
// replays, each hold rejection as its own 402 problem, the hold routes, the account's
// pending and available amounts, and the server's sweeper recording a lapsed hold's expiry.
#include <signal.h>

#include <cstring>
#include <fstream>
#include <set>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/server/server_fixture.h"

namespace ledger::testing {
namespace {

// Polling bounds for what the sweeper does on its own (it runs every second in the test).
constexpr absl::Duration kSweepWaitMax = absl::Seconds(20);
constexpr absl::Duration kPollInterval = absl::Milliseconds(100);

class HoldsTest : public ServerTest {
 protected:
  // Opens Name("bob") beside OpenAccounts's issuance and alice, and tops alice up by 500.
  void OpenFundedAccounts() {
    OpenAccounts();
    nlohmann::json bob = {{"id", Name("bob")}, {"asset", "USD"}};
    ASSERT_EQ(Post("/v1/accounts", bob.dump())->status, 201);
    ASSERT_EQ(Submit(Name("fund"), TopUp(Name("alice"), 500))->status, 201);
  }
  nlohmann::json HoldOperation(int64_t amount) const {
    return {{"kind", "hold"}, {"asset", "USD"}, {"from", Name("alice")}, {"to", Name("bob")},
            {"amount", std::to_string(amount)}};
  }
  static nlohmann::json Capture(const std::string& hold_id) {
    return {{"kind", "capture"}, {"hold_id", hold_id}};
  }
  static nlohmann::json Void(const std::string& hold_id) { return {{"kind", "void"}, {"hold_id", hold_id}}; }
  // Places a hold of `amount` from alice to bob under `key`; returns its id.
  std::string PlaceHold(const std::string& key, const nlohmann::json& operation) {
    httplib::Result held = Submit(key, operation);
    if (!held || held->status != 201) {
      ADD_FAILURE() << "hold: " << (held ? held->body : httplib::to_string(held.error()));
      return "";
    }
    return BodyJson(held)["id"];
  }
  nlohmann::json GetJson(const std::string& path) {
    httplib::Result result = Get(path);
    if (!result || result->status != 200) {
      ADD_FAILURE() << path << ": " << (result ? result->body : httplib::to_string(result.error()));
      return nullptr;
    }
    return BodyJson(result);
  }
  nlohmann::json Account(const std::string& id) { return GetJson("/v1/accounts/" + id); }
  nlohmann::json Hold(const std::string& id) { return GetJson("/v1/holds/" + id); }
};

TEST_P(HoldsTest, HoldThenCaptureCommitAndReplayByteIdentical) {
  StartServer();
  OpenFundedAccounts();
  httplib::Result held = Submit(Name("payout-1:hold"), HoldOperation(300));
  ASSERT_TRUE(held);
  ASSERT_EQ(held->status, 201) << held->body;
  nlohmann::json hold_transaction = BodyJson(held);
  EXPECT_EQ(hold_transaction["kind"], "hold");
  EXPECT_TRUE(hold_transaction["entries"].empty());  // nothing posted yet
  EXPECT_EQ(hold_transaction["hold"]["amount"], "300");
  std::string hold_id = hold_transaction["id"];

  nlohmann::json alice = Account(Name("alice"));
  EXPECT_EQ(alice["balance"], "500");
  EXPECT_EQ(alice["pending_debits"], "300");
  EXPECT_EQ(alice["pending_credits"], "0");
  EXPECT_EQ(alice["available"], "200");
  EXPECT_EQ(Account(Name("bob"))["pending_credits"], "300");
  nlohmann::json balance = GetJson("/v1/accounts/" + Name("alice") + "/balance");
  EXPECT_EQ(balance["available"], "200");
  EXPECT_EQ(balance["pending_debits"], "300");
  nlohmann::json hold = Hold(hold_id);
  EXPECT_EQ(hold["status"], "pending");
  EXPECT_EQ(hold["settled_by"], nullptr);
  EXPECT_EQ(hold["from"], Name("alice"));
  EXPECT_EQ(hold["amount"], "300");

  nlohmann::json capture = Capture(hold_id);
  capture["amount"] = "120";
  httplib::Result captured = Submit(Name("payout-1:capture"), capture);
  ASSERT_TRUE(captured);
  ASSERT_EQ(captured->status, 201) << captured->body;
  EXPECT_EQ(BodyJson(captured)["kind"], "capture");
  EXPECT_EQ(BodyJson(captured)["hold_id"], hold_id);
  httplib::Result replay = Submit(Name("payout-1:capture"), capture);
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->status, 201);
  EXPECT_EQ(replay->get_header_value("Idempotent-Replayed"), "true");
  EXPECT_EQ(replay->body, captured->body);  // byte for byte: never a second posting
  httplib::Result hold_replay = Submit(Name("payout-1:hold"), HoldOperation(300));
  ASSERT_TRUE(hold_replay);
  EXPECT_EQ(hold_replay->body, held->body);
  EXPECT_EQ(hold_replay->get_header_value("Idempotent-Replayed"), "true");

  alice = Account(Name("alice"));
  EXPECT_EQ(alice["balance"], "380");
  EXPECT_EQ(alice["pending_debits"], "0");  // the remainder (180) is released
  EXPECT_EQ(alice["available"], "380");
  nlohmann::json bob = Account(Name("bob"));
  EXPECT_EQ(bob["balance"], "120");
  EXPECT_EQ(bob["pending_credits"], "0");
  hold = Hold(hold_id);
  EXPECT_EQ(hold["status"], "captured");
  EXPECT_EQ(hold["settled_by"], BodyJson(captured)["id"]);
  EXPECT_EQ(Get("/v1/transactions/" + BodyJson(captured)["id"].get<std::string>())->body, captured->body);
}

TEST_P(HoldsTest, VoidReleasesTheHoldAndItsReplayIsByteIdentical) {
  StartServer();
  OpenFundedAccounts();
  std::string hold_id = PlaceHold(Name("payout-2:hold"), HoldOperation(200));
  ASSERT_FALSE(hold_id.empty());
  httplib::Result voided = Submit(Name("payout-2:void"), Void(hold_id));
  ASSERT_TRUE(voided);
  ASSERT_EQ(voided->status, 201) << voided->body;
  EXPECT_EQ(BodyJson(voided)["kind"], "void");
  EXPECT_TRUE(BodyJson(voided)["entries"].empty());
  httplib::Result replay = Submit(Name("payout-2:void"), Void(hold_id));
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->status, 201);
  EXPECT_EQ(replay->get_header_value("Idempotent-Replayed"), "true");
  EXPECT_EQ(replay->body, voided->body);
  nlohmann::json alice = Account(Name("alice"));
  EXPECT_EQ(alice["balance"], "500");
  EXPECT_EQ(alice["pending_debits"], "0");
  EXPECT_EQ(alice["available"], "500");
  EXPECT_EQ(Account(Name("bob"))["balance"], "0");
  nlohmann::json hold = Hold(hold_id);
  EXPECT_EQ(hold["status"], "voided");
  EXPECT_EQ(hold["settled_by"], BodyJson(voided)["id"]);
}

TEST_P(HoldsTest, EachHoldRejectionIs402WithItsOwnProblemTypeAndTheKeyStaysUnused) {
  StartServer();
  OpenFundedAccounts();
  // The pending debit counts at once: a second hold beyond what is left is declined.
  std::string first = PlaceHold(Name("h1"), HoldOperation(400));
  ASSERT_FALSE(first.empty());
  EXPECT_TRUE(IsProblem(Submit(Name("h2"), HoldOperation(101)), 402, "insufficient_funds"));
  nlohmann::json transfer = {{"kind", "transfer"}, {"asset", "USD"}, {"from", Name("alice")},
                             {"to", Name("bob")}, {"amount", "101"}};
  EXPECT_TRUE(IsProblem(Submit(Name("t1"), transfer), 402, "insufficient_funds"));

  EXPECT_TRUE(IsProblem(Submit(Name("c0"), Capture("no-such-hold")), 402, "hold_not_found"));
  EXPECT_TRUE(IsProblem(Submit(Name("v0"), Void("no-such-hold")), 402, "hold_not_found"));
  nlohmann::json too_much = Capture(first);
  too_much["amount"] = "401";
  httplib::Result exceeds = Submit(Name("c1"), too_much);
  EXPECT_TRUE(IsProblem(exceeds, 402, "capture_exceeds_hold"));
  EXPECT_NE(BodyJson(exceeds)["detail"].get<std::string>().find("the key stays unused"), std::string::npos);
  // The key stayed unused: the same key now captures.
  ASSERT_EQ(Submit(Name("c1"), Capture(first))->status, 201);
  EXPECT_TRUE(IsProblem(Submit(Name("c2"), Capture(first)), 402, "hold_captured"));
  EXPECT_TRUE(IsProblem(Submit(Name("v1"), Void(first)), 402, "hold_captured"));

  std::string second = PlaceHold(Name("h3"), HoldOperation(50));
  ASSERT_FALSE(second.empty());
  ASSERT_EQ(Submit(Name("v2"), Void(second))->status, 201);
  EXPECT_TRUE(IsProblem(Submit(Name("c3"), Capture(second)), 402, "hold_voided"));
  EXPECT_TRUE(IsProblem(Submit(Name("v3"), Void(second)), 402, "hold_voided"));

  // The batch route answers each item the same way.
  nlohmann::json batch = {{"items", {{{"idempotency_key", Name("b1")}, {"operation", Capture(second)}},
                                     {{"idempotency_key", Name("b2")}, {"operation", Capture("nope")}}}}};
  nlohmann::json results = BodyJson(Post("/v1/operations/batch", batch.dump()))["results"];
  ASSERT_EQ(results.size(), 2u) << results;
  EXPECT_EQ(results[0]["status"], 402);
  EXPECT_EQ(results[0]["body"]["type"], "urn:ledger:problem:hold_voided");
  EXPECT_EQ(results[1]["body"]["type"], "urn:ledger:problem:hold_not_found");

  nlohmann::json alice = Account(Name("alice"));
  EXPECT_EQ(alice["balance"], "100");  // only the capture of 400 posted
  EXPECT_EQ(alice["pending_debits"], "0");
}

TEST_P(HoldsTest, ACaptureAfterTheHoldLapsedIsHoldExpired) {
  StartServer({"--hold-sweep-interval", "0"});  // expiry here is the lazy one, on read
  OpenFundedAccounts();
  nlohmann::json operation = HoldOperation(100);
  operation["timeout_seconds"] = 1;
  std::string hold_id = PlaceHold(Name("h"), operation);
  ASSERT_FALSE(hold_id.empty());
  EXPECT_EQ(Account(Name("alice"))["available"], "400");
  absl::Time deadline = absl::Now() + kSweepWaitMax;
  while (Hold(hold_id)["status"] != "expired" && absl::Now() < deadline) absl::SleepFor(kPollInterval);
  nlohmann::json hold = Hold(hold_id);
  ASSERT_EQ(hold["status"], "expired");
  EXPECT_EQ(hold["settled_by"], nullptr);  // no sweeper: released, not yet recorded
  EXPECT_EQ(Account(Name("alice"))["available"], "500");
  EXPECT_TRUE(IsProblem(Submit(Name("c"), Capture(hold_id)), 402, "hold_expired"));
  EXPECT_TRUE(IsProblem(Submit(Name("v"), Void(hold_id)), 402, "hold_expired"));
  EXPECT_EQ(Account(Name("alice"))["balance"], "500");
}

TEST_P(HoldsTest, TheSweeperRecordsALapsedHoldsExpiryAndRestoresTheAvailableBalance) {
  StartServer({"--hold-sweep-interval", "1"});
  OpenFundedAccounts();
  nlohmann::json operation = HoldOperation(350);
  operation["timeout_seconds"] = 1;
  std::string hold_id = PlaceHold(Name("h"), operation);
  ASSERT_FALSE(hold_id.empty());
  EXPECT_EQ(Account(Name("alice"))["available"], "150");
  // Only the sweeper settles it: settled_by names its expire transaction.
  absl::Time deadline = absl::Now() + kSweepWaitMax;
  while (Hold(hold_id)["settled_by"].is_null() && absl::Now() < deadline) absl::SleepFor(kPollInterval);
  nlohmann::json hold = Hold(hold_id);
  EXPECT_EQ(hold["status"], "expired");
  ASSERT_TRUE(hold["settled_by"].is_string()) << hold;
  nlohmann::json expire = GetJson("/v1/transactions/" + hold["settled_by"].get<std::string>());
  EXPECT_EQ(expire["kind"], "expire");
  EXPECT_EQ(expire["hold_id"], hold_id);
  EXPECT_TRUE(expire["entries"].empty());
  nlohmann::json alice = Account(Name("alice"));
  EXPECT_EQ(alice["balance"], "500");
  EXPECT_EQ(alice["pending_debits"], "0");
  EXPECT_EQ(alice["available"], "500");
  EXPECT_EQ(Account(Name("bob"))["pending_credits"], "0");
  // The full amount is spendable again.
  nlohmann::json transfer = {{"kind", "transfer"}, {"asset", "USD"}, {"from", Name("alice")},
                             {"to", Name("bob")}, {"amount", "500"}};
  EXPECT_EQ(Submit(Name("after"), transfer)->status, 201);
  // Its event is in the outbox like any other transaction's.
  nlohmann::json events;
  bool found = false;
  for (int64_t after = 0; !found;) {
    events = GetJson("/v1/events?limit=1000&after=" + std::to_string(after));
    if (events.is_null() || events["events"].empty()) break;
    for (const nlohmann::json& event : events["events"]) found |= event["transaction_id"] == expire["id"];
    after = events["next_after"].get<int64_t>();
  }
  EXPECT_TRUE(found);
  std::string metrics = Get("/metrics")->body;
  // At least this hold (a server database may hold other tests' lapsed holds too).
  size_t expired_total = metrics.find("\nledger_holds_expired_total ");
  ASSERT_NE(expired_total, std::string::npos) << metrics;
  EXPECT_GE(std::stoll(metrics.substr(expired_total + std::strlen("\nledger_holds_expired_total "))), 1)
      << metrics;
  EXPECT_NE(metrics.find("ledger_hold_sweep_interval_seconds 1\n"), std::string::npos) << metrics;
  std::string log = server_->Log();
  EXPECT_NE(log.find("\"event\":\"holds_expired\",\"expired\":"), std::string::npos) << log;
  EXPECT_NE(log.find("\"hold_sweep_interval_seconds\":1"), std::string::npos) << log;
}

// SIGTERM wakes the sweeper out of its wait: with an hour between sweeps, a shutdown that
// waited the interval out would blow the bound below (set far above a normal stop).
TEST_P(HoldsTest, SigtermStopsTheSweeperWithoutWaitingOutItsInterval) {
  StartServer({"--hold-sweep-interval", "3600"});
  OpenFundedAccounts();
  absl::Time signalled = absl::Now();
  EXPECT_EQ(server_->SignalAndWait(SIGTERM), 0);
  EXPECT_LT(absl::Now() - signalled, absl::Seconds(20));
  EXPECT_NE(server_->Log().find("\"event\":\"stopped\""), std::string::npos) << server_->Log();
  for (const char* bad : {"-1", "soon"}) {
    EXPECT_NE(RunLedgerToExit({"serve", "--db", database_url_, "--listen", "127.0.0.1:0",
                               "--hold-sweep-interval", bad}, folder_ / "refused.log"), 0) << bad;
  }
}

TEST_P(HoldsTest, AccountHoldsPageByIdAndUnknownHoldsAndAccountsAre404) {
  StartServer();
  OpenFundedAccounts();
  std::set<std::string> placed;
  for (int i = 0; i < 3; ++i) placed.insert(PlaceHold(Name("h" + std::to_string(i)), HoldOperation(10)));
  std::set<std::string> listed;
  std::string after;
  for (int page = 0; page < 3; ++page) {
    nlohmann::json body = GetJson("/v1/accounts/" + Name("bob") + "/holds?limit=2&after=" + after);
    for (const nlohmann::json& hold : body["holds"]) {
      EXPECT_EQ(hold["to"], Name("bob"));
      EXPECT_TRUE(after.empty() || hold["id"].get<std::string>() > after);  // keyset: strictly after
      listed.insert(hold["id"].get<std::string>());
    }
    if (body["next_after"].is_null()) break;
    after = body["next_after"];
  }
  EXPECT_EQ(listed, placed);
  EXPECT_TRUE(IsProblem(Get("/v1/holds/" + Name("none")), 404, "not_found"));
  EXPECT_TRUE(IsProblem(Get("/v1/accounts/" + Name("none") + "/holds"), 404, "not_found"));
  EXPECT_TRUE(IsProblem(Get("/v1/accounts/" + Name("bob") + "/holds?limit=0"), 400, "invalid_request"));
  EXPECT_TRUE(IsProblem(Post("/v1/holds/x", "{}"), 405, "method_not_allowed"));
  // Bad hold input is 400 and writes nothing.
  nlohmann::json zero = Capture(*placed.begin());
  zero["amount"] = "0";
  EXPECT_EQ(Submit(Name("c0"), zero)->status, 400);
  nlohmann::json expire = {{"kind", "expire"}, {"hold_id", *placed.begin()}};
  EXPECT_TRUE(IsProblem(Submit(Name("e0"), expire), 400, "invalid_operation"));
  nlohmann::json past = HoldOperation(10);
  past["expires_at"] = "2001-01-01T00:00:00Z";
  EXPECT_TRUE(IsProblem(Submit(Name("p0"), past), 400, "invalid_request"));
  EXPECT_EQ(Account(Name("alice"))["pending_debits"], "30");
  EXPECT_EQ(Hold(*placed.begin())["status"], "pending");
}

TEST_P(HoldsTest, HoldRoutesTakeTheReadRole) {
  std::ofstream keys(folder_ / "keys");
  keys << Sha256Hex("admin-secret") << " acme admin\n" << Sha256Hex("reader-secret") << " acme read\n";
  keys.close();
  StartServer({"--api-keys-file", (folder_ / "keys").string()});
  httplib::Headers admin = {{"Authorization", "Bearer admin-secret"}};
  httplib::Headers reader = {{"Authorization", "Bearer reader-secret"}};
  ASSERT_EQ(Post("/v1/assets", R"({"code":"USD","scale":2})", admin)->status / 100, 2);
  for (const char* id : {"issuance", "alice", "bob"}) {
    nlohmann::json body = {{"id", Name(id)}, {"asset", "USD"}, {"allow_negative", std::string(id) == "issuance"}};
    ASSERT_EQ(Post("/v1/accounts", body.dump(), admin)->status, 201);
  }
  ASSERT_EQ(Submit(Name("fund"), TopUp(Name("alice"), 50), admin)->status, 201);
  EXPECT_TRUE(IsProblem(Submit(Name("h"), HoldOperation(10), reader), 403, "forbidden"));
  httplib::Result held = Submit(Name("h"), HoldOperation(10), admin);
  ASSERT_EQ(held->status, 201);
  std::string hold_path = "/v1/holds/" + BodyJson(held)["id"].get<std::string>();
  EXPECT_EQ(Get(hold_path, reader)->status, 200);
  EXPECT_EQ(Get("/v1/accounts/" + Name("alice") + "/holds", reader)->status, 200);
  EXPECT_TRUE(IsProblem(Get(hold_path), 401, "unauthenticated"));
  EXPECT_TRUE(IsProblem(Get("/v1/accounts/" + Name("alice") + "/holds"), 401, "unauthenticated"));
}

INSTANTIATE_TEST_SUITE_P(Engines, HoldsTest, ::testing::ValuesIn(ServerEngineFactories()),
                         [](const ::testing::TestParamInfo<ServerEngineFactory>& info) {
                           return info.param().name;
                         });

}  // namespace
}  // namespace ledger::testing
