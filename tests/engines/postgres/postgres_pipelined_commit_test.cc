// Issue 29: a submit in two round trips (libpq pipeline mode,
// engines/postgres/postgres_pipeline.h): BEGIN, the claim and the account locks in one,
// the writes and COMMIT in the other. The round trips are counted on the wire (the relay
// ledger_load --count-round-trips uses); a replay locks no account; the accounts' lock
// fails as LockAccounts does; a write the server finds short is refused before the
// COMMIT behind it can run; a COMMIT whose answer is lost is read back on a new session
// (ResolveInDoubtCommit): committed, or not, and in doubt only while that cannot be
// known. Advisory mode: a submit or a batch on accounts the engine wrote last
// takes ONE round trip (postgres_remembered_rows.h), and every way those rows can go
// stale under it (another process's transfer, hold, close, or the same key) is read
// again and decided as the database holds it. Both claim modes.
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "base/clock.h"
#include "base/status.h"
#include "bench/load/round_trip_relay.h"
#include "engines/postgres/postgres_engine.h"
#include "engines/postgres/postgres_engine_internal.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "ledger/verify.h"
#include "tests/conformance/conformance_context.h"
#include "tests/engines/postgres/postgres_ledger_test.h"
#include "tests/engines/postgres/postgres_test_database.h"
#include "tests/support/claims.h"
#include "tests/support/fault_injecting_engine.h"
#include "tests/support/open_ledger.h"
#include "pqxx/connection"
#include "pqxx/transaction"

namespace ledger {
namespace testing {
namespace {

class PostgresPipelinedCommitTest : public PostgresLedgerTest {
 protected:
  Engine& engine() override { return *engine_; }

  // A fresh database, its engine on `connection` (the test database's own when empty),
  // and accounts alice (funded with 1000) and bob.
  void OpenLedger(const std::string& connection = "") {
    // one_round_trip=on: row mode ignores it; advisory mode's submits and batches on
    // remembered accounts take one round trip.
    absl::StatusOr<std::unique_ptr<Engine>> fresh =
        OpenFreshPostgresEngine(GetParam(), 4, "?one_round_trip=on");
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    if (connection.empty()) {
      engine_ = std::move(*fresh);
    } else {
      fresh->reset();
      PostgresOptions options;
      options.connection = connection;
      options.claim_mode = GetParam();
      options.one_round_trip = true;
      options.pool_size = 4;
      absl::StatusOr<std::unique_ptr<Engine>> relayed = OpenPostgresEngine(options);
      ASSERT_TRUE(relayed.ok()) << relayed.status();
      engine_ = std::move(*relayed);
    }
    OpenFundedLedger(engine_);
  }

  // OpenLedger through a relay that counts round trips (relay_), on a ledger that
  // allows ONE attempt (a stale guess is no fault), with carol and dave opened too; and
  // another process's ledger on the same database (other_, an engine of its own).
  void OpenBesideAnotherProcess();

  // OpenLedger through a relay (relay_), the ledger's engine behind fault hooks, which
  // it returns: for the tests of a lost answer.
  std::shared_ptr<FaultInjectingEngine> OpenRelayedWithFaults();

  // A submit whose lost answer the engine read back as not committed: faulted,
  // Unavailable and not in doubt, nothing written since `before`.
  void ExpectReadBackAsNotCommitted(const absl::StatusOr<Outcome>& first, const Written& before) {
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_EQ(first->kind, OutcomeKind::kFaulted) << OutcomeToJson(*first).dump();
    EXPECT_FALSE(first->in_doubt) << OutcomeToJson(*first).dump();
    EXPECT_TRUE(absl::IsUnavailable(first->fault)) << first->fault;
    EXPECT_NE(first->fault.message().find("shows it did not commit"), std::string::npos)
        << first->fault;
    EXPECT_EQ(TakeWritten(), before);
  }

  // The resend of a key that did not commit: it commits, and the next is a duplicate.
  void ExpectResentOnce(const std::string& key, const Operation& operation) {
    ExpectCommitted(Submit(key, operation));
    absl::StatusOr<Outcome> again = Submit(key, operation);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->kind, OutcomeKind::kDuplicate) << OutcomeToJson(*again).dump();
  }

  // Runs `body(key)` with "<prefix>-after-claim" on a claim of its own round trip, then
  // with "<prefix>-on-remembered-rows" after a transfer of 1 to bob (counted in `bob`)
  // that made the engine remember both accounts (advisory mode: the claim then rides in
  // COMMIT's pipeline).
  void OnBothPaths(const std::string& prefix, Amount& bob,
                   const std::function<void(const std::string& key)>& body) {
    for (const std::string path : {"-after-claim", "-on-remembered-rows"}) {
      const std::string key = prefix + path;
      SCOPED_TRACE(key);
      if (path == "-on-remembered-rows") {  // the first key's fault made it forget them
        ExpectCommitted(Submit("remember-both", Operation::Transfer("alice", "bob", kAsset, 1)));
        bob += 1;
      }
      body(key);
    }
  }

  std::shared_ptr<Engine> engine_;
  std::unique_ptr<load::RoundTripRelay> relay_;
  std::unique_ptr<Ledger> other_;
};

INSTANTIATE_TEST_SUITE_P(ClaimModes, PostgresPipelinedCommitTest,
                         ::testing::Values(PostgresClaimMode::kAdvisoryLock, PostgresClaimMode::kRow),
                         [](const ::testing::TestParamInfo<PostgresClaimMode>& info) {
                           return info.param == PostgresClaimMode::kRow ? "row" : "advisory";
                         });

// "postgresql://user@127.0.0.1:5432/db?x" with the port replaced; empty when the test
// database's URL names no 127.0.0.1 port (the relay needs one).
std::string WithPort(const std::string& url, int port) {
  const std::string host = "@127.0.0.1:";
  const size_t at = url.find(host);
  if (at == std::string::npos) return "";
  const size_t start = at + host.size();
  size_t end = start;
  while (end < url.size() && std::isdigit(static_cast<unsigned char>(url[end]))) ++end;
  if (end == start) return "";
  return absl::StrCat(url.substr(0, start), port, url.substr(end));
}

// A relay on the wire between the engine and the test database (the one
// ledger_load --count-round-trips uses), and the ledger opened through it.
class RelayedLedger {
 public:
  static absl::StatusOr<std::string> Start(std::unique_ptr<load::RoundTripRelay>& relay,
                                           absl::Duration added_latency = absl::ZeroDuration()) {
    absl::StatusOr<std::string> url = PostgresTestDsn();
    if (!url.ok()) return url.status();
    const size_t at = url->find("@127.0.0.1:");
    if (at == std::string::npos) {
      return absl::FailedPreconditionError("the relay needs a 127.0.0.1 URL: " + *url);
    }
    const int server_port = std::stoi(url->substr(at + 11));
    absl::StatusOr<std::unique_ptr<load::RoundTripRelay>> started =
        load::RoundTripRelay::Start("127.0.0.1", server_port, added_latency);
    if (!started.ok()) return started.status();
    relay = *std::move(started);
    std::string relayed = WithPort(*url, relay->port());
    if (relayed.empty()) return absl::FailedPreconditionError("no port in " + *url);
    return relayed;
  }
};

std::shared_ptr<FaultInjectingEngine> PostgresPipelinedCommitTest::OpenRelayedWithFaults() {
  absl::StatusOr<std::string> relayed = RelayedLedger::Start(relay_);
  EXPECT_TRUE(relayed.ok()) << relayed.status();
  if (!relayed.ok()) return nullptr;
  OpenLedger(*relayed);
  if (HasFatalFailure()) return nullptr;
  auto faults = std::make_shared<FaultInjectingEngine>(engine_);
  ledger_ = std::make_unique<Ledger>(OpenTestLedger(faults, {.clock = &clock_}));
  return faults;
}

void PostgresPipelinedCommitTest::OpenBesideAnotherProcess() {
  absl::StatusOr<std::string> relayed = RelayedLedger::Start(relay_);
  ASSERT_TRUE(relayed.ok()) << relayed.status();
  ASSERT_NO_FATAL_FAILURE(OpenLedger(*relayed));
  ledger_ = std::make_unique<Ledger>(
      OpenTestLedger(engine_, {.clock = &clock_, .attempts_max = 1}));
  for (const char* id : {"carol", "dave"}) {
    ASSERT_TRUE(ledger_->OpenAccount({.id = id, .asset = kAsset}).ok());
  }
  PostgresOptions other_options;
  other_options.connection = PostgresTestDsn().value();
  other_options.claim_mode = GetParam();
  other_options.pool_size = 2;
  absl::StatusOr<std::unique_ptr<Engine>> other_engine = OpenPostgresEngine(other_options);
  ASSERT_TRUE(other_engine.ok()) << other_engine.status();
  other_ = std::make_unique<Ledger>(OpenTestLedger(
      std::shared_ptr<Engine>(*std::move(other_engine)), {.clock = &clock_}));
}

// ledger_load --round-trip-latency: the relay holds each round trip, so a submit of two
// round trips takes at least twice the latency (a lower bound: the relay sleeps), and the
// count is unchanged.
TEST_P(PostgresPipelinedCommitTest, ADelayingRelayHoldsEveryRoundTrip) {
  constexpr absl::Duration kLatency = absl::Milliseconds(40);
  std::unique_ptr<load::RoundTripRelay> relay;
  absl::StatusOr<std::string> relayed = RelayedLedger::Start(relay, kLatency);
  ASSERT_TRUE(relayed.ok()) << relayed.status();
  ASSERT_NO_FATAL_FAILURE(OpenLedger(*relayed));
  const int64_t before = relay->round_trips();
  const absl::Time started = absl::Now();
  ExpectCommitted(Submit("held", Operation::Transfer("alice", "bob", kAsset, 10)));
  const absl::Duration took = absl::Now() - started;
  EXPECT_EQ(relay->round_trips() - before, 2);
  EXPECT_GE(took, 2 * kLatency);
}

// Counted on the wire: BEGIN, the claim, the key rows and the account locks in one
// round trip, the writes and COMMIT in the other. Four before issue 29, three with the
// writes and COMMIT pipelined. The first submit of a session also carries the
// statements' Parses, in the same round trips. Advisory mode: once the engine wrote
// both accounts, the claim rides with the write (one round trip).
TEST_P(PostgresPipelinedCommitTest, ATransferCostsTwoRoundTripsAndOneOnRememberedAccounts) {
  const bool remembers = GetParam() == PostgresClaimMode::kAdvisoryLock;
  std::unique_ptr<load::RoundTripRelay> relay;
  absl::StatusOr<std::string> relayed = RelayedLedger::Start(relay);
  ASSERT_TRUE(relayed.ok()) << relayed.status();
  ASSERT_NO_FATAL_FAILURE(OpenLedger(*relayed));

  std::optional<Transaction> first;
  for (int transfer = 0; transfer < 3; ++transfer) {
    const int64_t before = relay->round_trips();
    absl::StatusOr<Outcome> committed = Submit(absl::StrCat("transfer-", transfer),
                                               Operation::Transfer("alice", "bob", kAsset, 10));
    ExpectCommitted(committed);
    // The first transfer writes bob for the first time (alice's funding wrote her).
    EXPECT_EQ(relay->round_trips() - before, remembers && transfer > 0 ? 1 : 2)
        << "transfer " << transfer;
    if (transfer == 0 && committed.ok()) first = committed->transaction;
  }
  // A batch of fresh keys on the same accounts: the same one round trip in advisory
  // mode (every key's lock and the accounts checked ahead of the write), two otherwise.
  SubmitBatchRequest batch;
  for (int item = 0; item < 3; ++item) {
    batch.items.push_back(SubmitRequest{absl::StrCat("batch-", item), {},
                                        Operation::Transfer("alice", "bob", kAsset, 1), {}});
  }
  const int64_t before_batch = relay->round_trips();
  absl::StatusOr<std::vector<SubmitResult>> results = ledger_->SubmitBatch(batch);
  ASSERT_TRUE(results.ok()) << results.status();
  for (const SubmitResult& result : *results) ExpectCommitted(result);
  EXPECT_EQ(relay->round_trips() - before_batch, remembers ? 1 : 2);
  EXPECT_EQ(BalanceOf("bob"), 33);
  // A duplicate: the claim (its account lock locks nothing), then the original's read
  // with ROLLBACK behind it (StorageTransaction::ExpectNoWrites). Three before; the
  // first resend on a session cost a fourth, libpqxx's own Parse of the read. Advisory
  // mode: the first resend is first tried on the remembered rows, and the key's row
  // refuses it: two round trips more (the refused one and its ROLLBACK). The refusal
  // forgets the rows.
  for (int resend = 0; resend < 3; ++resend) {
    const int64_t before = relay->round_trips();
    absl::StatusOr<Outcome> duplicate =
        Submit("transfer-0", Operation::Transfer("alice", "bob", kAsset, 10));
    ASSERT_TRUE(duplicate.ok()) << duplicate.status();
    EXPECT_EQ(duplicate->kind, OutcomeKind::kDuplicate);
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(duplicate->transaction, *first) << "resend " << resend;  // the original, whole
    EXPECT_EQ(relay->round_trips() - before, remembers && resend == 0 ? 4 : 2)
        << "resend " << resend;
  }
  // The session the replays ended serves the next submit: a fresh key still commits in
  // two, and in advisory mode the next one in one again.
  const int64_t before_fresh = relay->round_trips();
  ExpectCommitted(Submit("after-replays", Operation::Transfer("alice", "bob", kAsset, 1)));
  EXPECT_EQ(relay->round_trips() - before_fresh, 2);
  const int64_t before_remembered = relay->round_trips();
  ExpectCommitted(Submit("remembered-again", Operation::Transfer("alice", "bob", kAsset, 1)));
  EXPECT_EQ(relay->round_trips() - before_remembered, remembers ? 1 : 2);
  EXPECT_EQ(BalanceOf("bob"), 35);
  ExpectVerifiedClean();
}

// Another process (a second engine on the same database) changes what this engine
// remembers, each way a row can change: a transfer (version, balance), a hold (pending
// amounts only), a close (closed only), a submit of the same key, and a top-up that
// makes a remembered rejection wrong. Each submit is decided as the database holds it,
// on a ledger that allows ONE attempt (a stale guess is no fault), and the round trips
// show the guess was tried where the engine remembers (advisory mode).
TEST_P(PostgresPipelinedCommitTest, RememberedRowsThatChangedAreReadAgain) {
  const bool remembers = GetParam() == PostgresClaimMode::kAdvisoryLock;
  ASSERT_NO_FATAL_FAILURE(OpenBesideAnotherProcess());
  load::RoundTripRelay* const relay = relay_.get();
  Ledger& other = *other_;
  auto other_submit = [&](const std::string& key, const Operation& operation) {
    return other.Submit(SubmitRequest{key, {}, operation, {}});
  };
  // Our submit, with the round trips it took.
  auto submit = [&](const std::string& key, const Operation& operation, int64_t& round_trips) {
    const int64_t before = relay->round_trips();
    absl::StatusOr<Outcome> outcome = Submit(key, operation);
    round_trips = relay->round_trips() - before;
    return outcome;
  };
  int64_t round_trips = 0;
  // This engine writes alice, bob, carol and dave: it remembers them.
  ExpectCommitted(submit("ours-1", Operation::Transfer("alice", "bob", kAsset, 10), round_trips));
  ExpectCommitted(submit("ours-2", Operation::Transfer("alice", "carol", kAsset, 5), round_trips));
  ExpectCommitted(submit("ours-3", Operation::Transfer("carol", "dave", kAsset, 5), round_trips));
  ExpectCommitted(submit("ours-4", Operation::Transfer("dave", "alice", kAsset, 5), round_trips));
  ExpectCommitted(submit("ours-5", Operation::Transfer("alice", "bob", kAsset, 1), round_trips));
  EXPECT_EQ(round_trips, remembers ? 1 : 2);

  // A transfer by the other process: the guess is refused, the submit reads and commits.
  ExpectCommitted(other_submit("theirs-1", Operation::Transfer("alice", "bob", kAsset, 5)));
  ExpectCommitted(submit("ours-6", Operation::Transfer("alice", "bob", kAsset, 1), round_trips));
  EXPECT_EQ(round_trips, remembers ? 4 : 2);  // refused, ROLLBACK, then the two
  EXPECT_EQ(BalanceOf("bob"), 17);
  EXPECT_EQ(BalanceOf("alice"), 983);

  // A hold changes alice's pending debits only (no version): 975 of her 982 reserved,
  // so a transfer of 10 no longer fits, whatever this engine remembered.
  ExpectCommitted(submit("ours-7", Operation::Transfer("alice", "bob", kAsset, 1), round_trips));
  ExpectCommitted(other_submit("theirs-hold", Operation::Hold("alice", "bob", kAsset, 975)));
  absl::StatusOr<Outcome> held = submit("ours-8", Operation::Transfer("alice", "bob", kAsset, 10),
                                        round_trips);
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_EQ(held->kind, OutcomeKind::kRejected) << OutcomeToJson(*held).dump();
  EXPECT_EQ(held->reason, RejectionReason::kInsufficientFunds);
  EXPECT_EQ(BalanceOf("bob"), 18);

  // A close changes carol's closed flag only: a transfer to her is rejected.
  ExpectCommitted(submit("ours-9", Operation::Transfer("bob", "carol", kAsset, 1), round_trips));
  ExpectCommitted(submit("ours-10", Operation::Transfer("carol", "bob", kAsset, 1), round_trips));
  ASSERT_TRUE(other.CloseAccount("carol").ok());
  absl::StatusOr<Outcome> closed = submit("ours-11", Operation::Transfer("bob", "carol", kAsset, 1),
                                          round_trips);
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(closed->kind, OutcomeKind::kRejected) << OutcomeToJson(*closed).dump();
  EXPECT_EQ(closed->reason, RejectionReason::kAccountClosed);
  EXPECT_EQ(BalanceOf("carol"), 0);

  // The same key committed by the other process: ours is its duplicate, not a second post.
  ExpectCommitted(submit("ours-12", Operation::Transfer("bob", "dave", kAsset, 1), round_trips));
  absl::StatusOr<Outcome> theirs = other_submit("shared", Operation::Transfer("bob", "dave", kAsset, 2));
  ExpectCommitted(theirs);
  absl::StatusOr<Outcome> shared = submit("shared", Operation::Transfer("bob", "dave", kAsset, 2),
                                          round_trips);
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(shared->kind, OutcomeKind::kDuplicate) << OutcomeToJson(*shared).dump();
  ASSERT_TRUE(theirs.ok());
  EXPECT_EQ(shared->transaction, theirs->transaction);
  EXPECT_EQ(BalanceOf("dave"), 3);

  // A rejection decided on a remembered row is confirmed before it is answered: dave
  // remembered at 4 cannot pay 20, but the other process topped him up meanwhile.
  ExpectCommitted(submit("ours-13", Operation::Transfer("bob", "dave", kAsset, 1), round_trips));
  ExpectCommitted(other_submit("theirs-top-up", Operation::TopUp("issuance", "dave", kAsset, 50)));
  ExpectCommitted(submit("ours-14", Operation::Transfer("dave", "bob", kAsset, 20), round_trips));
  if (remembers) {
    EXPECT_GT(round_trips, 2) << "the rejection was not decided on remembered rows";
  }
  EXPECT_EQ(BalanceOf("dave"), 34);
  // And one that stands: dave cannot pay 1000, confirmed by the database.
  absl::StatusOr<Outcome> short_of_funds =
      submit("ours-15", Operation::Transfer("dave", "bob", kAsset, 1000), round_trips);
  ASSERT_TRUE(short_of_funds.ok()) << short_of_funds.status();
  EXPECT_EQ(short_of_funds->kind, OutcomeKind::kRejected);
  EXPECT_EQ(short_of_funds->reason, RejectionReason::kInsufficientFunds);
  // The rejected keys stay unused: they commit once the funds are there.
  ExpectCommitted(other_submit("theirs-top-up-2", Operation::TopUp("issuance", "dave", kAsset, 1000)));
  ExpectCommitted(submit("ours-15", Operation::Transfer("dave", "bob", kAsset, 1000), round_trips));
  ExpectVerifiedClean();
}

// A batch (or a shared transaction of group commit) on remembered accounts is one guess:
// every key's lock, no row under any key and every account as remembered are checked
// ahead of the write, and any of them failing sends the whole batch back to be decided
// on what the database holds. Each case on a ledger that allows ONE attempt (a stale
// guess is no fault), with the round trips showing the guess was tried (advisory mode).
TEST_P(PostgresPipelinedCommitTest, ABatchOnRememberedRowsIsCheckedAsAWhole) {
  const bool remembers = GetParam() == PostgresClaimMode::kAdvisoryLock;
  ASSERT_NO_FATAL_FAILURE(OpenBesideAnotherProcess());
  load::RoundTripRelay* const relay = relay_.get();
  Ledger& other = *other_;
  // Our batch of (key, operation) items, with the round trips it took.
  int64_t round_trips = 0;
  auto batch = [&](const std::vector<std::pair<std::string, Operation>>& items) {
    SubmitBatchRequest request;
    for (const auto& [key, operation] : items) {
      request.items.push_back(SubmitRequest{key, {}, operation, {}});
    }
    const int64_t before = relay->round_trips();
    absl::StatusOr<std::vector<SubmitResult>> results = ledger_->SubmitBatch(request);
    round_trips = relay->round_trips() - before;
    EXPECT_TRUE(results.ok()) << results.status();
    return results.ok() ? *std::move(results) : std::vector<SubmitResult>{};
  };
  auto all_committed = [](const std::vector<SubmitResult>& results, size_t count) {
    ASSERT_EQ(results.size(), count);
    for (const SubmitResult& result : results) ExpectCommitted(result);
  };
  // This engine writes all four accounts, then a batch on them takes one round trip.
  all_committed(batch({{"warm-1", Operation::Transfer("alice", "bob", kAsset, 10)},
                       {"warm-2", Operation::Transfer("alice", "carol", kAsset, 10)},
                       {"warm-3", Operation::Transfer("alice", "dave", kAsset, 10)}}),
                3);
  all_committed(batch({{"ours-1", Operation::Transfer("bob", "carol", kAsset, 1)},
                       {"ours-2", Operation::Transfer("carol", "dave", kAsset, 1)},
                       {"ours-3", Operation::Transfer("dave", "alice", kAsset, 1)}}),
                3);
  EXPECT_EQ(round_trips, remembers ? 1 : 2);

  // Another process writes one account of the three items' five: the whole batch is
  // refused, read again and committed, each item once.
  ExpectCommitted(other.Submit(
      SubmitRequest{"theirs-1", {}, Operation::Transfer("carol", "dave", kAsset, 2), {}}));
  all_committed(batch({{"ours-4", Operation::Transfer("alice", "bob", kAsset, 1)},
                       {"ours-5", Operation::Transfer("carol", "dave", kAsset, 1)},
                       {"ours-6", Operation::Transfer("bob", "alice", kAsset, 1)}}),
                3);
  EXPECT_EQ(round_trips, remembers ? 4 : 2);  // refused, ROLLBACK, then the two
  EXPECT_EQ(BalanceOf("alice"), 971);
  EXPECT_EQ(BalanceOf("bob"), 9);
  EXPECT_EQ(BalanceOf("carol"), 7);
  EXPECT_EQ(BalanceOf("dave"), 13);

  // One key of the batch committed by the other process: that item is its duplicate
  // (the other's transaction, not a second post), and the rest commit.
  all_committed(batch({{"ours-7", Operation::Transfer("alice", "bob", kAsset, 1)},
                       {"ours-8", Operation::Transfer("dave", "carol", kAsset, 1)}}),
                2);
  absl::StatusOr<Outcome> theirs = other.Submit(
      SubmitRequest{"shared", {}, Operation::Transfer("dave", "carol", kAsset, 2), {}});
  ExpectCommitted(theirs);
  // The other's write changed dave and carol too; ours remembers them as before it.
  std::vector<SubmitResult> mixed =
      batch({{"ours-9", Operation::Transfer("alice", "bob", kAsset, 1)},
             {"shared", Operation::Transfer("dave", "carol", kAsset, 2)}});
  ASSERT_EQ(mixed.size(), 2u);
  ExpectCommitted(mixed[0]);
  ASSERT_TRUE(mixed[1].ok()) << mixed[1].status();
  EXPECT_EQ(mixed[1]->kind, OutcomeKind::kDuplicate) << OutcomeToJson(*mixed[1]).dump();
  ASSERT_TRUE(theirs.ok());
  EXPECT_EQ(mixed[1]->transaction, theirs->transaction);
  EXPECT_EQ(BalanceOf("carol"), 10);
  EXPECT_EQ(BalanceOf("dave"), 10);

  // A rejection decided on remembered rows is confirmed with the batch's write: dave,
  // remembered at 11, cannot pay 40, but the other process topped him up meanwhile; and
  // the write's check refuses the guess, so the item is decided on the database's row.
  all_committed(batch({{"ours-10", Operation::Transfer("alice", "dave", kAsset, 1)},
                       {"ours-11", Operation::Transfer("bob", "carol", kAsset, 1)}}),
                2);
  ExpectCommitted(other.Submit(
      SubmitRequest{"theirs-top-up", {}, Operation::TopUp("issuance", "dave", kAsset, 50), {}}));
  all_committed(batch({{"ours-12", Operation::Transfer("dave", "bob", kAsset, 40)},
                       {"ours-13", Operation::Transfer("alice", "carol", kAsset, 1)}}),
                2);
  if (remembers) {
    EXPECT_EQ(round_trips, 4);
  }
  EXPECT_EQ(BalanceOf("dave"), 21);
  // One that stands, in one round trip: dave cannot pay 1000, and the check riding with
  // the other item's write confirms what it was decided on. Its key stays unused.
  all_committed(batch({{"ours-14", Operation::Transfer("alice", "dave", kAsset, 1)},
                       {"ours-15", Operation::Transfer("dave", "bob", kAsset, 1)}}),
                2);
  std::vector<SubmitResult> partly =
      batch({{"ours-16", Operation::Transfer("dave", "bob", kAsset, 1000)},
             {"ours-17", Operation::Transfer("alice", "bob", kAsset, 1)}});
  ASSERT_EQ(partly.size(), 2u);
  ASSERT_TRUE(partly[0].ok()) << partly[0].status();
  EXPECT_EQ(partly[0]->kind, OutcomeKind::kRejected) << OutcomeToJson(*partly[0]).dump();
  EXPECT_EQ(partly[0]->reason, RejectionReason::kInsufficientFunds);
  ExpectCommitted(partly[1]);
  EXPECT_EQ(round_trips, remembers ? 1 : 2);
  ExpectCommitted(other.Submit(
      SubmitRequest{"theirs-top-up-2", {}, Operation::TopUp("issuance", "dave", kAsset, 1000), {}}));
  ExpectCommitted(Submit("ours-16", Operation::Transfer("dave", "bob", kAsset, 1000)));
  ExpectVerifiedClean();
}

// A replay locks no account: with alice's row locked FOR UPDATE by another session, the
// resend of a committed key still returns the original at once (were the claim's
// round trip to lock the accounts anyway, it would wait the whole account_lock_wait and
// fail). The batch mixing that replay with fresh keys then locks the fresh items'
// accounts as before, once the other session lets go.
TEST_P(PostgresPipelinedCommitTest, AReplayLocksNoAccountAndABatchMixingReplaysStillCommits) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger());
  const Operation transfer = Operation::Transfer("alice", "bob", kAsset, 25);
  ExpectCommitted(Submit("paid", transfer));

  absl::StatusOr<std::string> dsn = PostgresTestDsn();
  ASSERT_TRUE(dsn.ok()) << dsn.status();
  {
    pqxx::connection holder(*dsn);
    pqxx::work locks(holder);
    locks.exec("SELECT 1 FROM accounts WHERE id IN ('alice', 'bob') FOR UPDATE");
    const absl::Time start = absl::Now();
    absl::StatusOr<Outcome> replay = Submit("paid", transfer);
    ASSERT_TRUE(replay.ok()) << replay.status();
    EXPECT_EQ(replay->kind, OutcomeKind::kDuplicate) << OutcomeToJson(*replay).dump();
    // Bounded by the lock wait it must not take (account_lock_wait, 10 s).
    EXPECT_LT(absl::Now() - start, absl::Seconds(5));
    locks.abort();
  }
  SubmitBatchRequest batch;
  batch.items.push_back(SubmitRequest{"paid", {}, transfer, {}});
  batch.items.push_back(
      SubmitRequest{"fresh-1", {}, Operation::Transfer("alice", "bob", kAsset, 5), {}});
  batch.items.push_back(
      SubmitRequest{"fresh-2", {}, Operation::Transfer("bob", "alice", kAsset, 1), {}});
  absl::StatusOr<std::vector<SubmitResult>> results = ledger_->SubmitBatch(batch);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 3u);
  ASSERT_TRUE((*results)[0].ok()) << (*results)[0].status();
  EXPECT_EQ((*results)[0]->kind, OutcomeKind::kDuplicate);
  ExpectCommitted((*results)[1]);
  ExpectCommitted((*results)[2]);
  EXPECT_EQ(BalanceOf("bob"), 29);
  EXPECT_EQ(BalanceOf("alice"), 971);
  ExpectVerifiedClean();
}

// The accounts' lock riding with the claim fails as LockAccounts fails without it: the
// lock-accounts phase's error, returned by LockAccounts, not by the claim.
TEST_P(PostgresPipelinedCommitTest, APrefetchedLockTimeoutIsTheLockAccountsError) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger());
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      OpenPostgresTestEngine(GetParam(), 2, "?account_lock_wait=200ms", /*migrate=*/false);
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<std::string> dsn = PostgresTestDsn();
  ASSERT_TRUE(dsn.ok()) << dsn.status();
  pqxx::connection holder(*dsn);
  pqxx::work locks(holder);
  locks.exec("SELECT 1 FROM accounts WHERE id = 'bob' FOR UPDATE");

  // Without the hint: the claim, then LockAccounts' own round trip.
  absl::Status plain;
  {
    absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = (*engine)->Begin({});
    ASSERT_TRUE(storage.ok()) << storage.status();
    absl::StatusOr<std::optional<KeyRecord>> claimed = (*storage)->ClaimKey(ClaimOf(
        {.key_namespace = std::string(kDefaultKeyNamespace), .scope = Scope{}, .key = "plain"}));
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    plain = (*storage)->LockAccounts({"alice", "bob"}).status();
    (*storage)->Rollback();
  }
  ASSERT_FALSE(plain.ok());
  absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = (*engine)->Begin({});
  ASSERT_TRUE(storage.ok()) << storage.status();
  (*storage)->ExpectAccountLocks({"alice", "bob"});
  absl::StatusOr<std::optional<KeyRecord>> claimed = (*storage)->ClaimKey(ClaimOf(
      {.key_namespace = std::string(kDefaultKeyNamespace), .scope = Scope{}, .key = "hinted"}));
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  EXPECT_FALSE(claimed->has_value());
  absl::Status hinted = (*storage)->LockAccounts({"alice", "bob"}).status();
  EXPECT_EQ(hinted.code(), plain.code()) << hinted << " / " << plain;
  EXPECT_EQ(IsRetryable(hinted), IsRetryable(plain)) << hinted << " / " << plain;
  EXPECT_EQ(IsInProgress(hinted), IsInProgress(plain)) << hinted << " / " << plain;
  EXPECT_NE(hinted.message().find("lock accounts"), std::string::npos) << hinted;
  EXPECT_NE(plain.message().find("lock accounts"), std::string::npos) << plain;
  (*storage)->Rollback();
  locks.abort();
}

// The write finds alice's row at another version than her lock read (changed in the
// same transaction, past the ledger), so it updates one account of two. The server's
// check refuses the write, the pipeline aborts before COMMIT, and nothing of the
// transaction is committed: no entry, no transaction, the key unused (a submit with it
// then posts once).
TEST_P(PostgresPipelinedCommitTest, AShortWriteIsRefusedBeforeItsCommitAndWritesNothing) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger());
  const Written before = TakeWritten();
  const KeyIdentity identity{.key_namespace = std::string(kDefaultKeyNamespace),
                             .scope = Scope{},
                             .key = "short"};
  absl::StatusOr<std::unique_ptr<StorageTransaction>> storage = engine_->Begin({});
  ASSERT_TRUE(storage.ok()) << storage.status();
  // The record the pipeline would claim the key with, and then record.
  const KeyRecord intended{.identity = identity,
                           .fingerprint = "fingerprint-short",
                           .transaction_id = NewTransactionId(clock_.Now()),
                           .created_at = clock_.Now(),
                           .expires_at = clock_.Now() + absl::Hours(1)};
  absl::StatusOr<std::optional<KeyRecord>> claimed = (*storage)->ClaimKey(intended);
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  ASSERT_FALSE(claimed->has_value());
  absl::StatusOr<std::vector<Account>> locked = (*storage)->LockAccounts({"alice", "bob"});
  ASSERT_TRUE(locked.ok()) << locked.status();
  ASSERT_TRUE((*storage)
                  ->RunCallerSql("UPDATE accounts SET version = version + 1 WHERE id = 'alice'", {})
                  .ok());
  Transaction transaction;
  transaction.id = intended.transaction_id;
  transaction.kind = OperationKind::kTransfer;
  transaction.created_at = clock_.Now();
  transaction.fingerprint = "fingerprint-short";
  std::vector<Account> updated = *locked;
  for (Account& account : updated) {
    const Amount amount = account.id == "alice" ? -10 : 10;
    account.balance += amount;
    account.version += 1;
    transaction.entries.push_back({account.id, kAsset, amount, account.balance, account.version});
  }
  ASSERT_TRUE((*storage)->WriteTransaction(transaction, updated).ok());
  ASSERT_TRUE((*storage)->RecordKey(intended).ok());
  absl::Status committed = (*storage)->Commit();
  EXPECT_EQ(committed.code(), absl::StatusCode::kInternal) << committed;
  EXPECT_NE(committed.message().find("1/2 updated_accounts"), std::string::npos) << committed;
  EXPECT_FALSE(IsInDoubt(committed)) << committed;
  (*storage)->Rollback();
  storage->reset();

  EXPECT_EQ(TakeWritten(), before);
  absl::StatusOr<std::optional<KeyRecord>> record = engine_->GetKeyRecord(identity);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_FALSE(record->has_value());
  ExpectCommitted(Submit("short", Operation::Transfer("alice", "bob", kAsset, 10)));
  EXPECT_EQ(BalanceOf("bob"), 10);
  ExpectVerifiedClean();
}

// A deferred trigger that terminates its own backend inside COMMIT, before the commit
// record: the session ends after the write ran, while COMMIT runs.
constexpr char kEndSessionAtCommitSql[] = R"sql(
    CREATE OR REPLACE FUNCTION end_own_session() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_terminate_backend(pg_backend_pid());
      PERFORM pg_sleep(30);  -- the termination lands here, inside COMMIT
      RETURN NULL;
    END $$;
    CREATE CONSTRAINT TRIGGER end_session_at_commit AFTER INSERT ON outbox_events
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION end_own_session())sql";

// The submit's answer is in doubt to the client until the engine reads the key row on a
// new session once the transaction ended: absent, so nothing was committed. The submit
// faults as a session lost before COMMIT does (Unavailable, not in doubt), and the
// resend commits once. Twice: on a claim of its own round trip, then (advisory mode) on
// remembered accounts, where the claim rides with COMMIT and its answer came before
// the cut.
TEST_P(PostgresPipelinedCommitTest, ASessionCutWhileCommitRunsIsUnavailableOnceTheKeyRowIsRead) {
  ASSERT_NO_FATAL_FAILURE(OpenLedger());
  const Operation transfer = Operation::Transfer("alice", "bob", kAsset, 40);
  Amount bob = 0;
  OnBothPaths("cut", bob, [&](const std::string& key) {
    ASSERT_TRUE(QueryPostgresValue(kEndSessionAtCommitSql).ok());
    const Written before = TakeWritten();
    ExpectReadBackAsNotCommitted(Submit(key, transfer), before);
    ASSERT_TRUE(QueryPostgresValue("DROP TRIGGER end_session_at_commit ON outbox_events").ok());
    ExpectResentOnce(key, transfer);
    EXPECT_EQ(BalanceOf("bob"), bob += 40);
  });
  ExpectVerifiedClean();
}

// The write and COMMIT ran and committed, and their answer was lost on the way back (the
// relay cuts the connection at it): in doubt to the client, until the engine reads the
// key row on a new session, which holds this transaction's id. The submit reports it
// committed, not in doubt, and the resend replays it. Twice: on a claim of its own round
// trip, then (advisory mode) on remembered accounts, where the claim's answer was lost
// with COMMIT's and the row alone proves the commit.
TEST_P(PostgresPipelinedCommitTest, ACommitWhoseAnswerIsLostIsReportedCommitted) {
  std::shared_ptr<FaultInjectingEngine> faults = OpenRelayedWithFaults();
  ASSERT_NE(faults, nullptr);
  Amount bob = 0;
  OnBothPaths("lost", bob, [&](const std::string& key) {
    const Operation transfer = Operation::Transfer("alice", "bob", kAsset, 10);
    faults->SetHook(FaultPoint::kCommit, [&] { relay_->CutAtNextReply(); });
    const int64_t round_trips = relay_->round_trips();
    absl::StatusOr<Outcome> first = Submit(key, transfer);
    faults->Clear();
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_EQ(first->kind, OutcomeKind::kCommitted) << OutcomeToJson(*first).dump();
    EXPECT_FALSE(first->in_doubt);
    EXPECT_GT(relay_->round_trips() - round_trips, 2);  // the read on a new session
    absl::StatusOr<Outcome> resent = Submit(key, transfer);
    ASSERT_TRUE(resent.ok()) << resent.status();
    EXPECT_EQ(resent->kind, OutcomeKind::kDuplicate) << OutcomeToJson(*resent).dump();
    EXPECT_EQ(resent->transaction.id, first->transaction.id);
    EXPECT_EQ(BalanceOf("bob"), bob += 10);
  });
  ExpectVerifiedClean();
}

// The write and COMMIT never reached the server: the relay holds them back and cuts the
// client off, leaving the server's side of the connection open, as a network that lost
// the client with its request still in flight would. The server sees no end to the
// session: its transaction (holding the key, once the claim was answered) would stay open
// until TCP keepalives gave up, and the held request could still arrive and commit. The
// engine ends the lost session's server process before it reads the key row, so the
// submit is Unavailable, not in doubt, and the request released afterwards reaches no
// one: the resend commits once. Twice: on a claim of its own round trip, then (advisory
// mode) on remembered accounts, where the claim itself is in the held request.
TEST_P(PostgresPipelinedCommitTest, ARequestLostOnItsWayIsUnavailableOnceItsSessionIsEnded) {
  std::shared_ptr<FaultInjectingEngine> faults = OpenRelayedWithFaults();
  ASSERT_NE(faults, nullptr);
  Amount bob = 0;
  OnBothPaths("held", bob, [&](const std::string& key) {
    const Operation transfer = Operation::Transfer("alice", "bob", kAsset, 10);
    const Written before = TakeWritten();
    faults->SetHook(FaultPoint::kCommit, [&] { relay_->HoldNextRequest(); });
    absl::StatusOr<Outcome> first = Submit(key, transfer);
    faults->Clear();
    ExpectReadBackAsNotCommitted(first, before);
    // Had the session lived on, the request would run now and commit.
    EXPECT_FALSE(relay_->ReleaseHeld());
    EXPECT_EQ(TakeWritten(), before);
    ExpectResentOnce(key, transfer);
    EXPECT_EQ(BalanceOf("bob"), bob += 10);
  });
  ExpectVerifiedClean();
}

// ResolveInDoubtCommit itself, against a transaction that holds the witness's key: it
// waits for that transaction to end (within account_lock_wait) and reads the row.
TEST_P(PostgresPipelinedCommitTest, AnInDoubtCommitIsReadOnceItsTransactionEnds) {
  absl::StatusOr<std::unique_ptr<Engine>> opened = OpenFreshPostgresEngine(
      GetParam(), 4, "?account_lock_wait=500ms&statement_timeout=2s&read_timeout=3s");
  ASSERT_TRUE(opened.ok()) << opened.status();
  engine_ = std::move(*opened);
  auto& postgres = dynamic_cast<postgres_internal::PostgresEngine&>(*engine_);
  const absl::Status lost = InDoubtError("postgres: commit: the connection was lost (a test)");
  // A transaction that claimed `witness`'s key and stored its record, not yet ended.
  auto hold = [&](const KeyRecord& witness) {
    absl::StatusOr<std::unique_ptr<StorageTransaction>> holder = engine_->Begin({});
    EXPECT_TRUE(holder.ok()) << holder.status();
    EXPECT_TRUE((*holder)->ClaimKey(witness).ok());
    EXPECT_TRUE((*holder)->RecordKey(witness).ok());
    return std::move(*holder);
  };
  // Resolves on another thread while `end` runs on this one.
  auto resolve_while = [&](const KeyRecord& witness, const std::function<void()>& end) {
    absl::Status resolved;
    std::thread reader([&] { resolved = postgres.ResolveInDoubtCommit(witness, lost, true, std::nullopt); });
    absl::SleepFor(absl::Milliseconds(150));
    end();
    reader.join();
    return resolved;
  };

  const KeyRecord committed = ClaimOf(KeyIdentityOf(SubmitRequest{.key = "committed"}));
  std::unique_ptr<StorageTransaction> holder = hold(committed);
  EXPECT_TRUE(resolve_while(committed, [&] { EXPECT_TRUE(holder->Commit().ok()); }).ok());

  const KeyRecord rolled_back = ClaimOf(KeyIdentityOf(SubmitRequest{.key = "rolled-back"}));
  holder = hold(rolled_back);
  absl::Status resolved = resolve_while(rolled_back, [&] { holder->Rollback(); });
  EXPECT_TRUE(absl::IsUnavailable(resolved)) << resolved;
  EXPECT_FALSE(IsInDoubt(resolved)) << resolved;

  // Still open after account_lock_wait: in doubt, as it was.
  const KeyRecord open = ClaimOf(KeyIdentityOf(SubmitRequest{.key = "open"}));
  holder = hold(open);
  const absl::Time started = absl::Now();
  resolved = postgres.ResolveInDoubtCommit(open, lost, true, std::nullopt);
  EXPECT_EQ(resolved, lost);
  EXPECT_LT(absl::Now() - started, absl::Seconds(2));
  holder->Rollback();

  // Another transaction's record under the key: this one did not commit.
  KeyRecord other = committed;
  other.transaction_id = ClaimOf(committed.identity).transaction_id;
  resolved = postgres.ResolveInDoubtCommit(other, lost, true, std::nullopt);
  EXPECT_TRUE(absl::IsUnavailable(resolved)) << resolved;

  // A claim that may still be on its way (claim_held false) to a server process not
  // known (behind a pooler): only a row proves anything.
  EXPECT_EQ(postgres.ResolveInDoubtCommit(open, lost, /*claim_held=*/false, std::nullopt), lost);
  EXPECT_TRUE(
      postgres.ResolveInDoubtCommit(committed, lost, /*claim_held=*/false, std::nullopt).ok());
  // A server process known and gone (no process has pid 0): the missing row proves the
  // transaction did not commit. Named on another server (another start time, as a
  // replica promoted by a failover has): its absence there proves nothing.
  absl::StatusOr<std::string> server_started = QueryPostgresValue(
      "SELECT (extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint");
  ASSERT_TRUE(server_started.ok()) << server_started.status();
  const postgres_internal::ServerBackend gone{
      .pid = 0, .started_micros = 0, .server_started_micros = std::stoll(*server_started)};
  resolved = postgres.ResolveInDoubtCommit(rolled_back, lost, /*claim_held=*/false, gone);
  EXPECT_TRUE(absl::IsUnavailable(resolved)) << resolved;
  EXPECT_FALSE(IsInDoubt(resolved)) << resolved;
  postgres_internal::ServerBackend elsewhere = gone;
  elsewhere.server_started_micros -= 1;
  EXPECT_EQ(postgres.ResolveInDoubtCommit(rolled_back, lost, /*claim_held=*/false, elsewhere),
            lost);
}

}  // namespace
}  // namespace testing
}  // namespace ledger
