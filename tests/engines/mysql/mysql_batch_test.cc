// The MySQL engine's multi-row writes and batch claim (mysql_write_batch.h, ClaimKeys):
// batches larger than one statement, an account written once at its final values, a
// hold settled behind the batch's back, a record that would overwrite a live one, the
// claim falling back one by one when a key exists, entries continuing their account's
// running maximum (with and without LockAccounts), and a read seeing the buffered writes. The shared suites (tests/conformance/) cover batches, group commit, holds and
// faults on every engine; these need the engine's own statements. Each test gets a
// scratch database of its own on the server named by LEDGER_TEST_MYSQL_DSN.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/status.h"
#include "engines/mysql/mysql_engine.h"
#include "bench/load/round_trip_relay.h"
#include "engines/mysql/mysql_write_batch.h"
#include "gtest/gtest.h"
#include "ledger/engine.h"
#include "ledger/json.h"
#include "ledger/ledger.h"
#include "ledger/operation.h"
#include "ledger/verify.h"
#include "tests/support/claims.h"
#include "tests/conformance/conformance_context.h"
#include "tests/engines/mysql/mysql_ledger_test.h"
#include "tests/engines/mysql/mysql_test_server.h"
#include "tests/support/fault_injecting_engine.h"
#include "tests/support/open_ledger.h"

namespace ledger::testing {
namespace {

using mysql_internal::HoldRowState;
using mysql_internal::kRowsPerStatementMax;
using mysql_internal::kStatementBytesMax;
using mysql_internal::RowRange;
using mysql_internal::SplitIntoStatements;
using mysql_internal::UnsettledHoldOf;

// More items than one statement takes, so every multi-row write goes in several.
constexpr size_t kItemsBeyondOneStatement = 1'200;
static_assert(kItemsBeyondOneStatement > 2 * kRowsPerStatementMax);

std::string KeyOf(size_t i) { return absl::StrFormat("item-%05d", i); }

// A transaction row as the storage contract takes it, with no entries yet.
Transaction BareTopUp(const std::string& id, absl::Time created_at) {
  Transaction transaction;
  transaction.id = id;
  transaction.kind = OperationKind::kTopUp;
  transaction.created_at = created_at;
  transaction.metadata = "{}";
  transaction.fingerprint = "fingerprint-" + id;
  return transaction;
}

// After the write procedure refused a settlement (45002), the hold named is the one
// another transaction settled (or that is gone), not one this transaction settled in the
// failed CALL, nor one still pending because its settlement was in a CALL not yet sent
// (a batch split by size: before, that one was named when it came first).
TEST(MysqlWriteBatchTest, TheUnsettledHoldIsTheOneAnotherSettledNotOneOfACallNotSent) {
  const std::vector<std::pair<std::string, std::string>> settlements = {
      {"hold-unsent", "tx-1"}, {"hold-mine", "tx-2"}, {"hold-raced", "tx-3"}};
  std::map<std::string, HoldRowState, std::less<>> rows = {
      {"hold-unsent", {"pending", ""}},
      {"hold-mine", {"captured", "tx-2"}},
      {"hold-raced", {"voided", "tx-other"}}};
  EXPECT_EQ(UnsettledHoldOf(settlements, rows), "hold-raced");
  rows.erase("hold-raced");  // gone (never there, or deleted)
  EXPECT_EQ(UnsettledHoldOf(settlements, rows), "hold-raced");
  rows["hold-raced"] = {"captured", "tx-3"};  // every row as this batch left it
  EXPECT_EQ(UnsettledHoldOf(settlements, rows), "hold-unsent");
}

TEST(MysqlWriteBatchTest, RowsSplitIntoStatementsByCountThenBytes) {
  std::vector<RowRange> by_count = SplitIntoStatements(std::vector<size_t>(1'200, 100));
  ASSERT_EQ(by_count.size(), 3u);
  EXPECT_EQ(by_count[0].begin, 0u);
  EXPECT_EQ(by_count[0].end, 500u);
  EXPECT_EQ(by_count[1].end, 1'000u);
  EXPECT_EQ(by_count[2].begin, 1'000u);
  EXPECT_EQ(by_count[2].end, 1'200u);
  // Rows of 3/8 of the byte bound: two fit a statement; a row over the bound goes alone.
  const size_t large = kStatementBytesMax / 8 * 3;
  std::vector<RowRange> by_bytes =
      SplitIntoStatements({large, large, large, kStatementBytesMax * 2, 1});
  ASSERT_EQ(by_bytes.size(), 4u);
  EXPECT_EQ(by_bytes[0].end - by_bytes[0].begin, 2u);
  EXPECT_EQ(by_bytes[1].end - by_bytes[1].begin, 1u);
  EXPECT_EQ(by_bytes[2].end - by_bytes[2].begin, 1u);
  EXPECT_EQ(by_bytes[3].end, 5u);
  EXPECT_TRUE(SplitIntoStatements({}).empty());
}

class MysqlBatchTest : public MysqlLedgerTest {
 protected:
  MysqlBatchTest() : MysqlLedgerTest("batch") {}

  void SetUp() override {
    MysqlLedgerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    OpenLedger(4);
  }

  Outcome MustCommit(const std::string& key, const Operation& operation) {
    absl::StatusOr<Outcome> outcome = ledger_->Submit({.key = key, .operation = operation});
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    if (!outcome.ok()) return Outcome::Faulted(outcome.status());
    EXPECT_EQ(outcome->kind, OutcomeKind::kCommitted) << OutcomeToJson(*outcome).dump();
    return *outcome;
  }

  std::vector<SubmitResult> MustSubmitBatch(std::vector<SubmitRequest> items) {
    absl::StatusOr<std::vector<SubmitResult>> results =
        ledger_->SubmitBatch({.items = std::move(items)});
    EXPECT_TRUE(results.ok()) << results.status();
    return results.ok() ? *std::move(results) : std::vector<SubmitResult>();
  }

  std::string Count(const std::string& table, const std::string& where = "1") {
    absl::StatusOr<std::string> count = server_->QueryText(
        absl::StrCat("SELECT COUNT(*) FROM `", database_, "`.", table, " WHERE ", where));
    EXPECT_TRUE(count.ok()) << count.status();
    return count.ok() ? *count : "";
  }

  // A session of the test's own on its database: the storage contract's write batch
  // driven without the engine.
  std::unique_ptr<mysql_internal::MysqlConnection> OwnSession() {
    absl::StatusOr<mysql_internal::MysqlSettings> settings =
        mysql_internal::ParseMysqlUrl(server_->DsnFor(database_));
    EXPECT_TRUE(settings.ok()) << settings.status();
    if (!settings.ok()) return nullptr;
    absl::StatusOr<std::unique_ptr<mysql_internal::MysqlConnection>> connection =
        mysql_internal::MysqlConnection::Open(*settings);
    EXPECT_TRUE(connection.ok()) << connection.status();
    return connection.ok() ? *std::move(connection) : nullptr;
  }

  Account AccountOf(const std::string& id) {
    absl::StatusOr<std::optional<Account>> account = engine_->GetAccount(id);
    EXPECT_TRUE(account.ok() && account->has_value()) << id;
    return account.ok() && account->has_value() ? **account : Account{};
  }
};

TEST_F(MysqlBatchTest, ABatchLargerThanOneStatementCommitsEveryItemWithItsEventsInOrder) {
  std::vector<SubmitRequest> items;
  const std::vector<std::string> to = {"alice", "bob", "carol"};
  for (size_t i = 0; i < kItemsBeyondOneStatement; ++i) {
    items.push_back({.key = KeyOf(i),
                     .operation = Operation::TopUp("issuance", to[i % 3], "CREDITS", 1 + i % 7)});
  }
  std::vector<SubmitResult> results = MustSubmitBatch(items);
  ASSERT_EQ(results.size(), kItemsBeyondOneStatement);
  for (const SubmitResult& result : results) {
    ASSERT_TRUE(result.ok() && result->kind == OutcomeKind::kCommitted)
        << (result.ok() ? OutcomeToJson(*result).dump() : result.status().ToString());
  }
  const std::string n = absl::StrCat(kItemsBeyondOneStatement);
  EXPECT_EQ(Count("transactions"), n);
  EXPECT_EQ(Count("entries"), absl::StrCat(2 * kItemsBeyondOneStatement));
  EXPECT_EQ(Count("idempotency_keys", "state = 'committed'"), n);
  EXPECT_EQ(Count("idempotency_keys", "state = 'pending'"), "0");
  // The events follow the items: the insert order is the batch's order.
  absl::StatusOr<std::vector<OutboxEvent>> events =
      engine_->ListEvents(0, static_cast<int64_t>(kItemsBeyondOneStatement) + 1);
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), kItemsBeyondOneStatement);
  for (size_t i = 0; i < kItemsBeyondOneStatement; ++i) {
    ASSERT_EQ((*events)[i].transaction_id, (*results[i]).transaction.id) << "event " << i;
  }
  // Every item replays: its key record points at its own transaction.
  std::vector<SubmitResult> replays = MustSubmitBatch(items);
  ASSERT_EQ(replays.size(), kItemsBeyondOneStatement);
  for (size_t i = 0; i < kItemsBeyondOneStatement; ++i) {
    ASSERT_TRUE(replays[i].ok() && replays[i]->kind == OutcomeKind::kDuplicate) << i;
    ASSERT_EQ(replays[i]->transaction, results[i]->transaction) << i;
  }
  ExpectVerifiedLedger();
}

// The write procedure's arrays (schema/mysql/0008_write_procedure.sql) of a batch
// whose metadata alone is larger than the server's max_allowed_packet (16 MiB here) goes
// as several CALLs of about kStatementBytesMax each, only the last committing: one CALL
// would be refused. The metadata holds every character JSON must escape, and it reads
// back byte for byte.
TEST_F(MysqlBatchTest, ADocumentLargerThanAPacketGoesAsSeveralCallsAndCommitsEveryItem) {
  absl::StatusOr<std::string> packet = server_->QueryText("SELECT @@max_allowed_packet");
  ASSERT_TRUE(packet.ok()) << packet.status();
  const std::string unusual = "say \"hi\" back\\slash \n\t\x01\x1f caf\xC3\xA9 \xF0\x9F\x99\x82 ";
  std::string note;
  while (nlohmann::json{{"note", note + unusual}, {"item", 9'999}}.dump().size() <
         kMetadataBytesMax) {
    note += unusual;
  }
  const size_t items = std::stoull(*packet) / note.size() + 200;
  ASSERT_LE(items, kBatchItemsMax);
  std::vector<SubmitRequest> requests;
  for (size_t i = 0; i < items; ++i) {
    Operation operation = Operation::TopUp("issuance", "alice", "CREDITS", 1);
    operation.metadata = {{"note", note}, {"item", static_cast<int64_t>(i)}};
    requests.push_back({.key = KeyOf(i), .operation = std::move(operation)});
  }
  std::vector<SubmitResult> results = MustSubmitBatch(requests);
  ASSERT_EQ(results.size(), items);
  for (const SubmitResult& result : results) {
    ASSERT_TRUE(result.ok() && result->kind == OutcomeKind::kCommitted)
        << (result.ok() ? OutcomeToJson(*result).dump() : result.status().ToString());
  }
  EXPECT_EQ(Count("transactions"), absl::StrCat(items));
  EXPECT_EQ(Count("outbox_events"), absl::StrCat(items));
  EXPECT_EQ(AccountOf("alice").balance, static_cast<Amount>(items));
  for (size_t i : {size_t{0}, items / 2, items - 1}) {
    absl::StatusOr<Transaction> read = ledger_->GetTransaction(results[i]->transaction.id);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->metadata, results[i]->transaction.metadata) << "item " << i;
    EXPECT_EQ(nlohmann::json::parse(read->metadata)["note"], note) << "item " << i;
  }
  ExpectVerifiedLedger();
}

// The test's database through the relay ledger_load --count-round-trips uses (which
// can also cut a connection at the server's next answer), on one session, under a
// FaultInjectingEngine.
class MysqlRelayedTest : public MysqlBatchTest {
 protected:
  void SetUp() override {
    MysqlBatchTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    absl::StatusOr<load::RelayedUrl> target = load::UrlTarget(dsn_);
    ASSERT_TRUE(target.ok()) << target.status();
    absl::StatusOr<std::unique_ptr<load::RoundTripRelay>> relay =
        load::RoundTripRelay::Start(target->host, target->port);
    ASSERT_TRUE(relay.ok()) << relay.status();
    relay_ = *std::move(relay);
    absl::StatusOr<load::RelayedUrl> relayed = load::RelayUrl(dsn_, relay_->port());
    ASSERT_TRUE(relayed.ok()) << relayed.status();
    MysqlOptions options;
    options.connection = relayed->url;
    options.pool_size = 1;  // one session: its statements are prepared once
    absl::StatusOr<std::unique_ptr<Engine>> engine = OpenMysqlEngine(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    relayed_faults_ =
        std::make_shared<FaultInjectingEngine>(std::shared_ptr<Engine>(*std::move(engine)));
    relayed_ = std::make_unique<Ledger>(OpenTestLedger(relayed_faults_, {.clock = &clock_}));
    MustCommit("fund", Operation::TopUp("issuance", "alice", "CREDITS", 1'000));
    // Prepares a transfer's statements on the session, each in a round trip of its own.
    ASSERT_EQ(Transfer("warm-up", "dave").kind, OutcomeKind::kCommitted);
  }

  void TearDown() override {
    relayed_.reset();
    relayed_faults_.reset();
    relay_.reset();
    MysqlBatchTest::TearDown();
  }

  Outcome Transfer(const std::string& key, const std::string& to) {
    absl::StatusOr<Outcome> outcome = relayed_->Submit(
        {.key = key, .operation = Operation::Transfer("alice", to, "CREDITS", 1)});
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    return outcome.ok() ? *outcome : Outcome::Faulted(outcome.status());
  }

  std::unique_ptr<load::RoundTripRelay> relay_;
  std::shared_ptr<FaultInjectingEngine> relayed_faults_;
  std::unique_ptr<Ledger> relayed_;
};

// Issue 29, counted on the wire: a transfer costs one CALL of the claim procedure (the
// key's record and the accounts' lock) and one CALL of the write procedure that writes
// and commits. Seven before the procedures, three with the write procedure alone. A
// batch of fresh keys costs three: its claim (one multi-row INSERT), the accounts' lock,
// and the write CALL. A session's first use of a statement shape prepares it in a round
// trip of its own, so each shape is used once before counting (the fixture's warm-up
// transfer, the first batch).
TEST_F(MysqlRelayedTest, ATransferCostsTwoRoundTripsAResendOneAndABatchOfFreshKeysThree) {
  auto batch = [&](int round) {
    SubmitBatchRequest request;
    for (int item = 0; item < 3; ++item) {
      request.items.push_back({.key = absl::StrCat("batch-", round, "-", item),
                               .operation = Operation::Transfer("alice", "carol", "CREDITS", 1)});
    }
    absl::StatusOr<std::vector<SubmitResult>> results = relayed_->SubmitBatch(request);
    ASSERT_TRUE(results.ok()) << results.status();
    for (const SubmitResult& result : *results) {
      ASSERT_TRUE(result.ok() && result->kind == OutcomeKind::kCommitted);
    }
  };
  for (int i = 1; i <= 3; ++i) {
    const int64_t before = relay_->round_trips();
    EXPECT_EQ(Transfer(absl::StrCat("transfer-", i), "bob").kind, OutcomeKind::kCommitted);
    EXPECT_EQ(relay_->round_trips() - before, 2) << "transfer " << i;
  }
  batch(0);
  const int64_t before_batch = relay_->round_trips();
  batch(1);
  EXPECT_EQ(relay_->round_trips() - before_batch, 3);
  // A resend: the claim's CALL finds the key taken, returns its row and transaction and,
  // the record being live, ends the transaction itself (schema/mysql/0011). Two before
  // (the CALL, then ROLLBACK), five before 0010.
  const Outcome original = Transfer("resent", "bob");
  ASSERT_EQ(original.kind, OutcomeKind::kCommitted);
  for (int resend = 0; resend < 3; ++resend) {
    const int64_t before = relay_->round_trips();
    const Outcome duplicate = Transfer("resent", "bob");
    EXPECT_EQ(duplicate.kind, OutcomeKind::kDuplicate) << OutcomeToJson(duplicate).dump();
    EXPECT_EQ(duplicate.transaction, original.transaction) << "resend " << resend;
    EXPECT_EQ(relay_->round_trips() - before, 1) << "resend " << resend;
  }
  // The same key with another payload is refused in the same one round trip.
  const int64_t before_conflict = relay_->round_trips();
  absl::StatusOr<Outcome> conflict = relayed_->Submit(
      {.key = "resent", .operation = Operation::Transfer("alice", "bob", "CREDITS", 2)});
  EXPECT_TRUE(IsConflict(conflict.status())) << conflict.status();
  EXPECT_EQ(relay_->round_trips() - before_conflict, 1);
  // The transaction the CALL ended holds nothing: another session takes the key row's
  // lock without waiting (a pooled session left in it would hold the lock).
  absl::StatusOr<std::string> locked = server_->QueryText(absl::StrCat(
      "SELECT `key` FROM `", database_, "`.idempotency_keys WHERE `key` = 'resent' FOR UPDATE NOWAIT"));
  ASSERT_TRUE(locked.ok()) << "the key row is still locked after the replays: " << locked.status();
  EXPECT_EQ(*locked, "resent");
  // The session serves the next submit as before.
  const int64_t before_fresh = relay_->round_trips();
  EXPECT_EQ(Transfer("after-resends", "bob").kind, OutcomeKind::kCommitted);
  EXPECT_EQ(relay_->round_trips() - before_fresh, 2);
  EXPECT_EQ(BalanceOf("bob"), 5);
  EXPECT_EQ(BalanceOf("carol"), 6);
  ExpectVerifiedLedger();
}

// A resend whose record has expired is no replay: the CALL leaves the transaction open
// (0011 ends it only for a live record), and the submit commits afresh under the key
// row's lock.
TEST_F(MysqlRelayedTest, AResendAfterTheKeyExpiredCommitsAfreshInTheCallsTransaction) {
  const Outcome original = Transfer("expiring", "bob");
  ASSERT_EQ(original.kind, OutcomeKind::kCommitted);
  clock_.Set(clock_.Now() + ClaimOptions().ttl + absl::Seconds(1));
  const Outcome again = Transfer("expiring", "bob");
  EXPECT_EQ(again.kind, OutcomeKind::kCommitted) << OutcomeToJson(again).dump();
  EXPECT_NE(again.transaction.id, original.transaction.id);
  const Outcome resent = Transfer("expiring", "bob");
  EXPECT_EQ(resent.kind, OutcomeKind::kDuplicate) << OutcomeToJson(resent).dump();
  EXPECT_EQ(resent.transaction.id, again.transaction.id);
  EXPECT_EQ(BalanceOf("bob"), 2);
  ExpectVerifiedLedger();
}

// The committing CALL ran and committed, and its answer was lost on the way back (the
// relay cuts the connection at it): in doubt to the client, until the engine reads the
// key row on a new session, which holds this transaction's record. The submit reports
// it committed, and the resend replays it.
TEST_F(MysqlRelayedTest, ACommittedCallWhoseAnswerIsLostIsReportedCommitted) {
  relayed_faults_->SetHook(FaultPoint::kCommit, [&] { relay_->CutAtNextReply(); });
  const Outcome first = Transfer("answer-lost", "bob");
  relayed_faults_->Clear();
  ASSERT_EQ(first.kind, OutcomeKind::kCommitted) << OutcomeToJson(first).dump();
  EXPECT_FALSE(first.in_doubt);
  const Outcome resent = Transfer("answer-lost", "bob");
  EXPECT_EQ(resent.kind, OutcomeKind::kDuplicate) << OutcomeToJson(resent).dump();
  EXPECT_EQ(resent.transaction, first.transaction);
  EXPECT_EQ(BalanceOf("bob"), 1);
  ExpectVerifiedLedger();
}

// The same cut with the key row showing no commit: the statement before (a trigger that
// fails every event insert) stopped the CALL before its COMMIT, and the relay cut its
// error's answer. The engine reads the key row (absent: the transaction rolled back
// with the session), and the submit faults as a lost session before COMMIT does:
// Unavailable, not in doubt, nothing written; the resend commits once.
TEST_F(MysqlRelayedTest, ACallThatDidNotCommitAndLostItsAnswerIsUnavailable) {
  ASSERT_TRUE(server_->Execute(absl::StrCat(
                  "CREATE TRIGGER `", database_, "`.no_events BEFORE INSERT ON `", database_,
                  "`.outbox_events FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = "
                  "'no events now'")).ok());
  relayed_faults_->SetHook(FaultPoint::kCommit, [&] { relay_->CutAtNextReply(); });
  const Outcome first = Transfer("not-committed", "bob");
  relayed_faults_->Clear();
  ASSERT_TRUE(server_->Execute(absl::StrCat("DROP TRIGGER `", database_, "`.no_events")).ok());
  ASSERT_EQ(first.kind, OutcomeKind::kFaulted) << OutcomeToJson(first).dump();
  EXPECT_FALSE(first.in_doubt) << first.fault;
  EXPECT_TRUE(absl::IsUnavailable(first.fault)) << first.fault;
  EXPECT_EQ(Count("transactions", "kind = 'transfer'"), "1");  // the warm-up
  EXPECT_EQ(Transfer("not-committed", "bob").kind, OutcomeKind::kCommitted);
  EXPECT_EQ(BalanceOf("bob"), 1);
  ExpectVerifiedLedger();
}

TEST_F(MysqlBatchTest, AnAccountTouchedByEveryItemEndsAtItsFinalBalanceAndVersion) {
  MustCommit("fund", Operation::TopUp("issuance", "alice", "CREDITS", 5'000));
  std::vector<SubmitRequest> items;
  for (size_t i = 0; i < kItemsBeyondOneStatement; ++i) {
    items.push_back({.key = KeyOf(i), .operation = Operation::Transfer("alice", "bob", "CREDITS", 2)});
  }
  std::vector<SubmitResult> results = MustSubmitBatch(items);
  ASSERT_EQ(results.size(), kItemsBeyondOneStatement);
  for (const SubmitResult& result : results) {
    ASSERT_TRUE(result.ok() && result->kind == OutcomeKind::kCommitted);
  }
  const Account alice = AccountOf("alice");
  const Account bob = AccountOf("bob");
  const int64_t items_count = static_cast<int64_t>(kItemsBeyondOneStatement);
  EXPECT_EQ(alice.balance, 5'000 - 2 * items_count);
  EXPECT_EQ(alice.version, 1 + items_count);  // the top-up, then every item
  EXPECT_EQ(bob.balance, 2 * items_count);
  EXPECT_EQ(bob.version, items_count);
  // Bob's history is every version once, each balance after the one before.
  absl::StatusOr<std::vector<HistoryEntry>> history = engine_->ListEntries("bob", 0, 10'000);
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->size(), kItemsBeyondOneStatement);
  for (size_t i = 0; i < history->size(); ++i) {
    EXPECT_EQ((*history)[i].entry.account_version, static_cast<int64_t>(i) + 1);
    EXPECT_EQ((*history)[i].entry.balance_after, 2 * (static_cast<int64_t>(i) + 1));
  }
  ExpectVerifiedLedger();
}

TEST_F(MysqlBatchTest, AHoldSettledBehindTheBatchsBackFailsItRetryablyAndWritesNothing) {
  ReopenLedger(LedgerOptions{.attempts_max = 1});  // the retryable error reaches the caller
  MustCommit("fund", Operation::TopUp("issuance", "alice", "CREDITS", 100));
  std::vector<std::string> holds;
  for (int i = 0; i < 3; ++i) {
    holds.push_back(MustCommit(absl::StrCat("hold-", i),
                               Operation::Hold("alice", "bob", "CREDITS", 10))
                        .transaction.id);
  }
  const Account before = AccountOf("alice");
  ASSERT_EQ(before.pending_debits, 30);
  // Between the batch's reads (all three pending) and its COMMIT, the second hold is
  // settled by someone else: the batch's settling UPDATE matches two of three rows.
  bool settled = false;
  faults_->SetHook(FaultPoint::kCommit, [&] {
    if (settled) return;
    settled = true;
    ASSERT_TRUE(server_->Execute(absl::StrCat("UPDATE `", database_, "`.holds SET status = "
                                              "'expired', settled_by = id WHERE id = '",
                                              holds[1], "'")).ok());
  });
  std::vector<SubmitRequest> voids;
  for (int i = 0; i < 3; ++i) {
    voids.push_back({.key = absl::StrCat("void-", i), .operation = Operation::Void(holds[i])});
  }
  std::vector<SubmitResult> results = MustSubmitBatch(voids);
  ASSERT_TRUE(settled);
  ASSERT_EQ(results.size(), 3u);
  for (const SubmitResult& result : results) {
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result->kind, OutcomeKind::kFaulted) << OutcomeToJson(*result).dump();
    EXPECT_TRUE(IsRetryable(result->fault)) << result->fault;
    EXPECT_NE(result->fault.message().find(holds[1]), std::string::npos) << result->fault;
  }
  EXPECT_EQ(Count("transactions", "kind = 'void'"), "0");
  EXPECT_EQ(Count("holds", "status = 'pending'"), "2");  // the first and third, untouched
  EXPECT_EQ(Count("idempotency_keys", "`key` LIKE 'void-%'"), "0");
  EXPECT_EQ(Count("outbox_events"), "4");  // the top-up and the three holds
  EXPECT_EQ(AccountOf("alice").version, before.version);
  EXPECT_EQ(*server_->QueryText(absl::StrCat("SELECT pending_debits FROM `", database_,
                                             "`.accounts WHERE id = 'alice'")),
            "30");
}

// A record under a key whose live committed record the claim returned (the pipeline
// would replay it; an engine caller that records anyway) must not replace it.
TEST_F(MysqlBatchTest, ARecordOverALiveCommittedRecordFailsAndWritesNothing) {
  const absl::Time now = clock_.Now();
  const KeyIdentity live{"direct", Scope{}, "a-live"};
  const KeyIdentity fresh{"direct", Scope{}, "b-fresh"};
  auto write = [&](StorageTransaction& tx, const std::string& id, const KeyIdentity& identity) {
    const Transaction transaction = BareTopUp(id, now);
    EXPECT_TRUE(tx.WriteTransaction(transaction, {}).ok());
    EXPECT_TRUE(tx.RecordKey({identity, transaction.fingerprint, id, now, now + absl::Hours(1)}).ok());
  };
  {
    absl::StatusOr<std::unique_ptr<StorageTransaction>> tx = engine_->Begin({});
    ASSERT_TRUE(tx.ok()) << tx.status();
    ASSERT_TRUE((*tx)->ClaimKey(ClaimOf(live)).ok());
    write(**tx, "tx-first", live);
    ASSERT_TRUE((*tx)->Commit().ok());
  }
  absl::StatusOr<std::unique_ptr<StorageTransaction>> tx = engine_->Begin({});
  ASSERT_TRUE(tx.ok()) << tx.status();
  absl::StatusOr<std::vector<std::optional<KeyRecord>>> claimed = (*tx)->ClaimKeys(ClaimsOf({live, fresh}));
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  ASSERT_TRUE((*claimed)[0].has_value());  // live: the batch claim fell back one by one
  EXPECT_EQ((*claimed)[0]->transaction_id, "tx-first");
  EXPECT_FALSE((*claimed)[1].has_value());
  write(**tx, "tx-fresh", fresh);
  write(**tx, "tx-overwrite", live);
  absl::Status committed = (*tx)->Commit();
  EXPECT_TRUE(IsRetryable(committed)) << committed;  // the write phase's unique violation
  EXPECT_EQ(Count("transactions", "id IN ('tx-fresh', 'tx-overwrite')"), "0");
  EXPECT_EQ(Count("idempotency_keys", "`key` = 'b-fresh'"), "0");
  EXPECT_EQ(*server_->QueryText(absl::StrCat("SELECT transaction_id FROM `", database_,
                                             "`.idempotency_keys WHERE `key` = 'a-live'")),
            "tx-first");
}

// The existing key sorts into the second INSERT of the batch claim, so the first
// INSERT's placeholders were in when the duplicate stopped the claim.
TEST_F(MysqlBatchTest, TheBatchClaimFallsBackOneByOneWhenAKeyExists) {
  const size_t count = kRowsPerStatementMax + 100;
  const size_t existing = kRowsPerStatementMax + 50;
  std::vector<SubmitRequest> items;
  for (size_t i = 0; i < count; ++i) {
    items.push_back({.key = KeyOf(i), .operation = Operation::TopUp("issuance", "alice", "CREDITS", 1)});
  }
  const Outcome first = MustCommit(items[existing].key, items[existing].operation);
  std::vector<SubmitResult> results = MustSubmitBatch(items);
  ASSERT_EQ(results.size(), count);
  for (size_t i = 0; i < count; ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status();
    if (i == existing) {
      EXPECT_EQ(results[i]->kind, OutcomeKind::kDuplicate);
      EXPECT_EQ(results[i]->transaction, first.transaction);
    } else {
      ASSERT_EQ(results[i]->kind, OutcomeKind::kCommitted) << i << OutcomeToJson(*results[i]).dump();
    }
  }
  EXPECT_EQ(AccountOf("alice").balance, static_cast<int64_t>(count));
  EXPECT_EQ(Count("idempotency_keys", "state = 'committed'"), absl::StrCat(count));
  EXPECT_EQ(Count("idempotency_keys", "state = 'pending'"), "0");
  ExpectVerifiedLedger();
}

// created_at_running_max (schema/mysql/0005_reads_indexes.sql) is written by the engine:
// LockAccounts reads the account's entries_running_max (0006) for the accounts it locks,
// and a write that skipped LockAccounts (a caller of the storage contract alone) has its
// accounts locked and read before its entries go. Either way it continues from the
// account's latest entry, here one created later than the new ones (a clock stepped
// back), so the new entries keep that greater maximum.
TEST_F(MysqlBatchTest, EntriesContinueTheRunningMaximumWithOrWithoutLockAccounts) {
  const absl::Time start = clock_.Now();
  clock_.Set(start + absl::Seconds(100));
  MustCommit("late", Operation::TopUp("issuance", "alice", "CREDITS", 10));
  auto top_up_at_start = [&](const std::string& id, bool lock) {
    absl::StatusOr<std::unique_ptr<StorageTransaction>> tx = engine_->Begin({});
    ASSERT_TRUE(tx.ok()) << tx.status();
    std::vector<Account> accounts;
    if (lock) {
      absl::StatusOr<std::vector<Account>> locked = (*tx)->LockAccounts({"alice", "issuance"});
      ASSERT_TRUE(locked.ok()) << locked.status();
      accounts = *locked;
    } else {
      accounts = {AccountOf("alice"), AccountOf("issuance")};
    }
    Transaction transaction = BareTopUp(id, start);
    for (Account& account : accounts) {
      const Amount amount = account.id == "alice" ? 1 : -1;
      account.balance += amount;
      account.version += 1;
      transaction.entries.push_back(
          {account.id, "CREDITS", amount, account.balance, account.version});
    }
    ASSERT_TRUE((*tx)->WriteTransaction(transaction, accounts).ok());
    ASSERT_TRUE((*tx)->Commit().ok());
  };
  top_up_at_start("tx-unlocked", /*lock=*/false);
  top_up_at_start("tx-locked", /*lock=*/true);
  const std::string late = absl::StrCat(absl::ToUnixMicros(start + absl::Seconds(100)));
  EXPECT_EQ(Count("entries", absl::StrCat("created_at_running_max = ", late)), "6");
  EXPECT_EQ(Count("entries", "created_at_running_max IS NULL"), "0");
  // Before the late top-up, in commit order, alice had nothing yet.
  absl::StatusOr<Amount> before_it = ledger_->BalanceAsOf("alice", start + absl::Seconds(50));
  ASSERT_TRUE(before_it.ok()) << before_it.status();
  EXPECT_EQ(*before_it, 0);
  EXPECT_EQ(BalanceOf("alice"), 12);
}

// A string that is not UTF-8 (here in the metadata, which the ledger itself validates;
// a caller of the storage contract alone may not) cannot go in the write procedure's
// JSON arrays: the committing CALL fails before its COMMIT, InvalidArgument as a bound
// parameter's 1366 was, not in doubt, and writes nothing.
TEST_F(MysqlBatchTest, AStringThatIsNotUtf8FailsTheCommittingCallAsInvalidArgument) {
  MustCommit("fund", Operation::TopUp("issuance", "alice", "CREDITS", 100));
  std::unique_ptr<mysql_internal::MysqlConnection> connection = OwnSession();
  ASSERT_NE(connection, nullptr);
  mysql_internal::MysqlWriteBatch batch;
  Transaction transaction = BareTopUp("tx-not-utf8", clock_.Now());
  transaction.metadata = "{\"note\":\"\xff\xfe\"}";
  ASSERT_TRUE(batch.AddTransaction(transaction, {}).ok());
  const absl::Status sent = batch.Send(*connection, mysql_internal::MysqlWriteBatch::End::kCommit);
  EXPECT_EQ(sent.code(), absl::StatusCode::kInvalidArgument) << sent;
  EXPECT_FALSE(IsInDoubt(sent)) << sent;
  connection->Rollback();
  EXPECT_EQ(Count("transactions", "id = 'tx-not-utf8'"), "0");
}

// The lock guard (the write procedure, MysqlWriteBatch::WriteCallArrays): an account's UPDATE
// requires the row to hold what its lock read. On one server the lock makes that certain; on a Galera node a
// transaction aborted while idle by another node's write set can run on without its locks
// (docs/scaling.md). Here the batch is told alice's values from before a hold reserved 10
// of them, as such a transaction would have read them, and writes a change of alice's
// pending amounts, which moves no version and so no entry key: without the guard the
// UPDATE would overwrite the hold's reservation.
TEST_F(MysqlBatchTest, AnAccountChangedAfterItsLockReadFailsTheWriteRetryably) {
  MustCommit("fund", Operation::TopUp("issuance", "alice", "CREDITS", 100));
  const Account as_locked = AccountOf("alice");
  MustCommit("hold", Operation::Hold("alice", "bob", "CREDITS", 10));
  ASSERT_EQ(AccountOf("alice").pending_debits, 10);

  std::unique_ptr<mysql_internal::MysqlConnection> connection = OwnSession();
  ASSERT_NE(connection, nullptr);
  auto run = [&](const std::string& sql) {
    ASSERT_TRUE(connection
                    ->ExecuteText(sql, "the test's transaction",
                                  mysql_internal::ErrorContext::kStandalone)
                    .ok());
  };
  run("START TRANSACTION");
  mysql_internal::MysqlWriteBatch batch;
  batch.NoteLocked(as_locked, std::nullopt);
  Account changed = as_locked;
  changed.pending_debits += 5;
  const Transaction transaction = BareTopUp("tx-behind-the-lock", clock_.Now());
  ASSERT_TRUE(batch.AddTransaction(transaction, {changed}).ok());
  const absl::Status sent = batch.Send(*connection);
  run("ROLLBACK");
  EXPECT_TRUE(IsRetryable(sent)) << sent;
  EXPECT_NE(sent.message().find("an account changed after its lock read it"), std::string::npos) << sent;
  EXPECT_EQ(AccountOf("alice").pending_debits, 10);
  EXPECT_EQ(Count("transactions", "id = 'tx-behind-the-lock'"), "0");
  ExpectVerifiedLedger();
}

// An account the batch was not told of (no NoteLocked) is not written blind.
TEST(MysqlWriteBatchTest, AnAccountWrittenWithoutItsLockReadIsRefused) {
  mysql_internal::MysqlWriteBatch batch;
  Account alice;
  alice.id = "alice";
  alice.pending_debits = 5;
  const Transaction transaction = BareTopUp("tx-unlocked", absl::UnixEpoch());
  const absl::Status added = batch.AddTransaction(transaction, {alice});
  EXPECT_EQ(added.code(), absl::StatusCode::kInternal) << added;
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(batch.Unnoted(transaction, {alice}), std::vector<std::string>{"alice"});
}

TEST_F(MysqlBatchTest, AReadInsideTheTransactionSeesItsBufferedWrites) {
  absl::StatusOr<std::unique_ptr<StorageTransaction>> tx = engine_->Begin({});
  ASSERT_TRUE(tx.ok()) << tx.status();
  const Transaction transaction = BareTopUp("tx-buffered", clock_.Now());
  ASSERT_TRUE((*tx)->WriteTransaction(transaction, {}).ok());
  absl::StatusOr<std::optional<Transaction>> read = (*tx)->LoadTransaction("tx-buffered");
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((*read)->fingerprint, "fingerprint-tx-buffered");
  (*tx)->Rollback();
  EXPECT_EQ(Count("transactions"), "0");
}

}  // namespace
}  // namespace ledger::testing
