// Holds through the `ledger` tool, end to end: each call is a separate process on one
// database: a SQLite file, and a fresh database on the MySQL / MariaDB and PostgreSQL test
// servers when the build has those engines (tests/cli/fresh_database.h).
// Placing, capturing and voiding go through `submit`; `holds` lists, shows and expires
// them; account views show pending amounts and the available balance.
#include <chrono>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_runner.h"
#include "tests/cli/fresh_database.h"

namespace ledger::testing {
namespace {


// The engine under test is the parameter: "sqlite", "mysql" or "postgres".
class HoldsCliTest : public LedgerCliTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    LedgerCliTest::SetUp();
    RequireFreshDatabaseEngine(GetParam());
    if (HasFatalFailure() || IsSkipped()) return;
    absl::StatusOr<std::string> url = FreshDatabaseUrl(GetParam(), folder_);
    ASSERT_TRUE(url.ok()) << url.status();
    database_url_ = *url;
    fresh_database_made_ = true;
    OpenFundedEconomy();  // alice holds 100.00 USD
  }

  void TearDown() override {
    if (fresh_database_made_) DropFreshDatabase(GetParam());
    LedgerCliTest::TearDown();
  }

  // Places a hold alice -> bob under `key` and returns its id.
  std::string PlaceHold(const std::string& key, const std::string& amount,
                        std::vector<std::string> expiry = {"--timeout-seconds", "3600"},
                        const std::string& from = "alice") {
    std::vector<std::string> arguments = {"submit", "--key",  key,   "--kind", "hold",
                                          "--from", from,     "--to", "bob",   "--asset",
                                          "USD",    "--amount", amount};
    arguments.insert(arguments.end(), expiry.begin(), expiry.end());
    CliResult placed = RunLedger(arguments);
    EXPECT_EQ(placed.exit_code, 0) << placed.out << placed.err;
    return placed.Json()["transaction"].value("id", std::string());
  }

  nlohmann::json Account(const std::string& id) {
    CliResult shown = RunLedger({"account", "show", id});
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    return shown.Json();
  }

  nlohmann::json Hold(const std::string& id) {
    CliResult shown = RunLedger({"holds", "show", id});
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    return shown.Json();
  }

  // `holds list [ACCOUNT] --json ...` parsed, one JSON object per line.
  std::vector<nlohmann::json> ListHolds(std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), {"holds", "list"});
    arguments.push_back("--json");
    CliResult listed = RunLedger(arguments);
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    std::vector<nlohmann::json> holds;
    std::istringstream lines(listed.out);
    for (std::string line; std::getline(lines, line);) holds.push_back(nlohmann::json::parse(line));
    return holds;
  }

  int64_t StoredTransactions() {
    CliResult verify = RunLedger({"verify", "--json"});
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
    return verify.Json().value("transactions", int64_t{-1});
  }

  // Two `ledger` processes at once, each in its own folder (the runner's stdout files).
  std::vector<CliResult> RunTwoAtOnce(const std::vector<std::string>& arguments) {
    std::vector<std::string> with_database = {"--db", database_url_};
    with_database.insert(with_database.end(), arguments.begin(), arguments.end());
    std::vector<std::future<CliResult>> running;
    for (const char* name : {"first", "second"}) {
      std::filesystem::path own_folder = folder_ / name;
      std::filesystem::create_directories(own_folder);
      running.push_back(std::async(std::launch::async, [with_database, own_folder] {
        return RunLedgerProcess(with_database, own_folder);
      }));
    }
    std::vector<CliResult> results;
    for (std::future<CliResult>& result : running) results.push_back(result.get());
    return results;
  }

  bool fresh_database_made_ = false;  // on a server: dropped in TearDown
};

std::string Rfc3339(absl::Time time) {
  return absl::FormatTime(absl::RFC3339_sec, time, absl::UTCTimeZone());
}

TEST_P(HoldsCliTest, AccountViewsShowPendingAmountsAndTheAvailableBalance) {
  PlaceHold("payout-1:hold", "2500");

  nlohmann::json alice = Account("alice");
  EXPECT_EQ(alice["balance"], "10000");
  EXPECT_EQ(alice["pending_debits"], "2500");
  EXPECT_EQ(alice["pending_credits"], "0");
  EXPECT_EQ(alice["available"], "7500");
  nlohmann::json bob = Account("bob");
  EXPECT_EQ(bob["pending_credits"], "2500");
  EXPECT_EQ(bob["available"], "0");  // pending credits are not spendable

  CliResult balance = RunLedger({"balance", "alice", "--json"});
  ASSERT_EQ(balance.exit_code, 0) << balance.err;
  EXPECT_EQ(balance.Json()["available"], "7500");
  EXPECT_EQ(balance.Json()["available_major"], "75.00");
  EXPECT_EQ(balance.Json()["pending_debits"], "2500");
  CliResult balance_text = RunLedger({"balance", "alice"});
  EXPECT_NE(balance_text.out.find("pending debits  25.00"), std::string::npos) << balance_text.out;
  EXPECT_NE(balance_text.out.find("available       75.00 USD"), std::string::npos)
      << balance_text.out;

  CliResult listed = RunLedger({"account", "list", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find(R"("available":"7500")"), std::string::npos) << listed.out;
  CliResult table = RunLedger({"account", "list"});
  EXPECT_NE(table.out.find("pending_debits"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("75.00"), std::string::npos) << table.out;

  // The money reserved is not spendable: a transfer beyond the available balance fails.
  CliResult overspend = RunLedger({"submit", "--key", "too-much", "--kind", "transfer", "--from",
                                   "alice", "--to", "bob", "--asset", "USD", "--amount", "7501"});
  EXPECT_EQ(overspend.exit_code, 3) << overspend.out;
  EXPECT_EQ(overspend.Json()["reason"], "insufficient_funds");
}

TEST_P(HoldsCliTest, PartialCaptureListsAsCapturedAndPostsOnlyTheCapturedAmount) {
  std::string hold_id = PlaceHold("payout-2:hold", "2500");
  std::vector<nlohmann::json> pending = ListHolds({"alice"});
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0]["id"], hold_id);
  EXPECT_EQ(pending[0]["status"], "pending");
  EXPECT_FALSE(pending[0]["expires_at"].is_null());

  CliResult captured = RunLedger({"submit", "--key", "payout-2:capture", "--kind", "capture",
                                  "--hold-id", hold_id, "--amount", "1000"});
  ASSERT_EQ(captured.exit_code, 0) << captured.out << captured.err;
  EXPECT_EQ(captured.Json()["transaction"]["kind"], "capture");
  EXPECT_EQ(captured.Json()["transaction"]["hold_id"], hold_id);
  // The same capture again replays it (exit 0, duplicate, the same transaction).
  CliResult replayed = RunLedger({"submit", "--key", "payout-2:capture", "--kind", "capture",
                                  "--hold-id", hold_id, "--amount", "1000"});
  EXPECT_EQ(replayed.Json()["outcome"], "duplicate");
  EXPECT_EQ(replayed.Json()["transaction"], captured.Json()["transaction"]);

  nlohmann::json hold = Hold(hold_id);
  EXPECT_EQ(hold["status"], "captured");
  EXPECT_EQ(hold["settled_by"], captured.Json()["transaction"]["id"]);
  EXPECT_EQ(Account("alice")["balance"], "9000");
  EXPECT_EQ(Account("alice")["available"], "9000");  // the uncaptured rest is released
  EXPECT_EQ(Account("bob")["balance"], "1000");
  EXPECT_EQ(Account("bob")["pending_credits"], "0");
  CliResult table = RunLedger({"holds", "list", "alice"});
  EXPECT_NE(table.out.find("captured"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("25.00"), std::string::npos) << table.out;
  EXPECT_EQ(RunLedger({"verify"}).exit_code, 0);
}

TEST_P(HoldsCliTest, VoidFromTheJsonFormReleasesTheHoldAndACaptureAfterItIsRejected) {
  CliResult placed = RunLedger(
      {"submit", "--key", "payout-3:hold", "--json",
       R"({"kind":"hold","from":"alice","to":"bob","asset":"USD","amount":"4000",)"
       R"("expires_at":")" + Rfc3339(absl::Now() + absl::Hours(2)) + R"("})"});
  ASSERT_EQ(placed.exit_code, 0) << placed.out << placed.err;
  std::string hold_id = placed.Json()["transaction"]["id"];

  CliResult voided = RunLedger({"submit", "--key", "payout-3:void", "--json",
                                R"({"kind":"void","hold_id":")" + hold_id + R"("})"});
  ASSERT_EQ(voided.exit_code, 0) << voided.out << voided.err;
  EXPECT_EQ(Hold(hold_id)["status"], "voided");
  EXPECT_EQ(Account("alice")["available"], "10000");

  int64_t transactions = StoredTransactions();
  CliResult capture = RunLedger(
      {"submit", "--key", "payout-3:capture", "--kind", "capture", "--hold-id", hold_id});
  EXPECT_EQ(capture.exit_code, 3) << capture.out;
  EXPECT_EQ(capture.Json()["reason"], "hold_voided");
  EXPECT_EQ(StoredTransactions(), transactions);
}

TEST_P(HoldsCliTest, BadHoldInputGetsItsOwnErrorAndWritesNothing) {
  std::string hold_id = PlaceHold("payout-4:hold", "2500");
  int64_t transactions = StoredTransactions();
  struct BadInput {
    std::vector<std::string> arguments;
    int exit_code;
    std::string says;
  };
  std::string past = Rfc3339(absl::Now() - absl::Minutes(5));
  std::string later = Rfc3339(absl::Now() + absl::Hours(1));
  std::vector<std::string> hold = {"--kind", "hold",  "--from", "alice",  "--to",
                                   "bob",    "--asset", "USD",  "--amount", "100"};
  auto with_hold = [&hold](std::vector<std::string> extra) {
    std::vector<std::string> arguments = hold;
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return arguments;
  };
  std::vector<BadInput> cases = {
      {{"--kind", "capture", "--hold-id", hold_id, "--amount", "0"}, 2, "amount must be positive"},
      {{"--kind", "capture", "--hold-id", hold_id, "--amount", "-5"}, 2, "amount must be positive"},
      {{"--kind", "capture", "--hold-id", hold_id, "--amount", "2501"}, 3,
       "capture_exceeds_hold"},
      {{"--kind", "capture", "--hold-id", "no-such-hold"}, 3, "hold_not_found"},
      {{"--kind", "void", "--hold-id", "no-such-hold"}, 3, "hold_not_found"},
      {with_hold({"--expires-at", past}), 2, "is not in the future"},
      {with_hold({"--expires-at", "next tuesday"}), 2, "RFC 3339"},
      {with_hold({"--expires-at", later, "--timeout-seconds", "60"}), 2, "excludes"},
      {with_hold({"--timeout-seconds", "soon"}), 2, "whole number of seconds"},
      {with_hold({"--timeout-seconds", "0"}), 2, "timeout_seconds"},
      {{"--kind", "void", "--hold-id", hold_id, "--amount", "5"}, 2, "amount"},
      {{"--kind", "capture"}, 2, "hold_id"},
  };
  for (const BadInput& bad : cases) {
    std::vector<std::string> arguments = {"submit", "--key", "bad-input"};
    arguments.insert(arguments.end(), bad.arguments.begin(), bad.arguments.end());
    CliResult result = RunLedger(arguments);
    std::string shown = result.out + result.err;
    EXPECT_EQ(result.exit_code, bad.exit_code) << shown;
    EXPECT_NE(shown.find(bad.says), std::string::npos) << "expected \"" << bad.says << "\" in "
                                                       << shown;
  }
  // Both expiries in the JSON form too.
  CliResult both = RunLedger(
      {"submit", "--key", "bad-input", "--json",
       R"({"kind":"hold","from":"alice","to":"bob","asset":"USD","amount":"100",)"
       R"("expires_at":")" + later + R"(","timeout_seconds":60})"});
  EXPECT_EQ(both.exit_code, 2) << both.out;
  EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;

  EXPECT_EQ(StoredTransactions(), transactions);
  EXPECT_EQ(Hold(hold_id)["status"], "pending");
  EXPECT_EQ(Account("alice")["pending_debits"], "2500");
  // Nothing claimed the key either: it commits now.
  CliResult good =
      RunLedger({"submit", "--key", "bad-input", "--kind", "void", "--hold-id", hold_id});
  EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
  EXPECT_EQ(good.Json()["outcome"], "committed");
}

TEST_P(HoldsCliTest, HoldsListPagesEveryHoldWithoutAnAccountAndNotFoundForUnknownIds) {
  std::string from_alice = PlaceHold("page:1", "100");
  std::string from_issuance = PlaceHold("page:2", "100", {}, "issuance");
  std::string another = PlaceHold("page:3", "100");

  EXPECT_EQ(ListHolds({"alice"}).size(), 2u);
  EXPECT_EQ(ListHolds({"issuance"}).size(), 1u);
  std::vector<nlohmann::json> every = ListHolds({});
  ASSERT_EQ(every.size(), 3u);
  // Paged by id: two pages of two, the cursor on stderr under --json.
  CliResult first_page = RunLedger({"holds", "list", "--limit", "2", "--json"});
  ASSERT_EQ(first_page.exit_code, 0) << first_page.err;
  std::string cursor = every[1]["id"];
  EXPECT_NE(first_page.err.find("next: --after " + cursor), std::string::npos) << first_page.err;
  std::vector<nlohmann::json> second_page = ListHolds({"--after", cursor, "--limit", "2"});
  ASSERT_EQ(second_page.size(), 1u);
  EXPECT_EQ(second_page[0]["id"], every[2]["id"]);

  CliResult unknown_hold = RunLedger({"holds", "show", "no-such-hold"});
  EXPECT_EQ(unknown_hold.exit_code, 8) << unknown_hold.err;
  CliResult unknown_account = RunLedger({"holds", "list", "nobody"});
  EXPECT_EQ(unknown_account.exit_code, 8) << unknown_account.err;
  CliResult bad_limit = RunLedger({"holds", "list", "--limit", "0"});
  EXPECT_EQ(bad_limit.exit_code, 2) << bad_limit.err;
}

// Lapsed holds read as expired at once (lazily); two `holds expire` at the same time
// record each expiry exactly once between them.
TEST_P(HoldsCliTest, LapsedHoldsReadExpiredAndTwoConcurrentSweepsExpireEachOnce) {
  constexpr int kHolds = 8;
  // Room to place them all, even on a busy machine, before they lapse.
  absl::Time expires_at = absl::Now() + absl::Seconds(6);
  std::vector<std::string> ids;
  for (int i = 0; i < kHolds; ++i) {
    ids.push_back(PlaceHold("lapsing:" + std::to_string(i), "100",
                            {"--expires-at", Rfc3339(expires_at)}));
  }
  std::string kept = PlaceHold("kept", "100");
  ASSERT_EQ(Account("alice")["pending_debits"], std::to_string(100 * (kHolds + 1)));
  std::this_thread::sleep_for(
      std::chrono::milliseconds(absl::ToInt64Milliseconds(expires_at - absl::Now()) + 1500));

  // Before any sweep: expired on read, released from the available balance.
  EXPECT_EQ(Hold(ids[0])["status"], "expired");
  EXPECT_TRUE(Hold(ids[0])["settled_by"].is_null());
  EXPECT_EQ(Account("alice")["pending_debits"], "100");
  EXPECT_EQ(Account("alice")["available"], "9900");
  CliResult capture =
      RunLedger({"submit", "--key", "late-capture", "--kind", "capture", "--hold-id", ids[0]});
  EXPECT_EQ(capture.exit_code, 3) << capture.out;
  EXPECT_EQ(capture.Json()["reason"], "hold_expired");

  std::vector<CliResult> sweeps = RunTwoAtOnce({"holds", "expire"});
  int64_t expired = 0;
  for (const CliResult& sweep : sweeps) {
    ASSERT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err;
    expired += sweep.Json()["expired_holds"].get<int64_t>();
  }
  EXPECT_EQ(expired, kHolds);
  CliResult third = RunLedger({"holds", "expire"});
  EXPECT_EQ(third.Json()["expired_holds"], 0);

  for (const std::string& id : ids) {
    nlohmann::json hold = Hold(id);
    EXPECT_EQ(hold["status"], "expired");
    EXPECT_FALSE(hold["settled_by"].is_null());  // the sweep's expire transaction
  }
  EXPECT_EQ(Hold(kept)["status"], "pending");
  EXPECT_EQ(Account("alice")["pending_debits"], "100");
  EXPECT_EQ(RunLedger({"verify"}).exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(Engines, HoldsCliTest, ::testing::Values("sqlite", "mysql", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

using DemoHoldsCliTest = LedgerCliTest;

TEST_F(DemoHoldsCliTest, DemoPaysOutThroughHoldsSomeCapturedSomeVoided) {
  CliResult demo = RunLedgerProcess({"--db", "sqlite:" + (folder_ / "demo.db").string(), "demo",
                                     "--operations", "600", "--seed", "7"},
                                    folder_);
  ASSERT_EQ(demo.exit_code, 0) << demo.out << demo.err;
  std::string label = "payouts held, then captured / voided (bank refused)";
  size_t at = demo.out.find(label);
  ASSERT_NE(at, std::string::npos) << demo.out;
  size_t counts_at = at + label.size();
  std::string line = demo.out.substr(counts_at, demo.out.find('\n', counts_at) - counts_at);
  std::vector<std::string> counts = absl::StrSplit(line, '/');
  ASSERT_EQ(counts.size(), 2u) << line;
  EXPECT_GT(std::stoll(counts[0]), 0) << line;
  EXPECT_GT(std::stoll(counts[1]), 0) << line;

  CliResult holds = RunLedgerProcess(
      {"--db", "sqlite:" + (folder_ / "demo.db").string(), "holds", "list", "--json", "--limit",
       "1000"},
      folder_);
  ASSERT_EQ(holds.exit_code, 0) << holds.err;
  std::istringstream lines(holds.out);
  int64_t captured = 0;
  int64_t voided = 0;
  for (std::string text; std::getline(lines, text);) {
    std::string status = nlohmann::json::parse(text)["status"];
    captured += status == "captured";
    voided += status == "voided";
    EXPECT_TRUE(status == "captured" || status == "voided") << text;
  }
  EXPECT_EQ(captured, std::stoll(counts[0]));
  EXPECT_EQ(voided, std::stoll(counts[1]));
}

}  // namespace
}  // namespace ledger::testing
